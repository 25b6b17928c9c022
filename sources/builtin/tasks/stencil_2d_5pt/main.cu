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

#define TILE_X 16
#define TILE_Y 16

// 5-point Laplacian with a (TILE_Y + 2) x (TILE_X + 2) shared-memory tile: each input value
// is read from global memory once per block instead of up to five times.
__global__ void laplacian_5pt(const float* __restrict__ in, float* __restrict__ out, int h, int w) {
    __shared__ float tile[TILE_Y + 2][TILE_X + 2];
    const int gx = blockIdx.x * TILE_X + threadIdx.x;
    const int gy = blockIdx.y * TILE_Y + threadIdx.y;
    const int lx = threadIdx.x + 1, ly = threadIdx.y + 1;

    auto load = [&](int y, int x) -> float {
        return (x >= 0 && x < w && y >= 0 && y < h) ? in[(size_t)y * w + x] : 0.0f;
    };
    tile[ly][lx] = load(gy, gx);
    if (threadIdx.x == 0) tile[ly][0] = load(gy, gx - 1);
    if (threadIdx.x == TILE_X - 1) tile[ly][TILE_X + 1] = load(gy, gx + 1);
    if (threadIdx.y == 0) tile[0][lx] = load(gy - 1, gx);
    if (threadIdx.y == TILE_Y - 1) tile[TILE_Y + 1][lx] = load(gy + 1, gx);
    __syncthreads();

    if (gx >= w || gy >= h) return;
    size_t i = (size_t)gy * w + gx;
    if (gx == 0 || gy == 0 || gx == w - 1 || gy == h - 1) {
        out[i] = 0.0f;
        return;
    }
    out[i] = tile[ly - 1][lx] + tile[ly + 1][lx] + tile[ly][lx - 1] + tile[ly][lx + 1] - 4.0f * tile[ly][lx];
}

int main() {
    const size_t count = static_cast<size_t>(H) * W;
    std::vector<float> in = load_array<float>("data/field.bin", count);
    std::vector<float> out(count);

    float *d_in, *d_out;
    CUDA_CHECK(cudaMalloc(&d_in, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, count * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), count * sizeof(float), cudaMemcpyHostToDevice));

    dim3 block(TILE_X, TILE_Y);
    dim3 grid((W + TILE_X - 1) / TILE_X, (H + TILE_Y - 1) / TILE_Y);
    laplacian_5pt<<<grid, block>>>(d_in, d_out, H, W);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(out.data(), d_out, count * sizeof(float), cudaMemcpyDeviceToHost));
    save_array("data/laplacian.bin", out);

    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    return 0;
}
