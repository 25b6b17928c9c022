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
#define ROWS 128
#endif
#ifndef LEN
#define LEN 1024
#endif

#define BLOCK 256

// One block per row. The row is scanned in chunks of BLOCK elements: a Hillis-Steele scan
// within the chunk, plus the running total of the previous chunks.
__global__ void row_cumsum(const float* __restrict__ x, float* __restrict__ y, int len) {
    extern __shared__ float chunk[];
    const float* in = x + (size_t)blockIdx.x * len;
    float* out = y + (size_t)blockIdx.x * len;
    float carry = 0.0f;
    for (int base = 0; base < len; base += blockDim.x) {
        int i = base + threadIdx.x;
        chunk[threadIdx.x] = i < len ? in[i] : 0.0f;
        __syncthreads();
        for (int offset = 1; offset < blockDim.x; offset <<= 1) {
            float add = threadIdx.x >= offset ? chunk[threadIdx.x - offset] : 0.0f;
            __syncthreads();
            chunk[threadIdx.x] += add;
            __syncthreads();
        }
        if (i < len) out[i] = carry + chunk[threadIdx.x];
        carry += chunk[blockDim.x - 1];
        __syncthreads();  // everyone has read the chunk total before it is overwritten
    }
}

int main() {
    const size_t count = (size_t)ROWS * LEN;
    float* h_x = (float*)malloc(count * sizeof(float));
    float* h_y = (float*)malloc(count * sizeof(float));
    if (!h_x || !h_y) {
        fprintf(stderr, "host allocation failed\n");
        return EXIT_FAILURE;
    }
    read_file("data/x.bin", h_x, count * sizeof(float));

    float *d_x, *d_y;
    CUDA_CHECK(cudaMalloc(&d_x, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_y, count * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_x, h_x, count * sizeof(float), cudaMemcpyHostToDevice));

    row_cumsum<<<ROWS, BLOCK, BLOCK * sizeof(float)>>>(d_x, d_y, LEN);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(h_y, d_y, count * sizeof(float), cudaMemcpyDeviceToHost));
    write_file("data/y.bin", h_y, count * sizeof(float));

    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    free(h_x);
    free(h_y);
    return 0;
}
