// aligned_alloc with a size that is not a multiple of the alignment (fine under glibc and C17),
// then a kernel over it; -DOVERRUN writes one element past the requested size.
#include <cstdio>
#include <cstdlib>
__global__ void twice(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2.0f;
}
int main() {
  const int n = 1000;  // 4000 bytes, not a multiple of 1024
  float* h = (float*)aligned_alloc(1024, n * sizeof(float));
  if (!h) { printf("aligned_alloc returned NULL\n"); return 1; }
  for (int i = 0; i < n; ++i) h[i] = i;
  float* d;
  cudaMalloc(&d, n * sizeof(float));
  cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice);
  twice<<<(n + 255) / 256, 256>>>(d, n);
  cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);
#ifdef OVERRUN
  h[n] = 0.0f;
#endif
  printf("aligned=%d last=%g\n", (int)((unsigned long)h % 1024 == 0), h[n - 1]);
  free(h);
  cudaFree(d);
  return 0;
}
