// 1-D Jacobi smoothing, ITERS sweeps in one cooperative launch with a grid.sync() between
// sweeps (a sweep reads the neighbours other blocks wrote in the previous one).
#include <cooperative_groups.h>
#include <cstdio>
#include <cstdlib>
namespace cg = cooperative_groups;
#ifndef N
#define N 3000
#endif
#ifndef ITERS
#define ITERS 20
#endif
#define BLOCKS 8
#define THREADS 64

__global__ void jacobi(float* a, float* b, int n, int iters) {
  cg::grid_group grid = cg::this_grid();
  for (int it = 0; it < iters; ++it) {
    const float* src = (it % 2 == 0) ? a : b;
    float* dst = (it % 2 == 0) ? b : a;
    for (unsigned long long i = grid.thread_rank(); i < (unsigned long long)n; i += grid.size()) {
      if (i == 0 || i == (unsigned long long)n - 1)
        dst[i] = src[i];
      else
        dst[i] = 0.25f * src[i - 1] + 0.5f * src[i] + 0.25f * src[i + 1];
    }
#ifndef NO_GRID_SYNC
    grid.sync();
#endif
  }
}

int main() {
  static float h[N];
  FILE* f = fopen("data/u.bin", "rb");
  if (!f || fread(h, sizeof(float), N, f) != N) { fprintf(stderr, "cannot read data/u.bin\n"); return 1; }
  fclose(f);
  float *a, *b;
  cudaMalloc(&a, N * sizeof(float));
  cudaMalloc(&b, N * sizeof(float));
  cudaMemcpy(a, h, N * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemset(b, 0, N * sizeof(float));
  int n = N, iters = ITERS;
  void* args[] = {&a, &b, &n, &iters};
  cudaError_t e = cudaLaunchCooperativeKernel(jacobi, dim3(BLOCKS), dim3(THREADS), args);
  if (e != cudaSuccess) { fprintf(stderr, "launch failed: %s\n", cudaGetErrorString(e)); return 1; }
  cudaDeviceSynchronize();
  cudaMemcpy(h, ITERS % 2 == 0 ? a : b, N * sizeof(float), cudaMemcpyDeviceToHost);
  f = fopen("data/v.bin", "wb");
  fwrite(h, sizeof(float), N, f);
  fclose(f);
  return 0;
}
