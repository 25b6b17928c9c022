// cudashim: a host subset of cuSPARSE (CUDA 12 signatures), computed on the CPU.
//
// The legacy helpers (handle, matrix descriptors, cusparse{S,D}nnz) and the generic API on CSR,
// CSC and COO matrices with real values: descriptors, SpMV and SpMM here; sparse vectors,
// conversions, SpSV/SpSM, SpGEMM, SDDMM and the legacy routines programs pair with them
// (csrilu02, csrsort/coosort, csr2cscEx2) in cudashim/cusparse_generic.h, included at the end.
// Device memory is host memory, so both pointer modes work alike. A computing call on a stream
// being captured (cusparseSetStream) is a node of the capture (`_enqueue`), as cuSPARSE's
// kernels are on a GPU, run at each launch of the graph.
// What is not declared here (BSR/ELL formats, SpGEAM, the removed pre-12 routines, ...) fails to
// compile and is reported as `needs_gpu`; a declared call with a data type the subset does not
// compute stops the run with a `needs_gpu` report, and a combination it does not compute returns
// CUSPARSE_STATUS_NOT_SUPPORTED. The exact list is in validators/cpu/README.md.
#pragma once
// The include guard CUDA's own header defines: programs test it to know the header is in.
#define CUSPARSE_H_
// Its calling-convention macro (empty off Windows): cuda-samples' helper_cuda.h names cuSPARSE's
// errors only #ifdef CUSPARSEAPI, and checkCudaErrors on a cusparseStatus_t needs that overload.
#ifndef CUSPARSEAPI
#define CUSPARSEAPI
#endif
#include <cudashim/libdata.h>
// NVIDIA's cusparse.h includes cuComplex.h: programs use cuComplex with cuSPARSE alone.
#include <cuComplex.h>

#include <cstdint>
#include <vector>

#define CUSPARSE_VER_MAJOR 12
#define CUSPARSE_VER_MINOR 3
#define CUSPARSE_VER_PATCH 0
#define CUSPARSE_VER_BUILD 142
#define CUSPARSE_VERSION (CUSPARSE_VER_MAJOR * 1000 + CUSPARSE_VER_MINOR * 100 + CUSPARSE_VER_PATCH)

typedef enum {
  CUSPARSE_STATUS_SUCCESS = 0,
  CUSPARSE_STATUS_NOT_INITIALIZED = 1,
  CUSPARSE_STATUS_ALLOC_FAILED = 2,
  CUSPARSE_STATUS_INVALID_VALUE = 3,
  CUSPARSE_STATUS_ARCH_MISMATCH = 4,
  CUSPARSE_STATUS_MAPPING_ERROR = 5,
  CUSPARSE_STATUS_EXECUTION_FAILED = 6,
  CUSPARSE_STATUS_INTERNAL_ERROR = 7,
  CUSPARSE_STATUS_MATRIX_TYPE_NOT_SUPPORTED = 8,
  CUSPARSE_STATUS_ZERO_PIVOT = 9,
  CUSPARSE_STATUS_NOT_SUPPORTED = 10,
  CUSPARSE_STATUS_INSUFFICIENT_RESOURCES = 11,
} cusparseStatus_t;

typedef enum { CUSPARSE_POINTER_MODE_HOST = 0, CUSPARSE_POINTER_MODE_DEVICE = 1 } cusparsePointerMode_t;
typedef enum { CUSPARSE_ACTION_SYMBOLIC = 0, CUSPARSE_ACTION_NUMERIC = 1 } cusparseAction_t;
typedef enum {
  CUSPARSE_MATRIX_TYPE_GENERAL = 0,
  CUSPARSE_MATRIX_TYPE_SYMMETRIC = 1,
  CUSPARSE_MATRIX_TYPE_HERMITIAN = 2,
  CUSPARSE_MATRIX_TYPE_TRIANGULAR = 3,
} cusparseMatrixType_t;
typedef enum { CUSPARSE_FILL_MODE_LOWER = 0, CUSPARSE_FILL_MODE_UPPER = 1 } cusparseFillMode_t;
typedef enum { CUSPARSE_DIAG_TYPE_NON_UNIT = 0, CUSPARSE_DIAG_TYPE_UNIT = 1 } cusparseDiagType_t;
typedef enum { CUSPARSE_INDEX_BASE_ZERO = 0, CUSPARSE_INDEX_BASE_ONE = 1 } cusparseIndexBase_t;
typedef enum {
  CUSPARSE_OPERATION_NON_TRANSPOSE = 0,
  CUSPARSE_OPERATION_TRANSPOSE = 1,
  CUSPARSE_OPERATION_CONJUGATE_TRANSPOSE = 2,
} cusparseOperation_t;
typedef enum { CUSPARSE_DIRECTION_ROW = 0, CUSPARSE_DIRECTION_COLUMN = 1 } cusparseDirection_t;
typedef enum { CUSPARSE_INDEX_16U = 1, CUSPARSE_INDEX_32I = 2, CUSPARSE_INDEX_64I = 3 } cusparseIndexType_t;
typedef enum {
  CUSPARSE_FORMAT_CSR = 1,
  CUSPARSE_FORMAT_CSC = 2,
  CUSPARSE_FORMAT_COO = 3,
  CUSPARSE_FORMAT_BLOCKED_ELL = 5,
  CUSPARSE_FORMAT_BSR = 6,
  CUSPARSE_FORMAT_SLICED_ELLPACK = 7,
} cusparseFormat_t;
typedef enum { CUSPARSE_ORDER_COL = 1, CUSPARSE_ORDER_ROW = 2 } cusparseOrder_t;
typedef enum {
  CUSPARSE_SPMV_ALG_DEFAULT = 0,
  CUSPARSE_SPMV_CSR_ALG1 = 2,
  CUSPARSE_SPMV_CSR_ALG2 = 3,
  CUSPARSE_SPMV_COO_ALG1 = 1,
  CUSPARSE_SPMV_COO_ALG2 = 4,
  CUSPARSE_SPMV_SELL_ALG1 = 5,
  CUSPARSE_SPMV_BSR_ALG1 = 6,
} cusparseSpMVAlg_t;
typedef enum {
  CUSPARSE_SPMM_ALG_DEFAULT = 0,
  CUSPARSE_SPMM_COO_ALG1 = 1,
  CUSPARSE_SPMM_COO_ALG2 = 2,
  CUSPARSE_SPMM_COO_ALG3 = 3,
  CUSPARSE_SPMM_COO_ALG4 = 5,
  CUSPARSE_SPMM_CSR_ALG1 = 4,
  CUSPARSE_SPMM_CSR_ALG2 = 6,
  CUSPARSE_SPMM_CSR_ALG3 = 12,
  CUSPARSE_SPMM_BLOCKED_ELL_ALG1 = 13,
  CUSPARSE_SPMM_BSR_ALG1 = 14,
} cusparseSpMMAlg_t;
typedef enum { CUSPARSE_SPMAT_FILL_MODE = 0, CUSPARSE_SPMAT_DIAG_TYPE = 1 } cusparseSpMatAttribute_t;
typedef enum { CUSPARSE_SPARSETODENSE_ALG_DEFAULT = 0 } cusparseSparseToDenseAlg_t;
typedef enum { CUSPARSE_DENSETOSPARSE_ALG_DEFAULT = 0 } cusparseDenseToSparseAlg_t;
typedef enum { CUSPARSE_SPSV_ALG_DEFAULT = 0 } cusparseSpSVAlg_t;
typedef enum { CUSPARSE_SPSV_UPDATE_GENERAL = 0, CUSPARSE_SPSV_UPDATE_DIAGONAL = 1 } cusparseSpSVUpdate_t;
typedef enum { CUSPARSE_SPSM_ALG_DEFAULT = 0 } cusparseSpSMAlg_t;
typedef enum { CUSPARSE_SPSM_UPDATE_GENERAL = 0, CUSPARSE_SPSM_UPDATE_DIAGONAL = 1 } cusparseSpSMUpdate_t;
typedef enum {
  CUSPARSE_SPGEMM_DEFAULT = 0,
  CUSPARSE_SPGEMM_CSR_ALG_DETERMINITIC = 1,
  CUSPARSE_SPGEMM_CSR_ALG_NONDETERMINITIC = 2,
  CUSPARSE_SPGEMM_ALG1 = 3,
  CUSPARSE_SPGEMM_ALG2 = 4,
  CUSPARSE_SPGEMM_ALG3 = 5,
} cusparseSpGEMMAlg_t;
typedef enum { CUSPARSE_SDDMM_ALG_DEFAULT = 0 } cusparseSDDMMAlg_t;
typedef enum { CUSPARSE_CSR2CSC_ALG_DEFAULT = 1, CUSPARSE_CSR2CSC_ALG1 = 1 } cusparseCsr2CscAlg_t;
typedef enum { CUSPARSE_SOLVE_POLICY_NO_LEVEL = 0, CUSPARSE_SOLVE_POLICY_USE_LEVEL = 1 } cusparseSolvePolicy_t;

struct cusparseContext {
  cudaStream_t stream = 0;
  cusparsePointerMode_t pointer_mode = CUSPARSE_POINTER_MODE_HOST;
};
typedef struct cusparseContext* cusparseHandle_t;

struct cusparseMatDescr {
  cusparseMatrixType_t type = CUSPARSE_MATRIX_TYPE_GENERAL;
  cusparseFillMode_t fill = CUSPARSE_FILL_MODE_LOWER;
  cusparseDiagType_t diag = CUSPARSE_DIAG_TYPE_NON_UNIT;
  cusparseIndexBase_t base = CUSPARSE_INDEX_BASE_ZERO;
};
typedef struct cusparseMatDescr* cusparseMatDescr_t;

// One descriptor for CSR (`__ptr` row offsets, `__ind` columns), CSC (column offsets, rows)
// and COO (`__ptr` rows, `__ind` columns). The fill mode and diagonal type (SpSV, SpSM) are
// attributes; a strided batch (SDDMM, SpMM) advances `ptr` by `ptr_stride` elements and `ind` and
// `values` by `ind_stride` (COO: both by its one stride).
struct cusparseSpMatDescr {
  cusparseFormat_t format;
  int64_t rows, cols, nnz;
  void *ptr, *ind, *values;
  cusparseIndexType_t ptr_type, ind_type;
  cusparseIndexBase_t base;
  cudaDataType value_type;
  cusparseFillMode_t fill = CUSPARSE_FILL_MODE_LOWER;
  cusparseDiagType_t diag = CUSPARSE_DIAG_TYPE_NON_UNIT;
  int batch = 1;
  int64_t ptr_stride = 0, ind_stride = 0;
};
typedef struct cusparseSpMatDescr* cusparseSpMatDescr_t;
typedef struct cusparseSpMatDescr const* cusparseConstSpMatDescr_t;
struct cusparseDnVecDescr {
  int64_t size;
  void* values;
  cudaDataType value_type;
};
typedef struct cusparseDnVecDescr* cusparseDnVecDescr_t;
typedef struct cusparseDnVecDescr const* cusparseConstDnVecDescr_t;
struct cusparseDnMatDescr {
  int64_t rows, cols, ld;
  void* values;
  cudaDataType value_type;
  cusparseOrder_t order;
  int batch = 1;
  int64_t batch_stride = 0;
};
typedef struct cusparseDnMatDescr* cusparseDnMatDescr_t;
typedef struct cusparseDnMatDescr const* cusparseConstDnMatDescr_t;
// A sparse vector: `nnz` of `size` elements, at `indices` (unique, any order).
struct cusparseSpVecDescr {
  int64_t size, nnz;
  void *indices, *values;
  cusparseIndexType_t idx_type;
  cusparseIndexBase_t base;
  cudaDataType value_type;
};
typedef struct cusparseSpVecDescr* cusparseSpVecDescr_t;
typedef struct cusparseSpVecDescr const* cusparseConstSpVecDescr_t;

namespace cudashim {
// The runtime's (cudashim_runtime.cpp): a library call's work as a node of the capture `__s` is
// in (it owns `__w`), and the capture a call a GPU refuses in it invalidates.
cudaError_t capture_library_call(cudaStream_t __s, _Closure* __w, const char* __library, const char* __call);
void invalidate_capture(cudaStream_t __s);
}  // namespace cudashim
namespace cudashim::sparse {
// Runs a call's work (`__f`, returning the call's status) now, or, when the handle's stream is
// being captured, makes it a node of the capture that each launch of the graph runs (a GPU
// records cuSPARSE's kernels and runs nothing). The work holds its arguments by value: the
// descriptors as they are now (`_held`: their contents are the kernels' parameters on a GPU,
// and the program may change or destroy them before it launches the graph), host-mode scalars'
// values (`_scalar`); device data is read when it runs. Argument checks stay at the call.
template <class _Fn>
cusparseStatus_t _enqueue(cusparseHandle_t __h, _Fn&& __f, const char* __call = __builtin_FUNCTION()) {
  if (!::cudashim::capturing(__h->stream)) return __f();
  auto __work = [__f = std::decay_t<_Fn>(std::forward<_Fn>(__f))] { __f(); };
  auto* __w = new ::cudashim::_Closure_of<decltype(__work)>(std::move(__work));
  return ::cudashim::capture_library_call(__h->stream, __w, "cusparse", __call) == cudaSuccess ? CUSPARSE_STATUS_SUCCESS
                                                                                              : CUSPARSE_STATUS_EXECUTION_FAILED;
}
// A call whose result the host must wait for (a host-mode scalar, sizes the host reads next):
// a GPU cannot hand it over in a capture, so the call fails (the copy to the host is what fails:
// the internal-error status) and the capture is invalidated.
inline bool _host_result_in_capture(cusparseHandle_t __h, bool __to_host) {
  if (!__to_host || !::cudashim::capturing(__h->stream)) return false;
  ::cudashim::invalidate_capture(__h->stream);
  return true;
}
template <class _D>
struct _Held {
  mutable _D __d;
  _D* operator->() const { return &__d; }
  operator _D*() const { return &__d; }
};
template <class _D>
_Held<_D> _held(const _D* __p) {
  return _Held<_D>{*__p};
}
// A scalar of the compute type: read now in host pointer mode, through the pointer when the work
// runs in device mode.
struct _Scalar {
  const void* __p = nullptr;
  double __v = 0;
};
}  // namespace cudashim::sparse

// ---------------------------------------------------------------- handle and status
inline cusparseStatus_t cusparseCreate(cusparseHandle_t* __h) { ::cudashim::_Device_access __cudashim_da;
  if (!__h) return CUSPARSE_STATUS_INVALID_VALUE;
  *__h = new cusparseContext();
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseDestroy(cusparseHandle_t __h) { ::cudashim::_Device_access __cudashim_da;
  if (!__h) return CUSPARSE_STATUS_NOT_INITIALIZED;
  delete __h;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseGetVersion(cusparseHandle_t __h, int* __v) { ::cudashim::_Device_access __cudashim_da;
  if (!__h) return CUSPARSE_STATUS_NOT_INITIALIZED;
  if (!__v) return CUSPARSE_STATUS_INVALID_VALUE;
  *__v = CUSPARSE_VERSION;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseGetProperty(libraryPropertyType __t, int* __v) { ::cudashim::_Device_access __cudashim_da;
  if (!__v) return CUSPARSE_STATUS_INVALID_VALUE;
  switch (__t) {
    case MAJOR_VERSION: *__v = CUSPARSE_VER_MAJOR; return CUSPARSE_STATUS_SUCCESS;
    case MINOR_VERSION: *__v = CUSPARSE_VER_MINOR; return CUSPARSE_STATUS_SUCCESS;
    case PATCH_LEVEL: *__v = CUSPARSE_VER_PATCH; return CUSPARSE_STATUS_SUCCESS;
  }
  return CUSPARSE_STATUS_INVALID_VALUE;
}
inline cusparseStatus_t cusparseSetStream(cusparseHandle_t __h, cudaStream_t __s) { ::cudashim::_Device_access __cudashim_da;
  if (!__h) return CUSPARSE_STATUS_NOT_INITIALIZED;
  __h->stream = __s;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseGetStream(cusparseHandle_t __h, cudaStream_t* __s) { ::cudashim::_Device_access __cudashim_da;
  if (!__h) return CUSPARSE_STATUS_NOT_INITIALIZED;
  if (!__s) return CUSPARSE_STATUS_INVALID_VALUE;
  *__s = __h->stream;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseSetPointerMode(cusparseHandle_t __h, cusparsePointerMode_t __m) { ::cudashim::_Device_access __cudashim_da;
  if (!__h) return CUSPARSE_STATUS_NOT_INITIALIZED;
  if (__m != CUSPARSE_POINTER_MODE_HOST && __m != CUSPARSE_POINTER_MODE_DEVICE) return CUSPARSE_STATUS_INVALID_VALUE;
  __h->pointer_mode = __m;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseGetPointerMode(cusparseHandle_t __h, cusparsePointerMode_t* __m) { ::cudashim::_Device_access __cudashim_da;
  if (!__h) return CUSPARSE_STATUS_NOT_INITIALIZED;
  if (!__m) return CUSPARSE_STATUS_INVALID_VALUE;
  *__m = __h->pointer_mode;
  return CUSPARSE_STATUS_SUCCESS;
}
inline const char* cusparseGetErrorName(cusparseStatus_t __s) { ::cudashim::_Device_access __cudashim_da;
  switch (__s) {
    case CUSPARSE_STATUS_SUCCESS: return "CUSPARSE_STATUS_SUCCESS";
    case CUSPARSE_STATUS_NOT_INITIALIZED: return "CUSPARSE_STATUS_NOT_INITIALIZED";
    case CUSPARSE_STATUS_ALLOC_FAILED: return "CUSPARSE_STATUS_ALLOC_FAILED";
    case CUSPARSE_STATUS_INVALID_VALUE: return "CUSPARSE_STATUS_INVALID_VALUE";
    case CUSPARSE_STATUS_ARCH_MISMATCH: return "CUSPARSE_STATUS_ARCH_MISMATCH";
    case CUSPARSE_STATUS_MAPPING_ERROR: return "CUSPARSE_STATUS_MAPPING_ERROR";
    case CUSPARSE_STATUS_EXECUTION_FAILED: return "CUSPARSE_STATUS_EXECUTION_FAILED";
    case CUSPARSE_STATUS_INTERNAL_ERROR: return "CUSPARSE_STATUS_INTERNAL_ERROR";
    case CUSPARSE_STATUS_MATRIX_TYPE_NOT_SUPPORTED: return "CUSPARSE_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
    case CUSPARSE_STATUS_ZERO_PIVOT: return "CUSPARSE_STATUS_ZERO_PIVOT";
    case CUSPARSE_STATUS_NOT_SUPPORTED: return "CUSPARSE_STATUS_NOT_SUPPORTED";
    case CUSPARSE_STATUS_INSUFFICIENT_RESOURCES: return "CUSPARSE_STATUS_INSUFFICIENT_RESOURCES";
  }
  return "CUSPARSE_STATUS_UNKNOWN";
}
inline const char* cusparseGetErrorString(cusparseStatus_t __s) { ::cudashim::_Device_access __cudashim_da;
  switch (__s) {
    case CUSPARSE_STATUS_SUCCESS: return "success";
    case CUSPARSE_STATUS_NOT_INITIALIZED: return "initialization error";
    case CUSPARSE_STATUS_ALLOC_FAILED: return "out of memory";
    case CUSPARSE_STATUS_INVALID_VALUE: return "invalid value";
    case CUSPARSE_STATUS_ARCH_MISMATCH: return "architecture mismatch";
    case CUSPARSE_STATUS_MAPPING_ERROR: return "mapping error";
    case CUSPARSE_STATUS_EXECUTION_FAILED: return "execution failed";
    case CUSPARSE_STATUS_INTERNAL_ERROR: return "internal error";
    case CUSPARSE_STATUS_MATRIX_TYPE_NOT_SUPPORTED: return "matrix type not supported";
    case CUSPARSE_STATUS_ZERO_PIVOT: return "zero pivot";
    case CUSPARSE_STATUS_NOT_SUPPORTED: return "operation not supported";
    case CUSPARSE_STATUS_INSUFFICIENT_RESOURCES: return "insufficient resources";
  }
  return "unknown error";
}

// ---------------------------------------------------------------- legacy matrix descriptor
inline cusparseStatus_t cusparseCreateMatDescr(cusparseMatDescr_t* __d) { ::cudashim::_Device_access __cudashim_da;
  if (!__d) return CUSPARSE_STATUS_INVALID_VALUE;
  *__d = new cusparseMatDescr();
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseDestroyMatDescr(cusparseMatDescr_t __d) { ::cudashim::_Device_access __cudashim_da;
  delete __d;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseSetMatType(cusparseMatDescr_t __d, cusparseMatrixType_t __t) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || (unsigned)__t > 3u) return CUSPARSE_STATUS_INVALID_VALUE;
  __d->type = __t;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseMatrixType_t cusparseGetMatType(const cusparseMatDescr_t __d) { ::cudashim::_Device_access __cudashim_da; return __d->type; }
inline cusparseStatus_t cusparseSetMatFillMode(cusparseMatDescr_t __d, cusparseFillMode_t __f) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || (unsigned)__f > 1u) return CUSPARSE_STATUS_INVALID_VALUE;
  __d->fill = __f;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseFillMode_t cusparseGetMatFillMode(const cusparseMatDescr_t __d) { ::cudashim::_Device_access __cudashim_da; return __d->fill; }
inline cusparseStatus_t cusparseSetMatDiagType(cusparseMatDescr_t __d, cusparseDiagType_t __t) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || (unsigned)__t > 1u) return CUSPARSE_STATUS_INVALID_VALUE;
  __d->diag = __t;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseDiagType_t cusparseGetMatDiagType(const cusparseMatDescr_t __d) { ::cudashim::_Device_access __cudashim_da; return __d->diag; }
inline cusparseStatus_t cusparseSetMatIndexBase(cusparseMatDescr_t __d, cusparseIndexBase_t __b) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || (unsigned)__b > 1u) return CUSPARSE_STATUS_INVALID_VALUE;
  __d->base = __b;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseIndexBase_t cusparseGetMatIndexBase(const cusparseMatDescr_t __d) { ::cudashim::_Device_access __cudashim_da; return __d->base; }

namespace cudashim::sparse {

// Nonzeros per row (ROW) or per column (COLUMN) of a column-major dense matrix, and their total.
template <class _Tp>
cusparseStatus_t nnz(cusparseHandle_t __h, cusparseDirection_t __dir, int __m, int __n, const cusparseMatDescr_t __d, const _Tp* __a,
                     int __lda, int* __per, int* __total) {
  if (!__h) return CUSPARSE_STATUS_NOT_INITIALIZED;
  if (!__d || __m < 0 || __n < 0 || __lda < (__m > 1 ? __m : 1) || !__total ||
      (__dir != CUSPARSE_DIRECTION_ROW && __dir != CUSPARSE_DIRECTION_COLUMN))
    return CUSPARSE_STATUS_INVALID_VALUE;
  if (__d->type != CUSPARSE_MATRIX_TYPE_GENERAL) return CUSPARSE_STATUS_MATRIX_TYPE_NOT_SUPPORTED;
  if (_host_result_in_capture(__h, __h->pointer_mode == CUSPARSE_POINTER_MODE_HOST)) return CUSPARSE_STATUS_INTERNAL_ERROR;
  return _enqueue(__h, [=] {
    long long __sum = 0;
    const bool __rows = __dir == CUSPARSE_DIRECTION_ROW;
    if (__rows)
      for (int __i = 0; __i < __m; ++__i) __per[__i] = 0;
    for (long long __j = 0; __j < __n; ++__j) {
      int __col = 0;
      for (long long __i = 0; __i < __m; ++__i)
        if (__a[__i + __j * __lda] != _Tp(0)) {
          ++__col;
          if (__rows) ++__per[__i];
        }
      if (!__rows) __per[__j] = __col;
      __sum += __col;
    }
    *__total = (int)__sum;
    return CUSPARSE_STATUS_SUCCESS;
  });
}

inline int64_t index(const void* __p, cusparseIndexType_t __t, int64_t __i) {
  switch (__t) {
    case CUSPARSE_INDEX_16U: return static_cast<const uint16_t*>(__p)[__i];
    case CUSPARSE_INDEX_32I: return static_cast<const int32_t*>(__p)[__i];
    default: return static_cast<const int64_t*>(__p)[__i];
  }
}
inline void set_index(void* __p, cusparseIndexType_t __t, int64_t __i, int64_t __v) {
  switch (__t) {
    case CUSPARSE_INDEX_16U: static_cast<uint16_t*>(__p)[__i] = (uint16_t)__v; break;
    case CUSPARSE_INDEX_32I: static_cast<int32_t*>(__p)[__i] = (int32_t)__v; break;
    default: static_cast<int64_t*>(__p)[__i] = __v; break;
  }
}
inline bool bad_index_type(cusparseIndexType_t __t) { return __t < CUSPARSE_INDEX_16U || __t > CUSPARSE_INDEX_64I; }
inline size_t index_size(cusparseIndexType_t __t) { return __t == CUSPARSE_INDEX_16U ? 2 : __t == CUSPARSE_INDEX_32I ? 4 : 8; }
// Bytes per element (0: a type the subset does not know).
inline size_t value_size(cudaDataType __t) {
  switch (__t) {
    case CUDA_R_16F: case CUDA_R_16BF: return 2;
    case CUDA_R_32F: return 4;
    case CUDA_R_64F: case CUDA_C_32F: return 8;
    case CUDA_C_64F: return 16;
    case CUDA_R_8I: return 1;
    case CUDA_R_32I: return 4;
    default: return 0;
  }
}
inline void* advance(void* __p, size_t __elem, int64_t __n) { return __p ? static_cast<char*>(__p) + __elem * __n : __p; }

// Calls `__f(row, col, e)` for every stored entry `e` (indices made zero-based), in storage order.
template <class _Fn>
void for_each_stored(const cusparseSpMatDescr* __m, _Fn&& __f) {
  const int64_t __b = __m->base == CUSPARSE_INDEX_BASE_ONE ? 1 : 0;
  if (__m->format == CUSPARSE_FORMAT_COO) {
    for (int64_t __e = 0; __e < __m->nnz; ++__e)
      __f(index(__m->ptr, __m->ptr_type, __e) - __b, index(__m->ind, __m->ind_type, __e) - __b, __e);
    return;
  }
  const bool __csr = __m->format == CUSPARSE_FORMAT_CSR;
  const int64_t __outer = __csr ? __m->rows : __m->cols;
  for (int64_t __o = 0; __o < __outer; ++__o) {
    const int64_t __lo = index(__m->ptr, __m->ptr_type, __o) - __b, __hi = index(__m->ptr, __m->ptr_type, __o + 1) - __b;
    for (int64_t __e = __lo; __e < __hi; ++__e) {
      const int64_t __inner = index(__m->ind, __m->ind_type, __e) - __b;
      if (__csr) __f(__o, __inner, __e);
      else __f(__inner, __o, __e);
    }
  }
}

// Calls `__f(row, col, value)` for every stored entry (indices made zero-based).
template <class _Fn>
void for_each_nonzero(const cusparseSpMatDescr* __m, _Fn&& __f) {
  for_each_stored(__m, [&](int64_t __r, int64_t __c, int64_t __e) { __f(__r, __c, lib::load(__m->values, __m->value_type, __e)); });
}

// Batch `__i` of a strided batch (a copy of the descriptor, its arrays advanced).
inline cusparseSpMatDescr batch_view(const cusparseSpMatDescr* __m, int __i) {
  cusparseSpMatDescr __v = *__m;
  if (__m->batch > 1 && __i > 0) {
    __v.ptr = advance(__m->ptr, index_size(__m->ptr_type), __i * __m->ptr_stride);
    __v.ind = advance(__m->ind, index_size(__m->ind_type), __i * __m->ind_stride);
    __v.values = advance(__m->values, value_size(__m->value_type), __i * __m->ind_stride);
  }
  __v.batch = 1;
  return __v;
}
inline cusparseDnMatDescr batch_view(const cusparseDnMatDescr* __m, int __i) {
  cusparseDnMatDescr __v = *__m;
  if (__m->batch > 1 && __i > 0) __v.values = advance(__m->values, value_size(__m->value_type), __i * __m->batch_stride);
  __v.batch = 1;
  return __v;
}
// The batch count of an operation whose output has `__out` batches: each input has as many or
// one (shared by all); -1 when they do not match.
inline int batch_count(int __out, int __a, int __b) {
  if ((__a != 1 && __a != __out) || (__b != 1 && __b != __out)) return -1;
  return __out;
}

inline bool bad_op(cusparseOperation_t __o) {
  return __o != CUSPARSE_OPERATION_NON_TRANSPOSE && __o != CUSPARSE_OPERATION_TRANSPOSE &&
         __o != CUSPARSE_OPERATION_CONJUGATE_TRANSPOSE;
}

inline void require_real(const char* __fn, cudaDataType __a, cudaDataType __b, cudaDataType __c, cudaDataType __d) {
  if (lib::real_float(__a) && lib::real_float(__b) && lib::real_float(__c) && (__d == CUDA_R_32F || __d == CUDA_R_64F)) return;
  char __msg[256];
  snprintf(__msg, sizeof __msg, "%s with values %s, %s, %s and compute type %s", __fn, lib::type_name(__a), lib::type_name(__b),
           lib::type_name(__c), lib::type_name(__d));
  lib::needs_gpu(__msg);
}

// Scalars have the compute type.
inline double scalar(const void* __p, cudaDataType __ct) { return lib::load(__p, __ct, 0); }
inline _Scalar _scalar(cusparseHandle_t __h, const void* __p, cudaDataType __ct) {
  _Scalar __s;
  if (__h->pointer_mode == CUSPARSE_POINTER_MODE_DEVICE) __s.__p = __p;
  else __s.__v = scalar(__p, __ct);
  return __s;
}
inline double scalar(const _Scalar& __s, cudaDataType __ct) { return __s.__p ? scalar(__s.__p, __ct) : __s.__v; }

// Element (r, c) of a dense matrix, by its order.
inline int64_t dense_at(const cusparseDnMatDescr* __d, int64_t __r, int64_t __c) {
  return __d->order == CUSPARSE_ORDER_ROW ? __r * __d->ld + __c : __r + __c * __d->ld;
}

}  // namespace cudashim::sparse

inline cusparseStatus_t cusparseSnnz(cusparseHandle_t __h, cusparseDirection_t __dir, int __m, int __n, const cusparseMatDescr_t __d,
                                     const float* __a, int __lda, int* __per, int* __total) { ::cudashim::_Library_access __cudashim_da("cusparse");
  return cudashim::sparse::nnz(__h, __dir, __m, __n, __d, __a, __lda, __per, __total);
}
inline cusparseStatus_t cusparseDnnz(cusparseHandle_t __h, cusparseDirection_t __dir, int __m, int __n, const cusparseMatDescr_t __d,
                                     const double* __a, int __lda, int* __per, int* __total) { ::cudashim::_Library_access __cudashim_da("cusparse");
  return cudashim::sparse::nnz(__h, __dir, __m, __n, __d, __a, __lda, __per, __total);
}

// ---------------------------------------------------------------- generic API: descriptors
namespace cudashim::sparse {
inline cusparseStatus_t create(cusparseSpMatDescr_t* __d, cusparseFormat_t __f, int64_t __rows, int64_t __cols, int64_t __nnz,
                                           const void* __ptr, const void* __ind, const void* __val, cusparseIndexType_t __pt,
                                           cusparseIndexType_t __it, cusparseIndexBase_t __b, cudaDataType __vt) {
  if (!__d || __rows < 0 || __cols < 0 || __nnz < 0 || (unsigned)__b > 1u || bad_index_type(__pt) || bad_index_type(__it))
    return CUSPARSE_STATUS_INVALID_VALUE;
  *__d = new cusparseSpMatDescr{__f, __rows, __cols, __nnz, const_cast<void*>(__ptr), const_cast<void*>(__ind),
                                const_cast<void*>(__val), __pt, __it, __b, __vt};
  return CUSPARSE_STATUS_SUCCESS;
}
template <class _Ptr>
cusparseStatus_t get(cusparseConstSpMatDescr_t __d, cusparseFormat_t __f, int64_t* __rows, int64_t* __cols, int64_t* __nnz, _Ptr** __ptr,
                     _Ptr** __ind, _Ptr** __val, cusparseIndexType_t* __pt, cusparseIndexType_t* __it, cusparseIndexBase_t* __b,
                     cudaDataType* __vt) {
  if (!__d || __d->format != __f || !__rows || !__cols || !__nnz || !__ptr || !__ind || !__val || !__pt || !__b || !__vt ||
      (__it == nullptr && __f != CUSPARSE_FORMAT_COO))
    return CUSPARSE_STATUS_INVALID_VALUE;
  *__rows = __d->rows;
  *__cols = __d->cols;
  *__nnz = __d->nnz;
  *__ptr = __d->ptr;
  *__ind = __d->ind;
  *__val = __d->values;
  *__pt = __d->ptr_type;
  if (__it) *__it = __d->ind_type;
  *__b = __d->base;
  *__vt = __d->value_type;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t set_pointers(cusparseSpMatDescr_t __d, cusparseFormat_t __f, void* __ptr, void* __ind, void* __val) {
  if (!__d || __d->format != __f) return CUSPARSE_STATUS_INVALID_VALUE;
  __d->ptr = __ptr;
  __d->ind = __ind;
  __d->values = __val;
  return CUSPARSE_STATUS_SUCCESS;
}
}  // namespace cudashim::sparse
inline cusparseStatus_t cusparseCreateCsr(cusparseSpMatDescr_t* __d, int64_t __rows, int64_t __cols, int64_t __nnz, void* __offsets,
                                          void* __colind, void* __values, cusparseIndexType_t __ot, cusparseIndexType_t __ct,
                                          cusparseIndexBase_t __b, cudaDataType __vt) { ::cudashim::_Device_access __cudashim_da;
  return cudashim::sparse::create(__d, CUSPARSE_FORMAT_CSR, __rows, __cols, __nnz, __offsets, __colind, __values, __ot, __ct, __b, __vt);
}
inline cusparseStatus_t cusparseCreateConstCsr(cusparseConstSpMatDescr_t* __d, int64_t __rows, int64_t __cols, int64_t __nnz,
                                               const void* __offsets, const void* __colind, const void* __values, cusparseIndexType_t __ot,
                                               cusparseIndexType_t __ct, cusparseIndexBase_t __b, cudaDataType __vt) { ::cudashim::_Device_access __cudashim_da;
  cusparseSpMatDescr_t __m = nullptr;
  cusparseStatus_t __s = cudashim::sparse::create(&__m, CUSPARSE_FORMAT_CSR, __rows, __cols, __nnz, __offsets, __colind, __values, __ot, __ct, __b, __vt);
  if (__d) *__d = __m;
  return __s;
}
inline cusparseStatus_t cusparseCreateCsc(cusparseSpMatDescr_t* __d, int64_t __rows, int64_t __cols, int64_t __nnz, void* __offsets,
                                          void* __rowind, void* __values, cusparseIndexType_t __ot, cusparseIndexType_t __rt,
                                          cusparseIndexBase_t __b, cudaDataType __vt) { ::cudashim::_Device_access __cudashim_da;
  return cudashim::sparse::create(__d, CUSPARSE_FORMAT_CSC, __rows, __cols, __nnz, __offsets, __rowind, __values, __ot, __rt, __b, __vt);
}
inline cusparseStatus_t cusparseCreateConstCsc(cusparseConstSpMatDescr_t* __d, int64_t __rows, int64_t __cols, int64_t __nnz,
                                               const void* __offsets, const void* __rowind, const void* __values, cusparseIndexType_t __ot,
                                               cusparseIndexType_t __rt, cusparseIndexBase_t __b, cudaDataType __vt) { ::cudashim::_Device_access __cudashim_da;
  cusparseSpMatDescr_t __m = nullptr;
  cusparseStatus_t __s = cudashim::sparse::create(&__m, CUSPARSE_FORMAT_CSC, __rows, __cols, __nnz, __offsets, __rowind, __values, __ot, __rt, __b, __vt);
  if (__d) *__d = __m;
  return __s;
}
inline cusparseStatus_t cusparseCreateCoo(cusparseSpMatDescr_t* __d, int64_t __rows, int64_t __cols, int64_t __nnz, void* __rowind,
                                          void* __colind, void* __values, cusparseIndexType_t __it, cusparseIndexBase_t __b,
                                          cudaDataType __vt) { ::cudashim::_Device_access __cudashim_da;
  return cudashim::sparse::create(__d, CUSPARSE_FORMAT_COO, __rows, __cols, __nnz, __rowind, __colind, __values, __it, __it, __b, __vt);
}
inline cusparseStatus_t cusparseCreateConstCoo(cusparseConstSpMatDescr_t* __d, int64_t __rows, int64_t __cols, int64_t __nnz,
                                               const void* __rowind, const void* __colind, const void* __values, cusparseIndexType_t __it,
                                               cusparseIndexBase_t __b, cudaDataType __vt) { ::cudashim::_Device_access __cudashim_da;
  cusparseSpMatDescr_t __m = nullptr;
  cusparseStatus_t __s = cudashim::sparse::create(&__m, CUSPARSE_FORMAT_COO, __rows, __cols, __nnz, __rowind, __colind, __values, __it, __it, __b, __vt);
  if (__d) *__d = __m;
  return __s;
}
inline cusparseStatus_t cusparseDestroySpMat(cusparseConstSpMatDescr_t __d) { ::cudashim::_Device_access __cudashim_da;
  delete __d;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseSpMatGetSize(cusparseConstSpMatDescr_t __d, int64_t* __rows, int64_t* __cols, int64_t* __nnz) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || !__rows || !__cols || !__nnz) return CUSPARSE_STATUS_INVALID_VALUE;
  *__rows = __d->rows;
  *__cols = __d->cols;
  *__nnz = __d->nnz;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseSpMatGetFormat(cusparseConstSpMatDescr_t __d, cusparseFormat_t* __f) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || !__f) return CUSPARSE_STATUS_INVALID_VALUE;
  *__f = __d->format;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseSpMatGetIndexBase(cusparseConstSpMatDescr_t __d, cusparseIndexBase_t* __b) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || !__b) return CUSPARSE_STATUS_INVALID_VALUE;
  *__b = __d->base;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseSpMatGetValues(cusparseSpMatDescr_t __d, void** __values) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || !__values) return CUSPARSE_STATUS_INVALID_VALUE;
  *__values = __d->values;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseConstSpMatGetValues(cusparseConstSpMatDescr_t __d, const void** __values) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || !__values) return CUSPARSE_STATUS_INVALID_VALUE;
  *__values = __d->values;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseSpMatSetValues(cusparseSpMatDescr_t __d, void* __values) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || (!__values && __d->nnz > 0)) return CUSPARSE_STATUS_INVALID_VALUE;
  __d->values = __values;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseCsrGet(cusparseSpMatDescr_t __d, int64_t* __rows, int64_t* __cols, int64_t* __nnz, void** __offsets,
                                       void** __colind, void** __values, cusparseIndexType_t* __ot, cusparseIndexType_t* __ct,
                                       cusparseIndexBase_t* __b, cudaDataType* __vt) { ::cudashim::_Device_access __cudashim_da;
  return cudashim::sparse::get(__d, CUSPARSE_FORMAT_CSR, __rows, __cols, __nnz, __offsets, __colind, __values, __ot, __ct, __b, __vt);
}
inline cusparseStatus_t cusparseConstCsrGet(cusparseConstSpMatDescr_t __d, int64_t* __rows, int64_t* __cols, int64_t* __nnz,
                                            const void** __offsets, const void** __colind, const void** __values, cusparseIndexType_t* __ot,
                                            cusparseIndexType_t* __ct, cusparseIndexBase_t* __b, cudaDataType* __vt) { ::cudashim::_Device_access __cudashim_da;
  return cudashim::sparse::get(__d, CUSPARSE_FORMAT_CSR, __rows, __cols, __nnz, __offsets, __colind, __values, __ot, __ct, __b, __vt);
}
inline cusparseStatus_t cusparseCscGet(cusparseSpMatDescr_t __d, int64_t* __rows, int64_t* __cols, int64_t* __nnz, void** __offsets,
                                       void** __rowind, void** __values, cusparseIndexType_t* __ot, cusparseIndexType_t* __rt,
                                       cusparseIndexBase_t* __b, cudaDataType* __vt) { ::cudashim::_Device_access __cudashim_da;
  return cudashim::sparse::get(__d, CUSPARSE_FORMAT_CSC, __rows, __cols, __nnz, __offsets, __rowind, __values, __ot, __rt, __b, __vt);
}
inline cusparseStatus_t cusparseConstCscGet(cusparseConstSpMatDescr_t __d, int64_t* __rows, int64_t* __cols, int64_t* __nnz,
                                            const void** __offsets, const void** __rowind, const void** __values, cusparseIndexType_t* __ot,
                                            cusparseIndexType_t* __rt, cusparseIndexBase_t* __b, cudaDataType* __vt) { ::cudashim::_Device_access __cudashim_da;
  return cudashim::sparse::get(__d, CUSPARSE_FORMAT_CSC, __rows, __cols, __nnz, __offsets, __rowind, __values, __ot, __rt, __b, __vt);
}
inline cusparseStatus_t cusparseCooGet(cusparseSpMatDescr_t __d, int64_t* __rows, int64_t* __cols, int64_t* __nnz, void** __rowind,
                                       void** __colind, void** __values, cusparseIndexType_t* __it, cusparseIndexBase_t* __b,
                                       cudaDataType* __vt) { ::cudashim::_Device_access __cudashim_da;
  return cudashim::sparse::get(__d, CUSPARSE_FORMAT_COO, __rows, __cols, __nnz, __rowind, __colind, __values, __it,
                               (cusparseIndexType_t*)nullptr, __b, __vt);
}
inline cusparseStatus_t cusparseConstCooGet(cusparseConstSpMatDescr_t __d, int64_t* __rows, int64_t* __cols, int64_t* __nnz,
                                            const void** __rowind, const void** __colind, const void** __values, cusparseIndexType_t* __it,
                                            cusparseIndexBase_t* __b, cudaDataType* __vt) { ::cudashim::_Device_access __cudashim_da;
  return cudashim::sparse::get(__d, CUSPARSE_FORMAT_COO, __rows, __cols, __nnz, __rowind, __colind, __values, __it,
                               (cusparseIndexType_t*)nullptr, __b, __vt);
}
inline cusparseStatus_t cusparseCsrSetPointers(cusparseSpMatDescr_t __d, void* __offsets, void* __colind, void* __values) { ::cudashim::_Device_access __cudashim_da;
  return cudashim::sparse::set_pointers(__d, CUSPARSE_FORMAT_CSR, __offsets, __colind, __values);
}
inline cusparseStatus_t cusparseCscSetPointers(cusparseSpMatDescr_t __d, void* __offsets, void* __rowind, void* __values) { ::cudashim::_Device_access __cudashim_da;
  return cudashim::sparse::set_pointers(__d, CUSPARSE_FORMAT_CSC, __offsets, __rowind, __values);
}
inline cusparseStatus_t cusparseCooSetPointers(cusparseSpMatDescr_t __d, void* __rowind, void* __colind, void* __values) { ::cudashim::_Device_access __cudashim_da;
  return cudashim::sparse::set_pointers(__d, CUSPARSE_FORMAT_COO, __rowind, __colind, __values);
}
// Strided batches: CSR offsets and columns/values each by their own stride, COO all by one.
inline cusparseStatus_t cusparseCsrSetStridedBatch(cusparseSpMatDescr_t __d, int __count, int64_t __offsets_stride,
                                                   int64_t __values_stride) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || __d->format != CUSPARSE_FORMAT_CSR || __count < 1 || __offsets_stride < 0 || __values_stride < 0)
    return CUSPARSE_STATUS_INVALID_VALUE;
  __d->batch = __count;
  __d->ptr_stride = __offsets_stride;
  __d->ind_stride = __values_stride;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseCooSetStridedBatch(cusparseSpMatDescr_t __d, int __count, int64_t __stride) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || __d->format != CUSPARSE_FORMAT_COO || __count < 1 || __stride < 0) return CUSPARSE_STATUS_INVALID_VALUE;
  __d->batch = __count;
  __d->ptr_stride = __d->ind_stride = __stride;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseSpMatGetStridedBatch(cusparseConstSpMatDescr_t __d, int* __count) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || !__count) return CUSPARSE_STATUS_INVALID_VALUE;
  *__count = __d->batch;
  return CUSPARSE_STATUS_SUCCESS;
}
// The fill mode and diagonal type SpSV and SpSM read (`__size` is the enum's size).
inline cusparseStatus_t cusparseSpMatSetAttribute(cusparseSpMatDescr_t __d, cusparseSpMatAttribute_t __a, void* __data, size_t __size) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || !__data) return CUSPARSE_STATUS_INVALID_VALUE;
  if (__a == CUSPARSE_SPMAT_FILL_MODE) {
    if (__size != sizeof(cusparseFillMode_t)) return CUSPARSE_STATUS_INVALID_VALUE;
    const cusparseFillMode_t __f = *static_cast<const cusparseFillMode_t*>(__data);
    if ((unsigned)__f > 1u) return CUSPARSE_STATUS_INVALID_VALUE;
    __d->fill = __f;
    return CUSPARSE_STATUS_SUCCESS;
  }
  if (__a == CUSPARSE_SPMAT_DIAG_TYPE) {
    if (__size != sizeof(cusparseDiagType_t)) return CUSPARSE_STATUS_INVALID_VALUE;
    const cusparseDiagType_t __t = *static_cast<const cusparseDiagType_t*>(__data);
    if ((unsigned)__t > 1u) return CUSPARSE_STATUS_INVALID_VALUE;
    __d->diag = __t;
    return CUSPARSE_STATUS_SUCCESS;
  }
  return CUSPARSE_STATUS_INVALID_VALUE;
}
inline cusparseStatus_t cusparseSpMatGetAttribute(cusparseConstSpMatDescr_t __d, cusparseSpMatAttribute_t __a, void* __data, size_t __size) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || !__data) return CUSPARSE_STATUS_INVALID_VALUE;
  if (__a == CUSPARSE_SPMAT_FILL_MODE && __size == sizeof(cusparseFillMode_t)) {
    *static_cast<cusparseFillMode_t*>(__data) = __d->fill;
    return CUSPARSE_STATUS_SUCCESS;
  }
  if (__a == CUSPARSE_SPMAT_DIAG_TYPE && __size == sizeof(cusparseDiagType_t)) {
    *static_cast<cusparseDiagType_t*>(__data) = __d->diag;
    return CUSPARSE_STATUS_SUCCESS;
  }
  return CUSPARSE_STATUS_INVALID_VALUE;
}

inline cusparseStatus_t cusparseCreateDnVec(cusparseDnVecDescr_t* __d, int64_t __size, void* __values, cudaDataType __vt) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || __size < 0) return CUSPARSE_STATUS_INVALID_VALUE;
  *__d = new cusparseDnVecDescr{__size, __values, __vt};
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseCreateConstDnVec(cusparseConstDnVecDescr_t* __d, int64_t __size, const void* __values, cudaDataType __vt) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || __size < 0) return CUSPARSE_STATUS_INVALID_VALUE;
  *__d = new cusparseDnVecDescr{__size, const_cast<void*>(__values), __vt};
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseDestroyDnVec(cusparseConstDnVecDescr_t __d) { ::cudashim::_Device_access __cudashim_da;
  delete __d;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseDnVecGet(cusparseDnVecDescr_t __d, int64_t* __size, void** __values, cudaDataType* __vt) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || !__size || !__values || !__vt) return CUSPARSE_STATUS_INVALID_VALUE;
  *__size = __d->size;
  *__values = __d->values;
  *__vt = __d->value_type;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseConstDnVecGet(cusparseConstDnVecDescr_t __d, int64_t* __size, const void** __values, cudaDataType* __vt) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || !__size || !__values || !__vt) return CUSPARSE_STATUS_INVALID_VALUE;
  *__size = __d->size;
  *__values = __d->values;
  *__vt = __d->value_type;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseDnVecGetValues(cusparseDnVecDescr_t __d, void** __values) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || !__values) return CUSPARSE_STATUS_INVALID_VALUE;
  *__values = __d->values;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseConstDnVecGetValues(cusparseConstDnVecDescr_t __d, const void** __values) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || !__values) return CUSPARSE_STATUS_INVALID_VALUE;
  *__values = __d->values;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseDnVecSetValues(cusparseDnVecDescr_t __d, void* __values) { ::cudashim::_Device_access __cudashim_da;
  if (!__d) return CUSPARSE_STATUS_INVALID_VALUE;
  __d->values = __values;
  return CUSPARSE_STATUS_SUCCESS;
}

inline cusparseStatus_t cusparseCreateDnMat(cusparseDnMatDescr_t* __d, int64_t __rows, int64_t __cols, int64_t __ld, void* __values,
                                            cudaDataType __vt, cusparseOrder_t __order) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || __rows < 0 || __cols < 0 || (__order != CUSPARSE_ORDER_COL && __order != CUSPARSE_ORDER_ROW))
    return CUSPARSE_STATUS_INVALID_VALUE;
  const int64_t __need = __order == CUSPARSE_ORDER_COL ? __rows : __cols;
  if (__ld < (__need > 1 ? __need : 1)) return CUSPARSE_STATUS_INVALID_VALUE;
  *__d = new cusparseDnMatDescr{__rows, __cols, __ld, __values, __vt, __order};
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseCreateConstDnMat(cusparseConstDnMatDescr_t* __d, int64_t __rows, int64_t __cols, int64_t __ld,
                                                 const void* __values, cudaDataType __vt, cusparseOrder_t __order) { ::cudashim::_Device_access __cudashim_da;
  cusparseDnMatDescr_t __m = nullptr;
  cusparseStatus_t __s = cusparseCreateDnMat(&__m, __rows, __cols, __ld, const_cast<void*>(__values), __vt, __order);
  if (__d) *__d = __m;
  return __s;
}
inline cusparseStatus_t cusparseDestroyDnMat(cusparseConstDnMatDescr_t __d) { ::cudashim::_Device_access __cudashim_da;
  delete __d;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseDnMatGet(cusparseDnMatDescr_t __d, int64_t* __rows, int64_t* __cols, int64_t* __ld, void** __values,
                                         cudaDataType* __vt, cusparseOrder_t* __order) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || !__rows || !__cols || !__ld || !__values || !__vt || !__order) return CUSPARSE_STATUS_INVALID_VALUE;
  *__rows = __d->rows;
  *__cols = __d->cols;
  *__ld = __d->ld;
  *__values = __d->values;
  *__vt = __d->value_type;
  *__order = __d->order;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseConstDnMatGet(cusparseConstDnMatDescr_t __d, int64_t* __rows, int64_t* __cols, int64_t* __ld,
                                              const void** __values, cudaDataType* __vt, cusparseOrder_t* __order) { ::cudashim::_Device_access __cudashim_da;
  void* __v = nullptr;
  cusparseStatus_t __s = cusparseDnMatGet(const_cast<cusparseDnMatDescr_t>(__d), __rows, __cols, __ld, __values ? &__v : nullptr, __vt, __order);
  if (__s == CUSPARSE_STATUS_SUCCESS) *__values = __v;
  return __s;
}
inline cusparseStatus_t cusparseDnMatGetValues(cusparseDnMatDescr_t __d, void** __values) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || !__values) return CUSPARSE_STATUS_INVALID_VALUE;
  *__values = __d->values;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseConstDnMatGetValues(cusparseConstDnMatDescr_t __d, const void** __values) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || !__values) return CUSPARSE_STATUS_INVALID_VALUE;
  *__values = __d->values;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseDnMatSetValues(cusparseDnMatDescr_t __d, void* __values) { ::cudashim::_Device_access __cudashim_da;
  if (!__d) return CUSPARSE_STATUS_INVALID_VALUE;
  __d->values = __values;
  return CUSPARSE_STATUS_SUCCESS;
}
// `__count` matrices, `__stride` elements apart (at least one matrix's ld x cols, or ld x rows).
inline cusparseStatus_t cusparseDnMatSetStridedBatch(cusparseDnMatDescr_t __d, int __count, int64_t __stride) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || __count < 1 || __stride < 0) return CUSPARSE_STATUS_INVALID_VALUE;
  if (__count > 1 && __stride < __d->ld * (__d->order == CUSPARSE_ORDER_COL ? __d->cols : __d->rows)) return CUSPARSE_STATUS_INVALID_VALUE;
  __d->batch = __count;
  __d->batch_stride = __stride;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseDnMatGetStridedBatch(cusparseConstDnMatDescr_t __d, int* __count, int64_t* __stride) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || !__count || !__stride) return CUSPARSE_STATUS_INVALID_VALUE;
  *__count = __d->batch;
  *__stride = __d->batch_stride;
  return CUSPARSE_STATUS_SUCCESS;
}

// ---------------------------------------------------------------- generic API: SpMV, SpMM
// y = alpha op(A) x + beta y, accumulated in double; beta == 0 means y is not read.
inline cusparseStatus_t cusparseSpMV(cusparseHandle_t __h, cusparseOperation_t __op, const void* __alpha, cusparseConstSpMatDescr_t __a,
                                     cusparseConstDnVecDescr_t __x, const void* __beta, cusparseDnVecDescr_t __y, cudaDataType __ct,
                                     cusparseSpMVAlg_t, void*) { ::cudashim::_Library_access __cudashim_da("cusparse");
  if (!__h) return CUSPARSE_STATUS_NOT_INITIALIZED;
  if (!__alpha || !__beta || !__a || !__x || !__y || cudashim::sparse::bad_op(__op)) return CUSPARSE_STATUS_INVALID_VALUE;
  const bool __tr = __op != CUSPARSE_OPERATION_NON_TRANSPOSE;
  if (__x->size != (__tr ? __a->rows : __a->cols) || __y->size != (__tr ? __a->cols : __a->rows)) return CUSPARSE_STATUS_INVALID_VALUE;
  if (__a->batch > 1) return CUSPARSE_STATUS_NOT_SUPPORTED;
  cudashim::sparse::require_real("cusparseSpMV", __a->value_type, __x->value_type, __y->value_type, __ct);
  using cudashim::sparse::_held;
  using cudashim::sparse::_scalar;
  return cudashim::sparse::_enqueue(__h, [=, __a = _held(__a), __x = _held(__x), __y = _held(__y),
                                          __alpha = _scalar(__h, __alpha, __ct), __beta = _scalar(__h, __beta, __ct)] {
    const double __al = cudashim::sparse::scalar(__alpha, __ct), __be = cudashim::sparse::scalar(__beta, __ct);
    std::vector<double> __acc((size_t)__y->size, 0.0);
    if (__al != 0.0)
      cudashim::sparse::for_each_nonzero(__a, [&](int64_t __r, int64_t __c, double __v) {
        if (__tr) __acc[__c] += __v * cudashim::lib::load(__x->values, __x->value_type, __r);
        else __acc[__r] += __v * cudashim::lib::load(__x->values, __x->value_type, __c);
      });
    for (int64_t __i = 0; __i < __y->size; ++__i) {
      double __r = __al * __acc[__i];
      if (__be != 0.0) __r += __be * cudashim::lib::load(__y->values, __y->value_type, __i);
      cudashim::lib::store(__y->values, __y->value_type, __i, __r);
    }
    return CUSPARSE_STATUS_SUCCESS;
  });
}
inline cusparseStatus_t cusparseSpMV_bufferSize(cusparseHandle_t __h, cusparseOperation_t __op, const void* __alpha,
                                                cusparseConstSpMatDescr_t __a, cusparseConstDnVecDescr_t __x, const void* __beta,
                                                cusparseDnVecDescr_t __y, cudaDataType, cusparseSpMVAlg_t, size_t* __size) { ::cudashim::_Device_access __cudashim_da;
  if (!__h) return CUSPARSE_STATUS_NOT_INITIALIZED;
  if (!__alpha || !__beta || !__a || !__x || !__y || !__size || cudashim::sparse::bad_op(__op)) return CUSPARSE_STATUS_INVALID_VALUE;
  *__size = 0;  // the host computation needs no device workspace
  return CUSPARSE_STATUS_SUCCESS;
}
// Nothing to prepare on the host.
inline cusparseStatus_t cusparseSpMV_preprocess(cusparseHandle_t __h, cusparseOperation_t __op, const void* __alpha,
                                                cusparseConstSpMatDescr_t __a, cusparseConstDnVecDescr_t __x, const void* __beta,
                                                cusparseDnVecDescr_t __y, cudaDataType, cusparseSpMVAlg_t, void*) { ::cudashim::_Device_access __cudashim_da;
  if (!__h) return CUSPARSE_STATUS_NOT_INITIALIZED;
  if (!__alpha || !__beta || !__a || !__x || !__y || cudashim::sparse::bad_op(__op)) return CUSPARSE_STATUS_INVALID_VALUE;
  return CUSPARSE_STATUS_SUCCESS;
}

namespace cudashim::sparse {
// One matrix of SpMM: C = alpha op(A) op(B) + beta C.
inline void spmm(bool __ta, bool __tb, double __al, const cusparseSpMatDescr* __a, const cusparseDnMatDescr* __b, double __be,
                 const cusparseDnMatDescr* __c) {
  const int64_t __m = __c->rows, __n = __c->cols;
  std::vector<double> __acc((size_t)(__m * __n), 0.0);
  if (__al != 0.0)
    for_each_nonzero(__a, [&](int64_t __r, int64_t __cc, double __v) {
      const int64_t __i = __ta ? __cc : __r, __l = __ta ? __r : __cc;
      for (int64_t __j = 0; __j < __n; ++__j) {
        const int64_t __e = __tb ? dense_at(__b, __j, __l) : dense_at(__b, __l, __j);
        __acc[__i * __n + __j] += __v * lib::load(__b->values, __b->value_type, __e);
      }
    });
  for (int64_t __i = 0; __i < __m; ++__i)
    for (int64_t __j = 0; __j < __n; ++__j) {
      const int64_t __e = dense_at(__c, __i, __j);
      double __r = __al * __acc[__i * __n + __j];
      if (__be != 0.0) __r += __be * lib::load(__c->values, __c->value_type, __e);
      lib::store(__c->values, __c->value_type, __e, __r);
    }
}
inline cusparseStatus_t spmm_check(cusparseHandle_t __h, cusparseOperation_t __opa, cusparseOperation_t __opb, const void* __alpha,
                                   cusparseConstSpMatDescr_t __a, cusparseConstDnMatDescr_t __b, const void* __beta,
                                   cusparseConstDnMatDescr_t __c) {
  if (!__h) return CUSPARSE_STATUS_NOT_INITIALIZED;
  if (!__alpha || !__beta || !__a || !__b || !__c || bad_op(__opa) || bad_op(__opb)) return CUSPARSE_STATUS_INVALID_VALUE;
  const bool __ta = __opa != CUSPARSE_OPERATION_NON_TRANSPOSE, __tb = __opb != CUSPARSE_OPERATION_NON_TRANSPOSE;
  const int64_t __m = __ta ? __a->cols : __a->rows, __k = __ta ? __a->rows : __a->cols;
  const int64_t __bk = __tb ? __b->cols : __b->rows, __n = __tb ? __b->rows : __b->cols;
  if (__bk != __k || __c->rows != __m || __c->cols != __n) return CUSPARSE_STATUS_INVALID_VALUE;
  if (batch_count(__c->batch, __a->batch, __b->batch) < 0) return CUSPARSE_STATUS_INVALID_VALUE;
  return CUSPARSE_STATUS_SUCCESS;
}
}  // namespace cudashim::sparse

// C = alpha op(A) op(B) + beta C with A sparse, B and C dense (either order); strided batches of
// C, with A and B batched alike or shared.
inline cusparseStatus_t cusparseSpMM(cusparseHandle_t __h, cusparseOperation_t __opa, cusparseOperation_t __opb, const void* __alpha,
                                     cusparseConstSpMatDescr_t __a, cusparseConstDnMatDescr_t __b, const void* __beta,
                                     cusparseDnMatDescr_t __c, cudaDataType __ct, cusparseSpMMAlg_t, void*) { ::cudashim::_Library_access __cudashim_da("cusparse");
  const cusparseStatus_t __s = cudashim::sparse::spmm_check(__h, __opa, __opb, __alpha, __a, __b, __beta, __c);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  cudashim::sparse::require_real("cusparseSpMM", __a->value_type, __b->value_type, __c->value_type, __ct);
  using cudashim::sparse::_held;
  using cudashim::sparse::_scalar;
  return cudashim::sparse::_enqueue(__h, [=, __a = _held(__a), __b = _held(__b), __c = _held(__c),
                                          __alpha = _scalar(__h, __alpha, __ct), __beta = _scalar(__h, __beta, __ct)] {
    const double __al = cudashim::sparse::scalar(__alpha, __ct), __be = cudashim::sparse::scalar(__beta, __ct);
    for (int __i = 0; __i < __c->batch; ++__i) {
      const cusparseSpMatDescr __ai = cudashim::sparse::batch_view(__a, __i);
      const cusparseDnMatDescr __bi = cudashim::sparse::batch_view(__b, __i), __ci = cudashim::sparse::batch_view(__c, __i);
      cudashim::sparse::spmm(__opa != CUSPARSE_OPERATION_NON_TRANSPOSE, __opb != CUSPARSE_OPERATION_NON_TRANSPOSE, __al, &__ai, &__bi,
                             __be, &__ci);
    }
    return CUSPARSE_STATUS_SUCCESS;
  });
}
inline cusparseStatus_t cusparseSpMM_bufferSize(cusparseHandle_t __h, cusparseOperation_t __opa, cusparseOperation_t __opb,
                                                const void* __alpha, cusparseConstSpMatDescr_t __a, cusparseConstDnMatDescr_t __b,
                                                const void* __beta, cusparseDnMatDescr_t __c, cudaDataType, cusparseSpMMAlg_t,
                                                size_t* __size) { ::cudashim::_Device_access __cudashim_da;
  if (!__h) return CUSPARSE_STATUS_NOT_INITIALIZED;
  if (!__alpha || !__beta || !__a || !__b || !__c || !__size || cudashim::sparse::bad_op(__opa) || cudashim::sparse::bad_op(__opb))
    return CUSPARSE_STATUS_INVALID_VALUE;
  *__size = 0;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseSpMM_preprocess(cusparseHandle_t __h, cusparseOperation_t __opa, cusparseOperation_t __opb,
                                                const void* __alpha, cusparseConstSpMatDescr_t __a, cusparseConstDnMatDescr_t __b,
                                                const void* __beta, cusparseDnMatDescr_t __c, cudaDataType, cusparseSpMMAlg_t,
                                                void*) { ::cudashim::_Device_access __cudashim_da;
  return cudashim::sparse::spmm_check(__h, __opa, __opb, __alpha, __a, __b, __beta, __c);
}

// Sparse vectors, conversions, triangular solves, SpGEMM, SDDMM and the legacy ILU(0) and sorts.
#include <cudashim/cusparse_generic.h>
