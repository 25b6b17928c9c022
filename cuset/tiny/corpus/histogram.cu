#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#ifndef N
#define N 65536
#endif
#define BINS 64

__global__ void histogram(const int* values, unsigned int* counts, int n) {
    __shared__ unsigned int local[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        int v = values[i];
        if (v >= 0 && v < BINS) atomicAdd(&local[v], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) atomicAdd(&counts[b], local[b]);
}

int main() {
    int* h_values = (int*)malloc(N * sizeof(int));
    unsigned int h_counts[BINS];
    FILE* f = fopen("data/values.bin", "rb");
    if (!f || fread(h_values, sizeof(int), N, f) != N) { fprintf(stderr, "bad values\n"); return 1; }
    fclose(f);
    int* d_values;
    unsigned int* d_counts;
    cudaMalloc(&d_values, N * sizeof(int));
    cudaMalloc(&d_counts, BINS * sizeof(unsigned int));
    cudaMemcpy(d_values, h_values, N * sizeof(int), cudaMemcpyHostToDevice);
    cudaMemset(d_counts, 0, BINS * sizeof(unsigned int));
    histogram<<<32, 256>>>(d_values, d_counts, N);
    cudaMemcpy(h_counts, d_counts, sizeof(h_counts), cudaMemcpyDeviceToHost);
    FILE* o = fopen("data/counts.bin", "wb");
    fwrite(h_counts, sizeof(unsigned int), BINS, o);
    fclose(o);
    cudaFree(d_values);
    cudaFree(d_counts);
    free(h_values);
    return 0;
}
