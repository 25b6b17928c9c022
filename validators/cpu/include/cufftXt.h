// cudashim: the single-GPU part of cuFFT's extensions (cufftXt.h) over the host cuFFT of
// cufft.h: cufftXtMakePlanMany / cufftXtGetSizeMany with cudaDataType (32F and 64F data; 16F and
// 16BF stop the run as `needs_gpu`), cufftXtExec, and load/store callbacks
// (cufftXtSetCallback, cufftXtClearCallback, cufftXtSetCallbackSharedSize): a callback is the
// program's own __device__ function, called on the host for each element read or written. The
// multi-GPU API (cufftXtSetGPUs, cudaLibXtDesc, cufftXtMalloc/Memcpy/ExecDescriptor*) is not
// declared: a program using it fails to build and is reported `needs_gpu`.
#pragma once
// The include guard CUDA's own header defines.
#define _CUFFTXT_H_
#include <cufft.h>

typedef enum cufftXtCallbackType_t {
  CUFFT_CB_LD_COMPLEX = 0x0,
  CUFFT_CB_LD_COMPLEX_DOUBLE = 0x1,
  CUFFT_CB_LD_REAL = 0x2,
  CUFFT_CB_LD_REAL_DOUBLE = 0x3,
  CUFFT_CB_ST_COMPLEX = 0x4,
  CUFFT_CB_ST_COMPLEX_DOUBLE = 0x5,
  CUFFT_CB_ST_REAL = 0x6,
  CUFFT_CB_ST_REAL_DOUBLE = 0x7,
  CUFFT_CB_UNDEFINED = 0x8
} cufftXtCallbackType;

typedef cufftComplex (*cufftCallbackLoadC)(void* dataIn, size_t offset, void* callerInfo, void* sharedPointer);
typedef cufftDoubleComplex (*cufftCallbackLoadZ)(void* dataIn, size_t offset, void* callerInfo, void* sharedPointer);
typedef cufftReal (*cufftCallbackLoadR)(void* dataIn, size_t offset, void* callerInfo, void* sharedPointer);
typedef cufftDoubleReal (*cufftCallbackLoadD)(void* dataIn, size_t offset, void* callerInfo, void* sharedPointer);
typedef void (*cufftCallbackStoreC)(void* dataOut, size_t offset, cufftComplex element, void* callerInfo,
                                    void* sharedPointer);
typedef void (*cufftCallbackStoreZ)(void* dataOut, size_t offset, cufftDoubleComplex element, void* callerInfo,
                                    void* sharedPointer);
typedef void (*cufftCallbackStoreR)(void* dataOut, size_t offset, cufftReal element, void* callerInfo,
                                    void* sharedPointer);
typedef void (*cufftCallbackStoreD)(void* dataOut, size_t offset, cufftDoubleReal element, void* callerInfo,
                                    void* sharedPointer);

namespace cudashim::cufft {
// The cufftType of an (input, output, execution) data-type triple; 0 for none. Half and
// bfloat16 transforms are valid cuFFT calls the shim does not compute.
inline int _Xt_type(cudaDataType __i, cudaDataType __o, cudaDataType __e, const char* __call) {
  for (cudaDataType __t : {__i, __o, __e})
    if (__t == CUDA_R_16F || __t == CUDA_C_16F || __t == CUDA_R_16BF || __t == CUDA_C_16BF) {
      fflush(stdout);
      ::cudashim::fatal("cudashim: needs a GPU: %s with half or bfloat16 data (outside the CPU shim's cuFFT"
                        " subset: 32F and 64F)", __call);
    }
  if (__e == CUDA_C_32F) {
    if (__i == CUDA_C_32F && __o == CUDA_C_32F) return CUFFT_C2C;
    if (__i == CUDA_R_32F && __o == CUDA_C_32F) return CUFFT_R2C;
    if (__i == CUDA_C_32F && __o == CUDA_R_32F) return CUFFT_C2R;
  }
  if (__e == CUDA_C_64F) {
    if (__i == CUDA_C_64F && __o == CUDA_C_64F) return CUFFT_Z2Z;
    if (__i == CUDA_R_64F && __o == CUDA_C_64F) return CUFFT_D2Z;
    if (__i == CUDA_C_64F && __o == CUDA_R_64F) return CUFFT_Z2D;
  }
  return 0;
}
// Whether a callback type belongs to a plan type (loads of its input, stores of its output).
inline bool _Callback_fits(cufftType __t, int __cb) {
  switch (__cb) {
    case CUFFT_CB_LD_COMPLEX: return __t == CUFFT_C2C || __t == CUFFT_C2R;
    case CUFFT_CB_LD_COMPLEX_DOUBLE: return __t == CUFFT_Z2Z || __t == CUFFT_Z2D;
    case CUFFT_CB_LD_REAL: return __t == CUFFT_R2C;
    case CUFFT_CB_LD_REAL_DOUBLE: return __t == CUFFT_D2Z;
    case CUFFT_CB_ST_COMPLEX: return __t == CUFFT_C2C || __t == CUFFT_R2C;
    case CUFFT_CB_ST_COMPLEX_DOUBLE: return __t == CUFFT_Z2Z || __t == CUFFT_D2Z;
    case CUFFT_CB_ST_REAL: return __t == CUFFT_C2R;
    case CUFFT_CB_ST_REAL_DOUBLE: return __t == CUFFT_Z2D;
    default: return false;
  }
}
}  // namespace cudashim::cufft

inline cufftResult cufftXtMakePlanMany(cufftHandle __h, int __rank, long long int* __n, long long int* __inembed,
                                       long long int __istride, long long int __idist, cudaDataType __itype,
                                       long long int* __onembed, long long int __ostride, long long int __odist,
                                       cudaDataType __otype, long long int __batch, size_t* __ws,
                                       cudaDataType __etype) {
  if (::cudashim::cufft::_Find(__h) == nullptr) return CUFFT_INVALID_PLAN;
  const int __t = ::cudashim::cufft::_Xt_type(__itype, __otype, __etype, "cufftXtMakePlanMany");
  if (__t == 0) return CUFFT_INVALID_TYPE;
  return cufftMakePlanMany64(__h, __rank, __n, __inembed, __istride, __idist, __onembed, __ostride, __odist,
                             (cufftType)__t, __batch, __ws);
}
inline cufftResult cufftXtGetSizeMany(cufftHandle __h, int __rank, long long int* __n, long long int* __inembed,
                                      long long int __istride, long long int __idist, cudaDataType __itype,
                                      long long int* __onembed, long long int __ostride, long long int __odist,
                                      cudaDataType __otype, long long int __batch, size_t* __ws,
                                      cudaDataType __etype) {
  if (::cudashim::cufft::_Find(__h) == nullptr) return CUFFT_INVALID_PLAN;
  const int __t = ::cudashim::cufft::_Xt_type(__itype, __otype, __etype, "cufftXtGetSizeMany");
  if (__t == 0) return CUFFT_INVALID_TYPE;
  return cufftGetSizeMany64(__h, __rank, __n, __inembed, __istride, __idist, __onembed, __ostride, __odist,
                            (cufftType)__t, __batch, __ws);
}
// The plan's own transform, in the direction given (real transforms have theirs).
inline cufftResult cufftXtExec(cufftHandle __h, void* __i, void* __o, int __dir) {
  ::cudashim::cufft::_Plan* __p = ::cudashim::cufft::_Find(__h);
  if (__p == nullptr || !__p->__made) return CUFFT_INVALID_PLAN;
  const bool __dbl = ::cudashim::cufft::_Double(__p->__type);
  const int __kind = ::cudashim::cufft::_Forward_real(__p->__type) ? 1 : ::cudashim::cufft::_Inverse_real(__p->__type) ? 2 : 0;
  if (__kind != 0) __dir = __kind == 1 ? CUFFT_FORWARD : CUFFT_INVERSE;
  return __dbl ? ::cudashim::cufft::_Exec<double>(__h, __kind, __i, __o, __dir, "cufftXtExec")
               : ::cudashim::cufft::_Exec<float>(__h, __kind, __i, __o, __dir, "cufftXtExec");
}

inline cufftResult cufftXtSetCallback(cufftHandle __h, void** __routine, cufftXtCallbackType __cb, void** __info) {
  ::cudashim::cufft::_Plan* __p = ::cudashim::cufft::_Find(__h);
  if (__p == nullptr) return CUFFT_INVALID_PLAN;
  if (__routine == nullptr || __routine[0] == nullptr || (int)__cb < 0 || (int)__cb >= CUFFT_CB_UNDEFINED)
    return CUFFT_INVALID_VALUE;
  if (__p->__made && !::cudashim::cufft::_Callback_fits(__p->__type, __cb)) return CUFFT_INVALID_VALUE;
  __p->__cb[__cb].__fn = __routine[0];
  __p->__cb[__cb].__info = __info != nullptr ? __info[0] : nullptr;
  return CUFFT_SUCCESS;
}
inline cufftResult cufftXtClearCallback(cufftHandle __h, cufftXtCallbackType __cb) {
  ::cudashim::cufft::_Plan* __p = ::cudashim::cufft::_Find(__h);
  if (__p == nullptr) return CUFFT_INVALID_PLAN;
  if ((int)__cb < 0 || (int)__cb >= CUFFT_CB_UNDEFINED) return CUFFT_INVALID_VALUE;
  __p->__cb[__cb] = ::cudashim::cufft::_Callback{};
  return CUFFT_SUCCESS;
}
inline cufftResult cufftXtSetCallbackSharedSize(cufftHandle __h, cufftXtCallbackType __cb, size_t __bytes) {
  ::cudashim::cufft::_Plan* __p = ::cudashim::cufft::_Find(__h);
  if (__p == nullptr) return CUFFT_INVALID_PLAN;
  if ((int)__cb < 0 || (int)__cb >= CUFFT_CB_UNDEFINED) return CUFFT_INVALID_VALUE;
  if (__bytes > (48u << 10)) return CUFFT_INVALID_VALUE;  // a block's static shared memory
  __p->__cb[__cb].__shared = __bytes;
  return CUFFT_SUCCESS;
}
