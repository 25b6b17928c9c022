// cooperative_groups::thread_group, the generic group: a block, a tile made at run time
// (tiled_partition(group, 16)) and a compile-time tile passed as one; sync, rank and size.
#include <cstdio>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__device__ int group_sum(cg::thread_group g, int* tmp, int v) {
  tmp[g.thread_rank()] = v;
  g.sync();
  int s = 0;
  for (unsigned i = 0; i < g.size(); i++) s += tmp[i];
  g.sync();
  return s;
}
__global__ void k(int* out) {
  __shared__ int tmp[128];
  cg::thread_block b = cg::this_thread_block();
  int whole = group_sum(b, tmp, 1);
  cg::thread_group tile = cg::tiled_partition(b, 16);
  int part = group_sum(tile, tmp + (threadIdx.x / 16) * 16, 2);
  cg::thread_block_tile<8> t8 = cg::tiled_partition<8>(b);
  cg::thread_group g8 = t8;
  out[threadIdx.x] = whole * 1000 + part * 10 + (int)cg::group_size(g8) + (int)(cg::thread_rank(g8) == threadIdx.x % 8) ;
}
int main() {
  int* d; cudaMalloc(&d, 128 * sizeof(int));
  k<<<1, 128>>>(d);
  int h[128]; cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int i = 0; i < 128; i++) bad += h[i] != 128 * 1000 + 32 * 10 + 8 + 1;
  printf("bad %d first %d\n", bad, h[0]);
  return bad != 0;
}
