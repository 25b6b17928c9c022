// cudashim: the rest of the host cuSPARSE subset, included at the end of <cusparse.h>: sparse
// vectors (Axpby, Gather, Scatter, Rot, SpVV), conversions (SparseToDense, DenseToSparse),
// triangular solves (SpSV, SpSM), SpGEMM (and its structure-reuse API), SDDMM, and the legacy
// routines real programs still pair with them (csrilu02, csrsort/cscsort/coosort,
// CreateIdentityPermutation, Csr2cscEx2).
//
// The conventions of <cusparse.h>: calls that compute open device memory and note library work
// (`_Library_access`), descriptor and size calls only open it (`_Device_access`); values are
// widened to double and each result rounded once to its type; scalars have the compute type and
// are read through the pointer given (host and device pointer modes alike; in a capture, a
// host-mode scalar at the call, see `_enqueue` in <cusparse.h>); a value type outside
// the real ones stops the run as `needs_gpu`; a format, operation or batch the subset does not
// compute returns CUSPARSE_STATUS_NOT_SUPPORTED. Buffer sizes are 0 (nothing is kept in device
// memory), except where a null buffer asks for the size (SpGEMM): there they are 64 bytes, so the
// buffer a program allocates is not null.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

namespace cudashim::sparse {

// The compute type of a vector operation without one (Axpby, Rot): half types compute in float.
inline cudaDataType compute_of(cudaDataType __t) { return __t == CUDA_R_64F ? CUDA_R_64F : CUDA_R_32F; }

inline bool bad_base(cusparseIndexBase_t __b) { return (unsigned)__b > 1u; }

constexpr size_t kQueryBufferSize = 64;

}  // namespace cudashim::sparse

// Opaque descriptors of the multi-stage routines.
struct cusparseSpSVDescr {
  bool analyzed = false;
  void* new_values = nullptr;  // cusparseSpSV_updateMatrix: the values (or diagonal) the solves use
  int update = 0;              // cusparseSpSVUpdate_t of new_values
};
typedef struct cusparseSpSVDescr* cusparseSpSVDescr_t;
struct cusparseSpSMDescr {
  bool analyzed = false;
  void* new_values = nullptr;
  int update = 0;
};
typedef struct cusparseSpSMDescr* cusparseSpSMDescr_t;
// SpGEMM's product, held between its stages (the GPU keeps it in the external buffers).
struct cusparseSpGEMMDescr {
  bool estimated = false, computed = false, structured = false;
  int64_t products = 0;
  std::vector<int64_t> off, col;
  std::vector<double> val;  // alpha op(A) op(B) after cusparseSpGEMM_compute
};
typedef struct cusparseSpGEMMDescr* cusparseSpGEMMDescr_t;
struct csrilu02Info {
  bool analyzed = false;
  int structural_zero = -1, zero = -1;  // zero-based rows; -1: none
  int base = 0;                         // the matrix's index base, for the position reported
  bool boost = false;
  double tol = 0, boost_val = 0;
};
typedef struct csrilu02Info* csrilu02Info_t;

// ---------------------------------------------------------------- sparse vectors
namespace cudashim::sparse {
inline cusparseStatus_t create_spvec(cusparseSpVecDescr_t* __d, int64_t __size, int64_t __nnz, const void* __ind, const void* __val,
                                     cusparseIndexType_t __it, cusparseIndexBase_t __b, cudaDataType __vt) {
  if (!__d || __size < 0 || __nnz < 0 || __nnz > __size || bad_index_type(__it) || bad_base(__b)) return CUSPARSE_STATUS_INVALID_VALUE;
  *__d = new cusparseSpVecDescr{__size, __nnz, const_cast<void*>(__ind), const_cast<void*>(__val), __it, __b, __vt};
  return CUSPARSE_STATUS_SUCCESS;
}
// Element `__e` of a sparse vector's index array, zero-based.
inline int64_t vec_index(const cusparseSpVecDescr* __x, int64_t __e) {
  return index(__x->indices, __x->idx_type, __e) - (__x->base == CUSPARSE_INDEX_BASE_ONE ? 1 : 0);
}
inline cusparseStatus_t vec_pair(cusparseHandle_t __h, const cusparseSpVecDescr* __x, const cusparseDnVecDescr* __y) {
  if (!__h) return CUSPARSE_STATUS_NOT_INITIALIZED;
  if (!__x || !__y || __x->size != __y->size) return CUSPARSE_STATUS_INVALID_VALUE;
  return CUSPARSE_STATUS_SUCCESS;
}
}  // namespace cudashim::sparse

inline cusparseStatus_t cusparseCreateSpVec(cusparseSpVecDescr_t* __d, int64_t __size, int64_t __nnz, void* __indices, void* __values,
                                            cusparseIndexType_t __it, cusparseIndexBase_t __b, cudaDataType __vt) { ::cudashim::_Device_access __cudashim_da;
  return cudashim::sparse::create_spvec(__d, __size, __nnz, __indices, __values, __it, __b, __vt);
}
inline cusparseStatus_t cusparseCreateConstSpVec(cusparseConstSpVecDescr_t* __d, int64_t __size, int64_t __nnz, const void* __indices,
                                                 const void* __values, cusparseIndexType_t __it, cusparseIndexBase_t __b,
                                                 cudaDataType __vt) { ::cudashim::_Device_access __cudashim_da;
  cusparseSpVecDescr_t __v = nullptr;
  cusparseStatus_t __s = cudashim::sparse::create_spvec(&__v, __size, __nnz, __indices, __values, __it, __b, __vt);
  if (__d) *__d = __v;
  return __s;
}
inline cusparseStatus_t cusparseDestroySpVec(cusparseConstSpVecDescr_t __d) { ::cudashim::_Device_access __cudashim_da;
  delete __d;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseSpVecGet(cusparseSpVecDescr_t __d, int64_t* __size, int64_t* __nnz, void** __indices, void** __values,
                                         cusparseIndexType_t* __it, cusparseIndexBase_t* __b, cudaDataType* __vt) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || !__size || !__nnz || !__indices || !__values || !__it || !__b || !__vt) return CUSPARSE_STATUS_INVALID_VALUE;
  *__size = __d->size;
  *__nnz = __d->nnz;
  *__indices = __d->indices;
  *__values = __d->values;
  *__it = __d->idx_type;
  *__b = __d->base;
  *__vt = __d->value_type;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseConstSpVecGet(cusparseConstSpVecDescr_t __d, int64_t* __size, int64_t* __nnz, const void** __indices,
                                              const void** __values, cusparseIndexType_t* __it, cusparseIndexBase_t* __b,
                                              cudaDataType* __vt) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || !__size || !__nnz || !__indices || !__values || !__it || !__b || !__vt) return CUSPARSE_STATUS_INVALID_VALUE;
  *__size = __d->size;
  *__nnz = __d->nnz;
  *__indices = __d->indices;
  *__values = __d->values;
  *__it = __d->idx_type;
  *__b = __d->base;
  *__vt = __d->value_type;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseSpVecGetIndexBase(cusparseConstSpVecDescr_t __d, cusparseIndexBase_t* __b) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || !__b) return CUSPARSE_STATUS_INVALID_VALUE;
  *__b = __d->base;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseSpVecGetValues(cusparseSpVecDescr_t __d, void** __values) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || !__values) return CUSPARSE_STATUS_INVALID_VALUE;
  *__values = __d->values;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseConstSpVecGetValues(cusparseConstSpVecDescr_t __d, const void** __values) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || !__values) return CUSPARSE_STATUS_INVALID_VALUE;
  *__values = __d->values;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseSpVecSetValues(cusparseSpVecDescr_t __d, void* __values) { ::cudashim::_Device_access __cudashim_da;
  if (!__d) return CUSPARSE_STATUS_INVALID_VALUE;
  __d->values = __values;
  return CUSPARSE_STATUS_SUCCESS;
}

// Y = alpha X + beta Y (every element of Y scaled, the entries of X added); beta == 0 means Y is
// not read.
inline cusparseStatus_t cusparseAxpby(cusparseHandle_t __h, const void* __alpha, cusparseConstSpVecDescr_t __x, const void* __beta,
                                      cusparseDnVecDescr_t __y) { ::cudashim::_Library_access __cudashim_da("cusparse");
  const cusparseStatus_t __s = cudashim::sparse::vec_pair(__h, __x, __y);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  if (!__alpha || !__beta) return CUSPARSE_STATUS_INVALID_VALUE;
  const cudaDataType __ct = cudashim::sparse::compute_of(__y->value_type);
  cudashim::sparse::require_real("cusparseAxpby", __x->value_type, __y->value_type, __y->value_type, __ct);
  using cudashim::sparse::_held;
  using cudashim::sparse::_scalar;
  return cudashim::sparse::_enqueue(__h, [=, __x = _held(__x), __y = _held(__y), __alpha = _scalar(__h, __alpha, __ct),
                                          __beta = _scalar(__h, __beta, __ct)] {
    const double __al = cudashim::sparse::scalar(__alpha, __ct), __be = cudashim::sparse::scalar(__beta, __ct);
    std::vector<double> __acc((size_t)__y->size);
    for (int64_t __i = 0; __i < __y->size; ++__i)
      __acc[__i] = __be != 0.0 ? __be * cudashim::lib::load(__y->values, __y->value_type, __i) : 0.0;
    for (int64_t __e = 0; __e < __x->nnz; ++__e)
      __acc[cudashim::sparse::vec_index(__x, __e)] += __al * cudashim::lib::load(__x->values, __x->value_type, __e);
    for (int64_t __i = 0; __i < __y->size; ++__i) cudashim::lib::store(__y->values, __y->value_type, __i, __acc[__i]);
    return CUSPARSE_STATUS_SUCCESS;
  });
}
// X.values[i] = Y[X.indices[i]].
inline cusparseStatus_t cusparseGather(cusparseHandle_t __h, cusparseConstDnVecDescr_t __y, cusparseSpVecDescr_t __x) { ::cudashim::_Library_access __cudashim_da("cusparse");
  const cusparseStatus_t __s = cudashim::sparse::vec_pair(__h, __x, __y);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  cudashim::sparse::require_real("cusparseGather", __x->value_type, __y->value_type, __y->value_type,
                                 cudashim::sparse::compute_of(__y->value_type));
  using cudashim::sparse::_held;
  return cudashim::sparse::_enqueue(__h, [__x = _held(__x), __y = _held(__y)] {
    for (int64_t __e = 0; __e < __x->nnz; ++__e)
      cudashim::lib::store(__x->values, __x->value_type, __e,
                           cudashim::lib::load(__y->values, __y->value_type, cudashim::sparse::vec_index(__x, __e)));
    return CUSPARSE_STATUS_SUCCESS;
  });
}
// Y[X.indices[i]] = X.values[i] (the other elements of Y unchanged).
inline cusparseStatus_t cusparseScatter(cusparseHandle_t __h, cusparseConstSpVecDescr_t __x, cusparseDnVecDescr_t __y) { ::cudashim::_Library_access __cudashim_da("cusparse");
  const cusparseStatus_t __s = cudashim::sparse::vec_pair(__h, __x, __y);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  cudashim::sparse::require_real("cusparseScatter", __x->value_type, __y->value_type, __y->value_type,
                                 cudashim::sparse::compute_of(__y->value_type));
  using cudashim::sparse::_held;
  return cudashim::sparse::_enqueue(__h, [__x = _held(__x), __y = _held(__y)] {
    for (int64_t __e = 0; __e < __x->nnz; ++__e)
      cudashim::lib::store(__y->values, __y->value_type, cudashim::sparse::vec_index(__x, __e),
                           cudashim::lib::load(__x->values, __x->value_type, __e));
    return CUSPARSE_STATUS_SUCCESS;
  });
}
// Givens rotation of X's entries with the matching elements of Y:
// X[i] = c X[i] + s Y[idx[i]], Y[idx[i]] = c Y[idx[i]] - s X[i] (the old X[i]).
inline cusparseStatus_t cusparseRot(cusparseHandle_t __h, const void* __c, const void* __s, cusparseSpVecDescr_t __x,
                                    cusparseDnVecDescr_t __y) { ::cudashim::_Library_access __cudashim_da("cusparse");
  const cusparseStatus_t __st = cudashim::sparse::vec_pair(__h, __x, __y);
  if (__st != CUSPARSE_STATUS_SUCCESS) return __st;
  if (!__c || !__s) return CUSPARSE_STATUS_INVALID_VALUE;
  const cudaDataType __ct = cudashim::sparse::compute_of(__y->value_type);
  cudashim::sparse::require_real("cusparseRot", __x->value_type, __y->value_type, __y->value_type, __ct);
  using cudashim::sparse::_held;
  using cudashim::sparse::_scalar;
  return cudashim::sparse::_enqueue(__h, [=, __x = _held(__x), __y = _held(__y), __c = _scalar(__h, __c, __ct),
                                          __s = _scalar(__h, __s, __ct)] {
    const double __cc = cudashim::sparse::scalar(__c, __ct), __ss = cudashim::sparse::scalar(__s, __ct);
    for (int64_t __e = 0; __e < __x->nnz; ++__e) {
      const int64_t __i = cudashim::sparse::vec_index(__x, __e);
      const double __xv = cudashim::lib::load(__x->values, __x->value_type, __e), __yv = cudashim::lib::load(__y->values, __y->value_type, __i);
      cudashim::lib::store(__x->values, __x->value_type, __e, __cc * __xv + __ss * __yv);
      cudashim::lib::store(__y->values, __y->value_type, __i, __cc * __yv - __ss * __xv);
    }
    return CUSPARSE_STATUS_SUCCESS;
  });
}
// *result = sum X.values[i] Y[X.indices[i]], in the compute type (written through the pointer).
inline cusparseStatus_t cusparseSpVV(cusparseHandle_t __h, cusparseOperation_t __op, cusparseConstSpVecDescr_t __x,
                                     cusparseConstDnVecDescr_t __y, void* __result, cudaDataType __ct, void*) { ::cudashim::_Library_access __cudashim_da("cusparse");
  const cusparseStatus_t __s = cudashim::sparse::vec_pair(__h, __x, __y);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  if (!__result || cudashim::sparse::bad_op(__op)) return CUSPARSE_STATUS_INVALID_VALUE;
  cudashim::sparse::require_real("cusparseSpVV", __x->value_type, __y->value_type, __y->value_type, __ct);
  if (cudashim::sparse::_host_result_in_capture(__h, __h->pointer_mode == CUSPARSE_POINTER_MODE_HOST)) return CUSPARSE_STATUS_INTERNAL_ERROR;
  using cudashim::sparse::_held;
  return cudashim::sparse::_enqueue(__h, [=, __x = _held(__x), __y = _held(__y)] {
    double __sum = 0.0;
    for (int64_t __e = 0; __e < __x->nnz; ++__e)
      __sum += cudashim::lib::load(__x->values, __x->value_type, __e) *
               cudashim::lib::load(__y->values, __y->value_type, cudashim::sparse::vec_index(__x, __e));
    cudashim::lib::store(__result, __ct, 0, __sum);
    return CUSPARSE_STATUS_SUCCESS;
  });
}
inline cusparseStatus_t cusparseSpVV_bufferSize(cusparseHandle_t __h, cusparseOperation_t __op, cusparseConstSpVecDescr_t __x,
                                                cusparseConstDnVecDescr_t __y, const void* __result, cudaDataType, size_t* __size) { ::cudashim::_Device_access __cudashim_da;
  const cusparseStatus_t __s = cudashim::sparse::vec_pair(__h, __x, __y);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  if (!__result || !__size || cudashim::sparse::bad_op(__op)) return CUSPARSE_STATUS_INVALID_VALUE;
  *__size = 0;
  return CUSPARSE_STATUS_SUCCESS;
}

// ---------------------------------------------------------------- conversions
namespace cudashim::sparse {
inline cusparseStatus_t conversion_check(cusparseHandle_t __h, const cusparseSpMatDescr* __s, const cusparseDnMatDescr* __d, int __alg) {
  if (!__h) return CUSPARSE_STATUS_NOT_INITIALIZED;
  if (!__s || !__d || __alg != 0 || __s->rows != __d->rows || __s->cols != __d->cols) return CUSPARSE_STATUS_INVALID_VALUE;
  if (__s->batch > 1 || __d->batch > 1) return CUSPARSE_STATUS_NOT_SUPPORTED;
  return CUSPARSE_STATUS_SUCCESS;
}
// Nonzeros of a dense matrix per row (CSR, COO) or per column (CSC).
inline std::vector<int64_t> dense_counts(const cusparseDnMatDescr* __a, bool __by_column) {
  std::vector<int64_t> __n((size_t)(__by_column ? __a->cols : __a->rows), 0);
  for (int64_t __i = 0; __i < __a->rows; ++__i)
    for (int64_t __j = 0; __j < __a->cols; ++__j)
      if (lib::load(__a->values, __a->value_type, dense_at(__a, __i, __j)) != 0.0) ++__n[__by_column ? __j : __i];
  return __n;
}
// Writes the offsets (CSR, CSC) of the nonzeros counted; returns their total.
inline int64_t write_offsets(cusparseSpMatDescr* __b, const std::vector<int64_t>& __counts) {
  const int64_t __base = __b->base == CUSPARSE_INDEX_BASE_ONE ? 1 : 0;
  int64_t __total = 0;
  if (__b->format != CUSPARSE_FORMAT_COO && __b->ptr) set_index(__b->ptr, __b->ptr_type, 0, __base);
  for (size_t __i = 0; __i < __counts.size(); ++__i) {
    __total += __counts[__i];
    if (__b->format != CUSPARSE_FORMAT_COO && __b->ptr) set_index(__b->ptr, __b->ptr_type, (int64_t)__i + 1, __total + __base);
  }
  return __total;
}
}  // namespace cudashim::sparse

inline cusparseStatus_t cusparseSparseToDense_bufferSize(cusparseHandle_t __h, cusparseConstSpMatDescr_t __a, cusparseDnMatDescr_t __b,
                                                         cusparseSparseToDenseAlg_t __alg, size_t* __size) { ::cudashim::_Device_access __cudashim_da;
  const cusparseStatus_t __s = cudashim::sparse::conversion_check(__h, __a, __b, __alg);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  if (!__size) return CUSPARSE_STATUS_INVALID_VALUE;
  *__size = 0;
  return CUSPARSE_STATUS_SUCCESS;
}
// B = A: every element of B written (zero where A stores nothing).
inline cusparseStatus_t cusparseSparseToDense(cusparseHandle_t __h, cusparseConstSpMatDescr_t __a, cusparseDnMatDescr_t __b,
                                              cusparseSparseToDenseAlg_t __alg, void*) { ::cudashim::_Library_access __cudashim_da("cusparse");
  const cusparseStatus_t __s = cudashim::sparse::conversion_check(__h, __a, __b, __alg);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  cudashim::sparse::require_real("cusparseSparseToDense", __a->value_type, __b->value_type, __b->value_type,
                                 cudashim::sparse::compute_of(__b->value_type));
  using cudashim::sparse::_held;
  return cudashim::sparse::_enqueue(__h, [__a = _held(__a), __b = _held(__b)] {
    for (int64_t __i = 0; __i < __b->rows; ++__i)
      for (int64_t __j = 0; __j < __b->cols; ++__j)
        cudashim::lib::store(__b->values, __b->value_type, cudashim::sparse::dense_at(__b, __i, __j), 0.0);
    cudashim::sparse::for_each_nonzero(__a, [&](int64_t __r, int64_t __c, double __v) {
      const int64_t __e = cudashim::sparse::dense_at(__b, __r, __c);
      cudashim::lib::store(__b->values, __b->value_type, __e, cudashim::lib::load(__b->values, __b->value_type, __e) + __v);
    });
    return CUSPARSE_STATUS_SUCCESS;
  });
}
inline cusparseStatus_t cusparseDenseToSparse_bufferSize(cusparseHandle_t __h, cusparseConstDnMatDescr_t __a, cusparseSpMatDescr_t __b,
                                                         cusparseDenseToSparseAlg_t __alg, size_t* __size) { ::cudashim::_Device_access __cudashim_da;
  const cusparseStatus_t __s = cudashim::sparse::conversion_check(__h, __b, __a, __alg);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  if (!__size) return CUSPARSE_STATUS_INVALID_VALUE;
  *__size = 0;
  return CUSPARSE_STATUS_SUCCESS;
}
// Counts the nonzeros of A (elements != 0) into B's nnz, and writes B's offsets (CSR, CSC) when
// B has them.
inline cusparseStatus_t cusparseDenseToSparse_analysis(cusparseHandle_t __h, cusparseConstDnMatDescr_t __a, cusparseSpMatDescr_t __b,
                                                       cusparseDenseToSparseAlg_t __alg, void*) { ::cudashim::_Library_access __cudashim_da("cusparse");
  const cusparseStatus_t __s = cudashim::sparse::conversion_check(__h, __b, __a, __alg);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  cudashim::sparse::require_real("cusparseDenseToSparse_analysis", __a->value_type, __b->value_type, __b->value_type,
                                 cudashim::sparse::compute_of(__b->value_type));
  if (cudashim::sparse::_host_result_in_capture(__h, true)) return CUSPARSE_STATUS_INTERNAL_ERROR;  // nnz into B's descriptor
  __b->nnz = cudashim::sparse::write_offsets(__b, cudashim::sparse::dense_counts(__a, __b->format == CUSPARSE_FORMAT_CSC));
  return CUSPARSE_STATUS_SUCCESS;
}
// B = A's nonzeros, in row order (CSR, COO: columns ascending) or column order (CSC). B's nnz must
// be their number (cusparseDenseToSparse_analysis sets it).
inline cusparseStatus_t cusparseDenseToSparse_convert(cusparseHandle_t __h, cusparseConstDnMatDescr_t __a, cusparseSpMatDescr_t __b,
                                                      cusparseDenseToSparseAlg_t __alg, void*) { ::cudashim::_Library_access __cudashim_da("cusparse");
  const cusparseStatus_t __s = cudashim::sparse::conversion_check(__h, __b, __a, __alg);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  cudashim::sparse::require_real("cusparseDenseToSparse_convert", __a->value_type, __b->value_type, __b->value_type,
                                 cudashim::sparse::compute_of(__b->value_type));
  using cudashim::sparse::_held;
  // The count is the matrix's, read when the work runs: a captured conversion whose B does not
  // fit it writes nothing (a GPU's would write out of bounds).
  return cudashim::sparse::_enqueue(__h, [__a = _held(__a), __b = _held(__b)] {
    const bool __csc = __b->format == CUSPARSE_FORMAT_CSC;
    const std::vector<int64_t> __counts = cudashim::sparse::dense_counts(__a, __csc);
    const int64_t __total = std::accumulate(__counts.begin(), __counts.end(), (int64_t)0);
    if (__total != __b->nnz || (__total > 0 && (!__b->ind || !__b->values || (__b->format == CUSPARSE_FORMAT_COO && !__b->ptr))) ||
        (__b->format != CUSPARSE_FORMAT_COO && !__b->ptr))
      return CUSPARSE_STATUS_INVALID_VALUE;
    cudashim::sparse::write_offsets(__b, __counts);
    const int64_t __base = __b->base == CUSPARSE_INDEX_BASE_ONE ? 1 : 0;
    const int64_t __outer = __csc ? __a->cols : __a->rows, __inner = __csc ? __a->rows : __a->cols;
    int64_t __e = 0;
    for (int64_t __o = 0; __o < __outer; ++__o)
      for (int64_t __i = 0; __i < __inner; ++__i) {
        const int64_t __r = __csc ? __i : __o, __c = __csc ? __o : __i;
        const double __v = cudashim::lib::load(__a->values, __a->value_type, cudashim::sparse::dense_at(__a, __r, __c));
        if (__v == 0.0) continue;
        if (__b->format == CUSPARSE_FORMAT_COO) cudashim::sparse::set_index(__b->ptr, __b->ptr_type, __e, __r + __base);
        cudashim::sparse::set_index(__b->ind, __b->ind_type, __e, (__csc ? __r : __c) + __base);
        cudashim::lib::store(__b->values, __b->value_type, __e, __v);
        ++__e;
      }
    return CUSPARSE_STATUS_SUCCESS;
  });
}

// ---------------------------------------------------------------- triangular solves
namespace cudashim::sparse {
// The triangle of op(A) a solve reads, as CSR rows: the entries strictly below (or above) the
// diagonal, and the diagonal (1 for a unit diagonal; entries of the other triangle are ignored).
struct triangle {
  int64_t n = 0;
  bool lower = true, unit = false;
  std::vector<int64_t> off, col;
  std::vector<double> val, diag;

  // z = op(A)^-1 z, in place.
  void solve(double* __z) const {
    for (int64_t __k = 0; __k < n; ++__k) {
      const int64_t __i = lower ? __k : n - 1 - __k;
      double __s = __z[__i];
      for (int64_t __e = off[__i]; __e < off[__i + 1]; ++__e) __s -= val[__e] * __z[col[__e]];
      __z[__i] = unit ? __s : __s / diag[__i];
    }
  }
};
// `__values` replaces A's values (SpSV/SpSM_updateMatrix, GENERAL) or its diagonal (DIAGONAL).
inline void make_triangle(const cusparseSpMatDescr* __a, bool __trans, const void* __values, int __update, triangle& __t) {
  cusparseSpMatDescr __m = *__a;
  const void* __new_diag = nullptr;
  if (__values && __update == CUSPARSE_SPSV_UPDATE_GENERAL) __m.values = const_cast<void*>(__values);
  else if (__values) __new_diag = __values;
  const int64_t __n = __t.n = __a->rows;
  __t.lower = (__a->fill == CUSPARSE_FILL_MODE_LOWER) != __trans;
  __t.unit = __a->diag == CUSPARSE_DIAG_TYPE_UNIT;
  const bool __lower = __t.lower;
  auto __keep = [&](int64_t __r, int64_t __c) { return __lower ? __c < __r : __c > __r; };
  __t.off.assign((size_t)__n + 1, 0);
  __t.diag.assign((size_t)__n, __t.unit ? 1.0 : 0.0);
  for_each_stored(&__m, [&](int64_t __r, int64_t __c, int64_t) {
    if (__trans) std::swap(__r, __c);
    if (__keep(__r, __c)) ++__t.off[__r + 1];
  });
  for (int64_t __i = 0; __i < __n; ++__i) __t.off[__i + 1] += __t.off[__i];
  __t.col.resize((size_t)__t.off[__n]);
  __t.val.resize((size_t)__t.off[__n]);
  std::vector<int64_t> __pos(__t.off.begin(), __t.off.end() - 1);
  for_each_nonzero(&__m, [&](int64_t __r, int64_t __c, double __v) {
    if (__trans) std::swap(__r, __c);
    if (__r == __c) {
      if (!__t.unit && !__new_diag) __t.diag[__r] += __v;
    } else if (__keep(__r, __c)) {
      __t.col[__pos[__r]] = __c;
      __t.val[__pos[__r]++] = __v;
    }
  });
  if (!__t.unit && __new_diag)
    for (int64_t __i = 0; __i < __n; ++__i) __t.diag[__i] = lib::load(__new_diag, __a->value_type, __i);
}
inline cusparseStatus_t spsv_check(cusparseHandle_t __h, cusparseOperation_t __op, const void* __alpha, const cusparseSpMatDescr* __a,
                                   const cusparseDnVecDescr* __x, const cusparseDnVecDescr* __y, const void* __descr, int __alg) {
  if (!__h) return CUSPARSE_STATUS_NOT_INITIALIZED;
  if (!__alpha || !__a || !__x || !__y || !__descr || bad_op(__op) || __alg != 0 || __a->rows != __a->cols || __x->size != __a->rows ||
      __y->size != __a->rows)
    return CUSPARSE_STATUS_INVALID_VALUE;
  if (__a->batch > 1) return CUSPARSE_STATUS_NOT_SUPPORTED;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t spsm_check(cusparseHandle_t __h, cusparseOperation_t __opa, cusparseOperation_t __opb, const void* __alpha,
                                   const cusparseSpMatDescr* __a, const cusparseDnMatDescr* __b, const cusparseDnMatDescr* __c,
                                   const void* __descr, int __alg) {
  if (!__h) return CUSPARSE_STATUS_NOT_INITIALIZED;
  if (!__alpha || !__a || !__b || !__c || !__descr || bad_op(__opa) || bad_op(__opb) || __alg != 0) return CUSPARSE_STATUS_INVALID_VALUE;
  const bool __tb = __opb != CUSPARSE_OPERATION_NON_TRANSPOSE;
  if (__a->rows != __a->cols || __c->rows != __a->rows || (__tb ? __b->cols : __b->rows) != __a->rows ||
      (__tb ? __b->rows : __b->cols) != __c->cols)
    return CUSPARSE_STATUS_INVALID_VALUE;
  if (__a->batch > 1 || __b->batch > 1 || __c->batch > 1) return CUSPARSE_STATUS_NOT_SUPPORTED;
  return CUSPARSE_STATUS_SUCCESS;
}
}  // namespace cudashim::sparse

// SpSV: op(A) y = alpha x for y, A triangular by its fill mode and diagonal type attributes.
inline cusparseStatus_t cusparseSpSV_createDescr(cusparseSpSVDescr_t* __d) { ::cudashim::_Device_access __cudashim_da;
  if (!__d) return CUSPARSE_STATUS_INVALID_VALUE;
  *__d = new cusparseSpSVDescr();
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseSpSV_destroyDescr(cusparseSpSVDescr_t __d) { ::cudashim::_Device_access __cudashim_da;
  delete __d;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseSpSV_bufferSize(cusparseHandle_t __h, cusparseOperation_t __op, const void* __alpha,
                                                cusparseConstSpMatDescr_t __a, cusparseConstDnVecDescr_t __x, cusparseDnVecDescr_t __y,
                                                cudaDataType, cusparseSpSVAlg_t __alg, cusparseSpSVDescr_t __d, size_t* __size) { ::cudashim::_Device_access __cudashim_da;
  const cusparseStatus_t __s = cudashim::sparse::spsv_check(__h, __op, __alpha, __a, __x, __y, __d, __alg);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  if (!__size) return CUSPARSE_STATUS_INVALID_VALUE;
  *__size = 0;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseSpSV_analysis(cusparseHandle_t __h, cusparseOperation_t __op, const void* __alpha,
                                              cusparseConstSpMatDescr_t __a, cusparseConstDnVecDescr_t __x, cusparseDnVecDescr_t __y,
                                              cudaDataType __ct, cusparseSpSVAlg_t __alg, cusparseSpSVDescr_t __d, void*) { ::cudashim::_Device_access __cudashim_da;
  const cusparseStatus_t __s = cudashim::sparse::spsv_check(__h, __op, __alpha, __a, __x, __y, __d, __alg);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  cudashim::sparse::require_real("cusparseSpSV_analysis", __a->value_type, __x->value_type, __y->value_type, __ct);
  __d->analyzed = true;
  __d->new_values = nullptr;
  return CUSPARSE_STATUS_SUCCESS;
}
// y = alpha op(A)^-1 x (x and y may be the same vector); the matrix is read at each solve.
inline cusparseStatus_t cusparseSpSV_solve(cusparseHandle_t __h, cusparseOperation_t __op, const void* __alpha,
                                           cusparseConstSpMatDescr_t __a, cusparseConstDnVecDescr_t __x, cusparseDnVecDescr_t __y,
                                           cudaDataType __ct, cusparseSpSVAlg_t __alg, cusparseSpSVDescr_t __d) { ::cudashim::_Library_access __cudashim_da("cusparse");
  const cusparseStatus_t __s = cudashim::sparse::spsv_check(__h, __op, __alpha, __a, __x, __y, __d, __alg);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  if (!__d->analyzed) return CUSPARSE_STATUS_INVALID_VALUE;
  cudashim::sparse::require_real("cusparseSpSV_solve", __a->value_type, __x->value_type, __y->value_type, __ct);
  using cudashim::sparse::_held;
  using cudashim::sparse::_scalar;
  return cudashim::sparse::_enqueue(__h, [=, __a = _held(__a), __x = _held(__x), __y = _held(__y), __d = _held(__d),
                                          __alpha = _scalar(__h, __alpha, __ct)] {
    cudashim::sparse::triangle __t;
    cudashim::sparse::make_triangle(__a, __op != CUSPARSE_OPERATION_NON_TRANSPOSE, __d->new_values, __d->update, __t);
    const double __al = cudashim::sparse::scalar(__alpha, __ct);
    std::vector<double> __z((size_t)__t.n);
    for (int64_t __i = 0; __i < __t.n; ++__i) __z[__i] = __al * cudashim::lib::load(__x->values, __x->value_type, __i);
    __t.solve(__z.data());
    for (int64_t __i = 0; __i < __t.n; ++__i) cudashim::lib::store(__y->values, __y->value_type, __i, __z[__i]);
    return CUSPARSE_STATUS_SUCCESS;
  });
}
// The next solves use `__values`: A's values (GENERAL) or its diagonal, n elements (DIAGONAL).
inline cusparseStatus_t cusparseSpSV_updateMatrix(cusparseHandle_t __h, cusparseSpSVDescr_t __d, void* __values,
                                                  cusparseSpSVUpdate_t __part) { ::cudashim::_Device_access __cudashim_da;
  if (!__h) return CUSPARSE_STATUS_NOT_INITIALIZED;
  if (!__d || !__values || (unsigned)__part > 1u) return CUSPARSE_STATUS_INVALID_VALUE;
  __d->new_values = __values;
  __d->update = __part;
  return CUSPARSE_STATUS_SUCCESS;
}

// SpSM: op(A) C = alpha op(B) for C, column by column.
inline cusparseStatus_t cusparseSpSM_createDescr(cusparseSpSMDescr_t* __d) { ::cudashim::_Device_access __cudashim_da;
  if (!__d) return CUSPARSE_STATUS_INVALID_VALUE;
  *__d = new cusparseSpSMDescr();
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseSpSM_destroyDescr(cusparseSpSMDescr_t __d) { ::cudashim::_Device_access __cudashim_da;
  delete __d;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseSpSM_bufferSize(cusparseHandle_t __h, cusparseOperation_t __opa, cusparseOperation_t __opb,
                                                const void* __alpha, cusparseConstSpMatDescr_t __a, cusparseConstDnMatDescr_t __b,
                                                cusparseDnMatDescr_t __c, cudaDataType, cusparseSpSMAlg_t __alg, cusparseSpSMDescr_t __d,
                                                size_t* __size) { ::cudashim::_Device_access __cudashim_da;
  const cusparseStatus_t __s = cudashim::sparse::spsm_check(__h, __opa, __opb, __alpha, __a, __b, __c, __d, __alg);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  if (!__size) return CUSPARSE_STATUS_INVALID_VALUE;
  *__size = 0;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseSpSM_analysis(cusparseHandle_t __h, cusparseOperation_t __opa, cusparseOperation_t __opb,
                                              const void* __alpha, cusparseConstSpMatDescr_t __a, cusparseConstDnMatDescr_t __b,
                                              cusparseDnMatDescr_t __c, cudaDataType __ct, cusparseSpSMAlg_t __alg, cusparseSpSMDescr_t __d,
                                              void*) { ::cudashim::_Device_access __cudashim_da;
  const cusparseStatus_t __s = cudashim::sparse::spsm_check(__h, __opa, __opb, __alpha, __a, __b, __c, __d, __alg);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  cudashim::sparse::require_real("cusparseSpSM_analysis", __a->value_type, __b->value_type, __c->value_type, __ct);
  __d->analyzed = true;
  __d->new_values = nullptr;
  return CUSPARSE_STATUS_SUCCESS;
}
// C = alpha op(A)^-1 op(B).
inline cusparseStatus_t cusparseSpSM_solve(cusparseHandle_t __h, cusparseOperation_t __opa, cusparseOperation_t __opb, const void* __alpha,
                                           cusparseConstSpMatDescr_t __a, cusparseConstDnMatDescr_t __b, cusparseDnMatDescr_t __c,
                                           cudaDataType __ct, cusparseSpSMAlg_t __alg, cusparseSpSMDescr_t __d) { ::cudashim::_Library_access __cudashim_da("cusparse");
  const cusparseStatus_t __s = cudashim::sparse::spsm_check(__h, __opa, __opb, __alpha, __a, __b, __c, __d, __alg);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  if (!__d->analyzed) return CUSPARSE_STATUS_INVALID_VALUE;
  cudashim::sparse::require_real("cusparseSpSM_solve", __a->value_type, __b->value_type, __c->value_type, __ct);
  using cudashim::sparse::_held;
  using cudashim::sparse::_scalar;
  return cudashim::sparse::_enqueue(__h, [=, __a = _held(__a), __b = _held(__b), __c = _held(__c), __d = _held(__d),
                                          __alpha = _scalar(__h, __alpha, __ct)] {
    cudashim::sparse::triangle __t;
    cudashim::sparse::make_triangle(__a, __opa != CUSPARSE_OPERATION_NON_TRANSPOSE, __d->new_values, __d->update, __t);
    const bool __tb = __opb != CUSPARSE_OPERATION_NON_TRANSPOSE;
    const double __al = cudashim::sparse::scalar(__alpha, __ct);
    const int64_t __m = __c->rows, __n = __c->cols;
    std::vector<double> __z((size_t)(__m * __n));  // column j at j * m: all of B read before C is written
    for (int64_t __j = 0; __j < __n; ++__j) {
      double* __col = __z.data() + __j * __m;
      for (int64_t __i = 0; __i < __m; ++__i)
        __col[__i] = __al * cudashim::lib::load(__b->values, __b->value_type,
                                                __tb ? cudashim::sparse::dense_at(__b, __j, __i) : cudashim::sparse::dense_at(__b, __i, __j));
      __t.solve(__col);
    }
    for (int64_t __j = 0; __j < __n; ++__j)
      for (int64_t __i = 0; __i < __m; ++__i)
        cudashim::lib::store(__c->values, __c->value_type, cudashim::sparse::dense_at(__c, __i, __j), __z[__j * __m + __i]);
    return CUSPARSE_STATUS_SUCCESS;
  });
}
inline cusparseStatus_t cusparseSpSM_updateMatrix(cusparseHandle_t __h, cusparseSpSMDescr_t __d, void* __values,
                                                  cusparseSpSMUpdate_t __part) { ::cudashim::_Device_access __cudashim_da;
  if (!__h) return CUSPARSE_STATUS_NOT_INITIALIZED;
  if (!__d || !__values || (unsigned)__part > 1u) return CUSPARSE_STATUS_INVALID_VALUE;
  __d->new_values = __values;
  __d->update = __part;
  return CUSPARSE_STATUS_SUCCESS;
}

// ---------------------------------------------------------------- SpGEMM
namespace cudashim::sparse {
// C = op(A) op(B) with A, B and C in CSR, non-transposed (what cuSPARSE computes).
inline cusparseStatus_t spgemm_check(cusparseHandle_t __h, cusparseOperation_t __opa, cusparseOperation_t __opb,
                                     const cusparseSpMatDescr* __a, const cusparseSpMatDescr* __b, const cusparseSpMatDescr* __c,
                                     const void* __descr, int __alg) {
  if (!__h) return CUSPARSE_STATUS_NOT_INITIALIZED;
  if (!__a || !__b || !__c || !__descr || bad_op(__opa) || bad_op(__opb) || __alg < 0 || __alg > 5) return CUSPARSE_STATUS_INVALID_VALUE;
  if (__opa != CUSPARSE_OPERATION_NON_TRANSPOSE || __opb != CUSPARSE_OPERATION_NON_TRANSPOSE || __a->format != CUSPARSE_FORMAT_CSR ||
      __b->format != CUSPARSE_FORMAT_CSR || __c->format != CUSPARSE_FORMAT_CSR || __a->batch > 1 || __b->batch > 1 || __c->batch > 1)
    return CUSPARSE_STATUS_NOT_SUPPORTED;
  if (__a->cols != __b->rows || __c->rows != __a->rows || __c->cols != __b->cols) return CUSPARSE_STATUS_INVALID_VALUE;
  return CUSPARSE_STATUS_SUCCESS;
}
inline int64_t csr_begin(const cusparseSpMatDescr* __m, int64_t __row) {
  return index(__m->ptr, __m->ptr_type, __row) - (__m->base == CUSPARSE_INDEX_BASE_ONE ? 1 : 0);
}
inline int64_t csr_col(const cusparseSpMatDescr* __m, int64_t __e) {
  return index(__m->ind, __m->ind_type, __e) - (__m->base == CUSPARSE_INDEX_BASE_ONE ? 1 : 0);
}
inline int64_t products(const cusparseSpMatDescr* __a, const cusparseSpMatDescr* __b) {
  int64_t __n = 0;
  for (int64_t __i = 0; __i < __a->rows; ++__i)
    for (int64_t __e = csr_begin(__a, __i); __e < csr_begin(__a, __i + 1); ++__e) {
      const int64_t __k = csr_col(__a, __e);
      __n += csr_begin(__b, __k + 1) - csr_begin(__b, __k);
    }
  return __n;
}
// Row by row (Gustavson): `__row(i, cols, acc)` gets row i of A B, its columns sorted, acc[j] the
// value at column j (when `__values`).
template <class _Fn>
void product_rows(const cusparseSpMatDescr* __a, const cusparseSpMatDescr* __b, bool __values, _Fn&& __row) {
  const int64_t __n = __b->cols;
  std::vector<int64_t> __mark((size_t)__n, -1), __cols;
  std::vector<double> __acc(__values ? (size_t)__n : 0);
  for (int64_t __i = 0; __i < __a->rows; ++__i) {
    __cols.clear();
    for (int64_t __ea = csr_begin(__a, __i); __ea < csr_begin(__a, __i + 1); ++__ea) {
      const int64_t __k = csr_col(__a, __ea);
      const double __av = __values ? lib::load(__a->values, __a->value_type, __ea) : 0.0;
      for (int64_t __eb = csr_begin(__b, __k); __eb < csr_begin(__b, __k + 1); ++__eb) {
        const int64_t __j = csr_col(__b, __eb);
        if (__mark[__j] != __i) {
          __mark[__j] = __i;
          __cols.push_back(__j);
          if (__values) __acc[__j] = 0.0;
        }
        if (__values) __acc[__j] += __av * lib::load(__b->values, __b->value_type, __eb);
      }
    }
    std::sort(__cols.begin(), __cols.end());
    __row(__i, __cols, __acc);
  }
}
// The product's structure (and alpha times its values) into the descriptor; C's nnz set.
inline void spgemm_product(const cusparseSpMatDescr* __a, const cusparseSpMatDescr* __b, bool __values, double __alpha,
                           cusparseSpGEMMDescr* __d, cusparseSpMatDescr* __c) {
  __d->off.assign((size_t)__a->rows + 1, 0);
  __d->col.clear();
  __d->val.clear();
  product_rows(__a, __b, __values, [&](int64_t __i, const std::vector<int64_t>& __cols, const std::vector<double>& __acc) {
    for (int64_t __j : __cols) {
      __d->col.push_back(__j);
      if (__values) __d->val.push_back(__alpha * __acc[__j]);
    }
    __d->off[__i + 1] = (int64_t)__d->col.size();
  });
  __c->nnz = (int64_t)__d->col.size();
}
// C's offsets and columns from the descriptor's structure.
inline cusparseStatus_t spgemm_write_structure(const cusparseSpGEMMDescr* __d, cusparseSpMatDescr* __c) {
  const int64_t __nnz = (int64_t)__d->col.size();
  if (__c->nnz != __nnz || !__c->ptr || (__nnz > 0 && (!__c->ind || !__c->values))) return CUSPARSE_STATUS_INVALID_VALUE;
  const int64_t __base = __c->base == CUSPARSE_INDEX_BASE_ONE ? 1 : 0;
  for (size_t __i = 0; __i < __d->off.size(); ++__i) set_index(__c->ptr, __c->ptr_type, (int64_t)__i, __d->off[__i] + __base);
  for (int64_t __e = 0; __e < __nnz; ++__e) set_index(__c->ind, __c->ind_type, __e, __d->col[__e] + __base);
  return CUSPARSE_STATUS_SUCCESS;
}
}  // namespace cudashim::sparse

inline cusparseStatus_t cusparseSpGEMM_createDescr(cusparseSpGEMMDescr_t* __d) { ::cudashim::_Device_access __cudashim_da;
  if (!__d) return CUSPARSE_STATUS_INVALID_VALUE;
  *__d = new cusparseSpGEMMDescr();
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseSpGEMM_destroyDescr(cusparseSpGEMMDescr_t __d) { ::cudashim::_Device_access __cudashim_da;
  delete __d;
  return CUSPARSE_STATUS_SUCCESS;
}
// A null buffer asks for its size; with one, counts the products.
inline cusparseStatus_t cusparseSpGEMM_workEstimation(cusparseHandle_t __h, cusparseOperation_t __opa, cusparseOperation_t __opb,
                                                      const void* __alpha, cusparseConstSpMatDescr_t __a, cusparseConstSpMatDescr_t __b,
                                                      const void* __beta, cusparseSpMatDescr_t __c, cudaDataType __ct,
                                                      cusparseSpGEMMAlg_t __alg, cusparseSpGEMMDescr_t __d, size_t* __size1,
                                                      void* __buffer1) { ::cudashim::_Device_access __cudashim_da;
  const cusparseStatus_t __s = cudashim::sparse::spgemm_check(__h, __opa, __opb, __a, __b, __c, __d, __alg);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  if (!__alpha || !__beta || !__size1) return CUSPARSE_STATUS_INVALID_VALUE;
  cudashim::sparse::require_real("cusparseSpGEMM_workEstimation", __a->value_type, __b->value_type, __c->value_type, __ct);
  if (!__buffer1) {
    *__size1 = cudashim::sparse::kQueryBufferSize;
    return CUSPARSE_STATUS_SUCCESS;
  }
  if (cudashim::sparse::_host_result_in_capture(__h, true)) return CUSPARSE_STATUS_INTERNAL_ERROR;  // sizes the host reads next
  ::cudashim::_Library_access __work("cusparse");
  __d->products = cudashim::sparse::products(__a, __b);
  __d->estimated = true;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseSpGEMM_getNumProducts(cusparseSpGEMMDescr_t __d, int64_t* __n) { ::cudashim::_Device_access __cudashim_da;
  if (!__d || !__n || !__d->estimated) return CUSPARSE_STATUS_INVALID_VALUE;
  *__n = __d->products;
  return CUSPARSE_STATUS_SUCCESS;
}
// ALG2/ALG3's memory estimate: sizes only (a null buffer3 asks for its size).
inline cusparseStatus_t cusparseSpGEMM_estimateMemory(cusparseHandle_t __h, cusparseOperation_t __opa, cusparseOperation_t __opb,
                                                      const void* __alpha, cusparseConstSpMatDescr_t __a, cusparseConstSpMatDescr_t __b,
                                                      const void* __beta, cusparseSpMatDescr_t __c, cudaDataType __ct,
                                                      cusparseSpGEMMAlg_t __alg, cusparseSpGEMMDescr_t __d, float __chunk_fraction,
                                                      size_t* __size3, void* __buffer3, size_t* __size2) { ::cudashim::_Device_access __cudashim_da;
  const cusparseStatus_t __s = cudashim::sparse::spgemm_check(__h, __opa, __opb, __a, __b, __c, __d, __alg);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  if (!__alpha || !__beta || !__size3 || !(__chunk_fraction > 0.0f && __chunk_fraction <= 1.0f)) return CUSPARSE_STATUS_INVALID_VALUE;
  cudashim::sparse::require_real("cusparseSpGEMM_estimateMemory", __a->value_type, __b->value_type, __c->value_type, __ct);
  if (!__buffer3) {
    *__size3 = cudashim::sparse::kQueryBufferSize;
    return CUSPARSE_STATUS_SUCCESS;
  }
  if (!__size2) return CUSPARSE_STATUS_INVALID_VALUE;
  *__size2 = cudashim::sparse::kQueryBufferSize;
  return CUSPARSE_STATUS_SUCCESS;
}
// A null buffer asks for its size; with one, computes alpha op(A) op(B) (sorted columns, every
// structural product) and sets C's nnz.
inline cusparseStatus_t cusparseSpGEMM_compute(cusparseHandle_t __h, cusparseOperation_t __opa, cusparseOperation_t __opb,
                                               const void* __alpha, cusparseConstSpMatDescr_t __a, cusparseConstSpMatDescr_t __b,
                                               const void* __beta, cusparseSpMatDescr_t __c, cudaDataType __ct, cusparseSpGEMMAlg_t __alg,
                                               cusparseSpGEMMDescr_t __d, size_t* __size2, void* __buffer2) { ::cudashim::_Device_access __cudashim_da;
  const cusparseStatus_t __s = cudashim::sparse::spgemm_check(__h, __opa, __opb, __a, __b, __c, __d, __alg);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  if (!__alpha || !__beta || !__size2) return CUSPARSE_STATUS_INVALID_VALUE;
  cudashim::sparse::require_real("cusparseSpGEMM_compute", __a->value_type, __b->value_type, __c->value_type, __ct);
  if (!__buffer2) {
    *__size2 = cudashim::sparse::kQueryBufferSize;
    return CUSPARSE_STATUS_SUCCESS;
  }
  if (cudashim::sparse::_host_result_in_capture(__h, true)) return CUSPARSE_STATUS_INTERNAL_ERROR;  // sizes the host reads next
  ::cudashim::_Library_access __work("cusparse");
  cudashim::sparse::spgemm_product(__a, __b, true, cudashim::sparse::scalar(__alpha, __ct), __d, __c);
  __d->computed = true;
  return CUSPARSE_STATUS_SUCCESS;
}
// C = (the computed product) + beta C: C's offsets, columns and values written (with beta != 0
// its values, allocated for the new nnz, are read first).
inline cusparseStatus_t cusparseSpGEMM_copy(cusparseHandle_t __h, cusparseOperation_t __opa, cusparseOperation_t __opb,
                                            const void* __alpha, cusparseConstSpMatDescr_t __a, cusparseConstSpMatDescr_t __b,
                                            const void* __beta, cusparseSpMatDescr_t __c, cudaDataType __ct, cusparseSpGEMMAlg_t __alg,
                                            cusparseSpGEMMDescr_t __d) { ::cudashim::_Library_access __cudashim_da("cusparse");
  const cusparseStatus_t __s = cudashim::sparse::spgemm_check(__h, __opa, __opb, __a, __b, __c, __d, __alg);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  if (!__alpha || !__beta || !__d->computed) return CUSPARSE_STATUS_INVALID_VALUE;
  cudashim::sparse::require_real("cusparseSpGEMM_copy", __a->value_type, __b->value_type, __c->value_type, __ct);
  // The product is the descriptor's (the GPU's external buffers): read when the work runs.
  using cudashim::sparse::_held;
  using cudashim::sparse::_scalar;
  return cudashim::sparse::_enqueue(__h, [=, __c = _held(__c), __beta = _scalar(__h, __beta, __ct)] {
    const cusparseStatus_t __w = cudashim::sparse::spgemm_write_structure(__d, __c);
    if (__w != CUSPARSE_STATUS_SUCCESS) return __w;
    const double __be = cudashim::sparse::scalar(__beta, __ct);
    for (int64_t __e = 0; __e < __c->nnz; ++__e) {
      double __v = __d->val[__e];
      if (__be != 0.0) __v += __be * cudashim::lib::load(__c->values, __c->value_type, __e);
      cudashim::lib::store(__c->values, __c->value_type, __e, __v);
    }
    return CUSPARSE_STATUS_SUCCESS;
  });
}

// Structure reuse: workEstimation, nnz (C's nnz), copy (C's offsets and columns), then compute
// (C's values on that structure), as often as A's and B's values change.
inline cusparseStatus_t cusparseSpGEMMreuse_workEstimation(cusparseHandle_t __h, cusparseOperation_t __opa, cusparseOperation_t __opb,
                                                           cusparseConstSpMatDescr_t __a, cusparseConstSpMatDescr_t __b,
                                                           cusparseSpMatDescr_t __c, cusparseSpGEMMAlg_t __alg, cusparseSpGEMMDescr_t __d,
                                                           size_t* __size1, void* __buffer1) { ::cudashim::_Device_access __cudashim_da;
  const cusparseStatus_t __s = cudashim::sparse::spgemm_check(__h, __opa, __opb, __a, __b, __c, __d, __alg);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  if (!__size1) return CUSPARSE_STATUS_INVALID_VALUE;
  if (!__buffer1) {
    *__size1 = cudashim::sparse::kQueryBufferSize;
    return CUSPARSE_STATUS_SUCCESS;
  }
  if (cudashim::sparse::_host_result_in_capture(__h, true)) return CUSPARSE_STATUS_INTERNAL_ERROR;  // sizes the host reads next
  ::cudashim::_Library_access __work("cusparse");
  __d->products = cudashim::sparse::products(__a, __b);
  __d->estimated = true;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseSpGEMMreuse_nnz(cusparseHandle_t __h, cusparseOperation_t __opa, cusparseOperation_t __opb,
                                                cusparseConstSpMatDescr_t __a, cusparseConstSpMatDescr_t __b, cusparseSpMatDescr_t __c,
                                                cusparseSpGEMMAlg_t __alg, cusparseSpGEMMDescr_t __d, size_t* __size2, void* __buffer2,
                                                size_t* __size3, void* __buffer3, size_t* __size4, void* __buffer4) { ::cudashim::_Device_access __cudashim_da;
  const cusparseStatus_t __s = cudashim::sparse::spgemm_check(__h, __opa, __opb, __a, __b, __c, __d, __alg);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  if (!__size2 || !__size3 || !__size4) return CUSPARSE_STATUS_INVALID_VALUE;
  if (!__buffer2 || !__buffer3 || !__buffer4) {
    *__size2 = *__size3 = *__size4 = cudashim::sparse::kQueryBufferSize;
    return CUSPARSE_STATUS_SUCCESS;
  }
  if (cudashim::sparse::_host_result_in_capture(__h, true)) return CUSPARSE_STATUS_INTERNAL_ERROR;  // sizes the host reads next
  ::cudashim::_Library_access __work("cusparse");
  cudashim::sparse::spgemm_product(__a, __b, false, 0.0, __d, __c);
  __d->structured = true;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseSpGEMMreuse_copy(cusparseHandle_t __h, cusparseOperation_t __opa, cusparseOperation_t __opb,
                                                 cusparseConstSpMatDescr_t __a, cusparseConstSpMatDescr_t __b, cusparseSpMatDescr_t __c,
                                                 cusparseSpGEMMAlg_t __alg, cusparseSpGEMMDescr_t __d, size_t* __size5,
                                                 void* __buffer5) { ::cudashim::_Device_access __cudashim_da;
  const cusparseStatus_t __s = cudashim::sparse::spgemm_check(__h, __opa, __opb, __a, __b, __c, __d, __alg);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  if (!__size5 || !__d->structured) return CUSPARSE_STATUS_INVALID_VALUE;
  if (!__buffer5) {
    *__size5 = cudashim::sparse::kQueryBufferSize;
    return CUSPARSE_STATUS_SUCCESS;
  }
  ::cudashim::_Library_access __work("cusparse");
  using cudashim::sparse::_held;
  return cudashim::sparse::_enqueue(__h, [__d, __c = _held(__c)] { return cudashim::sparse::spgemm_write_structure(__d, __c); });
}
// C = alpha op(A) op(B) + beta C on C's structure (beta == 0: C's values not read).
inline cusparseStatus_t cusparseSpGEMMreuse_compute(cusparseHandle_t __h, cusparseOperation_t __opa, cusparseOperation_t __opb,
                                                    const void* __alpha, cusparseConstSpMatDescr_t __a, cusparseConstSpMatDescr_t __b,
                                                    const void* __beta, cusparseSpMatDescr_t __c, cudaDataType __ct,
                                                    cusparseSpGEMMAlg_t __alg, cusparseSpGEMMDescr_t __d) { ::cudashim::_Library_access __cudashim_da("cusparse");
  const cusparseStatus_t __s = cudashim::sparse::spgemm_check(__h, __opa, __opb, __a, __b, __c, __d, __alg);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  if (!__alpha || !__beta || !__d->structured || !__c->ptr || (__c->nnz > 0 && (!__c->ind || !__c->values)))
    return CUSPARSE_STATUS_INVALID_VALUE;
  cudashim::sparse::require_real("cusparseSpGEMMreuse_compute", __a->value_type, __b->value_type, __c->value_type, __ct);
  using cudashim::sparse::_held;
  using cudashim::sparse::_scalar;
  return cudashim::sparse::_enqueue(__h, [=, __a = _held(__a), __b = _held(__b), __c = _held(__c),
                                          __alpha = _scalar(__h, __alpha, __ct), __beta = _scalar(__h, __beta, __ct)] {
    const double __al = cudashim::sparse::scalar(__alpha, __ct), __be = cudashim::sparse::scalar(__beta, __ct);
    std::vector<char> __in_row((size_t)__c->cols, 0);
    cudashim::sparse::product_rows(__a, __b, true, [&](int64_t __i, const std::vector<int64_t>& __cols, const std::vector<double>& __acc) {
      for (int64_t __j : __cols) __in_row[__j] = 1;
      for (int64_t __e = cudashim::sparse::csr_begin(__c, __i); __e < cudashim::sparse::csr_begin(__c, __i + 1); ++__e) {
        const int64_t __j = cudashim::sparse::csr_col(__c, __e);
        double __v = __in_row[__j] ? __al * __acc[__j] : 0.0;
        if (__be != 0.0) __v += __be * cudashim::lib::load(__c->values, __c->value_type, __e);
        cudashim::lib::store(__c->values, __c->value_type, __e, __v);
      }
      for (int64_t __j : __cols) __in_row[__j] = 0;
    });
    return CUSPARSE_STATUS_SUCCESS;
  });
}

// ---------------------------------------------------------------- SDDMM
namespace cudashim::sparse {
inline cusparseStatus_t sddmm_check(cusparseHandle_t __h, cusparseOperation_t __opa, cusparseOperation_t __opb, const void* __alpha,
                                    const cusparseDnMatDescr* __a, const cusparseDnMatDescr* __b, const void* __beta,
                                    const cusparseSpMatDescr* __c, int __alg) {
  if (!__h) return CUSPARSE_STATUS_NOT_INITIALIZED;
  if (!__alpha || !__beta || !__a || !__b || !__c || bad_op(__opa) || bad_op(__opb) || __alg != 0) return CUSPARSE_STATUS_INVALID_VALUE;
  const bool __ta = __opa != CUSPARSE_OPERATION_NON_TRANSPOSE, __tb = __opb != CUSPARSE_OPERATION_NON_TRANSPOSE;
  const int64_t __m = __ta ? __a->cols : __a->rows, __k = __ta ? __a->rows : __a->cols;
  const int64_t __bk = __tb ? __b->cols : __b->rows, __n = __tb ? __b->rows : __b->cols;
  if (__bk != __k || __c->rows != __m || __c->cols != __n) return CUSPARSE_STATUS_INVALID_VALUE;
  if (__c->format != CUSPARSE_FORMAT_CSR) return CUSPARSE_STATUS_NOT_SUPPORTED;
  if (batch_count(__c->batch, __a->batch, __b->batch) < 0) return CUSPARSE_STATUS_INVALID_VALUE;
  return CUSPARSE_STATUS_SUCCESS;
}
}  // namespace cudashim::sparse

inline cusparseStatus_t cusparseSDDMM_bufferSize(cusparseHandle_t __h, cusparseOperation_t __opa, cusparseOperation_t __opb,
                                                 const void* __alpha, cusparseConstDnMatDescr_t __a, cusparseConstDnMatDescr_t __b,
                                                 const void* __beta, cusparseSpMatDescr_t __c, cudaDataType, cusparseSDDMMAlg_t __alg,
                                                 size_t* __size) { ::cudashim::_Device_access __cudashim_da;
  const cusparseStatus_t __s = cudashim::sparse::sddmm_check(__h, __opa, __opb, __alpha, __a, __b, __beta, __c, __alg);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  if (!__size) return CUSPARSE_STATUS_INVALID_VALUE;
  *__size = 0;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseSDDMM_preprocess(cusparseHandle_t __h, cusparseOperation_t __opa, cusparseOperation_t __opb,
                                                 const void* __alpha, cusparseConstDnMatDescr_t __a, cusparseConstDnMatDescr_t __b,
                                                 const void* __beta, cusparseSpMatDescr_t __c, cudaDataType, cusparseSDDMMAlg_t __alg,
                                                 void*) { ::cudashim::_Device_access __cudashim_da;
  return cudashim::sparse::sddmm_check(__h, __opa, __opb, __alpha, __a, __b, __beta, __c, __alg);
}
// C = alpha (op(A) op(B)) at C's stored entries + beta C (beta == 0: C's values not read); a
// strided batch of C, with A and B batched alike or shared.
inline cusparseStatus_t cusparseSDDMM(cusparseHandle_t __h, cusparseOperation_t __opa, cusparseOperation_t __opb, const void* __alpha,
                                      cusparseConstDnMatDescr_t __a, cusparseConstDnMatDescr_t __b, const void* __beta,
                                      cusparseSpMatDescr_t __c, cudaDataType __ct, cusparseSDDMMAlg_t __alg, void*) { ::cudashim::_Library_access __cudashim_da("cusparse");
  const cusparseStatus_t __s = cudashim::sparse::sddmm_check(__h, __opa, __opb, __alpha, __a, __b, __beta, __c, __alg);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  cudashim::sparse::require_real("cusparseSDDMM", __a->value_type, __b->value_type, __c->value_type, __ct);
  using cudashim::sparse::_held;
  using cudashim::sparse::_scalar;
  return cudashim::sparse::_enqueue(__h, [=, __a = _held(__a), __b = _held(__b), __c = _held(__c),
                                          __alpha = _scalar(__h, __alpha, __ct), __beta = _scalar(__h, __beta, __ct)] {
    const bool __ta = __opa != CUSPARSE_OPERATION_NON_TRANSPOSE, __tb = __opb != CUSPARSE_OPERATION_NON_TRANSPOSE;
    const int64_t __k = __ta ? __a->rows : __a->cols;
    const double __al = cudashim::sparse::scalar(__alpha, __ct), __be = cudashim::sparse::scalar(__beta, __ct);
    for (int __i = 0; __i < __c->batch; ++__i) {
      const cusparseDnMatDescr __ai = cudashim::sparse::batch_view(__a, __i), __bi = cudashim::sparse::batch_view(__b, __i);
      const cusparseSpMatDescr __ci = cudashim::sparse::batch_view(__c, __i);
      cudashim::sparse::for_each_stored(&__ci, [&](int64_t __r, int64_t __cc, int64_t __e) {
        double __dot = 0.0;
        if (__al != 0.0)
          for (int64_t __l = 0; __l < __k; ++__l)
            __dot += cudashim::lib::load(__ai.values, __ai.value_type,
                                         __ta ? cudashim::sparse::dense_at(&__ai, __l, __r) : cudashim::sparse::dense_at(&__ai, __r, __l)) *
                     cudashim::lib::load(__bi.values, __bi.value_type,
                                         __tb ? cudashim::sparse::dense_at(&__bi, __cc, __l) : cudashim::sparse::dense_at(&__bi, __l, __cc));
        double __v = __al * __dot;
        if (__be != 0.0) __v += __be * cudashim::lib::load(__ci.values, __ci.value_type, __e);
        cudashim::lib::store(__ci.values, __ci.value_type, __e, __v);
      });
    }
    return CUSPARSE_STATUS_SUCCESS;
  });
}

// ---------------------------------------------------------------- legacy: ILU(0) on CSR
namespace cudashim::sparse {
inline cusparseStatus_t ilu_check(cusparseHandle_t __h, int __m, int __nnz, const cusparseMatDescr* __d, const void* __val,
                                  const int* __rowptr, const int* __colind, const csrilu02Info* __info) {
  if (!__h) return CUSPARSE_STATUS_NOT_INITIALIZED;
  if (__m < 0 || __nnz < 0 || !__d || !__info || (__m > 0 && !__rowptr) || (__nnz > 0 && (!__val || !__colind)))
    return CUSPARSE_STATUS_INVALID_VALUE;
  if (__d->type != CUSPARSE_MATRIX_TYPE_GENERAL) return CUSPARSE_STATUS_MATRIX_TYPE_NOT_SUPPORTED;
  return CUSPARSE_STATUS_SUCCESS;
}
// The first row whose diagonal is not stored (-1: none).
inline int missing_diagonal(int __m, const cusparseMatDescr* __d, const int* __rowptr, const int* __colind) {
  const int __b = __d->base == CUSPARSE_INDEX_BASE_ONE ? 1 : 0;
  for (int __i = 0; __i < __m; ++__i) {
    bool __found = false;
    for (int __e = __rowptr[__i] - __b; __e < __rowptr[__i + 1] - __b && !__found; ++__e) __found = __colind[__e] - __b == __i;
    if (!__found) return __i;
  }
  return -1;
}
// In place, in the element type as on the GPU: L (unit diagonal, below) and U (on and above) with
// L U = A on A's pattern (row by row, each row's lower entries in column order; cuSPARSE wants
// sorted columns, unsorted ones give the same factors here).
template <class _Tp>
void ilu0(int __m, const cusparseMatDescr* __d, _Tp* __val, const int* __rowptr, const int* __colind, csrilu02Info* __info) {
  const int __b = __d->base == CUSPARSE_INDEX_BASE_ONE ? 1 : 0;
  std::vector<int> __pos((size_t)__m, -1), __diag((size_t)__m, -1);
  std::vector<std::pair<int, int>> __lower;  // (column, entry) left of the diagonal
  int __zero = __info->structural_zero;
  for (int __i = 0; __i < __m; ++__i) {
    const int __lo = __rowptr[__i] - __b, __hi = __rowptr[__i + 1] - __b;
    __lower.clear();
    for (int __e = __lo; __e < __hi; ++__e) {
      const int __c = __colind[__e] - __b;
      __pos[__c] = __e;
      if (__c < __i) __lower.emplace_back(__c, __e);
    }
    std::sort(__lower.begin(), __lower.end());
    for (const auto& [__k, __e] : __lower) {
      if (__diag[__k] < 0) continue;  // a structural zero pivot: reported, the entry left as it is
      const _Tp __lik = __val[__e] / __val[__diag[__k]];
      __val[__e] = __lik;
      for (int __f = __rowptr[__k] - __b; __f < __rowptr[__k + 1] - __b; ++__f) {
        const int __j = __colind[__f] - __b;
        if (__j > __k && __pos[__j] >= 0) __val[__pos[__j]] -= __lik * __val[__f];
      }
    }
    if (__pos[__i] >= 0) {
      __diag[__i] = __pos[__i];
      _Tp& __u = __val[__diag[__i]];
      if (__info->boost && std::fabs((double)__u) <= __info->tol) __u = (_Tp)__info->boost_val;
      if (__u == _Tp(0) && (__zero < 0 || __i < __zero)) __zero = __i;
    }
    for (int __e = __lo; __e < __hi; ++__e) __pos[__colind[__e] - __b] = -1;
  }
  __info->zero = __zero;
}
}  // namespace cudashim::sparse

inline cusparseStatus_t cusparseCreateCsrilu02Info(csrilu02Info_t* __info) { ::cudashim::_Device_access __cudashim_da;
  if (!__info) return CUSPARSE_STATUS_INVALID_VALUE;
  *__info = new csrilu02Info();
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseDestroyCsrilu02Info(csrilu02Info_t __info) { ::cudashim::_Device_access __cudashim_da;
  delete __info;
  return CUSPARSE_STATUS_SUCCESS;
}
// The first zero pivot, structural (analysis) or numerical (factorization), in the matrix's base:
// CUSPARSE_STATUS_ZERO_PIVOT, or -1 and success when there is none.
inline cusparseStatus_t cusparseXcsrilu02_zeroPivot(cusparseHandle_t __h, csrilu02Info_t __info, int* __position) { ::cudashim::_Device_access __cudashim_da;
  if (!__h) return CUSPARSE_STATUS_NOT_INITIALIZED;
  if (!__info || !__position) return CUSPARSE_STATUS_INVALID_VALUE;
  if (cudashim::sparse::_host_result_in_capture(__h, __h->pointer_mode == CUSPARSE_POINTER_MODE_HOST)) return CUSPARSE_STATUS_INTERNAL_ERROR;
  // Captured (device pointer mode), the position is written when the graph runs.
  return cudashim::sparse::_enqueue(__h, [__info, __position] {
    *__position = __info->zero >= 0 ? __info->zero + __info->base : -1;
    return __info->zero >= 0 ? CUSPARSE_STATUS_ZERO_PIVOT : CUSPARSE_STATUS_SUCCESS;
  });
}
#define __CUDASHIM_CSRILU02(_P, _Tp)                                                                                               \
  inline cusparseStatus_t cusparse##_P##csrilu02_numericBoost(cusparseHandle_t __h, csrilu02Info_t __info, int __enable, double* __tol, \
                                                              _Tp* __boost) { ::cudashim::_Device_access __cudashim_da;              \
    if (!__h) return CUSPARSE_STATUS_NOT_INITIALIZED;                                                                              \
    if (!__info || (__enable && (!__tol || !__boost))) return CUSPARSE_STATUS_INVALID_VALUE;                                       \
    __info->boost = __enable != 0;                                                                                                 \
    if (__enable) {                                                                                                                \
      __info->tol = *__tol;                                                                                                        \
      __info->boost_val = (double)*__boost;                                                                                        \
    }                                                                                                                              \
    return CUSPARSE_STATUS_SUCCESS;                                                                                                \
  }                                                                                                                                \
  inline cusparseStatus_t cusparse##_P##csrilu02_bufferSize(cusparseHandle_t __h, int __m, int __nnz, const cusparseMatDescr_t __d, \
                                                            _Tp* __val, const int* __rowptr, const int* __colind,                  \
                                                            csrilu02Info_t __info, int* __size) { ::cudashim::_Device_access __cudashim_da; \
    const cusparseStatus_t __s = cudashim::sparse::ilu_check(__h, __m, __nnz, __d, __val, __rowptr, __colind, __info);           \
    if (__s != CUSPARSE_STATUS_SUCCESS) return __s;                                                                                \
    if (!__size) return CUSPARSE_STATUS_INVALID_VALUE;                                                                             \
    *__size = 0;                                                                                                                   \
    return CUSPARSE_STATUS_SUCCESS;                                                                                                \
  }                                                                                                                                \
  inline cusparseStatus_t cusparse##_P##csrilu02_bufferSizeExt(cusparseHandle_t __h, int __m, int __nnz, const cusparseMatDescr_t __d, \
                                                               _Tp* __val, const int* __rowptr, const int* __colind,               \
                                                               csrilu02Info_t __info, size_t* __size) { ::cudashim::_Device_access __cudashim_da; \
    const cusparseStatus_t __s = cudashim::sparse::ilu_check(__h, __m, __nnz, __d, __val, __rowptr, __colind, __info);           \
    if (__s != CUSPARSE_STATUS_SUCCESS) return __s;                                                                                \
    if (!__size) return CUSPARSE_STATUS_INVALID_VALUE;                                                                             \
    *__size = 0;                                                                                                                   \
    return CUSPARSE_STATUS_SUCCESS;                                                                                                \
  }                                                                                                                                \
  inline cusparseStatus_t cusparse##_P##csrilu02_analysis(cusparseHandle_t __h, int __m, int __nnz, const cusparseMatDescr_t __d,  \
                                                          const _Tp* __val, const int* __rowptr, const int* __colind,              \
                                                          csrilu02Info_t __info, cusparseSolvePolicy_t, void*) { ::cudashim::_Library_access __cudashim_da("cusparse"); \
    const cusparseStatus_t __s = cudashim::sparse::ilu_check(__h, __m, __nnz, __d, __val, __rowptr, __colind, __info);           \
    if (__s != CUSPARSE_STATUS_SUCCESS) return __s;                                                                                \
    __info->base = __d->base == CUSPARSE_INDEX_BASE_ONE ? 1 : 0;                                                                   \
    __info->analyzed = true; /* bookkeeping of the call; the pivot search is device work */                                        \
    return cudashim::sparse::_enqueue(__h, [=, __d = cudashim::sparse::_held(__d)] {                                               \
      __info->structural_zero = __info->zero = cudashim::sparse::missing_diagonal(__m, __d, __rowptr, __colind);                   \
      return CUSPARSE_STATUS_SUCCESS;                                                                                              \
    });                                                                                                                            \
  }                                                                                                                                \
  inline cusparseStatus_t cusparse##_P##csrilu02(cusparseHandle_t __h, int __m, int __nnz, const cusparseMatDescr_t __d, _Tp* __val, \
                                                 const int* __rowptr, const int* __colind, csrilu02Info_t __info, cusparseSolvePolicy_t, \
                                                 void*) { ::cudashim::_Library_access __cudashim_da("cusparse");                     \
    const cusparseStatus_t __s = cudashim::sparse::ilu_check(__h, __m, __nnz, __d, __val, __rowptr, __colind, __info);           \
    if (__s != CUSPARSE_STATUS_SUCCESS) return __s;                                                                                \
    if (!__info->analyzed) return CUSPARSE_STATUS_INVALID_VALUE;                                                                   \
    return cudashim::sparse::_enqueue(__h, [=, __d = cudashim::sparse::_held(__d)] {                                               \
      cudashim::sparse::ilu0(__m, __d, __val, __rowptr, __colind, __info);                                                         \
      return CUSPARSE_STATUS_SUCCESS;                                                                                              \
    });                                                                                                                            \
  }
__CUDASHIM_CSRILU02(S, float)
__CUDASHIM_CSRILU02(D, double)
#undef __CUDASHIM_CSRILU02

// ---------------------------------------------------------------- legacy: permutations and sorts
inline cusparseStatus_t cusparseCreateIdentityPermutation(cusparseHandle_t __h, int __n, int* __p) { ::cudashim::_Library_access __cudashim_da("cusparse");
  if (!__h) return CUSPARSE_STATUS_NOT_INITIALIZED;
  if (__n < 0 || (__n > 0 && !__p)) return CUSPARSE_STATUS_INVALID_VALUE;
  return cudashim::sparse::_enqueue(__h, [=] {
    for (int __i = 0; __i < __n; ++__i) __p[__i] = __i;
    return CUSPARSE_STATUS_SUCCESS;
  });
}
namespace cudashim::sparse {
inline cusparseStatus_t sort_check(cusparseHandle_t __h, int __m, int __n, int __nnz, const int* __a, const int* __b) {
  if (!__h) return CUSPARSE_STATUS_NOT_INITIALIZED;
  if (__m < 0 || __n < 0 || __nnz < 0 || !__a || (__nnz > 0 && !__b)) return CUSPARSE_STATUS_INVALID_VALUE;
  return CUSPARSE_STATUS_SUCCESS;
}
// Sorts each segment of `__ind` (CSR rows, CSC columns) ascending, permuting `__perm` alike.
inline void sort_segments(int __outer, const cusparseMatDescr* __d, const int* __ptr, int* __ind, int* __perm) {
  const int __b = __d && __d->base == CUSPARSE_INDEX_BASE_ONE ? 1 : 0;
  std::vector<std::pair<int, int>> __seg;
  for (int __o = 0; __o < __outer; ++__o) {
    const int __lo = __ptr[__o] - __b, __hi = __ptr[__o + 1] - __b;
    __seg.clear();
    for (int __e = __lo; __e < __hi; ++__e) __seg.emplace_back(__ind[__e], __perm ? __perm[__e] : 0);
    std::stable_sort(__seg.begin(), __seg.end(), [](const auto& __x, const auto& __y) { return __x.first < __y.first; });
    for (int __e = __lo; __e < __hi; ++__e) {
      __ind[__e] = __seg[__e - __lo].first;
      if (__perm) __perm[__e] = __seg[__e - __lo].second;
    }
  }
}
// Sorts COO entries by (`__major`, `__minor`), permuting the other array and `__perm` alike.
inline void sort_coo(int __nnz, int* __major, int* __minor, int* __perm) {
  std::vector<int> __order((size_t)__nnz);
  std::iota(__order.begin(), __order.end(), 0);
  std::stable_sort(__order.begin(), __order.end(), [&](int __x, int __y) {
    return __major[__x] != __major[__y] ? __major[__x] < __major[__y] : __minor[__x] < __minor[__y];
  });
  auto __apply = [&](int* __a) {
    if (!__a) return;
    std::vector<int> __t(__a, __a + __nnz);
    for (int __e = 0; __e < __nnz; ++__e) __a[__e] = __t[__order[__e]];
  };
  __apply(__major);
  __apply(__minor);
  __apply(__perm);
}
}  // namespace cudashim::sparse
inline cusparseStatus_t cusparseXcsrsort_bufferSizeExt(cusparseHandle_t __h, int __m, int __n, int __nnz, const int* __rowptr,
                                                       const int* __colind, size_t* __size) { ::cudashim::_Device_access __cudashim_da;
  const cusparseStatus_t __s = cudashim::sparse::sort_check(__h, __m, __n, __nnz, __rowptr, __colind);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  if (!__size) return CUSPARSE_STATUS_INVALID_VALUE;
  *__size = 0;
  return CUSPARSE_STATUS_SUCCESS;
}
// Sorts the column indices of each row; P (may be null) is permuted alike.
inline cusparseStatus_t cusparseXcsrsort(cusparseHandle_t __h, int __m, int __n, int __nnz, const cusparseMatDescr_t __d,
                                         const int* __rowptr, int* __colind, int* __p, void*) { ::cudashim::_Library_access __cudashim_da("cusparse");
  const cusparseStatus_t __s = cudashim::sparse::sort_check(__h, __m, __n, __nnz, __rowptr, __colind);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  if (!__d) return CUSPARSE_STATUS_INVALID_VALUE;
  return cudashim::sparse::_enqueue(__h, [=, __d = cudashim::sparse::_held(__d)] {
    cudashim::sparse::sort_segments(__m, __d, __rowptr, __colind, __p);
    return CUSPARSE_STATUS_SUCCESS;
  });
}
inline cusparseStatus_t cusparseXcscsort_bufferSizeExt(cusparseHandle_t __h, int __m, int __n, int __nnz, const int* __colptr,
                                                       const int* __rowind, size_t* __size) { ::cudashim::_Device_access __cudashim_da;
  const cusparseStatus_t __s = cudashim::sparse::sort_check(__h, __m, __n, __nnz, __colptr, __rowind);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  if (!__size) return CUSPARSE_STATUS_INVALID_VALUE;
  *__size = 0;
  return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseXcscsort(cusparseHandle_t __h, int __m, int __n, int __nnz, const cusparseMatDescr_t __d,
                                         const int* __colptr, int* __rowind, int* __p, void*) { ::cudashim::_Library_access __cudashim_da("cusparse");
  const cusparseStatus_t __s = cudashim::sparse::sort_check(__h, __m, __n, __nnz, __colptr, __rowind);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  if (!__d) return CUSPARSE_STATUS_INVALID_VALUE;
  return cudashim::sparse::_enqueue(__h, [=, __d = cudashim::sparse::_held(__d)] {
    cudashim::sparse::sort_segments(__n, __d, __colptr, __rowind, __p);
    return CUSPARSE_STATUS_SUCCESS;
  });
}
inline cusparseStatus_t cusparseXcoosort_bufferSizeExt(cusparseHandle_t __h, int __m, int __n, int __nnz, const int* __rows,
                                                       const int* __cols, size_t* __size) { ::cudashim::_Device_access __cudashim_da;
  if (!__h) return CUSPARSE_STATUS_NOT_INITIALIZED;
  if (__m < 0 || __n < 0 || __nnz < 0 || (__nnz > 0 && (!__rows || !__cols)) || !__size) return CUSPARSE_STATUS_INVALID_VALUE;
  *__size = 0;
  return CUSPARSE_STATUS_SUCCESS;
}
// COO entries sorted by row (then column), or by column (then row); P permuted alike.
inline cusparseStatus_t cusparseXcoosortByRow(cusparseHandle_t __h, int __m, int __n, int __nnz, int* __rows, int* __cols, int* __p,
                                              void*) { ::cudashim::_Library_access __cudashim_da("cusparse");
  if (!__h) return CUSPARSE_STATUS_NOT_INITIALIZED;
  if (__m < 0 || __n < 0 || __nnz < 0 || (__nnz > 0 && (!__rows || !__cols))) return CUSPARSE_STATUS_INVALID_VALUE;
  return cudashim::sparse::_enqueue(__h, [=] {
    cudashim::sparse::sort_coo(__nnz, __rows, __cols, __p);
    return CUSPARSE_STATUS_SUCCESS;
  });
}
inline cusparseStatus_t cusparseXcoosortByColumn(cusparseHandle_t __h, int __m, int __n, int __nnz, int* __rows, int* __cols, int* __p,
                                                 void*) { ::cudashim::_Library_access __cudashim_da("cusparse");
  if (!__h) return CUSPARSE_STATUS_NOT_INITIALIZED;
  if (__m < 0 || __n < 0 || __nnz < 0 || (__nnz > 0 && (!__rows || !__cols))) return CUSPARSE_STATUS_INVALID_VALUE;
  return cudashim::sparse::_enqueue(__h, [=] {
    cudashim::sparse::sort_coo(__nnz, __cols, __rows, __p);
    return CUSPARSE_STATUS_SUCCESS;
  });
}

// ---------------------------------------------------------------- legacy: CSR to CSC
namespace cudashim::sparse {
inline cusparseStatus_t csr2csc_check(cusparseHandle_t __h, int __m, int __n, int __nnz, const void* __csr_val, const int* __rowptr,
                                      const int* __colind, const void* __csc_val, const int* __colptr, const int* __rowind,
                                      cusparseAction_t __act, cusparseIndexBase_t __b, int __alg) {
  if (!__h) return CUSPARSE_STATUS_NOT_INITIALIZED;
  if (__m < 0 || __n < 0 || __nnz < 0 || (unsigned)__act > 1u || bad_base(__b) || __alg != CUSPARSE_CSR2CSC_ALG1 || !__rowptr || !__colptr ||
      (__nnz > 0 && (!__colind || !__rowind || (__act == CUSPARSE_ACTION_NUMERIC && (!__csr_val || !__csc_val)))))
    return CUSPARSE_STATUS_INVALID_VALUE;
  return CUSPARSE_STATUS_SUCCESS;
}
}  // namespace cudashim::sparse
inline cusparseStatus_t cusparseCsr2cscEx2_bufferSize(cusparseHandle_t __h, int __m, int __n, int __nnz, const void* __csr_val,
                                                      const int* __rowptr, const int* __colind, void* __csc_val, int* __colptr,
                                                      int* __rowind, cudaDataType, cusparseAction_t __act, cusparseIndexBase_t __b,
                                                      cusparseCsr2CscAlg_t __alg, size_t* __size) { ::cudashim::_Device_access __cudashim_da;
  const cusparseStatus_t __s = cudashim::sparse::csr2csc_check(__h, __m, __n, __nnz, __csr_val, __rowptr, __colind, __csc_val, __colptr,
                                                               __rowind, __act, __b, __alg);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  if (!__size) return CUSPARSE_STATUS_INVALID_VALUE;
  *__size = 0;
  return CUSPARSE_STATUS_SUCCESS;
}
// The transpose's layout: column offsets, row indices ascending in each column, and (NUMERIC)
// the values moved with them, bytes as they are (any value type of a known size).
inline cusparseStatus_t cusparseCsr2cscEx2(cusparseHandle_t __h, int __m, int __n, int __nnz, const void* __csr_val, const int* __rowptr,
                                           const int* __colind, void* __csc_val, int* __colptr, int* __rowind, cudaDataType __vt,
                                           cusparseAction_t __act, cusparseIndexBase_t __b, cusparseCsr2CscAlg_t __alg, void*) { ::cudashim::_Library_access __cudashim_da("cusparse");
  const cusparseStatus_t __s = cudashim::sparse::csr2csc_check(__h, __m, __n, __nnz, __csr_val, __rowptr, __colind, __csc_val, __colptr,
                                                               __rowind, __act, __b, __alg);
  if (__s != CUSPARSE_STATUS_SUCCESS) return __s;
  const size_t __vs = cudashim::sparse::value_size(__vt);
  if (__act == CUSPARSE_ACTION_NUMERIC && __vs == 0) {
    char __msg[128];
    snprintf(__msg, sizeof __msg, "cusparseCsr2cscEx2 with values %s", cudashim::lib::type_name(__vt));
    cudashim::lib::needs_gpu(__msg);
  }
  return cudashim::sparse::_enqueue(__h, [=] {
    const int __bs = __b == CUSPARSE_INDEX_BASE_ONE ? 1 : 0;
    std::vector<int> __next((size_t)__n + 1, 0);
    for (int __e = 0; __e < __nnz; ++__e) ++__next[__colind[__e] - __bs + 1];
    for (int __j = 0; __j < __n; ++__j) __next[__j + 1] += __next[__j];
    for (int __j = 0; __j <= __n; ++__j) __colptr[__j] = __next[__j] + __bs;
    for (int __i = 0; __i < __m; ++__i)
      for (int __e = __rowptr[__i] - __bs; __e < __rowptr[__i + 1] - __bs; ++__e) {
        const int __p = __next[__colind[__e] - __bs]++;
        __rowind[__p] = __i + __bs;
        if (__act == CUSPARSE_ACTION_NUMERIC)
          memcpy(static_cast<char*>(__csc_val) + (size_t)__p * __vs, static_cast<const char*>(__csr_val) + (size_t)__e * __vs, __vs);
      }
    return CUSPARSE_STATUS_SUCCESS;
  });
}
