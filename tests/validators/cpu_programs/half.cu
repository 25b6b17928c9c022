// Half and bfloat16: conversions, arithmetic, __half2 atomics and shuffles.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cstdio>
__global__ void k(const float* in, __half2* acc, float* out) {
  int t = threadIdx.x;
  __half h = __float2half(in[t]);
  __half s = __hadd(h, __float2half(0.5f)) * __float2half(2.0f);
  __half o = __shfl_xor_sync(0xffffffff, s, 1);
  atomicAdd(acc, __halves2half2(__float2half(1.0f), o));
  __nv_bfloat16 b = __float2bfloat16(in[t]) + __float2bfloat16(1.0f);
  out[t] = __half2float(s) + __bfloat162float(b);
}
int main() {
  float h[32], *din, *dout, out[32];
  for (int i = 0; i < 32; i++) h[i] = i * 0.25f;
  __half2* dacc;
  cudaMalloc(&din, sizeof h); cudaMalloc(&dout, sizeof h); cudaMalloc(&dacc, sizeof(__half2));
  cudaMemcpy(din, h, sizeof h, cudaMemcpyHostToDevice);
  cudaMemset(dacc, 0, sizeof(__half2));
  k<<<1, 32>>>(din, dacc, dout);
  __half2 acc;
  cudaMemcpy(&acc, dacc, sizeof acc, cudaMemcpyDeviceToHost);
  cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost);
  printf("count=%g sum=%g out3=%g\n", __low2float(acc), __high2float(acc), out[3]);
  return 0;
}
