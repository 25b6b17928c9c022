// CUB device-wide algorithms (tests/validators/test_cpu_cub_thrust.py): inputs from data/*.bin,
// every result to data/*.bin; each call goes through the two-phase temp-storage protocol.
#include <cub/cub.cuh>
#include <cstdio>
#include <vector>
#ifndef N
#define N 5000
#endif

template <class T> std::vector<T> load(const char* name, size_t n) {
  std::vector<T> v(n); char p[256]; snprintf(p, sizeof p, "data/%s.bin", name);
  FILE* f = fopen(p, "rb"); if (!f || fread(v.data(), sizeof(T), n, f) != n) { fprintf(stderr, "cannot read %s\n", p); exit(1); }
  fclose(f); return v;
}
template <class T> void save(const char* name, const T* d, size_t n) {
  std::vector<T> h(n); cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost);
  char p[256]; snprintf(p, sizeof p, "data/%s.bin", name);
  FILE* f = fopen(p, "wb"); fwrite(h.data(), sizeof(T), n, f); fclose(f);
}
template <class T> T* upload(const std::vector<T>& h) {
  T* d; cudaMalloc(&d, h.size() * sizeof(T)); cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice); return d;
}
#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("error %d at %d\n", (int)e_, __LINE__); return 1; } } while (0)
// Runs a CUB call twice: size query, then the work, with exactly the requested temp storage.
#define CUB_CALL(...) do { void* d_temp_storage = nullptr; size_t temp_storage_bytes = 0; \
  CHECK(__VA_ARGS__); if (temp_storage_bytes == 0) { printf("zero temp bytes at %d\n", __LINE__); return 1; } \
  CHECK(cudaMalloc(&d_temp_storage, temp_storage_bytes)); CHECK(__VA_ARGS__); cudaFree(d_temp_storage); } while (0)

struct IsOdd { __device__ bool operator()(int x) const { return x & 1; } };
struct MaxOp { template <class T> __device__ T operator()(T a, T b) const { return a > b ? a : b; } };

int main() {
  const int n = N;
  auto hx = load<float>("x", n);       // floats
  auto hk = load<int>("k", n);         // ints (keys; may be negative)
  auto hv = load<int>("v", n);         // ints (values)
  auto hs = load<int>("seg", n);       // sorted segment keys
  float* x = upload(hx); int* k = upload(hk); int* v = upload(hv); int* seg = upload(hs);
  float* fo; int* io; int* io2; float* f1; int* i1; cub::KeyValuePair<int, float>* kv;
  cudaMalloc(&fo, n * sizeof(float)); cudaMalloc(&io, n * sizeof(int)); cudaMalloc(&io2, n * sizeof(int));
  cudaMalloc(&f1, 4 * sizeof(float)); cudaMalloc(&i1, 4 * sizeof(int)); cudaMalloc(&kv, 2 * sizeof(*kv));

  CUB_CALL(cub::DeviceScan::ExclusiveSum(d_temp_storage, temp_storage_bytes, v, io, n));
  save("excl_sum", io, n);
  CUB_CALL(cub::DeviceScan::InclusiveScan(d_temp_storage, temp_storage_bytes, v, io, MaxOp(), n));
  save("incl_max", io, n);
  CUB_CALL(cub::DeviceScan::ExclusiveScan(d_temp_storage, temp_storage_bytes, v, io, cub::Sum(), 7, n));
  save("excl_scan7", io, n);
  CUB_CALL(cub::DeviceScan::InclusiveSumByKey(d_temp_storage, temp_storage_bytes, seg, v, io, n));
  save("incl_sum_by_key", io, n);

  CUB_CALL(cub::DeviceReduce::Sum(d_temp_storage, temp_storage_bytes, v, i1, n));
  CUB_CALL(cub::DeviceReduce::Min(d_temp_storage, temp_storage_bytes, v, i1 + 1, n));
  CUB_CALL(cub::DeviceReduce::Max(d_temp_storage, temp_storage_bytes, v, i1 + 2, n));
  CUB_CALL(cub::DeviceReduce::Reduce(d_temp_storage, temp_storage_bytes, k, i1 + 3, n, cub::Max(), -1000000));
  save("reduce_i", i1, 4);
  CUB_CALL(cub::DeviceReduce::ArgMax(d_temp_storage, temp_storage_bytes, x, kv, n));
  CUB_CALL(cub::DeviceReduce::ArgMin(d_temp_storage, temp_storage_bytes, x, kv + 1, n));
  save("argmax_min", kv, 2);

  // radix sort: full keys, then bits [4, 12) descending with the DoubleBuffer overload
  CUB_CALL(cub::DeviceRadixSort::SortPairs(d_temp_storage, temp_storage_bytes, k, io, v, io2, n));
  save("sorted_k", io, n); save("sorted_v", io2, n);
  CUB_CALL(cub::DeviceRadixSort::SortKeys(d_temp_storage, temp_storage_bytes, x, fo, n));
  save("sorted_x", fo, n);
  {
    int *ka, *kb, *va, *vb;
    cudaMalloc(&ka, n * 4); cudaMalloc(&kb, n * 4); cudaMalloc(&va, n * 4); cudaMalloc(&vb, n * 4);
    cudaMemcpy(ka, k, n * 4, cudaMemcpyDeviceToDevice); cudaMemcpy(va, v, n * 4, cudaMemcpyDeviceToDevice);
    cub::DoubleBuffer<int> keys(ka, kb), vals(va, vb);
    CUB_CALL(cub::DeviceRadixSort::SortPairsDescending(d_temp_storage, temp_storage_bytes, keys, vals, n, 4, 12));
    save("bits_k", keys.Current(), n); save("bits_v", vals.Current(), n);
  }
  CUB_CALL(cub::DeviceSelect::If(d_temp_storage, temp_storage_bytes, v, io, i1, n, IsOdd()));
  save("select_if_n", i1, 1); save("select_if", io, n);
  CUB_CALL(cub::DeviceSelect::Unique(d_temp_storage, temp_storage_bytes, seg, io, i1, n));
  save("unique_n", i1, 1); save("unique", io, n);
  {
    // segment offsets of the sorted `seg` keys, via run-length encoding
    int *uniq, *counts, *offsets, *nruns, *sums;
    cudaMalloc(&uniq, n * 4); cudaMalloc(&counts, n * 4); cudaMalloc(&offsets, (n + 1) * 4); cudaMalloc(&nruns, 4);
    cudaMalloc(&sums, n * 4);
    CUB_CALL(cub::DeviceRunLengthEncode::Encode(d_temp_storage, temp_storage_bytes, seg, uniq, counts, nruns, n));
    int runs; cudaMemcpy(&runs, nruns, 4, cudaMemcpyDeviceToHost);
    save("rle_counts", counts, runs);
    CUB_CALL(cub::DeviceScan::ExclusiveSum(d_temp_storage, temp_storage_bytes, counts, offsets, runs + 1));
    CUB_CALL(cub::DeviceSegmentedReduce::Sum(d_temp_storage, temp_storage_bytes, v, sums, runs, offsets, offsets + 1));
    save("seg_sums", sums, runs);
  }
  {
    char* flags; cudaMalloc(&flags, n);
    std::vector<char> hf(n); for (int i = 0; i < n; ++i) hf[i] = (char)(hk[i] > 0);
    cudaMemcpy(flags, hf.data(), n, cudaMemcpyHostToDevice);
    CUB_CALL(cub::DeviceSelect::Flagged(d_temp_storage, temp_storage_bytes, x, flags, fo, i1, n));
    save("flagged_n", i1, 1); save("flagged", fo, n);
  }
  CUB_CALL(cub::DeviceHistogram::HistogramEven(d_temp_storage, temp_storage_bytes, x, io, 11, -1.0f, 1.0f, n));
  save("hist", io, 10);
  printf("done\n");
  return 0;
}
