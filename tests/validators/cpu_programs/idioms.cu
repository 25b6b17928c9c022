// Common CUDA idioms: cooperative groups, __constant__/__device__ symbols, mixed-type
// min/max, converting atomics, intrinsics, streams/events, vector types, warp votes.
#include <cuda_runtime.h>
#include <device_launch_parameters.h>
#include <cooperative_groups.h>
#include <math_constants.h>
#include <vector>
#include <algorithm>
#include <cmath>
#include <cstdio>
using namespace std;
namespace cg = cooperative_groups;
#define FULL_MASK 0xffffffff
#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("err %s\n", cudaGetErrorString(e)); return 1; } } while (0)
__constant__ float c_w[16];
__device__ int d_counter;
struct Acc { __host__ __device__ float apply(float x) const { return x * 2.f; } };
template <int BS> __global__ void __launch_bounds__(BS, 2) k1(const float* __restrict__ a, float* b, int n) {
  cg::thread_block blk = cg::this_thread_block();
  auto tile = cg::tiled_partition<32>(blk);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? a[i] * c_w[i % 16] : 0.f;
  double dv = v;
  for (int o = 16; o > 0; o /= 2) { v += tile.shfl_down(v, o); dv += __shfl_down_sync(FULL_MASK, dv, o); }
  blk.sync();
  if (tile.thread_rank() == 0) { atomicAdd(b, v); atomicAdd(&d_counter, 1); atomicAdd((unsigned long long*)(b + 2), 1ULL); }
  float4 q = make_float4(1, 2, 3, 4); float2 f2 = make_float2(q.x, q.w);
  if (i == 0) { b[1] = max(f2.y, 1.0f) + min((size_t)3, 5) + __fdividef(1.f, 2.f) + rsqrtf(4.f) + __saturatef(2.f) + Acc().apply(1.f) + CUDART_PI_F * 0 + __popc(7u) + __clz(1) + __ffs(8) + (float)__double2int_rn(2.5) + __expf(0.f) + __logf(1.f) + normcdff(0.f) + erfinvf(0.f); }
}
extern "C" __global__ void k2(int* x) { unsigned m = __ballot_sync(FULL_MASK, threadIdx.x & 1); int an = __any_sync(FULL_MASK, 1), al = __all_sync(FULL_MASK, threadIdx.x < 40); unsigned am = __activemask(); if (threadIdx.x == 0) *x = __popc(m) + an + al + __popc(am); }
int main() {
  int n = 1000;
  vector<float> h(n, 1.f);
  float w[16]; for (int i = 0; i < 16; i++) w[i] = 1.f;
  CHECK(cudaMemcpyToSymbol(c_w, w, sizeof(w)));
  float *da, *db; int* dx;
  CHECK(cudaMalloc((void**)&da, n * sizeof(float)));
  CHECK(cudaMalloc(&db, 4 * sizeof(float)));
  CHECK(cudaMalloc(&dx, sizeof(int)));
  CHECK(cudaMemcpy(da, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(db, 0, 4 * sizeof(float)));
  cudaStream_t st; cudaStreamCreate(&st);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  cudaEventRecord(e0, st);
  dim3 grid(ceil(n / 256.0)), block(256);
  auto go = [&]() { k1<256><<<grid, block, 0, st>>>(da, db, n); };
  go();
  k2<<<1, 32>>>(dx);
  CHECK(cudaGetLastError());
  cudaEventRecord(e1, st); cudaEventSynchronize(e1);
  float ms; cudaEventElapsedTime(&ms, e0, e1);
  float hb[4]; int hx, hc;
  CHECK(cudaMemcpy(hb, db, sizeof(hb), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&hx, dx, sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpyFromSymbol(&hc, d_counter, sizeof(int)));
  cudaDeviceProp prop; cudaGetDeviceProperties(&prop, 0);
  printf("sum=%g misc=%g x=%d counter=%d warp=%d ull=%llu\n", hb[0], hb[1], hx, hc, prop.warpSize, *(unsigned long long*)(hb + 2));
  return 0;
}
