// Reads one element past a static and past a dynamic shared-memory array.
#include <cstdio>
#ifndef WHICH
#define WHICH 0
#endif
__global__ void k(float* out) {
  __shared__ float s[64];
  extern __shared__ float d[];
  int t = threadIdx.x;
  s[t] = t;
  d[t] = t;
  __syncthreads();
  out[t] = WHICH == 0 ? s[t + 1] : d[t + 1];
}
int main() {
  float* o;
  cudaMalloc(&o, 64 * sizeof(float));
  k<<<1, 64, 64 * sizeof(float)>>>(o);
  cudaDeviceSynchronize();
  printf("done\n");
  return 0;
}
