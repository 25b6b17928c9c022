// Reverses a block through shared memory without a barrier: the answer depends on thread order.
#include <cstdio>
__global__ void rev(const int* in, int* out) {
  __shared__ int s[128];
  int t = threadIdx.x;
  s[t] = in[t];
  __syncwarp();
  out[t] = s[127 - t];
}
int main() {
  int h[128], *din, *dout;
  for (int i = 0; i < 128; i++) h[i] = i + 1;
  cudaMalloc(&din, sizeof h); cudaMalloc(&dout, sizeof h);
  cudaMemcpy(din, h, sizeof h, cudaMemcpyHostToDevice);
  cudaMemset(dout, 0, sizeof h);
  rev<<<1, 128>>>(din, dout);
  cudaMemcpy(h, dout, sizeof h, cudaMemcpyDeviceToHost);
  long sum = 0;
  for (int i = 0; i < 128; i++) sum += (long)h[i] * (i * i + 1);
  printf("checksum=%ld\n", sum);
  return 0;
}
