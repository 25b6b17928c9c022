#pragma once
// 1-D 3-point stencil y[i] = x[i-1] + 2 x[i] + x[i+1] (zero outside), tiled in dynamic shared memory.
template <typename T>
__global__ void stencil3(const T* x, T* y, int n) {
  extern __shared__ unsigned char raw[];
  T* tile = reinterpret_cast<T*>(raw);
  const int i = blockIdx.x * blockDim.x + threadIdx.x, t = threadIdx.x + 1;
  tile[t] = i < n ? x[i] : T(0);
  if (threadIdx.x == 0) tile[0] = i > 0 && i - 1 < n ? x[i - 1] : T(0);
  if (threadIdx.x == blockDim.x - 1) tile[t + 1] = i + 1 < n ? x[i + 1] : T(0);
  __syncthreads();
  if (i < n) y[i] = tile[t - 1] + T(2) * tile[t] + tile[t + 1];
}

void stencil(const float* x, float* y, int n);
void stencil(const double* x, double* y, int n);
