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

#ifndef M
#define M 256
#endif
#ifndef N
#define N 256
#endif
#ifndef DIM
#define DIM 64
#endif

#define TILE 16

// dist[i][j] = ||X[i] - Y[j]||. Each block stages TILE rows of X and TILE rows of Y, a TILE-wide
// slice of the feature dimension at a time; tile rows are padded to avoid bank conflicts.
__global__ void pairwise_distance(const float* __restrict__ X, const float* __restrict__ Y,
                                  float* __restrict__ dist, int m, int n, int d) {
    __shared__ float xs[TILE][TILE + 1];
    __shared__ float ys[TILE][TILE + 1];
    int i = blockIdx.y * TILE + threadIdx.y;  // row of X
    int j = blockIdx.x * TILE + threadIdx.x;  // row of Y
    float acc = 0.0f;
    for (int f0 = 0; f0 < d; f0 += TILE) {
        int xr = blockIdx.y * TILE + threadIdx.y;
        int yr = blockIdx.x * TILE + threadIdx.y;
        int f = f0 + threadIdx.x;
        xs[threadIdx.y][threadIdx.x] = (xr < m && f < d) ? X[(size_t)xr * d + f] : 0.0f;
        ys[threadIdx.y][threadIdx.x] = (yr < n && f < d) ? Y[(size_t)yr * d + f] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k) {
            float diff = xs[threadIdx.y][k] - ys[threadIdx.x][k];
            acc += diff * diff;
        }
        __syncthreads();
    }
    if (i < m && j < n) dist[(size_t)i * n + j] = sqrtf(acc);
}

int main() {
    float* h_x = (float*)malloc((size_t)M * DIM * sizeof(float));
    float* h_y = (float*)malloc((size_t)N * DIM * sizeof(float));
    float* h_d = (float*)malloc((size_t)M * N * sizeof(float));
    if (!h_x || !h_y || !h_d) {
        fprintf(stderr, "host allocation failed\n");
        return EXIT_FAILURE;
    }
    read_file("data/X.bin", h_x, (size_t)M * DIM * sizeof(float));
    read_file("data/Y.bin", h_y, (size_t)N * DIM * sizeof(float));

    float *d_x, *d_y, *d_d;
    CUDA_CHECK(cudaMalloc(&d_x, (size_t)M * DIM * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_y, (size_t)N * DIM * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_d, (size_t)M * N * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_x, h_x, (size_t)M * DIM * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_y, h_y, (size_t)N * DIM * sizeof(float), cudaMemcpyHostToDevice));

    dim3 block(TILE, TILE);
    dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    pairwise_distance<<<grid, block>>>(d_x, d_y, d_d, M, N, DIM);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(h_d, d_d, (size_t)M * N * sizeof(float), cudaMemcpyDeviceToHost));
    write_file("data/dist.bin", h_d, (size_t)M * N * sizeof(float));

    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    CUDA_CHECK(cudaFree(d_d));
    free(h_x);
    free(h_y);
    free(h_d);
    return 0;
}
