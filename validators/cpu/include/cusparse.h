// cudashim: a host subset of cuSPARSE (CUDA 12 signatures), computed on the CPU.
//
// The legacy helpers (handle, matrix descriptors, cusparse{S,D}nnz) and the generic API for
// SpMV and SpMM on CSR, CSC and COO matrices with float/double values. Device memory is host
// memory, so both pointer modes work alike. What is not declared here (SpGEMM, SpSV, csr2csc,
// the removed pre-12 routines, ...) fails to compile and is reported as `needs_gpu`; a declared
// call with a data type the subset does not compute stops the run with a `needs_gpu` report.
// The exact list is in validators/cpu/README.md.
#pragma once
#include <cudashim/libdata.h>

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
} cusparseSpMMAlg_t;

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
// and COO (`__ptr` rows, `__ind` columns).
struct cusparseSpMatDescr {
  cusparseFormat_t format;
  int64_t rows, cols, nnz;
  void *ptr, *ind, *values;
  cusparseIndexType_t ptr_type, ind_type;
  cusparseIndexBase_t base;
  cudaDataType value_type;
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
};
typedef struct cusparseDnMatDescr* cusparseDnMatDescr_t;
typedef struct cusparseDnMatDescr const* cusparseConstDnMatDescr_t;

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
}

inline int64_t index(const void* __p, cusparseIndexType_t __t, int64_t __i) {
  switch (__t) {
    case CUSPARSE_INDEX_16U: return static_cast<const uint16_t*>(__p)[__i];
    case CUSPARSE_INDEX_32I: return static_cast<const int32_t*>(__p)[__i];
    default: return static_cast<const int64_t*>(__p)[__i];
  }
}

// Calls `__f(row, col, value)` for every stored entry (indices made zero-based).
template <class _Fn>
void for_each_nonzero(const cusparseSpMatDescr* __m, _Fn&& __f) {
  const int64_t __b = __m->base == CUSPARSE_INDEX_BASE_ONE ? 1 : 0;
  if (__m->format == CUSPARSE_FORMAT_COO) {
    for (int64_t __e = 0; __e < __m->nnz; ++__e)
      __f(index(__m->ptr, __m->ptr_type, __e) - __b, index(__m->ind, __m->ind_type, __e) - __b,
          lib::load(__m->values, __m->value_type, __e));
    return;
  }
  const bool __csr = __m->format == CUSPARSE_FORMAT_CSR;
  const int64_t __outer = __csr ? __m->rows : __m->cols;
  for (int64_t __o = 0; __o < __outer; ++__o) {
    const int64_t __lo = index(__m->ptr, __m->ptr_type, __o) - __b, __hi = index(__m->ptr, __m->ptr_type, __o + 1) - __b;
    for (int64_t __e = __lo; __e < __hi; ++__e) {
      const int64_t __inner = index(__m->ind, __m->ind_type, __e) - __b;
      const double __v = lib::load(__m->values, __m->value_type, __e);
      if (__csr) __f(__o, __inner, __v);
      else __f(__inner, __o, __v);
    }
  }
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
  if (!__d || __rows < 0 || __cols < 0 || __nnz < 0 || (unsigned)__b > 1u || __pt < CUSPARSE_INDEX_16U || __pt > CUSPARSE_INDEX_64I ||
      __it < CUSPARSE_INDEX_16U || __it > CUSPARSE_INDEX_64I)
    return CUSPARSE_STATUS_INVALID_VALUE;
  *__d = new cusparseSpMatDescr{__f, __rows, __cols, __nnz, const_cast<void*>(__ptr), const_cast<void*>(__ind),
                                const_cast<void*>(__val), __pt, __it, __b, __vt};
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
inline cusparseStatus_t cusparseCreateCoo(cusparseSpMatDescr_t* __d, int64_t __rows, int64_t __cols, int64_t __nnz, void* __rowind,
                                          void* __colind, void* __values, cusparseIndexType_t __it, cusparseIndexBase_t __b,
                                          cudaDataType __vt) { ::cudashim::_Device_access __cudashim_da;
  return cudashim::sparse::create(__d, CUSPARSE_FORMAT_COO, __rows, __cols, __nnz, __rowind, __colind, __values, __it, __it, __b, __vt);
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
inline cusparseStatus_t cusparseCsrSetPointers(cusparseSpMatDescr_t __d, void* __offsets, void* __colind, void* __values) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || __d->format != CUSPARSE_FORMAT_CSR) return CUSPARSE_STATUS_INVALID_VALUE;
  __d->ptr = __offsets;
  __d->ind = __colind;
  __d->values = __values;
  return CUSPARSE_STATUS_SUCCESS;
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
inline cusparseStatus_t cusparseDnVecGetValues(cusparseDnVecDescr_t __d, void** __values) { ::cudashim::_Device_access __cudashim_da;
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
inline cusparseStatus_t cusparseDnMatGetValues(cusparseDnMatDescr_t __d, void** __values) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || !__values) return CUSPARSE_STATUS_INVALID_VALUE;
  *__values = __d->values;
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
  cudashim::sparse::require_real("cusparseSpMV", __a->value_type, __x->value_type, __y->value_type, __ct);
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
}
inline cusparseStatus_t cusparseSpMV_bufferSize(cusparseHandle_t __h, cusparseOperation_t __op, const void* __alpha,
                                                cusparseConstSpMatDescr_t __a, cusparseConstDnVecDescr_t __x, const void* __beta,
                                                cusparseDnVecDescr_t __y, cudaDataType, cusparseSpMVAlg_t, size_t* __size) { ::cudashim::_Device_access __cudashim_da;
  if (!__h) return CUSPARSE_STATUS_NOT_INITIALIZED;
  if (!__alpha || !__beta || !__a || !__x || !__y || !__size || cudashim::sparse::bad_op(__op)) return CUSPARSE_STATUS_INVALID_VALUE;
  *__size = 0;  // the host computation needs no device workspace
  return CUSPARSE_STATUS_SUCCESS;
}

// C = alpha op(A) op(B) + beta C with A sparse, B and C dense (either order).
inline cusparseStatus_t cusparseSpMM(cusparseHandle_t __h, cusparseOperation_t __opa, cusparseOperation_t __opb, const void* __alpha,
                                     cusparseConstSpMatDescr_t __a, cusparseConstDnMatDescr_t __b, const void* __beta,
                                     cusparseDnMatDescr_t __c, cudaDataType __ct, cusparseSpMMAlg_t, void*) { ::cudashim::_Library_access __cudashim_da("cusparse");
  if (!__h) return CUSPARSE_STATUS_NOT_INITIALIZED;
  if (!__alpha || !__beta || !__a || !__b || !__c || cudashim::sparse::bad_op(__opa) || cudashim::sparse::bad_op(__opb))
    return CUSPARSE_STATUS_INVALID_VALUE;
  const bool __ta = __opa != CUSPARSE_OPERATION_NON_TRANSPOSE, __tb = __opb != CUSPARSE_OPERATION_NON_TRANSPOSE;
  const int64_t __m = __ta ? __a->cols : __a->rows, __k = __ta ? __a->rows : __a->cols;
  const int64_t __bk = __tb ? __b->cols : __b->rows, __n = __tb ? __b->rows : __b->cols;
  if (__bk != __k || __c->rows != __m || __c->cols != __n) return CUSPARSE_STATUS_INVALID_VALUE;
  cudashim::sparse::require_real("cusparseSpMM", __a->value_type, __b->value_type, __c->value_type, __ct);
  const double __al = cudashim::sparse::scalar(__alpha, __ct), __be = cudashim::sparse::scalar(__beta, __ct);
  std::vector<double> __acc((size_t)(__m * __n), 0.0);
  if (__al != 0.0)
    cudashim::sparse::for_each_nonzero(__a, [&](int64_t __r, int64_t __cc, double __v) {
      const int64_t __i = __ta ? __cc : __r, __l = __ta ? __r : __cc;
      for (int64_t __j = 0; __j < __n; ++__j) {
        const int64_t __e = __tb ? cudashim::sparse::dense_at(__b, __j, __l) : cudashim::sparse::dense_at(__b, __l, __j);
        __acc[__i * __n + __j] += __v * cudashim::lib::load(__b->values, __b->value_type, __e);
      }
    });
  for (int64_t __i = 0; __i < __m; ++__i)
    for (int64_t __j = 0; __j < __n; ++__j) {
      const int64_t __e = cudashim::sparse::dense_at(__c, __i, __j);
      double __r = __al * __acc[__i * __n + __j];
      if (__be != 0.0) __r += __be * cudashim::lib::load(__c->values, __c->value_type, __e);
      cudashim::lib::store(__c->values, __c->value_type, __e, __r);
    }
  return CUSPARSE_STATUS_SUCCESS;
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
