// libcu++'s cuda::pipeline (issue 26): a double-buffered block-scope pipeline (every thread
// produces and consumes) that tiles a copy and a computation needing the whole tile, the same
// with a producer warp and consumer warps, a thread-scope pipeline with three stages in flight
// drained by cuda::pipeline_consumer_wait_prior, cuda::pipeline_producer_commit with a barrier,
// a tile read before consumer_wait (a race: it must fail) and a stage nobody commits (a
// deadlock). Each case checks its results against a host computation and prints "<case> ok";
// nvcc builds it as it stands.
#include <cooperative_groups.h>
#include <cuda/barrier>
#include <cuda/pipeline>
#include <cstdio>
#include <cstring>
#include <vector>
#pragma nv_diag_suppress static_var_with_dynamic_init
namespace cg = cooperative_groups;

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

constexpr int TILE = 64;  // floats per tile; blocks of TILE threads
constexpr int STAGES = 2;

// out[i] = in[i] + the tile's sum: every thread reads every element of the stage.
__device__ float tile_value(const float* tile, int i) {
  float s = 0;
  for (int j = 0; j < TILE; ++j) s += tile[j];
  return tile[i] + s;
}

// Each block computes `tiles` consecutive tiles; tile t+1 is fetched while tile t is computed.
__global__ void double_buffer(const float* in, float* out, int tiles) {
  __shared__ __align__(16) float buf[STAGES][TILE];
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, STAGES> state;
  auto block = cg::this_thread_block();
  auto pipe = cuda::make_pipeline(block, &state);
  const float* src = in + blockIdx.x * tiles * TILE;
  int fetched = 0;
  for (int t = 0; t < tiles; ++t) {
    for (; fetched < tiles && fetched < t + STAGES; ++fetched) {
      pipe.producer_acquire();
      cuda::memcpy_async(block, buf[fetched % STAGES], src + fetched * TILE, cuda::aligned_size_t<16>(sizeof(float) * TILE), pipe);
      pipe.producer_commit();
    }
    pipe.consumer_wait();
    out[(blockIdx.x * tiles + t) * TILE + threadIdx.x] = tile_value(buf[t % STAGES], threadIdx.x);
    pipe.consumer_release();
  }
}

// Warp 0 produces (each lane copies its slice of the tile), the other warps consume.
__global__ void roles(const float* in, float* out, int tiles) {
  __shared__ __align__(16) float buf[STAGES][TILE];
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, STAGES> state;
  auto block = cg::this_thread_block();
  const bool producer = threadIdx.x < 32;
  auto pipe = cuda::make_pipeline(block, &state, producer ? cuda::pipeline_role::producer : cuda::pipeline_role::consumer);
  if (producer) {
    for (int t = 0; t < tiles; ++t) {
      pipe.producer_acquire();
      for (int i = threadIdx.x; i < TILE; i += 32)
        cuda::memcpy_async(&buf[t % STAGES][i], in + t * TILE + i, sizeof(float), pipe);
      pipe.producer_commit();
    }
  } else {
    const int c = threadIdx.x - 32, consumers = blockDim.x - 32;
    for (int t = 0; t < tiles; ++t) {
      pipe.consumer_wait();
      for (int i = c; i < TILE; i += consumers) out[t * TILE + i] = tile_value(buf[t % STAGES], i);
      pipe.consumer_release();
    }
  }
}

// A thread-scope pipeline: each thread keeps three of its own loads in flight, waits for all but
// the newest two, and consumes the oldest.
__global__ void thread_scope(const float* in, float* out, int rounds) {
  constexpr int DEPTH = 3;
  __shared__ float slots[DEPTH][TILE];
  cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
  const int me = threadIdx.x;
  for (int r = 0; r < DEPTH - 1 && r < rounds; ++r) {
    pipe.producer_acquire();
    cuda::memcpy_async(&slots[r % DEPTH][me], in + r * TILE + me, sizeof(float), pipe);
    pipe.producer_commit();
  }
  float acc = 0;
  for (int r = 0; r < rounds; ++r) {
    if (r + DEPTH - 1 < rounds) {
      const int f = r + DEPTH - 1;
      pipe.producer_acquire();
      cuda::memcpy_async(&slots[f % DEPTH][me], in + f * TILE + me, sizeof(float), pipe);
      pipe.producer_commit();
      cuda::pipeline_consumer_wait_prior<DEPTH - 1>(pipe);
    } else {
      pipe.consumer_wait();
    }
    acc = acc * 0.5f + slots[r % DEPTH][me];
    pipe.consumer_release();
  }
  out[me] = acc;
}

// Each thread copies its element through its own pipeline, bound to a block barrier: after the
// barrier every element is in place, so a thread may read its neighbour's.
__global__ void commit_to_barrier(const float* in, float* out) {
  __shared__ float tile[TILE];
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  if (threadIdx.x == 0) init(&bar, blockDim.x);
  __syncthreads();
  auto pipe = cuda::make_pipeline();
  pipe.producer_acquire();
  cuda::memcpy_async(&tile[threadIdx.x], in + threadIdx.x, sizeof(float), pipe);
  cuda::pipeline_producer_commit(pipe, bar);
  bar.arrive_and_wait();
  out[threadIdx.x] = tile[(threadIdx.x + 1) % TILE];
}

// The tile read before consumer_wait: a race (undefined on a GPU).
__global__ void early(const float* in, float* out) {
  __shared__ __align__(16) float buf[STAGES][TILE];
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, STAGES> state;
  auto block = cg::this_thread_block();
  auto pipe = cuda::make_pipeline(block, &state);
  pipe.producer_acquire();
  cuda::memcpy_async(block, buf[0], in, sizeof(float) * TILE, pipe);
  pipe.producer_commit();
  const float seen = buf[0][(threadIdx.x + 1) % TILE];
  pipe.consumer_wait();
  out[threadIdx.x] = seen;
  pipe.consumer_release();
}

// Consumers wait for a stage no producer commits: a deadlock on a GPU.
__global__ void starved(float* out) {
  __shared__ float buf[TILE];
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, STAGES> state;
  auto pipe = cuda::make_pipeline(cg::this_thread_block(), &state);
  pipe.consumer_wait();
  out[threadIdx.x] = buf[threadIdx.x];
}

static std::vector<float> input(int n) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = (float)((i * 7) % 23) - 5.0f;
  return v;
}

static float host_tile_value(const float* tile, int i) {
  float s = 0;
  for (int j = 0; j < TILE; ++j) s += tile[j];
  return tile[i] + s;
}

static int run(const char* name) {
  if (!strcmp(name, "double_buffer") || !strcmp(name, "roles")) {
    const bool dbl = !strcmp(name, "double_buffer");
    const int B = dbl ? 3 : 1, tiles = 5, n = B * tiles * TILE;
    std::vector<float> in = input(n), out(n);
    float *din, *dout;
    CHECK(cudaMalloc(&din, n * sizeof(float)));
    CHECK(cudaMalloc(&dout, n * sizeof(float)));
    CHECK(cudaMemcpy(din, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    if (dbl) double_buffer<<<B, TILE>>>(din, dout, tiles);
    else roles<<<1, 32 + 48>>>(din, dout, tiles);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (int t = 0; t < B * tiles; ++t)
      for (int i = 0; i < TILE; ++i)
        if (out[t * TILE + i] != host_tile_value(&in[t * TILE], i)) return 2;
    return 0;
  }
  if (!strcmp(name, "thread_scope")) {
    const int rounds = 7;
    std::vector<float> in = input(rounds * TILE), out(TILE);
    float *din, *dout;
    CHECK(cudaMalloc(&din, in.size() * sizeof(float)));
    CHECK(cudaMalloc(&dout, out.size() * sizeof(float)));
    CHECK(cudaMemcpy(din, in.data(), in.size() * sizeof(float), cudaMemcpyHostToDevice));
    thread_scope<<<1, TILE>>>(din, dout, rounds);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out.data(), dout, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < TILE; ++i) {
      float acc = 0;
      for (int r = 0; r < rounds; ++r) acc = acc * 0.5f + in[r * TILE + i];
      if (out[i] != acc) return 2;
    }
    return 0;
  }
  if (!strcmp(name, "commit_to_barrier") || !strcmp(name, "early")) {
    const bool barrier = !strcmp(name, "commit_to_barrier");
    std::vector<float> in = input(TILE), out(TILE);
    float *din, *dout;
    CHECK(cudaMalloc(&din, TILE * sizeof(float)));
    CHECK(cudaMalloc(&dout, TILE * sizeof(float)));
    CHECK(cudaMemcpy(din, in.data(), TILE * sizeof(float), cudaMemcpyHostToDevice));
    if (barrier) commit_to_barrier<<<1, TILE>>>(din, dout);
    else early<<<1, TILE>>>(din, dout);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out.data(), dout, TILE * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < TILE; ++i) if (out[i] != in[(i + 1) % TILE]) return 2;
    return 0;
  }
  if (!strcmp(name, "starved")) {
    float* dout;
    CHECK(cudaMalloc(&dout, TILE * sizeof(float)));
    starved<<<1, TILE>>>(dout);
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
