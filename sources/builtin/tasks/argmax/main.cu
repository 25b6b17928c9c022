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

#ifndef N
#define N 131072
#endif

#define BLOCK_SIZE 256
#define WARP_SIZE 32

// (value, index) pairs: a larger value wins; equal values keep the smaller index so the
// result is the first occurrence of the maximum, whatever order the threads run in.
__device__ __forceinline__ void arg_better(float& v, int& idx, float ov, int oidx) {
    if (oidx >= 0 && (idx < 0 || ov > v || (ov == v && oidx < idx))) {
        v = ov;
        idx = oidx;
    }
}

__device__ void warp_argmax(float& v, int& idx) {
    for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2) {
        float ov = __shfl_down_sync(0xffffffff, v, offset);
        int oidx = __shfl_down_sync(0xffffffff, idx, offset);
        arg_better(v, idx, ov, oidx);
    }
}

// `in_idx` == nullptr means the element index is the position itself (first pass).
__global__ void argmax_kernel(const float* __restrict__ in_val, const int* __restrict__ in_idx,
                              float* __restrict__ out_val, int* __restrict__ out_idx, int n) {
    __shared__ float s_val[BLOCK_SIZE / WARP_SIZE];
    __shared__ int s_idx[BLOCK_SIZE / WARP_SIZE];
    float v = 0.0f;
    int idx = -1;  // -1 marks "no element yet"
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        arg_better(v, idx, in_val[i], in_idx ? in_idx[i] : i);
    }
    warp_argmax(v, idx);
    int lane = threadIdx.x % WARP_SIZE;
    int warp = threadIdx.x / WARP_SIZE;
    if (lane == 0) {
        s_val[warp] = v;
        s_idx[warp] = idx;
    }
    __syncthreads();
    if (warp == 0) {
        v = 0.0f;
        idx = -1;
        if (lane < BLOCK_SIZE / WARP_SIZE) {
            v = s_val[lane];
            idx = s_idx[lane];
        }
        warp_argmax(v, idx);
        if (lane == 0) {
            out_val[blockIdx.x] = v;
            out_idx[blockIdx.x] = idx;
        }
    }
}

int main() {
    const size_t bytes = (size_t)N * sizeof(float);
    float* h_x = (float*)malloc(bytes);
    if (!h_x) {
        fprintf(stderr, "host allocation failed\n");
        return EXIT_FAILURE;
    }
    read_file("data/x.bin", h_x, bytes);

    int blocks = (N + BLOCK_SIZE - 1) / BLOCK_SIZE;
    if (blocks > 256) blocks = 256;

    float *d_x, *d_pval, *d_val;
    int *d_pidx, *d_idx;
    CUDA_CHECK(cudaMalloc(&d_x, bytes));
    CUDA_CHECK(cudaMalloc(&d_pval, blocks * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_pidx, blocks * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_val, sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_idx, sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_x, h_x, bytes, cudaMemcpyHostToDevice));

    argmax_kernel<<<blocks, BLOCK_SIZE>>>(d_x, nullptr, d_pval, d_pidx, N);
    CUDA_CHECK(cudaGetLastError());
    argmax_kernel<<<1, BLOCK_SIZE>>>(d_pval, d_pidx, d_val, d_idx, blocks);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    int h_idx = -1;
    CUDA_CHECK(cudaMemcpy(&h_idx, d_idx, sizeof(int), cudaMemcpyDeviceToHost));
    write_file("data/index.bin", &h_idx, sizeof(int));

    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_pval));
    CUDA_CHECK(cudaFree(d_pidx));
    CUDA_CHECK(cudaFree(d_val));
    CUDA_CHECK(cudaFree(d_idx));
    free(h_x);
    return 0;
}
