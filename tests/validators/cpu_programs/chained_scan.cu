// A single-pass prefix sum over blocks (the chained form of a decoupled look-back scan): each
// block scans its tile, waits for the block before it to publish its inclusive prefix, then
// publishes its own. Block b waits on block b-1, so under a schedule that starts later blocks
// first the waiting block must not stop the others: a GPU runs the grid's blocks side by side.
// -DCHAIN_FROM_LAST=1: block b scans tile gridDim.x-1-b, so each block waits for a later one.
#include <cstdio>
#include <cstdlib>
#ifndef N
#define N 16384
#endif
#ifndef CHAIN_FROM_LAST
#define CHAIN_FROM_LAST 0
#endif
#define THREADS 128
#define TILE (2 * THREADS)

__global__ void chained_scan(const int* x, int* y, int n, volatile int* flag, volatile long long* prefix) {
  __shared__ int s[TILE];
  __shared__ long long before;
  const int b = CHAIN_FROM_LAST ? gridDim.x - 1 - blockIdx.x : blockIdx.x, t = threadIdx.x, base = b * TILE;
  for (int i = t; i < TILE; i += THREADS) s[i] = base + i < n ? x[base + i] : 0;
  __syncthreads();
  for (int off = 1; off < TILE; off *= 2) {  // Hillis-Steele inclusive scan of the tile
    int v[2];
    for (int k = 0; k < 2; ++k) {
      const int i = t + k * THREADS;
      v[k] = s[i] + (i >= off ? s[i - off] : 0);
    }
    __syncthreads();
    for (int k = 0; k < 2; ++k) s[t + k * THREADS] = v[k];
    __syncthreads();
  }
  if (t == 0) {
    long long p = 0;
    if (b > 0) {
      while (flag[b - 1] == 0) { }  // the block before has not published yet
      p = prefix[b - 1];
    }
    prefix[b] = p + s[TILE - 1];
    __threadfence();
    flag[b] = 1;
    before = p;
  }
  __syncthreads();
  for (int i = t; i < TILE; i += THREADS)
    if (base + i < n) y[base + i] = (int)(before + s[i]);
}

static void load(const char* path, int* h, size_t n) {
  FILE* f = fopen(path, "rb");
  if (!f || fread(h, sizeof(int), n, f) != n) { fprintf(stderr, "cannot read %s\n", path); exit(1); }
  fclose(f);
}

int main() {
  const int blocks = (N + TILE - 1) / TILE;
  int* h = (int*)malloc(N * sizeof(int));
  load("data/x.bin", h, N);
  int *x, *y, *flag;
  long long* prefix;
  cudaMalloc(&x, N * sizeof(int));
  cudaMalloc(&y, N * sizeof(int));
  cudaMalloc(&flag, blocks * sizeof(int));
  cudaMalloc(&prefix, blocks * sizeof(long long));
  cudaMemset(flag, 0, blocks * sizeof(int));
  cudaMemcpy(x, h, N * sizeof(int), cudaMemcpyHostToDevice);
  chained_scan<<<blocks, THREADS>>>(x, y, N, flag, prefix);
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    fprintf(stderr, "chained_scan: %s\n", cudaGetErrorString(e));
    return 1;
  }
  cudaMemcpy(h, y, N * sizeof(int), cudaMemcpyDeviceToHost);
  FILE* f = fopen("data/y.bin", "wb");
  fwrite(h, sizeof(int), N, f);
  fclose(f);
  printf("blocks %d\n", blocks);
  return 0;
}
