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
#define N 512
#endif

#define TILE 128
#define SOFTENING2 0.01f

// Acceleration of body i due to body j (G = 1), Plummer-softened so i == j adds nothing.
__device__ float3 body_interaction(float4 bi, float4 bj, float3 acc) {
    float3 r = make_float3(bj.x - bi.x, bj.y - bi.y, bj.z - bi.z);
    float dist2 = r.x * r.x + r.y * r.y + r.z * r.z + SOFTENING2;
    float inv = rsqrtf(dist2);
    float s = bj.w * inv * inv * inv;
    acc.x += r.x * s;
    acc.y += r.y * s;
    acc.z += r.z * s;
    return acc;
}

// All-pairs forces: each block walks over the bodies in tiles of TILE staged in shared memory.
__global__ void nbody_accel(const float4* __restrict__ bodies, float3* __restrict__ accel, int n) {
    __shared__ float4 tile[TILE];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 me = i < n ? bodies[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float3 acc = make_float3(0.0f, 0.0f, 0.0f);
    for (int base = 0; base < n; base += TILE) {
        int j = base + threadIdx.x;
        tile[threadIdx.x] = j < n ? bodies[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);  // mass 0 pads
        __syncthreads();
        int count = min(TILE, n - base);
        for (int k = 0; k < count; ++k) acc = body_interaction(me, tile[k], acc);
        __syncthreads();
    }
    if (i < n) accel[i] = acc;
}

int main() {
    float* h_pos = (float*)malloc((size_t)N * 3 * sizeof(float));
    float* h_mass = (float*)malloc((size_t)N * sizeof(float));
    float4* h_bodies = (float4*)malloc((size_t)N * sizeof(float4));
    float* h_acc = (float*)malloc((size_t)N * 3 * sizeof(float));
    if (!h_pos || !h_mass || !h_bodies || !h_acc) {
        fprintf(stderr, "host allocation failed\n");
        return EXIT_FAILURE;
    }
    read_file("data/pos.bin", h_pos, (size_t)N * 3 * sizeof(float));
    read_file("data/mass.bin", h_mass, (size_t)N * sizeof(float));
    for (int i = 0; i < N; ++i) {
        h_bodies[i] = make_float4(h_pos[3 * i], h_pos[3 * i + 1], h_pos[3 * i + 2], h_mass[i]);
    }

    float4* d_bodies;
    float3* d_acc;
    CUDA_CHECK(cudaMalloc(&d_bodies, (size_t)N * sizeof(float4)));
    CUDA_CHECK(cudaMalloc(&d_acc, (size_t)N * sizeof(float3)));
    CUDA_CHECK(cudaMemcpy(d_bodies, h_bodies, (size_t)N * sizeof(float4), cudaMemcpyHostToDevice));

    nbody_accel<<<(N + TILE - 1) / TILE, TILE>>>(d_bodies, d_acc, N);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    // float3 is three packed floats, so the device array has the [N, 3] file layout.
    CUDA_CHECK(cudaMemcpy(h_acc, d_acc, (size_t)N * 3 * sizeof(float), cudaMemcpyDeviceToHost));
    write_file("data/accel.bin", h_acc, (size_t)N * 3 * sizeof(float));

    CUDA_CHECK(cudaFree(d_bodies));
    CUDA_CHECK(cudaFree(d_acc));
    free(h_pos);
    free(h_mass);
    free(h_bodies);
    free(h_acc);
    return 0;
}
