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

#ifndef CHANNELS
#define CHANNELS 16
#endif
#ifndef H
#define H 128
#endif
#ifndef W
#define W 128
#endif
#ifndef OH
#define OH 64
#endif
#ifndef OW
#define OW 64
#endif

#define POOL 2
#define STRIDE 2
#define BLOCK_X 16
#define BLOCK_Y 16

static_assert(OH == (H - POOL) / STRIDE + 1, "OH must equal (H - 2) / 2 + 1");
static_assert(OW == (W - POOL) / STRIDE + 1, "OW must equal (W - 2) / 2 + 1");

// 2x2 max pooling with stride 2 over each channel; blockIdx.z is the channel.
__global__ void maxpool2d(const float* __restrict__ in, float* __restrict__ out,
                          int h, int w, int oh, int ow) {
    int ox = blockIdx.x * blockDim.x + threadIdx.x;
    int oy = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.z;
    if (ox >= ow || oy >= oh) return;
    const float* plane = in + (size_t)c * h * w;
    int iy = oy * STRIDE, ix = ox * STRIDE;
    float m = -INFINITY;
    for (int dy = 0; dy < POOL; ++dy)
        for (int dx = 0; dx < POOL; ++dx) m = fmaxf(m, plane[(size_t)(iy + dy) * w + ix + dx]);
    out[((size_t)c * oh + oy) * ow + ox] = m;
}

int main() {
    const size_t in_count = (size_t)CHANNELS * H * W;
    const size_t out_count = (size_t)CHANNELS * OH * OW;
    float* h_in = (float*)malloc(in_count * sizeof(float));
    float* h_out = (float*)malloc(out_count * sizeof(float));
    if (!h_in || !h_out) {
        fprintf(stderr, "host allocation failed\n");
        return EXIT_FAILURE;
    }
    read_file("data/input.bin", h_in, in_count * sizeof(float));

    float *d_in, *d_out;
    CUDA_CHECK(cudaMalloc(&d_in, in_count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, out_count * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_in, h_in, in_count * sizeof(float), cudaMemcpyHostToDevice));

    dim3 block(BLOCK_X, BLOCK_Y);
    dim3 grid((OW + BLOCK_X - 1) / BLOCK_X, (OH + BLOCK_Y - 1) / BLOCK_Y, CHANNELS);
    maxpool2d<<<grid, block>>>(d_in, d_out, H, W, OH, OW);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(h_out, d_out, out_count * sizeof(float), cudaMemcpyDeviceToHost));
    write_file("data/output.bin", h_out, out_count * sizeof(float));

    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    free(h_in);
    free(h_out);
    return 0;
}
