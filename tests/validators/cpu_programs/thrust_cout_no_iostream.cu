// std::cout with no <iostream>: nvcc accepts it because Thrust's CUDA system (CUB's
// cache_modified_input_iterator.cuh) includes <iostream>; the shim's non-PCH (Thrust) build has no <iostream>.
#include <cstdio>
#include <thrust/device_vector.h>
#include <thrust/reduce.h>
int main() {
  thrust::device_vector<int> v(100, 1);
  int s = thrust::reduce(v.begin(), v.end());
  std::cout << "sum " << s << std::endl;
  printf("%s\n", s == 100 ? "PASS" : "FAIL");
}
