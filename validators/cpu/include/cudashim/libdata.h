// cudashim: what the host cuBLAS/cuSPARSE subsets share: element access by cudaDataType and the
// report for a valid call the subset does not compute (the run stops as `needs_gpu`).
#pragma once
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <library_types.h>

namespace cudashim::lib {

inline const char* type_name(cudaDataType __t) {
  switch (__t) {
    case CUDA_R_16F: return "CUDA_R_16F";
    case CUDA_R_16BF: return "CUDA_R_16BF";
    case CUDA_R_32F: return "CUDA_R_32F";
    case CUDA_R_64F: return "CUDA_R_64F";
    case CUDA_C_32F: return "CUDA_C_32F";
    case CUDA_C_64F: return "CUDA_C_64F";
    case CUDA_R_8I: return "CUDA_R_8I";
    case CUDA_R_32I: return "CUDA_R_32I";
    default: return "a data type";
  }
}

// The real floating-point types the subsets compute with.
inline bool real_float(cudaDataType __t) {
  return __t == CUDA_R_16F || __t == CUDA_R_16BF || __t == CUDA_R_32F || __t == CUDA_R_64F;
}

// Element `__i` of an array of type `__t`, widened exactly to double.
inline double load(const void* __p, cudaDataType __t, long long __i) {
  switch (__t) {
    case CUDA_R_16F: return (double)(float)static_cast<const __half*>(__p)[__i];
    case CUDA_R_16BF: return (double)(float)static_cast<const __nv_bfloat16*>(__p)[__i];
    case CUDA_R_32F: return (double)static_cast<const float*>(__p)[__i];
    case CUDA_R_8I: return (double)static_cast<const int8_t*>(__p)[__i];
    case CUDA_R_8U: return (double)static_cast<const uint8_t*>(__p)[__i];
    case CUDA_R_32I: return (double)static_cast<const int32_t*>(__p)[__i];
    default: return static_cast<const double*>(__p)[__i];
  }
}

// Rounded once to the target type (bfloat16 goes through float: its converter takes float).
inline void store(void* __p, cudaDataType __t, long long __i, double __v) {
  switch (__t) {
    case CUDA_R_16F: static_cast<__half*>(__p)[__i] = __half(__v); break;
    case CUDA_R_16BF: static_cast<__nv_bfloat16*>(__p)[__i] = __nv_bfloat16((float)__v); break;
    case CUDA_R_32F: static_cast<float*>(__p)[__i] = (float)__v; break;
    // An integer result (an exact integer here) wraps to 32 bits, as an int32 accumulator does.
    case CUDA_R_32I: static_cast<int32_t*>(__p)[__i] = (int32_t)(uint32_t)(uint64_t)(int64_t)__v; break;
    default: static_cast<double*>(__p)[__i] = __v; break;
  }
}

// A valid call outside the subset: stop with a message diagnostics.py maps to `needs_gpu`.
[[noreturn]] inline void needs_gpu(const char* __what) {
  fflush(stdout);
  cudashim::fatal("cudashim: needs a GPU: %s (outside the CPU shim's library subset)", __what);
}

// Element `__i` of a strided BLAS vector of `__n` elements (negative strides walk backwards).
inline long long vec_index(long long __i, long long __n, long long __inc) {
  return __inc >= 0 ? __i * __inc : (__n - 1 - __i) * -__inc;
}

}  // namespace cudashim::lib
