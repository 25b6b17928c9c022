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

#ifndef N
#define N 100000
#endif

#define BLOCK_SIZE 256

__device__ __forceinline__ int keep(float v) { return v > 0.0f; }

// Pass 1: how many elements each block keeps.
__global__ void count_kept(const float* __restrict__ x, int* __restrict__ block_counts, int n) {
    __shared__ int count;
    if (threadIdx.x == 0) count = 0;
    __syncthreads();
    int i = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    if (i < n && keep(x[i])) atomicAdd(&count, 1);
    __syncthreads();
    if (threadIdx.x == 0) block_counts[blockIdx.x] = count;
}

// Pass 2: exclusive scan of the block counts (few blocks, one thread) and the total.
__global__ void scan_counts(int* block_counts, int blocks, int* total) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    int running = 0;
    for (int b = 0; b < blocks; ++b) {
        int c = block_counts[b];
        block_counts[b] = running;
        running += c;
    }
    *total = running;
}

// Pass 3: an exclusive scan of the keep flags inside the block gives each kept element its
// slot, so the output preserves the input order.
__global__ void scatter_kept(const float* __restrict__ x, const int* __restrict__ block_offsets,
                             float* __restrict__ out, int n) {
    __shared__ int flags[BLOCK_SIZE];
    int i = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    int flag = (i < n && keep(x[i])) ? 1 : 0;
    flags[threadIdx.x] = flag;
    __syncthreads();
    for (int offset = 1; offset < BLOCK_SIZE; offset <<= 1) {
        int add = threadIdx.x >= offset ? flags[threadIdx.x - offset] : 0;
        __syncthreads();
        flags[threadIdx.x] += add;
        __syncthreads();
    }
    if (flag) out[block_offsets[blockIdx.x] + flags[threadIdx.x] - 1] = x[i];
}

int main() {
    const size_t bytes = (size_t)N * sizeof(float);
    float* h_x = (float*)malloc(bytes);
    float* h_out = (float*)malloc(bytes);
    if (!h_x || !h_out) {
        fprintf(stderr, "host allocation failed\n");
        return EXIT_FAILURE;
    }
    read_file("data/x.bin", h_x, bytes);

    const int blocks = (N + BLOCK_SIZE - 1) / BLOCK_SIZE;
    float *d_x, *d_out;
    int *d_counts, *d_total;
    CUDA_CHECK(cudaMalloc(&d_x, bytes));
    CUDA_CHECK(cudaMalloc(&d_out, bytes));
    CUDA_CHECK(cudaMalloc(&d_counts, blocks * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_total, sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_x, h_x, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_out, 0, bytes));  // unused tail stays zero

    count_kept<<<blocks, BLOCK_SIZE>>>(d_x, d_counts, N);
    CUDA_CHECK(cudaGetLastError());
    scan_counts<<<1, 1>>>(d_counts, blocks, d_total);
    CUDA_CHECK(cudaGetLastError());
    scatter_kept<<<blocks, BLOCK_SIZE>>>(d_x, d_counts, d_out, N);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    int h_total = 0;
    CUDA_CHECK(cudaMemcpy(h_out, d_out, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&h_total, d_total, sizeof(int), cudaMemcpyDeviceToHost));
    write_file("data/compacted.bin", h_out, bytes);
    write_file("data/count.bin", &h_total, sizeof(int));

    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFree(d_counts));
    CUDA_CHECK(cudaFree(d_total));
    free(h_x);
    free(h_out);
    return 0;
}
