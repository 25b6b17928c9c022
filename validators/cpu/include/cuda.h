// cudashim: the CUDA driver API subset programs use next to the runtime API.
#pragma once
// The include guard CUDA's own header defines: programs test it to know the header is in.
#define __cuda_cuda_h__
#include <cuda_runtime.h>

typedef int CUdevice;
typedef struct CUctx_st* CUcontext;
typedef struct CUmod_st* CUmodule;
typedef struct CUfunc_st* CUfunction;
typedef unsigned long long CUdeviceptr;
typedef cudaStream_t CUstream;
typedef cudaEvent_t CUevent;
enum CUresult { CUDA_SUCCESS = 0, CUDA_ERROR_INVALID_VALUE = 1, CUDA_ERROR_OUT_OF_MEMORY = 2, CUDA_ERROR_NOT_INITIALIZED = 3, CUDA_ERROR_NO_DEVICE = 100, CUDA_ERROR_INVALID_DEVICE = 101, CUDA_ERROR_NOT_SUPPORTED = 801 };
enum CUdevice_attribute { CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1, CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76 };

inline CUresult cuInit(unsigned int) { return CUDA_SUCCESS; }
inline CUresult cuDriverGetVersion(int* v) { *v = CUDA_VERSION; return CUDA_SUCCESS; }
inline CUresult cuDeviceGetCount(int* n) { *n = 1; return CUDA_SUCCESS; }
inline CUresult cuDeviceGet(CUdevice* d, int ordinal) { *d = ordinal; return ordinal == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE; }
inline CUresult cuDeviceGetName(char* name, int len, CUdevice) { snprintf(name, len, "cudashim CPU emulation"); return CUDA_SUCCESS; }
inline CUresult cuDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice d) {
  return cudaDeviceGetAttribute(v, (cudaDeviceAttr)a, d) == cudaSuccess ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
inline CUresult cuDeviceTotalMem(size_t* b, CUdevice) { size_t f; cudaMemGetInfo(&f, b); return CUDA_SUCCESS; }
inline CUresult cuCtxCreate(CUcontext* c, unsigned int, CUdevice) { *c = nullptr; return CUDA_SUCCESS; }
inline CUresult cuCtxDestroy(CUcontext) { return CUDA_SUCCESS; }
inline CUresult cuCtxSynchronize() { return CUDA_SUCCESS; }
inline CUresult cuMemAlloc(CUdeviceptr* p, size_t n) {
  void* q = nullptr;
  cudaError_t e = cudaMalloc(&q, n);
  *p = (CUdeviceptr)q;
  return e == cudaSuccess ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
inline CUresult cuMemFree(CUdeviceptr p) { return cudaFree((void*)p) == cudaSuccess ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
inline CUresult cuMemcpyHtoD(CUdeviceptr d, const void* h, size_t n) { memcpy((void*)d, h, n); return CUDA_SUCCESS; }
inline CUresult cuMemcpyDtoH(void* h, CUdeviceptr d, size_t n) { memcpy(h, (const void*)d, n); return CUDA_SUCCESS; }
inline CUresult cuMemcpyDtoD(CUdeviceptr a, CUdeviceptr b, size_t n) { memmove((void*)a, (const void*)b, n); return CUDA_SUCCESS; }
inline CUresult cuMemsetD8(CUdeviceptr d, unsigned char v, size_t n) { memset((void*)d, v, n); return CUDA_SUCCESS; }
inline CUresult cuMemsetD32(CUdeviceptr d, unsigned int v, size_t n) {
  for (size_t i = 0; i < n; ++i) ((unsigned int*)d)[i] = v;
  return CUDA_SUCCESS;
}
inline CUresult cuGetErrorString(CUresult e, const char** s) { *s = cudaGetErrorString((cudaError_t)e); return CUDA_SUCCESS; }
inline CUresult cuGetErrorName(CUresult e, const char** s) { *s = cudaGetErrorName((cudaError_t)e); return CUDA_SUCCESS; }
