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
#define N 4096
#endif

#define LOCAL_SIZE 512  // elements (and threads) per shared-memory block

static unsigned int next_pow2(unsigned int v) {
    unsigned int p = 1;
    while (p < v) p <<= 1;
    return p;
}

// One compare-exchange step of the bitonic network over the whole (padded) array.
__global__ void bitonic_step_global(float* data, unsigned int j, unsigned int k) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int partner = i ^ j;
    if (partner > i) {
        bool ascending = (i & k) == 0;
        float a = data[i], b = data[partner];
        if ((a > b) == ascending) {
            data[i] = b;
            data[partner] = a;
        }
    }
}

// Runs every step with j < LOCAL_SIZE for stage k (or, with full_sort, all stages up to
// LOCAL_SIZE) inside shared memory, saving one global round trip per step.
__global__ void bitonic_local(float* data, unsigned int k_stage, bool full_sort) {
    __shared__ float s[LOCAL_SIZE];
    unsigned int base = blockIdx.x * LOCAL_SIZE;
    unsigned int t = threadIdx.x;
    s[t] = data[base + t];
    __syncthreads();
    unsigned int k_first = full_sort ? 2 : k_stage;
    unsigned int k_last = full_sort ? LOCAL_SIZE : k_stage;
    for (unsigned int k = k_first; k <= k_last; k <<= 1) {
        unsigned int j_start = (k >> 1) < LOCAL_SIZE ? (k >> 1) : LOCAL_SIZE >> 1;
        for (unsigned int j = j_start; j > 0; j >>= 1) {
            unsigned int partner = t ^ j;
            if (partner > t) {
                bool ascending = ((base + t) & k) == 0;
                float a = s[t], b = s[partner];
                if ((a > b) == ascending) {
                    s[t] = b;
                    s[partner] = a;
                }
            }
            __syncthreads();
        }
    }
    data[base + t] = s[t];
}

int main() {
    float* h_data = (float*)malloc(N * sizeof(float));
    if (!h_data) {
        fprintf(stderr, "host allocation failed\n");
        return EXIT_FAILURE;
    }
    read_file("data/keys.bin", h_data, N * sizeof(float));

    // The network needs a power-of-two length that is a multiple of LOCAL_SIZE; the padding
    // is +infinity, which sorts to the end and is not copied back.
    unsigned int padded = next_pow2(N);
    if (padded < LOCAL_SIZE) padded = LOCAL_SIZE;
    float* h_padded = (float*)malloc(padded * sizeof(float));
    if (!h_padded) {
        fprintf(stderr, "host allocation failed\n");
        return EXIT_FAILURE;
    }
    for (unsigned int i = 0; i < padded; ++i) h_padded[i] = i < N ? h_data[i] : INFINITY;

    float* d_data;
    CUDA_CHECK(cudaMalloc(&d_data, padded * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_data, h_padded, padded * sizeof(float), cudaMemcpyHostToDevice));

    const unsigned int blocks = padded / LOCAL_SIZE;
    bitonic_local<<<blocks, LOCAL_SIZE>>>(d_data, 0, true);
    CUDA_CHECK(cudaGetLastError());
    for (unsigned int k = 2 * LOCAL_SIZE; k <= padded; k <<= 1) {
        for (unsigned int j = k >> 1; j >= LOCAL_SIZE; j >>= 1) {
            bitonic_step_global<<<blocks, LOCAL_SIZE>>>(d_data, j, k);
            CUDA_CHECK(cudaGetLastError());
        }
        bitonic_local<<<blocks, LOCAL_SIZE>>>(d_data, k, false);
        CUDA_CHECK(cudaGetLastError());
    }
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(h_data, d_data, N * sizeof(float), cudaMemcpyDeviceToHost));
    write_file("data/sorted.bin", h_data, N * sizeof(float));

    CUDA_CHECK(cudaFree(d_data));
    free(h_data);
    free(h_padded);
    return 0;
}
