// Kernels for the race build (tests/validators/test_cpu_race.py): `./prog NAME` runs one.
// Racy ones write one location from two threads with different values and nothing ordering
// the writes; clean ones are ordered (barrier, warp operation, atomics, fence, launch) or
// write the same value.
#include <cooperative_groups.h>
#include <cstdio>
#include <cstring>
namespace cg = cooperative_groups;

__device__ int counter;

__global__ void shared_hist(const int* in, int* out) {
  __shared__ int bins[4];
  if (threadIdx.x < 4) bins[threadIdx.x] = 0;
  __syncthreads();
  bins[in[threadIdx.x] & 3]++;  // RACE-SHARED
  __syncthreads();
  if (threadIdx.x < 4) atomicAdd(&out[threadIdx.x], bins[threadIdx.x]);
}
__global__ void cross_block_sum(const int* in, int* out) {
  if (threadIdx.x == 0) *out += in[blockIdx.x];  // RACE-GLOBAL
}
__global__ void check_then_store_max(const int* in, int* out) {
  int v = in[threadIdx.x];
  if (v > *out) *out = v;  // RACE-MAX
}
// Four threads accumulate each out[r]; every thread's first step adds zero, so its first
// store is the value already there (benign on its own) and the updates after it are lost.
__global__ void zero_first_step(const int* in, int* out) {
  for (int j = 0; j < 4; ++j)
    out[threadIdx.x / 4] += j * in[threadIdx.x / 4 + 1];  // RACE-ZERO-FIRST
}
__global__ void device_variable(int* out) {
  counter += 1;  // RACE-DEVICE-VAR
  out[0] = 0;
}
__global__ void dynamic_shared(int* out) {
  extern __shared__ int buf[];
  if (threadIdx.x == 0) buf[0] = 0;
  __syncthreads();
  buf[0] += threadIdx.x;  // RACE-DYNAMIC
  __syncthreads();
  if (threadIdx.x == 0) out[0] = buf[0];
}
__global__ void lanes_unsynced(int* out) {
  __shared__ int s;
  if (threadIdx.x < 2) s = threadIdx.x + 1;  // RACE-LANES
  __syncthreads();
  if (threadIdx.x == 0) out[0] = s;
}

// ---- clean
__global__ void same_value_flag(const int* in, int* found) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (in[i] > 2) *found = 1;
}
__global__ void tree_reduce(const int* in, int* out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  s[t] = in[blockIdx.x * 64 + t];
  __syncthreads();
  for (int k = 32; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t == 0) atomicAdd(out, s[0]);
}
__global__ void shuffle_reduce(const int* in, int* out) {
  int v = in[blockIdx.x * blockDim.x + threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, v);
}
__global__ void syncwarp_ordered(int* out) {
  __shared__ int s;
  if (threadIdx.x == 0) s = 1;
  __syncwarp();
  if (threadIdx.x == 1) s = s + 1;
  __syncwarp();
  if (threadIdx.x == 2) s = s * 10;
  __syncthreads();
  if (threadIdx.x == 0) out[0] = s;
}
__global__ void barrier_ordered(int* out) {
  __shared__ int s;
  if (threadIdx.x == 0) s = 5;
  __syncthreads();
  if (threadIdx.x == 1) s = s + 2;
  __syncthreads();
  if (threadIdx.x == 2) out[0] = s;
}
__device__ int lock_word;
__global__ void locked_update(const int* in, int* out) {
  if (threadIdx.x == 0) {
    while (atomicCAS(&lock_word, 0, 1) != 0) {}
    *out += in[blockIdx.x];
    __threadfence();
    atomicExch(&lock_word, 0);
  }
}
__device__ unsigned int done_blocks;
__global__ void last_block(const int* in, int* partial, int* out) {
  __shared__ bool last;
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = in[blockIdx.x];
    __threadfence();
    last = atomicInc(&done_blocks, gridDim.x) == gridDim.x - 1;
  }
  __syncthreads();
  if (last && threadIdx.x == 0) {
    int s = 0;
    for (int b = 0; b < gridDim.x; ++b) s += partial[b];
    *out = s;
  }
}
__global__ void write_value(int* out, int v) {
  if (threadIdx.x == 0 && blockIdx.x == 0) *out = v;
}
__global__ void grid_stride(int* out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = i;
}
__global__ void shared_per_block(int* out) {
  __shared__ int s;
  if (threadIdx.x == 0) s = blockIdx.x + 1;
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}
__global__ void device_heap(int* out) {
  // freed memory comes back to the next thread: its writes are not compared with the last owner's
  volatile int* p = (volatile int*)malloc(4 * sizeof(int));
  p[0] = threadIdx.x;
  out[threadIdx.x] = p[0];
  free((void*)p);
}
// Shared memory declared at file scope (as cuda-samples' dct8x8 declares its tiles in a
// header): per block like a kernel's own, though the rewrite cannot name it to the runtime.
__shared__ int fs_tile[32];
__shared__ int fs_acc;
__global__ void file_shared_per_block(int* out) {
  fs_tile[threadIdx.x] = blockIdx.x + 1;
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = fs_tile[31];
}
__global__ void file_shared_unsynced(int* out) {
  if (threadIdx.x == 0) fs_acc = 0;
  __syncthreads();
  fs_acc = fs_acc + 1;  // RACE-FILE-SHARED
  __syncthreads();
  if (threadIdx.x == 0) *out = fs_acc;
}
__global__ void phases(int* out) {
  cg::grid_group g = cg::this_grid();
  if (threadIdx.x == 0 && blockIdx.x == 0) out[0] = 1;
  g.sync();
  if (threadIdx.x == 0 && blockIdx.x == 1) out[0] = out[0] + 1;
}

int main(int argc, char** argv) {
  const char* k = argc > 1 ? argv[1] : "";
  int h[256];
  for (int i = 0; i < 256; ++i) h[i] = (i * 7) % 5;
  int *in, *out, *part;
  cudaMalloc(&in, sizeof h);
  cudaMalloc(&out, 1024 * sizeof(int));
  cudaMalloc(&part, 64 * sizeof(int));
  cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice);
  cudaMemset(out, 0, 1024 * sizeof(int));
  if (!strcmp(k, "shared_hist")) shared_hist<<<2, 64>>>(in, out);
  else if (!strcmp(k, "cross_block_sum")) cross_block_sum<<<4, 32>>>(in, out);
  else if (!strcmp(k, "check_then_store_max")) check_then_store_max<<<1, 64>>>(in, out);
  else if (!strcmp(k, "zero_first_step")) zero_first_step<<<1, 32>>>(in, out);
  else if (!strcmp(k, "device_variable")) device_variable<<<1, 8>>>(out);
  else if (!strcmp(k, "dynamic_shared")) dynamic_shared<<<1, 32, 64>>>(out);
  else if (!strcmp(k, "lanes_unsynced")) lanes_unsynced<<<1, 32>>>(out);
  else if (!strcmp(k, "same_value_flag")) same_value_flag<<<4, 64>>>(in, out);
  else if (!strcmp(k, "tree_reduce")) tree_reduce<<<4, 64>>>(in, out);
  else if (!strcmp(k, "shuffle_reduce")) shuffle_reduce<<<2, 128>>>(in, out);
  else if (!strcmp(k, "syncwarp_ordered")) syncwarp_ordered<<<1, 32>>>(out);
  else if (!strcmp(k, "barrier_ordered")) barrier_ordered<<<1, 64>>>(out);
  else if (!strcmp(k, "locked_update")) locked_update<<<8, 32>>>(in, out);
  else if (!strcmp(k, "last_block")) last_block<<<8, 32>>>(in, part, out);
  else if (!strcmp(k, "two_launches")) { write_value<<<1, 32>>>(out, 3); write_value<<<1, 32>>>(out, 4); }
  else if (!strcmp(k, "grid_stride")) grid_stride<<<4, 64>>>(out, 1000);
  else if (!strcmp(k, "shared_per_block")) shared_per_block<<<8, 32>>>(out);
  else if (!strcmp(k, "device_heap")) device_heap<<<1, 32>>>(out);
  else if (!strcmp(k, "file_shared_per_block")) file_shared_per_block<<<8, 32>>>(out);
  else if (!strcmp(k, "file_shared_unsynced")) file_shared_unsynced<<<1, 32>>>(out);
  else if (!strcmp(k, "phases")) {
    void* args[] = {&out};
    cudaLaunchCooperativeKernel(phases, 2, 32, args);
  } else { printf("unknown kernel %s\n", k); return 2; }
  int r[8];
  if (cudaMemcpy(r, out, sizeof r, cudaMemcpyDeviceToHost) != cudaSuccess) return 3;
  printf("%s out=%d %d\n", k, r[0], r[1]);
  return 0;
}
