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

// Hillis-Steele inclusive scan of one value per thread across the block, double buffered so no
// thread reads a slot another thread is writing in the same step. Returns this thread's prefix.
__device__ int block_inclusive_scan(int (*buf)[BLOCK_SIZE], int value) {
    int cur = 0;
    buf[cur][threadIdx.x] = value;
    __syncthreads();
    for (int offset = 1; offset < BLOCK_SIZE; offset <<= 1) {
        int v = buf[cur][threadIdx.x];
        if (threadIdx.x >= offset) v += buf[cur][threadIdx.x - offset];
        buf[cur ^ 1][threadIdx.x] = v;
        cur ^= 1;
        __syncthreads();
    }
    return buf[cur][threadIdx.x];
}

// Phase 1: inclusive scan of each block's tile; the last thread's prefix is the tile total.
__global__ void block_scan(const int* __restrict__ in, int* __restrict__ out,
                           int* __restrict__ block_sums, int n) {
    __shared__ int buf[2][BLOCK_SIZE];
    int gid = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    int prefix = block_inclusive_scan(buf, gid < n ? in[gid] : 0);
    if (gid < n) out[gid] = prefix;
    if (threadIdx.x == BLOCK_SIZE - 1) block_sums[blockIdx.x] = prefix;
}

// Phase 2: one block turns the block totals into exclusive offsets by raking: each thread owns a
// contiguous run of totals, adds it up serially, the run sums are scanned across the block, and
// each thread walks its run again writing offsets. A thread reads and writes only its own run,
// so the update can be in place.
__global__ void scan_block_sums(int* sums, int count) {
    __shared__ int buf[2][BLOCK_SIZE];
    const int per_thread = (count + BLOCK_SIZE - 1) / BLOCK_SIZE;
    int first = (int)threadIdx.x * per_thread;
    if (first > count) first = count;
    int last = first + per_thread;
    if (last > count) last = count;
    int run = 0;
    for (int k = first; k < last; ++k) run += sums[k];
    int running = block_inclusive_scan(buf, run) - run;
    for (int k = first; k < last; ++k) {
        const int total = sums[k];
        sums[k] = running;
        running += total;
    }
}

// Phase 3: add the offset of all earlier blocks.
__global__ void add_offsets(int* out, const int* offsets, int n) {
    int gid = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    if (gid < n) out[gid] += offsets[blockIdx.x];
}

int main() {
    const size_t bytes = (size_t)N * sizeof(int);
    int* h_in = (int*)malloc(bytes);
    int* h_out = (int*)malloc(bytes);
    if (!h_in || !h_out) {
        fprintf(stderr, "host allocation failed\n");
        return EXIT_FAILURE;
    }
    read_file("data/x.bin", h_in, bytes);

    const int blocks = (N + BLOCK_SIZE - 1) / BLOCK_SIZE;
    int *d_in, *d_out, *d_sums;
    CUDA_CHECK(cudaMalloc(&d_in, bytes));
    CUDA_CHECK(cudaMalloc(&d_out, bytes));
    CUDA_CHECK(cudaMalloc(&d_sums, blocks * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_in, h_in, bytes, cudaMemcpyHostToDevice));

    block_scan<<<blocks, BLOCK_SIZE>>>(d_in, d_out, d_sums, N);
    CUDA_CHECK(cudaGetLastError());
    scan_block_sums<<<1, BLOCK_SIZE>>>(d_sums, blocks);
    CUDA_CHECK(cudaGetLastError());
    add_offsets<<<blocks, BLOCK_SIZE>>>(d_out, d_sums, N);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(h_out, d_out, bytes, cudaMemcpyDeviceToHost));
    write_file("data/y.bin", h_out, bytes);

    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFree(d_sums));
    free(h_in);
    free(h_out);
    return 0;
}
