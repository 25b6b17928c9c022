#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#ifndef N
#define N 100000
#endif

#define BLOCK 256

__global__ void block_sum(const float* in, float* partial, int n) {
    __shared__ float cache[BLOCK];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    cache[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            cache[tid] += cache[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        partial[blockIdx.x] = cache[0];
    }
}

int main() {
    int blocks = (N + BLOCK - 1) / BLOCK;
    float* h_in = (float*)malloc(N * sizeof(float));
    float* h_partial = (float*)malloc(blocks * sizeof(float));
    FILE* f = fopen("data/values.bin", "rb");
    if (!f) { fprintf(stderr, "missing data/values.bin\n"); return 1; }
    size_t got = fread(h_in, sizeof(float), N, f);
    fclose(f);
    if (got != N) { fprintf(stderr, "short read\n"); return 1; }
    float *d_in, *d_partial;
    cudaMalloc(&d_in, N * sizeof(float));
    cudaMalloc(&d_partial, blocks * sizeof(float));
    cudaMemcpy(d_in, h_in, N * sizeof(float), cudaMemcpyHostToDevice);
    block_sum<<<blocks, BLOCK>>>(d_in, d_partial, N);
    cudaMemcpy(h_partial, d_partial, blocks * sizeof(float), cudaMemcpyDeviceToHost);
    double total = 0.0;
    for (int b = 0; b < blocks; ++b) total += h_partial[b];
    float result = (float)total;
    FILE* o = fopen("data/total.bin", "wb");
    fwrite(&result, sizeof(float), 1, o);
    fclose(o);
    cudaFree(d_in);
    cudaFree(d_partial);
    free(h_in);
    free(h_partial);
    return 0;
}
