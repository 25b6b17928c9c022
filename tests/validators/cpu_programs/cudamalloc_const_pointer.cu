#include <cstdio>
// opticalFlow-cuda/flowCUDA.cu: cudaMalloc of a pointer-to-const (CUDA's template cudaMalloc
// casts with (void**)(void*), so nvcc accepts `const float *p; cudaMalloc(&p, n)`).
__global__ void k(const float *in, float *out) { out[0] = in ? 1.f : 0.f; }
int main() {
  const float *in;
  float *out, h = 0;
  cudaMalloc(&in, 4 * sizeof(float));
  cudaMalloc(&out, sizeof(float));
  k<<<1, 1>>>(in, out);
  cudaMemcpy(&h, out, sizeof h, cudaMemcpyDeviceToHost);
  printf("%s\n", h == 1.f ? "PASS" : "FAIL");
  return 0;
}
