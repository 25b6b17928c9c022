// Double-buffered tiled matmul C = A B with the pipeline primitives: tile t+1 is copied into
// shared memory while tile t is multiplied. Out-of-range elements are zero-filled (zfill 4).
// Mutants (defines): NO_WAIT drops __pipeline_wait_prior, LATE_WAIT waits one stage too late,
// NO_SYNC drops the __syncthreads after the wait (other threads' copies may not be done).
#include <cuda_pipeline.h>
#include <cstdio>
#include <cstdlib>
#ifndef M
#define M 70
#endif
#ifndef N
#define N 50
#endif
#ifndef K
#define K 90
#endif
#define TILE 16
#ifdef LATE_WAIT
#define PENDING 2
#else
#define PENDING 1
#endif

__device__ void load_tile(const float* A, const float* B, float (*as)[TILE], float (*bs)[TILE], int t, int row,
                          int col) {
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int ak = t * TILE + tx, bk = t * TILE + ty;
  const bool a_in = row < M && ak < K, b_in = bk < K && col < N;
  __pipeline_memcpy_async(&as[ty][tx], a_in ? &A[row * K + ak] : A, sizeof(float), a_in ? 0 : sizeof(float));
  __pipeline_memcpy_async(&bs[ty][tx], b_in ? &B[bk * N + col] : B, sizeof(float), b_in ? 0 : sizeof(float));
  __pipeline_commit();
}

__global__ void matmul(const float* A, const float* B, float* C) {
  __shared__ float As[2][TILE][TILE];
  __shared__ float Bs[2][TILE][TILE];
  const int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  const int tiles = (K + TILE - 1) / TILE;
  float acc = 0.0f;
  load_tile(A, B, As[0], Bs[0], 0, row, col);
  for (int t = 0; t < tiles; ++t) {
    const int buf = t & 1;
    if (t + 1 < tiles)
      load_tile(A, B, As[buf ^ 1], Bs[buf ^ 1], t + 1, row, col);
    else
      __pipeline_commit();  // an empty batch keeps one batch per stage
#ifndef NO_WAIT
    __pipeline_wait_prior(PENDING);
#endif
#ifndef NO_SYNC
    __syncthreads();
#endif
    for (int k = 0; k < TILE; ++k) acc += As[buf][threadIdx.y][k] * Bs[buf][k][threadIdx.x];
    __syncthreads();  // the next stage overwrites this buffer
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

static void load(const char* path, float* h, size_t n) {
  FILE* f = fopen(path, "rb");
  if (!f || fread(h, sizeof(float), n, f) != n) { fprintf(stderr, "cannot read %s\n", path); exit(1); }
  fclose(f);
}

int main() {
  float* hA = (float*)malloc(sizeof(float) * M * K);
  float* hB = (float*)malloc(sizeof(float) * K * N);
  float* hC = (float*)malloc(sizeof(float) * M * N);
  load("data/A.bin", hA, (size_t)M * K);
  load("data/B.bin", hB, (size_t)K * N);
  float *A, *B, *C;
  cudaMalloc(&A, sizeof(float) * M * K);
  cudaMalloc(&B, sizeof(float) * K * N);
  cudaMalloc(&C, sizeof(float) * M * N);
  cudaMemcpy(A, hA, sizeof(float) * M * K, cudaMemcpyHostToDevice);
  cudaMemcpy(B, hB, sizeof(float) * K * N, cudaMemcpyHostToDevice);
  dim3 block(TILE, TILE), grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
  matmul<<<grid, block>>>(A, B, C);
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) { fprintf(stderr, "CUDA error: %s\n", cudaGetErrorString(e)); return 1; }
  cudaMemcpy(hC, C, sizeof(float) * M * N, cudaMemcpyDeviceToHost);
  FILE* f = fopen("data/C.bin", "wb");
  fwrite(hC, sizeof(float), (size_t)M * N, f);
  fclose(f);
  cudaFree(A); cudaFree(B); cudaFree(C);
  free(hA); free(hB); free(hC);
  return 0;
}
