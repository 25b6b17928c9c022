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

#ifndef H
#define H 256
#endif
#ifndef W
#define W 256
#endif

#define STEPS 8
#define BX 32
#define BY 8

// One Jacobi sweep of the 5-point Laplace stencil: interior points become the mean of their
// four neighbours, boundary points keep their value.
__global__ void jacobi_step(const float* __restrict__ src, float* __restrict__ dst, int h, int w) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    size_t i = (size_t)y * w + x;
    if (x == 0 || y == 0 || x == w - 1 || y == h - 1) {
        dst[i] = src[i];
    } else {
        dst[i] = 0.25f * (src[i - 1] + src[i + 1] + src[i - w] + src[i + w]);
    }
}

int main() {
    const size_t count = (size_t)H * W;
    float* h_grid = (float*)malloc(count * sizeof(float));
    if (!h_grid) {
        fprintf(stderr, "host allocation failed\n");
        return EXIT_FAILURE;
    }
    read_file("data/grid.bin", h_grid, count * sizeof(float));

    float *d_a, *d_b;
    CUDA_CHECK(cudaMalloc(&d_a, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_b, count * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_a, h_grid, count * sizeof(float), cudaMemcpyHostToDevice));

    dim3 block(BX, BY);
    dim3 grid((W + BX - 1) / BX, (H + BY - 1) / BY);
    for (int s = 0; s < STEPS; ++s) {
        jacobi_step<<<grid, block>>>(d_a, d_b, H, W);
        CUDA_CHECK(cudaGetLastError());
        float* t = d_a;  // ping-pong: the result of this sweep feeds the next
        d_a = d_b;
        d_b = t;
    }
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(h_grid, d_a, count * sizeof(float), cudaMemcpyDeviceToHost));
    write_file("data/result.bin", h_grid, count * sizeof(float));

    CUDA_CHECK(cudaFree(d_a));
    CUDA_CHECK(cudaFree(d_b));
    free(h_grid);
    return 0;
}
