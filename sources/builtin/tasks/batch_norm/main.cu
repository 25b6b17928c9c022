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

#ifndef BATCH
#define BATCH 512
#endif
#ifndef CH
#define CH 64
#endif

#define TILE_C 32   // channels per block (threadIdx.x)
#define TILE_R 8    // rows reduced in parallel (threadIdx.y)
#define BN_EPS 1e-5f

// Per-channel batch statistics. Threads with the same threadIdx.y read consecutive channels,
// so global loads are coalesced; the TILE_R partial results are combined in shared memory.
__global__ void channel_stats(const float* __restrict__ x, float* __restrict__ mean,
                              float* __restrict__ var, int batch, int ch) {
    __shared__ float part[TILE_R][TILE_C];
    int c = blockIdx.x * TILE_C + threadIdx.x;
    float s = 0.0f;
    if (c < ch) {
        for (int r = threadIdx.y; r < batch; r += TILE_R) s += x[(size_t)r * ch + c];
    }
    part[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0) {
        float t = 0.0f;
        for (int k = 0; k < TILE_R; ++k) t += part[k][threadIdx.x];
        part[0][threadIdx.x] = t / batch;
    }
    __syncthreads();
    float m = part[0][threadIdx.x];
    __syncthreads();

    float sq = 0.0f;
    if (c < ch) {
        for (int r = threadIdx.y; r < batch; r += TILE_R) {
            float d = x[(size_t)r * ch + c] - m;
            sq += d * d;
        }
    }
    part[threadIdx.y][threadIdx.x] = sq;
    __syncthreads();
    if (threadIdx.y == 0 && c < ch) {
        float t = 0.0f;
        for (int k = 0; k < TILE_R; ++k) t += part[k][threadIdx.x];
        mean[c] = m;
        var[c] = t / batch;
    }
}

__global__ void normalize(const float* __restrict__ x, const float* __restrict__ mean,
                          const float* __restrict__ var, const float* __restrict__ gamma,
                          const float* __restrict__ beta, float* __restrict__ y, int batch, int ch) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < batch && c < ch) {
        size_t i = (size_t)r * ch + c;
        y[i] = (x[i] - mean[c]) * rsqrtf(var[c] + BN_EPS) * gamma[c] + beta[c];
    }
}

int main() {
    const size_t count = (size_t)BATCH * CH;
    float* h_x = (float*)malloc(count * sizeof(float));
    float* h_y = (float*)malloc(count * sizeof(float));
    float* h_gamma = (float*)malloc(CH * sizeof(float));
    float* h_beta = (float*)malloc(CH * sizeof(float));
    float* h_mean = (float*)malloc(CH * sizeof(float));
    float* h_var = (float*)malloc(CH * sizeof(float));
    if (!h_x || !h_y || !h_gamma || !h_beta || !h_mean || !h_var) {
        fprintf(stderr, "host allocation failed\n");
        return EXIT_FAILURE;
    }
    read_file("data/x.bin", h_x, count * sizeof(float));
    read_file("data/gamma.bin", h_gamma, CH * sizeof(float));
    read_file("data/beta.bin", h_beta, CH * sizeof(float));

    float *d_x, *d_y, *d_gamma, *d_beta, *d_mean, *d_var;
    CUDA_CHECK(cudaMalloc(&d_x, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_y, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_gamma, CH * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_beta, CH * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_mean, CH * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_var, CH * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_x, h_x, count * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_gamma, h_gamma, CH * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_beta, h_beta, CH * sizeof(float), cudaMemcpyHostToDevice));

    dim3 stat_block(TILE_C, TILE_R);
    channel_stats<<<(CH + TILE_C - 1) / TILE_C, stat_block>>>(d_x, d_mean, d_var, BATCH, CH);
    CUDA_CHECK(cudaGetLastError());
    dim3 norm_block(32, 8);
    dim3 norm_grid((CH + 31) / 32, (BATCH + 7) / 8);
    normalize<<<norm_grid, norm_block>>>(d_x, d_mean, d_var, d_gamma, d_beta, d_y, BATCH, CH);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(h_y, d_y, count * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_mean, d_mean, CH * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_var, d_var, CH * sizeof(float), cudaMemcpyDeviceToHost));
    write_file("data/y.bin", h_y, count * sizeof(float));
    write_file("data/mean.bin", h_mean, CH * sizeof(float));
    write_file("data/var.bin", h_var, CH * sizeof(float));

    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    CUDA_CHECK(cudaFree(d_gamma));
    CUDA_CHECK(cudaFree(d_beta));
    CUDA_CHECK(cudaFree(d_mean));
    CUDA_CHECK(cudaFree(d_var));
    free(h_x);
    free(h_y);
    free(h_gamma);
    free(h_beta);
    free(h_mean);
    free(h_var);
    return 0;
}
