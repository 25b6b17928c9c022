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
#define H 480
#endif
#ifndef W
#define W 640
#endif

#define BLOCK_SIZE 256

// Fixed-point BT.601 luma: weights 77, 150, 29 sum to 256, and +128 rounds to nearest.
__global__ void rgb_to_gray(const uchar3* __restrict__ rgb, unsigned char* __restrict__ gray, int pixels) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < pixels) {
        uchar3 p = rgb[i];
        unsigned int y = 77u * p.x + 150u * p.y + 29u * p.z + 128u;
        gray[i] = (unsigned char)(y >> 8);
    }
}

int main() {
    const int pixels = H * W;
    unsigned char* h_rgb = (unsigned char*)malloc((size_t)pixels * 3);
    unsigned char* h_gray = (unsigned char*)malloc((size_t)pixels);
    if (!h_rgb || !h_gray) {
        fprintf(stderr, "host allocation failed\n");
        return EXIT_FAILURE;
    }
    read_file("data/rgb.bin", h_rgb, (size_t)pixels * 3);

    uchar3* d_rgb;
    unsigned char* d_gray;
    CUDA_CHECK(cudaMalloc(&d_rgb, (size_t)pixels * sizeof(uchar3)));
    CUDA_CHECK(cudaMalloc(&d_gray, (size_t)pixels));
    CUDA_CHECK(cudaMemcpy(d_rgb, h_rgb, (size_t)pixels * 3, cudaMemcpyHostToDevice));

    rgb_to_gray<<<(pixels + BLOCK_SIZE - 1) / BLOCK_SIZE, BLOCK_SIZE>>>(d_rgb, d_gray, pixels);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(h_gray, d_gray, (size_t)pixels, cudaMemcpyDeviceToHost));
    write_file("data/gray.bin", h_gray, (size_t)pixels);

    CUDA_CHECK(cudaFree(d_rgb));
    CUDA_CHECK(cudaFree(d_gray));
    free(h_rgb);
    free(h_gray);
    return 0;
}
