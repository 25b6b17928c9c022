// Grid-wide sum in one cooperative launch: each block reduces its grid-stride share into
// partial[], grid.sync(), then block 0 adds the partials. Without the grid.sync (-DNO_GRID_SYNC)
// block 0 may read partials other blocks have not written yet.
#include <cooperative_groups.h>
#include <cstdio>
#include <cstdlib>
namespace cg = cooperative_groups;
#ifndef N
#define N 100000
#endif
#ifndef MAX_BLOCKS
#define MAX_BLOCKS 24
#endif
#define THREADS 128

__global__ void grid_sum(const float* x, float* partial, float* out, int n) {
  cg::grid_group grid = cg::this_grid();
  cg::thread_block block = cg::this_thread_block();
  __shared__ float s[THREADS];
  const unsigned tid = block.thread_rank();
  float acc = 0.0f;
  for (unsigned long long i = grid.thread_rank(); i < (unsigned long long)n; i += grid.size()) acc += x[i];
  s[tid] = acc;
  block.sync();
  for (unsigned st = THREADS / 2; st > 0; st /= 2) {
    if (tid < st) s[tid] += s[tid + st];
    block.sync();
  }
  if (tid == 0) partial[grid.block_rank()] = s[0];
#ifndef NO_GRID_SYNC
  grid.sync();
#endif
  if (grid.block_rank() == 0 && tid == 0) {
    float t = 0.0f;
    for (unsigned long long b = 0; b < grid.num_blocks(); ++b) t += partial[b];
    out[0] = t;
  }
}

static void load(const char* path, float* h, size_t n) {
  FILE* f = fopen(path, "rb");
  if (!f || fread(h, sizeof(float), n, f) != n) { fprintf(stderr, "cannot read %s\n", path); exit(1); }
  fclose(f);
}

int main() {
  int coop = 0;
  cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, 0);
  if (!coop) { fprintf(stderr, "no cooperative launch\n"); return 1; }
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  int per_sm = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, grid_sum, THREADS, 0);
  int blocks = prop.multiProcessorCount * per_sm;
  if (blocks > MAX_BLOCKS) blocks = MAX_BLOCKS;
  float* h = (float*)malloc(N * sizeof(float));
  load("data/x.bin", h, N);
  float *x, *partial, *out;
  cudaMalloc(&x, N * sizeof(float));
  cudaMalloc(&partial, blocks * sizeof(float));
  cudaMalloc(&out, sizeof(float));
  cudaMemset(partial, 0, blocks * sizeof(float));
  cudaMemcpy(x, h, N * sizeof(float), cudaMemcpyHostToDevice);
  int n = N;
  void* args[] = {&x, &partial, &out, &n};
  cudaError_t e = cudaLaunchCooperativeKernel((void (*)(const float*, float*, float*, int))grid_sum, blocks,
                                              THREADS, args, 0, 0);
  if (e != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) {
    fprintf(stderr, "launch failed: %s\n", cudaGetErrorString(e));
    return 1;
  }
  float r;
  cudaMemcpy(&r, out, sizeof(float), cudaMemcpyDeviceToHost);
  FILE* f = fopen("data/out.bin", "wb");
  fwrite(&r, sizeof(float), 1, f);
  fclose(f);
  printf("blocks %d\n", blocks);
  return 0;
}
