#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#ifndef N
#define N 100000
#endif

#define THREAD_PER_BLOCK 256

#define CUDA_CHECK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
    fprintf(stderr, "CUDA error %s at line %d\n", cudaGetErrorString(e_), __LINE__); exit(1); } } while (0)

__global__ void add(float* a, float* b, float* c)
{
    int idx = threadIdx.x + blockIdx.x * blockDim.x;
    c[idx] = a[idx] + b[idx];
}

static void read_file(const char* path, void* dst, size_t bytes) {
    FILE* f = fopen(path, "rb");
    if (!f || fread(dst, 1, bytes, f) != bytes) { fprintf(stderr, "cannot read %s\n", path); exit(1); }
    fclose(f);
}

static void write_file(const char* path, const void* src, size_t bytes) {
    FILE* f = fopen(path, "wb");
    if (!f || fwrite(src, 1, bytes, f) != bytes) { fprintf(stderr, "cannot write %s\n", path); exit(1); }
    fclose(f);
}

int main() {
    // The kernel has no bounds check: pad the device arrays to whole blocks.
    const size_t blocks = (N + THREAD_PER_BLOCK - 1) / THREAD_PER_BLOCK;
    const size_t padded = blocks * THREAD_PER_BLOCK;
    float* a = (float*)malloc(N * sizeof(float));
    float* b = (float*)malloc(N * sizeof(float));
    float* c = (float*)malloc(N * sizeof(float));
    read_file("data/a.bin", a, N * sizeof(float));
    read_file("data/b.bin", b, N * sizeof(float));
    float *d_a, *d_b, *d_c;
    CUDA_CHECK(cudaMalloc(&d_a, padded * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_b, padded * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_c, padded * sizeof(float)));
    CUDA_CHECK(cudaMemset(d_a, 0, padded * sizeof(float)));
    CUDA_CHECK(cudaMemset(d_b, 0, padded * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_a, a, N * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_b, b, N * sizeof(float), cudaMemcpyHostToDevice));
    add<<<blocks, THREAD_PER_BLOCK>>>(d_a, d_b, d_c);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(c, d_c, N * sizeof(float), cudaMemcpyDeviceToHost));
    write_file("data/c.bin", c, N * sizeof(float));
    cudaFree(d_a); cudaFree(d_b); cudaFree(d_c);
    free(a); free(b); free(c);
    return 0;
}
