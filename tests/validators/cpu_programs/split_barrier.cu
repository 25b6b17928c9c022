// Even and odd threads wait at two different __syncthreads calls: every thread is alive, none
// can pass (a deadlock the emulator reports, naming both lines).
#include <cstdio>
__global__ void k(int* x) {
  if (threadIdx.x % 2 == 0) {
    __syncthreads();
  } else {
    __syncthreads();
  }
  x[threadIdx.x] = 1;
}
int main() {
  int* d;
  cudaMalloc(&d, 64 * sizeof(int));
  k<<<1, 64>>>(d);
  cudaDeviceSynchronize();
  printf("finished\n");
  return 0;
}
