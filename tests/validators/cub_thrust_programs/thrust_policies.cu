// Thrust's CUDA execution policies and CUB over thrust iterators: inputs data/x.bin, outputs data/*.bin.
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <thrust/system/cuda/vector.h>
#include <cub/cub.cuh>
#include <cstdio>
#include <vector>
#ifndef N
#define N 4000
#endif

struct Square { __host__ __device__ long long operator()(int i) const { return (long long)i * i; } };
struct Twice { __host__ __device__ float operator()(float v) const { return 2.0f * v; } };

// A caching allocator in the style programs pass to thrust::cuda::par(alloc).
struct CountingAllocator {
  typedef char value_type;
  int allocations = 0;
  char* allocate(std::ptrdiff_t n) { char* p; cudaMalloc(&p, n); ++allocations; return p; }
  void deallocate(char* p, size_t) { cudaFree(p); }
};

template <class T> void save(const char* name, const T* h, size_t n) {
  char p[256]; snprintf(p, sizeof p, "data/%s.bin", name);
  FILE* f = fopen(p, "wb"); fwrite(h, sizeof(T), n, f); fclose(f);
}

int main() {
  const int n = N;
  std::vector<float> hx(n);
  FILE* f = fopen("data/x.bin", "rb"); if (!f || fread(hx.data(), 4, n, f) != (size_t)n) return 1; fclose(f);
  cudaStream_t s; cudaStreamCreate(&s);
  thrust::device_vector<float> x(hx.begin(), hx.end()), y(n);
  thrust::transform(thrust::cuda::par_nosync.on(s), x.begin(), x.end(), y.begin(), Twice());
  thrust::inclusive_scan(thrust::cuda::par.on(s), y.begin(), y.end(), y.begin());
  std::vector<float> hy(n); thrust::copy(y.begin(), y.end(), hy.begin()); save("scan2x", hy.data(), n);
  CountingAllocator alloc;
  thrust::cuda::vector<float> sorted(x.begin(), x.end());
  thrust::sort(thrust::cuda::par(alloc).on(s), sorted.begin(), sorted.end());
  thrust::copy(sorted.begin(), sorted.end(), hy.begin()); save("sorted", hy.data(), n);
  float total = thrust::reduce(thrust::system::cuda::par, x.begin(), x.end(), 0.0f);
  save("total", &total, 1);

  // CUB over fancy iterators: sum of i*i for i < n, and a CUB counting iterator.
  long long *d_sum; cudaMalloc(&d_sum, 2 * sizeof(long long));
  auto squares = thrust::make_transform_iterator(thrust::counting_iterator<int>(0), Square());
  void* tmp = nullptr; size_t bytes = 0;
  cub::DeviceReduce::Sum(tmp, bytes, squares, d_sum, n, s);
  cudaMalloc(&tmp, bytes);
  cub::DeviceReduce::Sum(tmp, bytes, squares, d_sum, n, s);
  cub::CountingInputIterator<long long> count(10);
  cub::DeviceReduce::Sum(tmp, bytes, count, d_sum + 1, n, s);
  long long sums[2]; cudaMemcpy(sums, d_sum, sizeof sums, cudaMemcpyDeviceToHost); save("sums", sums, 2);
  cudaStreamSynchronize(s);
  printf("allocations %d\n", alloc.allocations);
  return 0;
}
