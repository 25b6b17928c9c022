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

constexpr int kThreads = 256;
constexpr int kTile = 2 * kThreads;  // each thread scans two elements

// Work-efficient (Blelloch) exclusive scan of one tile of 2*kThreads elements.
// Writes the tile total to block_sums[blockIdx.x] when block_sums is not null.
__global__ void blelloch_scan(const int* __restrict__ in, int* __restrict__ out,
                              int* __restrict__ block_sums, int n) {
    extern __shared__ int temp[];
    const int tid = threadIdx.x;
    const int base = blockIdx.x * kTile;
    temp[2 * tid] = base + 2 * tid < n ? in[base + 2 * tid] : 0;
    temp[2 * tid + 1] = base + 2 * tid + 1 < n ? in[base + 2 * tid + 1] : 0;

    int offset = 1;
    for (int d = kTile >> 1; d > 0; d >>= 1) {  // up-sweep
        __syncthreads();
        if (tid < d) {
            int ai = offset * (2 * tid + 1) - 1;
            int bi = offset * (2 * tid + 2) - 1;
            temp[bi] += temp[ai];
        }
        offset <<= 1;
    }
    if (tid == 0) {
        if (block_sums != nullptr) block_sums[blockIdx.x] = temp[kTile - 1];
        temp[kTile - 1] = 0;
    }
    for (int d = 1; d < kTile; d <<= 1) {  // down-sweep
        offset >>= 1;
        __syncthreads();
        if (tid < d) {
            int ai = offset * (2 * tid + 1) - 1;
            int bi = offset * (2 * tid + 2) - 1;
            int t = temp[ai];
            temp[ai] = temp[bi];
            temp[bi] += t;
        }
    }
    __syncthreads();
    if (base + 2 * tid < n) out[base + 2 * tid] = temp[2 * tid];
    if (base + 2 * tid + 1 < n) out[base + 2 * tid + 1] = temp[2 * tid + 1];
}

__global__ void add_block_offsets(int* data, const int* offsets, int n) {
    int i = blockIdx.x * kTile + threadIdx.x;
    int add = offsets[blockIdx.x];
    if (i < n) data[i] += add;
    if (i + kThreads < n) data[i + kThreads] += add;
}

// Scans any length by scanning the tile totals recursively.
static void exclusive_scan(const int* d_in, int* d_out, int n) {
    int tiles = (n + kTile - 1) / kTile;
    const size_t shmem = kTile * sizeof(int);
    if (tiles == 1) {
        blelloch_scan<<<1, kThreads, shmem>>>(d_in, d_out, nullptr, n);
        CUDA_CHECK(cudaGetLastError());
        return;
    }
    int* d_sums = nullptr;
    CUDA_CHECK(cudaMalloc(&d_sums, tiles * sizeof(int)));
    blelloch_scan<<<tiles, kThreads, shmem>>>(d_in, d_out, d_sums, n);
    CUDA_CHECK(cudaGetLastError());
    exclusive_scan(d_sums, d_sums, tiles);  // in place: each tile reads before it writes
    add_block_offsets<<<tiles, kThreads>>>(d_out, d_sums, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaFree(d_sums));
}

int main() {
    std::vector<int> x = load_array<int>("data/x.bin", N);
    std::vector<int> y(N);

    int *d_x, *d_y;
    CUDA_CHECK(cudaMalloc(&d_x, N * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_y, N * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_x, x.data(), N * sizeof(int), cudaMemcpyHostToDevice));

    exclusive_scan(d_x, d_y, N);
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(y.data(), d_y, N * sizeof(int), cudaMemcpyDeviceToHost));
    save_array("data/y.bin", y);

    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    return 0;
}
