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

#ifndef ROWS
#define ROWS 1024
#endif
#ifndef COLS
#define COLS 512
#endif

constexpr int kThreads = 128;
constexpr int kChunk = 256;  // elements of x staged in shared memory at a time

// One thread per row; the block stages chunks of x in dynamic shared memory so every thread
// reads x from shared memory instead of global memory.
__global__ void matvec(const float* __restrict__ A, const float* __restrict__ x,
                       float* __restrict__ y, int rows, int cols) {
    extern __shared__ float xs[];
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int base = 0; base < cols; base += kChunk) {
        const int len = min(kChunk, cols - base);
        for (int i = threadIdx.x; i < len; i += blockDim.x) xs[i] = x[base + i];
        __syncthreads();
        if (row < rows) {
            const float* a = A + static_cast<size_t>(row) * cols + base;
            for (int j = 0; j < len; ++j) acc += a[j] * xs[j];
        }
        __syncthreads();
    }
    if (row < rows) y[row] = acc;
}

int main() {
    const size_t count = static_cast<size_t>(ROWS) * COLS;
    std::vector<float> A = load_array<float>("data/A.bin", count);
    std::vector<float> x = load_array<float>("data/x.bin", COLS);
    std::vector<float> y(ROWS);

    float *d_A, *d_x, *d_y;
    CUDA_CHECK(cudaMalloc(&d_A, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_x, COLS * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_y, ROWS * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_A, A.data(), count * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_x, x.data(), COLS * sizeof(float), cudaMemcpyHostToDevice));

    const int blocks = (ROWS + kThreads - 1) / kThreads;
    matvec<<<blocks, kThreads, kChunk * sizeof(float)>>>(d_A, d_x, d_y, ROWS, COLS);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(y.data(), d_y, ROWS * sizeof(float), cudaMemcpyDeviceToHost));
    save_array("data/y.bin", y);

    CUDA_CHECK(cudaFree(d_A));
    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    return 0;
}
