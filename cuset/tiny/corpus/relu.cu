#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#ifndef N
#define N 4096
#endif

__global__ void relu_kernel(const float* x, float* y, int n) {
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = x[i];
        y[i] = v > 0.0f ? v : 0.0f;
    }
}

int main() {
    size_t bytes = N * sizeof(float);
    float* h_x = (float*)malloc(bytes);
    float* h_y = (float*)malloc(bytes);
    FILE* in = fopen("data/x.bin", "rb");
    if (!in || fread(h_x, sizeof(float), N, in) != N) { fprintf(stderr, "bad input x\n"); return 1; }
    fclose(in);
    float *d_x, *d_y;
    cudaMalloc(&d_x, bytes);
    cudaMalloc(&d_y, bytes);
    cudaMemcpy(d_x, h_x, bytes, cudaMemcpyHostToDevice);
    dim3 block(128);
    dim3 grid((N + block.x - 1) / block.x);
    relu_kernel<<<grid, block>>>(d_x, d_y, N);
    cudaMemcpy(h_y, d_y, bytes, cudaMemcpyDeviceToHost);
    FILE* out = fopen("data/y.bin", "wb");
    fwrite(h_y, sizeof(float), N, out);
    fclose(out);
    cudaFree(d_x);
    cudaFree(d_y);
    free(h_x);
    free(h_y);
    return 0;
}
