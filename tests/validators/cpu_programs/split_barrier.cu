// Even threads wait at __syncthreads(), odd ones at __syncthreads_count(): every thread is alive,
// but the two kinds of barrier cannot complete each other (mixing them on one barrier is
// undefined in PTX); the emulator reports a deadlock naming both lines.
#include <cstdio>
__global__ void k(int* x) {
  if (threadIdx.x % 2 == 0) {
    __syncthreads();
  } else {
    x[64] = __syncthreads_count(1);
  }
  x[threadIdx.x] = 1;
}
int main() {
  int* d;
  cudaMalloc(&d, 65 * sizeof(int));
  k<<<1, 64>>>(d);
  cudaDeviceSynchronize();
  printf("finished\n");
  return 0;
}
