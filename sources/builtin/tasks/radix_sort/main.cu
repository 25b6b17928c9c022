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
#define N 4096
#endif

constexpr int kBits = 4;
constexpr int kRadix = 1 << kBits;
constexpr int kBlock = 256;

// Pass 1 of a digit pass: digit counts per block, stored digit-major (hist[d * blocks + b]) so
// one exclusive scan over the whole table gives every (digit, block) its first output slot.
__global__ void digit_histogram(const unsigned int* __restrict__ keys, unsigned int* __restrict__ hist,
                                int n, int shift, int blocks) {
    __shared__ unsigned int counts[kRadix];
    if (threadIdx.x < kRadix) counts[threadIdx.x] = 0;
    __syncthreads();
    int i = blockIdx.x * kBlock + threadIdx.x;
    if (i < n) atomicAdd(&counts[(keys[i] >> shift) & (kRadix - 1)], 1u);
    __syncthreads();
    if (threadIdx.x < kRadix) hist[threadIdx.x * blocks + blockIdx.x] = counts[threadIdx.x];
}

// Pass 2: exclusive scan of the (small) table by one block, a tile at a time.
__global__ void exclusive_scan_table(unsigned int* table, int count) {
    __shared__ unsigned int tile[kBlock];
    __shared__ unsigned int carry;
    if (threadIdx.x == 0) carry = 0;
    __syncthreads();
    for (int base = 0; base < count; base += kBlock) {
        int i = base + threadIdx.x;
        unsigned int v = i < count ? table[i] : 0;
        tile[threadIdx.x] = v;
        __syncthreads();
        for (int off = 1; off < kBlock; off <<= 1) {
            unsigned int add = threadIdx.x >= off ? tile[threadIdx.x - off] : 0;
            __syncthreads();
            tile[threadIdx.x] += add;
            __syncthreads();
        }
        if (i < count) table[i] = carry + tile[threadIdx.x] - v;
        __syncthreads();
        if (threadIdx.x == 0) carry += tile[kBlock - 1];
        __syncthreads();
    }
}

// Pass 3: stable scatter. An element's slot is its (digit, block) offset plus the number of
// earlier elements of the same block with the same digit, which keeps equal digits in order.
__global__ void scatter_stable(const unsigned int* __restrict__ keys_in, const int* __restrict__ idx_in,
                               unsigned int* __restrict__ keys_out, int* __restrict__ idx_out,
                               const unsigned int* __restrict__ offsets, int n, int shift, int blocks) {
    __shared__ unsigned char digits[kBlock];
    int i = blockIdx.x * kBlock + threadIdx.x;
    unsigned int key = 0;
    int digit = kRadix;  // sentinel for threads past the end
    if (i < n) {
        key = keys_in[i];
        digit = (key >> shift) & (kRadix - 1);
    }
    digits[threadIdx.x] = (unsigned char)digit;
    __syncthreads();
    if (i < n) {
        unsigned int rank = 0;
        for (int t = 0; t < threadIdx.x; ++t) rank += digits[t] == digit;
        unsigned int pos = offsets[digit * blocks + blockIdx.x] + rank;
        keys_out[pos] = key;
        idx_out[pos] = idx_in[i];
    }
}

__global__ void iota(int* idx, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) idx[i] = i;
}

int main() {
    std::vector<unsigned int> keys = load_array<unsigned int>("data/keys.bin", N);
    const int blocks = (N + kBlock - 1) / kBlock;
    const int table = kRadix * blocks;

    unsigned int *d_keys[2], *d_hist;
    int* d_idx[2];
    for (int b = 0; b < 2; ++b) {
        CUDA_CHECK(cudaMalloc(&d_keys[b], N * sizeof(unsigned int)));
        CUDA_CHECK(cudaMalloc(&d_idx[b], N * sizeof(int)));
    }
    CUDA_CHECK(cudaMalloc(&d_hist, table * sizeof(unsigned int)));
    CUDA_CHECK(cudaMemcpy(d_keys[0], keys.data(), N * sizeof(unsigned int), cudaMemcpyHostToDevice));
    iota<<<blocks, kBlock>>>(d_idx[0], N);
    CUDA_CHECK(cudaGetLastError());

    int cur = 0;
    for (int shift = 0; shift < 32; shift += kBits) {
        digit_histogram<<<blocks, kBlock>>>(d_keys[cur], d_hist, N, shift, blocks);
        CUDA_CHECK(cudaGetLastError());
        exclusive_scan_table<<<1, kBlock>>>(d_hist, table);
        CUDA_CHECK(cudaGetLastError());
        scatter_stable<<<blocks, kBlock>>>(d_keys[cur], d_idx[cur], d_keys[cur ^ 1], d_idx[cur ^ 1],
                                           d_hist, N, shift, blocks);
        CUDA_CHECK(cudaGetLastError());
        cur ^= 1;
    }
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<unsigned int> sorted(N);
    std::vector<int> order(N);
    CUDA_CHECK(cudaMemcpy(sorted.data(), d_keys[cur], N * sizeof(unsigned int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(order.data(), d_idx[cur], N * sizeof(int), cudaMemcpyDeviceToHost));
    save_array("data/sorted_keys.bin", sorted);
    save_array("data/order.bin", order);

    for (int b = 0; b < 2; ++b) {
        CUDA_CHECK(cudaFree(d_keys[b]));
        CUDA_CHECK(cudaFree(d_idx[b]));
    }
    CUDA_CHECK(cudaFree(d_hist));
    return 0;
}
