// A size macro `N` kept away from CUB and Thrust by the program itself (push_macro/#undef),
// as nvcc -DN=... allows: the shim must not expand it inside their templates first.
#include <cstdio>
#include <cstdlib>
#include <vector>
#pragma push_macro("N")
#undef N
#include <cub/cub.cuh>
#include <thrust/device_vector.h>
#include <thrust/sequence.h>
#include <thrust/copy.h>
#pragma pop_macro("N")
#ifndef N
#define N 4096
#endif
int main() {
    std::vector<unsigned> keys(N);
    FILE* f = fopen("data/keys.bin", "rb"); if (!f || fread(keys.data(), 4, N, f) != (size_t)N) return 1; fclose(f);
    thrust::device_vector<unsigned> dk(keys.begin(), keys.end()), dk_out(N);
    thrust::device_vector<int> dv(N), dv_out(N);
    thrust::sequence(dv.begin(), dv.end());
    void* tmp = nullptr; size_t tmp_bytes = 0;
    cub::DeviceRadixSort::SortPairs(tmp, tmp_bytes, thrust::raw_pointer_cast(dk.data()), thrust::raw_pointer_cast(dk_out.data()),
                                    thrust::raw_pointer_cast(dv.data()), thrust::raw_pointer_cast(dv_out.data()), N);
    cudaMalloc(&tmp, tmp_bytes);
    cub::DeviceRadixSort::SortPairs(tmp, tmp_bytes, thrust::raw_pointer_cast(dk.data()), thrust::raw_pointer_cast(dk_out.data()),
                                    thrust::raw_pointer_cast(dv.data()), thrust::raw_pointer_cast(dv_out.data()), N);
    if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    std::vector<unsigned> sk(N); std::vector<int> ord(N);
    thrust::copy(dk_out.begin(), dk_out.end(), sk.begin());
    thrust::copy(dv_out.begin(), dv_out.end(), ord.begin());
    f = fopen("data/sorted_keys.bin", "wb"); fwrite(sk.data(), 4, N, f); fclose(f);
    f = fopen("data/order.bin", "wb"); fwrite(ord.data(), 4, N, f); fclose(f);
    cudaFree(tmp);
}
