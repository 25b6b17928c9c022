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

#ifndef ROWS
#define ROWS 256
#endif
#ifndef DIM
#define DIM 1024
#endif

constexpr int kRowsPerBlock = 8;
constexpr int kBlockThreads = kRowsPerBlock * 32;
constexpr float kEps = 1e-6f;

__device__ __forceinline__ float warp_reduce_sum(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        v += __shfl_down_sync(0xffffffffu, v, offset);
    }
    return v;
}

// One warp per row: y = x / sqrt(mean(x^2) + eps) * weight.
__global__ void rms_norm(const float* __restrict__ x, const float* __restrict__ weight,
                         float* __restrict__ y, int rows, int dim) {
    const int warp = threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    const int row = blockIdx.x * kRowsPerBlock + warp;
    if (row >= rows) return;
    const float* in = x + static_cast<size_t>(row) * dim;
    float* out = y + static_cast<size_t>(row) * dim;

    float sq = 0.0f;
    for (int i = lane; i < dim; i += 32) sq += in[i] * in[i];
    sq = warp_reduce_sum(sq);
    // Lane 0 holds the total after __shfl_down_sync; broadcast it to the warp.
    const float inv_rms = rsqrtf(__shfl_sync(0xffffffffu, sq, 0) / dim + kEps);
    for (int i = lane; i < dim; i += 32) out[i] = in[i] * inv_rms * weight[i];
}

int main() {
    const size_t count = static_cast<size_t>(ROWS) * DIM;
    std::vector<float> x = load_array<float>("data/x.bin", count);
    std::vector<float> weight = load_array<float>("data/weight.bin", DIM);
    std::vector<float> y(count);

    float *d_x, *d_w, *d_y;
    CUDA_CHECK(cudaMalloc(&d_x, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_w, DIM * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_y, count * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_x, x.data(), count * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_w, weight.data(), DIM * sizeof(float), cudaMemcpyHostToDevice));

    const int blocks = (ROWS + kRowsPerBlock - 1) / kRowsPerBlock;
    rms_norm<<<blocks, kBlockThreads>>>(d_x, d_w, d_y, ROWS, DIM);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(y.data(), d_y, count * sizeof(float), cudaMemcpyDeviceToHost));
    save_array("data/y.bin", y);

    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_w));
    CUDA_CHECK(cudaFree(d_y));
    return 0;
}
