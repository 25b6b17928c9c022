// libcu++'s block synchronisation objects (issue 26): cuda::barrier with split arrive/wait, a
// __shared__ barrier initialised by thread 0, arrive_and_drop, a completion function, a latch, a
// semaphore guarding a counter (block and device scope), cuda::memcpy_async with a barrier, and a
// barrier that expects more arrivals than the block makes (a deadlock). Each case checks its
// results against a host computation and prints "<case> ok"; nvcc builds it as it stands.
#include <cooperative_groups.h>
#include <cuda/barrier>
#include <cuda/latch>
#include <cuda/semaphore>
#include <cuda/std/utility>
#include <cstdio>
#include <cstring>
#include <cuda/std/barrier>
#include <new>
#include <thread>
#include <vector>
// As the Programming Guide does: a __shared__ barrier is initialised by init(), not its constructor.
#pragma nv_diag_suppress static_var_with_dynamic_init
namespace cg = cooperative_groups;
using block_barrier = cuda::barrier<cuda::thread_scope_block>;

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

// Warp 0 produces each round's tile, every thread consumes all of it: split arrive/wait on one
// barrier, arrive_and_wait on the other before the tile is overwritten.
__global__ void producer_consumer(const int* in, int* out, int rounds) {
  __shared__ int tile[32];
  __shared__ block_barrier filled, drained;
  if (threadIdx.x == 0) { init(&filled, blockDim.x); init(&drained, blockDim.x); }
  __syncthreads();
  for (int r = 0; r < rounds; ++r) {
    if (threadIdx.x < 32) tile[threadIdx.x] = in[r * 32 + threadIdx.x] * (int)(blockIdx.x + 1);
    block_barrier::arrival_token t = filled.arrive();
    filled.wait(cuda::std::move(t));
    int acc = 0;
    for (int i = 0; i < 32; ++i) acc += tile[(i + threadIdx.x) % 32] * (i + 1);
    out[(blockIdx.x * rounds + r) * blockDim.x + threadIdx.x] = acc;
    drained.arrive_and_wait();
  }
}

// A completion function counts the phases; thread 0 initialises the __shared__ barrier.
struct Count {
  int* phases;
  __device__ void operator()() noexcept { ++*phases; }
};
__global__ void completion(int* out, int rounds) {
  __shared__ int phases;
  __shared__ cuda::barrier<cuda::thread_scope_block, Count> bar;
  if (threadIdx.x == 0) { phases = 0; init(&bar, blockDim.x, Count{&phases}); }
  __syncthreads();
  for (int r = 0; r < rounds; ++r) {
    int seen = phases;
    bar.arrive_and_wait();
    if (phases != seen + 1) atomicAdd(out, 1000);  // every thread saw the phase complete once
  }
  if (threadIdx.x == 0) out[1 + blockIdx.x] = phases;
}

// Threads with an odd index leave after one phase (arrive_and_drop); the rest keep meeting.
__global__ void drop(int* out, int rounds) {
  __shared__ block_barrier bar;
  __shared__ int sum;
  if (threadIdx.x == 0) { init(&bar, blockDim.x); sum = 0; }
  __syncthreads();
  if (threadIdx.x % 2 == 1) {
    atomicAdd(&sum, 1);
    bar.arrive_and_drop();
    return;
  }
  for (int r = 0; r < rounds; ++r) {
    atomicAdd(&sum, 1);
    bar.arrive_and_wait();
    if (threadIdx.x == 0) out[blockIdx.x * rounds + r] = sum;
    bar.arrive_and_wait();
  }
}

// A latch in shared memory (placement new by thread 0): thread 0 waits for every other thread's
// write, then sums them.
__global__ void latch_sum(const int* in, int* out) {
  alignas(cuda::latch<cuda::thread_scope_block>) __shared__ unsigned char storage[sizeof(cuda::latch<cuda::thread_scope_block>)];
  __shared__ int vals[256];
  auto* l = reinterpret_cast<cuda::latch<cuda::thread_scope_block>*>(storage);
  if (threadIdx.x == 0) new (l) cuda::latch<cuda::thread_scope_block>(blockDim.x - 1);
  __syncthreads();
  if (threadIdx.x == 0) {
    l->wait();
    int s = 0;
    for (unsigned i = 1; i < blockDim.x; ++i) s += vals[i];
    out[blockIdx.x] = s;
  } else {
    vals[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x] * 3;
    l->count_down();
  }
}

// A binary semaphore of block scope guards a read-modify-write of a shared counter (a plain
// increment: mutual exclusion is what keeps it from losing updates); the counter's history is
// each thread's ticket.
__global__ void semaphore_block(int* tickets, int* total) {
  using sem_t = cuda::binary_semaphore<cuda::thread_scope_block>;
  alignas(sem_t) __shared__ unsigned char storage[sizeof(sem_t)];
  __shared__ int counter;
  auto* s = reinterpret_cast<sem_t*>(storage);
  if (threadIdx.x == 0) { new (s) sem_t(1); counter = 0; }
  __syncthreads();
  s->acquire();
  int mine = counter;
  __nanosleep(10);
  counter = mine + 1;
  tickets[blockIdx.x * blockDim.x + threadIdx.x] = mine;
  s->release();
  __syncthreads();
  if (threadIdx.x == 0) total[blockIdx.x] = counter;
}

// A semaphore of device scope in global memory guards a global counter across the grid.
__device__ cuda::binary_semaphore<cuda::thread_scope_device> g_sem(1);
__device__ int g_counter;
__global__ void semaphore_device(int* seen) {
  g_sem.acquire();
  int v = g_counter;
  g_counter = v + 1;
  g_sem.release();
  seen[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

// cuda::memcpy_async with a barrier: the block copies a tile, waits for the phase, sums it.
__global__ void async_copy(const float* in, float* out, int n) {
  __shared__ float tile[128];
  __shared__ block_barrier bar;
  auto block = cg::this_thread_block();
  if (block.thread_rank() == 0) init(&bar, block.size());
  block.sync();
  cuda::memcpy_async(block, tile, in + blockIdx.x * n, sizeof(float) * n, bar);
  bar.arrive_and_wait();
  float s = 0;
  for (int i = 0; i < n; ++i) s += tile[(i + threadIdx.x) % n];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// The same copy read before the barrier's phase completes: a race (undefined on a GPU).
__global__ void async_copy_early(const float* in, float* out, int n) {
  __shared__ float tile[128];
  __shared__ block_barrier bar;
  auto block = cg::this_thread_block();
  if (block.thread_rank() == 0) init(&bar, block.size());
  block.sync();
  cuda::memcpy_async(block, tile, in + blockIdx.x * n, sizeof(float) * n, bar);
  float early = tile[threadIdx.x % n];
  bar.arrive_and_wait();
  out[blockIdx.x * blockDim.x + threadIdx.x] = early;
}

// A barrier of device scope in global memory met by each block's thread 0: grid-wide, so it needs
// the blocks co-resident (a cooperative launch). Each leader publishes its block's value, and after
// the barrier reads its neighbour's.
__device__ cuda::barrier<cuda::thread_scope_device> g_bar;
__device__ int g_vals[64];
__global__ void init_grid_barrier(int count) { init(&g_bar, count); }
__global__ void grid_barrier(int* out) {
  if (threadIdx.x != 0) return;
  for (int r = 0; r < 3; ++r) {
    g_vals[blockIdx.x] = (int)blockIdx.x * 10 + r;
    g_bar.arrive_and_wait();
    out[r * gridDim.x + blockIdx.x] = g_vals[(blockIdx.x + 1) % gridDim.x];
    g_bar.arrive_and_wait();
  }
}

__global__ void bump(int* x) { atomicAdd(x, 1); }

// One arrival too many expected: every thread waits for ever.
__global__ void deadlock(int* out) {
  __shared__ block_barrier bar;
  if (threadIdx.x == 0) init(&bar, blockDim.x + 1);
  __syncthreads();
  bar.arrive_and_wait();
  out[threadIdx.x] = 1;
}

static int run(const char* name) {
  if (!strcmp(name, "producer_consumer")) {
    const int R = 3, B = 2, T = 64;
    std::vector<int> in(R * 32), out(B * R * T), want(B * R * T);
    for (int i = 0; i < R * 32; ++i) in[i] = (i * 7) % 23 - 5;
    for (int b = 0; b < B; ++b) for (int r = 0; r < R; ++r) for (int t = 0; t < T; ++t) {
      int acc = 0;
      for (int i = 0; i < 32; ++i) acc += in[r * 32 + (i + t) % 32] * (b + 1) * (i + 1);
      want[(b * R + r) * T + t] = acc;
    }
    int *din, *dout;
    CHECK(cudaMalloc(&din, in.size() * sizeof(int))); CHECK(cudaMalloc(&dout, out.size() * sizeof(int)));
    CHECK(cudaMemcpy(din, in.data(), in.size() * sizeof(int), cudaMemcpyHostToDevice));
    producer_consumer<<<B, T>>>(din, dout, R);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out.data(), dout, out.size() * sizeof(int), cudaMemcpyDeviceToHost));
    return out == want ? 0 : 2;
  }
  if (!strcmp(name, "completion")) {
    const int R = 5, B = 3;
    int* d; CHECK(cudaMalloc(&d, (1 + B) * sizeof(int))); CHECK(cudaMemset(d, 0, (1 + B) * sizeof(int)));
    completion<<<B, 96>>>(d, R);
    CHECK(cudaGetLastError());
    int h[1 + B]; CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    if (h[0] != 0) return 2;
    for (int b = 0; b < B; ++b) if (h[1 + b] != R) return 3;
    return 0;
  }
  if (!strcmp(name, "drop")) {
    const int R = 4, B = 2, T = 64;
    int* d; CHECK(cudaMalloc(&d, B * R * sizeof(int)));
    drop<<<B, T>>>(d, R);
    CHECK(cudaGetLastError());
    int h[B * R]; CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    // The odd threads add 1 each once; the even ones 1 each per round.
    for (int b = 0; b < B; ++b) for (int r = 0; r < R; ++r) if (h[b * R + r] != T / 2 + (r + 1) * (T / 2)) return 2;
    return 0;
  }
  if (!strcmp(name, "latch")) {
    const int B = 3, T = 128;
    std::vector<int> in(B * T); for (int i = 0; i < B * T; ++i) in[i] = (i * 13) % 31;
    int *din, *dout; CHECK(cudaMalloc(&din, in.size() * sizeof(int))); CHECK(cudaMalloc(&dout, B * sizeof(int)));
    CHECK(cudaMemcpy(din, in.data(), in.size() * sizeof(int), cudaMemcpyHostToDevice));
    latch_sum<<<B, T>>>(din, dout);
    CHECK(cudaGetLastError());
    int h[B]; CHECK(cudaMemcpy(h, dout, sizeof h, cudaMemcpyDeviceToHost));
    for (int b = 0; b < B; ++b) { int s = 0; for (int t = 1; t < T; ++t) s += 3 * in[b * T + t]; if (h[b] != s) return 2; }
    return 0;
  }
  if (!strcmp(name, "semaphore")) {
    const int B = 2, T = 96;
    int *dt, *dtot; CHECK(cudaMalloc(&dt, B * T * sizeof(int))); CHECK(cudaMalloc(&dtot, B * sizeof(int)));
    semaphore_block<<<B, T>>>(dt, dtot);
    CHECK(cudaGetLastError());
    std::vector<int> t(B * T); int tot[B];
    CHECK(cudaMemcpy(t.data(), dt, t.size() * sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(tot, dtot, sizeof tot, cudaMemcpyDeviceToHost));
    for (int b = 0; b < B; ++b) {
      if (tot[b] != T) return 2;
      std::vector<int> seen(T, 0);  // the tickets of a block are 0..T-1, each once
      for (int i = 0; i < T; ++i) { int v = t[b * T + i]; if (v < 0 || v >= T || seen[v]++) return 3; }
    }
    return 0;
  }
  if (!strcmp(name, "semaphore_device")) {
    const int B = 4, T = 64;
    int* d; CHECK(cudaMalloc(&d, B * T * sizeof(int)));
    semaphore_device<<<B, T>>>(d);
    CHECK(cudaGetLastError());
    std::vector<int> h(B * T), seen(B * T, 0);
    CHECK(cudaMemcpy(h.data(), d, h.size() * sizeof(int), cudaMemcpyDeviceToHost));
    for (int v : h) if (v < 0 || v >= B * T || seen[v]++) return 2;
    return 0;
  }
  if (!strcmp(name, "memcpy_async")) {
    const int B = 2, T = 64, N = 100;
    std::vector<float> in(B * N), out(B * T);
    for (int i = 0; i < B * N; ++i) in[i] = (float)((i * 5) % 17);
    float *din, *dout; CHECK(cudaMalloc(&din, in.size() * sizeof(float))); CHECK(cudaMalloc(&dout, out.size() * sizeof(float)));
    CHECK(cudaMemcpy(din, in.data(), in.size() * sizeof(float), cudaMemcpyHostToDevice));
    async_copy<<<B, T>>>(din, dout, N);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out.data(), dout, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    for (int b = 0; b < B; ++b) for (int t = 0; t < T; ++t) {
      float s = 0; for (int i = 0; i < N; ++i) s += in[b * N + (i + t) % N];
      if (out[b * T + t] != s) return 2;
    }
    return 0;
  }
  if (!strcmp(name, "memcpy_async_early")) {
    const int B = 2, T = 64, N = 100;
    std::vector<float> in(B * N), out(B * T);
    for (int i = 0; i < B * N; ++i) in[i] = (float)((i * 5) % 17);
    float *din, *dout; CHECK(cudaMalloc(&din, in.size() * sizeof(float))); CHECK(cudaMalloc(&dout, out.size() * sizeof(float)));
    CHECK(cudaMemcpy(din, in.data(), in.size() * sizeof(float), cudaMemcpyHostToDevice));
    async_copy_early<<<B, T>>>(din, dout, N);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out.data(), dout, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    for (int b = 0; b < B; ++b) for (int t = 0; t < T; ++t) if (out[b * T + t] != in[b * N + t % N]) return 2;
    return 0;
  }
  if (!strcmp(name, "grid_cooperative") || !strcmp(name, "grid_normal")) {
    const int B = 4;
    int* d; CHECK(cudaMalloc(&d, 3 * B * sizeof(int)));
    init_grid_barrier<<<1, 1>>>(B);
    CHECK(cudaDeviceSynchronize());
    if (!strcmp(name, "grid_normal")) {
      grid_barrier<<<B, 32>>>(d);  // blocks wait for each other with no promise to be co-resident
    } else {
      void* args[] = {&d};
      CHECK(cudaLaunchCooperativeKernel((void*)grid_barrier, B, 32, args));
    }
    CHECK(cudaDeviceSynchronize());
    int h[3 * B]; CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    for (int r = 0; r < 3; ++r) for (int b = 0; b < B; ++b) if (h[r * B + b] != ((b + 1) % B) * 10 + r) return 2;
    return 0;
  }
  if (!strcmp(name, "host_threads")) {
    // Host threads that each launched a kernel (so each has been a block worker) then meet at a
    // cuda::std::barrier in host code: it is theirs to share, as std::barrier would be.
    const int H = 3, R = 4;
    cuda::std::barrier<> bar(H);
    std::vector<int> log(H * R, -1);
    int* d; CHECK(cudaMalloc(&d, sizeof(int))); CHECK(cudaMemset(d, 0, sizeof(int)));
    std::vector<std::thread> ts;
    for (int h = 0; h < H; ++h) ts.emplace_back([&, h] {
      bump<<<1, 32>>>(d);
      cudaDeviceSynchronize();
      for (int r = 0; r < R; ++r) {
        log[r * H + h] = r;
        bar.arrive_and_wait();
        for (int o = 0; o < H; ++o) if (log[r * H + o] != r) log[r * H + h] = -2;  // a phase was not complete
        bar.arrive_and_wait();
      }
    });
    for (auto& t : ts) t.join();
    int bumps = 0; CHECK(cudaMemcpy(&bumps, d, sizeof(int), cudaMemcpyDeviceToHost));
    for (int r = 0; r < R; ++r) for (int h = 0; h < H; ++h) if (log[r * H + h] != r) return 2;
    return bumps == 32 * H ? 0 : 3;
  }
  if (!strcmp(name, "deadlock")) {
    int* d; CHECK(cudaMalloc(&d, 64 * sizeof(int)));
    deadlock<<<1, 64>>>(d);
    CHECK(cudaDeviceSynchronize());
    return 0;
  }
  printf("unknown case %s\n", name);
  return 1;
}

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    int rc = run(argv[i]);
    if (rc != 0) { printf("%s failed (%d)\n", argv[i], rc); return 1; }
    printf("%s ok\n", argv[i]);
  }
  return 0;
}
