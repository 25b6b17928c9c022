// Threads of one block waiting for each other without a barrier (legal since Volta, whose
// threads are scheduled independently): a flag polled through volatile or through atomics, two
// warps passing a token back and forth, a spin-lock around a counter, and a loop written in a
// macro; a device assert while a thread spins, and a flag nobody sets (which hangs, as on a GPU);
// blocks of a launch that wait for each other.
// Every case checks its own result and prints "<case> ok" or "<case> WRONG"; the arguments name
// the cases, run in that order. Built with nvcc as it stands:  nvcc -o block_spin block_spin.cu
#include <cassert>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

#define WAIT_UNTIL_SET(flag) while (atomicAdd((flag), 0) == 0) { }
#define SPIN_UNTIL(cond) \
  do {                   \
  } while (!(cond))

// Thread 0 waits for thread 32 (a later thread in the forward order) and thread 63 for thread
// 31 (later in the reverse order); each then reads what its partner wrote before the flag.
__global__ void flag_volatile(int* out) {
  __shared__ volatile int ready[2];
  __shared__ int data[2];
  const int t = threadIdx.x;
  if (t == 0) ready[0] = ready[1] = 0;
  __syncthreads();
  if (t == 32) { data[0] = 320; __threadfence_block(); ready[0] = 1; }
  if (t == 31) { data[1] = 310; __threadfence_block(); ready[1] = 1; }
  if (t == 0) { while (ready[0] == 0) { } out[0] = data[0]; }
  if (t == 63) { while (!ready[1]) { } out[1] = data[1]; }
}

// The same through atomics on global memory, in a kernel with no barrier at all.
__global__ void flag_atomic(int* flags, int* data, int* out) {
  const int t = threadIdx.x;
  if (t == 32) { data[0] = 321; __threadfence(); atomicAdd(&flags[0], 1); }
  if (t == 31) { data[1] = 311; __threadfence(); atomicAdd(&flags[1], 1); }
  if (t == 0) { while (atomicAdd(&flags[0], 0) == 0) { } out[0] = data[0]; }
  if (t == 63) { do { } while (atomicOr(&flags[1], 0) == 0); out[1] = data[1]; }
}

// Warps 0 and 1 take turns: warp w runs round r when turn == 2r + w; its lanes agree on a value
// by a shuffle, lane 0 logs it and hands the turn on.
__global__ void token(int* log, int rounds) {
  __shared__ volatile int turn;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) turn = 0;
  __syncthreads();
  for (int r = 0; r < rounds; ++r) {
    const int mine = 2 * r + warp;
    while (turn != mine) { }
    const int v = __shfl_sync(0xffffffffu, 1000 * mine + lane, 0);
    if (lane == 0) { log[mine] = v + warp; __threadfence_block(); turn = mine + 1; }
    __syncwarp();
  }
}

// Lane 0 of each warp takes a block-wide lock and its warp appends one value per lane to a list
// while the lock is held (the critical section has warp operations, so the holder waits there
// for its own lanes while another warp's lane 0 spins on the lock).
__global__ void lock_warps(int* lock, int* count, int* list) {
  const int lane = threadIdx.x % 32;
  if (lane == 0) while (atomicCAS(lock, 0, 1) != 0) { }
  __syncwarp();
  int n = 0;
  if (lane == 0) n = *(volatile int*)count;
  n = __shfl_sync(0xffffffffu, n, 0);
  list[n + lane] = threadIdx.x;
  __syncwarp();
  if (lane == 0) { *(volatile int*)count = n + 32; __threadfence(); atomicExch(lock, 0); }
}

// Every thread takes the lock for its own increment: lanes of one warp contend (Volta+; see the
// README's portability note).
__global__ void lock_threads(int* lock, int* counter) {
  bool done = false;
  while (!done) {
    if (atomicCAS(lock, 0, 1) == 0) {
      *(volatile int*)counter = *(volatile int*)counter + 1;
      __threadfence();
      atomicExch(lock, 0);
      done = true;
    }
  }
}

// The wait is a macro's loop: one that polls by itself, one whose condition is an argument.
__global__ void flag_macro(int* flags, int* data, int* out) {
  const int t = threadIdx.x;
  if (t == 40) { data[0] = 400; __threadfence(); atomicAdd(&flags[0], 1); }
  if (t == 31) { data[1] = 310; __threadfence(); atomicAdd(&flags[1], 1); }
  if (t == 0) { WAIT_UNTIL_SET(&flags[0]); out[0] = data[0]; }
  if (t == 63) { SPIN_UNTIL(atomicAdd(&flags[1], 0) != 0); out[1] = data[1]; }
}

// Thread 0 waits for a flag thread 32 would set after an assertion that fails: the launch ends.
__global__ void assert_wait(int* flag) {
  if (threadIdx.x == 32) {
    assert(*flag == 1);
    atomicExch(flag, 2);
  }
  if (threadIdx.x == 0) while (atomicAdd(flag, 0) != 2) { }
}

// Nobody sets the flag: on a GPU the kernel never ends.
__global__ void never(volatile int* flag) {
  if (threadIdx.x == 0) while (*flag == 0) { }
}

// Blocks of a normal launch waiting for other blocks (no cooperative launch): graph codes such
// as ECL-MIS wait for vertices other blocks own. On a GPU the blocks of a grid it holds at once
// run side by side. last_sets: every block but the last polls a flag the last block sets (through
// atomics). ring: block b waits for block b+1's token, block 0 starts the ring and waits for it
// to come round. beyond: block 0 waits for the last block of a grid larger than the device holds
// at once (64 blocks of 1024 threads; 8 fit on the 4 SMs the emulator reports): it hangs there.
__global__ void last_sets(int* flag, int* out) {
  if (blockIdx.x == gridDim.x - 1) {
    if (threadIdx.x == 0) atomicExch(flag, 1);
  } else {
    while (atomicAdd(flag, 0) == 0) { }
    if (threadIdx.x == 0) out[blockIdx.x] = 1;
  }
}

__global__ void ring(volatile int* token, int* out) {
  const int b = blockIdx.x, next = (b + 1) % gridDim.x;
  if (threadIdx.x == 0) {
    if (b != 0) while (token[next] == 0) { }
    out[b] = b + 1;
    __threadfence();
    token[b] = 1;
    if (b == 0) while (token[next] == 0) { }
  }
}

// shared_kept: each block fills a __shared__ tile, waits for the last block, then reads the tile
// back (a build that keeps one __shared__ for every block must keep each block's own across the
// others' turns). lost_after_wait: after the wait every thread of a block adds one to its block's
// counter without an atomic: lost updates on a GPU, which the race build must see.
__global__ void shared_kept(int* flag, int* out) {
  __shared__ int tile[64];
  tile[threadIdx.x] = blockIdx.x + 1;
  __syncthreads();
  if (blockIdx.x == gridDim.x - 1) {
    if (threadIdx.x == 0) atomicExch(flag, 1);
  } else {
    while (atomicAdd(flag, 0) == 0) { }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    int s = 0;
    for (int i = 0; i < 64; ++i) s += tile[i];
    out[blockIdx.x] = s == 64 * (int)(blockIdx.x + 1);
  }
}

__global__ void lost_after_wait(int* flag, int* count) {
  if (blockIdx.x == gridDim.x - 1) {
    if (threadIdx.x == 0) atomicExch(flag, 1);
  } else {
    while (atomicAdd(flag, 0) == 0) { }
  }
  count[blockIdx.x] += 1;
}

__global__ void beyond(volatile int* flag) {
  if (blockIdx.x == gridDim.x - 1) {
    if (threadIdx.x == 0) *flag = 1;
  } else if (threadIdx.x == 0) {
    while (*flag == 0) { }
  }
}

static int* zeros(int n) {
  int* p = nullptr;
  cudaMalloc(&p, n * sizeof(int));
  cudaMemset(p, 0, n * sizeof(int));
  return p;
}

static int finish(const char* name, bool ok) {
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) ok = false;
  printf("%s %s (%s)\n", name, ok ? "ok" : "WRONG", cudaGetErrorString(e));
  return ok ? 0 : 1;
}

static int run(const char* which) {
  int h[256];
  if (!strcmp(which, "flag_volatile") || !strcmp(which, "flag_atomic") || !strcmp(which, "flag_macro")) {
    int *flags = zeros(2), *data = zeros(2), *out = zeros(2);
    bool ok;
    if (!strcmp(which, "flag_volatile")) {
      flag_volatile<<<2, 64>>>(out);
      cudaMemcpy(h, out, 2 * sizeof(int), cudaMemcpyDeviceToHost);
      ok = h[0] == 320 && h[1] == 310;
    } else if (!strcmp(which, "flag_atomic")) {
      flag_atomic<<<1, 64>>>(flags, data, out);
      cudaMemcpy(h, out, 2 * sizeof(int), cudaMemcpyDeviceToHost);
      ok = h[0] == 321 && h[1] == 311;
    } else {
      flag_macro<<<1, 64>>>(flags, data, out);
      cudaMemcpy(h, out, 2 * sizeof(int), cudaMemcpyDeviceToHost);
      ok = h[0] == 400 && h[1] == 310;
    }
    return finish(which, ok);
  }
  if (!strcmp(which, "token")) {
    const int rounds = 8;
    int* log = zeros(2 * rounds);
    token<<<3, 64>>>(log, rounds);  // three blocks log the same values
    cudaMemcpy(h, log, 2 * rounds * sizeof(int), cudaMemcpyDeviceToHost);
    bool ok = true;
    for (int i = 0; i < 2 * rounds; ++i) ok &= h[i] == 1000 * i + (i % 2);
    return finish(which, ok);
  }
  if (!strcmp(which, "lock_warps")) {
    int *lock = zeros(1), *count = zeros(1), *list = zeros(128);
    lock_warps<<<1, 128>>>(lock, count, list);
    int n = 0;
    cudaMemcpy(&n, count, sizeof(int), cudaMemcpyDeviceToHost);
    cudaMemcpy(h, list, 128 * sizeof(int), cudaMemcpyDeviceToHost);
    // each warp's 32 values sit together, in lane order, in some order of warps
    bool ok = n == 128, seen[4] = {false, false, false, false};
    for (int s = 0; s < 4 && ok; ++s) {
      const int w = h[32 * s] / 32;
      ok = h[32 * s] % 32 == 0 && w < 4 && !seen[w];
      if (ok) seen[w] = true;
      for (int l = 0; l < 32 && ok; ++l) ok = h[32 * s + l] == 32 * w + l;
    }
    return finish(which, ok);
  }
  if (!strcmp(which, "lock_threads")) {
    int *lock = zeros(1), *counter = zeros(1);
    lock_threads<<<4, 96>>>(lock, counter);
    cudaMemcpy(h, counter, sizeof(int), cudaMemcpyDeviceToHost);
    return finish(which, h[0] == 4 * 96);
  }
  if (!strcmp(which, "assert_wait")) {  // last: a device assert leaves the context unusable
    int* flag = zeros(1);
    assert_wait<<<1, 64>>>(flag);
    const bool ok = cudaDeviceSynchronize() == cudaErrorAssert;
    printf("%s %s\n", which, ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
  }
  if (!strcmp(which, "last_sets") || !strcmp(which, "ring") || !strcmp(which, "shared_kept") ||
      !strcmp(which, "lost_after_wait")) {
    const int nb = 12;
    int *flag = zeros(nb), *out = zeros(nb);
    int want = 0, got = 0;
    if (!strcmp(which, "last_sets")) {
      last_sets<<<nb, 64>>>(flag, out);
      want = nb - 1;
    } else if (!strcmp(which, "ring")) {
      ring<<<nb, 32>>>(flag, out);
      want = nb * (nb + 1) / 2;
    } else if (!strcmp(which, "shared_kept")) {
      shared_kept<<<nb, 64>>>(flag, out);
      want = nb;
    } else {
      lost_after_wait<<<nb, 64>>>(flag, out);
      want = nb * 64;
    }
    cudaMemcpy(h, out, nb * sizeof(int), cudaMemcpyDeviceToHost);
    for (int b = 0; b < nb; ++b) got += h[b];
    return finish(which, got == want);
  }
  if (!strcmp(which, "beyond")) {
    int* flag = zeros(1);
    beyond<<<64, 1024>>>(flag);
    return finish(which, true);
  }
  if (!strcmp(which, "never")) {
    int* flag = zeros(1);
    never<<<1, 32>>>(flag);
    return finish(which, false);
  }
  fprintf(stderr, "unknown case %s\n", which);
  return 2;
}

int main(int argc, char** argv) {
  int status = argc > 1 ? 0 : 2;
  for (int i = 1; i < argc; ++i) {
    status |= run(argv[i]);
    fflush(stdout);
  }
  return status;
}
