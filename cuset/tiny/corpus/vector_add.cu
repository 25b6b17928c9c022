#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#ifndef N
#define N 1024
#endif

__global__ void vector_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
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
    size_t bytes = N * sizeof(float);
    float *h_a = (float*)malloc(bytes), *h_b = (float*)malloc(bytes), *h_c = (float*)malloc(bytes);
    read_file("data/a.bin", h_a, bytes);
    read_file("data/b.bin", h_b, bytes);
    float *d_a, *d_b, *d_c;
    cudaMalloc(&d_a, bytes);
    cudaMalloc(&d_b, bytes);
    cudaMalloc(&d_c, bytes);
    cudaMemcpy(d_a, h_a, bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(d_b, h_b, bytes, cudaMemcpyHostToDevice);
    int threads = 256;
    int blocks = (N + threads - 1) / threads;
    vector_add<<<blocks, threads>>>(d_a, d_b, d_c, N);
    cudaMemcpy(h_c, d_c, bytes, cudaMemcpyDeviceToHost);
    write_file("data/c.bin", h_c, bytes);
    cudaFree(d_a); cudaFree(d_b); cudaFree(d_c);
    free(h_a); free(h_b); free(h_c);
    return 0;
}
