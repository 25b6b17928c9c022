#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <cuda_runtime.h>

#define CUDA_CHECK(expr)                                                        \
    do {                                                                        \
        cudaError_t status_ = (expr);                                           \
        if (status_ != cudaSuccess) {                                           \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr, \
                    cudaGetErrorString(status_));                               \
            std::exit(1);                                                       \
        }                                                                       \
    } while (0)

template <typename T>
static std::vector<T> load_array(const char* path, size_t count) {
    std::vector<T> data(count);
    FILE* f = std::fopen(path, "rb");
    if (!f) {
        std::fprintf(stderr, "error: cannot open input %s\n", path);
        std::exit(1);
    }
    size_t n = std::fread(data.data(), sizeof(T), count, f);
    std::fclose(f);
    if (n != count) {
        std::fprintf(stderr, "error: %s holds %zu elements, expected %zu\n", path, n, count);
        std::exit(1);
    }
    return data;
}

template <typename T>
static void save_array(const char* path, const std::vector<T>& data) {
    FILE* f = std::fopen(path, "wb");
    if (!f) {
        std::fprintf(stderr, "error: cannot open output %s\n", path);
        std::exit(1);
    }
    size_t n = std::fwrite(data.data(), sizeof(T), data.size(), f);
    std::fclose(f);
    if (n != data.size()) {
        std::fprintf(stderr, "error: short write to %s\n", path);
        std::exit(1);
    }
}

#ifndef H
#define H 512
#endif
#ifndef W
#define W 512
#endif

#define TILE 16

// Sobel gradient magnitude. Each block stages a (TILE + 2) x (TILE + 2) patch in shared
// memory; the outermost ring of the image has no full neighbourhood and is set to 0.
__global__ void sobel(const float* __restrict__ img, float* __restrict__ mag, int h, int w) {
    __shared__ float patch[TILE + 2][TILE + 2];
    const int x0 = blockIdx.x * TILE - 1;
    const int y0 = blockIdx.y * TILE - 1;
    const int tid = threadIdx.y * TILE + threadIdx.x;
    for (int i = tid; i < (TILE + 2) * (TILE + 2); i += TILE * TILE) {
        int py = i / (TILE + 2), px = i % (TILE + 2);
        int gy = y0 + py, gx = x0 + px;
        patch[py][px] = (gx >= 0 && gx < w && gy >= 0 && gy < h) ? img[gy * w + gx] : 0.0f;
    }
    __syncthreads();

    const int x = blockIdx.x * TILE + threadIdx.x;
    const int y = blockIdx.y * TILE + threadIdx.y;
    if (x >= w || y >= h) return;
    if (x == 0 || y == 0 || x == w - 1 || y == h - 1) {
        mag[y * w + x] = 0.0f;
        return;
    }
    const int px = threadIdx.x + 1, py = threadIdx.y + 1;
    float gx = (patch[py - 1][px + 1] + 2.0f * patch[py][px + 1] + patch[py + 1][px + 1]) -
               (patch[py - 1][px - 1] + 2.0f * patch[py][px - 1] + patch[py + 1][px - 1]);
    float gy = (patch[py + 1][px - 1] + 2.0f * patch[py + 1][px] + patch[py + 1][px + 1]) -
               (patch[py - 1][px - 1] + 2.0f * patch[py - 1][px] + patch[py - 1][px + 1]);
    mag[y * w + x] = sqrtf(gx * gx + gy * gy);
}

int main() {
    const size_t pixels = static_cast<size_t>(H) * W;
    std::vector<float> img = load_array<float>("data/image.bin", pixels);
    std::vector<float> mag(pixels);

    float *d_img, *d_mag;
    CUDA_CHECK(cudaMalloc(&d_img, pixels * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_mag, pixels * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_img, img.data(), pixels * sizeof(float), cudaMemcpyHostToDevice));

    dim3 block(TILE, TILE);
    dim3 grid((W + TILE - 1) / TILE, (H + TILE - 1) / TILE);
    sobel<<<grid, block>>>(d_img, d_mag, H, W);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(mag.data(), d_mag, pixels * sizeof(float), cudaMemcpyDeviceToHost));
    save_array("data/magnitude.bin", mag);

    CUDA_CHECK(cudaFree(d_img));
    CUDA_CHECK(cudaFree(d_mag));
    return 0;
}
