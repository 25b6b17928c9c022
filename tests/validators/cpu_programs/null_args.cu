// NULL and 0 as kernel arguments: nvcc converts them to the pointer parameters.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void scale(float* out, const float* in, const int* mask, int n, float* unused) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && (mask == NULL || mask[i])) out[i] = 2.0f * in[i];
  if (unused != nullptr) *unused = 1.0f;
}

template <class T>
__global__ void fill(T* out, T v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = v;
}

#define LAUNCH_SCALE(o, i, n) scale<<<1, 32>>>(o, i, NULL, n, 0)

int main() {
  const int n = 32;
  float *in, *out;
  int* ints;
  cudaMallocManaged(&in, n * sizeof(float));
  cudaMallocManaged(&out, n * sizeof(float));
  cudaMallocManaged(&ints, n * sizeof(int));
  for (int i = 0; i < n; ++i) in[i] = (float)i;
  scale<<<1, 32>>>(out, in, NULL, n, 0);
  cudaDeviceSynchronize();
  float first = out[n - 1];
  LAUNCH_SCALE(out, in, n);
  fill<<<1, 32>>>(ints, 0, n);
  fill<int><<<1, 32>>>(ints + 1, 0, 1);
  cudaDeviceSynchronize();
  printf("null_args %g %g %d %s\n", first, out[3], ints[5], cudaGetErrorString(cudaGetLastError()));
  return 0;
}
