// A file-scope `extern __shared__` array whose name a parameter and a local __shared__ array
// of other functions reuse (HeCBench's hungarian): normal scoping, as nvcc compiles it.
#include <cstdio>
__shared__ extern float sdata[];
__device__ void warp_reduce(volatile float *sdata, int tid) {   // parameter shadows the global
  if (tid < 16) sdata[tid] += sdata[tid + 16];
}
__global__ void uses_static() {
  __shared__ float sdata[32];                                    // local shadows the global
  sdata[threadIdx.x] = 1.0f;
  __syncthreads();
  warp_reduce(sdata, threadIdx.x);
}
__global__ void uses_dynamic(float *out) {
  sdata[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = sdata[31 - threadIdx.x];
}
int main() {
  float *d; cudaMalloc(&d, 32 * sizeof(float));
  uses_static<<<1, 32>>>();
  uses_dynamic<<<1, 32, 32 * sizeof(float)>>>(d);
  float h[32]; cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  printf("%s\n", h[0] == 31 ? "PASS" : "FAIL");
}
