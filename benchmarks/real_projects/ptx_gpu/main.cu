#include <cstdio>
#include "lanes.h"

int main() {
  const int n = 1000;
  unsigned *d, h[n];
  cudaMalloc(&d, sizeof h);
  read_lanes(d, n);
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += h[i] != unsigned(i % 32);
  printf("%d wrong: %s\n", wrong, wrong ? "FAIL" : "PASS");
  return wrong ? 1 : 0;
}
