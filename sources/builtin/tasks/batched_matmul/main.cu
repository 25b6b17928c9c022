#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <cuda_runtime.h>

#define CUDA_CHECK(expr)                                                        \
    do {                                                                        \
        cudaError_t status_ = (expr);                                           \
        if (status_ != cudaSuccess) {                                           \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr, \
                    cudaGetErrorString(status_));                               \
            std::exit(1);                                                       \
        }                                                                       \
    } while (0)

template <typename T>
static std::vector<T> load_array(const char* path, size_t count) {
    std::vector<T> data(count);
    FILE* f = std::fopen(path, "rb");
    if (!f) {
        std::fprintf(stderr, "error: cannot open input %s\n", path);
        std::exit(1);
    }
    size_t n = std::fread(data.data(), sizeof(T), count, f);
    std::fclose(f);
    if (n != count) {
        std::fprintf(stderr, "error: %s holds %zu elements, expected %zu\n", path, n, count);
        std::exit(1);
    }
    return data;
}

template <typename T>
static void save_array(const char* path, const std::vector<T>& data) {
    FILE* f = std::fopen(path, "wb");
    if (!f) {
        std::fprintf(stderr, "error: cannot open output %s\n", path);
        std::exit(1);
    }
    size_t n = std::fwrite(data.data(), sizeof(T), data.size(), f);
    std::fclose(f);
    if (n != data.size()) {
        std::fprintf(stderr, "error: short write to %s\n", path);
        std::exit(1);
    }
}

#ifndef BATCH
#define BATCH 8
#endif
#ifndef M
#define M 64
#endif
#ifndef N
#define N 64
#endif
#ifndef K
#define K 64
#endif

// Batched C[b] = A[b] * B[b]; blockIdx.z selects the matrix of the batch.
template <int TILE>
__global__ void batched_matmul(const float* __restrict__ A, const float* __restrict__ B,
                               float* __restrict__ C, int m, int n, int k) {
    __shared__ float sa[TILE][TILE];
    __shared__ float sb[TILE][TILE];
    const int b = blockIdx.z;
    const float* a = A + static_cast<size_t>(b) * m * k;
    const float* bm = B + static_cast<size_t>(b) * k * n;
    float* c = C + static_cast<size_t>(b) * m * n;
    const int row = blockIdx.y * TILE + threadIdx.y;
    const int col = blockIdx.x * TILE + threadIdx.x;

    float sum = 0.0f;
    for (int t0 = 0; t0 < k; t0 += TILE) {
        sa[threadIdx.y][threadIdx.x] =
            (row < m && t0 + threadIdx.x < k) ? a[static_cast<size_t>(row) * k + t0 + threadIdx.x] : 0.0f;
        sb[threadIdx.y][threadIdx.x] =
            (t0 + threadIdx.y < k && col < n) ? bm[static_cast<size_t>(t0 + threadIdx.y) * n + col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TILE; ++i) sum += sa[threadIdx.y][i] * sb[i][threadIdx.x];
        __syncthreads();
    }
    if (row < m && col < n) c[static_cast<size_t>(row) * n + col] = sum;
}

int main() {
    constexpr int kTile = 8;
    const size_t na = static_cast<size_t>(BATCH) * M * K;
    const size_t nb = static_cast<size_t>(BATCH) * K * N;
    const size_t nc = static_cast<size_t>(BATCH) * M * N;
    std::vector<float> A = load_array<float>("data/A.bin", na);
    std::vector<float> B = load_array<float>("data/B.bin", nb);
    std::vector<float> C(nc);

    float *d_A, *d_B, *d_C;
    CUDA_CHECK(cudaMalloc(&d_A, na * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_B, nb * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_C, nc * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_A, A.data(), na * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_B, B.data(), nb * sizeof(float), cudaMemcpyHostToDevice));

    dim3 block(kTile, kTile);
    dim3 grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile, BATCH);
    batched_matmul<kTile><<<grid, block>>>(d_A, d_B, d_C, M, N, K);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(C.data(), d_C, nc * sizeof(float), cudaMemcpyDeviceToHost));
    save_array("data/C.bin", C);

    CUDA_CHECK(cudaFree(d_A));
    CUDA_CHECK(cudaFree(d_B));
    CUDA_CHECK(cudaFree(d_C));
    return 0;
}
