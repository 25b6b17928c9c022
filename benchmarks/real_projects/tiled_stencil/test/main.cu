#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "stencil.cuh"

template <typename T>
static bool check(int n) {
  std::vector<T> h(n), out(n);
  for (int i = 0; i < n; ++i) h[i] = T((i * 37) % 101) / T(7);
  T *x, *y;
  cudaMalloc(&x, n * sizeof(T));
  cudaMalloc(&y, n * sizeof(T));
  cudaMemcpy(x, h.data(), n * sizeof(T), cudaMemcpyHostToDevice);
  stencil(x, y, n);
  cudaMemcpy(out.data(), y, n * sizeof(T), cudaMemcpyDeviceToHost);
  cudaFree(x);
  cudaFree(y);
  for (int i = 0; i < n; ++i) {
    T want = (i > 0 ? h[i - 1] : T(0)) + T(2) * h[i] + (i + 1 < n ? h[i + 1] : T(0));
    if (std::fabs(double(out[i] - want)) > 1e-4) return false;
  }
  return true;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 1000;
  bool ok = check<float>(n) && check<double>(n);
  printf("n=%d %s\n", n, ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
