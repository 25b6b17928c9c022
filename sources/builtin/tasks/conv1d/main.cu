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
#define KSIZE (2 * RADIUS + 1)
#define BLOCK 256

__constant__ float c_weights[KSIZE];

// Each block loads its BLOCK inputs plus RADIUS halo elements on each side into dynamic
// shared memory once; out-of-range neighbours are zero ("same" zero padding).
__global__ void conv1d(const float* __restrict__ x, float* __restrict__ y, int n) {
    extern __shared__ float tile[];  // BLOCK + 2 * RADIUS floats
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    int local = threadIdx.x + RADIUS;

    tile[local] = gid < n ? x[gid] : 0.0f;
    if (threadIdx.x < RADIUS) {
        int left = gid - RADIUS;
        int right = gid + blockDim.x;
        tile[threadIdx.x] = left >= 0 && left < n ? x[left] : 0.0f;
        tile[local + blockDim.x] = right < n ? x[right] : 0.0f;
    }
    __syncthreads();

    if (gid < n) {
        float acc = 0.0f;
#pragma unroll
        for (int k = 0; k < KSIZE; ++k) acc += c_weights[k] * tile[threadIdx.x + k];
        y[gid] = acc;
    }
}

int main() {
    float h_w[KSIZE];
    read_file("data/weights.bin", h_w, sizeof(h_w));
    const size_t bytes = (size_t)N * sizeof(float);
    float* h_x = (float*)malloc(bytes);
    float* h_y = (float*)malloc(bytes);
    if (!h_x || !h_y) {
        fprintf(stderr, "host allocation failed\n");
        return EXIT_FAILURE;
    }
    read_file("data/x.bin", h_x, bytes);

    CUDA_CHECK(cudaMemcpyToSymbol(c_weights, h_w, sizeof(h_w)));
    float *d_x, *d_y;
    CUDA_CHECK(cudaMalloc(&d_x, bytes));
    CUDA_CHECK(cudaMalloc(&d_y, bytes));
    CUDA_CHECK(cudaMemcpy(d_x, h_x, bytes, cudaMemcpyHostToDevice));

    size_t shmem = (BLOCK + 2 * RADIUS) * sizeof(float);
    conv1d<<<(N + BLOCK - 1) / BLOCK, BLOCK, shmem>>>(d_x, d_y, N);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(h_y, d_y, bytes, cudaMemcpyDeviceToHost));
    write_file("data/y.bin", h_y, bytes);

    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    free(h_x);
    free(h_y);
    return 0;
}
