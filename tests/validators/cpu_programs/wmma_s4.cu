// A 4-bit integer WMMA kernel (experimental::precision::s4, m8n8k32): not in the CPU shim's
// subset, so the build must come back as needs_gpu naming it.
#include <cstdio>
#include <mma.h>
using namespace nvcuda;

__global__ void gemm_s4(const int* a, const int* b, int* c) {
  wmma::fragment<wmma::matrix_a, 8, 8, 32, wmma::experimental::precision::s4, wmma::row_major> af;
  wmma::fragment<wmma::matrix_b, 8, 8, 32, wmma::experimental::precision::s4, wmma::col_major> bf;
  wmma::fragment<wmma::accumulator, 8, 8, 32, int> cf;
  wmma::fill_fragment(cf, 0);
  wmma::load_matrix_sync(af, a, 128);
  wmma::load_matrix_sync(bf, b, 128);
  wmma::mma_sync(cf, af, bf, cf);
  wmma::store_matrix_sync(c, cf, 8, wmma::mem_row_major);
}

int main() {
  int *a, *b, *c;
  cudaMalloc(&a, 1024);
  cudaMalloc(&b, 1024);
  cudaMalloc(&c, 256);
  gemm_s4<<<1, 32>>>(a, b, c);
  cudaDeviceSynchronize();
  printf("done\n");
  return 0;
}
