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

#ifndef ROWS
#define ROWS 256
#endif
#ifndef COLS
#define COLS 1000
#endif
#ifndef TOPK
#define TOPK 8
#endif

#define THREADS 128

static_assert(TOPK <= COLS, "TOPK must not exceed COLS");

// (value, index) ordering: larger value first, then smaller index.
__device__ __forceinline__ bool ranks_before(float v, int i, float ov, int oi) {
    return v > ov || (v == ov && i < oi);
}

// One block per row. The row is copied to dynamic shared memory, then TOPK rounds of a
// block-wide argmax each pick the best remaining element and mark it taken with -infinity
// (inputs are finite, so a taken element never beats a remaining one).
__global__ void topk_rows(const float* __restrict__ x, float* __restrict__ values,
                          int* __restrict__ indices, int cols, int k) {
    extern __shared__ float row[];
    __shared__ float best_v[THREADS];
    __shared__ int best_i[THREADS];
    const float* in = x + (size_t)blockIdx.x * cols;
    for (int c = threadIdx.x; c < cols; c += THREADS) row[c] = in[c];
    __syncthreads();

    for (int r = 0; r < k; ++r) {
        float bv = -INFINITY;
        int bi = -1;  // -1: this thread has no column
        for (int c = threadIdx.x; c < cols; c += THREADS) {
            if (bi < 0 || ranks_before(row[c], c, bv, bi)) {
                bv = row[c];
                bi = c;
            }
        }
        best_v[threadIdx.x] = bv;
        best_i[threadIdx.x] = bi;
        __syncthreads();
        for (int s = THREADS / 2; s > 0; s >>= 1) {
            if (threadIdx.x < s) {
                float ov = best_v[threadIdx.x + s];
                int oi = best_i[threadIdx.x + s];
                if (oi >= 0 && (best_i[threadIdx.x] < 0 ||
                                ranks_before(ov, oi, best_v[threadIdx.x], best_i[threadIdx.x]))) {
                    best_v[threadIdx.x] = ov;
                    best_i[threadIdx.x] = oi;
                }
            }
            __syncthreads();
        }
        if (threadIdx.x == 0) {
            values[(size_t)blockIdx.x * k + r] = best_v[0];
            indices[(size_t)blockIdx.x * k + r] = best_i[0];
            row[best_i[0]] = -INFINITY;
        }
        __syncthreads();
    }
}

int main() {
    const size_t count = (size_t)ROWS * COLS;
    const size_t out_count = (size_t)ROWS * TOPK;
    float* h_x = (float*)malloc(count * sizeof(float));
    float* h_vals = (float*)malloc(out_count * sizeof(float));
    int* h_idx = (int*)malloc(out_count * sizeof(int));
    if (!h_x || !h_vals || !h_idx) {
        fprintf(stderr, "host allocation failed\n");
        return EXIT_FAILURE;
    }
    read_file("data/x.bin", h_x, count * sizeof(float));

    float *d_x, *d_vals;
    int* d_idx;
    CUDA_CHECK(cudaMalloc(&d_x, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_vals, out_count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_idx, out_count * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_x, h_x, count * sizeof(float), cudaMemcpyHostToDevice));

    topk_rows<<<ROWS, THREADS, COLS * sizeof(float)>>>(d_x, d_vals, d_idx, COLS, TOPK);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(h_vals, d_vals, out_count * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_idx, d_idx, out_count * sizeof(int), cudaMemcpyDeviceToHost));
    write_file("data/values.bin", h_vals, out_count * sizeof(float));
    write_file("data/indices.bin", h_idx, out_count * sizeof(int));

    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_vals));
    CUDA_CHECK(cudaFree(d_idx));
    free(h_x);
    free(h_vals);
    free(h_idx);
    return 0;
}
