#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                          \
    do {                                                                          \
        cudaError_t err_ = (call);                                                \
        if (err_ != cudaSuccess) {                                                \
            fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(err_), \
                    __FILE__, __LINE__);                                          \
            exit(EXIT_FAILURE);                                                   \
        }                                                                         \
    } while (0)

static void read_file(const char* path, void* dst, size_t bytes) {
    FILE* f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "cannot open %s for reading\n", path);
        exit(EXIT_FAILURE);
    }
    size_t got = fread(dst, 1, bytes, f);
    fclose(f);
    if (got != bytes) {
        fprintf(stderr, "%s: expected %zu bytes, read %zu\n", path, bytes, got);
        exit(EXIT_FAILURE);
    }
}

static void write_file(const char* path, const void* src, size_t bytes) {
    FILE* f = fopen(path, "wb");
    if (f == NULL) {
        fprintf(stderr, "cannot open %s for writing\n", path);
        exit(EXIT_FAILURE);
    }
    size_t put = fwrite(src, 1, bytes, f);
    fclose(f);
    if (put != bytes) {
        fprintf(stderr, "%s: short write (%zu of %zu bytes)\n", path, put, bytes);
        exit(EXIT_FAILURE);
    }
}

#ifndef H
#define H 256
#endif
#ifndef W
#define W 256
#endif

#define KRADIUS 2
#define BLOCK_X 16
#define BLOCK_Y 16

// Binomial approximation of a Gaussian: [1 4 6 4 1] / 16, applied once per axis.
__constant__ float c_taps[2 * KRADIUS + 1] = {1.0f / 16, 4.0f / 16, 6.0f / 16, 4.0f / 16, 1.0f / 16};

__device__ __forceinline__ int clamp_index(int v, int n) { return v < 0 ? 0 : (v >= n ? n - 1 : v); }

__global__ void blur_rows(const float* __restrict__ in, float* __restrict__ out, int h, int w) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float acc = 0.0f;
    for (int k = -KRADIUS; k <= KRADIUS; ++k) acc += c_taps[k + KRADIUS] * in[y * w + clamp_index(x + k, w)];
    out[y * w + x] = acc;
}

__global__ void blur_cols(const float* __restrict__ in, float* __restrict__ out, int h, int w) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float acc = 0.0f;
    for (int k = -KRADIUS; k <= KRADIUS; ++k) acc += c_taps[k + KRADIUS] * in[clamp_index(y + k, h) * w + x];
    out[y * w + x] = acc;
}

int main() {
    const size_t pixels = (size_t)H * W;
    float* h_img = (float*)malloc(pixels * sizeof(float));
    if (!h_img) {
        fprintf(stderr, "host allocation failed\n");
        return EXIT_FAILURE;
    }
    read_file("data/image.bin", h_img, pixels * sizeof(float));

    float *d_img, *d_tmp, *d_out;
    CUDA_CHECK(cudaMalloc(&d_img, pixels * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_tmp, pixels * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, pixels * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_img, h_img, pixels * sizeof(float), cudaMemcpyHostToDevice));

    dim3 block(BLOCK_X, BLOCK_Y);
    dim3 grid((W + BLOCK_X - 1) / BLOCK_X, (H + BLOCK_Y - 1) / BLOCK_Y);
    blur_rows<<<grid, block>>>(d_img, d_tmp, H, W);
    CUDA_CHECK(cudaGetLastError());
    blur_cols<<<grid, block>>>(d_tmp, d_out, H, W);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(h_img, d_out, pixels * sizeof(float), cudaMemcpyDeviceToHost));
    write_file("data/blurred.bin", h_img, pixels * sizeof(float));

    CUDA_CHECK(cudaFree(d_img));
    CUDA_CHECK(cudaFree(d_tmp));
    CUDA_CHECK(cudaFree(d_out));
    free(h_img);
    return 0;
}
