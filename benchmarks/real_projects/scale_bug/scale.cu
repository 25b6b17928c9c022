// Scales a vector in place. The bug, kept on purpose (the kind a GPU run with a round size
// hides): the grid is n / threads blocks, rounded down, so the last n % threads elements are
// never scaled.
#include "scale.h"

__global__ void scale_kernel(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

void scale(float* x, float a, int n) { scale_kernel<<<n / 256, 256>>>(x, a, n); }
