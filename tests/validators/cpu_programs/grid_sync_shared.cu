// Cooperative blocks keep their __shared__ values across grid.sync() and across another block's
// turn while they spin: a GPU block keeps its shared memory for its whole life. `sweeps`: each
// block holds a tile in shared memory and adds its neighbour block's tile to it after each
// grid.sync(). `relay`: block b spins until block b-1 has published, holding a value in shared
// memory through the wait. Prints "<case> PASS" or "<case> FAIL (<n> wrong)".
#include <cooperative_groups.h>
#include <cstdio>
#include <cstring>
namespace cg = cooperative_groups;
#define BLOCKS 8
#define THREADS 64
#define ROUNDS 4

__global__ void sweeps(const int* x, int* exchange, int* out) {
  cg::grid_group grid = cg::this_grid();
  __shared__ int tile[THREADS];
  const int b = blockIdx.x, t = threadIdx.x, next = (b + 1) % gridDim.x;
  tile[t] = x[b * THREADS + t];
  for (int r = 0; r < ROUNDS; ++r) {
    exchange[b * THREADS + t] = tile[t];
    grid.sync();
    tile[t] += exchange[next * THREADS + t];
    grid.sync();
  }
  out[b * THREADS + t] = tile[t];
}

__global__ void relay(volatile int* flag, volatile int* value, int* out) {
  __shared__ int mine[THREADS];
  const int b = blockIdx.x, t = threadIdx.x;
  mine[t] = 1000 * b + t;
  __syncthreads();
  if (t == 0 && b > 0)
    while (flag[b - 1] == 0) { }
  __syncthreads();
  const int before = b > 0 ? value[b - 1] : 0;
  __syncthreads();
  if (t == 0) {
    value[b] = before + 1;
    __threadfence();
    flag[b] = 1;
  }
  out[b * THREADS + t] = mine[t] + before;
}

int main(int argc, char** argv) {
  const int n = BLOCKS * THREADS;
  int h[n], want[n], x[n];
  for (int i = 0; i < n; ++i) x[i] = (i * 37) % 101;
  int *dx, *ex, *out, *flag, *value;
  cudaMalloc(&dx, n * sizeof(int));
  cudaMalloc(&ex, n * sizeof(int));
  cudaMalloc(&out, n * sizeof(int));
  cudaMalloc(&flag, BLOCKS * sizeof(int));
  cudaMalloc(&value, BLOCKS * sizeof(int));
  cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice);
  int status = 0;
  for (int a = 1; a < argc; ++a) {
    cudaMemset(flag, 0, BLOCKS * sizeof(int));
    if (!strcmp(argv[a], "sweeps")) {
      void* args[] = {&dx, &ex, &out};
      cudaLaunchCooperativeKernel((void*)sweeps, BLOCKS, THREADS, args, 0, 0);
      int cur[n], nxt[n];
      memcpy(cur, x, sizeof x);
      for (int r = 0; r < ROUNDS; ++r) {
        for (int i = 0; i < n; ++i) nxt[i] = cur[i] + cur[((i / THREADS + 1) % BLOCKS) * THREADS + i % THREADS];
        memcpy(cur, nxt, sizeof cur);
      }
      memcpy(want, cur, sizeof cur);
    } else {
      void* args[] = {&flag, &value, &out};
      cudaLaunchCooperativeKernel((void*)relay, BLOCKS, THREADS, args, 0, 0);
      for (int i = 0; i < n; ++i) want[i] = 1000 * (i / THREADS) + i % THREADS + i / THREADS;
    }
    cudaError_t e = cudaDeviceSynchronize();
    cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
    int wrong = e != cudaSuccess;
    for (int i = 0; i < n; ++i) wrong += h[i] != want[i];
    if (wrong) printf("%s FAIL (%d wrong)\n", argv[a], wrong);
    else printf("%s PASS\n", argv[a]);
    status |= wrong != 0;
  }
  return status;
}
