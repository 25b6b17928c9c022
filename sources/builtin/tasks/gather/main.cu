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
#ifndef M
#define M 50000
#endif

#define BLOCK_SIZE 256

// out[i] = src[idx[i]]; an index outside [0, n) is reported through `bad` instead of being
// read out of bounds.
__global__ void gather(const float* __restrict__ src, const int* __restrict__ idx,
                       float* __restrict__ out, int n, int m, int* __restrict__ bad) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    int j = idx[i];
    if (j < 0 || j >= n) {
        atomicExch(bad, 1);
        out[i] = 0.0f;
        return;
    }
    out[i] = src[j];
}

int main() {
    float* h_src = (float*)malloc((size_t)N * sizeof(float));
    int* h_idx = (int*)malloc((size_t)M * sizeof(int));
    float* h_out = (float*)malloc((size_t)M * sizeof(float));
    if (!h_src || !h_idx || !h_out) {
        fprintf(stderr, "host allocation failed\n");
        return EXIT_FAILURE;
    }
    read_file("data/src.bin", h_src, (size_t)N * sizeof(float));
    read_file("data/idx.bin", h_idx, (size_t)M * sizeof(int));

    float *d_src, *d_out;
    int *d_idx, *d_bad;
    CUDA_CHECK(cudaMalloc(&d_src, (size_t)N * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_idx, (size_t)M * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_out, (size_t)M * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_bad, sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_src, h_src, (size_t)N * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_idx, h_idx, (size_t)M * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_bad, 0, sizeof(int)));

    gather<<<(M + BLOCK_SIZE - 1) / BLOCK_SIZE, BLOCK_SIZE>>>(d_src, d_idx, d_out, N, M, d_bad);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    int h_bad = 0;
    CUDA_CHECK(cudaMemcpy(&h_bad, d_bad, sizeof(int), cudaMemcpyDeviceToHost));
    if (h_bad) {
        fprintf(stderr, "idx holds values outside [0, %d)\n", N);
        return EXIT_FAILURE;
    }
    CUDA_CHECK(cudaMemcpy(h_out, d_out, (size_t)M * sizeof(float), cudaMemcpyDeviceToHost));
    write_file("data/out.bin", h_out, (size_t)M * sizeof(float));

    CUDA_CHECK(cudaFree(d_src));
    CUDA_CHECK(cudaFree(d_idx));
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFree(d_bad));
    free(h_src);
    free(h_idx);
    free(h_out);
    return 0;
}
