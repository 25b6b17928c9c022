// Compiled with -D of every single uppercase letter and common size names: nvcc accepts that,
// so no identifier in the shim headers may be one of them.
#include <cstdio>
#include <cuda.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <math_constants.h>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
namespace cg = cooperative_groups;

__global__ void k(float* out, const float* in, int* count, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  __shared__ float s[32];
  float v = i < n ? in[i] : 0.f;
  v += __shfl_down_sync(0xffffffffu, v, 1);
  s[threadIdx.x] = v;
  __syncthreads();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cg::this_thread_block());
  float total = cg::reduce(tile, s[threadIdx.x], cg::plus<float>());
  atomicAdd(count, 1);
  __half h = __float2half(1.5f);
  if (i < n) out[i] = min(total, 1000.0f) + max(1, 2) + __half2float(h);
}

int main() {
  float *a, *b;
  int* count;
  cudaMallocManaged(&a, 32 * sizeof(float));
  cudaMallocManaged(&b, 32 * sizeof(float));
  cudaMallocManaged(&count, sizeof(int));
  for (int i = 0; i < 32; ++i) b[i] = 1.0f;
  *count = 0;
  k<<<1, 32>>>(a, b, count, 32);
  cudaDeviceSynchronize();
  printf("macro_names %g %d\n", a[0], *count);
  return 0;
}
