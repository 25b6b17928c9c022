// cudashim: a host subset of cuBLASLt's matmul API (CUDA 12 signatures), computed on the CPU.
//
// D = epilogue(alpha op(A) op(B) + beta C [+ bias]) for real float, half, bfloat16 and double
// matrices in column or row order, transposed or not, strided batches, host or device pointer
// mode, int8 products into int32 (CUBLAS_COMPUTE_32I), and the epilogues DEFAULT, RELU, BIAS,
// RELU_BIAS, GELU, GELU_BIAS and GELU_AUX(_BIAS) (GELU is the tanh form cuBLASLt computes; AUX
// stores the input of the GELU). The heuristic offers one algorithm that needs no workspace.
// What the subset does not compute (fp8 types, int8 results, COL32 and the other tiled orders,
// the gradient epilogues, alpha vectors) stops the run with a `needs_gpu` report naming it; a
// function not declared here fails to compile and is reported the same way
// (validators/cpu/diagnostics.py). Work runs on the call's stream: at once, or as a node of
// that stream's capture (cublas_api.h `_enqueue`).
#pragma once
#include <cublas_api.h>

#include <cstdint>
#include <cstdio>

#define CUBLASLT_VERSION CUBLAS_VERSION

typedef struct cudashim_cublasLtContext* cublasLtHandle_t;

typedef struct {
  uint64_t data[8];
} cublasLtMatmulAlgo_t;

typedef enum {
  CUBLASLT_ORDER_COL = 0,
  CUBLASLT_ORDER_ROW = 1,
  CUBLASLT_ORDER_COL32 = 2,
  CUBLASLT_ORDER_COL4_4R2_8C = 3,
  CUBLASLT_ORDER_COL32_2R_4R4 = 4,
} cublasLtOrder_t;

typedef enum {
  CUBLASLT_POINTER_MODE_HOST = 0,
  CUBLASLT_POINTER_MODE_DEVICE = 1,
  CUBLASLT_POINTER_MODE_DEVICE_VECTOR = 2,
  CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO = 3,
  CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST = 4,
} cublasLtPointerMode_t;

typedef enum {
  CUBLASLT_EPILOGUE_DEFAULT = 1,
  CUBLASLT_EPILOGUE_RELU = 2,
  CUBLASLT_EPILOGUE_RELU_AUX = 2 | 128,
  CUBLASLT_EPILOGUE_BIAS = 4,
  CUBLASLT_EPILOGUE_RELU_BIAS = 2 | 4,
  CUBLASLT_EPILOGUE_RELU_AUX_BIAS = 2 | 4 | 128,
  CUBLASLT_EPILOGUE_DRELU = 8 | 128,
  CUBLASLT_EPILOGUE_DRELU_BGRAD = 8 | 16 | 128,
  CUBLASLT_EPILOGUE_GELU = 32,
  CUBLASLT_EPILOGUE_GELU_AUX = 32 | 128,
  CUBLASLT_EPILOGUE_GELU_BIAS = 32 | 4,
  CUBLASLT_EPILOGUE_GELU_AUX_BIAS = 32 | 4 | 128,
  CUBLASLT_EPILOGUE_DGELU = 64 | 128,
  CUBLASLT_EPILOGUE_DGELU_BGRAD = 64 | 16 | 128,
  CUBLASLT_EPILOGUE_BGRADA = 256,
  CUBLASLT_EPILOGUE_BGRADB = 512,
} cublasLtEpilogue_t;

typedef enum {
  CUBLASLT_MATRIX_LAYOUT_TYPE = 0,
  CUBLASLT_MATRIX_LAYOUT_ORDER = 1,
  CUBLASLT_MATRIX_LAYOUT_ROWS = 2,
  CUBLASLT_MATRIX_LAYOUT_COLS = 3,
  CUBLASLT_MATRIX_LAYOUT_LD = 4,
  CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5,
  CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6,
  CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET = 7,
} cublasLtMatrixLayoutAttribute_t;

typedef enum {
  CUBLASLT_MATMUL_DESC_COMPUTE_TYPE = 0,
  CUBLASLT_MATMUL_DESC_SCALE_TYPE = 1,
  CUBLASLT_MATMUL_DESC_POINTER_MODE = 2,
  CUBLASLT_MATMUL_DESC_TRANSA = 3,
  CUBLASLT_MATMUL_DESC_TRANSB = 4,
  CUBLASLT_MATMUL_DESC_TRANSC = 5,
  CUBLASLT_MATMUL_DESC_FILL_MODE = 6,
  CUBLASLT_MATMUL_DESC_EPILOGUE = 7,
  CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8,
  CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE = 10,
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER = 11,
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD = 12,
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE = 13,
  CUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE = 14,
  CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET = 15,
  CUBLASLT_MATMUL_DESC_A_SCALE_POINTER = 17,
  CUBLASLT_MATMUL_DESC_B_SCALE_POINTER = 18,
  CUBLASLT_MATMUL_DESC_C_SCALE_POINTER = 19,
  CUBLASLT_MATMUL_DESC_D_SCALE_POINTER = 20,
  CUBLASLT_MATMUL_DESC_AMAX_D_POINTER = 21,
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE = 22,
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_POINTER = 23,
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_AMAX_POINTER = 24,
  CUBLASLT_MATMUL_DESC_FAST_ACCUM = 25,
  CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE = 26,
} cublasLtMatmulDescAttributes_t;

typedef enum {
  CUBLASLT_MATMUL_PREF_SEARCH_MODE = 0,
  CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1,
  CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK = 3,
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES = 5,
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES = 6,
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES = 7,
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES = 8,
  CUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT = 9,
  CUBLASLT_MATMUL_PREF_IMPL_MASK = 12,
} cublasLtMatmulPreferenceAttributes_t;

// The opaque objects hold their state in the storage a program may allocate itself (the *Init
// functions), so each is a struct of the same role as cuBLASLt's.
typedef struct {
  cudaDataType type;
  int32_t order;
  uint64_t rows, cols;
  int64_t ld;
  int32_t batch;
  int64_t stride;
  int64_t plane;
  uint64_t reserved[2];
} cublasLtMatrixLayoutOpaque_t;
typedef cublasLtMatrixLayoutOpaque_t* cublasLtMatrixLayout_t;

typedef struct {
  cublasComputeType_t compute;
  cudaDataType scale;
  int32_t pointer_mode;
  int32_t transa, transb, transc;
  int32_t fill;
  uint32_t epilogue;
  const void* bias;
  int64_t bias_stride;
  void* aux;
  int64_t aux_ld, aux_stride;
  int64_t alpha_stride;
  int32_t sm_count;
  const void* scale_pointers[5];  // A, B, C, D scales and amax of D: fp8 only
  int32_t aux_type, bias_type;    // -1: the default (D's type)
  int8_t fast_accum;
  uint64_t reserved[4];
} cublasLtMatmulDescOpaque_t;
typedef cublasLtMatmulDescOpaque_t* cublasLtMatmulDesc_t;

typedef struct {
  uint32_t search_mode;
  uint64_t workspace;
  uint32_t reduction_mask;
  uint32_t alignment[4];
  float waves;
  uint64_t impl_mask;
  uint64_t reserved[2];
} cublasLtMatmulPreferenceOpaque_t;
typedef cublasLtMatmulPreferenceOpaque_t* cublasLtMatmulPreference_t;

typedef struct {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
} cublasLtMatmulHeuristicResult_t;

struct cudashim_cublasLtContext {
  int magic = 0x4c74;
};

namespace cudashim::blaslt {

// An attribute is read or written whole: cuBLASLt refuses a buffer of another size.
template <class _Tp>
inline cublasStatus_t set(_Tp& __field, const void* __buf, size_t __size) {
  if (!__buf || __size != sizeof(_Tp)) return CUBLAS_STATUS_INVALID_VALUE;
  memcpy(&__field, __buf, sizeof(_Tp));
  return CUBLAS_STATUS_SUCCESS;
}
template <class _Tp>
inline cublasStatus_t get(const _Tp& __field, void* __buf, size_t __size, size_t* __written) {
  if (__written) *__written = sizeof(_Tp);
  if (__size == 0 && __buf == nullptr) return CUBLAS_STATUS_SUCCESS;  // a size query
  if (!__buf || __size < sizeof(_Tp)) return CUBLAS_STATUS_INVALID_VALUE;
  memcpy(__buf, &__field, sizeof(_Tp));
  return CUBLAS_STATUS_SUCCESS;
}

inline void layout_init(cublasLtMatrixLayoutOpaque_t* __l, cudaDataType __t, uint64_t __rows, uint64_t __cols, int64_t __ld) {
  *__l = cublasLtMatrixLayoutOpaque_t{};
  __l->type = __t;
  __l->order = CUBLASLT_ORDER_COL;
  __l->rows = __rows;
  __l->cols = __cols;
  __l->ld = __ld;
  __l->batch = 1;
}

inline void desc_init(cublasLtMatmulDescOpaque_t* __d, cublasComputeType_t __c, cudaDataType __s) {
  *__d = cublasLtMatmulDescOpaque_t{};
  __d->compute = __c;
  __d->scale = __s;
  __d->transa = __d->transb = __d->transc = CUBLAS_OP_N;
  __d->fill = CUBLAS_FILL_MODE_FULL;
  __d->epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  __d->aux_type = __d->bias_type = -1;
}

inline size_t elem_size_of(cudaDataType __t) {
  return __t == CUDA_R_8I || __t == CUDA_R_8U ? 1 : __t == CUDA_R_32I ? 4 : cudashim::blas::elem_size(__t);
}
// Conjugate transposition of a real matrix is its transposition.
inline bool bad_op_lt(int32_t __op) { return __op != CUBLAS_OP_N && __op != CUBLAS_OP_T && __op != CUBLAS_OP_C; }

[[noreturn]] inline void outside(const char* __what) {
  char __msg[256];
  snprintf(__msg, sizeof __msg, "cublasLtMatmul with %s", __what);
  lib::needs_gpu(__msg);
}

// Element (r, c) of a stored matrix.
inline long long at(const cublasLtMatrixLayoutOpaque_t& __l, long long __r, long long __c) {
  return __l.order == CUBLASLT_ORDER_ROW ? __r * __l.ld + __c : __r + __c * __l.ld;
}

inline bool layout_ok(const cublasLtMatrixLayoutOpaque_t& __l) {
  const long long __inner = (long long)(__l.order == CUBLASLT_ORDER_ROW ? __l.cols : __l.rows);
  return __l.ld >= (__inner > 1 ? __inner : 1) && __l.batch >= 1;
}

inline double gelu(double __x) {  // cuBLASLt's GELU: the tanh approximation
  const double __k = 0.7978845608028654;  // sqrt(2 / pi)
  return 0.5 * __x * (1.0 + std::tanh(__k * (__x + 0.044715 * __x * __x * __x)));
}

template <class _Cp>
void matmul(const cublasLtMatmulDescOpaque_t& __d, long long __m, long long __n, long long __k, double __alpha, double __beta,
            const void* __a, cublasLtMatrixLayoutOpaque_t __la, const void* __b, cublasLtMatrixLayoutOpaque_t __lb,
            const void* __c, cublasLtMatrixLayoutOpaque_t __lc, void* __dd, cublasLtMatrixLayoutOpaque_t __ld, long long __batch) {
  const bool __ta = __d.transa != CUBLAS_OP_N, __tb = __d.transb != CUBLAS_OP_N;
  const uint32_t __ep = __d.epilogue;
  const cudaDataType __bias_t = __d.bias_type >= 0 ? (cudaDataType)__d.bias_type : __ld.type;
  const cudaDataType __aux_t = __d.aux_type >= 0 ? (cudaDataType)__d.aux_type : __ld.type;
  std::vector<_Cp> __pa((size_t)(__m * __k)), __pb((size_t)(__n * __k));
  for (long long __bi = 0; __bi < __batch; ++__bi) {
    const char* __ab = static_cast<const char*>(__a) + (__la.batch > 1 ? __bi * __la.stride * (long long)elem_size_of(__la.type) : 0);
    const char* __bb = static_cast<const char*>(__b) + (__lb.batch > 1 ? __bi * __lb.stride * (long long)elem_size_of(__lb.type) : 0);
    const char* __cb = __c ? static_cast<const char*>(__c) + (__lc.batch > 1 ? __bi * __lc.stride * (long long)elem_size_of(__lc.type) : 0)
                           : nullptr;
    char* __db = static_cast<char*>(__dd) + (__ld.batch > 1 ? __bi * __ld.stride * (long long)elem_size_of(__ld.type) : 0);
    if (__alpha != 0 && __k > 0) {
      for (long long __i = 0; __i < __m; ++__i)
        for (long long __l = 0; __l < __k; ++__l)
          __pa[__i * __k + __l] = (_Cp)lib::load(__ab, __la.type, __ta ? at(__la, __l, __i) : at(__la, __i, __l));
      for (long long __j = 0; __j < __n; ++__j)
        for (long long __l = 0; __l < __k; ++__l)
          __pb[__j * __k + __l] = (_Cp)lib::load(__bb, __lb.type, __tb ? at(__lb, __j, __l) : at(__lb, __l, __j));
    }
    for (long long __j = 0; __j < __n; ++__j)
      for (long long __i = 0; __i < __m; ++__i) {
        _Cp __r = 0;
        if (__alpha != 0 && __k > 0) __r = (_Cp)__alpha * cudashim::blas::dot_packed(&__pa[__i * __k], &__pb[__j * __k], __k);
        if (__beta != 0) __r += (_Cp)__beta * (_Cp)lib::load(__cb, __lc.type, at(__lc, __i, __j));
        double __v = (double)__r;
        if (__ep & 4) __v += lib::load(__d.bias, __bias_t, __bi * __d.bias_stride + __i);
        if (__ep & 128) lib::store(__d.aux, __aux_t, __bi * __d.aux_stride + __i + __j * __d.aux_ld, __v);
        if (__ep & 2) __v = __v > 0 ? __v : 0;
        if (__ep & 32) __v = gelu(__v);
        lib::store(__db, __ld.type, at(__ld, __i, __j), __v);
      }
  }
}

}  // namespace cudashim::blaslt

inline cublasStatus_t cublasLtCreate(cublasLtHandle_t* __h) { ::cudashim::_Device_access __cudashim_da;
  if (!__h) return CUBLAS_STATUS_INVALID_VALUE;
  *__h = new cudashim_cublasLtContext();
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasLtDestroy(cublasLtHandle_t __h) { ::cudashim::_Device_access __cudashim_da;
  if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;
  delete __h;
  return CUBLAS_STATUS_SUCCESS;
}
inline size_t cublasLtGetVersion(void) { return CUBLASLT_VERSION; }
inline size_t cublasLtGetCudartVersion(void) { return CUDART_VERSION; }
inline const char* cublasLtGetStatusName(cublasStatus_t __s) { return cublasGetStatusName(__s); }
inline const char* cublasLtGetStatusString(cublasStatus_t __s) { return cublasGetStatusString(__s); }

// ---------------------------------------------------------------- matrix layouts
inline cublasStatus_t cublasLtMatrixLayoutInit(cublasLtMatrixLayout_t __l, cudaDataType __t, uint64_t __rows, uint64_t __cols,
                                               int64_t __ld) {
  if (!__l) return CUBLAS_STATUS_INVALID_VALUE;
  cudashim::blaslt::layout_init(__l, __t, __rows, __cols, __ld);
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* __l, cudaDataType __t, uint64_t __rows, uint64_t __cols,
                                                 int64_t __ld) {
  if (!__l) return CUBLAS_STATUS_INVALID_VALUE;
  *__l = new cublasLtMatrixLayoutOpaque_t();
  cudashim::blaslt::layout_init(*__l, __t, __rows, __cols, __ld);
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasLtMatrixLayoutDestroy(const cublasLtMatrixLayout_t __l) {
  delete __l;
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t __l, cublasLtMatrixLayoutAttribute_t __a,
                                                       const void* __buf, size_t __size) {
  using namespace cudashim::blaslt;
  if (!__l) return CUBLAS_STATUS_INVALID_VALUE;
  switch (__a) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE: {
      uint32_t __v;
      cublasStatus_t __s = set(__v, __buf, __size);
      if (__s == CUBLAS_STATUS_SUCCESS) __l->type = (cudaDataType)__v;
      return __s;
    }
    case CUBLASLT_MATRIX_LAYOUT_ORDER: return set(__l->order, __buf, __size);
    case CUBLASLT_MATRIX_LAYOUT_ROWS: return set(__l->rows, __buf, __size);
    case CUBLASLT_MATRIX_LAYOUT_COLS: return set(__l->cols, __buf, __size);
    case CUBLASLT_MATRIX_LAYOUT_LD: return set(__l->ld, __buf, __size);
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: return set(__l->batch, __buf, __size);
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET: return set(__l->stride, __buf, __size);
    case CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET: return set(__l->plane, __buf, __size);
  }
  return CUBLAS_STATUS_INVALID_VALUE;
}
inline cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t __l, cublasLtMatrixLayoutAttribute_t __a, void* __buf,
                                                       size_t __size, size_t* __written) {
  using namespace cudashim::blaslt;
  if (!__l) return CUBLAS_STATUS_INVALID_VALUE;
  switch (__a) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE: return get((uint32_t)__l->type, __buf, __size, __written);
    case CUBLASLT_MATRIX_LAYOUT_ORDER: return get(__l->order, __buf, __size, __written);
    case CUBLASLT_MATRIX_LAYOUT_ROWS: return get(__l->rows, __buf, __size, __written);
    case CUBLASLT_MATRIX_LAYOUT_COLS: return get(__l->cols, __buf, __size, __written);
    case CUBLASLT_MATRIX_LAYOUT_LD: return get(__l->ld, __buf, __size, __written);
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: return get(__l->batch, __buf, __size, __written);
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET: return get(__l->stride, __buf, __size, __written);
    case CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET: return get(__l->plane, __buf, __size, __written);
  }
  return CUBLAS_STATUS_INVALID_VALUE;
}

// ---------------------------------------------------------------- matmul descriptors
inline cublasStatus_t cublasLtMatmulDescInit(cublasLtMatmulDesc_t __d, cublasComputeType_t __c, cudaDataType __s) {
  if (!__d) return CUBLAS_STATUS_INVALID_VALUE;
  cudashim::blaslt::desc_init(__d, __c, __s);
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* __d, cublasComputeType_t __c, cudaDataType __s) {
  if (!__d) return CUBLAS_STATUS_INVALID_VALUE;
  *__d = new cublasLtMatmulDescOpaque_t();
  cudashim::blaslt::desc_init(*__d, __c, __s);
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasLtMatmulDescDestroy(const cublasLtMatmulDesc_t __d) {
  delete __d;
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t __d, cublasLtMatmulDescAttributes_t __a, const void* __buf,
                                                     size_t __size) {
  using namespace cudashim::blaslt;
  if (!__d) return CUBLAS_STATUS_INVALID_VALUE;
  switch (__a) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE: return set(__d->compute, __buf, __size);
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE: return set(__d->scale, __buf, __size);
    case CUBLASLT_MATMUL_DESC_POINTER_MODE: return set(__d->pointer_mode, __buf, __size);
    case CUBLASLT_MATMUL_DESC_TRANSA: return set(__d->transa, __buf, __size);
    case CUBLASLT_MATMUL_DESC_TRANSB: return set(__d->transb, __buf, __size);
    case CUBLASLT_MATMUL_DESC_TRANSC: return set(__d->transc, __buf, __size);
    case CUBLASLT_MATMUL_DESC_FILL_MODE: return set(__d->fill, __buf, __size);
    case CUBLASLT_MATMUL_DESC_EPILOGUE: return set(__d->epilogue, __buf, __size);
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER: return set(__d->bias, __buf, __size);
    case CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE: return set(__d->bias_stride, __buf, __size);
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER: return set(__d->aux, __buf, __size);
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD: return set(__d->aux_ld, __buf, __size);
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE: return set(__d->aux_stride, __buf, __size);
    case CUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE: return set(__d->alpha_stride, __buf, __size);
    case CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET: return set(__d->sm_count, __buf, __size);
    case CUBLASLT_MATMUL_DESC_A_SCALE_POINTER: return set(__d->scale_pointers[0], __buf, __size);
    case CUBLASLT_MATMUL_DESC_B_SCALE_POINTER: return set(__d->scale_pointers[1], __buf, __size);
    case CUBLASLT_MATMUL_DESC_C_SCALE_POINTER: return set(__d->scale_pointers[2], __buf, __size);
    case CUBLASLT_MATMUL_DESC_D_SCALE_POINTER: return set(__d->scale_pointers[3], __buf, __size);
    case CUBLASLT_MATMUL_DESC_AMAX_D_POINTER: return set(__d->scale_pointers[4], __buf, __size);
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE: return set(__d->aux_type, __buf, __size);
    case CUBLASLT_MATMUL_DESC_FAST_ACCUM: return set(__d->fast_accum, __buf, __size);
    case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE: return set(__d->bias_type, __buf, __size);
    default: return CUBLAS_STATUS_INVALID_VALUE;
  }
}
inline cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t __d, cublasLtMatmulDescAttributes_t __a, void* __buf,
                                                     size_t __size, size_t* __written) {
  using namespace cudashim::blaslt;
  if (!__d) return CUBLAS_STATUS_INVALID_VALUE;
  switch (__a) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE: return get(__d->compute, __buf, __size, __written);
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE: return get(__d->scale, __buf, __size, __written);
    case CUBLASLT_MATMUL_DESC_POINTER_MODE: return get(__d->pointer_mode, __buf, __size, __written);
    case CUBLASLT_MATMUL_DESC_TRANSA: return get(__d->transa, __buf, __size, __written);
    case CUBLASLT_MATMUL_DESC_TRANSB: return get(__d->transb, __buf, __size, __written);
    case CUBLASLT_MATMUL_DESC_TRANSC: return get(__d->transc, __buf, __size, __written);
    case CUBLASLT_MATMUL_DESC_EPILOGUE: return get(__d->epilogue, __buf, __size, __written);
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER: return get(__d->bias, __buf, __size, __written);
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER: return get(__d->aux, __buf, __size, __written);
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD: return get(__d->aux_ld, __buf, __size, __written);
    default: return CUBLAS_STATUS_INVALID_VALUE;
  }
}

// ---------------------------------------------------------------- preferences and heuristics
inline cublasStatus_t cublasLtMatmulPreferenceInit(cublasLtMatmulPreference_t __p) {
  if (!__p) return CUBLAS_STATUS_INVALID_VALUE;
  *__p = cublasLtMatmulPreferenceOpaque_t{};
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* __p) {
  if (!__p) return CUBLAS_STATUS_INVALID_VALUE;
  *__p = new cublasLtMatmulPreferenceOpaque_t();
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasLtMatmulPreferenceDestroy(const cublasLtMatmulPreference_t __p) {
  delete __p;
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t __p, cublasLtMatmulPreferenceAttributes_t __a,
                                                           const void* __buf, size_t __size) {
  using namespace cudashim::blaslt;
  if (!__p) return CUBLAS_STATUS_INVALID_VALUE;
  switch (__a) {
    case CUBLASLT_MATMUL_PREF_SEARCH_MODE: return set(__p->search_mode, __buf, __size);
    case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES: return set(__p->workspace, __buf, __size);
    case CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK: return set(__p->reduction_mask, __buf, __size);
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES: return set(__p->alignment[0], __buf, __size);
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES: return set(__p->alignment[1], __buf, __size);
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES: return set(__p->alignment[2], __buf, __size);
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES: return set(__p->alignment[3], __buf, __size);
    case CUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT: return set(__p->waves, __buf, __size);
    case CUBLASLT_MATMUL_PREF_IMPL_MASK: return set(__p->impl_mask, __buf, __size);
  }
  return CUBLAS_STATUS_INVALID_VALUE;
}

// One algorithm, which needs no workspace, for every problem the subset computes.
inline cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t __h, cublasLtMatmulDesc_t __d, cublasLtMatrixLayout_t __a,
                                                     cublasLtMatrixLayout_t __b, cublasLtMatrixLayout_t __c,
                                                     cublasLtMatrixLayout_t __dl, cublasLtMatmulPreference_t __p, int __requested,
                                                     cublasLtMatmulHeuristicResult_t __results[], int* __returned) {
  if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!__d || !__a || !__b || !__c || !__dl || !__p || __requested <= 0 || !__results || !__returned)
    return CUBLAS_STATUS_INVALID_VALUE;
  __results[0] = cublasLtMatmulHeuristicResult_t{};
  __results[0].algo.data[0] = 1;
  __results[0].workspaceSize = 0;
  __results[0].state = CUBLAS_STATUS_SUCCESS;
  __results[0].wavesCount = 1.0f;
  *__returned = 1;
  return CUBLAS_STATUS_SUCCESS;
}

// ---------------------------------------------------------------- matmul
inline cublasStatus_t cublasLtMatmul(cublasLtHandle_t __h, cublasLtMatmulDesc_t __desc, const void* __alpha, const void* __a,
                                     cublasLtMatrixLayout_t __adesc, const void* __b, cublasLtMatrixLayout_t __bdesc,
                                     const void* __beta, const void* __c, cublasLtMatrixLayout_t __cdesc, void* __d,
                                     cublasLtMatrixLayout_t __ddesc, const cublasLtMatmulAlgo_t* __algo, void* __workspace,
                                     size_t __workspace_bytes, cudaStream_t __stream) {
  ::cudashim::_Library_access __cudashim_da("cublas");
  using namespace cudashim::blaslt;
  (void)__algo;
  (void)__workspace;
  (void)__workspace_bytes;
  if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!__desc || !__adesc || !__bdesc || !__cdesc || !__ddesc || !__alpha || !__beta || !__a || !__b || !__d)
    return CUBLAS_STATUS_INVALID_VALUE;
  const cublasLtMatmulDescOpaque_t __ds = *__desc;
  const cublasLtMatrixLayoutOpaque_t __la = *__adesc, __lb = *__bdesc, __lc = *__cdesc, __ld = *__ddesc;
  // Integer products: int8 (or uint8) A and B into int32 C and D, computed exactly.
  const bool __ints = __ds.compute == CUBLAS_COMPUTE_32I || __ds.compute == CUBLAS_COMPUTE_32I_PEDANTIC;
  if (__ints && !((__la.type == CUDA_R_8I || __la.type == CUDA_R_8U) && __lb.type == __la.type && __lc.type == CUDA_R_32I &&
                  __ld.type == CUDA_R_32I))
    outside("an integer compute type but matrices other than 8-bit A and B and int32 C and D");
  for (const cublasLtMatrixLayoutOpaque_t* __l : {&__la, &__lb, &__lc, &__ld}) {
    if (__l->order != CUBLASLT_ORDER_COL && __l->order != CUBLASLT_ORDER_ROW) outside("a tiled matrix order (COL32 and kin)");
    if (!__ints && !cudashim::lib::real_float(__l->type)) {
      char __what[96];
      snprintf(__what, sizeof __what, "matrices of %s", cudashim::lib::type_name(__l->type));
      outside(__what);
    }
    if (!layout_ok(*__l)) return CUBLAS_STATUS_INVALID_VALUE;
  }
  const char __kind = __ints ? 'i' : cudashim::blas::compute_kind(__ds.compute);
  if (!__kind) outside("a compute type outside the float, double and int32 ones");
  if (__ints && (__ds.epilogue & (2 | 4 | 32 | 128))) outside("an epilogue on integer products");
  if (bad_op_lt(__ds.transa) || bad_op_lt(__ds.transb) || __ds.transc != CUBLAS_OP_N) return CUBLAS_STATUS_INVALID_VALUE;
  const uint32_t __known[] = {CUBLASLT_EPILOGUE_DEFAULT, CUBLASLT_EPILOGUE_RELU, CUBLASLT_EPILOGUE_BIAS, CUBLASLT_EPILOGUE_RELU_BIAS,
                              CUBLASLT_EPILOGUE_GELU, CUBLASLT_EPILOGUE_GELU_BIAS, CUBLASLT_EPILOGUE_GELU_AUX,
                              CUBLASLT_EPILOGUE_GELU_AUX_BIAS};
  bool __ok = false;
  for (uint32_t __e : __known) __ok |= __e == __ds.epilogue;
  if (!__ok) outside("an epilogue outside DEFAULT, RELU, BIAS, RELU_BIAS, GELU, GELU_BIAS and GELU_AUX(_BIAS)");
  if (__ds.pointer_mode != CUBLASLT_POINTER_MODE_HOST && __ds.pointer_mode != CUBLASLT_POINTER_MODE_DEVICE)
    outside("an alpha vector pointer mode");
  for (const void* __p : __ds.scale_pointers)
    if (__p) outside("scale or amax pointers (fp8)");
  if ((__ds.epilogue & 4) && !__ds.bias) return CUBLAS_STATUS_INVALID_VALUE;
  if (!__c && !(__ds.pointer_mode == CUBLASLT_POINTER_MODE_HOST && cudashim::lib::load(__beta, __ds.scale, 0) == 0))
    return CUBLAS_STATUS_INVALID_VALUE;
  if ((__ds.epilogue & 128) && (!__ds.aux || __ds.aux_ld < (long long)__ld.rows)) return CUBLAS_STATUS_INVALID_VALUE;
  const long long __m = (long long)(__ds.transa == CUBLAS_OP_N ? __la.rows : __la.cols);
  const long long __k = (long long)(__ds.transa == CUBLAS_OP_N ? __la.cols : __la.rows);
  const long long __kb = (long long)(__ds.transb == CUBLAS_OP_N ? __lb.rows : __lb.cols);
  const long long __n = (long long)(__ds.transb == CUBLAS_OP_N ? __lb.cols : __lb.rows);
  if (__kb != __k || (long long)__ld.rows != __m || (long long)__ld.cols != __n || __lc.rows != __ld.rows || __lc.cols != __ld.cols)
    return CUBLAS_STATUS_INVALID_VALUE;
  const long long __batch = __ld.batch;
  for (const cublasLtMatrixLayoutOpaque_t* __l : {&__la, &__lb, &__lc})
    if (__l->batch != 1 && __l->batch != __batch) return CUBLAS_STATUS_INVALID_VALUE;
  // alpha and beta have the scale type; the handle a cuBLAS call's scalars are read through.
  cublasContext __ctx;
  __ctx.stream = __stream;
  __ctx.pointer_mode = __ds.pointer_mode == CUBLASLT_POINTER_MODE_DEVICE ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST;
  return cudashim::blas::_enqueue(
      &__ctx,
      [=, __as = cudashim::blas::_scalar(&__ctx, __alpha, __ds.scale), __bs = cudashim::blas::_scalar(&__ctx, __beta, __ds.scale)] {
        const double __al = __as.get(), __be = __bs.get();
        if (__kind == 'i')
          matmul<long long>(__ds, __m, __n, __k, __al, __be, __a, __la, __b, __lb, __c, __lc, __d, __ld, __batch);
        else if (__kind == 'd')
          matmul<double>(__ds, __m, __n, __k, __al, __be, __a, __la, __b, __lb, __c, __lc, __d, __ld, __batch);
        else
          matmul<float>(__ds, __m, __n, __k, __al, __be, __a, __la, __b, __lb, __c, __lc, __d, __ld, __batch);
      },
      "cublasLtMatmul");
}
