// cudashim: a host subset of the cuBLAS v2 API (CUDA 12 signatures), computed on the CPU.
//
// Device memory is host memory here, so both pointer modes read scalars and write results
// through the pointer given; calls run synchronously in issue order, except on a stream that is
// being captured: there a call's work becomes a node of the capture (`_enqueue`), as cuBLAS's
// kernels do on a GPU, and runs at each launch of the graph.
// Argument checks follow the reference BLAS / cuBLAS rules and return
// CUBLAS_STATUS_INVALID_VALUE without touching memory. What is not declared here (complex
// level-3 types, trsm, syrk, ...; cuBLASLt's matmul is include/cublasLt.h, the batched solvers
// cudashim/cublas_solvers.h) fails to compile and is reported as `needs_gpu`; a declared call
// with a data type the subset does not compute stops the run with a `needs_gpu` report.
// The exact list is in validators/cpu/README.md. Every local name is reserved (`__x`), so a
// program's size macros (`-DN=...`) cannot collide with it.
#pragma once
// The include guard CUDA's own header defines: programs test it to know the header is in.
#define CUBLAS_API_H_
// Its calling-convention macro (empty off Windows), which programs test as they test the guard.
#ifndef CUBLASAPI
#define CUBLASAPI
#endif
#include <cudashim/libdata.h>
// NVIDIA's cublas_api.h includes cuComplex.h: programs use cuComplex with cuBLAS alone.
#include <cuComplex.h>

#include <cmath>
#include <cstring>
#include <vector>

#define CUBLAS_VER_MAJOR 12
#define CUBLAS_VER_MINOR 4
#define CUBLAS_VER_PATCH 5
#define CUBLAS_VER_BUILD 2
#define CUBLAS_VERSION (CUBLAS_VER_MAJOR * 10000 + CUBLAS_VER_MINOR * 100 + CUBLAS_VER_PATCH)

typedef enum {
  CUBLAS_STATUS_SUCCESS = 0,
  CUBLAS_STATUS_NOT_INITIALIZED = 1,
  CUBLAS_STATUS_ALLOC_FAILED = 3,
  CUBLAS_STATUS_INVALID_VALUE = 7,
  CUBLAS_STATUS_ARCH_MISMATCH = 8,
  CUBLAS_STATUS_MAPPING_ERROR = 11,
  CUBLAS_STATUS_EXECUTION_FAILED = 13,
  CUBLAS_STATUS_INTERNAL_ERROR = 14,
  CUBLAS_STATUS_NOT_SUPPORTED = 15,
  CUBLAS_STATUS_LICENSE_ERROR = 16,
} cublasStatus_t;

typedef enum { CUBLAS_FILL_MODE_LOWER = 0, CUBLAS_FILL_MODE_UPPER = 1, CUBLAS_FILL_MODE_FULL = 2 } cublasFillMode_t;
typedef enum { CUBLAS_DIAG_NON_UNIT = 0, CUBLAS_DIAG_UNIT = 1 } cublasDiagType_t;
typedef enum { CUBLAS_SIDE_LEFT = 0, CUBLAS_SIDE_RIGHT = 1 } cublasSideMode_t;
typedef enum {
  CUBLAS_OP_N = 0,
  CUBLAS_OP_T = 1,
  CUBLAS_OP_C = 2,
  CUBLAS_OP_HERMITAN = 2,
  CUBLAS_OP_CONJG = 3,
} cublasOperation_t;
typedef enum { CUBLAS_POINTER_MODE_HOST = 0, CUBLAS_POINTER_MODE_DEVICE = 1 } cublasPointerMode_t;
typedef enum { CUBLAS_ATOMICS_NOT_ALLOWED = 0, CUBLAS_ATOMICS_ALLOWED = 1 } cublasAtomicsMode_t;
typedef enum {
  CUBLAS_DEFAULT_MATH = 0,
  CUBLAS_TENSOR_OP_MATH = 1,
  CUBLAS_PEDANTIC_MATH = 2,
  CUBLAS_TF32_TENSOR_OP_MATH = 3,
  CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION = 16,
} cublasMath_t;
typedef enum {
  CUBLAS_GEMM_DFALT = -1, CUBLAS_GEMM_DEFAULT = -1,
  CUBLAS_GEMM_ALGO0 = 0, CUBLAS_GEMM_ALGO1 = 1, CUBLAS_GEMM_ALGO2 = 2, CUBLAS_GEMM_ALGO3 = 3,
  CUBLAS_GEMM_ALGO4 = 4, CUBLAS_GEMM_ALGO5 = 5, CUBLAS_GEMM_ALGO6 = 6, CUBLAS_GEMM_ALGO7 = 7,
  CUBLAS_GEMM_ALGO8 = 8, CUBLAS_GEMM_ALGO9 = 9, CUBLAS_GEMM_ALGO10 = 10, CUBLAS_GEMM_ALGO11 = 11,
  CUBLAS_GEMM_ALGO12 = 12, CUBLAS_GEMM_ALGO13 = 13, CUBLAS_GEMM_ALGO14 = 14, CUBLAS_GEMM_ALGO15 = 15,
  CUBLAS_GEMM_ALGO16 = 16, CUBLAS_GEMM_ALGO17 = 17, CUBLAS_GEMM_ALGO18 = 18, CUBLAS_GEMM_ALGO19 = 19,
  CUBLAS_GEMM_ALGO20 = 20, CUBLAS_GEMM_ALGO21 = 21, CUBLAS_GEMM_ALGO22 = 22, CUBLAS_GEMM_ALGO23 = 23,
  CUBLAS_GEMM_DEFAULT_TENSOR_OP = 99, CUBLAS_GEMM_DFALT_TENSOR_OP = 99,
  CUBLAS_GEMM_ALGO0_TENSOR_OP = 100, CUBLAS_GEMM_ALGO1_TENSOR_OP = 101, CUBLAS_GEMM_ALGO2_TENSOR_OP = 102,
  CUBLAS_GEMM_ALGO3_TENSOR_OP = 103, CUBLAS_GEMM_ALGO4_TENSOR_OP = 104, CUBLAS_GEMM_ALGO5_TENSOR_OP = 105,
  CUBLAS_GEMM_ALGO6_TENSOR_OP = 106, CUBLAS_GEMM_ALGO7_TENSOR_OP = 107, CUBLAS_GEMM_ALGO8_TENSOR_OP = 108,
  CUBLAS_GEMM_ALGO9_TENSOR_OP = 109, CUBLAS_GEMM_ALGO10_TENSOR_OP = 110, CUBLAS_GEMM_ALGO11_TENSOR_OP = 111,
  CUBLAS_GEMM_ALGO12_TENSOR_OP = 112, CUBLAS_GEMM_ALGO13_TENSOR_OP = 113, CUBLAS_GEMM_ALGO14_TENSOR_OP = 114,
  CUBLAS_GEMM_ALGO15_TENSOR_OP = 115,
} cublasGemmAlgo_t;
typedef enum {
  CUBLAS_COMPUTE_16F = 64,
  CUBLAS_COMPUTE_16F_PEDANTIC = 65,
  CUBLAS_COMPUTE_32F = 68,
  CUBLAS_COMPUTE_32F_PEDANTIC = 69,
  CUBLAS_COMPUTE_32F_FAST_16F = 74,
  CUBLAS_COMPUTE_32F_FAST_16BF = 75,
  CUBLAS_COMPUTE_32F_FAST_TF32 = 77,
  CUBLAS_COMPUTE_64F = 70,
  CUBLAS_COMPUTE_64F_PEDANTIC = 71,
  CUBLAS_COMPUTE_32I = 72,
  CUBLAS_COMPUTE_32I_PEDANTIC = 73,
} cublasComputeType_t;
typedef cudaDataType cublasDataType_t;

struct cublasContext {
  cudaStream_t stream = 0;
  cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_HOST;
  cublasMath_t math_mode = CUBLAS_DEFAULT_MATH;
  cublasAtomicsMode_t atomics_mode = CUBLAS_ATOMICS_NOT_ALLOWED;
};
typedef struct cublasContext* cublasHandle_t;

namespace cudashim {
// The runtime's (cudashim_runtime.cpp): a library call's work as a node of the capture `__s` is
// in (it owns `__w`), and the capture a call a GPU refuses in it invalidates.
cudaError_t capture_library_call(cudaStream_t __s, _Closure* __w, const char* __library, const char* __call);
void invalidate_capture(cudaStream_t __s);
}  // namespace cudashim
namespace cudashim::blas {
// Runs a call's work now, or, when the handle's stream is being captured, makes it a node of the
// capture that each launch of the graph runs (a GPU records cuBLAS's kernels and runs nothing).
// The work holds its arguments by value and never the handle, which the program may destroy
// before it launches the graph. Argument checks stay at the call: their status is the call's.
template <class _Fn>
cublasStatus_t _enqueue(cublasHandle_t __h, _Fn&& __f, const char* __call = __builtin_FUNCTION()) {
  if (!::cudashim::capturing(__h->stream)) {
    __f();
    return CUBLAS_STATUS_SUCCESS;
  }
  auto* __w = new ::cudashim::_Closure_of<std::decay_t<_Fn>>(std::decay_t<_Fn>(std::forward<_Fn>(__f)));
  return ::cudashim::capture_library_call(__h->stream, __w, "cublas", __call) == cudaSuccess ? CUBLAS_STATUS_SUCCESS
                                                                                              : CUBLAS_STATUS_EXECUTION_FAILED;
}
// A result in host pointer mode is copied to the host and waited for: a GPU cannot do that in
// a capture, so the call fails (the copy is what fails: cuBLAS's internal-error status) and the
// capture is invalidated.
template <class _Fn>
cublasStatus_t _enqueue_result(cublasHandle_t __h, _Fn&& __f, const char* __call = __builtin_FUNCTION()) {
  if (__h->pointer_mode == CUBLAS_POINTER_MODE_HOST && ::cudashim::capturing(__h->stream)) {
    ::cudashim::invalidate_capture(__h->stream);
    return CUBLAS_STATUS_INTERNAL_ERROR;
  }
  return _enqueue(__h, std::forward<_Fn>(__f), __call);
}
// A scalar argument (alpha, beta, c, s): cuBLAS reads one given in host pointer mode at the call
// (a captured graph keeps that value) and one in device mode when its kernels run.
template <class _Tp>
struct _Scalar {
  const _Tp* __p = nullptr;  // device pointer mode
  _Tp __v{};
  _Tp get() const { return __p ? *__p : __v; }
};
template <class _Tp>
_Scalar<_Tp> _scalar(cublasHandle_t __h, const _Tp* __p) {
  _Scalar<_Tp> __s;
  if (__h->pointer_mode == CUBLAS_POINTER_MODE_DEVICE) __s.__p = __p;
  else __s.__v = *__p;
  return __s;
}
// The same for a scalar of a cudaDataType (the *Ex calls), widened exactly to double.
struct _Typed_scalar {
  const void* __p = nullptr;
  cudaDataType __t = CUDA_R_32F;
  double __v = 0;
  double get() const { return __p ? lib::load(__p, __t, 0) : __v; }
};
inline _Typed_scalar _scalar(cublasHandle_t __h, const void* __p, cudaDataType __t) {
  _Typed_scalar __s;
  __s.__t = __t;
  if (__h->pointer_mode == CUBLAS_POINTER_MODE_DEVICE) __s.__p = __p;
  else __s.__v = lib::load(__p, __t, 0);
  return __s;
}
}  // namespace cudashim::blas

// ---------------------------------------------------------------- helper context functions
inline cublasStatus_t cublasCreate(cublasHandle_t* __h) { ::cudashim::_Device_access __cudashim_da;
  if (!__h) return CUBLAS_STATUS_INVALID_VALUE;
  *__h = new cublasContext();
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasDestroy(cublasHandle_t __h) { ::cudashim::_Device_access __cudashim_da;
  if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;
  delete __h;
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasGetVersion(cublasHandle_t __h, int* __v) { ::cudashim::_Device_access __cudashim_da;
  if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!__v) return CUBLAS_STATUS_INVALID_VALUE;
  *__v = CUBLAS_VERSION;
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasGetProperty(libraryPropertyType __t, int* __v) { ::cudashim::_Device_access __cudashim_da;
  if (!__v) return CUBLAS_STATUS_INVALID_VALUE;
  switch (__t) {
    case MAJOR_VERSION: *__v = CUBLAS_VER_MAJOR; return CUBLAS_STATUS_SUCCESS;
    case MINOR_VERSION: *__v = CUBLAS_VER_MINOR; return CUBLAS_STATUS_SUCCESS;
    case PATCH_LEVEL: *__v = CUBLAS_VER_PATCH; return CUBLAS_STATUS_SUCCESS;
  }
  return CUBLAS_STATUS_INVALID_VALUE;
}
inline size_t cublasGetCudartVersion() { ::cudashim::_Device_access __cudashim_da; return CUDART_VERSION; }
inline cublasStatus_t cublasSetStream(cublasHandle_t __h, cudaStream_t __s) { ::cudashim::_Device_access __cudashim_da;
  if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;
  __h->stream = __s;
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasGetStream(cublasHandle_t __h, cudaStream_t* __s) { ::cudashim::_Device_access __cudashim_da;
  if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!__s) return CUBLAS_STATUS_INVALID_VALUE;
  *__s = __h->stream;
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasSetPointerMode(cublasHandle_t __h, cublasPointerMode_t __m) { ::cudashim::_Device_access __cudashim_da;
  if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (__m != CUBLAS_POINTER_MODE_HOST && __m != CUBLAS_POINTER_MODE_DEVICE) return CUBLAS_STATUS_INVALID_VALUE;
  __h->pointer_mode = __m;
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasGetPointerMode(cublasHandle_t __h, cublasPointerMode_t* __m) { ::cudashim::_Device_access __cudashim_da;
  if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!__m) return CUBLAS_STATUS_INVALID_VALUE;
  *__m = __h->pointer_mode;
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasSetMathMode(cublasHandle_t __h, cublasMath_t __m) { ::cudashim::_Device_access __cudashim_da;
  if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;
  __h->math_mode = __m;
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasGetMathMode(cublasHandle_t __h, cublasMath_t* __m) { ::cudashim::_Device_access __cudashim_da;
  if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!__m) return CUBLAS_STATUS_INVALID_VALUE;
  *__m = __h->math_mode;
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasSetAtomicsMode(cublasHandle_t __h, cublasAtomicsMode_t __m) { ::cudashim::_Device_access __cudashim_da;
  if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;
  __h->atomics_mode = __m;
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasGetAtomicsMode(cublasHandle_t __h, cublasAtomicsMode_t* __m) { ::cudashim::_Device_access __cudashim_da;
  if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!__m) return CUBLAS_STATUS_INVALID_VALUE;
  *__m = __h->atomics_mode;
  return CUBLAS_STATUS_SUCCESS;
}
// The subset needs no workspace: the buffer is accepted and unused.
inline cublasStatus_t cublasSetWorkspace(cublasHandle_t __h, void*, size_t) { ::cudashim::_Device_access __cudashim_da;
  return __h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}

inline const char* cublasGetStatusName(cublasStatus_t __s) { ::cudashim::_Device_access __cudashim_da;
  switch (__s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}
inline const char* cublasGetStatusString(cublasStatus_t __s) { ::cudashim::_Device_access __cudashim_da;
  switch (__s) {
    case CUBLAS_STATUS_SUCCESS: return "success";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "an absent device architectural feature is required";
    case CUBLAS_STATUS_MAPPING_ERROR: return "an access to GPU memory space failed";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "an internal operation failed";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
    case CUBLAS_STATUS_LICENSE_ERROR: return "error detected trying to check the license";
  }
  return "unknown error";
}

// ---------------------------------------------------------------- host <-> device copies
// As cudaMemcpy does (cudashim_runtime.cpp), the host-to-device copies are noted with the uploads
// and may carry the kernel-work check's second draw of an input to the device
// (validators/kernel_work.py), and the device-to-host copies give the host its own bytes back.
namespace cudashim::blas {
inline void _note_upload(const void* __x, int __n, int __es, int __incx) {
  if (!::cudashim::uploads_noted()) return;
  if (__incx == 1) { ::cudashim::note_upload(__x, (size_t)__n * __es); return; }
  std::vector<char> __bytes((size_t)__n * __es);  // what reaches the device, gathered
  for (long long __i = 0; __i < __n; ++__i)
    memcpy(__bytes.data() + __i * __es, static_cast<const char*>(__x) + __i * __incx * __es, __es);
  ::cudashim::note_upload(__bytes.data(), __bytes.size());
}
inline cublasStatus_t _copy_vector(int __n, int __es, const void* __x, int __incx, void* __y, int __incy, bool __up) {
  ::cudashim::_Device_access __cudashim_da;
  if (__es <= 0 || __incx <= 0 || __incy <= 0) return CUBLAS_STATUS_INVALID_VALUE;
  if (__n <= 0) return CUBLAS_STATUS_SUCCESS;
  if (__up) _note_upload(__x, __n, __es, __incx);
  for (long long __i = 0; __i < __n; ++__i)
    memcpy(static_cast<char*>(__y) + __i * __incy * __es, static_cast<const char*>(__x) + __i * __incx * __es, __es);
  if (__incx == 1 && __incy == 1) {
    if (__up) ::cudashim::symbol_upload(__x, __y, (size_t)__n * __es);
    else ::cudashim::symbol_download(__y, (size_t)__n * __es);
  }
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t _copy_matrix(int __rows, int __cols, int __es, const void* __a, int __lda, void* __b, int __ldb, bool __up) {
  ::cudashim::_Device_access __cudashim_da;
  if (__rows < 0 || __cols < 0 || __es <= 0 || __lda <= 0 || __ldb <= 0) return CUBLAS_STATUS_INVALID_VALUE;
  if (__rows == 0) return CUBLAS_STATUS_SUCCESS;
  // Whole columns at once, and the whole matrix when both are packed (one upload, as cudaMemcpy).
  const bool __packed = __lda == __rows && __ldb == __rows;
  const long long __runs = __packed ? 1 : __cols;
  const size_t __len = (size_t)__rows * __es * (__packed ? __cols : 1);
  for (long long __j = 0; __j < __runs; ++__j) {
    const char* __src = static_cast<const char*>(__a) + __j * __lda * __es;
    char* __dst = static_cast<char*>(__b) + __j * __ldb * __es;
    if (__up) ::cudashim::note_upload(__src, __len);
    memcpy(__dst, __src, __len);
    if (__up) ::cudashim::symbol_upload(__src, __dst, __len);
    else ::cudashim::symbol_download(__dst, __len);
  }
  return CUBLAS_STATUS_SUCCESS;
}
}  // namespace cudashim::blas
inline cublasStatus_t cublasSetVector(int __n, int __es, const void* __x, int __incx, void* __y, int __incy) {
  return ::cudashim::blas::_copy_vector(__n, __es, __x, __incx, __y, __incy, true);
}
inline cublasStatus_t cublasGetVector(int __n, int __es, const void* __x, int __incx, void* __y, int __incy) {
  return ::cudashim::blas::_copy_vector(__n, __es, __x, __incx, __y, __incy, false);
}
inline cublasStatus_t cublasSetMatrix(int __rows, int __cols, int __es, const void* __a, int __lda, void* __b, int __ldb) {
  return ::cudashim::blas::_copy_matrix(__rows, __cols, __es, __a, __lda, __b, __ldb, true);
}
inline cublasStatus_t cublasGetMatrix(int __rows, int __cols, int __es, const void* __a, int __lda, void* __b, int __ldb) {
  return ::cudashim::blas::_copy_matrix(__rows, __cols, __es, __a, __lda, __b, __ldb, false);
}
// On a capturing stream the copy is a node of the capture, reading its source when the graph
// runs (as cudaMemcpyAsync's is).
namespace cudashim::blas {
template <class _Fn>
cublasStatus_t _copy_async(cudaStream_t __s, bool __bad, _Fn&& __copy, const char* __call = __builtin_FUNCTION()) {
  if (__bad || !::cudashim::capturing(__s)) return __copy();
  auto __work = [__copy]() mutable { __copy(); };
  auto* __w = new ::cudashim::_Closure_of<decltype(__work)>(std::move(__work));
  return ::cudashim::capture_library_call(__s, __w, "cublas", __call) == cudaSuccess ? CUBLAS_STATUS_SUCCESS
                                                                                     : CUBLAS_STATUS_EXECUTION_FAILED;
}
}  // namespace cudashim::blas
inline cublasStatus_t cublasSetVectorAsync(int __n, int __es, const void* __x, int __incx, void* __y, int __incy, cudaStream_t __s) { ::cudashim::_Device_access __cudashim_da;
  return ::cudashim::blas::_copy_async(__s, __es <= 0 || __incx <= 0 || __incy <= 0,
                                       [=] { return cublasSetVector(__n, __es, __x, __incx, __y, __incy); });
}
inline cublasStatus_t cublasGetVectorAsync(int __n, int __es, const void* __x, int __incx, void* __y, int __incy, cudaStream_t __s) { ::cudashim::_Device_access __cudashim_da;
  return ::cudashim::blas::_copy_async(__s, __es <= 0 || __incx <= 0 || __incy <= 0,
                                       [=] { return cublasGetVector(__n, __es, __x, __incx, __y, __incy); });
}
inline cublasStatus_t cublasSetMatrixAsync(int __r, int __c, int __es, const void* __a, int __lda, void* __b, int __ldb, cudaStream_t __s) { ::cudashim::_Device_access __cudashim_da;
  return ::cudashim::blas::_copy_async(__s, __r < 0 || __c < 0 || __es <= 0 || __lda <= 0 || __ldb <= 0,
                                       [=] { return cublasSetMatrix(__r, __c, __es, __a, __lda, __b, __ldb); });
}
inline cublasStatus_t cublasGetMatrixAsync(int __r, int __c, int __es, const void* __a, int __lda, void* __b, int __ldb, cudaStream_t __s) { ::cudashim::_Device_access __cudashim_da;
  return ::cudashim::blas::_copy_async(__s, __r < 0 || __c < 0 || __es <= 0 || __lda <= 0 || __ldb <= 0,
                                       [=] { return cublasGetMatrix(__r, __c, __es, __a, __lda, __b, __ldb); });
}

// ---------------------------------------------------------------- implementation
namespace cudashim::blas {
using lib::vec_index;

// Sums are kept wider than the data: float in double, double in long double (x87, 64-bit mantissa).
template <class _Tp> struct wide { typedef double type; };
template <> struct wide<double> { typedef long double type; };

inline long long __at(long long __i, long long __inc) { return __i * __inc; }

template <class _Tp>
cublasStatus_t dot(cublasHandle_t __h, int __n, const _Tp* __x, int __incx, const _Tp* __y, int __incy, _Tp* __r) {
  if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!__r) return CUBLAS_STATUS_INVALID_VALUE;
  return _enqueue_result(__h, [=] {
    typename wide<_Tp>::type __s = 0;
    for (long long __i = 0; __i < __n; ++__i)
      __s += (typename wide<_Tp>::type)__x[vec_index(__i, __n, __incx)] * __y[vec_index(__i, __n, __incy)];
    *__r = (_Tp)__s;
  });
}

// sqrt of a sum of squares held in the wide type: no overflow for any float (in double) or
// double (in long double, up to 1e4932) input, and accurate to the last bit of the result type.
template <class _Tp>
cublasStatus_t nrm2(cublasHandle_t __h, int __n, const _Tp* __x, int __incx, _Tp* __r) {
  if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!__r) return CUBLAS_STATUS_INVALID_VALUE;
  return _enqueue_result(__h, [=] {
    typedef typename wide<_Tp>::type _Wp;
    _Wp __s = 0;
    if (__incx > 0)
      for (long long __i = 0; __i < __n; ++__i) {
        _Wp __v = __x[__at(__i, __incx)];
        __s += __v * __v;
      }
    *__r = (_Tp)std::sqrt(__s);
  });
}

template <class _Tp>
cublasStatus_t asum(cublasHandle_t __h, int __n, const _Tp* __x, int __incx, _Tp* __r) {
  if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!__r) return CUBLAS_STATUS_INVALID_VALUE;
  return _enqueue_result(__h, [=] {
    typename wide<_Tp>::type __s = 0;
    if (__incx > 0)
      for (long long __i = 0; __i < __n; ++__i) __s += fabsl(__x[__at(__i, __incx)]);
    *__r = (_Tp)__s;
  });
}

template <class _Tp>
cublasStatus_t axpy(cublasHandle_t __h, int __n, const _Tp* __alpha, const _Tp* __x, int __incx, _Tp* __y, int __incy) {
  if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (__n <= 0) return CUBLAS_STATUS_SUCCESS;
  if (!__alpha) return CUBLAS_STATUS_INVALID_VALUE;
  return _enqueue(__h, [=, __al = _scalar(__h, __alpha)] {
    const _Tp __a = __al.get();
    if (__a == _Tp(0)) return;
    for (long long __i = 0; __i < __n; ++__i) {
      _Tp& __yi = __y[vec_index(__i, __n, __incy)];
      __yi = std::fma(__a, __x[vec_index(__i, __n, __incx)], __yi);
    }
  });
}

template <class _Tp>
cublasStatus_t scal(cublasHandle_t __h, int __n, const _Tp* __alpha, _Tp* __x, int __incx) {
  if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (__n <= 0 || __incx <= 0) return CUBLAS_STATUS_SUCCESS;
  if (!__alpha) return CUBLAS_STATUS_INVALID_VALUE;
  return _enqueue(__h, [=, __al = _scalar(__h, __alpha)] {
    const _Tp __a = __al.get();
    for (long long __i = 0; __i < __n; ++__i) __x[__at(__i, __incx)] *= __a;
  });
}

template <class _Tp>
cublasStatus_t copy(cublasHandle_t __h, int __n, const _Tp* __x, int __incx, _Tp* __y, int __incy) {
  if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;
  return _enqueue(__h, [=] {
    for (long long __i = 0; __i < __n; ++__i) __y[vec_index(__i, __n, __incy)] = __x[vec_index(__i, __n, __incx)];
  });
}

template <class _Tp>
cublasStatus_t swap(cublasHandle_t __h, int __n, _Tp* __x, int __incx, _Tp* __y, int __incy) {
  if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;
  return _enqueue(__h, [=] {
    for (long long __i = 0; __i < __n; ++__i) {
      _Tp& __a = __x[vec_index(__i, __n, __incx)];
      _Tp& __b = __y[vec_index(__i, __n, __incy)];
      _Tp __t = __a;
      __a = __b;
      __b = __t;
    }
  });
}

template <class _Tp>
cublasStatus_t rot(cublasHandle_t __h, int __n, _Tp* __x, int __incx, _Tp* __y, int __incy, const _Tp* __c, const _Tp* __s) {
  if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (__n <= 0) return CUBLAS_STATUS_SUCCESS;
  if (!__c || !__s) return CUBLAS_STATUS_INVALID_VALUE;
  return _enqueue(__h, [=, __cs = _scalar(__h, __c), __ss = _scalar(__h, __s)] {
    const _Tp __cv = __cs.get(), __sv = __ss.get();
    for (long long __i = 0; __i < __n; ++__i) {
      _Tp& __a = __x[vec_index(__i, __n, __incx)];
      _Tp& __b = __y[vec_index(__i, __n, __incy)];
      const _Tp __na = __cv * __a + __sv * __b;
      __b = __cv * __b - __sv * __a;
      __a = __na;
    }
  });
}

// 1-based index of the first element with the largest (`__max`) or smallest |x|; 0 when empty.
template <class _Tp>
cublasStatus_t iamax(cublasHandle_t __h, int __n, const _Tp* __x, int __incx, int* __r, bool __max) {
  if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!__r) return CUBLAS_STATUS_INVALID_VALUE;
  return _enqueue_result(__h, [=] {
    if (__n <= 0 || __incx <= 0) {
      *__r = 0;
      return;
    }
    int __best = 0;
    _Tp __bv = std::fabs(__x[0]);
    for (long long __i = 1; __i < __n; ++__i) {
      _Tp __v = std::fabs(__x[__at(__i, __incx)]);
      if (__max ? __v > __bv : __v < __bv) {
        __bv = __v;
        __best = (int)__i;
      }
    }
    *__r = __best + 1;
  });
}

inline bool bad_op(cublasOperation_t __t) { return __t != CUBLAS_OP_N && __t != CUBLAS_OP_T && __t != CUBLAS_OP_C; }
inline long long at_least_1(long long __v) { return __v > 1 ? __v : 1; }

template <class _Tp>
cublasStatus_t gemv(cublasHandle_t __h, cublasOperation_t __tr, int __m, int __n, const _Tp* __alpha, const _Tp* __a, int __lda,
                    const _Tp* __x, int __incx, const _Tp* __beta, _Tp* __y, int __incy) {
  if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (bad_op(__tr) || __m < 0 || __n < 0 || __lda < at_least_1(__m) || __incx == 0 || __incy == 0 || !__alpha || !__beta)
    return CUBLAS_STATUS_INVALID_VALUE;
  return _enqueue(__h, [=, __as = _scalar(__h, __alpha), __bs = _scalar(__h, __beta)] {
    const _Tp __al = __as.get(), __be = __bs.get();
    if (__m == 0 || __n == 0 || (__al == _Tp(0) && __be == _Tp(1))) return;
    const bool __n_op = __tr == CUBLAS_OP_N;
    const long long __lx = __n_op ? __n : __m, __ly = __n_op ? __m : __n;
    for (long long __i = 0; __i < __ly; ++__i) {
      _Tp& __yi = __y[vec_index(__i, __ly, __incy)];
      __yi = __be == _Tp(0) ? _Tp(0) : __be * __yi;  // beta == 0: y is not read (may hold NaN)
    }
    if (__al == _Tp(0)) return;
    if (__n_op) {
      for (long long __j = 0; __j < __lx; ++__j) {
        const _Tp __t = __al * __x[vec_index(__j, __lx, __incx)];
        for (long long __i = 0; __i < __ly; ++__i) __y[vec_index(__i, __ly, __incy)] += __t * __a[__i + __j * __lda];
      }
    } else {
      for (long long __j = 0; __j < __ly; ++__j) {
        _Tp __s = 0;
        for (long long __i = 0; __i < __lx; ++__i) __s += __a[__i + __j * __lda] * __x[vec_index(__i, __lx, __incx)];
        __y[vec_index(__j, __ly, __incy)] += __al * __s;
      }
    }
  });
}

template <class _Tp>
cublasStatus_t ger(cublasHandle_t __h, int __m, int __n, const _Tp* __alpha, const _Tp* __x, int __incx, const _Tp* __y, int __incy,
                   _Tp* __a, int __lda) {
  if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (__m < 0 || __n < 0 || __incx == 0 || __incy == 0 || __lda < at_least_1(__m) || !__alpha) return CUBLAS_STATUS_INVALID_VALUE;
  return _enqueue(__h, [=, __as = _scalar(__h, __alpha)] {
    const _Tp __al = __as.get();
    if (__m == 0 || __n == 0 || __al == _Tp(0)) return;
    for (long long __j = 0; __j < __n; ++__j) {
      const _Tp __t = __al * __y[vec_index(__j, __n, __incy)];
      for (long long __i = 0; __i < __m; ++__i) __a[__i + __j * __lda] += __x[vec_index(__i, __m, __incx)] * __t;
    }
  });
}

// Argument checks of gemm (reference BLAS xerbla rules).
inline cublasStatus_t gemm_check(cublasHandle_t __h, cublasOperation_t __ta, cublasOperation_t __tb, int __m, int __n, int __k,
                                 int __lda, int __ldb, int __ldc) {
  if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (bad_op(__ta) || bad_op(__tb) || __m < 0 || __n < 0 || __k < 0) return CUBLAS_STATUS_INVALID_VALUE;
  if (__lda < at_least_1(__ta == CUBLAS_OP_N ? __m : __k)) return CUBLAS_STATUS_INVALID_VALUE;
  if (__ldb < at_least_1(__tb == CUBLAS_OP_N ? __k : __n)) return CUBLAS_STATUS_INVALID_VALUE;
  if (__ldc < at_least_1(__m)) return CUBLAS_STATUS_INVALID_VALUE;
  return CUBLAS_STATUS_SUCCESS;
}

// The dot product of two packed rows in four chains (the loop is latency-bound with one).
template <class _Cp>
inline _Cp dot_packed(const _Cp* __p, const _Cp* __q, long long __k) {
  _Cp __s0 = 0, __s1 = 0, __s2 = 0, __s3 = 0;
  long long __l = 0;
  for (; __l + 4 <= __k; __l += 4) {
    __s0 += __p[__l] * __q[__l];
    __s1 += __p[__l + 1] * __q[__l + 1];
    __s2 += __p[__l + 2] * __q[__l + 2];
    __s3 += __p[__l + 3] * __q[__l + 3];
  }
  for (; __l < __k; ++__l) __s0 += __p[__l] * __q[__l];
  return (__s0 + __s1) + (__s2 + __s3);
}

// C = alpha op(A) op(B) + beta C in the compute type `_Cp`, for any real element types: op(A)
// rows and op(B) columns are packed contiguously (converted once), then every C element is one
// dot product. beta == 0 means C is not read.
template <class _Cp>
void gemm_core(cublasOperation_t __ta, cublasOperation_t __tb, long long __m, long long __n, long long __k, _Cp __al,
               const void* __a, cudaDataType __at_, long long __lda, const void* __b, cudaDataType __bt, long long __ldb, _Cp __be,
               void* __c, cudaDataType __ct, long long __ldc) {
  if (__m == 0 || __n == 0) return;
  std::vector<_Cp> __pa, __pb;
  const bool __prod = __al != _Cp(0) && __k > 0;
  if (__prod) {
    __pa.resize((size_t)(__m * __k));
    __pb.resize((size_t)(__n * __k));
    for (long long __i = 0; __i < __m; ++__i)
      for (long long __l = 0; __l < __k; ++__l)
        __pa[__i * __k + __l] = (_Cp)lib::load(__a, __at_, __ta == CUBLAS_OP_N ? __i + __l * __lda : __l + __i * __lda);
    for (long long __j = 0; __j < __n; ++__j)
      for (long long __l = 0; __l < __k; ++__l)
        __pb[__j * __k + __l] = (_Cp)lib::load(__b, __bt, __tb == CUBLAS_OP_N ? __l + __j * __ldb : __j + __l * __ldb);
  }
  for (long long __j = 0; __j < __n; ++__j)
    for (long long __i = 0; __i < __m; ++__i) {
      _Cp __r = 0;
      if (__prod) __r = __al * dot_packed(&__pa[__i * __k], &__pb[__j * __k], __k);
      const long long __ci = __i + __j * __ldc;
      if (__be != _Cp(0)) __r += __be * (_Cp)lib::load(__c, __ct, __ci);
      lib::store(__c, __ct, __ci, (double)__r);
    }
}

template <class _Tp> constexpr cudaDataType dtype();
template <> constexpr cudaDataType dtype<float>() { return CUDA_R_32F; }
template <> constexpr cudaDataType dtype<double>() { return CUDA_R_64F; }
template <> constexpr cudaDataType dtype<__half>() { return CUDA_R_16F; }

template <class _Tp>
cublasStatus_t gemm_strided(cublasHandle_t __h, cublasOperation_t __ta, cublasOperation_t __tb, int __m, int __n, int __k,
                            const _Tp* __alpha, const _Tp* __a, int __lda, long long __sa, const _Tp* __b, int __ldb, long long __sb,
                            const _Tp* __beta, _Tp* __c, int __ldc, long long __sc, int __batch) {
  cublasStatus_t __st = gemm_check(__h, __ta, __tb, __m, __n, __k, __lda, __ldb, __ldc);
  if (__st != CUBLAS_STATUS_SUCCESS) return __st;
  if (__batch < 0 || !__alpha || !__beta) return CUBLAS_STATUS_INVALID_VALUE;
  typedef std::conditional_t<std::is_same_v<_Tp, double>, double, float> _Cp;
  return _enqueue(__h, [=, __as = _scalar(__h, __alpha), __bs = _scalar(__h, __beta)] {
    const _Cp __al = (_Cp)__as.get(), __be = (_Cp)__bs.get();
    for (long long __i = 0; __i < __batch; ++__i)
      gemm_core<_Cp>(__ta, __tb, __m, __n, __k, __al, __a + __i * __sa, dtype<_Tp>(), __lda, __b + __i * __sb, dtype<_Tp>(), __ldb,
                     __be, __c + __i * __sc, dtype<_Tp>(), __ldc);
  });
}

template <class _Tp>
cublasStatus_t gemm_batched(cublasHandle_t __h, cublasOperation_t __ta, cublasOperation_t __tb, int __m, int __n, int __k,
                            const _Tp* __alpha, const _Tp* const __a[], int __lda, const _Tp* const __b[], int __ldb,
                            const _Tp* __beta, _Tp* const __c[], int __ldc, int __batch) {
  cublasStatus_t __st = gemm_check(__h, __ta, __tb, __m, __n, __k, __lda, __ldb, __ldc);
  if (__st != CUBLAS_STATUS_SUCCESS) return __st;
  if (__batch < 0 || !__alpha || !__beta) return CUBLAS_STATUS_INVALID_VALUE;
  typedef std::conditional_t<std::is_same_v<_Tp, double>, double, float> _Cp;
  // The pointer arrays are device memory: read when the work runs.
  return _enqueue(__h, [=, __as = _scalar(__h, __alpha), __bs = _scalar(__h, __beta)] {
    const _Cp __al = (_Cp)__as.get(), __be = (_Cp)__bs.get();
    for (long long __i = 0; __i < __batch; ++__i)
      gemm_core<_Cp>(__ta, __tb, __m, __n, __k, __al, __a[__i], dtype<_Tp>(), __lda, __b[__i], dtype<_Tp>(), __ldb, __be, __c[__i],
                     dtype<_Tp>(), __ldc);
  });
}

template <class _Tp>
cublasStatus_t geam(cublasHandle_t __h, cublasOperation_t __ta, cublasOperation_t __tb, int __m, int __n, const _Tp* __alpha,
                    const _Tp* __a, int __lda, const _Tp* __beta, const _Tp* __b, int __ldb, _Tp* __c, int __ldc) {
  if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (bad_op(__ta) || bad_op(__tb) || __m < 0 || __n < 0 || !__alpha || !__beta) return CUBLAS_STATUS_INVALID_VALUE;
  if (__lda < at_least_1(__ta == CUBLAS_OP_N ? __m : __n) || __ldb < at_least_1(__tb == CUBLAS_OP_N ? __m : __n) ||
      __ldc < at_least_1(__m))
    return CUBLAS_STATUS_INVALID_VALUE;
  return _enqueue(__h, [=, __as = _scalar(__h, __alpha), __bs = _scalar(__h, __beta)] {
    const _Tp __al = __as.get(), __be = __bs.get();
    for (long long __j = 0; __j < __n; ++__j)
      for (long long __i = 0; __i < __m; ++__i) {
        _Tp __r = 0;  // a zero scalar means its matrix is not read
        if (__al != _Tp(0)) __r += __al * __a[__ta == CUBLAS_OP_N ? __i + __j * __lda : __j + __i * __lda];
        if (__be != _Tp(0)) __r += __be * __b[__tb == CUBLAS_OP_N ? __i + __j * __ldb : __j + __i * __ldb];
        __c[__i + __j * __ldc] = __r;
      }
  });
}

// The compute precision of a cublasComputeType_t: 'f' float, 'd' double, 0 outside the subset.
inline char compute_kind(cublasComputeType_t __c) {
  switch (__c) {
    case CUBLAS_COMPUTE_16F: case CUBLAS_COMPUTE_16F_PEDANTIC:  // computed in float, rounded at the end
    case CUBLAS_COMPUTE_32F: case CUBLAS_COMPUTE_32F_PEDANTIC: case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF: case CUBLAS_COMPUTE_32F_FAST_TF32:
      return 'f';
    case CUBLAS_COMPUTE_64F: case CUBLAS_COMPUTE_64F_PEDANTIC: return 'd';
    default: return 0;
  }
}

// alpha/beta have the compute type's scalar type: __half for 16F, float for 32F, double for 64F.
inline cudaDataType scalar_type(cublasComputeType_t __c) {
  if (__c == CUBLAS_COMPUTE_16F || __c == CUBLAS_COMPUTE_16F_PEDANTIC) return CUDA_R_16F;
  return compute_kind(__c) == 'd' ? CUDA_R_64F : CUDA_R_32F;
}

inline void require_types(const char* __fn, cudaDataType __a, cudaDataType __b, cudaDataType __c, cublasComputeType_t __ct) {
  if (lib::real_float(__a) && lib::real_float(__b) && lib::real_float(__c) && compute_kind(__ct)) return;
  char __msg[256];
  snprintf(__msg, sizeof __msg, "%s with A %s, B %s, C %s, compute type %d", __fn, lib::type_name(__a), lib::type_name(__b),
           lib::type_name(__c), (int)__ct);
  lib::needs_gpu(__msg);
}

inline size_t elem_size(cudaDataType __t) {
  return __t == CUDA_R_64F ? 8 : __t == CUDA_R_32F ? 4 : 2;
}

inline cublasStatus_t gemm_ex(const char* __fn, cublasHandle_t __h, cublasOperation_t __ta, cublasOperation_t __tb, int __m, int __n,
                              int __k, const void* __alpha, const void* const* __a, cudaDataType __at_, int __lda, long long __sa,
                              const void* const* __b, cudaDataType __bt, int __ldb, long long __sb, const void* __beta,
                              void* const* __c, cudaDataType __ct, int __ldc, long long __sc, int __batch, cublasComputeType_t __cmp,
                              bool __arrays) {
  cublasStatus_t __st = gemm_check(__h, __ta, __tb, __m, __n, __k, __lda, __ldb, __ldc);
  if (__st != CUBLAS_STATUS_SUCCESS) return __st;
  if (__batch < 0 || !__alpha || !__beta) return CUBLAS_STATUS_INVALID_VALUE;
  require_types(__fn, __at_, __bt, __ct, __cmp);
  // `__a`, `__b`, `__c` are one pointer (the strided forms, read now: they point at the caller's
  // variables) or a device array of them (read when the work runs).
  const void* const* __ap = __a;
  const void* const* __bp = __b;
  void* const* __cp = __c;
  const void* __a0 = __arrays ? nullptr : __a[0];
  const void* __b0 = __arrays ? nullptr : __b[0];
  void* __c0 = __arrays ? nullptr : __c[0];
  return _enqueue(__h, [=, __as = _scalar(__h, __alpha, scalar_type(__cmp)), __bs = _scalar(__h, __beta, scalar_type(__cmp))] {
    const double __al = __as.get(), __be = __bs.get();
    for (long long __i = 0; __i < __batch; ++__i) {
      const void* __ai = __arrays ? __ap[__i] : static_cast<const char*>(__a0) + __i * __sa * elem_size(__at_);
      const void* __bi = __arrays ? __bp[__i] : static_cast<const char*>(__b0) + __i * __sb * elem_size(__bt);
      void* __ci = __arrays ? __cp[__i] : static_cast<char*>(__c0) + __i * __sc * elem_size(__ct);
      if (compute_kind(__cmp) == 'd')
        gemm_core<double>(__ta, __tb, __m, __n, __k, __al, __ai, __at_, __lda, __bi, __bt, __ldb, __be, __ci, __ct, __ldc);
      else
        gemm_core<float>(__ta, __tb, __m, __n, __k, (float)__al, __ai, __at_, __lda, __bi, __bt, __ldb, (float)__be, __ci, __ct, __ldc);
    }
  });
}

inline cublasComputeType_t migrate(cudaDataType __t) {
  switch (__t) {
    case CUDA_R_16F: return CUBLAS_COMPUTE_16F;
    case CUDA_R_64F: return CUBLAS_COMPUTE_64F;
    case CUDA_R_32I: return CUBLAS_COMPUTE_32I;
    default: return CUBLAS_COMPUTE_32F;
  }
}

// Level-1 *Ex: real types only; the execution type must be at least as wide as the data.
inline void require_real(const char* __fn, cudaDataType __a, cudaDataType __b, cudaDataType __c) {
  if (lib::real_float(__a) && lib::real_float(__b) && lib::real_float(__c)) return;
  char __msg[256];
  snprintf(__msg, sizeof __msg, "%s with %s, %s, %s", __fn, lib::type_name(__a), lib::type_name(__b), lib::type_name(__c));
  lib::needs_gpu(__msg);
}

}  // namespace cudashim::blas

// ---------------------------------------------------------------- level 1
#define CUDASHIM_BLAS_L1(_Sx, _Lx, _Tp)                                                                                             \
  inline cublasStatus_t cublas##_Sx##dot(cublasHandle_t __h, int __n, const _Tp* __x, int __incx, const _Tp* __y, int __incy,     \
                                         _Tp* __r) { ::cudashim::_Library_access __cudashim_da("cublas");                                                                           \
    return cudashim::blas::dot(__h, __n, __x, __incx, __y, __incy, __r);                                                       \
  }                                                                                                                            \
  inline cublasStatus_t cublas##_Sx##nrm2(cublasHandle_t __h, int __n, const _Tp* __x, int __incx, _Tp* __r) { ::cudashim::_Library_access __cudashim_da("cublas");                 \
    return cudashim::blas::nrm2(__h, __n, __x, __incx, __r);                                                                   \
  }                                                                                                                            \
  inline cublasStatus_t cublas##_Sx##asum(cublasHandle_t __h, int __n, const _Tp* __x, int __incx, _Tp* __r) { ::cudashim::_Library_access __cudashim_da("cublas");                 \
    return cudashim::blas::asum(__h, __n, __x, __incx, __r);                                                                   \
  }                                                                                                                            \
  inline cublasStatus_t cublas##_Sx##axpy(cublasHandle_t __h, int __n, const _Tp* __a, const _Tp* __x, int __incx, _Tp* __y,    \
                                          int __incy) { ::cudashim::_Library_access __cudashim_da("cublas");                                                                        \
    return cudashim::blas::axpy(__h, __n, __a, __x, __incx, __y, __incy);                                                      \
  }                                                                                                                            \
  inline cublasStatus_t cublas##_Sx##scal(cublasHandle_t __h, int __n, const _Tp* __a, _Tp* __x, int __incx) { ::cudashim::_Library_access __cudashim_da("cublas");                  \
    return cudashim::blas::scal(__h, __n, __a, __x, __incx);                                                                   \
  }                                                                                                                            \
  inline cublasStatus_t cublas##_Sx##copy(cublasHandle_t __h, int __n, const _Tp* __x, int __incx, _Tp* __y, int __incy) { ::cudashim::_Library_access __cudashim_da("cublas");      \
    return cudashim::blas::copy(__h, __n, __x, __incx, __y, __incy);                                                           \
  }                                                                                                                            \
  inline cublasStatus_t cublas##_Sx##swap(cublasHandle_t __h, int __n, _Tp* __x, int __incx, _Tp* __y, int __incy) { ::cudashim::_Library_access __cudashim_da("cublas");            \
    return cudashim::blas::swap(__h, __n, __x, __incx, __y, __incy);                                                           \
  }                                                                                                                            \
  inline cublasStatus_t cublas##_Sx##rot(cublasHandle_t __h, int __n, _Tp* __x, int __incx, _Tp* __y, int __incy, const _Tp* __c, \
                                         const _Tp* __s) { ::cudashim::_Library_access __cudashim_da("cublas");                                                                     \
    return cudashim::blas::rot(__h, __n, __x, __incx, __y, __incy, __c, __s);                                                  \
  }                                                                                                                            \
  inline cublasStatus_t cublasI##_Lx##amax(cublasHandle_t __h, int __n, const _Tp* __x, int __incx, int* __r) { ::cudashim::_Library_access __cudashim_da("cublas");                 \
    return cudashim::blas::iamax(__h, __n, __x, __incx, __r, true);                                                            \
  }                                                                                                                            \
  inline cublasStatus_t cublasI##_Lx##amin(cublasHandle_t __h, int __n, const _Tp* __x, int __incx, int* __r) { ::cudashim::_Library_access __cudashim_da("cublas");                 \
    return cudashim::blas::iamax(__h, __n, __x, __incx, __r, false);                                                           \
  }
CUDASHIM_BLAS_L1(S, s, float)
CUDASHIM_BLAS_L1(D, d, double)
#undef CUDASHIM_BLAS_L1

inline cublasStatus_t cublasDotEx(cublasHandle_t __h, int __n, const void* __x, cudaDataType __xt, int __incx, const void* __y,
                                  cudaDataType __yt, int __incy, void* __r, cudaDataType __rt, cudaDataType __et) { ::cudashim::_Library_access __cudashim_da("cublas");
  if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!__r) return CUBLAS_STATUS_INVALID_VALUE;
  cudashim::blas::require_real("cublasDotEx", __xt, __yt, __rt);
  cudashim::blas::require_real("cublasDotEx", __et, __et, __et);
  return cudashim::blas::_enqueue_result(__h, [=] {
    long double __s = 0;
    for (long long __i = 0; __i < __n; ++__i)
      __s += (long double)cudashim::lib::load(__x, __xt, cudashim::lib::vec_index(__i, __n, __incx)) *
             cudashim::lib::load(__y, __yt, cudashim::lib::vec_index(__i, __n, __incy));
    cudashim::lib::store(__r, __rt, 0, (double)__s);
  });
}
inline cublasStatus_t cublasDotcEx(cublasHandle_t __h, int __n, const void* __x, cudaDataType __xt, int __incx, const void* __y,
                                   cudaDataType __yt, int __incy, void* __r, cudaDataType __rt, cudaDataType __et) { ::cudashim::_Library_access __cudashim_da("cublas");
  return cublasDotEx(__h, __n, __x, __xt, __incx, __y, __yt, __incy, __r, __rt, __et);  // conjugation is a no-op on reals
}
inline cublasStatus_t cublasNrm2Ex(cublasHandle_t __h, int __n, const void* __x, cudaDataType __xt, int __incx, void* __r,
                                   cudaDataType __rt, cudaDataType __et) { ::cudashim::_Library_access __cudashim_da("cublas");
  if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!__r) return CUBLAS_STATUS_INVALID_VALUE;
  cudashim::blas::require_real("cublasNrm2Ex", __xt, __rt, __et);
  return cudashim::blas::_enqueue_result(__h, [=] {
    long double __s = 0;
    if (__incx > 0)
      for (long long __i = 0; __i < __n; ++__i) {
        long double __v = cudashim::lib::load(__x, __xt, __i * __incx);
        __s += __v * __v;
      }
    cudashim::lib::store(__r, __rt, 0, (double)sqrtl(__s));
  });
}
inline cublasStatus_t cublasAxpyEx(cublasHandle_t __h, int __n, const void* __alpha, cudaDataType __alt, const void* __x,
                                   cudaDataType __xt, int __incx, void* __y, cudaDataType __yt, int __incy, cudaDataType __et) { ::cudashim::_Library_access __cudashim_da("cublas");
  if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (__n <= 0) return CUBLAS_STATUS_SUCCESS;
  if (!__alpha) return CUBLAS_STATUS_INVALID_VALUE;
  cudashim::blas::require_real("cublasAxpyEx", __alt, __xt, __yt);
  cudashim::blas::require_real("cublasAxpyEx", __et, __et, __et);
  return cudashim::blas::_enqueue(__h, [=, __as = cudashim::blas::_scalar(__h, __alpha, __alt)] {
    const double __a = __as.get();
    const bool __wide = __et == CUDA_R_64F;
    for (long long __i = 0; __i < __n; ++__i) {
      const long long __iy = cudashim::lib::vec_index(__i, __n, __incy);
      const double __xv = cudashim::lib::load(__x, __xt, cudashim::lib::vec_index(__i, __n, __incx));
      const double __yv = cudashim::lib::load(__y, __yt, __iy);
      // In the execution type: one fused multiply-add, as the GPU kernel does.
      cudashim::lib::store(__y, __yt, __iy, __wide ? std::fma(__a, __xv, __yv) : (double)std::fma((float)__a, (float)__xv, (float)__yv));
    }
  });
}
inline cublasStatus_t cublasScalEx(cublasHandle_t __h, int __n, const void* __alpha, cudaDataType __alt, void* __x, cudaDataType __xt,
                                   int __incx, cudaDataType __et) { ::cudashim::_Library_access __cudashim_da("cublas");
  if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (__n <= 0 || __incx <= 0) return CUBLAS_STATUS_SUCCESS;
  if (!__alpha) return CUBLAS_STATUS_INVALID_VALUE;
  cudashim::blas::require_real("cublasScalEx", __alt, __xt, __et);
  return cudashim::blas::_enqueue(__h, [=, __as = cudashim::blas::_scalar(__h, __alpha, __alt)] {
    const double __a = __as.get();
    const bool __wide = __et == CUDA_R_64F;
    for (long long __i = 0; __i < __n; ++__i) {
      const double __v = cudashim::lib::load(__x, __xt, __i * __incx);
      cudashim::lib::store(__x, __xt, __i * __incx, __wide ? __a * __v : (double)((float)__a * (float)__v));
    }
  });
}

// ---------------------------------------------------------------- level 2
#define CUDASHIM_BLAS_L2(_Sx, _Tp)                                                                                             \
  inline cublasStatus_t cublas##_Sx##gemv(cublasHandle_t __h, cublasOperation_t __tr, int __m, int __n, const _Tp* __alpha,    \
                                          const _Tp* __a, int __lda, const _Tp* __x, int __incx, const _Tp* __beta, _Tp* __y,   \
                                          int __incy) { ::cudashim::_Library_access __cudashim_da("cublas");                                                                        \
    return cudashim::blas::gemv(__h, __tr, __m, __n, __alpha, __a, __lda, __x, __incx, __beta, __y, __incy);                    \
  }                                                                                                                            \
  inline cublasStatus_t cublas##_Sx##ger(cublasHandle_t __h, int __m, int __n, const _Tp* __alpha, const _Tp* __x, int __incx,  \
                                         const _Tp* __y, int __incy, _Tp* __a, int __lda) { ::cudashim::_Library_access __cudashim_da("cublas");                                    \
    return cudashim::blas::ger(__h, __m, __n, __alpha, __x, __incx, __y, __incy, __a, __lda);                                  \
  }
CUDASHIM_BLAS_L2(S, float)
CUDASHIM_BLAS_L2(D, double)
#undef CUDASHIM_BLAS_L2

// ---------------------------------------------------------------- level 3
#define CUDASHIM_BLAS_L3(_Sx, _Tp)                                                                                             \
  inline cublasStatus_t cublas##_Sx##gemm(cublasHandle_t __h, cublasOperation_t __ta, cublasOperation_t __tb, int __m, int __n, \
                                          int __k, const _Tp* __alpha, const _Tp* __a, int __lda, const _Tp* __b, int __ldb,    \
                                          const _Tp* __beta, _Tp* __c, int __ldc) { ::cudashim::_Library_access __cudashim_da("cublas");                                            \
    return cudashim::blas::gemm_strided(__h, __ta, __tb, __m, __n, __k, __alpha, __a, __lda, 0, __b, __ldb, 0, __beta, __c,     \
                                        __ldc, 0, 1);                                                                          \
  }                                                                                                                            \
  inline cublasStatus_t cublas##_Sx##gemmStridedBatched(                                                                       \
      cublasHandle_t __h, cublasOperation_t __ta, cublasOperation_t __tb, int __m, int __n, int __k, const _Tp* __alpha,       \
      const _Tp* __a, int __lda, long long int __sa, const _Tp* __b, int __ldb, long long int __sb, const _Tp* __beta, _Tp* __c, \
      int __ldc, long long int __sc, int __batch) { ::cudashim::_Library_access __cudashim_da("cublas");                                                                            \
    return cudashim::blas::gemm_strided(__h, __ta, __tb, __m, __n, __k, __alpha, __a, __lda, __sa, __b, __ldb, __sb, __beta,    \
                                        __c, __ldc, __sc, __batch);                                                            \
  }                                                                                                                            \
  inline cublasStatus_t cublas##_Sx##gemmBatched(cublasHandle_t __h, cublasOperation_t __ta, cublasOperation_t __tb, int __m,  \
                                                 int __n, int __k, const _Tp* __alpha, const _Tp* const __a[], int __lda,       \
                                                 const _Tp* const __b[], int __ldb, const _Tp* __beta, _Tp* const __c[],        \
                                                 int __ldc, int __batch) { ::cudashim::_Library_access __cudashim_da("cublas");                                                     \
    return cudashim::blas::gemm_batched(__h, __ta, __tb, __m, __n, __k, __alpha, __a, __lda, __b, __ldb, __beta, __c, __ldc,    \
                                        __batch);                                                                              \
  }                                                                                                                            \
  inline cublasStatus_t cublas##_Sx##geam(cublasHandle_t __h, cublasOperation_t __ta, cublasOperation_t __tb, int __m, int __n, \
                                          const _Tp* __alpha, const _Tp* __a, int __lda, const _Tp* __beta, const _Tp* __b,     \
                                          int __ldb, _Tp* __c, int __ldc) { ::cudashim::_Library_access __cudashim_da("cublas");                                                    \
    return cudashim::blas::geam(__h, __ta, __tb, __m, __n, __alpha, __a, __lda, __beta, __b, __ldb, __c, __ldc);               \
  }
CUDASHIM_BLAS_L3(S, float)
CUDASHIM_BLAS_L3(D, double)
#undef CUDASHIM_BLAS_L3

// Batched LU, inverse, QR and least squares in S, D, C and Z.
#include <cudashim/cublas_solvers.h>

inline cublasStatus_t cublasHgemm(cublasHandle_t __h, cublasOperation_t __ta, cublasOperation_t __tb, int __m, int __n, int __k,
                                  const __half* __alpha, const __half* __a, int __lda, const __half* __b, int __ldb, const __half* __beta,
                                  __half* __c, int __ldc) { ::cudashim::_Library_access __cudashim_da("cublas");
  return cudashim::blas::gemm_strided(__h, __ta, __tb, __m, __n, __k, __alpha, __a, __lda, 0, __b, __ldb, 0, __beta, __c, __ldc, 0, 1);
}
inline cublasStatus_t cublasHgemmStridedBatched(cublasHandle_t __h, cublasOperation_t __ta, cublasOperation_t __tb, int __m, int __n,
                                                int __k, const __half* __alpha, const __half* __a, int __lda, long long int __sa,
                                                const __half* __b, int __ldb, long long int __sb, const __half* __beta, __half* __c,
                                                int __ldc, long long int __sc, int __batch) { ::cudashim::_Library_access __cudashim_da("cublas");
  return cudashim::blas::gemm_strided(__h, __ta, __tb, __m, __n, __k, __alpha, __a, __lda, __sa, __b, __ldb, __sb, __beta, __c, __ldc,
                                      __sc, __batch);
}
inline cublasStatus_t cublasHgemmBatched(cublasHandle_t __h, cublasOperation_t __ta, cublasOperation_t __tb, int __m, int __n, int __k,
                                         const __half* __alpha, const __half* const __a[], int __lda, const __half* const __b[],
                                         int __ldb, const __half* __beta, __half* const __c[], int __ldc, int __batch) { ::cudashim::_Library_access __cudashim_da("cublas");
  return cudashim::blas::gemm_batched(__h, __ta, __tb, __m, __n, __k, __alpha, __a, __lda, __b, __ldb, __beta, __c, __ldc, __batch);
}

inline cublasStatus_t cublasGemmEx(cublasHandle_t __h, cublasOperation_t __ta, cublasOperation_t __tb, int __m, int __n, int __k,
                                   const void* __alpha, const void* __a, cudaDataType __at, int __lda, const void* __b, cudaDataType __bt,
                                   int __ldb, const void* __beta, void* __c, cudaDataType __ct, int __ldc, cublasComputeType_t __cmp,
                                   cublasGemmAlgo_t) { ::cudashim::_Library_access __cudashim_da("cublas");
  return cudashim::blas::gemm_ex("cublasGemmEx", __h, __ta, __tb, __m, __n, __k, __alpha, &__a, __at, __lda, 0, &__b, __bt, __ldb, 0,
                                 __beta, &__c, __ct, __ldc, 0, 1, __cmp, false);
}
inline cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t __h, cublasOperation_t __ta, cublasOperation_t __tb, int __m, int __n,
                                                 int __k, const void* __alpha, const void* __a, cudaDataType __at, int __lda,
                                                 long long int __sa, const void* __b, cudaDataType __bt, int __ldb, long long int __sb,
                                                 const void* __beta, void* __c, cudaDataType __ct, int __ldc, long long int __sc,
                                                 int __batch, cublasComputeType_t __cmp, cublasGemmAlgo_t) { ::cudashim::_Library_access __cudashim_da("cublas");
  return cudashim::blas::gemm_ex("cublasGemmStridedBatchedEx", __h, __ta, __tb, __m, __n, __k, __alpha, &__a, __at, __lda, __sa, &__b,
                                 __bt, __ldb, __sb, __beta, &__c, __ct, __ldc, __sc, __batch, __cmp, false);
}
inline cublasStatus_t cublasGemmBatchedEx(cublasHandle_t __h, cublasOperation_t __ta, cublasOperation_t __tb, int __m, int __n, int __k,
                                          const void* __alpha, const void* const __a[], cudaDataType __at, int __lda,
                                          const void* const __b[], cudaDataType __bt, int __ldb, const void* __beta, void* const __c[],
                                          cudaDataType __ct, int __ldc, int __batch, cublasComputeType_t __cmp, cublasGemmAlgo_t) { ::cudashim::_Library_access __cudashim_da("cublas");
  return cudashim::blas::gemm_ex("cublasGemmBatchedEx", __h, __ta, __tb, __m, __n, __k, __alpha, __a, __at, __lda, 0, __b, __bt, __ldb,
                                 0, __beta, __c, __ct, __ldc, 0, __batch, __cmp, true);
}
// Pre-CUDA-11 code passes a cudaDataType as the compute type; cuBLAS keeps these C++ overloads.
inline cublasStatus_t cublasGemmEx(cublasHandle_t __h, cublasOperation_t __ta, cublasOperation_t __tb, int __m, int __n, int __k,
                                   const void* __alpha, const void* __a, cudaDataType __at, int __lda, const void* __b, cudaDataType __bt,
                                   int __ldb, const void* __beta, void* __c, cudaDataType __ct, int __ldc, cudaDataType __cmp,
                                   cublasGemmAlgo_t __algo) { ::cudashim::_Library_access __cudashim_da("cublas");
  return cublasGemmEx(__h, __ta, __tb, __m, __n, __k, __alpha, __a, __at, __lda, __b, __bt, __ldb, __beta, __c, __ct, __ldc,
                      cudashim::blas::migrate(__cmp), __algo);
}
inline cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t __h, cublasOperation_t __ta, cublasOperation_t __tb, int __m, int __n,
                                                 int __k, const void* __alpha, const void* __a, cudaDataType __at, int __lda,
                                                 long long int __sa, const void* __b, cudaDataType __bt, int __ldb, long long int __sb,
                                                 const void* __beta, void* __c, cudaDataType __ct, int __ldc, long long int __sc,
                                                 int __batch, cudaDataType __cmp, cublasGemmAlgo_t __algo) { ::cudashim::_Library_access __cudashim_da("cublas");
  return cublasGemmStridedBatchedEx(__h, __ta, __tb, __m, __n, __k, __alpha, __a, __at, __lda, __sa, __b, __bt, __ldb, __sb, __beta,
                                    __c, __ct, __ldc, __sc, __batch, cudashim::blas::migrate(__cmp), __algo);
}
inline cublasStatus_t cublasGemmBatchedEx(cublasHandle_t __h, cublasOperation_t __ta, cublasOperation_t __tb, int __m, int __n, int __k,
                                          const void* __alpha, const void* const __a[], cudaDataType __at, int __lda,
                                          const void* const __b[], cudaDataType __bt, int __ldb, const void* __beta, void* const __c[],
                                          cudaDataType __ct, int __ldc, int __batch, cudaDataType __cmp, cublasGemmAlgo_t __algo) { ::cudashim::_Library_access __cudashim_da("cublas");
  return cublasGemmBatchedEx(__h, __ta, __tb, __m, __n, __k, __alpha, __a, __at, __lda, __b, __bt, __ldb, __beta, __c, __ct, __ldc,
                             __batch, cudashim::blas::migrate(__cmp), __algo);
}
inline cublasStatus_t cublasSgemmEx(cublasHandle_t __h, cublasOperation_t __ta, cublasOperation_t __tb, int __m, int __n, int __k,
                                    const float* __alpha, const void* __a, cudaDataType __at, int __lda, const void* __b,
                                    cudaDataType __bt, int __ldb, const float* __beta, void* __c, cudaDataType __ct, int __ldc) { ::cudashim::_Library_access __cudashim_da("cublas");
  return cudashim::blas::gemm_ex("cublasSgemmEx", __h, __ta, __tb, __m, __n, __k, __alpha, &__a, __at, __lda, 0, &__b, __bt, __ldb, 0,
                                 __beta, &__c, __ct, __ldc, 0, 1, CUBLAS_COMPUTE_32F, false);
}

// ---------------------------------------------------------------- the `_v2` spellings
#define cublasCreate_v2 cublasCreate
#define cublasDestroy_v2 cublasDestroy
#define cublasGetVersion_v2 cublasGetVersion
#define cublasSetStream_v2 cublasSetStream
#define cublasGetStream_v2 cublasGetStream
#define cublasGetPointerMode_v2 cublasGetPointerMode
#define cublasSetPointerMode_v2 cublasSetPointerMode
#define cublasSnrm2_v2 cublasSnrm2
#define cublasDnrm2_v2 cublasDnrm2
#define cublasSdot_v2 cublasSdot
#define cublasDdot_v2 cublasDdot
#define cublasSscal_v2 cublasSscal
#define cublasDscal_v2 cublasDscal
#define cublasSaxpy_v2 cublasSaxpy
#define cublasDaxpy_v2 cublasDaxpy
#define cublasScopy_v2 cublasScopy
#define cublasDcopy_v2 cublasDcopy
#define cublasSswap_v2 cublasSswap
#define cublasDswap_v2 cublasDswap
#define cublasSrot_v2 cublasSrot
#define cublasDrot_v2 cublasDrot
#define cublasIsamax_v2 cublasIsamax
#define cublasIdamax_v2 cublasIdamax
#define cublasIsamin_v2 cublasIsamin
#define cublasIdamin_v2 cublasIdamin
#define cublasSasum_v2 cublasSasum
#define cublasDasum_v2 cublasDasum
#define cublasSgemv_v2 cublasSgemv
#define cublasDgemv_v2 cublasDgemv
#define cublasSger_v2 cublasSger
#define cublasDger_v2 cublasDger
#define cublasSgemm_v2 cublasSgemm
#define cublasDgemm_v2 cublasDgemm
