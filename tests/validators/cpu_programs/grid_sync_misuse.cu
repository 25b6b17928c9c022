// Misuses of grid synchronisation, one per MODE:
// 1: a cooperative grid larger than the device holds; 2: grid.sync() in a normal launch;
// 3: threads of a block return before a grid.sync() the others wait at; 4: a whole block does;
// 5: the grid group's numbers in a cooperative and a normal launch; 6: a kernel cast to void* (runs).
#include <cooperative_groups.h>
#include <cstdio>
namespace cg = cooperative_groups;
#ifndef MODE
#define MODE 1
#endif

__global__ void step(int* x) {
  cg::grid_group grid = cg::this_grid();
#if MODE == 3
  if (threadIdx.x == 5) return;
#elif MODE == 4
  if (blockIdx.x == 2) return;
#endif
  x[grid.thread_rank()] = 1;
  grid.sync();
  x[grid.thread_rank()] += 1;
}

__global__ void numbers(unsigned long long* v) {
  cg::grid_group grid = cg::this_grid();
  unsigned long long r = grid.thread_rank();
  v[5 * r + 0] = r;
  v[5 * r + 1] = grid.size();
  v[5 * r + 2] = grid.num_blocks();
  v[5 * r + 3] = grid.block_rank();
  v[5 * r + 4] = grid.is_valid();
}

int main() {
  int* x;
  cudaMalloc(&x, 1 << 20);
#if MODE == 1
  int per_sm = 0, sms = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, step, 256, 0);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  void* args[] = {&x};
  cudaError_t ok = cudaLaunchCooperativeKernel(step, dim3(per_sm * sms), dim3(256), args);
  cudaDeviceSynchronize();
  cudaError_t big = cudaLaunchCooperativeKernel(step, dim3(per_sm * sms + 1), dim3(256), args);
  printf("per_sm %d sms %d fits %s too_large %s last %s\n", per_sm, sms, cudaGetErrorName(ok), cudaGetErrorName(big),
         cudaGetErrorName(cudaGetLastError()));
#elif MODE == 2
  step<<<4, 32>>>(x);
  cudaDeviceSynchronize();
  printf("finished\n");
#elif MODE == 3 || MODE == 4
  void* args[] = {&x};
  cudaLaunchCooperativeKernel(step, dim3(4), dim3(32), args);
  cudaDeviceSynchronize();
  printf("finished\n");
#elif MODE == 6
  void* args[] = {&x};
  cudaError_t e = cudaLaunchCooperativeKernel((void*)step, dim3(4), dim3(32), args, 0, 0);
  int h[128];
  cudaMemcpy(h, x, sizeof h, cudaMemcpyDeviceToHost);
  int sum = 0;
  for (int i = 0; i < 128; i++) sum += h[i];
  printf("%s %d\n", cudaGetErrorName(e), sum);
#else
  unsigned long long* v;
  cudaMalloc(&v, 2 * 3 * 5 * 8 * sizeof(unsigned long long));
  void* args[] = {&v};
  cudaLaunchCooperativeKernel(numbers, dim3(3, 1, 1), dim3(4, 2, 1), args);
  unsigned long long h[3 * 8 * 5];
  cudaMemcpy(h, v, sizeof h, cudaMemcpyDeviceToHost);
  for (int i = 0; i < 24; ++i) printf("%llu %llu %llu %llu %llu\n", h[5 * i], h[5 * i + 1], h[5 * i + 2], h[5 * i + 3], h[5 * i + 4]);
  numbers<<<3, 8>>>(v);
  cudaMemcpy(h, v, sizeof h, cudaMemcpyDeviceToHost);
  printf("normal launch is_valid %llu\n", h[4]);
#endif
  return 0;
}
