// cudashim: the cuFFT API (cufft.h) computed on the CPU: complex and real transforms in single
// and double precision (C2C, R2C, C2R, Z2Z, D2Z, Z2D), rank 1 to 3, batched, any size (mixed
// radix for lengths whose prime factors are all small, Bluestein's algorithm otherwise: O(n log n)
// for every length, accumulated in double), the basic and the advanced data layouts
// (cufftPlanMany's inembed/istride/idist, onembed/ostride/odist). The functions are in
// cudashim/cufft_host.h, included at the end; cufftXt.h adds cufftXtMakePlanMany, cufftXtExec
// and load/store callbacks. Calls run synchronously in issue order, except executions on a
// stream (cufftSetStream) being captured: those are nodes of the capture (as cuBLAS's and
// cuRAND's calls are here). Linking with -lcufft needs nothing: everything is in these headers.
// Values and types are CUDA 12.4's (cuFFT 11.2), with CUDA 13's added result codes also declared.
#pragma once
// The include guard CUDA's own header defines: programs test it to know the header is in
// (cuda-samples' helper_cuda.h names the cufftResult codes under it).
#define _CUFFT_H_
#include <cuda_runtime.h>
#include <library_types.h>
// NVIDIA's cufft.h includes cuComplex.h: cufftComplex is cuComplex (float2), cufftDoubleComplex
// is cuDoubleComplex (double2).
#include <cuComplex.h>

#define CUFFT_VER_MAJOR 11
#define CUFFT_VER_MINOR 2
#define CUFFT_VER_PATCH 1
#define CUFFT_VER_BUILD 3
#define CUFFT_VERSION (CUFFT_VER_MAJOR * 1000 + CUFFT_VER_MINOR * 100 + CUFFT_VER_PATCH)
#define CUFFTAPI

typedef enum cufftResult_t {
  CUFFT_SUCCESS = 0x0,
  CUFFT_INVALID_PLAN = 0x1,
  CUFFT_ALLOC_FAILED = 0x2,
  CUFFT_INVALID_TYPE = 0x3,
  CUFFT_INVALID_VALUE = 0x4,
  CUFFT_INTERNAL_ERROR = 0x5,
  CUFFT_EXEC_FAILED = 0x6,
  CUFFT_SETUP_FAILED = 0x7,
  CUFFT_INVALID_SIZE = 0x8,
  CUFFT_UNALIGNED_DATA = 0x9,
  CUFFT_INCOMPLETE_PARAMETER_LIST = 0xA,  // CUDA 12 (removed in CUDA 13)
  CUFFT_INVALID_DEVICE = 0xB,
  CUFFT_PARSE_ERROR = 0xC,  // CUDA 12 (removed in CUDA 13)
  CUFFT_NO_WORKSPACE = 0xD,
  CUFFT_NOT_IMPLEMENTED = 0xE,
  CUFFT_LICENSE_ERROR = 0x0F,  // CUDA 12 (removed in CUDA 13)
  CUFFT_NOT_SUPPORTED = 0x10,
  CUFFT_MISSING_DEPENDENCY = 0x11,  // CUDA 12.6 and later
  CUFFT_NVRTC_FAILURE = 0x12,
  CUFFT_NVJITLINK_FAILURE = 0x13,
  CUFFT_NVSHMEM_FAILURE = 0x14
} cufftResult;

#define MAX_CUFFT_ERROR 0x11

typedef float cufftReal;
typedef double cufftDoubleReal;
typedef cuComplex cufftComplex;
typedef cuDoubleComplex cufftDoubleComplex;

#define CUFFT_FORWARD -1
#define CUFFT_INVERSE 1

typedef enum cufftType_t {
  CUFFT_R2C = 0x2a,  // real to complex (interleaved)
  CUFFT_C2R = 0x2c,  // complex (interleaved) to real
  CUFFT_C2C = 0x29,  // complex to complex (interleaved)
  CUFFT_D2Z = 0x6a,  // double to double complex
  CUFFT_Z2D = 0x6c,  // double complex to double
  CUFFT_Z2Z = 0x69   // double complex to double complex
} cufftType;

typedef enum cufftCompatibility_t {
  CUFFT_COMPATIBILITY_FFTW_PADDING = 0x01
} cufftCompatibility;
#define CUFFT_COMPATIBILITY_DEFAULT CUFFT_COMPATIBILITY_FFTW_PADDING

typedef int cufftHandle;

// The functions.
#include <cudashim/cufft_host.h>
