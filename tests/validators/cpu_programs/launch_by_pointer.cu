// Kernels launched through untyped pointers, as real projects write: a cast to void* (plain, a
// template instance through a variable, cooperative), and a pointer that is no kernel (error 98).
#include <cstdio>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void scale(float* y, const float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i];
}
template <typename T> __global__ void addone(T* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += T(1);
}
__global__ void coop_sum(const float* y, float* out, int n) {
  cg::grid_group g = cg::this_grid();
  int i = g.thread_rank();
  if (i < n) atomicAdd(out, y[i]);
  g.sync();
}
int main() {
  const int n = 1000;
  float *x, *y, *out;
  cudaMalloc(&x, n * 4); cudaMalloc(&y, n * 4); cudaMalloc(&out, 4);
  static float h[n];
  for (int i = 0; i < n; i++) h[i] = i;
  cudaMemcpy(x, h, sizeof h, cudaMemcpyHostToDevice);
  cudaMemset(out, 0, 4);
  float a = 2.0f; int nn = n;
  void* args[] = {&y, &x, &a, &nn};
  cudaError_t e = cudaLaunchKernel((void*)scale, dim3((n + 255) / 256), dim3(256), args, 0, 0);
  void* fn = reinterpret_cast<void*>(&addone<float>);
  void* args2[] = {&y, &nn};
  cudaError_t e2 = cudaLaunchKernel(fn, (n + 255) / 256, 256, args2);
  void* args3[] = {&y, &out, &nn};
  cudaError_t e3 = cudaLaunchCooperativeKernel((const void*)coop_sum, 4, 256, args3, 0, 0);
  int bogus = 0;
  cudaError_t e4 = cudaLaunchKernel((void*)&bogus, 1, 1, args2);
  cudaGetLastError();
  float s = 0;
  cudaMemcpy(h, y, sizeof h, cudaMemcpyDeviceToHost);
  cudaMemcpy(&s, out, 4, cudaMemcpyDeviceToHost);
  printf("%d %d %d %d %g %g %g\n", e, e2, e3, e4, h[0], h[999], s);
  return (e == 0 && e2 == 0 && e3 == 0 && e4 == 98 && h[999] == 1999.0f && s == 1000000.0f) ? 0 : 1;
}
