// CUDA's headers define include guards that programs test to know what is declared: NVIDIA's
// cuda-samples helper_cuda.h defines checkCudaErrors and findCudaDevice only
// #ifdef __DRIVER_TYPES_H__ / __CUDA_RUNTIME_H__, and its cuBLAS/cuRAND error names under
// CUBLAS_API_H_ / CURAND_H_ (87 of its samples did not build without them), cuSPARSE's under
// CUSPARSEAPI (conjugateGradient: checkCudaErrors on a cusparseStatus_t did not compile).
#include <cstdio>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <curand.h>
#include <cusparse.h>
#include <cuComplex.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#if !defined(__CUDA_RUNTIME_H__) || !defined(__DRIVER_TYPES_H__) || !defined(__CUDA_RUNTIME_API_H__)
#error "cuda_runtime.h's guards"
#endif
#if !defined(CUBLAS_API_H_) || !defined(CUBLAS_V2_H_) || !defined(CURAND_H_) || !defined(CU_COMPLEX_H_)
#error "library headers' guards"
#endif
#if !defined(CUSPARSEAPI) || !defined(CUBLASAPI) || !defined(CUSPARSE_H_)
#error "library headers' API macros"
#endif
#if !defined(__CUDA_FP16_H__) || !defined(__CUDA_BF16_H__)
#error "half headers' guards"
#endif
static int called = 0;
void CUDART_CB done(cudaStream_t, cudaError_t status, void *data) {
  if (status == cudaSuccess) *static_cast<int *>(data) = 1;
}
__global__ void k(int *p) { *p = 42; }
int main() {
  int *d, h = 0;
  cudaMalloc(&d, sizeof(int));
  k<<<1, 1>>>(d);
  cudaStreamAddCallback(0, done, &called, 0);
  cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);
  cudaDeviceSynchronize();
  printf(h == 42 && called ? "PASS\n" : "FAIL\n");
  return 0;
}
