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

// out[perm[i]] = src[i]. perm is a permutation, so every output slot is written exactly once
// and no two threads write the same slot.
__global__ void scatter_permute(const float* __restrict__ src, const int* __restrict__ perm,
                                float* __restrict__ out, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        int dst = perm[i];
        if (dst >= 0 && dst < n) out[dst] = src[i];
    }
}

int main() {
    std::vector<float> src = load_array<float>("data/src.bin", N);
    std::vector<int> perm = load_array<int>("data/perm.bin", N);
    // Validate on the host: a repeated or out-of-range target would leave slots unwritten.
    std::vector<char> seen(N, 0);
    for (int i = 0; i < N; ++i) {
        if (perm[i] < 0 || perm[i] >= N || seen[perm[i]]) {
            std::fprintf(stderr, "perm is not a permutation of 0..%d (entry %d = %d)\n", N - 1, i, perm[i]);
            return 1;
        }
        seen[perm[i]] = 1;
    }
    std::vector<float> out(N);

    float *d_src, *d_out;
    int* d_perm;
    CUDA_CHECK(cudaMalloc(&d_src, N * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_perm, N * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_out, N * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_src, src.data(), N * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_perm, perm.data(), N * sizeof(int), cudaMemcpyHostToDevice));

    int blocks = (N + kBlock - 1) / kBlock;
    if (blocks > 512) blocks = 512;
    scatter_permute<<<blocks, kBlock>>>(d_src, d_perm, d_out, N);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(out.data(), d_out, N * sizeof(float), cudaMemcpyDeviceToHost));
    save_array("data/out.bin", out);

    CUDA_CHECK(cudaFree(d_src));
    CUDA_CHECK(cudaFree(d_perm));
    CUDA_CHECK(cudaFree(d_out));
    return 0;
}
