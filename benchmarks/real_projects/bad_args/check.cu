#include "check.h"

__global__ void divisible(int n, int* ok) { *ok = n > 0 && __popc(n & 31) == 0; }

bool size_ok(int n) {
  int *d, h = 0;
  cudaMalloc(&d, sizeof(int));
  divisible<<<1, 1>>>(n, d);
  cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(d);
  return h != 0;
}
