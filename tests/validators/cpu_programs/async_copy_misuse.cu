// Asynchronous-copy corner cases, one per MODE:
// 1: a 16-byte __pipeline_memcpy_async from a 4-byte aligned source (misaligned address)
// 2: size_and_align 12 (must be 4, 8 or 16)
// 3: zfill: copy 16 bytes with zfill 6; prints the destination before and after the wait
// 4: cg::memcpy_async with cuda::aligned_size_t<16> and a size that is not a multiple of 16
// 5: a launch whose threads exit with copies in flight, the source freed, then a launch that
//    waits: the first launch's copies must not be replayed into the second
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda_pipeline_primitives.h>
#include <cstdio>
namespace cg = cooperative_groups;
#ifndef MODE
#define MODE 1
#endif

__global__ void misaligned(const float* src, float* out) {
  __shared__ __align__(16) float s[4];
  __pipeline_memcpy_async(s, src + 1, 16);
  __pipeline_commit();
  __pipeline_wait_prior(0);
  out[0] = s[0];
}

__global__ void bad_size(const float* src, float* out) {
  __shared__ __align__(16) float s[4];
  __pipeline_memcpy_async(s, src, 12);
  __pipeline_commit();
  __pipeline_wait_prior(0);
  out[0] = s[0];
}

__global__ void zfill(const unsigned char* src, unsigned char* out) {
  __shared__ __align__(16) unsigned char s[16];
  for (int i = 0; i < 16; ++i) s[i] = 7;
  __pipeline_memcpy_async(s, src, 16, 6);
  __pipeline_commit();
  for (int i = 0; i < 16; ++i) out[i] = s[i];  // undefined on a GPU: the copy is in flight
  __pipeline_wait_prior(0);
  for (int i = 0; i < 16; ++i) out[16 + i] = s[i];
}

__global__ void bad_shape(const float* src, float* out) {
  __shared__ __align__(16) float s[8];
  cg::thread_block block = cg::this_thread_block();
  cg::memcpy_async(block, s, src, cuda::aligned_size_t<16>(sizeof(float) * 6));
  cg::wait(block);
  out[block.thread_rank()] = s[block.thread_rank()];
}

__global__ void leave_in_flight(const float* src, float* out, int wait) {
  __shared__ __align__(16) float s[32];
  __pipeline_memcpy_async(&s[threadIdx.x], &src[threadIdx.x], 4);
  __pipeline_commit();
  if (!wait) return;
  __pipeline_wait_prior(0);
  __syncthreads();
  out[threadIdx.x] = s[31 - threadIdx.x];
}

int main() {
  float h[32];
  for (int i = 0; i < 32; ++i) h[i] = static_cast<float>(i);
  float* src = nullptr;
  float* out = nullptr;
  cudaMalloc(&src, sizeof h);
  cudaMalloc(&out, sizeof h);
  cudaMemcpy(src, h, sizeof h, cudaMemcpyHostToDevice);
  if (MODE == 1) {
    misaligned<<<1, 1>>>(src, out);
  }
  if (MODE == 2) {
    bad_size<<<1, 1>>>(src, out);
  }
  if (MODE == 3) {
    unsigned char hb[32], *b, *o;
    for (int i = 0; i < 16; ++i) hb[i] = static_cast<unsigned char>(i + 1);
    cudaMalloc(&b, 16);
    cudaMalloc(&o, 32);
    cudaMemcpy(b, hb, 16, cudaMemcpyHostToDevice);
    zfill<<<1, 1>>>(b, o);
    cudaMemcpy(hb, o, 32, cudaMemcpyDeviceToHost);
    for (int i = 0; i < 32; ++i) printf("%d%c", hb[i], i % 16 == 15 ? '\n' : ' ');
  }
  if (MODE == 4) {
    bad_shape<<<1, 8>>>(src, out);
  }
  if (MODE == 5) {
    float* doomed;
    cudaMalloc(&doomed, sizeof h);
    cudaMemcpy(doomed, h, sizeof h, cudaMemcpyHostToDevice);
    leave_in_flight<<<1, 32>>>(doomed, out, 0);
    cudaDeviceSynchronize();
    cudaFree(doomed);
    for (int i = 0; i < 32; ++i) h[i] = 100.0f + i;
    cudaMemcpy(src, h, sizeof h, cudaMemcpyHostToDevice);
    leave_in_flight<<<1, 32>>>(src, out, 1);
    cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
    for (int i = 0; i < 32; ++i) printf("%g%c", h[i], i == 31 ? '\n' : ' ');
  }
  cudaError_t e = cudaDeviceSynchronize();
  printf("%s\n", cudaGetErrorString(e));
  return 0;
}
