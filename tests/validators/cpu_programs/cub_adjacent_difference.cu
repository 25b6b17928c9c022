// cub::BlockAdjacentDifference (HeCBench's adjacent): SubtractLeft/SubtractRight over 4 items per
// thread, with a tile predecessor/successor, partial tiles and in place, against a host model.
#include <cstdio>
#include <cub/block/block_adjacent_difference.cuh>

constexpr int T = 64, I = 4, N = T * I;
struct Diff {  // not symmetric; non-const references, as in CUB's own example
  __device__ int operator()(int& a, int& b) { return a - 2 * b; }
};

__global__ void k(const int* in, int* out, int valid) {
  using BAD = cub::BlockAdjacentDifference<int, T>;
  __shared__ typename BAD::TempStorage temp;
  int item[I], res[I];
  for (int i = 0; i < I; i++) item[i] = in[threadIdx.x * I + i];
  int* o = out;
  auto put = [&](const int (&v)[I]) {
    for (int i = 0; i < I; i++) o[threadIdx.x * I + i] = v[i];
    o += N;
    __syncthreads();
  };
  BAD(temp).SubtractLeft(item, res, Diff()); put(res);
  BAD(temp).SubtractLeft(item, res, Diff(), 1000); put(res);
  BAD(temp).SubtractLeftPartialTile(item, res, Diff(), valid); put(res);
  BAD(temp).SubtractRight(item, res, Diff()); put(res);
  BAD(temp).SubtractRight(item, res, Diff(), -7); put(res);
  BAD(temp).SubtractRightPartialTile(item, res, Diff(), valid); put(res);
  BAD(temp).SubtractLeft(item, item, Diff()); put(item);  // in place
}

int main() {
  const int valid = 101, forms = 7;
  static int h[N], got[forms * N], want[forms * N];
  for (int i = 0; i < N; i++) h[i] = (i * 37) % 101 - 50;
  for (int i = 0; i < N; i++) {
    int left = i ? h[i] - 2 * h[i - 1] : h[i], right = i < N - 1 ? h[i] - 2 * h[i + 1] : h[i];
    want[0 * N + i] = left;
    want[1 * N + i] = i ? left : h[i] - 2 * 1000;
    want[2 * N + i] = i < valid ? left : h[i];
    want[3 * N + i] = right;
    want[4 * N + i] = i < N - 1 ? right : h[i] - 2 * -7;
    want[5 * N + i] = i < valid - 1 ? right : h[i];
    want[6 * N + i] = left;
  }
  int *din, *dout;
  cudaMalloc(&din, sizeof h);
  cudaMalloc(&dout, sizeof got);
  cudaMemcpy(din, h, sizeof h, cudaMemcpyHostToDevice);
  k<<<1, T>>>(din, dout, valid);
  cudaMemcpy(got, dout, sizeof got, cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int i = 0; i < forms * N; i++)
    if (got[i] != want[i] && bad++ < 5) printf("form %d item %d: %d, expected %d\n", i / N, i % N, got[i], want[i]);
  printf("%s\n", bad ? "FAIL" : "PASS");
}
