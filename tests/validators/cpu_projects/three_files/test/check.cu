#include <cstdio>
#include "check.h"
#include "scale.cuh"

int count_mismatches(const float* x, const float* y, int n) {
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    // Scaled by 2 and taken from the next thread of the block (0 past the end), then
    // add_one twice.
    int from = i / 128 * 128 + (i % 128 + 1) % 128;
    float x0 = (from < n ? 2.0f * from : 0.0f) + 2.0f;
    if (x[i] != x0 || y[n - 1 - i] != x0) {
      if (bad < 5) printf("mismatch at %d: %f %f, expected %f\n", i, x[i], y[n - 1 - i], x0);
      ++bad;
    }
  }
  return bad;
}

// The header's template instantiated for another type in this translation unit.
int check_double_scale() {
  double* d;
  cudaMallocManaged(&d, 256 * sizeof(double));
  for (int i = 0; i < 256; ++i) d[i] = i;
  scale<double>(d, 0.5, 256);
  cudaDeviceSynchronize();
  int bad = 0;
  for (int i = 0; i < 256; ++i) bad += d[i] != 0.5 * (i / 128 * 128 + (i % 128 + 1) % 128);
  cudaFree(d);
  return bad;
}

__global__ void block_sums(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float t = block_total(i < n ? x[i] : 0.0f);
  if (threadIdx.x == 0) out[blockIdx.x] = t;
}

int check_block_sums(const float* x, int n) {
  const int blocks = (n + 127) / 128;
  float* out;
  cudaMallocManaged(&out, blocks * sizeof(float));
  block_sums<<<blocks, 128>>>(x, out, n);
  cudaDeviceSynchronize();
  int bad = 0;
  for (int b = 0; b < blocks; ++b) {
    float t = 0.0f;
    for (int i = b * 128; i < n && i < (b + 1) * 128; ++i) t += x[i];
    bad += out[b] != t;
  }
  cudaFree(out);
  return bad;
}
