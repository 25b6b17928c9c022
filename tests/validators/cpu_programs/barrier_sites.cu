// A group of fill threads meets the others at its own __syncthreads() and returns; the others
// go on through two more barriers (as vLLM's moe_align kernel does). GPUs since Volta count a
// block barrier per thread, whichever call reached it, and release it without exited threads.
#include <cstdio>
__global__ void k(const int* in, int* out, int* fill, int n) {
  __shared__ int partial[64];
  const int fillers = 32;
  if (threadIdx.x < fillers) {
    for (int i = threadIdx.x; i < n; i += fillers) fill[i] = -1;
    __syncthreads();
    return;
  }
  int t = threadIdx.x - fillers;
  int s = 0;
  for (int i = t; i < n; i += blockDim.x - fillers) s += in[i];
  partial[t] = s;
  __syncthreads();
  if (t == 0) {
    int total = 0;
    for (int i = 0; i < (int)blockDim.x - fillers; i++) total += partial[i];
    partial[0] = total;
  }
  __syncthreads();
  out[t] = partial[0];
}
int main() {
  const int n = 1000;
  int h[n], *d_in, *d_out, *d_fill;
  for (int i = 0; i < n; i++) h[i] = i % 7;
  cudaMalloc(&d_in, n * sizeof(int));
  cudaMalloc(&d_out, 64 * sizeof(int));
  cudaMalloc(&d_fill, n * sizeof(int));
  cudaMemcpy(d_in, h, sizeof h, cudaMemcpyHostToDevice);
  k<<<1, 96>>>(d_in, d_out, d_fill, n);
  int out[64], fill[n];
  cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost);
  cudaMemcpy(fill, d_fill, sizeof fill, cudaMemcpyDeviceToHost);
  int want = 0, bad = 0;
  for (int i = 0; i < n; i++) want += h[i], bad += fill[i] != -1;
  for (int i = 0; i < 64; i++) bad += out[i] != want;
  printf("%s %d\n", bad ? "FAIL" : "PASS", bad);
  return bad != 0;
}
