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

constexpr int kBlock = 256;
constexpr int kWarp = 32;

__device__ __forceinline__ float warp_max(float v) {
    for (int offset = kWarp / 2; offset > 0; offset >>= 1) {
        v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, offset));
    }
    return v;
}

// Reduces `in` to one maximum per block: warp shuffles inside each warp, then the first warp
// combines the per-warp results staged in shared memory.
__global__ void block_max(const float* __restrict__ in, float* __restrict__ out, int n) {
    __shared__ float warp_results[kBlock / kWarp];
    float v = -INFINITY;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        v = fmaxf(v, in[i]);
    }
    v = warp_max(v);
    int lane = threadIdx.x % kWarp;
    int warp = threadIdx.x / kWarp;
    if (lane == 0) warp_results[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < kBlock / kWarp ? warp_results[lane] : -INFINITY;
        v = warp_max(v);
        if (lane == 0) out[blockIdx.x] = v;
    }
}

int main() {
    std::vector<float> x = load_array<float>("data/x.bin", N);

    int blocks = (N + kBlock - 1) / kBlock;
    if (blocks > 512) blocks = 512;
    if (blocks < 1) blocks = 1;

    float *d_x, *d_partial, *d_max;
    CUDA_CHECK(cudaMalloc(&d_x, N * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_partial, blocks * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_max, sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_x, x.data(), N * sizeof(float), cudaMemcpyHostToDevice));

    // Pass 1: one partial maximum per block. Pass 2: one block reduces the partials.
    block_max<<<blocks, kBlock>>>(d_x, d_partial, N);
    CUDA_CHECK(cudaGetLastError());
    block_max<<<1, kBlock>>>(d_partial, d_max, blocks);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<float> result(1);
    CUDA_CHECK(cudaMemcpy(result.data(), d_max, sizeof(float), cudaMemcpyDeviceToHost));
    save_array("data/max_value.bin", result);

    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_partial));
    CUDA_CHECK(cudaFree(d_max));
    return 0;
}
