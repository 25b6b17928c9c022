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

#ifndef N
#define N 131072
#endif

constexpr int kThreads = 256;

__inline__ __device__ float warp_all_sum(float v) {
    for (int lane_mask = 16; lane_mask >= 1; lane_mask /= 2) {
        v += __shfl_xor_sync(0xffffffffu, v, lane_mask);
    }
    return v;
}

// Mean squared error: each block reduces its squared differences (warp shuffles, then one
// value per warp through shared memory) and adds sum / n to the result atomically.
__global__ void mse_loss(const float* __restrict__ pred, const float* __restrict__ target,
                         float* __restrict__ loss, int n) {
    __shared__ float per_warp[kThreads / 32];
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float d = pred[i] - target[i];
        acc += d * d;
    }
    acc = warp_all_sum(acc);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) per_warp[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        acc = lane < kThreads / 32 ? per_warp[lane] : 0.0f;
        acc = warp_all_sum(acc);
        if (lane == 0) atomicAdd(loss, acc / n);
    }
}

int main() {
    std::vector<float> pred = load_array<float>("data/pred.bin", N);
    std::vector<float> target = load_array<float>("data/target.bin", N);

    float *d_pred, *d_target, *d_loss;
    CUDA_CHECK(cudaMalloc(&d_pred, N * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_target, N * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_loss, sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_pred, pred.data(), N * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_target, target.data(), N * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_loss, 0, sizeof(float)));

    int blocks = (N + kThreads - 1) / kThreads;
    if (blocks > 160) blocks = 160;
    mse_loss<<<blocks, kThreads>>>(d_pred, d_target, d_loss, N);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<float> loss(1);
    CUDA_CHECK(cudaMemcpy(loss.data(), d_loss, sizeof(float), cudaMemcpyDeviceToHost));
    save_array("data/loss.bin", loss);

    CUDA_CHECK(cudaFree(d_pred));
    CUDA_CHECK(cudaFree(d_target));
    CUDA_CHECK(cudaFree(d_loss));
    return 0;
}
