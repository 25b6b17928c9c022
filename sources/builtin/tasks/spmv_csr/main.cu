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
#define ROWS 2000
#endif
#ifndef COLS
#define COLS 1500
#endif
#ifndef MAX_NNZ
#define MAX_NNZ 16
#endif

#define SCAN_THREADS 256
#define SCAN_WARPS (SCAN_THREADS / 32)
#define WARPS_PER_BLOCK 4

// row_ptr[r] = number of nonzeros in rows before r; row_ptr[rows] = total. One block walks the
// counts in chunks of SCAN_THREADS: every warp scans its 32 counts with register shuffles, warp 0
// then scans the per-warp totals, and the chunk's total is added to a running offset that each
// thread keeps in a register (all threads add the same totals, so no shared carry is needed).
__global__ void build_row_ptr(const int* __restrict__ row_nnz, int* __restrict__ row_ptr, int rows) {
    __shared__ int warp_sums[SCAN_WARPS];
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    int running = 0;
    for (int chunk = 0; chunk < rows; chunk += SCAN_THREADS) {
        const int r = chunk + threadIdx.x;
        const int count = r < rows ? row_nnz[r] : 0;
        int inclusive = count;
#pragma unroll
        for (int step = 1; step < 32; step *= 2) {
            const int lower = __shfl_up_sync(0xffffffffu, inclusive, step);
            if (lane >= step) inclusive += lower;
        }
        if (lane == 31) warp_sums[warp] = inclusive;
        __syncthreads();
        if (warp == 0) {
            int total = lane < SCAN_WARPS ? warp_sums[lane] : 0;
#pragma unroll
            for (int step = 1; step < SCAN_WARPS; step *= 2) {
                const int lower = __shfl_up_sync(0xffffffffu, total, step);
                if (lane >= step) total += lower;
            }
            if (lane < SCAN_WARPS) warp_sums[lane] = total;  // now inclusive over warps
        }
        __syncthreads();
        const int warps_before = warp == 0 ? 0 : warp_sums[warp - 1];
        if (r < rows) row_ptr[r] = running + warps_before + inclusive - count;
        running += warp_sums[SCAN_WARPS - 1];
        // warp_sums is overwritten by the next chunk only after every thread has read it.
        __syncthreads();
    }
    if (threadIdx.x == 0) row_ptr[rows] = running;
}

// Packs the first row_nnz[r] entries of each padded row into the CSR arrays.
__global__ void pack_csr(const int* __restrict__ row_nnz, const int* __restrict__ cols_in,
                         const float* __restrict__ vals_in, const int* __restrict__ row_ptr,
                         int* __restrict__ col_idx, float* __restrict__ values, int rows, int width) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    int start = row_ptr[r];
    for (int j = 0; j < row_nnz[r]; ++j) {
        col_idx[start + j] = cols_in[(size_t)r * width + j];
        values[start + j] = vals_in[(size_t)r * width + j];
    }
}

// CSR SpMV, one warp per row ("vector" kernel).
__global__ void spmv_csr_vector(const int* __restrict__ row_ptr, const int* __restrict__ col_idx,
                                const float* __restrict__ values, const float* __restrict__ x,
                                float* __restrict__ y, int rows) {
    int row = blockIdx.x * WARPS_PER_BLOCK + threadIdx.x / 32;
    int lane = threadIdx.x & 31;
    if (row >= rows) return;
    float sum = 0.0f;
    for (int j = row_ptr[row] + lane; j < row_ptr[row + 1]; j += 32) {
        sum += values[j] * x[col_idx[j]];
    }
    for (int off = 16; off > 0; off >>= 1) sum += __shfl_down_sync(0xffffffff, sum, off);
    if (lane == 0) y[row] = sum;
}

int main() {
    const size_t padded = (size_t)ROWS * MAX_NNZ;
    int* h_nnz = (int*)malloc(ROWS * sizeof(int));
    int* h_cols = (int*)malloc(padded * sizeof(int));
    float* h_vals = (float*)malloc(padded * sizeof(float));
    float* h_x = (float*)malloc(COLS * sizeof(float));
    float* h_y = (float*)malloc(ROWS * sizeof(float));
    if (!h_nnz || !h_cols || !h_vals || !h_x || !h_y) {
        fprintf(stderr, "host allocation failed\n");
        return EXIT_FAILURE;
    }
    read_file("data/row_nnz.bin", h_nnz, ROWS * sizeof(int));
    read_file("data/cols.bin", h_cols, padded * sizeof(int));
    read_file("data/vals.bin", h_vals, padded * sizeof(float));
    read_file("data/x.bin", h_x, COLS * sizeof(float));
    for (int r = 0; r < ROWS; ++r) {
        if (h_nnz[r] < 0 || h_nnz[r] > MAX_NNZ) {
            fprintf(stderr, "row_nnz[%d] = %d is outside [0, %d]\n", r, h_nnz[r], MAX_NNZ);
            return EXIT_FAILURE;
        }
        for (int j = 0; j < h_nnz[r]; ++j) {
            int c = h_cols[(size_t)r * MAX_NNZ + j];
            if (c < 0 || c >= COLS) {
                fprintf(stderr, "cols[%d][%d] = %d is outside [0, %d)\n", r, j, c, COLS);
                return EXIT_FAILURE;
            }
        }
    }

    int *d_nnz, *d_cols, *d_row_ptr, *d_col_idx;
    float *d_vals, *d_values, *d_x, *d_y;
    CUDA_CHECK(cudaMalloc(&d_nnz, ROWS * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_cols, padded * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_vals, padded * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_row_ptr, (ROWS + 1) * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_col_idx, padded * sizeof(int)));  // upper bound on nnz
    CUDA_CHECK(cudaMalloc(&d_values, padded * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_x, COLS * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_y, ROWS * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_nnz, h_nnz, ROWS * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_cols, h_cols, padded * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_vals, h_vals, padded * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_x, h_x, COLS * sizeof(float), cudaMemcpyHostToDevice));

    build_row_ptr<<<1, SCAN_THREADS>>>(d_nnz, d_row_ptr, ROWS);
    CUDA_CHECK(cudaGetLastError());
    pack_csr<<<(ROWS + 127) / 128, 128>>>(d_nnz, d_cols, d_vals, d_row_ptr, d_col_idx, d_values,
                                          ROWS, MAX_NNZ);
    CUDA_CHECK(cudaGetLastError());
    spmv_csr_vector<<<(ROWS + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK, WARPS_PER_BLOCK * 32>>>(
        d_row_ptr, d_col_idx, d_values, d_x, d_y, ROWS);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(h_y, d_y, ROWS * sizeof(float), cudaMemcpyDeviceToHost));
    write_file("data/y.bin", h_y, ROWS * sizeof(float));

    CUDA_CHECK(cudaFree(d_nnz));
    CUDA_CHECK(cudaFree(d_cols));
    CUDA_CHECK(cudaFree(d_vals));
    CUDA_CHECK(cudaFree(d_row_ptr));
    CUDA_CHECK(cudaFree(d_col_idx));
    CUDA_CHECK(cudaFree(d_values));
    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    free(h_nnz);
    free(h_cols);
    free(h_vals);
    free(h_x);
    free(h_y);
    return 0;
}
