// CUB block/warp collectives inside kernels: inputs data/v.bin, outputs data/*.bin.
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cub/warp/warp_scan.cuh>
#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_store.cuh>
#include <climits>
#include <cstdio>
#include <vector>
#ifndef N
#define N 3000
#endif
#define BLOCK 128

__global__ void block_sums(const int* in, int* block_sum, int* excl, int* block_total, int n) {
  typedef cub::BlockReduce<int, BLOCK> BR;
  typedef cub::BlockScan<int, BLOCK> BS;
  __shared__ typename BR::TempStorage rs;
  __shared__ typename BS::TempStorage ss;
  int i = blockIdx.x * BLOCK + threadIdx.x;
  int x = i < n ? in[i] : 0;
  int valid = min(BLOCK, n - (int)(blockIdx.x * BLOCK));
  int s = BR(rs).Sum(x, valid);
  if (threadIdx.x == 0) block_sum[blockIdx.x] = s;
  int e, agg;
  BS(ss).ExclusiveSum(x, e, agg);
  if (i < n) excl[i] = e;
  if (threadIdx.x == 0) block_total[blockIdx.x] = agg;
}

struct Running {
  int total;
  __device__ int operator()(int block_aggregate) { int old = total; total += block_aggregate; return old; }
};

// One block scans the whole array tile by tile, carrying the running total in a callback.
__global__ void tiled_scan(const int* in, int* out, int n) {
  typedef cub::BlockScan<int, BLOCK> BS;
  __shared__ typename BS::TempStorage ss;
  Running prefix{0};
  for (int base = 0; base < n; base += BLOCK) {
    int i = base + threadIdx.x;
    int x = i < n ? in[i] : 0, y;
    BS(ss).InclusiveSum(x, y, prefix);
    __syncthreads();
    if (i < n) out[i] = y;
  }
}

__global__ void warp_sums(const int* in, int* warp_sum, int* warp_incl, int n) {
  typedef cub::WarpReduce<int> WR;
  typedef cub::WarpScan<int> WS;
  __shared__ typename WR::TempStorage wr[BLOCK / 32];
  __shared__ typename WS::TempStorage ws[BLOCK / 32];
  int i = blockIdx.x * BLOCK + threadIdx.x;
  int warp = threadIdx.x / 32;
  int x = i < n ? in[i] : 0;
  int s = WR(wr[warp]).Sum(x);
  if (threadIdx.x % 32 == 0) warp_sum[i / 32] = s;
  int y;
  WS(ws[warp]).InclusiveSum(x, y);
  if (i < n) warp_incl[i] = y;
}

// A bug CUB's documentation warns about: reusing a BlockReduce's TempStorage without a
// __syncthreads() in between. Its result depends on the thread schedule (a race).
__global__ void reuse_without_sync(const int* in, int* out) {
  typedef cub::BlockReduce<int, BLOCK> BR;
  __shared__ typename BR::TempStorage rs;
  int x = in[threadIdx.x];
  int first = BR(rs).Sum(x);
  int second = BR(rs).Sum(2 * x);
  if (threadIdx.x == 0) { out[0] = first; out[1] = second; }
}

#define IPT 4
// Tiles of BLOCK * IPT keys: loaded (blocked, the last tile partial), sorted with their
// original index by the low 16 bits, stored from a striped arrangement.
__global__ void block_sort(const int* keys, int* out_keys, int* out_vals, int n) {
  typedef cub::BlockLoad<int, BLOCK, IPT, cub::BLOCK_LOAD_WARP_TRANSPOSE> BL;
  typedef cub::BlockRadixSort<int, BLOCK, IPT, int> BRS;
  typedef cub::BlockStore<int, BLOCK, IPT, cub::BLOCK_STORE_STRIPED> BSt;
  __shared__ union { typename BL::TempStorage load; typename BRS::TempStorage sort; typename BSt::TempStorage store; } tmp;
  int base = blockIdx.x * BLOCK * IPT;
  int valid = min(BLOCK * IPT, n - base);
  int k[IPT], v[IPT];
  BL(tmp.load).Load(keys + base, k, valid, INT_MAX);
  for (int i = 0; i < IPT; ++i) v[i] = base + threadIdx.x * IPT + i;
  __syncthreads();
  BRS(tmp.sort).SortBlockedToStriped(k, v, 0, 16);
  __syncthreads();
  BSt(tmp.store).Store(out_keys + base, k, valid);
  BSt(tmp.store).Store(out_vals + base, v, valid);
}

template <class T> void save(const char* name, const T* d, size_t n) {
  std::vector<T> h(n); cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost);
  char p[256]; snprintf(p, sizeof p, "data/%s.bin", name);
  FILE* f = fopen(p, "wb"); fwrite(h.data(), sizeof(T), n, f); fclose(f);
}

int main() {
  const int n = N, blocks = (n + BLOCK - 1) / BLOCK;
  std::vector<int> h(n);
  FILE* f = fopen("data/v.bin", "rb"); if (!f || fread(h.data(), 4, n, f) != (size_t)n) return 1; fclose(f);
  int *in, *bs, *ex, *bt, *ts, *wsum, *wincl;
  cudaMalloc(&in, n * 4); cudaMemcpy(in, h.data(), n * 4, cudaMemcpyHostToDevice);
  cudaMalloc(&bs, blocks * 4); cudaMalloc(&ex, n * 4); cudaMalloc(&bt, blocks * 4); cudaMalloc(&ts, n * 4);
  cudaMalloc(&wsum, blocks * (BLOCK / 32) * 4); cudaMalloc(&wincl, n * 4);
  block_sums<<<blocks, BLOCK>>>(in, bs, ex, bt, n);
  tiled_scan<<<1, BLOCK>>>(in, ts, n);
  warp_sums<<<blocks, BLOCK>>>(in, wsum, wincl, n);
  int *sk, *sv; cudaMalloc(&sk, n * 4); cudaMalloc(&sv, n * 4);
  block_sort<<<(n + BLOCK * IPT - 1) / (BLOCK * IPT), BLOCK>>>(in, sk, sv, n);
  int* racy; cudaMalloc(&racy, 2 * 4);
  reuse_without_sync<<<1, BLOCK>>>(in, racy);
  if (cudaDeviceSynchronize() != cudaSuccess) return 2;
  save("racy", racy, 2); save("tile_keys", sk, n); save("tile_vals", sv, n);
  save("block_sum", bs, blocks); save("block_excl", ex, n); save("block_total", bt, blocks);
  save("tiled_incl", ts, n); save("warp_sum", wsum, blocks * (BLOCK / 32)); save("warp_incl", wincl, n);
  printf("done\n");
  return 0;
}
