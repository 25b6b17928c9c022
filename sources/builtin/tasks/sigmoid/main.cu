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
#define N 65536
#endif

#define THREADS 128

// Numerically stable logistic function: never evaluates exp of a large positive number.
__device__ float stable_sigmoid(float x) {
    if (x >= 0.0f) {
        return 1.0f / (1.0f + expf(-x));
    }
    float e = expf(x);
    return e / (1.0f + e);
}

__global__ void sigmoid_kernel(const float* in, float* out, int n) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= n) return;
    out[idx] = stable_sigmoid(in[idx]);
}

int main(void) {
    size_t bytes = (size_t)N * sizeof(float);
    float* h_in = (float*)malloc(bytes);
    float* h_out = (float*)malloc(bytes);
    if (!h_in || !h_out) {
        fprintf(stderr, "out of host memory\n");
        return EXIT_FAILURE;
    }
    read_file("data/x.bin", h_in, bytes);

    float* d_in = NULL;
    float* d_out = NULL;
    CUDA_CHECK(cudaMalloc((void**)&d_in, bytes));
    CUDA_CHECK(cudaMalloc((void**)&d_out, bytes));
    CUDA_CHECK(cudaMemcpy(d_in, h_in, bytes, cudaMemcpyHostToDevice));

    dim3 block(THREADS);
    dim3 grid((N + THREADS - 1) / THREADS);
    sigmoid_kernel<<<grid, block>>>(d_in, d_out, N);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(h_out, d_out, bytes, cudaMemcpyDeviceToHost));
    write_file("data/y.bin", h_out, bytes);

    cudaFree(d_in);
    cudaFree(d_out);
    free(h_in);
    free(h_out);
    return 0;
}
