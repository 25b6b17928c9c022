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
#ifndef KS
#define KS 5
#endif

#define TILE 16
#define HALO (KS / 2)
#define SMEM_DIM (TILE + 2 * HALO)

static_assert(KS % 2 == 1, "the filter size KS must be odd");

// 'Same' 2D convolution of a single-channel image. Each block cooperatively loads a
// (TILE + 2 * HALO)^2 input patch (zero outside the image) and the filter into shared memory.
__global__ void conv2d(const float* __restrict__ img, const float* __restrict__ filt,
                       float* __restrict__ out, int h, int w) {
    __shared__ float patch[SMEM_DIM][SMEM_DIM];
    __shared__ float f[KS * KS];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int tid = ty * TILE + tx;
    const int x0 = blockIdx.x * TILE - HALO;
    const int y0 = blockIdx.y * TILE - HALO;

    for (int i = tid; i < KS * KS; i += TILE * TILE) f[i] = filt[i];
    for (int i = tid; i < SMEM_DIM * SMEM_DIM; i += TILE * TILE) {
        int py = i / SMEM_DIM, px = i % SMEM_DIM;
        int gy = y0 + py, gx = x0 + px;
        patch[py][px] = (gy >= 0 && gy < h && gx >= 0 && gx < w) ? img[(size_t)gy * w + gx] : 0.0f;
    }
    __syncthreads();

    const int ox = blockIdx.x * TILE + tx;
    const int oy = blockIdx.y * TILE + ty;
    if (ox < w && oy < h) {
        float acc = 0.0f;
        for (int i = 0; i < KS; ++i)
            for (int j = 0; j < KS; ++j) acc += f[i * KS + j] * patch[ty + i][tx + j];
        out[(size_t)oy * w + ox] = acc;
    }
}

int main() {
    const size_t pixels = (size_t)H * W;
    float* h_img = (float*)malloc(pixels * sizeof(float));
    float* h_out = (float*)malloc(pixels * sizeof(float));
    float h_filt[KS * KS];
    if (!h_img || !h_out) {
        fprintf(stderr, "host allocation failed\n");
        return EXIT_FAILURE;
    }
    read_file("data/image.bin", h_img, pixels * sizeof(float));
    read_file("data/kernel.bin", h_filt, sizeof(h_filt));

    float *d_img, *d_filt, *d_out;
    CUDA_CHECK(cudaMalloc(&d_img, pixels * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_filt, sizeof(h_filt)));
    CUDA_CHECK(cudaMalloc(&d_out, pixels * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_img, h_img, pixels * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_filt, h_filt, sizeof(h_filt), cudaMemcpyHostToDevice));

    dim3 block(TILE, TILE);
    dim3 grid((W + TILE - 1) / TILE, (H + TILE - 1) / TILE);
    conv2d<<<grid, block>>>(d_img, d_filt, d_out, H, W);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(h_out, d_out, pixels * sizeof(float), cudaMemcpyDeviceToHost));
    write_file("data/output.bin", h_out, pixels * sizeof(float));

    CUDA_CHECK(cudaFree(d_img));
    CUDA_CHECK(cudaFree(d_filt));
    CUDA_CHECK(cudaFree(d_out));
    free(h_img);
    free(h_out);
    return 0;
}
