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
#ifndef DIM
#define DIM 256
#endif

#define WARPS_PER_BLOCK 8
#define COS_EPS 1e-8f

__device__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffff, v, offset);
    return v;
}

// One warp per row pair; lane 0 writes dot / max(|a| * |b|, eps).
__global__ void cosine_similarity(const float* __restrict__ a, const float* __restrict__ b,
                                  float* __restrict__ sim, int rows, int dim) {
    int row = blockIdx.x * WARPS_PER_BLOCK + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const float* ra = a + (size_t)row * dim;
    const float* rb = b + (size_t)row * dim;
    float dot = 0.0f, na = 0.0f, nb = 0.0f;
    for (int i = lane; i < dim; i += 32) {
        float x = ra[i], y = rb[i];
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    dot = warp_sum(dot);
    na = warp_sum(na);
    nb = warp_sum(nb);
    if (lane == 0) sim[row] = dot / fmaxf(sqrtf(na) * sqrtf(nb), COS_EPS);
}

int main() {
    const size_t count = (size_t)ROWS * DIM;
    float* h_a = (float*)malloc(count * sizeof(float));
    float* h_b = (float*)malloc(count * sizeof(float));
    float* h_sim = (float*)malloc(ROWS * sizeof(float));
    if (!h_a || !h_b || !h_sim) {
        fprintf(stderr, "host allocation failed\n");
        return EXIT_FAILURE;
    }
    read_file("data/a.bin", h_a, count * sizeof(float));
    read_file("data/b.bin", h_b, count * sizeof(float));

    float *d_a, *d_b, *d_sim;
    CUDA_CHECK(cudaMalloc(&d_a, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_b, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_sim, ROWS * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_a, h_a, count * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_b, h_b, count * sizeof(float), cudaMemcpyHostToDevice));

    int blocks = (ROWS + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK;
    cosine_similarity<<<blocks, WARPS_PER_BLOCK * 32>>>(d_a, d_b, d_sim, ROWS, DIM);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(h_sim, d_sim, ROWS * sizeof(float), cudaMemcpyDeviceToHost));
    write_file("data/sim.bin", h_sim, ROWS * sizeof(float));

    CUDA_CHECK(cudaFree(d_a));
    CUDA_CHECK(cudaFree(d_b));
    CUDA_CHECK(cudaFree(d_sim));
    free(h_a);
    free(h_b);
    free(h_sim);
    return 0;
}
