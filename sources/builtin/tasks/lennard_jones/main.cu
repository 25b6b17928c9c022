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
#define N 500
#endif

#define BLOCK 128
#define RCUT 2.5f

// Lennard-Jones pair energy (epsilon = sigma = 1) shifted so that it is zero at the cutoff;
// the shift removes the jump at r = RCUT.
__device__ __forceinline__ float lj_shifted(float r2) {
    const float inv_rc2 = 1.0f / (RCUT * RCUT);
    const float inv_rc6 = inv_rc2 * inv_rc2 * inv_rc2;
    const float shift = 4.0f * (inv_rc6 * inv_rc6 - inv_rc6);
    float inv_r2 = 1.0f / r2;
    float inv_r6 = inv_r2 * inv_r2 * inv_r2;
    return 4.0f * (inv_r6 * inv_r6 - inv_r6) - shift;
}

// One thread per particle; the particle positions are staged through dynamic shared memory in
// tiles of blockDim.x. Each particle gets half of each pair energy so the total is not
// double counted.
__global__ void lj_energy(const float* __restrict__ pos, float* __restrict__ energy, int n) {
    extern __shared__ float tile[];  // 3 * blockDim.x floats: x, y, z
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float xi = 0.0f, yi = 0.0f, zi = 0.0f;
    if (i < n) {
        xi = pos[3 * i];
        yi = pos[3 * i + 1];
        zi = pos[3 * i + 2];
    }
    float e = 0.0f;
    for (int base = 0; base < n; base += blockDim.x) {
        int j = base + threadIdx.x;
        if (j < n) {
            tile[3 * threadIdx.x] = pos[3 * j];
            tile[3 * threadIdx.x + 1] = pos[3 * j + 1];
            tile[3 * threadIdx.x + 2] = pos[3 * j + 2];
        }
        __syncthreads();
        int count = min((int)blockDim.x, n - base);
        for (int k = 0; k < count; ++k) {
            if (base + k == i) continue;
            float dx = tile[3 * k] - xi, dy = tile[3 * k + 1] - yi, dz = tile[3 * k + 2] - zi;
            float r2 = dx * dx + dy * dy + dz * dz;
            if (r2 < RCUT * RCUT) e += 0.5f * lj_shifted(r2);
        }
        __syncthreads();
    }
    if (i < n) energy[i] = e;
}

int main() {
    float* h_pos = (float*)malloc((size_t)N * 3 * sizeof(float));
    float* h_energy = (float*)malloc((size_t)N * sizeof(float));
    if (!h_pos || !h_energy) {
        fprintf(stderr, "host allocation failed\n");
        return EXIT_FAILURE;
    }
    read_file("data/pos.bin", h_pos, (size_t)N * 3 * sizeof(float));

    float *d_pos, *d_energy;
    CUDA_CHECK(cudaMalloc(&d_pos, (size_t)N * 3 * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_energy, (size_t)N * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_pos, h_pos, (size_t)N * 3 * sizeof(float), cudaMemcpyHostToDevice));

    lj_energy<<<(N + BLOCK - 1) / BLOCK, BLOCK, 3 * BLOCK * sizeof(float)>>>(d_pos, d_energy, N);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(h_energy, d_energy, (size_t)N * sizeof(float), cudaMemcpyDeviceToHost));
    write_file("data/energy.bin", h_energy, (size_t)N * sizeof(float));

    CUDA_CHECK(cudaFree(d_pos));
    CUDA_CHECK(cudaFree(d_energy));
    free(h_pos);
    free(h_energy);
    return 0;
}
