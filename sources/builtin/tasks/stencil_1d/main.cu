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

#define RADIUS 3
#define BLOCK_SIZE 256

// Sixth-order central-difference second derivative (unit grid spacing).
#define C0 (-49.0f / 18.0f)
#define C1 (3.0f / 2.0f)
#define C2 (-3.0f / 20.0f)
#define C3 (1.0f / 90.0f)

__global__ void stencil_1d(const float* __restrict__ in, float* __restrict__ out, int n) {
    __shared__ float s[BLOCK_SIZE + 2 * RADIUS];
    int g = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    int l = threadIdx.x + RADIUS;

    s[l] = g < n ? in[g] : 0.0f;
    if (threadIdx.x < RADIUS) {
        int left = g - RADIUS;
        int right = g + BLOCK_SIZE;
        s[l - RADIUS] = left >= 0 && left < n ? in[left] : 0.0f;
        s[l + BLOCK_SIZE] = right < n ? in[right] : 0.0f;
    }
    __syncthreads();

    if (g >= n) return;
    if (g < RADIUS || g >= n - RADIUS) {
        out[g] = in[g];  // boundary points are copied unchanged
        return;
    }
    out[g] = C0 * s[l] + C1 * (s[l - 1] + s[l + 1]) + C2 * (s[l - 2] + s[l + 2]) +
             C3 * (s[l - 3] + s[l + 3]);
}

int main() {
    const size_t bytes = (size_t)N * sizeof(float);
    float* h_in = (float*)malloc(bytes);
    float* h_out = (float*)malloc(bytes);
    if (!h_in || !h_out) {
        fprintf(stderr, "host allocation failed\n");
        return EXIT_FAILURE;
    }
    read_file("data/u.bin", h_in, bytes);

    float *d_in, *d_out;
    CUDA_CHECK(cudaMalloc(&d_in, bytes));
    CUDA_CHECK(cudaMalloc(&d_out, bytes));
    CUDA_CHECK(cudaMemcpy(d_in, h_in, bytes, cudaMemcpyHostToDevice));

    stencil_1d<<<(N + BLOCK_SIZE - 1) / BLOCK_SIZE, BLOCK_SIZE>>>(d_in, d_out, N);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(h_out, d_out, bytes, cudaMemcpyDeviceToHost));
    write_file("data/d2u.bin", h_out, bytes);

    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    free(h_in);
    free(h_out);
    return 0;
}
