#include <cstdio>
// tsne-cuda (fit_tsne.cu) and logic-rewrite-cuda (balance.cu) call thrust::minmax_element,
// thrust::max_element and thrust::sequence without including <thrust/extrema.h> or
// <thrust/sequence.h>; with nvcc, <thrust/sort.h> (the CUDA system's sort) brings them in.
#include <thrust/device_vector.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sort.h>
int main() {
  thrust::device_vector<int> v(8);
  thrust::sequence(v.begin(), v.end());
  auto mm = thrust::minmax_element(v.begin(), v.end());
  int hi = *thrust::max_element(v.begin(), v.end());
  bool ok = *mm.first == 0 && *mm.second == 7 && hi == 7;
  printf("%s\n", ok ? "PASS" : "FAIL");
  return 0;
}
