// libcu++ in device code without Thrust: cuda::std::array and complex, cuda::atomic_ref
// (real atomics across blocks).
#include <cstdio>
#include <cuda/std/array>
#include <cuda/std/complex>
#include <cuda/atomic>
__global__ void k(int* total, float* out) {
  cuda::std::array<int, 4> a{1, 2, 3, 4};
  int s = 0;
  for (int v : a) s += v;
  cuda::atomic_ref<int, cuda::thread_scope_device> t(*total);
  t.fetch_add(s, cuda::std::memory_order_relaxed);
  cuda::std::complex<float> z(1.0f, 2.0f);
  out[threadIdx.x] = cuda::std::abs(z * z);
}
int main() {
  int* t; float* o;
  cudaMalloc(&t, sizeof(int)); cudaMemset(t, 0, sizeof(int)); cudaMalloc(&o, 64 * sizeof(float));
  k<<<2, 64>>>(t, o);
  int h; float f; cudaMemcpy(&h, t, sizeof h, cudaMemcpyDeviceToHost); cudaMemcpy(&f, o, sizeof f, cudaMemcpyDeviceToHost);
  printf("%d %g\n", h, f);
  return h != 1280;
}
