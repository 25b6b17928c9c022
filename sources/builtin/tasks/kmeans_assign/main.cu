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
#define N 20000
#endif
#ifndef K
#define K 16
#endif
#ifndef DIM
#define DIM 4
#endif

#define BLOCK_SIZE 256

// Assigns each point to its nearest centroid (squared Euclidean distance, ties to the lower
// centroid index) and counts the members of each cluster. Integer coordinates make the
// distances exact. Centroids live in dynamic shared memory, loaded once per block.
__global__ void kmeans_assign(const int* __restrict__ points, const int* __restrict__ centroids,
                              int* __restrict__ labels, int* __restrict__ counts, int n) {
    extern __shared__ int s_centroids[];  // K * DIM
    for (int i = threadIdx.x; i < K * DIM; i += blockDim.x) s_centroids[i] = centroids[i];
    __syncthreads();

    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n) return;
    int best = 0;
    long long best_d = -1;
    for (int c = 0; c < K; ++c) {
        long long d = 0;
        for (int f = 0; f < DIM; ++f) {
            long long diff = (long long)points[p * DIM + f] - s_centroids[c * DIM + f];
            d += diff * diff;
        }
        if (best_d < 0 || d < best_d) {  // strict: the first (lowest) index wins ties
            best_d = d;
            best = c;
        }
    }
    labels[p] = best;
    atomicAdd(&counts[best], 1);
}

int main() {
    int* h_points = (int*)malloc((size_t)N * DIM * sizeof(int));
    int* h_centroids = (int*)malloc((size_t)K * DIM * sizeof(int));
    int* h_labels = (int*)malloc((size_t)N * sizeof(int));
    int* h_counts = (int*)malloc((size_t)K * sizeof(int));
    if (!h_points || !h_centroids || !h_labels || !h_counts) {
        fprintf(stderr, "host allocation failed\n");
        return EXIT_FAILURE;
    }
    read_file("data/points.bin", h_points, (size_t)N * DIM * sizeof(int));
    read_file("data/centroids.bin", h_centroids, (size_t)K * DIM * sizeof(int));

    int *d_points, *d_centroids, *d_labels, *d_counts;
    CUDA_CHECK(cudaMalloc(&d_points, (size_t)N * DIM * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_centroids, (size_t)K * DIM * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_labels, (size_t)N * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_counts, (size_t)K * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_points, h_points, (size_t)N * DIM * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_centroids, h_centroids, (size_t)K * DIM * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_counts, 0, (size_t)K * sizeof(int)));

    size_t shmem = (size_t)K * DIM * sizeof(int);
    kmeans_assign<<<(N + BLOCK_SIZE - 1) / BLOCK_SIZE, BLOCK_SIZE, shmem>>>(d_points, d_centroids,
                                                                           d_labels, d_counts, N);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(h_labels, d_labels, (size_t)N * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_counts, d_counts, (size_t)K * sizeof(int), cudaMemcpyDeviceToHost));
    write_file("data/labels.bin", h_labels, (size_t)N * sizeof(int));
    write_file("data/counts.bin", h_counts, (size_t)K * sizeof(int));

    CUDA_CHECK(cudaFree(d_points));
    CUDA_CHECK(cudaFree(d_centroids));
    CUDA_CHECK(cudaFree(d_labels));
    CUDA_CHECK(cudaFree(d_counts));
    free(h_points);
    free(h_centroids);
    free(h_labels);
    free(h_counts);
    return 0;
}
