#include <cstdio>
#include <cstdlib>
#include "scale.h"

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 1024;
  float* h = (float*)malloc(n * sizeof(float));
  for (int i = 0; i < n; ++i) h[i] = float(i);
  float* x;
  cudaMalloc(&x, n * sizeof(float));
  cudaMemcpy(x, h, n * sizeof(float), cudaMemcpyHostToDevice);
  scale(x, 3.0f, n);
  cudaMemcpy(h, x, n * sizeof(float), cudaMemcpyDeviceToHost);
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += h[i] != 3.0f * float(i);
  printf("%d of %d wrong: %s\n", wrong, n, wrong ? "FAIL" : "PASS");
  return wrong ? 1 : 0;
}
