/* cudashim: the CUDA runtime API for C units (`nvcc main.cu host.c`: host.c is C, built by the
   host C compiler). Only C units have this folder on their include path; CUDA and C++ units get
   include/cuda_runtime.h. The functions are the runtime's own, exported with C linkage by
   runtime/c_api.cpp; types and values are those of include/cuda_runtime.h, from the lists in
   cudashim_c_lists.h (checked against it when the runtime is built). */
#ifndef CUDASHIM_C_RUNTIME_API_H
#define CUDASHIM_C_RUNTIME_API_H

#include <stddef.h>

#include "cudashim_c_lists.h"

/* The include guards of the headers CUDA's cuda_runtime.h brings in: programs test them. */
#define __CUDA_RUNTIME_H__
#define __CUDA_RUNTIME_API_H__
#define __DRIVER_TYPES_H__
#define __VECTOR_TYPES_H__
#define __VECTOR_FUNCTIONS_H__
#define CUDART_VERSION 12040
#define CUDA_VERSION 12040
#define CUDART_CB
#define CUDARTAPI
#define __host__
#define __device__
#define __device_builtin__
#define __cudart_builtin__
#define __align__(n) __attribute__((aligned(n)))

#define CUDASHIM_C_ENUMERATOR(_Name, _Value) _Name = _Value,
#define CUDASHIM_C_ENUM(_Name) enum _Name { CUDASHIM_C_ENUM_##_Name(CUDASHIM_C_ENUMERATOR) };
CUDASHIM_C_ENUMS(CUDASHIM_C_ENUM)
#undef CUDASHIM_C_ENUM
#undef CUDASHIM_C_ENUMERATOR
typedef enum cudaError cudaError_t;

#define CUDASHIM_C_FIELD(_Type, _Name, _Bounds) _Type _Name _Bounds;
#define CUDASHIM_C_STRUCT(_Name) struct _Name { CUDASHIM_C_STRUCT_##_Name(CUDASHIM_C_FIELD) };
CUDASHIM_C_STRUCTS(CUDASHIM_C_STRUCT)
#undef CUDASHIM_C_STRUCT
#undef CUDASHIM_C_FIELD

typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;
typedef void (*cudaHostFn_t)(void* _Data);
typedef void (*cudaStreamCallback_t)(cudaStream_t _Stream, cudaError_t _Status, void* _Data);

#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)
#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaEventDefault 0x00
#define cudaEventBlockingSync 0x01
#define cudaEventDisableTiming 0x02
#define cudaEventInterprocess 0x04
#define cudaHostAllocDefault 0x00
#define cudaHostAllocPortable 0x01
#define cudaHostAllocMapped 0x02
#define cudaHostAllocWriteCombined 0x04
#define cudaHostRegisterDefault 0x00
#define cudaHostRegisterPortable 0x01
#define cudaHostRegisterMapped 0x02
#define cudaHostRegisterIoMemory 0x04
#define cudaHostRegisterReadOnly 0x08
#define cudaMemAttachGlobal 0x01
#define cudaMemAttachHost 0x02
#define cudaMemAttachSingle 0x04
#define cudaPeerAccessDefault 0x00
#define cudaDeviceScheduleAuto 0x00
#define cudaDeviceScheduleSpin 0x01
#define cudaDeviceScheduleYield 0x02
#define cudaDeviceScheduleBlockingSync 0x04
#define cudaDeviceBlockingSync 0x04
#define cudaDeviceScheduleMask 0x07
#define cudaDeviceMapHost 0x08
#define cudaDeviceLmemResizeToMax 0x10
#define cudaDeviceSyncMemops 0x80
#define cudaDeviceMask 0xff
#define cudaCpuDeviceId (-1)
#define cudaInvalidDeviceId (-2)

/* vector_types.h and vector_functions.h, which CUDA's cuda_runtime.h includes in C too. */
#define CUDASHIM_C_VEC(_Tp, _Np, _A1, _A2, _A4)                                                  \
  typedef struct __attribute__((aligned(_A1))) _Np##1 { _Tp x; } _Np##1;                       \
  typedef struct __attribute__((aligned(_A2))) _Np##2 { _Tp x, y; } _Np##2;                    \
  typedef struct _Np##3 { _Tp x, y, z; } _Np##3;                                               \
  typedef struct __attribute__((aligned(_A4))) _Np##4 { _Tp x, y, z, w; } _Np##4;              \
  static __inline__ _Np##1 make_##_Np##1(_Tp _X) { _Np##1 _R = {_X}; return _R; }                 \
  static __inline__ _Np##2 make_##_Np##2(_Tp _X, _Tp _Y) { _Np##2 _R = {_X, _Y}; return _R; }     \
  static __inline__ _Np##3 make_##_Np##3(_Tp _X, _Tp _Y, _Tp _Z) {                                 \
    _Np##3 _R = {_X, _Y, _Z};                                                                   \
    return _R;                                                                                  \
  }                                                                                             \
  static __inline__ _Np##4 make_##_Np##4(_Tp _X, _Tp _Y, _Tp _Z, _Tp _W) {                         \
    _Np##4 _R = {_X, _Y, _Z, _W};                                                               \
    return _R;                                                                                  \
  }
CUDASHIM_C_VEC(signed char, char, 1, 2, 4)
CUDASHIM_C_VEC(unsigned char, uchar, 1, 2, 4)
CUDASHIM_C_VEC(short, short, 2, 4, 8)
CUDASHIM_C_VEC(unsigned short, ushort, 2, 4, 8)
CUDASHIM_C_VEC(int, int, 4, 8, 16)
CUDASHIM_C_VEC(unsigned int, uint, 4, 8, 16)
CUDASHIM_C_VEC(long, long, 8, 16, 16)
CUDASHIM_C_VEC(unsigned long, ulong, 8, 16, 16)
CUDASHIM_C_VEC(long long, longlong, 8, 16, 16)
CUDASHIM_C_VEC(unsigned long long, ulonglong, 8, 16, 16)
CUDASHIM_C_VEC(float, float, 4, 8, 16)
CUDASHIM_C_VEC(double, double, 8, 16, 16)
#undef CUDASHIM_C_VEC
typedef struct dim3 { unsigned int x, y, z; } dim3;

#define CUDASHIM_C_DECLARE(_Ret, _Name, _Params, _Args) extern _Ret _Name _Params;
CUDASHIM_C_FUNCTIONS(CUDASHIM_C_DECLARE)
#undef CUDASHIM_C_DECLARE

#endif
