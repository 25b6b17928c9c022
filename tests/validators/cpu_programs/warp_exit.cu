// Lanes past n return before a full-mask shuffle the others wait in.
#include <cstdio>
__global__ void k(int* x, int n) {
  int i = threadIdx.x;
  if (i >= n) return;
  int v = x[i];
  v += __shfl_down_sync(0xffffffff, v, 1);
  x[i] = v;
}
int main() {
  int* d;
  cudaMalloc(&d, 32 * sizeof(int));
  cudaMemset(d, 0, 32 * sizeof(int));
  k<<<1, 32>>>(d, 20);
  cudaDeviceSynchronize();
  printf("done\n");
  return 0;
}
