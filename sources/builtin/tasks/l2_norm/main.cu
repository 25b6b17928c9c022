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

#ifndef N
#define N 131072
#endif

constexpr int kThreads = 256;

// Butterfly reduction: after the loop every lane holds the warp's total.
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int mask = 16; mask > 0; mask >>= 1) {
        v += __shfl_xor_sync(0xffffffffu, v, mask);
    }
    return v;
}

__global__ void sum_of_squares(const float* __restrict__ x, float* __restrict__ accum, int n) {
    __shared__ float warp_totals[kThreads / 32];
    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        float xi = x[i];
        v += xi * xi;
    }
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0) warp_totals[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < kThreads / 32 ? warp_totals[threadIdx.x] : 0.0f;
        v = warp_sum(v);
        if (threadIdx.x == 0) atomicAdd(accum, v);
    }
}

__global__ void finalize_sqrt(const float* __restrict__ accum, float* __restrict__ norm) {
    norm[0] = sqrtf(accum[0]);
}

int main() {
    std::vector<float> x = load_array<float>("data/x.bin", N);

    float *d_x, *d_accum, *d_norm;
    CUDA_CHECK(cudaMalloc(&d_x, N * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_accum, sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_norm, sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_x, x.data(), N * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_accum, 0, sizeof(float)));

    int blocks = (N + kThreads - 1) / kThreads;
    if (blocks > 240) blocks = 240;
    sum_of_squares<<<blocks, kThreads>>>(d_x, d_accum, N);
    CUDA_CHECK(cudaGetLastError());
    finalize_sqrt<<<1, 1>>>(d_accum, d_norm);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<float> norm(1);
    CUDA_CHECK(cudaMemcpy(norm.data(), d_norm, sizeof(float), cudaMemcpyDeviceToHost));
    save_array("data/norm.bin", norm);

    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_accum));
    CUDA_CHECK(cudaFree(d_norm));
    return 0;
}
