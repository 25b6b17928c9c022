#include <cfloat>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#ifndef ROWS
#define ROWS 300
#endif
#ifndef COLS
#define COLS 1000
#endif

__device__ float warp_max(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) {
        v = fmaxf(v, __shfl_down_sync(0xffffffff, v, offset));
    }
    return v;
}

__global__ void row_max(const float* x, float* out, int rows, int cols) {
    int row = blockIdx.x;
    if (row >= rows) return;
    float best = -FLT_MAX;
    for (int c = threadIdx.x; c < cols; c += 32) {
        best = fmaxf(best, x[row * cols + c]);
    }
    best = warp_max(best);
    if (threadIdx.x == 0) out[row] = best;
}

int main() {
    size_t count = (size_t)ROWS * COLS;
    float* h_x = (float*)malloc(count * sizeof(float));
    float* h_out = (float*)malloc(ROWS * sizeof(float));
    FILE* f = fopen("data/x.bin", "rb");
    if (!f || fread(h_x, sizeof(float), count, f) != count) { fprintf(stderr, "bad x\n"); return 1; }
    fclose(f);
    float *d_x, *d_out;
    cudaMalloc(&d_x, count * sizeof(float));
    cudaMalloc(&d_out, ROWS * sizeof(float));
    cudaMemcpy(d_x, h_x, count * sizeof(float), cudaMemcpyHostToDevice);
    row_max<<<ROWS, 32>>>(d_x, d_out, ROWS, COLS);
    cudaMemcpy(h_out, d_out, ROWS * sizeof(float), cudaMemcpyDeviceToHost);
    FILE* o = fopen("data/out.bin", "wb");
    fwrite(h_out, sizeof(float), ROWS, o);
    fclose(o);
    cudaFree(d_x);
    cudaFree(d_out);
    free(h_x);
    free(h_out);
    return 0;
}
