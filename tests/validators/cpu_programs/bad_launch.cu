// Launch configurations a GPU rejects: the error must be the one a GPU sets.
#include <cstdio>
__global__ void k(int* x) { x[threadIdx.x] = 1; }
int main() {
  int* d;
  cudaMalloc(&d, 4096 * sizeof(int));
  k<<<1, 2048>>>(d);
  cudaError_t big = cudaGetLastError();
  k<<<0, 32>>>(d);
  cudaError_t zero = cudaGetLastError();
  k<<<1, 32, 1 << 20>>>(d);
  cudaError_t smem = cudaGetLastError();
  k<<<1, 32>>>(d);
  cudaError_t ok = cudaGetLastError();
  printf("%s|%s|%s|%s\n", cudaGetErrorName(big), cudaGetErrorName(zero), cudaGetErrorName(smem), cudaGetErrorName(ok));
  return 0;
}
