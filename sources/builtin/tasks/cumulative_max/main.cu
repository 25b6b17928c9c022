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
#define N 100000
#endif

constexpr int kBlock = 256;
constexpr int kWarps = kBlock / 32;

// Inclusive max-scan inside a warp with __shfl_up_sync.
__device__ __forceinline__ float warp_scan_max(float v, int lane) {
#pragma unroll
    for (int offset = 1; offset < 32; offset <<= 1) {
        float other = __shfl_up_sync(0xffffffffu, v, offset);
        if (lane >= offset) v = fmaxf(v, other);
    }
    return v;
}

__global__ void block_scan_max(const float* __restrict__ x, float* __restrict__ y,
                               float* __restrict__ block_max, int n) {
    __shared__ float warp_tot[kWarps];
    int gid = blockIdx.x * kBlock + threadIdx.x;
    int lane = threadIdx.x & 31;
    int warp = threadIdx.x >> 5;
    float v = gid < n ? x[gid] : -INFINITY;
    v = warp_scan_max(v, lane);
    if (lane == 31) warp_tot[warp] = v;
    __syncthreads();
    if (warp == 0) {
        float t = lane < kWarps ? warp_tot[lane] : -INFINITY;
        t = warp_scan_max(t, lane);
        if (lane < kWarps) warp_tot[lane] = t;
    }
    __syncthreads();
    if (warp > 0) v = fmaxf(v, warp_tot[warp - 1]);
    if (gid < n) y[gid] = v;
    if (threadIdx.x == kBlock - 1) block_max[blockIdx.x] = v;
}

// A single thread turns block maxima into running maxima; there are few blocks.
__global__ void scan_block_max(float* block_max, int blocks) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        for (int b = 1; b < blocks; ++b) block_max[b] = fmaxf(block_max[b], block_max[b - 1]);
    }
}

__global__ void apply_prefix(float* y, const float* block_max, int n) {
    int gid = blockIdx.x * kBlock + threadIdx.x;
    if (blockIdx.x > 0 && gid < n) y[gid] = fmaxf(y[gid], block_max[blockIdx.x - 1]);
}

int main() {
    std::vector<float> x = load_array<float>("data/x.bin", N);
    std::vector<float> y(N);
    const int blocks = (N + kBlock - 1) / kBlock;

    float *d_x, *d_y, *d_bmax;
    CUDA_CHECK(cudaMalloc(&d_x, N * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_y, N * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_bmax, blocks * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_x, x.data(), N * sizeof(float), cudaMemcpyHostToDevice));

    block_scan_max<<<blocks, kBlock>>>(d_x, d_y, d_bmax, N);
    CUDA_CHECK(cudaGetLastError());
    scan_block_max<<<1, 1>>>(d_bmax, blocks);
    CUDA_CHECK(cudaGetLastError());
    apply_prefix<<<blocks, kBlock>>>(d_y, d_bmax, N);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(y.data(), d_y, N * sizeof(float), cudaMemcpyDeviceToHost));
    save_array("data/y.bin", y);

    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    CUDA_CHECK(cudaFree(d_bmax));
    return 0;
}
