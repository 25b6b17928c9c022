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
#define N 100000
#endif

constexpr int kBlock = 256;
constexpr double kLr = 1e-3;
constexpr double kBeta1 = 0.9;
constexpr double kBeta2 = 0.999;
constexpr float kEps = 1e-8f;
constexpr int kStep = 10;  // the 1-based step number of this update

struct AdamCoeffs {
    float beta1, one_minus_beta1;
    float beta2, one_minus_beta2;
    float step_size;      // lr / (1 - beta1^t)
    float inv_bias2_sqrt; // 1 / sqrt(1 - beta2^t)
};

// One fused Adam step: updates the moments and the parameters in a single pass over memory.
__global__ void adam_step(const float* __restrict__ param, const float* __restrict__ grad,
                          const float* __restrict__ m, const float* __restrict__ v,
                          float* __restrict__ param_out, float* __restrict__ m_out,
                          float* __restrict__ v_out, int n, AdamCoeffs c) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float g = grad[i];
    float mi = c.beta1 * m[i] + c.one_minus_beta1 * g;
    float vi = c.beta2 * v[i] + c.one_minus_beta2 * g * g;
    param_out[i] = param[i] - c.step_size * mi / (sqrtf(vi) * c.inv_bias2_sqrt + kEps);
    m_out[i] = mi;
    v_out[i] = vi;
}

int main() {
    std::vector<float> param = load_array<float>("data/param.bin", N);
    std::vector<float> grad = load_array<float>("data/grad.bin", N);
    std::vector<float> m = load_array<float>("data/m.bin", N);
    std::vector<float> v = load_array<float>("data/v.bin", N);

    const size_t bytes = N * sizeof(float);
    float* d_buf[7];
    for (float*& p : d_buf) CUDA_CHECK(cudaMalloc(&p, bytes));
    CUDA_CHECK(cudaMemcpy(d_buf[0], param.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_buf[1], grad.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_buf[2], m.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_buf[3], v.data(), bytes, cudaMemcpyHostToDevice));

    // Coefficients are formed in double on the host: 1 - 0.999f in float32 would already be
    // off by 1e-5 relative, and 1 - beta2^t loses digits the same way.
    AdamCoeffs c;
    c.beta1 = (float)kBeta1;
    c.one_minus_beta1 = (float)(1.0 - kBeta1);
    c.beta2 = (float)kBeta2;
    c.one_minus_beta2 = (float)(1.0 - kBeta2);
    c.step_size = (float)(kLr / (1.0 - std::pow(kBeta1, kStep)));
    c.inv_bias2_sqrt = (float)(1.0 / std::sqrt(1.0 - std::pow(kBeta2, kStep)));
    adam_step<<<(N + kBlock - 1) / kBlock, kBlock>>>(d_buf[0], d_buf[1], d_buf[2], d_buf[3], d_buf[4],
                                                     d_buf[5], d_buf[6], N, c);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<float> out(N);
    const char* names[3] = {"data/param_out.bin", "data/m_out.bin", "data/v_out.bin"};
    for (int k = 0; k < 3; ++k) {
        CUDA_CHECK(cudaMemcpy(out.data(), d_buf[4 + k], bytes, cudaMemcpyDeviceToHost));
        save_array(names[k], out);
    }
    for (float* p : d_buf) CUDA_CHECK(cudaFree(p));
    return 0;
}
