#include "scale.cuh"

extern __shared__ float reverse_buf[];

__global__ void add_one(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}

// One block reverses the whole array through dynamic shared memory (file-scope extern).
__global__ void reverse_kernel(const float* in, float* out, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) reverse_buf[i] = in[i];
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = reverse_buf[n - 1 - i];
}

void reverse(const float* in, float* out, int n) {
  reverse_kernel<<<1, 256, n * sizeof(float)>>>(in, out, n);
}

__device__ float block_total(float v) {
  __shared__ float part[128];
  part[threadIdx.x] = v;
  __syncthreads();
  float t = 0.0f;
  for (unsigned k = 0; k < blockDim.x; ++k) t += part[k];
  __syncthreads();
  return t;
}
