// Off-by-one bound: the last thread writes one element past the allocation.
#include <cstdio>
__global__ void fill(int* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) x[i] = i;
}
int main() {
  int* d;
  cudaMalloc(&d, 100 * sizeof(int));
  fill<<<1, 128>>>(d, 100);
  cudaDeviceSynchronize();
  printf("done\n");
  return 0;
}
