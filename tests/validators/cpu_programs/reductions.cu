// Vector add, shared-memory tree reduction and warp-shuffle reduction; exits 0 when all agree.
#include <cuda_runtime.h>
#include <stdio.h>
#ifndef N
#define N 100003
#endif
__global__ void add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
__global__ void reduce_tree(const float* in, float* out, int n) {
  __shared__ float s[256];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? in[i] : 0.f;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t == 0) atomicAdd(out, s[0]);
}
__global__ void reduce_shfl(const float* in, float* out, int n) {
  extern __shared__ float partial[];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  float v = i < n ? in[i] : 0.f;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
  if ((t & 31) == 0) partial[t >> 5] = v;
  __syncthreads();
  if (t < 32) {
    v = t < blockDim.x / 32 ? partial[t] : 0.f;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    if (t == 0) atomicAdd(out, v);
  }
}
int main() {
  const int n = N;
  size_t bytes = n * sizeof(float);
  float *a = (float*)malloc(bytes), *b = (float*)malloc(bytes), *c = (float*)malloc(bytes);
  for (int i = 0; i < n; i++) { a[i] = (float)(i % 7); b[i] = 1.0f; }
  float *da, *db, *dc, *dr;
  cudaMalloc(&da, bytes); cudaMalloc(&db, bytes); cudaMalloc(&dc, bytes); cudaMalloc(&dr, sizeof(float));
  cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice);
  add<<<(n + 255) / 256, 256>>>(da, db, dc, n);
  cudaMemcpy(c, dc, bytes, cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int i = 0; i < n; i++) bad += c[i] != a[i] + 1.0f;
  float tree = 0, shfl = 0;
  cudaMemset(dr, 0, sizeof(float));
  reduce_tree<<<(n + 255) / 256, 256>>>(db, dr, n);
  cudaMemcpy(&tree, dr, sizeof(float), cudaMemcpyDeviceToHost);
  cudaMemset(dr, 0, sizeof(float));
  reduce_shfl<<<(n + 255) / 256, 256, 8 * sizeof(float)>>>(db, dr, n);
  cudaMemcpy(&shfl, dr, sizeof(float), cudaMemcpyDeviceToHost);
  printf("add_mismatches=%d tree=%.0f shfl=%.0f error=%s\n", bad, tree, shfl, cudaGetErrorString(cudaGetLastError()));
  cudaFree(da); cudaFree(db); cudaFree(dc); cudaFree(dr);
  free(a); free(b); free(c);
  return (bad == 0 && tree == (float)n && shfl == (float)n) ? 0 : 1;
}
