// A token goes round the ring of blocks of a cooperative grid (block b waits on a volatile flag
// block b-1 sets), then grid.sync() and every thread reads the result: legal because the blocks
// of a cooperative grid are co-resident.
#include <cooperative_groups.h>
#include "ring.h"
namespace cg = cooperative_groups;

__global__ void ring(volatile int* flags, unsigned* acc, unsigned* seen) {
  cg::grid_group grid = cg::this_grid();
  const unsigned b = blockIdx.x, nb = gridDim.x;
  if (threadIdx.x == 0) {
    if (b == 0) { *acc = 7; __threadfence(); flags[1 % nb] = 1; }
    while (flags[b] == 0) { }
    *acc = *acc * 131u + b;
    __threadfence();
    if (b != 0) flags[(b + 1) % nb] = 1;
  }
  grid.sync();
  seen[grid.thread_rank()] = *acc;
}

unsigned run_ring(int* blocks) {
  int per_sm = 0, sms = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, ring, 64, 0);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const int nb = per_sm * sms, n = nb * 64;
  int* flags; unsigned *acc, *seen;
  cudaMalloc(&flags, nb * sizeof(int));
  cudaMalloc(&acc, sizeof(unsigned));
  cudaMalloc(&seen, n * sizeof(unsigned));
  cudaMemset(flags, 0, nb * sizeof(int));
  void* args[] = {&flags, &acc, &seen};
  if (cudaLaunchCooperativeKernel((void*)ring, nb, 64, args, 0, 0) != cudaSuccess) return 0;
  unsigned* h = new unsigned[n];
  cudaMemcpy(h, seen, n * sizeof(unsigned), cudaMemcpyDeviceToHost);
  unsigned v = h[0];
  for (int i = 1; i < n; ++i) if (h[i] != v) v = 0;
  delete[] h;
  *blocks = nb;
  return v;
}
