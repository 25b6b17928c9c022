// Reads data/x.bin (N floats), writes data/y.bin = 2 x + 1 computed by kernels.cu.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include "axpb.h"
#ifndef N
#define N 1000
#endif

int main() {
  static float h[N];
  FILE* f = fopen("data/x.bin", "rb");
  if (!f || fread(h, sizeof(float), N, f) != N) { fprintf(stderr, "cannot read data/x.bin\n"); return 1; }
  fclose(f);
  float *x, *y;
  cudaMalloc(&x, N * sizeof(float));
  cudaMalloc(&y, N * sizeof(float));
  cudaMemcpy(x, h, N * sizeof(float), cudaMemcpyHostToDevice);
  axpb(x, y, 2.0f, 1.0f, N);
  cudaMemcpy(h, y, N * sizeof(float), cudaMemcpyDeviceToHost);
  if (cudaGetLastError() != cudaSuccess) return 1;
  f = fopen("data/y.bin", "wb");
  fwrite(h, sizeof(float), N, f);
  fclose(f);
  return 0;
}
