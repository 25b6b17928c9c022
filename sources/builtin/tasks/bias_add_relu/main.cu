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
#define ROWS 512
#endif
#ifndef COLS
#define COLS 256
#endif

#define TILE 16

// One thread per matrix element on a 2D grid: y = relu(x + bias[col]).
__global__ void bias_add_relu(const float* __restrict__ x, const float* __restrict__ bias,
                              float* __restrict__ y, int rows, int cols) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) {
        size_t idx = (size_t)row * cols + col;
        y[idx] = fmaxf(x[idx] + bias[col], 0.0f);
    }
}

int main() {
    const size_t count = (size_t)ROWS * COLS;
    float* h_x = (float*)malloc(count * sizeof(float));
    float* h_b = (float*)malloc(COLS * sizeof(float));
    float* h_y = (float*)malloc(count * sizeof(float));
    if (!h_x || !h_b || !h_y) {
        fprintf(stderr, "host allocation failed\n");
        return EXIT_FAILURE;
    }
    read_file("data/x.bin", h_x, count * sizeof(float));
    read_file("data/bias.bin", h_b, COLS * sizeof(float));

    float *d_x, *d_b, *d_y;
    CUDA_CHECK(cudaMalloc(&d_x, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_b, COLS * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_y, count * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_x, h_x, count * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_b, h_b, COLS * sizeof(float), cudaMemcpyHostToDevice));

    dim3 block(TILE, TILE);
    dim3 grid((COLS + TILE - 1) / TILE, (ROWS + TILE - 1) / TILE);
    bias_add_relu<<<grid, block>>>(d_x, d_b, d_y, ROWS, COLS);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(h_y, d_y, count * sizeof(float), cudaMemcpyDeviceToHost));
    write_file("data/y.bin", h_y, count * sizeof(float));

    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_b));
    CUDA_CHECK(cudaFree(d_y));
    free(h_x);
    free(h_b);
    free(h_y);
    return 0;
}
