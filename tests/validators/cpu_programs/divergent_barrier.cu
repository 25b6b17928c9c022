// Threads past the end return before a __syncthreads the others wait at.
#include <cstdio>
__global__ void k(float* x, int n) {
  __shared__ float s[64];
  int i = threadIdx.x;
  if (i >= n) return;
  s[i] = x[i];
  __syncthreads();
  x[i] = s[(i + 1) % n];
}
int main() {
  float* d;
  cudaMalloc(&d, 64 * sizeof(float));
  cudaMemset(d, 0, 64 * sizeof(float));
  k<<<1, 64>>>(d, 50);
  cudaDeviceSynchronize();
  printf("finished\n");
  return 0;
}
