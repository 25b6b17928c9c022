// Reverse every TILE-element chunk of x (the last chunk may be shorter) and double it:
// each block stages chunks into shared memory with cooperative_groups::memcpy_async, two
// stages in flight (wait_prior<1>), the next chunk prefetched while the current one is used.
// Full chunks use the cuda::aligned_size_t<16> overload, the tail the plain byte count.
// Mutants (defines): NO_WAIT drops the wait (keeping block.sync()), LATE_WAIT uses wait_prior<2>.
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cstdio>
#include <cstdlib>
namespace cg = cooperative_groups;
#ifndef N
#define N 5000
#endif
#define TILE 256
#ifdef LATE_WAIT
#define PENDING 2
#else
#define PENDING 1
#endif

__device__ void stage(const cg::thread_block& block, float* dst, const float* x, int chunk, int n) {
  const int base = chunk * TILE;
  const int len = n - base < TILE ? n - base : TILE;
  if (len == TILE)
    cg::memcpy_async(block, dst, x + base, cuda::aligned_size_t<16>(sizeof(float) * TILE));
  else
    cg::memcpy_async(block, dst, x + base, sizeof(float) * len);
}

__global__ void reverse_chunks(const float* x, float* out, int n) {
  __shared__ __align__(16) float buf[2][TILE];
  cg::thread_block block = cg::this_thread_block();
  const int chunks = (n + TILE - 1) / TILE;
  int c = blockIdx.x, b = 0;
  if (c < chunks) stage(block, buf[0], x, c, n);
  for (; c < chunks; c += gridDim.x, b ^= 1) {
    const int next = c + gridDim.x;
    if (next < chunks) stage(block, buf[b ^ 1], x, next, n);
#ifndef NO_WAIT
    if (next < chunks)
      cg::wait_prior<PENDING>(block);
    else
      cg::wait(block);
#else
    block.sync();
#endif
    const int base = c * TILE;
    const int len = n - base < TILE ? n - base : TILE;
    const int t = block.thread_rank();
    if (t < len) out[base + t] = 2.0f * buf[b][len - 1 - t];
    block.sync();  // the next prefetch overwrites this buffer
  }
}

int main() {
  float* h = (float*)malloc(sizeof(float) * N);
  FILE* f = fopen("data/x.bin", "rb");
  if (!f || fread(h, sizeof(float), N, f) != N) { fprintf(stderr, "cannot read data/x.bin\n"); return 1; }
  fclose(f);
  float *x, *out;
  cudaMalloc(&x, sizeof(float) * N);
  cudaMalloc(&out, sizeof(float) * N);
  cudaMemcpy(x, h, sizeof(float) * N, cudaMemcpyHostToDevice);
  reverse_chunks<<<3, TILE>>>(x, out, N);
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) { fprintf(stderr, "CUDA error: %s\n", cudaGetErrorString(e)); return 1; }
  cudaMemcpy(h, out, sizeof(float) * N, cudaMemcpyDeviceToHost);
  f = fopen("data/out.bin", "wb");
  fwrite(h, sizeof(float), N, f);
  fclose(f);
  cudaFree(x); cudaFree(out);
  free(h);
  return 0;
}
