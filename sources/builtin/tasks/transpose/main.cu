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
#define ROWS 1024
#endif
#ifndef COLS
#define COLS 768
#endif

#define TILE_DIM 32
#define BLOCK_ROWS 8

// Reads a TILE_DIM x TILE_DIM tile with coalesced loads, writes it transposed with coalesced
// stores. The extra column of padding puts the elements of a tile column in different shared
// memory banks, so the transposed reads are conflict-free.
__global__ void transpose_tiled(const float* __restrict__ in, float* __restrict__ out,
                                int rows, int cols) {
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];
    int x = blockIdx.x * TILE_DIM + threadIdx.x;  // input column
    int y = blockIdx.y * TILE_DIM + threadIdx.y;  // input row
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        if (x < cols && y + j < rows) {
            tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
        }
    }
    __syncthreads();
    x = blockIdx.y * TILE_DIM + threadIdx.x;  // output column = input row
    y = blockIdx.x * TILE_DIM + threadIdx.y;  // output row = input column
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        if (x < rows && y + j < cols) {
            out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}

int main() {
    const size_t count = (size_t)ROWS * COLS;
    float* h_in = (float*)malloc(count * sizeof(float));
    float* h_out = (float*)malloc(count * sizeof(float));
    if (!h_in || !h_out) {
        fprintf(stderr, "host allocation failed\n");
        return EXIT_FAILURE;
    }
    read_file("data/input.bin", h_in, count * sizeof(float));

    float *d_in, *d_out;
    CUDA_CHECK(cudaMalloc(&d_in, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, count * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_in, h_in, count * sizeof(float), cudaMemcpyHostToDevice));

    dim3 block(TILE_DIM, BLOCK_ROWS);
    dim3 grid((COLS + TILE_DIM - 1) / TILE_DIM, (ROWS + TILE_DIM - 1) / TILE_DIM);
    transpose_tiled<<<grid, block>>>(d_in, d_out, ROWS, COLS);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(h_out, d_out, count * sizeof(float), cudaMemcpyDeviceToHost));
    write_file("data/output.bin", h_out, count * sizeof(float));

    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    free(h_in);
    free(h_out);
    return 0;
}
