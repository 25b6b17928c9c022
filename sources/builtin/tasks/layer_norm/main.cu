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
#ifndef DIM
#define DIM 768
#endif

#define BLOCK_SIZE 256
#define LN_EPS 1e-5f

__device__ float block_sum(float v, float* shared) {
    shared[threadIdx.x] = v;
    __syncthreads();
    for (int s = BLOCK_SIZE / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) shared[threadIdx.x] += shared[threadIdx.x + s];
        __syncthreads();
    }
    float total = shared[0];
    __syncthreads();
    return total;
}

// One block per row. Two passes (mean, then variance of the centred values) are more
// accurate than E[x^2] - E[x]^2 in float32.
__global__ void layer_norm(const float* __restrict__ x, const float* __restrict__ gamma,
                           const float* __restrict__ beta, float* __restrict__ y, int dim) {
    __shared__ float shared[BLOCK_SIZE];
    const float* in = x + (size_t)blockIdx.x * dim;
    float* out = y + (size_t)blockIdx.x * dim;

    float s = 0.0f;
    for (int i = threadIdx.x; i < dim; i += BLOCK_SIZE) s += in[i];
    float mean = block_sum(s, shared) / dim;

    float sq = 0.0f;
    for (int i = threadIdx.x; i < dim; i += BLOCK_SIZE) {
        float d = in[i] - mean;
        sq += d * d;
    }
    float var = block_sum(sq, shared) / dim;
    float inv_std = rsqrtf(var + LN_EPS);

    for (int i = threadIdx.x; i < dim; i += BLOCK_SIZE) {
        out[i] = (in[i] - mean) * inv_std * gamma[i] + beta[i];
    }
}

int main() {
    const size_t count = (size_t)ROWS * DIM;
    float* h_x = (float*)malloc(count * sizeof(float));
    float* h_gamma = (float*)malloc(DIM * sizeof(float));
    float* h_beta = (float*)malloc(DIM * sizeof(float));
    float* h_y = (float*)malloc(count * sizeof(float));
    if (!h_x || !h_gamma || !h_beta || !h_y) {
        fprintf(stderr, "host allocation failed\n");
        return EXIT_FAILURE;
    }
    read_file("data/x.bin", h_x, count * sizeof(float));
    read_file("data/gamma.bin", h_gamma, DIM * sizeof(float));
    read_file("data/beta.bin", h_beta, DIM * sizeof(float));

    float *d_x, *d_gamma, *d_beta, *d_y;
    CUDA_CHECK(cudaMalloc(&d_x, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_gamma, DIM * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_beta, DIM * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_y, count * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_x, h_x, count * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_gamma, h_gamma, DIM * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_beta, h_beta, DIM * sizeof(float), cudaMemcpyHostToDevice));

    layer_norm<<<ROWS, BLOCK_SIZE>>>(d_x, d_gamma, d_beta, d_y, DIM);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(h_y, d_y, count * sizeof(float), cudaMemcpyDeviceToHost));
    write_file("data/y.bin", h_y, count * sizeof(float));

    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_gamma));
    CUDA_CHECK(cudaFree(d_beta));
    CUDA_CHECK(cudaFree(d_y));
    free(h_x);
    free(h_gamma);
    free(h_beta);
    free(h_y);
    return 0;
}
