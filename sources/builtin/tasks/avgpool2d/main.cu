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

#ifndef CHANNELS
#define CHANNELS 8
#endif
#ifndef H
#define H 129
#endif
#ifndef W
#define W 129
#endif
#ifndef OH
#define OH 64
#endif
#ifndef OW
#define OW 64
#endif

constexpr int kPool = 3;
constexpr int kStride = 2;
constexpr int kThreads = 256;

static_assert(OH == (H - kPool) / kStride + 1, "OH must equal (H - 3) / 2 + 1");
static_assert(OW == (W - kPool) / kStride + 1, "OW must equal (W - 3) / 2 + 1");

// 3x3 average pooling, stride 2, no padding: one thread per output element on a flat
// grid-stride loop over all channels.
__global__ void avgpool2d(const float* __restrict__ in, float* __restrict__ out,
                          int channels, int h, int w, int oh, int ow) {
    const int total = channels * oh * ow;
    for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += gridDim.x * blockDim.x) {
        const int ox = idx % ow;
        const int oy = (idx / ow) % oh;
        const int c = idx / (ow * oh);
        const float* src = in + (static_cast<size_t>(c) * h + oy * kStride) * w + ox * kStride;
        float sum = 0.0f;
        for (int dy = 0; dy < kPool; ++dy)
            for (int dx = 0; dx < kPool; ++dx) sum += src[dy * w + dx];
        out[idx] = sum * (1.0f / (kPool * kPool));
    }
}

int main() {
    const size_t in_count = static_cast<size_t>(CHANNELS) * H * W;
    const size_t out_count = static_cast<size_t>(CHANNELS) * OH * OW;
    std::vector<float> in = load_array<float>("data/input.bin", in_count);
    std::vector<float> out(out_count);

    float *d_in, *d_out;
    CUDA_CHECK(cudaMalloc(&d_in, in_count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, out_count * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), in_count * sizeof(float), cudaMemcpyHostToDevice));

    int blocks = static_cast<int>((out_count + kThreads - 1) / kThreads);
    if (blocks > 1024) blocks = 1024;
    avgpool2d<<<blocks, kThreads>>>(d_in, d_out, CHANNELS, H, W, OH, OW);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(out.data(), d_out, out_count * sizeof(float), cudaMemcpyDeviceToHost));
    save_array("data/output.bin", out);

    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    return 0;
}
