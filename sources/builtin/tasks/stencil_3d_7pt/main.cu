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

#ifndef NZ
#define NZ 64
#endif
#ifndef NY
#define NY 64
#endif
#ifndef NX
#define NX 64
#endif

#define BLOCK_X 32
#define BLOCK_Y 4
#define CENTER_W 0.4f
#define NEIGHBOR_W 0.1f

// 7-point stencil marching along z: each thread owns one (x, y) column and keeps the values
// below, at and above the current plane in registers as it walks up the column.
__global__ void stencil_3d_7pt(const float* __restrict__ in, float* __restrict__ out,
                               int nz, int ny, int nx) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= nx || y >= ny) return;
    const size_t plane = (size_t)ny * nx;
    const size_t col = (size_t)y * nx + x;
    bool edge_xy = x == 0 || y == 0 || x == nx - 1 || y == ny - 1;

    float below = 0.0f, cur = in[col], above = 0.0f;
    for (int z = 0; z < nz; ++z) {
        size_t i = z * plane + col;
        above = z + 1 < nz ? in[i + plane] : 0.0f;
        if (edge_xy || z == 0 || z == nz - 1) {
            out[i] = cur;  // boundary cells are copied
        } else {
            float sum = below + above + in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx];
            out[i] = CENTER_W * cur + NEIGHBOR_W * sum;
        }
        below = cur;
        cur = above;
    }
}

int main() {
    const size_t count = (size_t)NZ * NY * NX;
    float* h_in = (float*)malloc(count * sizeof(float));
    float* h_out = (float*)malloc(count * sizeof(float));
    if (!h_in || !h_out) {
        fprintf(stderr, "host allocation failed\n");
        return EXIT_FAILURE;
    }
    read_file("data/volume.bin", h_in, count * sizeof(float));

    float *d_in, *d_out;
    CUDA_CHECK(cudaMalloc(&d_in, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, count * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_in, h_in, count * sizeof(float), cudaMemcpyHostToDevice));

    dim3 block(BLOCK_X, BLOCK_Y);
    dim3 grid((NX + BLOCK_X - 1) / BLOCK_X, (NY + BLOCK_Y - 1) / BLOCK_Y);
    stencil_3d_7pt<<<grid, block>>>(d_in, d_out, NZ, NY, NX);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(h_out, d_out, count * sizeof(float), cudaMemcpyDeviceToHost));
    write_file("data/smoothed.bin", h_out, count * sizeof(float));

    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    free(h_in);
    free(h_out);
    return 0;
}
