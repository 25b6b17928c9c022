#include <cstdio>
// logic-rewrite-cuda/alg_factor.cuh: mutually recursive __device__ __forceinline__ functions.
// nvcc accepts them (it cannot inline a recursion and does not have to); the shim mapped
// __forceinline__ to __attribute__((always_inline)), which g++ had to honour or fail.
__device__ __forceinline__ int odd(int n);
__device__ __forceinline__ int even(int n) { return n == 0 ? 1 : odd(n - 1); }
__device__ __forceinline__ int odd(int n) { return n == 0 ? 0 : even(n - 1); }
__global__ void k(int *o, int n) { o[0] = even(n); }
int main() {
  int *d, h = -1;
  cudaMalloc(&d, sizeof h);
  k<<<1, 1>>>(d, 10);
  cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);
  printf("%s\n", h == 1 ? "PASS" : "FAIL");
  return 0;
}
