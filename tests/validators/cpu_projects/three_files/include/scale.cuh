// A header with a kernel template, launch helpers (<<<>>> and by pointer) and the declaration of
// a kernel another translation unit defines: each construct the rewrite must reach in a header.
#pragma once
#include <cuda_runtime.h>

template <typename T>
__global__ void scale_kernel(T* x, T factor, int n) {
  extern __shared__ unsigned char scale_tile_raw[];
  T* tile = reinterpret_cast<T*>(scale_tile_raw);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  // Each thread reads its neighbour's product: wrong without the barrier and the shared tile.
  tile[threadIdx.x] = i < n ? x[i] * factor : T(0);
  __syncthreads();
  unsigned j = (threadIdx.x + 1) % blockDim.x;
  T mine = tile[j];
  __syncthreads();
  tile[threadIdx.x] = mine;
  __syncthreads();
  if (i < n) x[i] = tile[threadIdx.x];
}

template <typename T>
void scale(T* x, T factor, int n) {
  const int threads = 128;
  scale_kernel<T><<<(n + threads - 1) / threads, threads, threads * sizeof(T)>>>(x, factor, n);
}

__global__ void add_one(float* x, int n);

inline cudaError_t add_one_by_pointer(float* x, int n) {
  void* args[] = {&x, &n};
  return cudaLaunchKernel((void*)add_one, dim3((n + 127) / 128), dim3(128), args, 0, 0);
}

void reverse(const float* in, float* out, int n);

// Defined in solution.cu, called from a kernel of test/check.cu (relocatable device code):
// waits at a barrier, which that kernel's translation unit cannot see.
__device__ float block_total(float v);
