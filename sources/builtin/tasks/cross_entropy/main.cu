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
#ifndef CLASSES
#define CLASSES 1000
#endif

#define THREADS 128

__device__ float reduce_block(float v, float* buf, bool take_max) {
    buf[threadIdx.x] = v;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            float o = buf[threadIdx.x + s];
            buf[threadIdx.x] = take_max ? fmaxf(buf[threadIdx.x], o) : buf[threadIdx.x] + o;
        }
        __syncthreads();
    }
    float r = buf[0];
    __syncthreads();
    return r;
}

// One block per sample: loss = logsumexp(logits) - logits[label]. Each block also adds
// loss / BATCH to the mean with an atomic.
__global__ void cross_entropy(const float* __restrict__ logits, const int* __restrict__ labels,
                              float* __restrict__ loss, float* __restrict__ mean_loss,
                              int batch, int classes) {
    __shared__ float buf[THREADS];
    const float* row = logits + (size_t)blockIdx.x * classes;
    float m = -INFINITY;
    for (int c = threadIdx.x; c < classes; c += THREADS) m = fmaxf(m, row[c]);
    m = reduce_block(m, buf, true);
    float s = 0.0f;
    for (int c = threadIdx.x; c < classes; c += THREADS) s += expf(row[c] - m);
    s = reduce_block(s, buf, false);
    if (threadIdx.x == 0) {
        int label = labels[blockIdx.x];
        float l = (label >= 0 && label < classes) ? m + logf(s) - row[label] : NAN;
        loss[blockIdx.x] = l;
        atomicAdd(mean_loss, l / batch);
    }
}

int main() {
    const size_t count = (size_t)BATCH * CLASSES;
    float* h_logits = (float*)malloc(count * sizeof(float));
    int* h_labels = (int*)malloc(BATCH * sizeof(int));
    float* h_loss = (float*)malloc(BATCH * sizeof(float));
    if (!h_logits || !h_labels || !h_loss) {
        fprintf(stderr, "host allocation failed\n");
        return EXIT_FAILURE;
    }
    read_file("data/logits.bin", h_logits, count * sizeof(float));
    read_file("data/labels.bin", h_labels, BATCH * sizeof(int));

    float *d_logits, *d_loss, *d_mean;
    int* d_labels;
    CUDA_CHECK(cudaMalloc(&d_logits, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_labels, BATCH * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_loss, BATCH * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_mean, sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_logits, h_logits, count * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_labels, h_labels, BATCH * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_mean, 0, sizeof(float)));

    cross_entropy<<<BATCH, THREADS>>>(d_logits, d_labels, d_loss, d_mean, BATCH, CLASSES);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    float h_mean = 0.0f;
    CUDA_CHECK(cudaMemcpy(h_loss, d_loss, BATCH * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&h_mean, d_mean, sizeof(float), cudaMemcpyDeviceToHost));
    write_file("data/loss.bin", h_loss, BATCH * sizeof(float));
    write_file("data/mean_loss.bin", &h_mean, sizeof(float));

    CUDA_CHECK(cudaFree(d_logits));
    CUDA_CHECK(cudaFree(d_labels));
    CUDA_CHECK(cudaFree(d_loss));
    CUDA_CHECK(cudaFree(d_mean));
    free(h_logits);
    free(h_labels);
    free(h_loss);
    return 0;
}
