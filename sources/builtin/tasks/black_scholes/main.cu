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
#define N 100000
#endif

#define RISK_FREE 0.02f
#define VOLATILITY 0.30f
#define BLOCK_SIZE 128

// Standard normal CDF through the complementary error function.
__device__ __forceinline__ float norm_cdf(float x) {
    return 0.5f * erfcf(-x * 0.70710678118654752f);
}

__global__ void black_scholes(const float* __restrict__ spot, const float* __restrict__ strike,
                              const float* __restrict__ years, float* __restrict__ call,
                              float* __restrict__ put, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float S = spot[i], K = strike[i], T = years[i];
    float sqrt_t = sqrtf(T);
    float d1 = (logf(S / K) + (RISK_FREE + 0.5f * VOLATILITY * VOLATILITY) * T) / (VOLATILITY * sqrt_t);
    float d2 = d1 - VOLATILITY * sqrt_t;
    float discount = K * expf(-RISK_FREE * T);
    call[i] = S * norm_cdf(d1) - discount * norm_cdf(d2);
    put[i] = discount * norm_cdf(-d2) - S * norm_cdf(-d1);
}

int main() {
    const size_t bytes = (size_t)N * sizeof(float);
    float *h_s = (float*)malloc(bytes), *h_k = (float*)malloc(bytes), *h_t = (float*)malloc(bytes);
    float *h_call = (float*)malloc(bytes), *h_put = (float*)malloc(bytes);
    if (!h_s || !h_k || !h_t || !h_call || !h_put) {
        fprintf(stderr, "host allocation failed\n");
        return EXIT_FAILURE;
    }
    read_file("data/spot.bin", h_s, bytes);
    read_file("data/strike.bin", h_k, bytes);
    read_file("data/years.bin", h_t, bytes);

    float *d_s, *d_k, *d_t, *d_call, *d_put;
    CUDA_CHECK(cudaMalloc(&d_s, bytes));
    CUDA_CHECK(cudaMalloc(&d_k, bytes));
    CUDA_CHECK(cudaMalloc(&d_t, bytes));
    CUDA_CHECK(cudaMalloc(&d_call, bytes));
    CUDA_CHECK(cudaMalloc(&d_put, bytes));
    CUDA_CHECK(cudaMemcpy(d_s, h_s, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_k, h_k, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_t, h_t, bytes, cudaMemcpyHostToDevice));

    black_scholes<<<(N + BLOCK_SIZE - 1) / BLOCK_SIZE, BLOCK_SIZE>>>(d_s, d_k, d_t, d_call, d_put, N);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(h_call, d_call, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_put, d_put, bytes, cudaMemcpyDeviceToHost));
    write_file("data/call.bin", h_call, bytes);
    write_file("data/put.bin", h_put, bytes);

    CUDA_CHECK(cudaFree(d_s));
    CUDA_CHECK(cudaFree(d_k));
    CUDA_CHECK(cudaFree(d_t));
    CUDA_CHECK(cudaFree(d_call));
    CUDA_CHECK(cudaFree(d_put));
    free(h_s);
    free(h_k);
    free(h_t);
    free(h_call);
    free(h_put);
    return 0;
}
