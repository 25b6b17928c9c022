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
#ifndef BINS
#define BINS 1000
#endif

#define BLOCK_SIZE 256
#define MAX_GRID 256

// out[idx[i]] += vals[i]. Several threads may hit the same bin, so the update is atomic.
__global__ void scatter_add(const int* __restrict__ idx, const float* __restrict__ vals,
                            float* __restrict__ out, int n, int bins) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        int b = idx[i];
        if (b >= 0 && b < bins) atomicAdd(&out[b], vals[i]);
    }
}

int main() {
    int* h_idx = (int*)malloc((size_t)N * sizeof(int));
    float* h_vals = (float*)malloc((size_t)N * sizeof(float));
    float* h_out = (float*)malloc((size_t)BINS * sizeof(float));
    if (!h_idx || !h_vals || !h_out) {
        fprintf(stderr, "host allocation failed\n");
        return EXIT_FAILURE;
    }
    read_file("data/idx.bin", h_idx, (size_t)N * sizeof(int));
    read_file("data/vals.bin", h_vals, (size_t)N * sizeof(float));

    int* d_idx;
    float *d_vals, *d_out;
    CUDA_CHECK(cudaMalloc(&d_idx, (size_t)N * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_vals, (size_t)N * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, (size_t)BINS * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_idx, h_idx, (size_t)N * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_vals, h_vals, (size_t)N * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_out, 0, (size_t)BINS * sizeof(float)));

    int grid = (N + BLOCK_SIZE - 1) / BLOCK_SIZE;
    if (grid > MAX_GRID) grid = MAX_GRID;
    scatter_add<<<grid, BLOCK_SIZE>>>(d_idx, d_vals, d_out, N, BINS);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(h_out, d_out, (size_t)BINS * sizeof(float), cudaMemcpyDeviceToHost));
    write_file("data/out.bin", h_out, (size_t)BINS * sizeof(float));

    CUDA_CHECK(cudaFree(d_idx));
    CUDA_CHECK(cudaFree(d_vals));
    CUDA_CHECK(cudaFree(d_out));
    free(h_idx);
    free(h_vals);
    free(h_out);
    return 0;
}
