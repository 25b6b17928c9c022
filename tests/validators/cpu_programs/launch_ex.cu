// cudaLaunchKernelEx with a configuration and attributes: typed (arguments converted to the
// kernel's own types) and untyped (cudaLaunchKernelExC) with the cooperative attribute.
#include <cstdio>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void axpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}
// Each thread reads a neighbour's write of before the grid-wide barrier.
__global__ void twice(int* v, int* w) {
  cg::grid_group g = cg::this_grid();
  v[g.thread_rank()] = 1;
  g.sync();
  w[g.thread_rank()] = v[g.thread_rank()] + v[(g.thread_rank() + 32) % g.size()];
}
int main() {
  const int n = 512;
  float *x, *y; int *v, *w;
  cudaMalloc(&x, n * 4); cudaMalloc(&y, n * 4); cudaMalloc(&v, 128 * 4); cudaMalloc(&w, 128 * 4);
  static float h[n];
  for (int i = 0; i < n; i++) h[i] = 1;
  cudaMemcpy(x, h, sizeof h, cudaMemcpyHostToDevice);
  cudaMemcpy(y, h, sizeof h, cudaMemcpyHostToDevice);
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(n / 128); cfg.blockDim = dim3(128); cfg.dynamicSmemBytes = 0; cfg.stream = 0;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension; attr[0].val.clusterDim.x = 1; attr[0].val.clusterDim.y = 1; attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr; cfg.numAttrs = 1;
  cudaError_t e1 = cudaLaunchKernelEx(&cfg, axpy, 2.0, x, y, n);   // double -> float, as the kernel's own types
  cudaLaunchConfig_t co = {};
  co.gridDim = dim3(4); co.blockDim = dim3(32);
  cudaLaunchAttribute ca[1]; ca[0].id = cudaLaunchAttributeCooperative; ca[0].val.cooperative = 1;
  co.attrs = ca; co.numAttrs = 1;
  void* args[] = {&v, &w};
  cudaError_t e2 = cudaLaunchKernelExC(&co, (const void*)twice, args);
  int hv[128];
  cudaMemcpy(hv, w, sizeof hv, cudaMemcpyDeviceToHost);
  cudaMemcpy(h, y, sizeof h, cudaMemcpyDeviceToHost);
  int s = 0; for (int i = 0; i < 128; i++) s += hv[i];
  printf("%d %d %g %d\n", e1, e2, h[n - 1], s);
  return e1 == 0 && e2 == 0 && h[n - 1] == 3.0f && s == 256 ? 0 : 1;
}
