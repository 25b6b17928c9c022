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
#define ROWS 256
#endif
#ifndef COLS
#define COLS 1024
#endif

#define BLOCK_SIZE 128

// One block per row: threads stride across the row, then reduce in shared memory.
__global__ void row_sum_kernel(const float* __restrict__ m, float* __restrict__ sums,
                               int rows, int cols) {
    __shared__ float buf[BLOCK_SIZE];
    int row = blockIdx.x;
    if (row >= rows) return;  // uniform per block, so no thread misses a barrier
    const float* r = m + (size_t)row * cols;
    float acc = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        acc += r[c];
    }
    buf[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) sums[row] = buf[0];
}

int main() {
    const size_t count = (size_t)ROWS * COLS;
    float* h_m = (float*)malloc(count * sizeof(float));
    float* h_sums = (float*)malloc(ROWS * sizeof(float));
    if (!h_m || !h_sums) {
        fprintf(stderr, "host allocation failed\n");
        return EXIT_FAILURE;
    }
    read_file("data/matrix.bin", h_m, count * sizeof(float));

    float *d_m, *d_sums;
    CUDA_CHECK(cudaMalloc(&d_m, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_sums, ROWS * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_m, h_m, count * sizeof(float), cudaMemcpyHostToDevice));

    row_sum_kernel<<<ROWS, BLOCK_SIZE>>>(d_m, d_sums, ROWS, COLS);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(h_sums, d_sums, ROWS * sizeof(float), cudaMemcpyDeviceToHost));
    write_file("data/sums.bin", h_sums, ROWS * sizeof(float));

    CUDA_CHECK(cudaFree(d_m));
    CUDA_CHECK(cudaFree(d_sums));
    free(h_m);
    free(h_sums);
    return 0;
}
