// A WMMA tile computed by only half of a warp: undefined on a GPU (the *_sync calls need the
// whole warp); the CPU shim must report it, naming the call and its line.
#include <cstdio>
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;

__global__ void half_warp(const half* a, const half* b, float* c) {
  if (threadIdx.x >= 16) return;  // lanes 16..31 leave
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> af;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> bf;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  wmma::load_matrix_sync(af, a, 16);
  wmma::load_matrix_sync(bf, b, 16);
  wmma::mma_sync(acc, af, bf, acc);
  wmma::store_matrix_sync(c, acc, 16, wmma::mem_row_major);
}

int main() {
  half *a, *b;
  float* c;
  cudaMalloc(&a, 256 * sizeof(half));
  cudaMalloc(&b, 256 * sizeof(half));
  cudaMalloc(&c, 256 * sizeof(float));
  cudaMemset(a, 0, 256 * sizeof(half));
  cudaMemset(b, 0, 256 * sizeof(half));
  half_warp<<<1, 32>>>(a, b, c);
  cudaError_t e = cudaDeviceSynchronize();
  printf("%s\n", cudaGetErrorString(e));
  return 0;
}
