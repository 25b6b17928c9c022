// Implicit warp-synchronous reductions (volatile shared memory, no __syncwarp), as the CUDA
// reduction sample, HeCBench's logan and chacha20 and many scraped kernels write them. Sums,
// so that a lane reading a slot another lane already updated in the same step (a result no
// converged warp gives) shows; and a warp scan over zeroed padding. Prints PASS when every form gives
// the host's sums.
#include <cstdio>
#include <cuda_runtime.h>

template <unsigned B>
__device__ void warpReduce(volatile int* s, unsigned t) {
  if (B >= 64) s[t] += s[t + 32];
  if (B >= 32) s[t] += s[t + 16];
  if (B >= 16) s[t] += s[t + 8];
  if (B >= 8) s[t] += s[t + 4];
  if (B >= 4) s[t] += s[t + 2];
  if (B >= 2) s[t] += s[t + 1];
}

template <unsigned B>
__global__ void reduce_classic(const int* in, int* out) {
  __shared__ int s[B];
  unsigned t = threadIdx.x;
  s[t] = in[blockIdx.x * B + t];
  __syncthreads();
  for (unsigned k = B / 2; k > 32; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t < 32) warpReduce<B>(s, t);
  if (t == 0) out[blockIdx.x] = s[0];
}

// The reduction sample's register form: the running sum is stored on every step.
__global__ void reduce_register(const int* in, int* out) {
  __shared__ int sdata[64];
  unsigned tid = threadIdx.x;
  int mySum = in[blockIdx.x * 64 + tid];
  sdata[tid] = mySum;
  __syncthreads();
  if (tid < 32) {
    volatile int* smem = sdata;
    smem[tid] = mySum = mySum + smem[tid + 32];
    smem[tid] = mySum = mySum + smem[tid + 16];
    smem[tid] = mySum = mySum + smem[tid + 8];
    smem[tid] = mySum = mySum + smem[tid + 4];
    smem[tid] = mySum = mySum + smem[tid + 2];
    smem[tid] = mySum = mySum + smem[tid + 1];
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// Half a warp in a loop, the other half waiting at the barrier.
__global__ void reduce_half_loop(const int* in, int* out) {
  __shared__ volatile int v[32];
  unsigned t = threadIdx.x;
  v[t] = in[blockIdx.x * 32 + t];
  __syncthreads();
  if (t < 16)
    for (int o = 16; o > 0; o >>= 1) v[t] += v[t + o];
  __syncthreads();
  if (t == 0) out[blockIdx.x] = v[0];
}

// Through a cast to a pointer to volatile, the shared array itself declared plain; the last steps
// in a macro.
#define WARP_ADD(s, t, o) ((volatile int*)(s))[t] += ((volatile int*)(s))[(t) + (o)]
__global__ void reduce_cast(const int* in, int* out) {
  __shared__ int s[64];
  unsigned t = threadIdx.x;
  s[t] = in[blockIdx.x * 64 + t];
  __syncthreads();
  if (t < 32) {
    ((volatile int*)s)[t] += ((volatile int*)s)[t + 32];
    ((volatile int*)s)[t] += ((volatile int*)s)[t + 16];
    ((volatile int*)(s))[t] += ((volatile int*)(s))[t + 8];
    ((volatile int*)s)[t] += ((volatile int*)s)[t + 4];
    WARP_ADD(s, t, 2);
    if (t < 32) WARP_ADD(s, t, 1); else s[t] = 0;
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

// The CUDA SDK's warp scan (inclusive prefix sums): each lane zeroes a padding slot below its
// own, then adds its neighbours' slots; lane 1's first step reads the padding lane 31 zeroed, so
// every lane's stores before the first exchange must be there when any lane reads.
__global__ void scan_padded(const int* in, int* out) {
  volatile __shared__ int s[64];
  unsigned lane = threadIdx.x, idx = lane + 32;
  s[lane] = 12345;  // stale contents under the padding
  s[idx] = 12345;
  __syncthreads();
  s[lane] = 0;
  s[idx] = in[blockIdx.x * 32 + lane];
  s[idx] += s[idx - 1];
  s[idx] += s[idx - 2];
  s[idx] += s[idx - 4];
  s[idx] += s[idx - 8];
  s[idx] += s[idx - 16];
  out[blockIdx.x * 32 + lane] = s[idx];
}

int main() {
  const int n = 4 * 256;
  int h[n], sums[4][4], got[4][4];
  for (int i = 0; i < n; i++) h[i] = (i * 7919) % 1009 - 500;
  for (int b = 0; b < 4; b++) {
    sums[0][b] = sums[1][b] = sums[2][b] = sums[3][b] = 0;
    for (int i = 0; i < 256; i++) sums[0][b] += h[b * 256 + i];
    for (int i = 0; i < 64; i++) sums[1][b] += h[b * 64 + i];
    sums[3][b] = sums[1][b];
    for (int i = 0; i < 32; i++) sums[2][b] += h[b * 32 + i];
  }
  int *d_in, *d_out;
  cudaMalloc(&d_in, sizeof h);
  cudaMalloc(&d_out, sizeof got);
  cudaMemcpy(d_in, h, sizeof h, cudaMemcpyHostToDevice);
  reduce_classic<256><<<4, 256>>>(d_in, d_out);
  reduce_register<<<4, 64>>>(d_in, d_out + 4);
  reduce_half_loop<<<4, 32>>>(d_in, d_out + 8);
  reduce_cast<<<4, 64>>>(d_in, d_out + 12);
  cudaMemcpy(got, d_out, sizeof got, cudaMemcpyDeviceToHost);
  bool ok = true;
  for (int k = 0; k < 4; k++)
    for (int b = 0; b < 4; b++)
      if (got[k][b] != sums[k][b]) {
        printf("form %d block %d: %d, expected %d\n", k, b, got[k][b], sums[k][b]);
        ok = false;
      }
  int scanned[4 * 32], *d_scan;
  cudaMalloc(&d_scan, sizeof scanned);
  scan_padded<<<4, 32>>>(d_in, d_scan);
  cudaMemcpy(scanned, d_scan, sizeof scanned, cudaMemcpyDeviceToHost);
  for (int b = 0; b < 4; b++)
    for (int i = 0, sum = 0; i < 32; i++) {
      sum += h[b * 32 + i];
      if (scanned[b * 32 + i] != sum) {
        printf("scan block %d lane %d: %d, expected %d\n", b, i, scanned[b * 32 + i], sum);
        ok = false;
      }
    }
  printf("%s\n", ok ? "PASS" : "FAIL");
  return 0;
}
