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

#define BLOCK_W 32
#define BLOCK_H 8

__device__ __forceinline__ int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

// 3x3 box blur of an 8-bit grayscale image with replicated borders. The sum is kept in an
// integer and rounded to nearest on division, so the result is exact.
__global__ void box_blur_3x3(const unsigned char* __restrict__ in, unsigned char* __restrict__ out,
                             int h, int w) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    int sum = 0;
    for (int dy = -1; dy <= 1; ++dy) {
        int yy = clampi(y + dy, 0, h - 1);
        for (int dx = -1; dx <= 1; ++dx) {
            int xx = clampi(x + dx, 0, w - 1);
            sum += in[yy * w + xx];
        }
    }
    out[y * w + x] = (unsigned char)((sum + 4) / 9);
}

int main() {
    const size_t pixels = (size_t)H * W;
    unsigned char* h_in = (unsigned char*)malloc(pixels);
    unsigned char* h_out = (unsigned char*)malloc(pixels);
    if (!h_in || !h_out) {
        fprintf(stderr, "host allocation failed\n");
        return EXIT_FAILURE;
    }
    read_file("data/image.bin", h_in, pixels);

    unsigned char *d_in, *d_out;
    CUDA_CHECK(cudaMalloc(&d_in, pixels));
    CUDA_CHECK(cudaMalloc(&d_out, pixels));
    CUDA_CHECK(cudaMemcpy(d_in, h_in, pixels, cudaMemcpyHostToDevice));

    dim3 block(BLOCK_W, BLOCK_H);
    dim3 grid((W + BLOCK_W - 1) / BLOCK_W, (H + BLOCK_H - 1) / BLOCK_H);
    box_blur_3x3<<<grid, block>>>(d_in, d_out, H, W);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(h_out, d_out, pixels, cudaMemcpyDeviceToHost));
    write_file("data/blurred.bin", h_out, pixels);

    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    free(h_in);
    free(h_out);
    return 0;
}
