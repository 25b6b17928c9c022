// Blocks of a cooperative grid wait for each other's flags before grid.sync(), which is legal
// because a cooperative grid is co-resident: a token goes round the ring of blocks (block 0
// starts it and waits for it to come back), each block's thread 0 spinning on a volatile or an
// atomic flag. Whatever order the blocks start in, some block spins first on a flag a later
// block sets. The grid is as large as the occupancy API says fits; one block more is refused.
// A normal launch with atomics in a loop checks that spinning support leaves it as it was.
#include <cooperative_groups.h>
#include <cstdio>
namespace cg = cooperative_groups;

__device__ void wait_volatile(volatile int* flag) {
  while (*flag == 0) {
  }
}

__device__ void wait_atomic(int* flag) {
  for (;;)
    if (atomicAdd(flag, 0) != 0) break;
}

__global__ void ring(int* flags, unsigned* acc, unsigned* seen, int atomic_wait) {
  cg::grid_group grid = cg::this_grid();
  const unsigned b = blockIdx.x, nb = gridDim.x;
  if (threadIdx.x == 0) {
    if (b == 0) {
      *acc = 1;
      __threadfence();
      atomicExch(&flags[1 % nb], 1);
    }
    if (atomic_wait) wait_atomic(&flags[b]); else wait_volatile(&flags[b]);
    __threadfence();
    *acc = *acc * 31u + (b == 0 ? 1000u : b);
    __threadfence();
    if (b != 0) atomicExch(&flags[(b + 1) % nb], 1);
  }
  __syncthreads();
  grid.sync();
  seen[b * blockDim.x + threadIdx.x] = *acc;
}

__global__ void histogram(const int* x, int n, int* bins) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) atomicAdd(&bins[x[i] % 8], 1);
}

int main() {
  const int threads = 128;
  int coop = 0, per_sm = 0, sms = 0;
  cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, 0);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, ring, threads, 0);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const int nb = per_sm * sms;
  int* flags;
  unsigned *acc, *seen;
  cudaMalloc(&flags, (nb + 1) * sizeof(int));
  cudaMalloc(&acc, sizeof(unsigned));
  cudaMalloc(&seen, (nb + 1) * threads * sizeof(unsigned));
  unsigned want = 1;
  for (int b = 1; b < nb; ++b) want = want * 31u + b;
  want = want * 31u + 1000u;
  for (int atomic_wait = 0; atomic_wait < 2; ++atomic_wait) {
    cudaMemset(flags, 0, (nb + 1) * sizeof(int));
    cudaMemset(seen, 0, nb * threads * sizeof(unsigned));
    void* args[] = {&flags, &acc, &seen, &atomic_wait};
    cudaError_t e = cudaLaunchCooperativeKernel(ring, dim3(nb), dim3(threads), args);
    cudaError_t s = cudaDeviceSynchronize();
    unsigned* h = new unsigned[nb * threads];
    cudaMemcpy(h, seen, nb * threads * sizeof(unsigned), cudaMemcpyDeviceToHost);
    int agree = 0;
    for (int i = 0; i < nb * threads; ++i) agree += h[i] == want;
    printf("%s launch %s sync %s agree %d of %d\n", atomic_wait ? "atomic" : "volatile", cudaGetErrorName(e),
           cudaGetErrorName(s), agree, nb * threads);
    delete[] h;
  }
  int atomic_wait = 0;
  void* args[] = {&flags, &acc, &seen, &atomic_wait};
  cudaError_t big = cudaLaunchCooperativeKernel(ring, dim3(nb + 1), dim3(threads), args);
  printf("cooperative %d grid %d = %d x %d, one more: %s\n", coop, nb, per_sm, sms, cudaGetErrorName(big));
  cudaGetLastError();

  const int n = 10000;
  int *x, *bins, hx[n], hb[8], want_bins[8] = {0};
  for (int i = 0; i < n; ++i) hx[i] = (i * 7919) % 1000, want_bins[hx[i] % 8]++;
  cudaMalloc(&x, sizeof hx);
  cudaMalloc(&bins, sizeof hb);
  cudaMemcpy(x, hx, sizeof hx, cudaMemcpyHostToDevice);
  cudaMemset(bins, 0, sizeof hb);
  histogram<<<4, 64>>>(x, n, bins);
  cudaMemcpy(hb, bins, sizeof hb, cudaMemcpyDeviceToHost);
  int same = 0;
  for (int i = 0; i < 8; ++i) same += hb[i] == want_bins[i];
  printf("normal launch %s bins right %d of 8\n", cudaGetErrorName(cudaGetLastError()), same);
  return 0;
}
