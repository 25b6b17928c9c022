#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#ifndef M
#define M 128
#endif
#ifndef K
#define K 96
#endif
#ifndef P
#define P 80
#endif

#define TILE 16

__global__ void matmul_tiled(const float* A, const float* B, float* C, int m, int k, int p) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < (k + TILE - 1) / TILE; ++t) {
        int ka = t * TILE + threadIdx.x;
        int kb = t * TILE + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < m && ka < k) ? A[row * k + ka] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (kb < k && col < p) ? B[kb * p + col] : 0.0f;
        __syncthreads();
        for (int j = 0; j < TILE; ++j) {
            acc += As[threadIdx.y][j] * Bs[j][threadIdx.x];
        }
        __syncthreads();
    }
    if (row < m && col < p) {
        C[row * p + col] = acc;
    }
}

static float* load(const char* path, size_t count) {
    float* buf = (float*)malloc(count * sizeof(float));
    FILE* f = fopen(path, "rb");
    if (!f || fread(buf, sizeof(float), count, f) != count) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(1);
    }
    fclose(f);
    return buf;
}

int main() {
    float* h_A = load("data/A.bin", (size_t)M * K);
    float* h_B = load("data/B.bin", (size_t)K * P);
    float* h_C = (float*)malloc((size_t)M * P * sizeof(float));
    float *d_A, *d_B, *d_C;
    cudaMalloc(&d_A, (size_t)M * K * sizeof(float));
    cudaMalloc(&d_B, (size_t)K * P * sizeof(float));
    cudaMalloc(&d_C, (size_t)M * P * sizeof(float));
    cudaMemcpy(d_A, h_A, (size_t)M * K * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(d_B, h_B, (size_t)K * P * sizeof(float), cudaMemcpyHostToDevice);
    dim3 block(TILE, TILE);
    dim3 grid((P + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    matmul_tiled<<<grid, block>>>(d_A, d_B, d_C, M, K, P);
    cudaMemcpy(h_C, d_C, (size_t)M * P * sizeof(float), cudaMemcpyDeviceToHost);
    FILE* out = fopen("data/C.bin", "wb");
    fwrite(h_C, sizeof(float), (size_t)M * P, out);
    fclose(out);
    cudaFree(d_A); cudaFree(d_B); cudaFree(d_C);
    free(h_A); free(h_B); free(h_C);
    return 0;
}
