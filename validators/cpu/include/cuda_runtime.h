// cudashim: the CUDA language and runtime API on the host (C++20, g++ 12).
//
// Each CUDA thread runs as a fiber; whole blocks run on worker threads (see
// runtime/cudashim_runtime.cpp). Launches `k<<<g, b, s, st>>>(args)` are rewritten by
// validators/cpu/rewrite.py into `::cudashim::launch("k", g, b, s, st, <lambda>, args)`.
//
// __CUDA_ARCH__ is defined (as 800) everywhere, host code included: programs guard fallbacks
// such as their own atomicAdd(double*) or mask-less __shfl with `__CUDA_ARCH__ < 600` /
// `CUDART_VERSION < 9000`; leaving it undefined would select those legacy paths (and clash with
// the overloads defined here). The price: a `__host__ __device__` function takes its device
// branch when called from host code, which works because every device intrinsic is defined for
// the host too.
#ifndef CUDASHIM_CUDA_RUNTIME_H
#define CUDASHIM_CUDA_RUNTIME_H

#define CUDASHIM 1
// The include guards of the headers CUDA's cuda_runtime.h brings in, all of which this one
// stands for: programs test them to know what is declared (cuda-samples' helper_cuda.h defines
// checkCudaErrors, findCudaDevice, ... only #ifdef __DRIVER_TYPES_H__ / __CUDA_RUNTIME_H__).
#define __CUDA_RUNTIME_H__
#define __CUDA_RUNTIME_API_H__
#define __DRIVER_TYPES_H__
#define __VECTOR_TYPES_H__
#define __VECTOR_FUNCTIONS_H__
#define __CHANNEL_DESCRIPTOR_H__
#define CUDART_CB
// CUDASHIM_HOST_LIBRARY_MODE (set for programs using Thrust, whose headers must see a plain host
// compiler to select their CPP backend) leaves the compiler-identity macros undefined.
#ifndef CUDASHIM_HOST_LIBRARY_MODE
#ifndef __CUDACC__
#define __CUDACC__ 1
#endif
#ifndef __NVCC__
#define __NVCC__ 1
#endif
#ifndef __CUDA_ARCH__
#define __CUDA_ARCH__ 800
#endif
#endif
// What the program's own text names instead of nvcc's identity macros in a library-mode build
// (rewrite.py `program_identity_macros`): its kernel bodies see an nvcc device pass.
#define __CUDASHIM_PROGRAM_CUDA_ARCH__ 800
#define __CUDASHIM_PROGRAM_CUDACC__ 1
#define __CUDASHIM_PROGRAM_NVCC__ 1
#define __CUDA_ARCH_LIST__ 800
#define CUDART_VERSION 12040
#define CUDA_VERSION 12040
#define __CUDACC_VER_MAJOR__ 12
#define __CUDACC_VER_MINOR__ 4
#define __CUDACC_VER_BUILD__ 0

#include <algorithm>
#include <assert.h>
#include <atomic>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <float.h>
#include <limits.h>
#include <limits>
#include <math.h>
#include <source_location>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tuple>
#include <type_traits>
#include <utility>

// ---------------------------------------------------------------- qualifiers
#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __grid_constant__
#define __cudart_builtin__
#define __device_builtin__
// Empty: libstdc++ writes __attribute__((__noinline__)), which must stay valid.
#define __noinline__
// A request, not an order: nvcc gives up inlining a recursion (mutually recursive
// __forceinline__ device functions build), where g++'s always_inline must inline or fail.
#define __forceinline__ inline
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __maxnreg__(...)
#define CUDARTAPI
#define CUDAAPI
// Aligned to 16 bytes: a GPU places shared variables in the block's window at offsets that
// vector loads tolerate, and programs carve a byte array into float4 (a movaps on a 1-aligned
// static faults). The attribute only ever raises a variable's alignment.
#ifdef CUDASHIM_ASAN
// One worker thread: a plain static is per block and gets AddressSanitizer red zones.
#define __shared__ static __attribute__((aligned(16)))
#else
// A block runs start to finish on one worker thread, so per-thread storage is per block.
#define __shared__ static thread_local __attribute__((aligned(16)))
#endif

// ---------------------------------------------------------------- vector types
#define CUDASHIM_VEC1(_Tp, _Np, _Ap) struct __attribute__((aligned(_Ap))) _Np##1 { _Tp x; };
#define CUDASHIM_VEC2(_Tp, _Np, _Ap) struct __attribute__((aligned(_Ap))) _Np##2 { _Tp x, y; };
#define CUDASHIM_VEC3(_Tp, _Np) struct _Np##3 { _Tp x, y, z; };
#define CUDASHIM_VEC4(_Tp, _Np, _Ap) struct __attribute__((aligned(_Ap))) _Np##4 { _Tp x, y, z, w; };
#define CUDASHIM_VECS(_Tp, _Np, _A1, _A2, _A4) \
  CUDASHIM_VEC1(_Tp, _Np, _A1) CUDASHIM_VEC2(_Tp, _Np, _A2) CUDASHIM_VEC3(_Tp, _Np) CUDASHIM_VEC4(_Tp, _Np, _A4)
CUDASHIM_VECS(signed char, char, 1, 2, 4)
CUDASHIM_VECS(unsigned char, uchar, 1, 2, 4)
CUDASHIM_VECS(short, short, 2, 4, 8)
CUDASHIM_VECS(unsigned short, ushort, 2, 4, 8)
CUDASHIM_VECS(long, long, 8, 16, 16)
CUDASHIM_VECS(unsigned long, ulong, 8, 16, 16)
CUDASHIM_VECS(long long, longlong, 8, 16, 16)
CUDASHIM_VECS(unsigned long long, ulonglong, 8, 16, 16)
CUDASHIM_VECS(float, float, 4, 8, 16)
CUDASHIM_VECS(double, double, 8, 16, 16)
CUDASHIM_VEC1(int, int, 4)
CUDASHIM_VEC2(int, int, 8)
CUDASHIM_VEC4(int, int, 16)
CUDASHIM_VEC1(unsigned int, uint, 4)
CUDASHIM_VEC2(unsigned int, uint, 8)
CUDASHIM_VEC4(unsigned int, uint, 16)
struct int3 { int x, y, z; };
struct uint3 { unsigned int x, y, z; };

#define CUDASHIM_MAKE(_Np, _Tp)                                                              \
  inline constexpr _Np##1 make_##_Np##1(_Tp x) { return _Np##1{x}; }                             \
  inline constexpr _Np##2 make_##_Np##2(_Tp x, _Tp y) { return _Np##2{x, y}; }                     \
  inline constexpr _Np##3 make_##_Np##3(_Tp x, _Tp y, _Tp z) { return _Np##3{x, y, z}; }            \
  inline constexpr _Np##4 make_##_Np##4(_Tp x, _Tp y, _Tp z, _Tp w) { return _Np##4{x, y, z, w}; }
CUDASHIM_MAKE(char, signed char)
CUDASHIM_MAKE(uchar, unsigned char)
CUDASHIM_MAKE(short, short)
CUDASHIM_MAKE(ushort, unsigned short)
CUDASHIM_MAKE(int, int)
CUDASHIM_MAKE(uint, unsigned int)
CUDASHIM_MAKE(long, long)
CUDASHIM_MAKE(ulong, unsigned long)
CUDASHIM_MAKE(longlong, long long)
CUDASHIM_MAKE(ulonglong, unsigned long long)
CUDASHIM_MAKE(float, float)
CUDASHIM_MAKE(double, double)

struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return uint3{x, y, z}; }
};

// Built-in indices: set by the scheduler before a fiber runs (GNU __thread: no TLS wrapper call).
extern __thread uint3 threadIdx;
extern __thread uint3 blockIdx;
extern __thread dim3 blockDim;
extern __thread dim3 gridDim;
static constexpr int warpSize = 32;

// ---------------------------------------------------------------- errors and runtime types
// Every value of CUDA 13's enum (driver_types.h): a program may compare with any of them.
enum cudaError {
  cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2,
  cudaErrorInitializationError = 3, cudaErrorCudartUnloading = 4, cudaErrorProfilerDisabled = 5,
  cudaErrorProfilerNotInitialized = 6, cudaErrorProfilerAlreadyStarted = 7,
  cudaErrorProfilerAlreadyStopped = 8, cudaErrorInvalidConfiguration = 9, cudaErrorInvalidPitchValue = 12,
  cudaErrorInvalidSymbol = 13, cudaErrorInvalidHostPointer = 16, cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidTexture = 18, cudaErrorInvalidTextureBinding = 19, cudaErrorInvalidChannelDescriptor = 20,
  cudaErrorInvalidMemcpyDirection = 21, cudaErrorAddressOfConstant = 22, cudaErrorTextureFetchFailed = 23,
  cudaErrorTextureNotBound = 24, cudaErrorSynchronizationError = 25, cudaErrorInvalidFilterSetting = 26,
  cudaErrorInvalidNormSetting = 27, cudaErrorMixedDeviceExecution = 28, cudaErrorNotYetImplemented = 31,
  cudaErrorMemoryValueTooLarge = 32, cudaErrorStubLibrary = 34, cudaErrorInsufficientDriver = 35,
  cudaErrorCallRequiresNewerDriver = 36, cudaErrorInvalidSurface = 37, cudaErrorDuplicateVariableName = 43,
  cudaErrorDuplicateTextureName = 44, cudaErrorDuplicateSurfaceName = 45, cudaErrorDevicesUnavailable = 46,
  cudaErrorIncompatibleDriverContext = 49, cudaErrorMissingConfiguration = 52,
  cudaErrorPriorLaunchFailure = 53, cudaErrorLaunchMaxDepthExceeded = 65, cudaErrorLaunchFileScopedTex = 66,
  cudaErrorLaunchFileScopedSurf = 67, cudaErrorSyncDepthExceeded = 68,
  cudaErrorLaunchPendingCountExceeded = 69, cudaErrorInvalidDeviceFunction = 98, cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101, cudaErrorDeviceNotLicensed = 102,
  cudaErrorSoftwareValidityNotEstablished = 103, cudaErrorStartupFailure = 127,
  cudaErrorInvalidKernelImage = 200, cudaErrorDeviceUninitialized = 201,
  cudaErrorMapBufferObjectFailed = 205, cudaErrorUnmapBufferObjectFailed = 206, cudaErrorArrayIsMapped = 207,
  cudaErrorAlreadyMapped = 208, cudaErrorNoKernelImageForDevice = 209, cudaErrorAlreadyAcquired = 210,
  cudaErrorNotMapped = 211, cudaErrorNotMappedAsArray = 212, cudaErrorNotMappedAsPointer = 213,
  cudaErrorECCUncorrectable = 214, cudaErrorUnsupportedLimit = 215, cudaErrorDeviceAlreadyInUse = 216,
  cudaErrorPeerAccessUnsupported = 217, cudaErrorInvalidPtx = 218, cudaErrorInvalidGraphicsContext = 219,
  cudaErrorNvlinkUncorrectable = 220, cudaErrorJitCompilerNotFound = 221,
  cudaErrorUnsupportedPtxVersion = 222, cudaErrorJitCompilationDisabled = 223,
  cudaErrorUnsupportedExecAffinity = 224, cudaErrorUnsupportedDevSideSync = 225, cudaErrorContained = 226,
  cudaErrorInvalidSource = 300, cudaErrorFileNotFound = 301, cudaErrorSharedObjectSymbolNotFound = 302,
  cudaErrorSharedObjectInitFailed = 303, cudaErrorOperatingSystem = 304,
  cudaErrorInvalidResourceHandle = 400, cudaErrorIllegalState = 401, cudaErrorLossyQuery = 402,
  cudaErrorSymbolNotFound = 500, cudaErrorNotReady = 600, cudaErrorIllegalAddress = 700,
  cudaErrorLaunchOutOfResources = 701, cudaErrorLaunchTimeout = 702,
  cudaErrorLaunchIncompatibleTexturing = 703, cudaErrorPeerAccessAlreadyEnabled = 704,
  cudaErrorPeerAccessNotEnabled = 705, cudaErrorSetOnActiveProcess = 708, cudaErrorContextIsDestroyed = 709,
  cudaErrorAssert = 710, cudaErrorTooManyPeers = 711, cudaErrorHostMemoryAlreadyRegistered = 712,
  cudaErrorHostMemoryNotRegistered = 713, cudaErrorHardwareStackError = 714,
  cudaErrorIllegalInstruction = 715, cudaErrorMisalignedAddress = 716, cudaErrorInvalidAddressSpace = 717,
  cudaErrorInvalidPc = 718, cudaErrorLaunchFailure = 719, cudaErrorCooperativeLaunchTooLarge = 720,
  cudaErrorTensorMemoryLeak = 721, cudaErrorNotPermitted = 800, cudaErrorNotSupported = 801,
  cudaErrorSystemNotReady = 802, cudaErrorSystemDriverMismatch = 803,
  cudaErrorCompatNotSupportedOnDevice = 804, cudaErrorMpsConnectionFailed = 805,
  cudaErrorMpsRpcFailure = 806, cudaErrorMpsServerNotReady = 807, cudaErrorMpsMaxClientsReached = 808,
  cudaErrorMpsMaxConnectionsReached = 809, cudaErrorMpsClientTerminated = 810,
  cudaErrorCdpNotSupported = 811, cudaErrorCdpVersionMismatch = 812, cudaErrorStreamCaptureUnsupported = 900,
  cudaErrorStreamCaptureInvalidated = 901, cudaErrorStreamCaptureMerge = 902,
  cudaErrorStreamCaptureUnmatched = 903, cudaErrorStreamCaptureUnjoined = 904,
  cudaErrorStreamCaptureIsolation = 905, cudaErrorStreamCaptureImplicit = 906, cudaErrorCapturedEvent = 907,
  cudaErrorStreamCaptureWrongThread = 908, cudaErrorTimeout = 909, cudaErrorGraphExecUpdateFailure = 910,
  cudaErrorExternalDevice = 911, cudaErrorInvalidClusterSize = 912, cudaErrorFunctionNotLoaded = 913,
  cudaErrorInvalidResourceType = 914, cudaErrorInvalidResourceConfiguration = 915, cudaErrorUnknown = 999,
  cudaErrorApiFailureBase = 10000,
};
typedef enum cudaError cudaError_t;

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};

struct CUstream_st;
struct CUevent_st;
typedef CUstream_st* cudaStream_t;
typedef CUevent_st* cudaEvent_t;
#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)
#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaEventDefault 0x00
#define cudaEventBlockingSync 0x01
#define cudaEventDisableTiming 0x02
#define cudaHostAllocDefault 0x00
#define cudaHostAllocPortable 0x01
#define cudaHostAllocMapped 0x02
#define cudaHostAllocWriteCombined 0x04
#define cudaHostRegisterDefault 0x00
#define cudaMemAttachGlobal 0x01
#define cudaMemAttachHost 0x02
#define cudaMemAttachSingle 0x04
#define cudaHostRegisterPortable 0x01
#define cudaHostRegisterMapped 0x02
#define cudaHostRegisterIoMemory 0x04
#define cudaHostRegisterReadOnly 0x08
#define cudaEventInterprocess 0x04
#define cudaEventRecordDefault 0x00
#define cudaEventRecordExternal 0x01
#define cudaEventWaitDefault 0x00
#define cudaEventWaitExternal 0x01
#define cudaOccupancyDefault 0x00
#define cudaOccupancyDisableCachingOverride 0x01
#define cudaInitDeviceFlagsAreValid 0x01
#define cudaArrayDefault 0x00
#define cudaPeerAccessDefault 0x00
#define cudaDeviceBlockingSync 0x04
#define cudaDeviceScheduleMask 0x07
#define cudaDeviceLmemResizeToMax 0x10
#define cudaDeviceSyncMemops 0x80
#define cudaDeviceMask 0xff
#define cudaDeviceScheduleAuto 0x00
#define cudaDeviceScheduleSpin 0x01
#define cudaDeviceScheduleYield 0x02
#define cudaDeviceScheduleBlockingSync 0x04
#define cudaDeviceMapHost 0x08
#define cudaCpuDeviceId (-1)
#define cudaInvalidDeviceId (-2)

enum cudaFuncCache { cudaFuncCachePreferNone, cudaFuncCachePreferShared, cudaFuncCachePreferL1, cudaFuncCachePreferEqual };
enum cudaSharedMemConfig { cudaSharedMemBankSizeDefault, cudaSharedMemBankSizeFourByte, cudaSharedMemBankSizeEightByte };
enum cudaFuncAttribute {
  cudaFuncAttributeMaxDynamicSharedMemorySize = 8, cudaFuncAttributePreferredSharedMemoryCarveout = 9,
  cudaFuncAttributeClusterDimMustBeSet = 10, cudaFuncAttributeRequiredClusterWidth = 11,
  cudaFuncAttributeRequiredClusterHeight = 12, cudaFuncAttributeRequiredClusterDepth = 13,
  cudaFuncAttributeNonPortableClusterSizeAllowed = 14, cudaFuncAttributeClusterSchedulingPolicyPreference = 15,
  cudaFuncAttributeMax
};
enum cudaLimit {
  cudaLimitStackSize = 0, cudaLimitPrintfFifoSize = 1, cudaLimitMallocHeapSize = 2, cudaLimitDevRuntimeSyncDepth = 3,
  cudaLimitDevRuntimePendingLaunchCount = 4, cudaLimitMaxL2FetchGranularity = 5, cudaLimitPersistingL2CacheSize = 6
};
enum cudaComputeMode {
  cudaComputeModeDefault = 0, cudaComputeModeExclusive = 1, cudaComputeModeProhibited = 2,
  cudaComputeModeExclusiveProcess = 3
};
enum cudaSharedCarveout { cudaSharedmemCarveoutDefault = -1, cudaSharedmemCarveoutMaxShared = 100, cudaSharedmemCarveoutMaxL1 = 0 };
enum cudaDeviceP2PAttr {
  cudaDevP2PAttrPerformanceRank = 1, cudaDevP2PAttrAccessSupported = 2, cudaDevP2PAttrNativeAtomicSupported = 3,
  cudaDevP2PAttrCudaArrayAccessSupported = 4, cudaDevP2PAttrOnlyPartialNativeAtomicSupported = 5
};
enum cudaMemoryAdvise { cudaMemAdviseSetReadMostly = 1, cudaMemAdviseUnsetReadMostly, cudaMemAdviseSetPreferredLocation, cudaMemAdviseUnsetPreferredLocation, cudaMemAdviseSetAccessedBy, cudaMemAdviseUnsetAccessedBy };
enum cudaMemoryType { cudaMemoryTypeUnregistered = 0, cudaMemoryTypeHost = 1, cudaMemoryTypeDevice = 2, cudaMemoryTypeManaged = 3 };
struct cudaPointerAttributes { enum cudaMemoryType type; int device; void* devicePointer; void* hostPointer; long reserved[8]; };

// Every attribute of CUDA 13's enum (driver_types.h); the runtime answers each (0 where the
// emulated device lacks the feature).
enum cudaDeviceAttr {
  cudaDevAttrMaxThreadsPerBlock = 1, cudaDevAttrMaxBlockDimX = 2, cudaDevAttrMaxBlockDimY = 3,
  cudaDevAttrMaxBlockDimZ = 4, cudaDevAttrMaxGridDimX = 5, cudaDevAttrMaxGridDimY = 6,
  cudaDevAttrMaxGridDimZ = 7, cudaDevAttrMaxSharedMemoryPerBlock = 8, cudaDevAttrTotalConstantMemory = 9,
  cudaDevAttrWarpSize = 10, cudaDevAttrMaxPitch = 11, cudaDevAttrMaxRegistersPerBlock = 12,
  cudaDevAttrClockRate = 13, cudaDevAttrTextureAlignment = 14, cudaDevAttrGpuOverlap = 15,
  cudaDevAttrMultiProcessorCount = 16, cudaDevAttrKernelExecTimeout = 17, cudaDevAttrIntegrated = 18,
  cudaDevAttrCanMapHostMemory = 19, cudaDevAttrComputeMode = 20, cudaDevAttrMaxTexture1DWidth = 21,
  cudaDevAttrMaxTexture2DWidth = 22, cudaDevAttrMaxTexture2DHeight = 23, cudaDevAttrMaxTexture3DWidth = 24,
  cudaDevAttrMaxTexture3DHeight = 25, cudaDevAttrMaxTexture3DDepth = 26,
  cudaDevAttrMaxTexture2DLayeredWidth = 27, cudaDevAttrMaxTexture2DLayeredHeight = 28,
  cudaDevAttrMaxTexture2DLayeredLayers = 29, cudaDevAttrSurfaceAlignment = 30,
  cudaDevAttrConcurrentKernels = 31, cudaDevAttrEccEnabled = 32, cudaDevAttrPciBusId = 33,
  cudaDevAttrPciDeviceId = 34, cudaDevAttrTccDriver = 35, cudaDevAttrMemoryClockRate = 36,
  cudaDevAttrGlobalMemoryBusWidth = 37, cudaDevAttrL2CacheSize = 38,
  cudaDevAttrMaxThreadsPerMultiProcessor = 39, cudaDevAttrAsyncEngineCount = 40,
  cudaDevAttrUnifiedAddressing = 41, cudaDevAttrMaxTexture1DLayeredWidth = 42,
  cudaDevAttrMaxTexture1DLayeredLayers = 43, cudaDevAttrMaxTexture2DGatherWidth = 45,
  cudaDevAttrMaxTexture2DGatherHeight = 46, cudaDevAttrMaxTexture3DWidthAlt = 47,
  cudaDevAttrMaxTexture3DHeightAlt = 48, cudaDevAttrMaxTexture3DDepthAlt = 49, cudaDevAttrPciDomainId = 50,
  cudaDevAttrTexturePitchAlignment = 51, cudaDevAttrMaxTextureCubemapWidth = 52,
  cudaDevAttrMaxTextureCubemapLayeredWidth = 53, cudaDevAttrMaxTextureCubemapLayeredLayers = 54,
  cudaDevAttrMaxSurface1DWidth = 55, cudaDevAttrMaxSurface2DWidth = 56, cudaDevAttrMaxSurface2DHeight = 57,
  cudaDevAttrMaxSurface3DWidth = 58, cudaDevAttrMaxSurface3DHeight = 59, cudaDevAttrMaxSurface3DDepth = 60,
  cudaDevAttrMaxSurface1DLayeredWidth = 61, cudaDevAttrMaxSurface1DLayeredLayers = 62,
  cudaDevAttrMaxSurface2DLayeredWidth = 63, cudaDevAttrMaxSurface2DLayeredHeight = 64,
  cudaDevAttrMaxSurface2DLayeredLayers = 65, cudaDevAttrMaxSurfaceCubemapWidth = 66,
  cudaDevAttrMaxSurfaceCubemapLayeredWidth = 67, cudaDevAttrMaxSurfaceCubemapLayeredLayers = 68,
  cudaDevAttrMaxTexture1DLinearWidth = 69, cudaDevAttrMaxTexture2DLinearWidth = 70,
  cudaDevAttrMaxTexture2DLinearHeight = 71, cudaDevAttrMaxTexture2DLinearPitch = 72,
  cudaDevAttrMaxTexture2DMipmappedWidth = 73, cudaDevAttrMaxTexture2DMipmappedHeight = 74,
  cudaDevAttrComputeCapabilityMajor = 75, cudaDevAttrComputeCapabilityMinor = 76,
  cudaDevAttrMaxTexture1DMipmappedWidth = 77, cudaDevAttrStreamPrioritiesSupported = 78,
  cudaDevAttrGlobalL1CacheSupported = 79, cudaDevAttrLocalL1CacheSupported = 80,
  cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81, cudaDevAttrMaxRegistersPerMultiprocessor = 82,
  cudaDevAttrManagedMemory = 83, cudaDevAttrIsMultiGpuBoard = 84, cudaDevAttrMultiGpuBoardGroupID = 85,
  cudaDevAttrHostNativeAtomicSupported = 86, cudaDevAttrSingleToDoublePrecisionPerfRatio = 87,
  cudaDevAttrPageableMemoryAccess = 88, cudaDevAttrConcurrentManagedAccess = 89,
  cudaDevAttrComputePreemptionSupported = 90, cudaDevAttrCanUseHostPointerForRegisteredMem = 91,
  cudaDevAttrReserved92 = 92, cudaDevAttrReserved93 = 93, cudaDevAttrReserved94 = 94,
  cudaDevAttrCooperativeLaunch = 95, cudaDevAttrReserved96 = 96,
  cudaDevAttrMaxSharedMemoryPerBlockOptin = 97, cudaDevAttrCanFlushRemoteWrites = 98,
  cudaDevAttrHostRegisterSupported = 99, cudaDevAttrPageableMemoryAccessUsesHostPageTables = 100,
  cudaDevAttrDirectManagedMemAccessFromHost = 101, cudaDevAttrMaxBlocksPerMultiprocessor = 106,
  cudaDevAttrMaxPersistingL2CacheSize = 108, cudaDevAttrMaxAccessPolicyWindowSize = 109,
  cudaDevAttrReservedSharedMemoryPerBlock = 111, cudaDevAttrSparseCudaArraySupported = 112,
  cudaDevAttrHostRegisterReadOnlySupported = 113, cudaDevAttrTimelineSemaphoreInteropSupported = 114,
  cudaDevAttrMemoryPoolsSupported = 115, cudaDevAttrGPUDirectRDMASupported = 116,
  cudaDevAttrGPUDirectRDMAFlushWritesOptions = 117, cudaDevAttrGPUDirectRDMAWritesOrdering = 118,
  cudaDevAttrMemoryPoolSupportedHandleTypes = 119, cudaDevAttrClusterLaunch = 120,
  cudaDevAttrDeferredMappingCudaArraySupported = 121, cudaDevAttrReserved122 = 122,
  cudaDevAttrReserved123 = 123, cudaDevAttrReserved124 = 124, cudaDevAttrIpcEventSupport = 125,
  cudaDevAttrMemSyncDomainCount = 126, cudaDevAttrReserved127 = 127, cudaDevAttrReserved128 = 128,
  cudaDevAttrReserved129 = 129, cudaDevAttrNumaConfig = 130, cudaDevAttrNumaId = 131,
  cudaDevAttrReserved132 = 132, cudaDevAttrMpsEnabled = 133, cudaDevAttrHostNumaId = 134,
  cudaDevAttrD3D12CigSupported = 135, cudaDevAttrVulkanCigSupported = 138, cudaDevAttrGpuPciDeviceId = 139,
  cudaDevAttrGpuPciSubsystemId = 140, cudaDevAttrReserved141 = 141,
  cudaDevAttrHostNumaMemoryPoolsSupported = 142, cudaDevAttrHostNumaMultinodeIpcSupported = 143,
  cudaDevAttrHostMemoryPoolsSupported = 144, cudaDevAttrReserved145 = 145,
  cudaDevAttrOnlyPartialHostNativeAtomicSupported = 147,
};

struct cudaDeviceProp {
  char name[256];
  char uuid[16];
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  int regsPerBlock;
  int warpSize;
  size_t memPitch;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int clockRate;
  size_t totalConstMem;
  int major;
  int minor;
  size_t textureAlignment;
  int deviceOverlap;
  int multiProcessorCount;
  int kernelExecTimeoutEnabled;
  int integrated;
  int canMapHostMemory;
  int computeMode;
  int concurrentKernels;
  int ECCEnabled;
  int pciBusID;
  int pciDeviceID;
  int pciDomainID;
  int asyncEngineCount;
  int unifiedAddressing;
  int memoryClockRate;
  int memoryBusWidth;
  int l2CacheSize;
  int persistingL2CacheMaxSize;
  int maxThreadsPerMultiProcessor;
  int streamPrioritiesSupported;
  int globalL1CacheSupported;
  int localL1CacheSupported;
  size_t sharedMemPerMultiprocessor;
  int regsPerMultiprocessor;
  int managedMemory;
  int isMultiGpuBoard;
  int multiGpuBoardGroupID;
  int pageableMemoryAccess;
  int concurrentManagedAccess;
  int computePreemptionSupported;
  int cooperativeLaunch;
  int cooperativeMultiDeviceLaunch;
  size_t sharedMemPerBlockOptin;
  int maxBlocksPerMultiProcessor;
  int accessPolicyMaxWindowSize;
  size_t reservedSharedMemPerBlock;
  // The rest of CUDA 13's fields (a program may print any of them).
  char luid[8];
  unsigned int luidDeviceNodeMask;
  size_t texturePitchAlignment;
  int maxTexture1D;
  int maxTexture1DMipmap;
  int maxTexture2D[2];
  int maxTexture2DMipmap[2];
  int maxTexture2DLinear[3];
  int maxTexture2DGather[2];
  int maxTexture3D[3];
  int maxTexture3DAlt[3];
  int maxTextureCubemap;
  int maxTexture1DLayered[2];
  int maxTexture2DLayered[3];
  int maxTextureCubemapLayered[2];
  int maxSurface1D;
  int maxSurface2D[2];
  int maxSurface3D[3];
  int maxSurface1DLayered[2];
  int maxSurface2DLayered[3];
  int maxSurfaceCubemap;
  int maxSurfaceCubemapLayered[2];
  size_t surfaceAlignment;
  int tccDriver;
  int hostNativeAtomicSupported;
  int singleToDoublePrecisionPerfRatio;
  int canUseHostPointerForRegisteredMem;
  int pageableMemoryAccessUsesHostPageTables;
  int directManagedMemAccessFromHost;
  int hostRegisterSupported;
  int sparseCudaArraySupported;
  int hostRegisterReadOnlySupported;
  int timelineSemaphoreInteropSupported;
  int memoryPoolsSupported;
  int gpuDirectRDMASupported;
  unsigned int gpuDirectRDMAFlushWritesOptions;
  int gpuDirectRDMAWritesOrdering;
  unsigned int memoryPoolSupportedHandleTypes;
  int deferredMappingCudaArraySupported;
  int ipcEventSupported;
  int clusterLaunch;
  int unifiedFunctionPointers;
  int deviceNumaConfig;
  int deviceNumaId;
  int mpsEnabled;
  int hostNumaId;
  unsigned int gpuPciDeviceID;
  unsigned int gpuPciSubsystemID;
  int hostNumaMultinodeIpcSupported;
  int reserved[56];
};

struct cudaFuncAttributes {
  size_t sharedSizeBytes;
  size_t constSizeBytes;
  size_t localSizeBytes;
  int maxThreadsPerBlock;
  int numRegs;
  int ptxVersion;
  int binaryVersion;
  int cacheModeCA;
  int maxDynamicSharedSizeBytes;
  int preferredShmemCarveout;
  int clusterDimMustBeSet;
  int requiredClusterWidth;
  int requiredClusterHeight;
  int requiredClusterDepth;
  int clusterSchedulingPolicyPreference;
  int nonPortableClusterSizeAllowed;
  int reserved[16];
};

struct cudaPitchedPtr { void* ptr; size_t pitch; size_t xsize; size_t ysize; };
struct cudaExtent { size_t width; size_t height; size_t depth; };
struct cudaPos { size_t x; size_t y; size_t z; };
inline cudaPitchedPtr make_cudaPitchedPtr(void* d, size_t p, size_t xs, size_t ys) { return {d, p, xs, ys}; }
inline cudaExtent make_cudaExtent(size_t w, size_t h, size_t d) { return {w, h, d}; }
inline cudaPos make_cudaPos(size_t x, size_t y, size_t z) { return {x, y, z}; }

typedef void (*cudaHostFn_t)(void* userData);
typedef void (*cudaStreamCallback_t)(cudaStream_t stream, cudaError_t status, void* userData);

// ---------------------------------------------------------------- runtime API
cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();
const char* cudaGetErrorString(cudaError_t e);
const char* cudaGetErrorName(cudaError_t e);
cudaError_t cudaMalloc(void** p, size_t n);
cudaError_t cudaMallocManaged(void** p, size_t n, unsigned int flags = cudaMemAttachGlobal);
cudaError_t cudaMallocHost(void** p, size_t n);
cudaError_t cudaHostAlloc(void** p, size_t n, unsigned int flags);
cudaError_t cudaMallocPitch(void** p, size_t* pitch, size_t width, size_t height);
cudaError_t cudaMalloc3D(cudaPitchedPtr* p, cudaExtent e);
cudaError_t cudaMallocAsync(void** p, size_t n, cudaStream_t s);
cudaError_t cudaFree(void* p);
cudaError_t cudaFreeHost(void* p);
cudaError_t cudaFreeAsync(void* p, cudaStream_t s);
cudaError_t cudaHostRegister(void* p, size_t n, unsigned int flags);
cudaError_t cudaHostUnregister(void* p);
cudaError_t cudaHostGetDevicePointer(void** d, void* h, unsigned int flags);
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* a, const void* p);
cudaError_t cudaMemcpy(void* dst, const void* src, size_t n, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t n, cudaMemcpyKind kind, cudaStream_t s = 0);
cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height, cudaMemcpyKind kind);
cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height, cudaMemcpyKind kind, cudaStream_t s = 0);
cudaError_t cudaMemcpyPeer(void* dst, int dd, const void* src, int sd, size_t n);
cudaError_t cudaMemset(void* p, int v, size_t n);
cudaError_t cudaMemsetAsync(void* p, int v, size_t n, cudaStream_t s = 0);
cudaError_t cudaMemset2D(void* p, size_t pitch, int v, size_t width, size_t height);
cudaError_t cudaMemPrefetchAsync(const void* p, size_t n, int device, cudaStream_t s = 0);
enum cudaMemLocationType { cudaMemLocationTypeInvalid = 0, cudaMemLocationTypeDevice = 1, cudaMemLocationTypeHost = 2, cudaMemLocationTypeHostNuma = 3, cudaMemLocationTypeHostNumaCurrent = 4 };
struct cudaMemLocation { enum cudaMemLocationType type; int id; };
// The CUDA 12.2+/13 signatures: unified memory is host memory here, so these do nothing.
inline cudaError_t cudaMemPrefetchAsync(const void*, size_t, cudaMemLocation, unsigned int, cudaStream_t = 0) { return cudaSuccess; }
cudaError_t cudaMemAdvise(const void* p, size_t n, cudaMemoryAdvise advice, int device);
inline cudaError_t cudaMemAdvise(const void*, size_t, cudaMemoryAdvise, cudaMemLocation) { return cudaSuccess; }
cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaThreadSynchronize();
cudaError_t cudaDeviceReset();
cudaError_t cudaThreadExit();
cudaError_t cudaSetDevice(int d);
cudaError_t cudaGetDevice(int* d);
cudaError_t cudaGetDeviceCount(int* n);
cudaError_t cudaSetDeviceFlags(unsigned int flags);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int d);
cudaError_t cudaDeviceGetAttribute(int* v, cudaDeviceAttr a, int d);
cudaError_t cudaDeviceSetLimit(cudaLimit l, size_t v);
cudaError_t cudaDeviceGetLimit(size_t* v, cudaLimit l);
cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache c);
cudaError_t cudaDeviceSetSharedMemConfig(cudaSharedMemConfig c);
cudaError_t cudaDriverGetVersion(int* v);
cudaError_t cudaRuntimeGetVersion(int* v);
cudaError_t cudaDeviceCanAccessPeer(int* can, int d, int peer);
cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int flags);
cudaError_t cudaStreamCreate(cudaStream_t* s);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned int flags);
cudaError_t cudaStreamCreateWithPriority(cudaStream_t* s, unsigned int flags, int priority);
cudaError_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest);
cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaStreamSynchronize(cudaStream_t s);
cudaError_t cudaStreamQuery(cudaStream_t s);
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int flags = 0);
cudaError_t cudaStreamAddCallback(cudaStream_t s, cudaStreamCallback_t cb, void* data, unsigned int flags);
cudaError_t cudaLaunchHostFunc(cudaStream_t s, cudaHostFn_t fn, void* data);
// CUDA graphs (runtime): stream capture and explicit graphs, replayed in dependency order.
struct CUgraph_st;
struct CUgraphExec_st;
struct CUgraphNode_st;
typedef CUgraph_st* cudaGraph_t;
typedef CUgraphExec_st* cudaGraphExec_t;
typedef CUgraphNode_st* cudaGraphNode_t;
enum cudaStreamCaptureMode {
  cudaStreamCaptureModeGlobal = 0,
  cudaStreamCaptureModeThreadLocal = 1,
  cudaStreamCaptureModeRelaxed = 2,
};
enum cudaStreamCaptureStatus {
  cudaStreamCaptureStatusNone = 0,
  cudaStreamCaptureStatusActive = 1,
  cudaStreamCaptureStatusInvalidated = 2,
};
enum cudaGraphNodeType {
  cudaGraphNodeTypeKernel = 0,
  cudaGraphNodeTypeMemcpy = 1,
  cudaGraphNodeTypeMemset = 2,
  cudaGraphNodeTypeHost = 3,
  cudaGraphNodeTypeGraph = 4,
  cudaGraphNodeTypeEmpty = 5,
  cudaGraphNodeTypeWaitEvent = 6,
  cudaGraphNodeTypeEventRecord = 7,
  cudaGraphNodeTypeExtSemaphoreSignal = 8,
  cudaGraphNodeTypeExtSemaphoreWait = 9,
  cudaGraphNodeTypeMemAlloc = 10,
  cudaGraphNodeTypeMemFree = 11,
  cudaGraphNodeTypeConditional = 13,
  cudaGraphNodeTypeCount,
};
// cudaGraphExecUpdate's verdict (CUDA 12's form returns it in a cudaGraphExecUpdateResultInfo).
enum cudaGraphExecUpdateResult {
  cudaGraphExecUpdateSuccess = 0x0,
  cudaGraphExecUpdateError = 0x1,
  cudaGraphExecUpdateErrorTopologyChanged = 0x2,
  cudaGraphExecUpdateErrorNodeTypeChanged = 0x3,
  cudaGraphExecUpdateErrorFunctionChanged = 0x4,
  cudaGraphExecUpdateErrorParametersChanged = 0x5,
  cudaGraphExecUpdateErrorNotSupported = 0x6,
  cudaGraphExecUpdateErrorUnsupportedFunctionChange = 0x7,
  cudaGraphExecUpdateErrorAttributesChanged = 0x8,
};
struct cudaGraphExecUpdateResultInfo {
  enum cudaGraphExecUpdateResult result;
  cudaGraphNode_t errorNode;
  cudaGraphNode_t errorFromNode;
};
enum cudaGraphInstantiateResult {
  cudaGraphInstantiateSuccess = 0,
  cudaGraphInstantiateError = 1,
  cudaGraphInstantiateInvalidStructure = 2,
  cudaGraphInstantiateNodeOperationNotSupported = 3,
  cudaGraphInstantiateMultipleDevicesNotSupported = 4,
  cudaGraphInstantiateConditionalHandleUnused = 5,
};
struct cudaGraphInstantiateParams {
  unsigned long long flags;
  cudaStream_t uploadStream;
  cudaGraphNode_t errNode_out;
  enum cudaGraphInstantiateResult result_out;
};
// Graph memory (memory allocation and free nodes): its footprint on the device.
enum cudaGraphMemAttributeType {
  cudaGraphMemAttrUsedMemCurrent = 0x0,
  cudaGraphMemAttrUsedMemHigh = 0x1,
  cudaGraphMemAttrReservedMemCurrent = 0x2,
  cudaGraphMemAttrReservedMemHigh = 0x3,
};
// Conditional nodes (CUDA 12.4+): a handle's value, set by kernels (cudaGraphSetConditional),
// decides whether (if), how often (while) or which (switch) body graph runs.
typedef unsigned long long cudaGraphConditionalHandle;
enum cudaGraphConditionalHandleFlags { cudaGraphCondAssignDefault = 1 };
enum cudaGraphConditionalNodeType {
  cudaGraphCondTypeIf = 0,
  cudaGraphCondTypeWhile = 1,
  cudaGraphCondTypeSwitch = 2,
};
enum cudaStreamUpdateCaptureDependenciesFlags {
  cudaStreamAddCaptureDependencies = 0x0,
  cudaStreamSetCaptureDependencies = 0x1,
};
enum cudaGraphDependencyType { cudaGraphDependencyTypeDefault = 0, cudaGraphDependencyTypeProgrammatic = 1 };
enum cudaGraphDebugDotFlags {
  cudaGraphDebugDotFlagsVerbose = 1 << 0,
  cudaGraphDebugDotFlagsKernelNodeParams = 1 << 2,
  cudaGraphDebugDotFlagsMemcpyNodeParams = 1 << 3,
  cudaGraphDebugDotFlagsMemsetNodeParams = 1 << 4,
  cudaGraphDebugDotFlagsHostNodeParams = 1 << 5,
  cudaGraphDebugDotFlagsEventNodeParams = 1 << 6,
  cudaGraphDebugDotFlagsExtSemasSignalNodeParams = 1 << 7,
  cudaGraphDebugDotFlagsExtSemasWaitNodeParams = 1 << 8,
  cudaGraphDebugDotFlagsKernelNodeAttributes = 1 << 9,
  cudaGraphDebugDotFlagsHandles = 1 << 10,
  cudaGraphDebugDotFlagsConditionalNodeParams = 1 << 15,
};
#define cudaGraphKernelNodePortDefault 0
#define cudaGraphKernelNodePortProgrammatic 1
#define cudaGraphKernelNodePortLaunchCompletion 2
#define cudaGraphInstantiateFlagAutoFreeOnLaunch 1
#define cudaGraphInstantiateFlagUpload 2
#define cudaGraphInstantiateFlagDeviceLaunch 4
#define cudaGraphInstantiateFlagUseNodePriority 8
struct cudaKernelNodeParams {
  void* func;
  dim3 gridDim;
  dim3 blockDim;
  unsigned int sharedMemBytes;
  void** kernelParams;
  void** extra;
};
struct cudaMemsetParams {
  void* dst;
  size_t pitch;
  unsigned int value;
  unsigned int elementSize;
  size_t width;
  size_t height;
};
struct cudaHostNodeParams {
  cudaHostFn_t fn;
  void* userData;
};
cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t* g);
cudaError_t cudaStreamIsCapturing(cudaStream_t s, cudaStreamCaptureStatus* status);
cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode* mode);
cudaError_t cudaGraphCreate(cudaGraph_t* g, unsigned int flags);
cudaError_t cudaGraphDestroy(cudaGraph_t g);
cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t* n, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps,
                                   const cudaKernelNodeParams* p);
cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t* n, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps,
                                     void* dst, const void* src, size_t count, cudaMemcpyKind kind);
cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t* n, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps,
                                   const cudaMemsetParams* p);
cudaError_t cudaGraphAddHostNode(cudaGraphNode_t* n, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps,
                                 const cudaHostNodeParams* p);
cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t* n, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps);
cudaError_t cudaGraphAddDependencies(cudaGraph_t g, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                     size_t n);
struct cudaGraphEdgeData {  // CUDA 13's form takes edge data (ports, type): plain edges here
  unsigned char from_port;
  unsigned char reserved[5];
  unsigned char to_port;
  unsigned char type;
};
inline cudaError_t cudaGraphAddDependencies(cudaGraph_t g, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                            const cudaGraphEdgeData*, size_t n) {
  return cudaGraphAddDependencies(g, from, to, n);
}
cudaError_t cudaGraphGetNodes(cudaGraph_t g, cudaGraphNode_t* nodes, size_t* count);
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* e, cudaGraph_t g, unsigned long long flags = 0);
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* e, cudaGraph_t g, cudaGraphNode_t* error_node, char* log,
                                 size_t log_size);
cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* e, cudaGraph_t g, unsigned long long flags = 0);
cudaError_t cudaGraphLaunch(cudaGraphExec_t e, cudaStream_t s);
cudaError_t cudaGraphUpload(cudaGraphExec_t e, cudaStream_t s);
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t e);
// More of CUDA 12/13's graph API: copies by cudaMemcpy3DParms, node queries and parameters,
// clones, child graphs, event nodes, updates of an instantiated graph, memory nodes (graph
// allocations come from the emulated device's allocator, as cudaMalloc's do), conditional nodes.
// The forms CUDA 13 gave edge data (cudaGraphEdgeData) are overloads: plain edges here.
struct cudaMemcpy3DParms;      // texture_types.h
struct cudaMemAllocNodeParams;  // below, after cudaMemPoolProps
struct cudaGraphNodeParams;     // at the end (it holds a cudaMemcpy3DParms)
cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t* n, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps,
                                   const cudaMemcpy3DParms* p);
cudaError_t cudaGraphMemcpyNodeGetParams(cudaGraphNode_t n, cudaMemcpy3DParms* p);
cudaError_t cudaGraphMemcpyNodeSetParams(cudaGraphNode_t n, const cudaMemcpy3DParms* p);
cudaError_t cudaGraphMemcpyNodeSetParams1D(cudaGraphNode_t n, void* dst, const void* src, size_t count,
                                           cudaMemcpyKind kind);
cudaError_t cudaGraphKernelNodeGetParams(cudaGraphNode_t n, cudaKernelNodeParams* p);
cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t n, const cudaKernelNodeParams* p);
cudaError_t cudaGraphMemsetNodeGetParams(cudaGraphNode_t n, cudaMemsetParams* p);
cudaError_t cudaGraphMemsetNodeSetParams(cudaGraphNode_t n, const cudaMemsetParams* p);
cudaError_t cudaGraphHostNodeGetParams(cudaGraphNode_t n, cudaHostNodeParams* p);
cudaError_t cudaGraphHostNodeSetParams(cudaGraphNode_t n, const cudaHostNodeParams* p);
cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t* n, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps,
                                       cudaGraph_t child);
cudaError_t cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t n, cudaGraph_t* child);
cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t* n, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps,
                                        cudaEvent_t e);
cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t* n, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps,
                                      cudaEvent_t e);
cudaError_t cudaGraphEventRecordNodeGetEvent(cudaGraphNode_t n, cudaEvent_t* e);
cudaError_t cudaGraphEventRecordNodeSetEvent(cudaGraphNode_t n, cudaEvent_t e);
cudaError_t cudaGraphEventWaitNodeGetEvent(cudaGraphNode_t n, cudaEvent_t* e);
cudaError_t cudaGraphEventWaitNodeSetEvent(cudaGraphNode_t n, cudaEvent_t e);
cudaError_t cudaGraphClone(cudaGraph_t* clone, cudaGraph_t original);
cudaError_t cudaGraphNodeFindInClone(cudaGraphNode_t* n, cudaGraphNode_t original, cudaGraph_t clone);
cudaError_t cudaGraphNodeGetType(cudaGraphNode_t n, cudaGraphNodeType* type);
cudaError_t cudaGraphGetRootNodes(cudaGraph_t g, cudaGraphNode_t* nodes, size_t* count);
cudaError_t cudaGraphGetEdges(cudaGraph_t g, cudaGraphNode_t* from, cudaGraphNode_t* to, size_t* count);
cudaError_t cudaGraphGetEdges(cudaGraph_t g, cudaGraphNode_t* from, cudaGraphNode_t* to, cudaGraphEdgeData* edges,
                              size_t* count);
cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t n, cudaGraphNode_t* deps, size_t* count);
cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t n, cudaGraphNode_t* deps, cudaGraphEdgeData* edges,
                                         size_t* count);
cudaError_t cudaGraphNodeGetDependentNodes(cudaGraphNode_t n, cudaGraphNode_t* nodes, size_t* count);
cudaError_t cudaGraphNodeGetDependentNodes(cudaGraphNode_t n, cudaGraphNode_t* nodes, cudaGraphEdgeData* edges,
                                           size_t* count);
cudaError_t cudaGraphRemoveDependencies(cudaGraph_t g, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                        size_t n);
inline cudaError_t cudaGraphRemoveDependencies(cudaGraph_t g, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                               const cudaGraphEdgeData*, size_t n) {
  return cudaGraphRemoveDependencies(g, from, to, n);
}
cudaError_t cudaGraphDestroyNode(cudaGraphNode_t n);
cudaError_t cudaGraphInstantiateWithParams(cudaGraphExec_t* e, cudaGraph_t g, cudaGraphInstantiateParams* params);
cudaError_t cudaGraphExecGetFlags(cudaGraphExec_t e, unsigned long long* flags);
cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t e, cudaGraphNode_t n, const cudaKernelNodeParams* p);
cudaError_t cudaGraphExecMemcpyNodeSetParams(cudaGraphExec_t e, cudaGraphNode_t n, const cudaMemcpy3DParms* p);
cudaError_t cudaGraphExecMemcpyNodeSetParams1D(cudaGraphExec_t e, cudaGraphNode_t n, void* dst, const void* src,
                                               size_t count, cudaMemcpyKind kind);
cudaError_t cudaGraphExecMemsetNodeSetParams(cudaGraphExec_t e, cudaGraphNode_t n, const cudaMemsetParams* p);
cudaError_t cudaGraphExecHostNodeSetParams(cudaGraphExec_t e, cudaGraphNode_t n, const cudaHostNodeParams* p);
cudaError_t cudaGraphExecEventRecordNodeSetEvent(cudaGraphExec_t e, cudaGraphNode_t n, cudaEvent_t ev);
cudaError_t cudaGraphExecEventWaitNodeSetEvent(cudaGraphExec_t e, cudaGraphNode_t n, cudaEvent_t ev);
cudaError_t cudaGraphNodeSetEnabled(cudaGraphExec_t e, cudaGraphNode_t n, unsigned int enabled);
cudaError_t cudaGraphNodeGetEnabled(cudaGraphExec_t e, cudaGraphNode_t n, unsigned int* enabled);
// CUDA 12's form; CUDA 11's (error node and result apart) stays in cuda_runtime.h's C++ API.
cudaError_t cudaGraphExecUpdate(cudaGraphExec_t e, cudaGraph_t g, cudaGraphExecUpdateResultInfo* info);
inline cudaError_t cudaGraphExecUpdate(cudaGraphExec_t e, cudaGraph_t g, cudaGraphNode_t* error_node,
                                       cudaGraphExecUpdateResult* result) {
  cudaGraphExecUpdateResultInfo info{};
  cudaError_t r = cudaGraphExecUpdate(e, g, &info);
  if (error_node) *error_node = info.errorNode;
  if (result) *result = info.result;
  return r;
}
cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t* n, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps,
                                     cudaMemAllocNodeParams* p);
cudaError_t cudaGraphMemAllocNodeGetParams(cudaGraphNode_t n, cudaMemAllocNodeParams* p);
cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t* n, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps,
                                    void* dptr);
cudaError_t cudaGraphMemFreeNodeGetParams(cudaGraphNode_t n, void* dptr_out);
cudaError_t cudaDeviceGraphMemTrim(int device);
cudaError_t cudaDeviceGetGraphMemAttribute(int device, cudaGraphMemAttributeType attr, void* value);
cudaError_t cudaDeviceSetGraphMemAttribute(int device, cudaGraphMemAttributeType attr, void* value);
cudaError_t cudaGraphConditionalHandleCreate(cudaGraphConditionalHandle* handle, cudaGraph_t g,
                                             unsigned int defaultLaunchValue = 0, unsigned int flags = 0);
cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t s, cudaGraph_t g, const cudaGraphNode_t* deps,
                                          const cudaGraphEdgeData* edges, size_t ndeps, cudaStreamCaptureMode mode);
cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t s, cudaGraphNode_t* deps, size_t ndeps,
                                                unsigned int flags = 0);
inline cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t s, cudaGraphNode_t* deps, const cudaGraphEdgeData*,
                                                       size_t ndeps, unsigned int flags = 0) {
  return cudaStreamUpdateCaptureDependencies(s, deps, ndeps, flags);
}
namespace cudashim {
void graph_set_conditional(cudaGraphConditionalHandle h, unsigned int value);  // in the runtime
}
// Device side: sets the handle's value for the graph launch the calling kernel belongs to.
inline void cudaGraphSetConditional(cudaGraphConditionalHandle h, unsigned int value) {
  cudashim::graph_set_conditional(h, value);
}
cudaError_t cudaEventCreate(cudaEvent_t* e);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned int flags);
cudaError_t cudaEventDestroy(cudaEvent_t e);
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s = 0);
cudaError_t cudaEventSynchronize(cudaEvent_t e);
cudaError_t cudaEventQuery(cudaEvent_t e);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaProfilerStart();
cudaError_t cudaProfilerStop();

// More of the runtime API (CUDA 13's cuda_runtime_api.h) that the one emulated device answers
// faithfully: device queries and flags, stream and event variants, 2D/3D fills, peer copies on
// the one device, stream-ordered memory pools, unified-memory hints (no-ops: it is host memory).
cudaError_t cudaChooseDevice(int* device, const cudaDeviceProp* prop);
cudaError_t cudaInitDevice(int device, unsigned int deviceFlags, unsigned int flags);
cudaError_t cudaGetDeviceFlags(unsigned int* flags);
cudaError_t cudaSetValidDevices(int* devices, int n);
cudaError_t cudaDeviceGetByPCIBusId(int* device, const char* pciBusId);
cudaError_t cudaDeviceGetPCIBusId(char* pciBusId, int len, int device);
cudaError_t cudaDeviceGetCacheConfig(cudaFuncCache* c);
cudaError_t cudaDeviceGetSharedMemConfig(cudaSharedMemConfig* c);
cudaError_t cudaDeviceDisablePeerAccess(int peer);
cudaError_t cudaDeviceGetP2PAttribute(int* value, cudaDeviceP2PAttr attr, int src, int dst);
cudaError_t cudaDeviceGetTexture1DLinearMaxWidth(size_t* maxWidth, const struct cudaChannelFormatDesc* desc, int device);
cudaError_t cudaCtxResetPersistingL2Cache();
cudaError_t cudaStreamGetFlags(cudaStream_t s, unsigned int* flags);
cudaError_t cudaStreamGetPriority(cudaStream_t s, int* priority);
cudaError_t cudaStreamGetDevice(cudaStream_t s, int* device);
cudaError_t cudaStreamGetId(cudaStream_t s, unsigned long long* id);
// Unified memory is host memory here: attaching it to a stream changes nothing.
cudaError_t cudaStreamAttachMemAsync(cudaStream_t s, void* p, size_t length = 0, unsigned int flags = cudaMemAttachSingle);
template <class _Tp>
cudaError_t cudaStreamAttachMemAsync(cudaStream_t s, _Tp* p, size_t length = 0, unsigned int flags = cudaMemAttachSingle) {
  return cudaStreamAttachMemAsync(s, (void*)p, length, flags);
}
cudaError_t cudaStreamGetCaptureInfo(cudaStream_t s, cudaStreamCaptureStatus* status, unsigned long long* id = 0,
                                     cudaGraph_t* graph = 0, const cudaGraphNode_t** deps = 0,
                                     const cudaGraphEdgeData** edgeData = 0, size_t* numDeps = 0);
// CUDA 12's form (the dependency count sixth, no edge data) and its _v2/_v3 names.
template <class _Np, std::enable_if_t<std::is_same_v<_Np, size_t*>, int> = 0>
cudaError_t cudaStreamGetCaptureInfo(cudaStream_t s, cudaStreamCaptureStatus* status, unsigned long long* id,
                                     cudaGraph_t* graph, const cudaGraphNode_t** deps, _Np numDeps) {
  return cudaStreamGetCaptureInfo(s, status, id, graph, deps, (const cudaGraphEdgeData**)0, numDeps);
}
inline cudaError_t cudaStreamGetCaptureInfo_v2(cudaStream_t s, cudaStreamCaptureStatus* status,
                                               unsigned long long* id = 0, cudaGraph_t* graph = 0,
                                               const cudaGraphNode_t** deps = 0, size_t* numDeps = 0) {
  return cudaStreamGetCaptureInfo(s, status, id, graph, deps, (const cudaGraphEdgeData**)0, numDeps);
}
inline cudaError_t cudaStreamGetCaptureInfo_v3(cudaStream_t s, cudaStreamCaptureStatus* status,
                                               unsigned long long* id = 0, cudaGraph_t* graph = 0,
                                               const cudaGraphNode_t** deps = 0,
                                               const cudaGraphEdgeData** edgeData = 0, size_t* numDeps = 0) {
  return cudaStreamGetCaptureInfo(s, status, id, graph, deps, edgeData, numDeps);
}
cudaError_t cudaEventRecordWithFlags(cudaEvent_t e, cudaStream_t s = 0, unsigned int flags = 0);
cudaError_t cudaHostGetFlags(unsigned int* flags, void* p);
cudaError_t cudaMemcpyPeerAsync(void* dst, int dd, const void* src, int sd, size_t n, cudaStream_t s = 0);
cudaError_t cudaMemset2DAsync(void* p, size_t pitch, int v, size_t width, size_t height, cudaStream_t s = 0);
cudaError_t cudaMemset3D(cudaPitchedPtr p, int v, cudaExtent e);
cudaError_t cudaMemset3DAsync(cudaPitchedPtr p, int v, cudaExtent e, cudaStream_t s = 0);
enum cudaMemRangeAttribute {
  cudaMemRangeAttributeReadMostly = 1, cudaMemRangeAttributePreferredLocation = 2, cudaMemRangeAttributeAccessedBy = 3,
  cudaMemRangeAttributeLastPrefetchLocation = 4, cudaMemRangeAttributePreferredLocationType = 5,
  cudaMemRangeAttributePreferredLocationId = 6, cudaMemRangeAttributeLastPrefetchLocationType = 7,
  cudaMemRangeAttributeLastPrefetchLocationId = 8
};
// Stream-ordered allocation pools: every pool hands out the emulator's device allocations (as
// cudaMallocAsync does) and counts what it holds; the release threshold and reuse policies
// change no result here.
struct CUmemPoolHandle_st;
typedef CUmemPoolHandle_st* cudaMemPool_t;
enum cudaMemPoolAttr {
  cudaMemPoolReuseFollowEventDependencies = 0x1, cudaMemPoolReuseAllowOpportunistic = 0x2,
  cudaMemPoolReuseAllowInternalDependencies = 0x3, cudaMemPoolAttrReleaseThreshold = 0x4,
  cudaMemPoolAttrReservedMemCurrent = 0x5, cudaMemPoolAttrReservedMemHigh = 0x6,
  cudaMemPoolAttrUsedMemCurrent = 0x7, cudaMemPoolAttrUsedMemHigh = 0x8
};
enum cudaMemAllocationType { cudaMemAllocationTypeInvalid = 0x0, cudaMemAllocationTypePinned = 0x1,
                             cudaMemAllocationTypeManaged = 0x2, cudaMemAllocationTypeMax = 0x7FFFFFFF };
enum cudaMemAllocationHandleType { cudaMemHandleTypeNone = 0x0, cudaMemHandleTypePosixFileDescriptor = 0x1,
                                   cudaMemHandleTypeWin32 = 0x2, cudaMemHandleTypeWin32Kmt = 0x4,
                                   cudaMemHandleTypeFabric = 0x8 };
enum cudaMemAccessFlags { cudaMemAccessFlagsProtNone = 0, cudaMemAccessFlagsProtRead = 1, cudaMemAccessFlagsProtReadWrite = 3 };
struct cudaMemPoolProps {
  enum cudaMemAllocationType allocType;
  enum cudaMemAllocationHandleType handleTypes;
  struct cudaMemLocation location;
  void* win32SecurityAttributes;
  size_t maxSize;
  unsigned short usage;
  unsigned char reserved[54];
};
struct cudaMemAccessDesc { struct cudaMemLocation location; enum cudaMemAccessFlags flags; };
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device);
cudaError_t cudaDeviceGetMemPool(cudaMemPool_t* pool, int device);
cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t pool);
cudaError_t cudaMemGetDefaultMemPool(cudaMemPool_t* pool, cudaMemLocation* location, cudaMemAllocationType type);
cudaError_t cudaMemGetMemPool(cudaMemPool_t* pool, cudaMemLocation* location, cudaMemAllocationType type);
cudaError_t cudaMemSetMemPool(cudaMemLocation* location, cudaMemAllocationType type, cudaMemPool_t pool);
cudaError_t cudaMemPoolCreate(cudaMemPool_t* pool, const cudaMemPoolProps* props);
cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool);
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value);
cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value);
cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t minBytesToKeep);
cudaError_t cudaMemPoolSetAccess(cudaMemPool_t pool, const cudaMemAccessDesc* descs, size_t count);
cudaError_t cudaMemPoolGetAccess(cudaMemAccessFlags* flags, cudaMemPool_t pool, cudaMemLocation* location);
cudaError_t cudaMallocFromPoolAsync(void** p, size_t n, cudaMemPool_t pool, cudaStream_t s);
template <class _Tp>
cudaError_t cudaMallocFromPoolAsync(_Tp** p, size_t n, cudaMemPool_t pool, cudaStream_t s) {
  return cudaMallocFromPoolAsync((void**)(void*)(p), n, pool, s);
}
inline cudaError_t cudaMallocAsync(void** p, size_t n, cudaMemPool_t pool, cudaStream_t s) {
  return cudaMallocFromPoolAsync(p, n, pool, s);
}
template <class _Tp>
cudaError_t cudaMallocAsync(_Tp** p, size_t n, cudaMemPool_t pool, cudaStream_t s) {
  return cudaMallocFromPoolAsync((void**)(void*)(p), n, pool, s);
}

namespace cudashim {
void* dyn_smem();
void shared_decl(void* p, size_t n, const char* name, unsigned line);
void* symbol_check(const void* p);
void set_error(cudaError_t e);
void note_upload(const void* src, size_t n);
void symbol_upload(const void* src, void* dst, size_t n);
void symbol_download(void* dst, size_t n);
[[noreturn]] void fatal(const char* fmt, ...);
// Device allocations are closed to host code (a GPU faults there); the runtime's copies and
// launches and the headers' library calls, which stand for device work, open them while one of
// these lives (nested, from any thread).
void _Open_device_memory();
void _Close_device_memory();
struct _Device_access {
  _Device_access() { _Open_device_memory(); }
  ~_Device_access() { _Close_device_memory(); }
  _Device_access(const _Device_access&) = delete;
  _Device_access& operator=(const _Device_access&) = delete;
};
// A copy's or memset's window: only the pages of its device operand(s) (a and/or b, n bytes each;
// a pointer outside device memory opens nothing), so its cost follows its own bytes, not the
// number of live allocations. Nothing more when a whole window is open.
void _Open_device_range(const void* a, size_t an, const void* b, size_t bn, uintptr_t* spans);
void _Close_device_range(const uintptr_t* spans);
struct _Device_range_access {
  uintptr_t __spans[4];
  explicit _Device_range_access(const void* a, size_t an, const void* b = nullptr, size_t bn = 0) {
    _Open_device_range(a, an, b, bn, __spans);
  }
  ~_Device_range_access() { _Close_device_range(__spans); }
  _Device_range_access(const _Device_range_access&) = delete;
  _Device_range_access& operator=(const _Device_range_access&) = delete;
};
// The headers' library calls that compute (cuBLAS, cuSPARSE, CUB device-wide algorithms, cuRAND's
// host API): device memory open, and the call noted as library work (a line of the upload log,
// which the kernel-work check reads: work done without a launch). Thrust's device algorithms do
// the same through cudashim/thrust_device.h.
void _Note_library_work(const char* library, const char* call);
struct _Library_access : _Device_access {
  explicit _Library_access(const char* library, const char* call = __builtin_FUNCTION()) {
    _Note_library_work(library, call);
  }
};
}  // namespace cudashim

template <class _Tp>
cudaError_t cudaMemcpyToSymbol(const _Tp& symbol, const void* src, size_t n, size_t offset = 0,
                               cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
  if (offset + n > sizeof(_Tp)) { cudashim::set_error(cudaErrorInvalidValue); return cudaErrorInvalidValue; }
  cudashim::note_upload(src, n);
  cudashim::_Device_range_access __da(src, n);  // a device source (cudaMemcpyDeviceToDevice)
  memcpy(reinterpret_cast<char*>(const_cast<_Tp*>(&symbol)) + offset, src, n);
  cudashim::symbol_upload(src, reinterpret_cast<char*>(const_cast<_Tp*>(&symbol)) + offset, n);
  (void)kind;
  return cudaSuccess;
}
namespace cudashim {
// An async copy: done now, or on a stream being captured a copy node of the capture, run by each
// launch of the graph (defined with the graph support below).
template <class _Fn>
cudaError_t _async_copy(cudaStream_t __s, _Fn&& __copy);
}  // namespace cudashim
template <class _Tp>
cudaError_t cudaMemcpyToSymbolAsync(const _Tp& symbol, const void* src, size_t n, size_t offset = 0,
                                    cudaMemcpyKind kind = cudaMemcpyHostToDevice, cudaStream_t s = 0) {
  if (offset + n > sizeof(_Tp)) return cudaMemcpyToSymbol(symbol, src, n, offset, kind);  // its error, at the call
  const _Tp* __sym = &symbol;
  return cudashim::_async_copy(s, [=] { return cudaMemcpyToSymbol(*__sym, src, n, offset, kind); });
}
template <class _Tp>
cudaError_t cudaMemcpyFromSymbol(void* dst, const _Tp& symbol, size_t n, size_t offset = 0,
                                 cudaMemcpyKind kind = cudaMemcpyDeviceToHost) {
  if (offset + n > sizeof(_Tp)) { cudashim::set_error(cudaErrorInvalidValue); return cudaErrorInvalidValue; }
  cudashim::_Device_range_access __da(dst, n);  // a device destination (cudaMemcpyDeviceToDevice)
  memcpy(dst, reinterpret_cast<const char*>(&symbol) + offset, n);
  cudashim::symbol_download(dst, n);
  (void)kind;
  return cudaSuccess;
}
template <class _Tp>
cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const _Tp& symbol, size_t n, size_t offset = 0,
                                      cudaMemcpyKind kind = cudaMemcpyDeviceToHost, cudaStream_t s = 0) {
  if (offset + n > sizeof(_Tp)) return cudaMemcpyFromSymbol(dst, symbol, n, offset, kind);
  const _Tp* __sym = &symbol;
  return cudashim::_async_copy(s, [=] { return cudaMemcpyFromSymbol(dst, *__sym, n, offset, kind); });
}
template <class _Tp>
cudaError_t cudaGetSymbolAddress(void** p, const _Tp& symbol) {
  *p = const_cast<void*>(static_cast<const void*>(&symbol));
  return cudaSuccess;
}
template <class _Tp>
cudaError_t cudaGetSymbolSize(size_t* n, const _Tp&) { *n = sizeof(_Tp); return cudaSuccess; }
// As CUDA's own templates cast: through void*, so a `const float**` (a buffer the program only
// reads through) allocates as nvcc allows; reinterpret_cast refused it as casting away const.
template <class _Tp>
cudaError_t cudaMalloc(_Tp** p, size_t n) { return cudaMalloc((void**)(void*)(p), n); }
template <class _Tp>
cudaError_t cudaMallocManaged(_Tp** p, size_t n, unsigned int flags = cudaMemAttachGlobal) {
  return cudaMallocManaged((void**)(void*)(p), n, flags);
}
template <class _Tp>
cudaError_t cudaMallocHost(_Tp** p, size_t n) { return cudaMallocHost((void**)(void*)(p), n); }
// The runtime's C++ form with flags: cudaHostAlloc under another name.
inline cudaError_t cudaMallocHost(void** p, size_t n, unsigned int flags) { return cudaHostAlloc(p, n, flags); }
template <class _Tp>
cudaError_t cudaMallocHost(_Tp** p, size_t n, unsigned int flags) {
  return cudaHostAlloc((void**)(void*)(p), n, flags);
}
template <class _Tp>
cudaError_t cudaHostAlloc(_Tp** p, size_t n, unsigned int flags) { return cudaHostAlloc((void**)(void*)(p), n, flags); }
template <class _Tp>
cudaError_t cudaHostGetDevicePointer(_Tp** d, void* h, unsigned int flags) {
  return cudaHostGetDevicePointer(reinterpret_cast<void**>(d), h, flags);
}
// The runtime's C++ form with flags: cudaEventCreateWithFlags under another name.
inline cudaError_t cudaEventCreate(cudaEvent_t* e, unsigned int flags) { return cudaEventCreateWithFlags(e, flags); }
template <class _Tp>
cudaError_t cudaMallocPitch(_Tp** p, size_t* pitch, size_t w, size_t h) {
  return cudaMallocPitch((void**)(void*)(p), pitch, w, h);
}
template <class _Tp>
cudaError_t cudaMallocAsync(_Tp** p, size_t n, cudaStream_t s) { return cudaMallocAsync((void**)(void*)(p), n, s); }
namespace cudashim {
// Dynamic shared memory a launch may ask for: 48 KiB, or up to the opt-in maximum (163 KiB, as
// an A100) once the program raised a kernel's cudaFuncAttributeMaxDynamicSharedMemorySize. The
// launch does not know which kernel pointer it runs, so the largest opt-in of the process holds
// for every kernel (runtime).
inline constexpr size_t kSmemPerBlock = 48 * 1024;
inline constexpr size_t kSmemPerBlockOptin = 163 * 1024;
inline constexpr size_t kSmemPerSM = 164 * 1024;
void note_smem_optin(size_t bytes);
size_t smem_optin();
}  // namespace cudashim
template <class _Tp>
cudaError_t cudaFuncSetAttribute(_Tp*, cudaFuncAttribute attr, int value) {
  switch (attr) {
    case cudaFuncAttributeMaxDynamicSharedMemorySize:
      if (value < 0 || size_t(value) > cudashim::kSmemPerBlockOptin) break;
      cudashim::note_smem_optin(size_t(value));
      return cudaSuccess;
    case cudaFuncAttributePreferredSharedMemoryCarveout:
      if (value < -1 || value > 100) break;
      return cudaSuccess;
    case cudaFuncAttributeRequiredClusterWidth:
    case cudaFuncAttributeRequiredClusterHeight:
    case cudaFuncAttributeRequiredClusterDepth:
      if (value < 0 || value > 8) break;
      return cudaSuccess;
    case cudaFuncAttributeNonPortableClusterSizeAllowed:
    case cudaFuncAttributeClusterSchedulingPolicyPreference:
      return cudaSuccess;
    default: break;
  }
  cudashim::set_error(cudaErrorInvalidValue);
  return cudaErrorInvalidValue;
}
template <class _Tp>
cudaError_t cudaFuncSetCacheConfig(_Tp*, cudaFuncCache) { return cudaSuccess; }
template <class _Tp>
cudaError_t cudaFuncSetSharedMemConfig(_Tp*, cudaSharedMemConfig) { return cudaSuccess; }
template <class _Tp>
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* a, _Tp*) {
  memset(a, 0, sizeof *a);
  a->maxThreadsPerBlock = 1024;
  a->numRegs = 32;
  a->ptxVersion = 80;
  a->binaryVersion = 80;
  a->maxDynamicSharedSizeBytes = int(cudashim::smem_optin());
  a->preferredShmemCarveout = -1;
  return cudaSuccess;
}
namespace cudashim {
// The emulated device: 4 SMs (prop.multiProcessorCount), each holding up to 2048 threads
// (whole warps), 8 blocks and 164 KiB of shared memory. It bounds a cooperative launch, whose
// blocks are all co-resident: each block gets an OS thread (the sandbox allows 64) and every
// CUDA thread of the grid is a live fiber at once (at most 8192).
inline constexpr int kEmulatedSMs = 4;
inline constexpr int kBlocksPerSM = 8;
inline constexpr int kThreadsPerSM = 2048;
inline int max_blocks_per_sm(long long threads, size_t smem) {
  if (threads <= 0 || threads > 1024) return 0;
  int b = int(kThreadsPerSM / ((threads + 31) / 32 * 32));
  if (smem > 0) b = std::min<int>(b, int(kSmemPerSM / smem));
  return std::min(b, kBlocksPerSM);
}
// cudaOccupancyMaxPotentialBlockSize*: CUDA's own search (cuda_runtime.h), over the emulated
// device: every block size from the largest down by warps, keeping the one with the most
// resident threads per SM; the grid that fills the device is that many blocks per SM.
template <class _Fn>
cudaError_t _Potential_block_size(int* grid, int* block, _Fn&& smem_for, int limit) {
  if (!grid || !block) return cudaErrorInvalidValue;
  if (limit <= 0 || limit > 1024) limit = 1024;
  int best_block = 0, best_blocks = 0, best = 0;
  for (int aligned = (limit + 31) / 32 * 32; aligned > 0; aligned -= 32) {
    const int b = std::min(limit, aligned);
    const size_t smem = size_t(smem_for(b));
    const int blocks = smem > smem_optin() ? 0 : max_blocks_per_sm(b, smem);
    if (b * blocks > best) {
      best_block = b;
      best_blocks = blocks;
      best = b * blocks;
    }
    if (best == kThreadsPerSM) break;
  }
  *grid = best_blocks * kEmulatedSMs;
  *block = best_block;
  return cudaSuccess;
}
}  // namespace cudashim
template <class _Tp>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* n, _Tp, int block, size_t smem) {
  if (!n) return cudaErrorInvalidValue;
  *n = smem > cudashim::smem_optin() ? 0 : cudashim::max_blocks_per_sm(block, smem);
  return cudaSuccess;
}
template <class _Tp>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* n, _Tp k, int block, size_t smem, unsigned) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, k, block, smem);
}
template <class _Fn, class _Tp>
cudaError_t cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(int* grid, int* block, _Tp, _Fn smem_for,
                                                                    int limit = 0, unsigned int = 0) {
  return cudashim::_Potential_block_size(grid, block, smem_for, limit);
}
template <class _Fn, class _Tp>
cudaError_t cudaOccupancyMaxPotentialBlockSizeVariableSMem(int* grid, int* block, _Tp func, _Fn smem_for, int limit = 0) {
  return cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(grid, block, func, smem_for, limit, 0);
}
template <class _Tp>
cudaError_t cudaOccupancyMaxPotentialBlockSizeWithFlags(int* grid, int* block, _Tp, size_t smem = 0, int limit = 0,
                                                        unsigned int = 0) {
  return cudashim::_Potential_block_size(grid, block, [smem](int) { return smem; }, limit);
}
template <class _Tp>
cudaError_t cudaOccupancyMaxPotentialBlockSize(int* grid, int* block, _Tp func, size_t smem = 0, int limit = 0) {
  return cudaOccupancyMaxPotentialBlockSizeWithFlags(grid, block, func, smem, limit, 0);
}
// The most dynamic shared memory each of `blocks` blocks of `threads` threads may use and still
// be resident on one SM together (0 when the threads or the block count alone do not fit).
template <class _Tp>
cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t* bytes, _Tp*, int blocks, int threads) {
  if (!bytes || blocks <= 0 || threads <= 0 || threads > 1024) return cudaErrorInvalidValue;
  *bytes = blocks > cudashim::max_blocks_per_sm(threads, 0)
               ? 0 : std::min(cudashim::kSmemPerSM / size_t(blocks), cudashim::kSmemPerBlockOptin);
  return cudaSuccess;
}

// ---------------------------------------------------------------- launches
namespace cudashim {
struct LaunchSpec {
  const char* name;
  dim3 grid, block;
  size_t shmem;
  void (*body)(void*);
  void* arg;
  bool may_sync;  // false: the rewrite proved the kernel never waits at a barrier
  bool cooperative = false;  // cudaLaunchCooperativeKernel: all blocks co-resident, grid.sync()
  // Barrier-free kernels (may_sync false): runs every thread of the block, in `order` (linear
  // thread indices; null: forward), threadIdx set to tids[index] for each, stopping when *abort
  // is set. Compiled in the program's own translation unit, so the kernel can be inlined into
  // the loop over threads (one call per block instead of one indirect call per thread).
  void (*threads)(void* arg, const int* order, const uint3* tids, int n, const std::atomic<bool>* abort) = nullptr;
  // Barrier-free kernels the rewrite could copy in warp lockstep (validators/cpu/lockstep.py):
  // runs every thread of the block, 32 lanes at a time, forward (dir 1) or in reverse (-1).
  void (*lockstep)(void* arg, int dir, const std::atomic<bool>* abort) = nullptr;
  void* lockstep_arg = nullptr;
};
void run_kernel(const LaunchSpec& s);

template <class _Body>
void _Run_threads(void* __p, const int* __order, const uint3* __tids, int __n, const std::atomic<bool>* __abort) {
  _Body& __body = *static_cast<_Body*>(__p);
  const unsigned __bx = blockDim.x, __by = blockDim.y, __bz = blockDim.z;
  if (!__order) {
    for (unsigned __z = 0; __z < __bz; ++__z)
      for (unsigned __y = 0; __y < __by; ++__y)
        for (unsigned __x = 0; __x < __bx; ++__x) {
          if (__abort->load(std::memory_order_relaxed)) return;
          threadIdx = uint3{__x, __y, __z};
          __body();
        }
    return;
  }
  for (int __i = 0; __i < __n; ++__i) {
    if (__abort->load(std::memory_order_relaxed)) return;
    threadIdx = __tids[__order[__i]];
    __body();
  }
}

// A launch argument written `NULL` or `0`. Forwarding it as the `long`/`int` it is would lose
// what makes it a null pointer constant (nvcc converts it to a pointer parameter at the call),
// so the rewrite passes this instead: it converts to any pointer or arithmetic parameter.
template <class _Lit>
struct null_arg {
  template <class _Tp>
  constexpr operator _Tp*() const noexcept { return nullptr; }
  template <class _Tp, std::enable_if_t<std::is_arithmetic_v<_Tp> || std::is_enum_v<_Tp>, int> = 0>
  constexpr operator _Tp() const noexcept { return _Tp(0); }
};
template <class _Tp>
struct _Literal_of { using type = _Tp; };
template <class _Lit>
struct _Literal_of<null_arg<_Lit>> { using type = _Lit; };

// No lockstep copy (see launch_lockstep).
struct _No_lanes {};

// Arguments are evaluated once on the host (as CUDA does), copied into a tuple, and every
// CUDA thread calls the kernel with copies of them. When the kernel cannot take a null_arg
// (a template parameter deduced from it, a class-type parameter), it gets the literal's own
// type, as nvcc would deduce.
// `ls` is null (_No_lanes) or calls the kernel's lockstep copy with the same argument copies.
// Kernel arguments passed by value reach the device too: the kernel-work check notes them with
// the uploads (pointers aside: their values change from run to run and carry no input).
bool uploads_noted();
template <class _Tp>
void note_arg(const _Tp& x) {
  if constexpr (std::is_trivially_copyable_v<_Tp> && !std::is_pointer_v<_Tp> && !std::is_empty_v<_Tp>)
    note_upload(&x, sizeof x);
}
template <bool _MaySync, class _Fn, class _Ls, class... _Ap>
void _Launch(const char* name, dim3 grid, dim3 block, size_t shmem, _Fn& f, _Ls* ls, _Ap&&... a) {
  using _Args = std::conditional_t<std::is_invocable_v<_Fn&, std::decay_t<_Ap>&...>,
                                   std::tuple<std::decay_t<_Ap>...>,
                                   std::tuple<typename _Literal_of<std::decay_t<_Ap>>::type...>>;
  _Args args(std::forward<_Ap>(a)...);
  if (uploads_noted()) std::apply([](const auto&... xs) { (note_arg(xs), ...); }, args);
  auto body = [&]() { std::apply(f, args); };
  using _Body = decltype(body);
  LaunchSpec spec{name, grid, block, shmem, [](void* p) { (*static_cast<_Body*>(p))(); }, &body, _MaySync,
                  false, _MaySync ? nullptr : &_Run_threads<_Body>};
  if constexpr (std::is_same_v<_Ls, _No_lanes>) {
    (void)ls;
    run_kernel(spec);
  } else {
    auto lanes = [&](int dir, const std::atomic<bool>* abort) {
      std::apply([&](auto&... xs) { (*ls)(abort, dir, xs...); }, args);
    };
    using _Lanes = decltype(lanes);
    spec.lockstep = [](void* p, int dir, const std::atomic<bool>* abort) { (*static_cast<_Lanes*>(p))(dir, abort); };
    spec.lockstep_arg = &lanes;
    run_kernel(spec);
  }
}
// CUDA graphs: work issued to a stream that is capturing is recorded (the kernel, its launch
// configuration and copies of its arguments, as CUDA takes them at capture) and runs when the
// graph is launched (runtime: cudaStreamBeginCapture ... cudaGraphLaunch).
struct _Closure {
  virtual void run() = 0;
  virtual ~_Closure() = default;
  // A graph's kernel node made from `void**` arguments: its copies of them, one pointer each
  // (what cudaGraphKernelNodeGetParams answers); nullptr for other work.
  virtual void** args() { return nullptr; }
};
template <class _F>
struct _Closure_of final : _Closure {
  _F f;
  explicit _Closure_of(_F&& x) : f(std::move(x)) {}
  void run() override { f(); }
};
bool capturing(cudaStream_t s);
void capture(cudaStream_t s, _Closure* work);  // the runtime owns `work`
cudaError_t capture(cudaStream_t s, _Closure* work, cudaGraphNodeType type);
template <class _Fn>
cudaError_t _async_copy(cudaStream_t __s, _Fn&& __copy) {
  if (!capturing(__s)) return __copy();
  auto __each = [__c = std::decay_t<_Fn>(std::forward<_Fn>(__copy))] { (void)__c(); };
  return capture(__s, new _Closure_of<decltype(__each)>(std::move(__each)), cudaGraphNodeTypeMemcpy);
}
template <bool _MaySync = true, class _Fn, class... _Ap>
void launch(const char* name, dim3 grid, dim3 block, size_t shmem, cudaStream_t st, _Fn&& f, _Ap&&... a) {
  if (capturing(st)) {
    auto later = [name, grid, block, shmem, f = std::decay_t<_Fn>(f), ... args = std::decay_t<_Ap>(a)]() mutable {
      _Launch<_MaySync>(name, grid, block, shmem, f, static_cast<_No_lanes*>(nullptr), args...);
    };
    capture(st, new _Closure_of<decltype(later)>(std::move(later)));
    return;
  }
  _Launch<_MaySync>(name, grid, block, shmem, f, static_cast<_No_lanes*>(nullptr), std::forward<_Ap>(a)...);
}
// A launch of a barrier-free kernel with a lockstep copy (`ls` calls it with the launch's
// arguments). The race build judges writes by the CUDA thread that makes them, so it keeps one
// thread at a time.
// Asked at run time: no macro tells the program's own code which build it is in.
bool race_build();
template <class _Fn, class _Ls, class... _Ap>
void launch_lockstep(const char* name, dim3 grid, dim3 block, size_t shmem, cudaStream_t st, _Fn&& f, _Ls&& ls,
                     _Ap&&... a) {
  if (capturing(st)) {
    auto later = [name, grid, block, shmem, st, f = std::decay_t<_Fn>(f), ls = std::decay_t<_Ls>(ls),
                  ... args = std::decay_t<_Ap>(a)]() mutable {
      launch_lockstep(name, grid, block, shmem, nullptr, f, ls, args...);
    };
    (void)st;
    capture(st, new _Closure_of<decltype(later)>(std::move(later)));
    return;
  }
  if (race_build())
    _Launch<false>(name, grid, block, shmem, f, static_cast<_No_lanes*>(nullptr), std::forward<_Ap>(a)...);
  else
    _Launch<false>(name, grid, block, shmem, f, &ls, std::forward<_Ap>(a)...);
}
// A launch whose `<<< >>>` holds preprocessor lines (`k<<<g, b\n#ifdef X\n, s\n#endif\n>>>(...)`):
// the rewrite passes the configuration whole, so the preprocessor chooses its 2 to 4 values.
struct launch_config {
  dim3 grid, block;
  size_t shmem;
  cudaStream_t stream;
  launch_config(dim3 g, dim3 b, size_t s = 0, cudaStream_t st = 0) : grid(g), block(b), shmem(s), stream(st) {}
};
template <bool _MaySync = true, class _Fn, class... _Ap>
void launch_configured(const char* name, const launch_config& c, _Fn&& f, _Ap&&... a) {
  launch<_MaySync>(name, c.grid, c.block, c.shmem, c.stream, std::forward<_Fn>(f), std::forward<_Ap>(a)...);
}
template <class _Fn, class _Ls, class... _Ap>
void launch_configured_lockstep(const char* name, const launch_config& c, _Fn&& f, _Ls&& ls, _Ap&&... a) {
  launch_lockstep(name, c.grid, c.block, c.shmem, c.stream, std::forward<_Fn>(f), std::forward<_Ls>(ls),
                  std::forward<_Ap>(a)...);
}
template <class... _Pp, std::size_t... _Ip>
void call_with_void_args(void (*k)(_Pp...), void** args, std::index_sequence<_Ip...>) {
  k(*static_cast<std::remove_reference_t<_Pp>*>(args[_Ip])...);
}
template <class... _Pp, std::size_t... _Ip>
void note_void_args(void (*)(_Pp...), void** args, std::index_sequence<_Ip...>) {
  if (args && uploads_noted()) (note_arg(*static_cast<std::remove_reference_t<_Pp>*>(args[_Ip])), ...);
}
}  // namespace cudashim

namespace cudashim {
// A launch whose arguments come as `void**`: their values are copied at the call (as CUDA does),
// then it is an ordinary launch (and recorded like one while its stream captures).
template <class... _Pp, std::size_t... _Ip>
void _launch_void_args(const char* name, void (*k)(_Pp...), dim3 g, dim3 b, void** args, size_t s,
                       cudaStream_t st, std::index_sequence<_Ip...>) {
  launch(name, g, b, s, st, [k](auto&&... a) { k(a...); },
         *static_cast<std::remove_reference_t<_Pp>*>(args[_Ip])...);
}
}  // namespace cudashim

template <class... _Pp>
cudaError_t cudaLaunchKernel(void (*k)(_Pp...), dim3 grid, dim3 block, void** args, size_t shmem = 0, cudaStream_t st = 0) {
  cudashim::_launch_void_args("cudaLaunchKernel", k, grid, block, args, shmem, st, std::index_sequence_for<_Pp...>{});
  return cudaPeekAtLastError();
}

// The kernel's spelling is kept (the macro) so runtime reports can name it.
template <class... _Pp>
cudaError_t _Cooperative_launch(const char* name, void (*k)(_Pp...), dim3 grid, dim3 block, void** args,
                                size_t shmem = 0, cudaStream_t st = 0) {
  if (cudashim::capturing(st)) {  // not recorded: a graph of the emulator has no cooperative node
    cudashim::set_error(cudaErrorStreamCaptureUnsupported);
    return cudaErrorStreamCaptureUnsupported;
  }
  cudashim::note_void_args(k, args, std::index_sequence_for<_Pp...>{});
  auto body = [&]() { cudashim::call_with_void_args(k, args, std::index_sequence_for<_Pp...>{}); };
  using _Body = decltype(body);
  cudashim::run_kernel(cudashim::LaunchSpec{name, grid, block, shmem, [](void* p) { (*static_cast<_Body*>(p))(); },
                                            &body, true, true});
  return cudaPeekAtLastError();
}
// Kernels launched by an untyped pointer (`cudaLaunchKernel((void*)k, ...)`, as real projects
// write): a cast of a kernel to void* is rewritten to `kernel_ptr(&k, "k")` (rewrite.py), which
// notes a launcher that knows k's parameter types under k's address; the untyped launch calls look
// it up there and unpack the `void**` arguments by the kernel's own signature. An address never
// noted (a pointer that is no kernel of the program) is cudaErrorInvalidDeviceFunction, as on a GPU.
namespace cudashim {
using _Void_launcher = cudaError_t (*)(const char*, const void*, dim3, dim3, void**, size_t, cudaStream_t, bool);
// A graph's kernel node: the launch with its argument values copied when the node is made.
using _Void_binder = _Closure* (*)(const char*, const void*, dim3, dim3, void**, size_t);
// In the runtime (one table for every translation unit and extension of the process).
void note_launcher(const void* k, _Void_launcher f, _Void_binder b, const char* name);
bool find_launcher(const void* k, _Void_launcher* f, const char** name);
bool find_binder(const void* k, _Void_binder* b, const char** name);
template <class _Kp, class... _Vs>
struct _Kernel_node_work final : _Closure {
  const char* name;
  _Kp k;
  dim3 g, b;
  size_t s;
  std::tuple<_Vs...> vals;
  void* ptrs[sizeof...(_Vs) + 1] = {};
  template <class... _Xs>
  _Kernel_node_work(const char* n, _Kp kk, dim3 gg, dim3 bb, size_t ss, _Xs&&... x)
      : name(n), k(kk), g(gg), b(bb), s(ss), vals(std::forward<_Xs>(x)...) {
    std::apply([this](auto&... v) {
      size_t i = 0;
      ((ptrs[i++] = const_cast<void*>(static_cast<const void*>(&v))), ...);
    }, vals);
  }
  void run() override {
    std::apply([this](auto&... v) { launch(name, g, b, s, nullptr, [kk = k](auto&&... x) { kk(x...); }, v...); }, vals);
  }
  void** args() override { return ptrs; }
};
template <class... _Pp, std::size_t... _Ip>
_Closure* _bind_void_args(const char* name, void (*k)(_Pp...), dim3 g, dim3 b, void** args, size_t s,
                          std::index_sequence<_Ip...>) {
  if (sizeof...(_Pp) > 0 && args == nullptr) return nullptr;  // no arguments for its parameters
  return new _Kernel_node_work<void (*)(_Pp...), std::remove_cvref_t<_Pp>...>(
      name, k, g, b, s, std::remove_cvref_t<_Pp>(*static_cast<std::remove_reference_t<_Pp>*>(args[_Ip]))...);
}
template <class... _Pp>
void* kernel_ptr(void (*k)(_Pp...), const char* name) {
  _Void_launcher f = [](const char* nm, const void* p, dim3 g, dim3 b, void** a, size_t s, cudaStream_t st,
                        bool coop) -> cudaError_t {
    auto typed = reinterpret_cast<void (*)(_Pp...)>(const_cast<void*>(p));
    if (coop) return _Cooperative_launch(nm, typed, g, b, a, s, st);
    _launch_void_args(nm, typed, g, b, a, s, st, std::index_sequence_for<_Pp...>{});
    return cudaPeekAtLastError();
  };
  _Void_binder bind = [](const char* nm, const void* p, dim3 g, dim3 b, void** a, size_t s) -> _Closure* {
    auto typed = reinterpret_cast<void (*)(_Pp...)>(const_cast<void*>(p));
    return _bind_void_args(nm, typed, g, b, a, s, std::index_sequence_for<_Pp...>{});
  };
  note_launcher(reinterpret_cast<const void*>(k), f, bind, name);
  return reinterpret_cast<void*>(k);
}
inline cudaError_t _Untyped_launch(const void* k, dim3 g, dim3 b, void** a, size_t s, cudaStream_t st, bool coop) {
  _Void_launcher f = nullptr;
  const char* name = nullptr;
  if (!find_launcher(k, &f, &name)) {
    set_error(cudaErrorInvalidDeviceFunction);
    return cudaErrorInvalidDeviceFunction;
  }
  return f(name, k, g, b, a, s, st, coop);
}
}  // namespace cudashim

inline cudaError_t cudaLaunchKernel(const void* k, dim3 grid, dim3 block, void** args, size_t shmem = 0,
                                    cudaStream_t st = 0) {
  return cudashim::_Untyped_launch(k, grid, block, args, shmem, st, false);
}
inline cudaError_t _Cooperative_launch(const char*, const void* k, dim3 grid, dim3 block, void** args,
                                       size_t shmem = 0, cudaStream_t st = 0) {
  return cudashim::_Untyped_launch(k, grid, block, args, shmem, st, true);
}
#define cudaLaunchCooperativeKernel(k, ...) _Cooperative_launch(#k, k, __VA_ARGS__)

// cudaLaunchKernelEx: a launch described by a configuration with attributes. The cooperative
// attribute makes it a cooperative launch; the others (cluster shape, priority, programmatic
// serialisation, memory-sync domains, access policy) change nothing the emulator's results
// depend on and are accepted as they are.
enum cudaLaunchAttributeID {
  cudaLaunchAttributeIgnore = 0,
  cudaLaunchAttributeAccessPolicyWindow = 1,
  cudaLaunchAttributeCooperative = 2,
  cudaLaunchAttributeSynchronizationPolicy = 3,
  cudaLaunchAttributeClusterDimension = 4,
  cudaLaunchAttributeClusterSchedulingPolicyPreference = 5,
  cudaLaunchAttributeProgrammaticStreamSerialization = 6,
  cudaLaunchAttributeProgrammaticEvent = 7,
  cudaLaunchAttributePriority = 8,
  cudaLaunchAttributeMemSyncDomainMap = 9,
  cudaLaunchAttributeMemSyncDomain = 10,
  cudaLaunchAttributePreferredClusterDimension = 11,
  cudaLaunchAttributeLaunchCompletionEvent = 12,
  cudaLaunchAttributeDeviceUpdatableKernelNode = 13,
};
enum cudaAccessProperty { cudaAccessPropertyNormal = 0, cudaAccessPropertyStreaming = 1, cudaAccessPropertyPersisting = 2 };
struct cudaAccessPolicyWindow {
  void* base_ptr;
  size_t num_bytes;
  float hitRatio;
  enum cudaAccessProperty hitProp;
  enum cudaAccessProperty missProp;
};
enum cudaSynchronizationPolicy { cudaSyncPolicyAuto = 1, cudaSyncPolicySpin = 2, cudaSyncPolicyYield = 3, cudaSyncPolicyBlockingSync = 4 };
union cudaLaunchAttributeValue {
  char pad[64];
  struct cudaAccessPolicyWindow accessPolicyWindow;
  enum cudaSynchronizationPolicy syncPolicy;
  int cooperative;
  struct { unsigned int x, y, z; } clusterDim;
  int clusterSchedulingPolicyPreference;
  int programmaticStreamSerializationAllowed;
  struct { cudaEvent_t event; int flags; int triggerAtBlockStart; } programmaticEvent;
  int priority;
  struct { unsigned char default_, remote; } memSyncDomainMap;
  int memSyncDomain;
  struct { unsigned int x, y, z; } preferredClusterDim;
  struct { cudaEvent_t event; int flags; } launchCompletionEvent;
};
struct cudaLaunchAttribute {
  cudaLaunchAttributeID id;
  char pad[8 - sizeof(cudaLaunchAttributeID)];
  cudaLaunchAttributeValue val;
};
typedef cudaLaunchAttribute cudaLaunchAttribute_st;
// Stream attributes (CUDA's aliases of the launch attributes): an L2 access policy window and a
// synchronisation policy are hints that change no result here; they are kept and read back.
typedef cudaLaunchAttributeID cudaStreamAttrID;
typedef cudaLaunchAttributeValue cudaStreamAttrValue;
#define cudaStreamAttributeAccessPolicyWindow cudaLaunchAttributeAccessPolicyWindow
#define cudaStreamAttributeSynchronizationPolicy cudaLaunchAttributeSynchronizationPolicy
#define cudaStreamAttributeMemSyncDomainMap cudaLaunchAttributeMemSyncDomainMap
#define cudaStreamAttributeMemSyncDomain cudaLaunchAttributeMemSyncDomain
#define cudaStreamAttributePriority cudaLaunchAttributePriority
cudaError_t cudaStreamSetAttribute(cudaStream_t s, cudaStreamAttrID attr, const cudaStreamAttrValue* value);
cudaError_t cudaStreamGetAttribute(cudaStream_t s, cudaStreamAttrID attr, cudaStreamAttrValue* value);
cudaError_t cudaStreamCopyAttributes(cudaStream_t dst, cudaStream_t src);
struct cudaLaunchConfig_t {
  dim3 gridDim;
  dim3 blockDim;
  size_t dynamicSmemBytes;
  cudaStream_t stream;
  cudaLaunchAttribute* attrs;
  unsigned int numAttrs;
};
namespace cudashim {
inline bool _Config_cooperative(const cudaLaunchConfig_t* c) {
  for (unsigned i = 0; c->attrs != nullptr && i < c->numAttrs; i++)
    if (c->attrs[i].id == cudaLaunchAttributeCooperative && c->attrs[i].val.cooperative) return true;
  return false;
}
template <class... _Ep, class _Tup, std::size_t... _Ip>
cudaError_t _Launch_ex(const cudaLaunchConfig_t* c, void (*k)(_Ep...), _Tup& args, std::index_sequence<_Ip...>) {
  void* ptrs[] = {static_cast<void*>(&std::get<_Ip>(args))..., nullptr};
  if (_Config_cooperative(c))
    return _Cooperative_launch("cudaLaunchKernelEx", k, c->gridDim, c->blockDim, ptrs, c->dynamicSmemBytes, c->stream);
  return cudaLaunchKernel(k, c->gridDim, c->blockDim, ptrs, c->dynamicSmemBytes, c->stream);
}
}  // namespace cudashim
template <class... _Ep, class... _Ap>
cudaError_t cudaLaunchKernelEx(const cudaLaunchConfig_t* config, void (*kernel)(_Ep...), _Ap&&... args) {
  static_assert(sizeof...(_Ep) == sizeof...(_Ap), "cudaLaunchKernelEx: wrong number of kernel arguments");
  std::tuple<std::remove_cv_t<std::remove_reference_t<_Ep>>...> converted(std::forward<_Ap>(args)...);
  return cudashim::_Launch_ex(config, kernel, converted, std::index_sequence_for<_Ep...>{});
}
inline cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* kernel, void** args) {
  return cudashim::_Untyped_launch(kernel, config->gridDim, config->blockDim, args, config->dynamicSmemBytes,
                                   config->stream, cudashim::_Config_cooperative(config));
}
inline cudaError_t cudaLaunchKernelEx(const cudaLaunchConfig_t* config, const void* kernel, void** args) {
  return cudaLaunchKernelExC(config, kernel, args);
}

// ---------------------------------------------------------------- barriers and warp operations
namespace cudashim {
enum WarpOpKind : int { _Wop_SYNC, _Wop_SHFL, _Wop_SHFL_UP, _Wop_SHFL_DOWN, _Wop_SHFL_XOR, _Wop_BALLOT, _Wop_ANY, _Wop_ALL, _Wop_MATCH_ANY, _Wop_MATCH_ALL, _Wop_REDUCE_ADD, _Wop_REDUCE_MIN, _Wop_REDUCE_MAX, _Wop_REDUCE_AND, _Wop_REDUCE_OR, _Wop_REDUCE_XOR, _Wop_REDUCE_UMIN, _Wop_REDUCE_UMAX, _Wop_COALESCE };
int block_barrier(int mode, int pred, unsigned line, const char* file);
unsigned long long warp_op(int kind, unsigned mask, unsigned long long value, int param, int width, unsigned line, const char* file);
unsigned active_mask();
unsigned lane_id();
// Put by the rewrite in loops whose exit waits on volatile or atomic memory: a thread spinning
// there lets the other threads of its block run, and in a cooperative launch its block lets the
// other co-resident blocks run (runtime: _Spin_point_slow). Only a thread-local test where the
// block's threads are plain calls (direct mode) and in host code.
extern thread_local bool _Spin_fibers;
void _Spin_point_slow();
inline void spin_point() {
  if (__builtin_expect(_Spin_fibers, false)) _Spin_point_slow();
}
}  // namespace cudashim

// Device shifts by a run-time amount (the rewrite wraps it: validators/cpu/shifts.py) mean what
// PTX's shl/shr mean: the amount, read as 32 unsigned bits, clamps to the width, so a shift by
// the width or more gives 0 (a signed right shift, the sign), where x86 masks the amount. An
// amount that is not an integer passes through, and a class's own operator<< still gets the
// number (ShiftAmount converts to it).
namespace cudashim {
template <class _Amt> struct ShiftAmount {
  _Amt _Value;
  constexpr operator _Amt() const { return _Value; }
};
template <class _Amt> constexpr decltype(auto) shift_amount(_Amt&& _B) {
  if constexpr (std::is_integral_v<std::remove_cvref_t<_Amt>>) return ShiftAmount<std::remove_cvref_t<_Amt>>{_B};
  else return static_cast<_Amt&&>(_B);
}
template <class _Val, class _Amt> requires std::is_integral_v<_Val>
constexpr auto operator<<(_Val _A, ShiftAmount<_Amt> _S) -> decltype(_A << 0) {
  using _Res = decltype(_A << 0);
  const unsigned _N = static_cast<unsigned>(_S._Value);
  return _N >= sizeof(_Res) * 8 ? _Res(0) : _Res(_Res(_A) << _N);
}
template <class _Val, class _Amt> requires std::is_integral_v<_Val>
constexpr auto operator>>(_Val _A, ShiftAmount<_Amt> _S) -> decltype(_A >> 0) {
  using _Res = decltype(_A >> 0);
  const unsigned _N = static_cast<unsigned>(_S._Value);
  if (_N < sizeof(_Res) * 8) return _Res(_Res(_A) >> _N);
  if constexpr (std::is_signed_v<_Res>) return _Res(_A) < 0 ? _Res(-1) : _Res(0);
  else return _Res(0);
}
template <class _Val, class _Amt> requires std::is_integral_v<std::remove_volatile_t<_Val>>
constexpr _Val& operator<<=(_Val& _A, ShiftAmount<_Amt> _S) { _A = static_cast<std::remove_volatile_t<_Val>>(_A << _S); return _A; }
template <class _Val, class _Amt> requires std::is_integral_v<std::remove_volatile_t<_Val>>
constexpr _Val& operator>>=(_Val& _A, ShiftAmount<_Amt> _S) { _A = static_cast<std::remove_volatile_t<_Val>>(_A >> _S); return _A; }
// Explicit casts of device code to a 32- or 64-bit integer type convert a floating-point value as
// PTX's cvt.rzi does (the rewrite wraps the operand: validators/cpu/device_semantics.py): toward
// zero, saturated to the type's range, NaN as below, where x86 gives INT_MIN ("integer indefinite")
// and g++'s float-to-unsigned wraps through a 64-bit conversion. Anything else passes through for
// the cast itself (a class's conversion operator, a pointer); an arithmetic value by copy, so a
// bit-field is never bound to a reference.
template <class _To, class _From> requires std::is_arithmetic_v<_From>
constexpr auto gpu_cvt(_From _X) {
  if constexpr (std::is_floating_point_v<_From> && std::is_integral_v<_To> && sizeof(_To) >= 4) {
    // Both bounds are powers of two, exact in every floating type.
    constexpr _From _Hi = _From(2) * _From(std::numeric_limits<_To>::max() / 2 + 1);
    // NaN: 0 from a float to 32 bits; the top bit alone from a double or to 64 bits (PTX ISA,
    // cvt; the __float2int_* family follows the same rule).
    if (!(_X == _X))
      return std::is_same_v<_From, float> && sizeof(_To) == 4 ? _To(0) : _To(_To(1) << (sizeof(_To) * 8 - 1));
    if (_X >= _Hi) return std::numeric_limits<_To>::max();
    if constexpr (std::is_signed_v<_To>) {
      if (_X <= -_Hi) return std::numeric_limits<_To>::min();
    } else if (_X <= _From(-1)) {
      return _To(0);
    }
    return _To(_X);
  } else {
    return _X;
  }
}
template <class _To, class _From> requires (!std::is_arithmetic_v<std::remove_cvref_t<_From>>)
constexpr _From&& gpu_cvt(_From&& _X) { return static_cast<_From&&>(_X); }
// Integer division and remainder of device code (the rewrite makes `a / b` gpu_div(a, b) when b is
// no literal: validators/cpu/device_semantics.py). A GPU has no divide instruction to trap: by 0,
// the quotient is all ones and the remainder the dividend; the quotient of the most negative value
// by -1 wraps to itself and the remainder is 0. x86 stops the program with SIGFPE, where a kernel
// that divides and discards the result (a thread past the end of an empty input) runs on. Each is
// said once (a portability note): CUDA leaves the values undefined. Anything but two integers is
// the expression as written.
void _Portability_division(const char* __what);
template <class _Num, class _Den>
constexpr decltype(auto) gpu_div(_Num&& __a, _Den&& __b) {
  if constexpr (std::is_integral_v<std::remove_cvref_t<_Num>> && std::is_integral_v<std::remove_cvref_t<_Den>>) {
    using _Res = decltype(__a / __b);
    const _Res __n = _Res(__a), __d = _Res(__b);
    if (__d == 0) {
      if (!std::is_constant_evaluated()) _Portability_division("an integer division by zero (a GPU gives all ones)");
      return _Res(~_Res(0));
    }
    if constexpr (std::is_signed_v<_Res>) {
      if (__d == _Res(-1)) return _Res(std::make_unsigned_t<_Res>(0) - std::make_unsigned_t<_Res>(__n));
    }
    return _Res(__n / __d);
  } else {
    return static_cast<_Num&&>(__a) / static_cast<_Den&&>(__b);
  }
}
template <class _Num, class _Den>
constexpr decltype(auto) gpu_rem(_Num&& __a, _Den&& __b) {
  if constexpr (std::is_integral_v<std::remove_cvref_t<_Num>> && std::is_integral_v<std::remove_cvref_t<_Den>>) {
    using _Res = decltype(__a % __b);
    const _Res __n = _Res(__a), __d = _Res(__b);
    if (__d == 0) {
      if (!std::is_constant_evaluated()) _Portability_division("an integer remainder by zero (a GPU gives the dividend)");
      return _Res(__n);
    }
    if constexpr (std::is_signed_v<_Res>) {
      if (__d == _Res(-1)) return _Res(0);
    }
    return _Res(__n % __d);
  } else {
    return static_cast<_Num&&>(__a) % static_cast<_Den&&>(__b);
  }
}
template <class _Num, class _Den>
constexpr decltype(auto) gpu_div_assign(_Num&& __a, _Den&& __b) {
  if constexpr (std::is_integral_v<std::remove_cvref_t<_Num>> && std::is_integral_v<std::remove_cvref_t<_Den>>) {
    __a = static_cast<std::remove_cvref_t<_Num>>(gpu_div(__a, __b));
    return (__a);
  } else if constexpr (std::is_integral_v<std::remove_cvref_t<_Num>> && std::is_floating_point_v<std::remove_cvref_t<_Den>>) {
    __a = gpu_cvt<std::remove_cvref_t<_Num>>(__a / __b);
    return (__a);
  } else {
    return static_cast<_Num&&>(__a) /= static_cast<_Den&&>(__b);
  }
}
template <class _Num, class _Den>
constexpr decltype(auto) gpu_rem_assign(_Num&& __a, _Den&& __b) {
  if constexpr (std::is_integral_v<std::remove_cvref_t<_Num>> && std::is_integral_v<std::remove_cvref_t<_Den>>) {
    __a = static_cast<std::remove_cvref_t<_Num>>(gpu_rem(__a, __b));
    return (__a);
  } else {
    return static_cast<_Num&&>(__a) %= static_cast<_Den&&>(__b);
  }
}
// `i += f` of an integer `i` and a floating `f` converts `i + f` back to `i`'s type: as PTX's cvt.rzi
// (the rewrite makes it gpu_add_assign(i, f) when the file declares `i` with an integer type and `f`
// may be floating). `i` is evaluated once, as in the compound assignment; any other pair of types
// is the compound assignment as written.
#define _CUDASHIM_CVT_ASSIGN(_Name, _Op, _OpAssign)                                                  \
  template <class _Lhs, class _Rhs>                                                                  \
  constexpr decltype(auto) _Name(_Lhs&& __a, _Rhs&& __b) {                                           \
    using _To = std::remove_cvref_t<_Lhs>;                                                           \
    if constexpr (std::is_integral_v<_To> && std::is_floating_point_v<std::remove_cvref_t<_Rhs>>) { \
      __a = gpu_cvt<_To>(__a _Op __b);                                                               \
      return (__a);                                                                                  \
    } else {                                                                                         \
      return static_cast<_Lhs&&>(__a) _OpAssign static_cast<_Rhs&&>(__b);                            \
    }                                                                                                \
  }
_CUDASHIM_CVT_ASSIGN(gpu_add_assign, +, +=)
_CUDASHIM_CVT_ASSIGN(gpu_sub_assign, -, -=)
_CUDASHIM_CVT_ASSIGN(gpu_mul_assign, *, *=)
#undef _CUDASHIM_CVT_ASSIGN
}  // namespace cudashim

#define CUDASHIM_LOC std::source_location loc = std::source_location::current()
inline void __syncthreads(CUDASHIM_LOC) { cudashim::block_barrier(0, 1, loc.line(), loc.file_name()); }
inline int __syncthreads_count(int p, CUDASHIM_LOC) { return cudashim::block_barrier(1, p != 0, loc.line(), loc.file_name()); }
inline int __syncthreads_and(int p, CUDASHIM_LOC) { return cudashim::block_barrier(2, p != 0, loc.line(), loc.file_name()); }
inline int __syncthreads_or(int p, CUDASHIM_LOC) { return cudashim::block_barrier(3, p != 0, loc.line(), loc.file_name()); }
inline void __syncwarp(unsigned mask = 0xffffffffu, CUDASHIM_LOC) {
  cudashim::warp_op(cudashim::_Wop_SYNC, mask, 0, 0, 32, loc.line(), loc.file_name());
}
// The lanes that reach this call together (the warp's other live lanes are blocked elsewhere
// or have exited): the lanes a GPU would have converged here.
inline unsigned __activemask(CUDASHIM_LOC) {
  return (unsigned)cudashim::warp_op(cudashim::_Wop_COALESCE, 1u << cudashim::lane_id(), 0, 0, 32, loc.line(), loc.file_name());
}
namespace cudashim {
// A step of a warp through implicit warp-synchronous code (warp_exchange.py splits each exchange
// through volatile memory at one before its read, one before its store and one after): the lanes
// that reach it together meet, as __activemask() groups them, so every lane reads after the
// lanes' earlier stores and before any lane writes.
void _Portability_warp_step(unsigned line, const char* file);
inline void warp_step(CUDASHIM_LOC) {
  _Portability_warp_step(loc.line(), loc.file_name());
  (void)warp_op(_Wop_COALESCE, 1u << lane_id(), 0, 0, 32, loc.line(), loc.file_name());
}
}  // namespace cudashim
inline unsigned __ballot_sync(unsigned mask, int p, CUDASHIM_LOC) {
  return (unsigned)cudashim::warp_op(cudashim::_Wop_BALLOT, mask, p != 0, 0, 32, loc.line(), loc.file_name());
}
inline int __any_sync(unsigned mask, int p, CUDASHIM_LOC) {
  return (int)cudashim::warp_op(cudashim::_Wop_ANY, mask, p != 0, 0, 32, loc.line(), loc.file_name());
}
inline int __all_sync(unsigned mask, int p, CUDASHIM_LOC) {
  return (int)cudashim::warp_op(cudashim::_Wop_ALL, mask, p != 0, 0, 32, loc.line(), loc.file_name());
}
inline int __uni_sync(unsigned mask, int p, CUDASHIM_LOC) {
  unsigned b = (unsigned)cudashim::warp_op(cudashim::_Wop_BALLOT, mask, p != 0, 0, 32, loc.line(), loc.file_name());
  return b == 0 || (b & mask) == (mask & cudashim::active_mask());
}

namespace cudashim {
template <class _Tp>
inline unsigned long long to_bits(_Tp v) {
  static_assert(sizeof(_Tp) <= 8, "__shfl_sync on types larger than 8 bytes is not supported");
  unsigned long long b = 0;
  memcpy(&b, &v, sizeof(_Tp));
  return b;
}
template <class _Tp>
inline _Tp from_bits(unsigned long long b) {
  _Tp v;
  memcpy(&v, &b, sizeof(_Tp));
  return v;
}
template <class _Tp>
inline _Tp shfl(int kind, unsigned mask, _Tp v, int param, int width, const std::source_location& loc) {
  if constexpr (sizeof(_Tp) <= 8) {
    return from_bits<_Tp>(warp_op(kind, mask, to_bits(v), param, width, loc.line(), loc.file_name()));
  } else {
    // Wider types (e.g. double2) are shuffled 8 bytes at a time, as CUDA's overloads do.
    _Tp out;
    const char* src = reinterpret_cast<const char*>(&v);
    char* dst = reinterpret_cast<char*>(&out);
    for (size_t off = 0; off < sizeof(_Tp); off += 8) {
      unsigned long long b = 0;
      size_t n = std::min<size_t>(8, sizeof(_Tp) - off);
      memcpy(&b, src + off, n);
      b = warp_op(kind, mask, b, param, width, loc.line(), loc.file_name());
      memcpy(dst + off, &b, n);
    }
    return out;
  }
}
}  // namespace cudashim

template <class _Tp>
inline _Tp __shfl_sync(unsigned mask, _Tp v, int src, int width = 32, CUDASHIM_LOC) {
  return cudashim::shfl(cudashim::_Wop_SHFL, mask, v, src, width, loc);
}
template <class _Tp>
inline _Tp __shfl_up_sync(unsigned mask, _Tp v, unsigned delta, int width = 32, CUDASHIM_LOC) {
  return cudashim::shfl(cudashim::_Wop_SHFL_UP, mask, v, (int)delta, width, loc);
}
template <class _Tp>
inline _Tp __shfl_down_sync(unsigned mask, _Tp v, unsigned delta, int width = 32, CUDASHIM_LOC) {
  return cudashim::shfl(cudashim::_Wop_SHFL_DOWN, mask, v, (int)delta, width, loc);
}
template <class _Tp>
inline _Tp __shfl_xor_sync(unsigned mask, _Tp v, int lane_mask, int width = 32, CUDASHIM_LOC) {
  return cudashim::shfl(cudashim::_Wop_SHFL_XOR, mask, v, lane_mask, width, loc);
}
template <class _Tp>
inline unsigned __match_any_sync(unsigned mask, _Tp v, CUDASHIM_LOC) {
  return (unsigned)cudashim::warp_op(cudashim::_Wop_MATCH_ANY, mask, cudashim::to_bits(v), 0, 32, loc.line(), loc.file_name());
}
template <class _Tp>
inline unsigned __match_all_sync(unsigned mask, _Tp v, int* pred, CUDASHIM_LOC) {
  unsigned r = (unsigned)cudashim::warp_op(cudashim::_Wop_MATCH_ALL, mask, cudashim::to_bits(v), 0, 32, loc.line(), loc.file_name());
  *pred = r != 0;
  return r;
}
#define CUDASHIM_WREDUCE(NAME, KIND, _Tp)                                                          \
  inline _Tp NAME(unsigned mask, _Tp v, CUDASHIM_LOC) {                                              \
    return (_Tp)cudashim::warp_op(cudashim::KIND, mask, (unsigned long long)(long long)v, 0, 32, loc.line(), loc.file_name()); \
  }
CUDASHIM_WREDUCE(__reduce_add_sync, _Wop_REDUCE_ADD, int)
CUDASHIM_WREDUCE(__reduce_add_sync, _Wop_REDUCE_ADD, unsigned)
CUDASHIM_WREDUCE(__reduce_min_sync, _Wop_REDUCE_MIN, int)
CUDASHIM_WREDUCE(__reduce_min_sync, _Wop_REDUCE_UMIN, unsigned)
CUDASHIM_WREDUCE(__reduce_max_sync, _Wop_REDUCE_MAX, int)
CUDASHIM_WREDUCE(__reduce_max_sync, _Wop_REDUCE_UMAX, unsigned)
CUDASHIM_WREDUCE(__reduce_and_sync, _Wop_REDUCE_AND, unsigned)
CUDASHIM_WREDUCE(__reduce_or_sync, _Wop_REDUCE_OR, unsigned)
CUDASHIM_WREDUCE(__reduce_xor_sync, _Wop_REDUCE_XOR, unsigned)

inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_block() { std::atomic_signal_fence(std::memory_order_seq_cst); }
inline void __threadfence_system() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __nanosleep(unsigned) {}
namespace cudashim {
// The SM clock the emulated device reports (cudaDevAttrClockRate, in kHz).
constexpr long long kClockRateKHz = 1410000;
}
// The SM cycle counter: clock64(), and clock() in device code (the runtime's `clock`), count
// cycles of the reported clock rate in wall time, so a delay kernel that spins
// `clockRate * ms` cycles waits `ms` and an elapsed count divided by the rate is a time.
inline long long clock64() {
  long long ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                     std::chrono::steady_clock::now().time_since_epoch()).count();
  return ns / 1000000 * cudashim::kClockRateKHz + ns % 1000000 * cudashim::kClockRateKHz / 1000000;
}
inline unsigned long long __globaltimer() {
  return (unsigned long long)std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch()).count();
}
inline void __trap() { cudashim::fatal("__trap() called in device code"); }
inline void __brkpt() {}
inline void __prof_trigger(int) {}
template <class _Tp>
inline _Tp __ldg(const _Tp* p) { return *p; }
template <class _Tp>
inline _Tp __ldcg(const _Tp* p) { return *p; }
template <class _Tp>
inline _Tp __ldca(const _Tp* p) { return *p; }
template <class _Tp>
inline _Tp __ldcs(const _Tp* p) { return *p; }
template <class _Tp>
inline _Tp __ldlu(const _Tp* p) { return *p; }
template <class _Tp>
inline _Tp __ldcv(const _Tp* p) { return *p; }
template <class _Tp>
inline void __stcg(_Tp* p, _Tp v) { *p = v; }
template <class _Tp>
inline void __stcs(_Tp* p, _Tp v) { *p = v; }
template <class _Tp>
inline void __stwb(_Tp* p, _Tp v) { *p = v; }
template <class _Tp>
inline void __stwt(_Tp* p, _Tp v) { *p = v; }
inline unsigned __lane_id() { return cudashim::lane_id(); }

// ---------------------------------------------------------------- atomics
// Blocks run concurrently on worker threads, so these are real atomic operations.
#define CUDASHIM_ATOMIC_INT(_Tp)                                                                   \
  inline _Tp atomicAdd(_Tp* p, _Tp v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }           \
  inline _Tp atomicSub(_Tp* p, _Tp v) { return __atomic_fetch_sub(p, v, __ATOMIC_SEQ_CST); }           \
  inline _Tp atomicExch(_Tp* p, _Tp v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }         \
  inline _Tp atomicAnd(_Tp* p, _Tp v) { return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST); }           \
  inline _Tp atomicOr(_Tp* p, _Tp v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }             \
  inline _Tp atomicXor(_Tp* p, _Tp v) { return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST); }           \
  inline _Tp atomicCAS(_Tp* p, _Tp cmp, _Tp v) {                                                         \
    __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);          \
    return cmp;                                                                                  \
  }                                                                                              \
  inline _Tp atomicMin(_Tp* p, _Tp v) {                                                                \
    _Tp old = __atomic_load_n(p, __ATOMIC_SEQ_CST);                                                \
    while (v < old && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {} \
    return old;                                                                                  \
  }                                                                                              \
  inline _Tp atomicMax(_Tp* p, _Tp v) {                                                                \
    _Tp old = __atomic_load_n(p, __ATOMIC_SEQ_CST);                                                \
    while (v > old && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {} \
    return old;                                                                                  \
  }
CUDASHIM_ATOMIC_INT(int)
CUDASHIM_ATOMIC_INT(unsigned int)
CUDASHIM_ATOMIC_INT(long long)
CUDASHIM_ATOMIC_INT(unsigned long long)
CUDASHIM_ATOMIC_INT(long)
CUDASHIM_ATOMIC_INT(unsigned long)

namespace cudashim {
template <class _Tp, class _Op>
inline _Tp atomic_update(_Tp* p, _Op op) {
  _Tp old;
  __atomic_load(p, &old, __ATOMIC_SEQ_CST);
  _Tp want;
  do {
    want = op(old);
  } while (!__atomic_compare_exchange(p, &old, &want, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
  return old;
}
}  // namespace cudashim
// The built-in atomics are compare-and-swap loops written out, not `atomic_update` calls: a
// non-template inline function that instantiates a template does so in every program that
// includes the shim, whether it calls the function or not (GCC instantiates at the end of each
// translation unit what the precompiled header's function bodies use).
#define CUDASHIM_ATOMIC_CAS(T, NAME, ARG, NEW)                                                  \
  inline T NAME(T* p, T ARG) {                                                                  \
    T o;                                                                                        \
    __atomic_load(p, &o, __ATOMIC_SEQ_CST);                                                     \
    T want;                                                                                     \
    do {                                                                                        \
      want = (NEW);                                                                             \
    } while (!__atomic_compare_exchange(p, &o, &want, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)); \
    return o;                                                                                   \
  }
CUDASHIM_ATOMIC_CAS(float, atomicAdd, v, o + v)
CUDASHIM_ATOMIC_CAS(double, atomicAdd, v, o + v)
CUDASHIM_ATOMIC_CAS(float, atomicSub, v, o - v)
CUDASHIM_ATOMIC_CAS(double, atomicSub, v, o - v)
inline float atomicExch(float* p, float v) { float r; __atomic_exchange(p, &v, &r, __ATOMIC_SEQ_CST); return r; }
inline double atomicExch(double* p, double v) { double r; __atomic_exchange(p, &v, &r, __ATOMIC_SEQ_CST); return r; }
inline unsigned short atomicCAS(unsigned short* p, unsigned short cmp, unsigned short v) {
  __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return cmp;
}
CUDASHIM_ATOMIC_CAS(unsigned, atomicInc, lim, o >= lim ? 0u : o + 1)
CUDASHIM_ATOMIC_CAS(unsigned, atomicDec, lim, (o == 0 || o > lim) ? lim : o - 1)
#undef CUDASHIM_ATOMIC_CAS
#define CUDASHIM_ATOMIC_SCOPED(NAME)                                               \
  template <class _Tp, class... _Rp> inline auto NAME##_block(_Tp* p, _Rp... r) { return NAME(p, r...); } \
  template <class _Tp, class... _Rp> inline auto NAME##_system(_Tp* p, _Rp... r) { return NAME(p, r...); }
CUDASHIM_ATOMIC_SCOPED(atomicAdd)
CUDASHIM_ATOMIC_SCOPED(atomicSub)
CUDASHIM_ATOMIC_SCOPED(atomicExch)
CUDASHIM_ATOMIC_SCOPED(atomicMin)
CUDASHIM_ATOMIC_SCOPED(atomicMax)
CUDASHIM_ATOMIC_SCOPED(atomicAnd)
CUDASHIM_ATOMIC_SCOPED(atomicOr)
CUDASHIM_ATOMIC_SCOPED(atomicXor)
CUDASHIM_ATOMIC_SCOPED(atomicCAS)
CUDASHIM_ATOMIC_SCOPED(atomicInc)
CUDASHIM_ATOMIC_SCOPED(atomicDec)

// ---------------------------------------------------------------- min / max
// CUDA declares non-template overloads for every pair of arithmetic types; non-templates also
// win over std::min/std::max when a program says `using namespace std`.
#define CUDASHIM_MINMAX(_Ap, _Bp)                                                                 \
  inline std::common_type_t<_Ap, _Bp> min(_Ap a, _Bp b) {                                              \
    using _Cm = std::common_type_t<_Ap, _Bp>;                                                        \
    return (_Cm)b < (_Cm)a ? (_Cm)b : (_Cm)a;                                                          \
  }                                                                                            \
  inline std::common_type_t<_Ap, _Bp> max(_Ap a, _Bp b) {                                              \
    using _Cm = std::common_type_t<_Ap, _Bp>;                                                        \
    return (_Cm)a < (_Cm)b ? (_Cm)b : (_Cm)a;                                                          \
  }
#define CUDASHIM_MINMAX_ROW(_Ap)                                                             \
  CUDASHIM_MINMAX(_Ap, int) CUDASHIM_MINMAX(_Ap, unsigned int) CUDASHIM_MINMAX(_Ap, long)        \
  CUDASHIM_MINMAX(_Ap, unsigned long) CUDASHIM_MINMAX(_Ap, long long)                          \
  CUDASHIM_MINMAX(_Ap, unsigned long long)
CUDASHIM_MINMAX_ROW(int)
CUDASHIM_MINMAX_ROW(unsigned int)
CUDASHIM_MINMAX_ROW(long)
CUDASHIM_MINMAX_ROW(unsigned long)
CUDASHIM_MINMAX_ROW(long long)
CUDASHIM_MINMAX_ROW(unsigned long long)
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double max(double a, double b) { return fmax(a, b); }
inline double min(float a, double b) { return fmin(a, b); }
inline double max(float a, double b) { return fmax(a, b); }
inline double min(double a, float b) { return fmin(a, b); }
inline double max(double a, float b) { return fmax(a, b); }
inline float min(float a, int b) { return fminf(a, (float)b); }
inline float max(float a, int b) { return fmaxf(a, (float)b); }
inline float min(int a, float b) { return fminf((float)a, b); }
inline float max(int a, float b) { return fmaxf((float)a, b); }
inline double min(double a, int b) { return fmin(a, (double)b); }
inline double max(double a, int b) { return fmax(a, (double)b); }
inline double min(int a, double b) { return fmin((double)a, b); }
inline double max(int a, double b) { return fmax((double)a, b); }
inline unsigned umin(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned umax(unsigned a, unsigned b) { return a < b ? b : a; }
inline long long llmin(long long a, long long b) { return a < b ? a : b; }
inline long long llmax(long long a, long long b) { return a < b ? b : a; }
inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a < b ? b : a; }

// ---------------------------------------------------------------- math intrinsics
// glibc declares __expf, __logf, ... (extern "C") but does not export them: define them here,
// with the same C linkage, so the declarations match.
extern "C" {
inline float __expf(float x) noexcept { return expf(x); }
inline float __exp10f(float x) noexcept { return exp10f(x); }
inline float __logf(float x) noexcept { return logf(x); }
inline float __log2f(float x) noexcept { return log2f(x); }
inline float __log10f(float x) noexcept { return log10f(x); }
inline float __sinf(float x) noexcept { return sinf(x); }
inline float __cosf(float x) noexcept { return cosf(x); }
inline float __tanf(float x) noexcept { return tanf(x); }
inline void __sincosf(float x, float* s, float* c) noexcept { *s = sinf(x); *c = cosf(x); }
inline float __powf(float x, float y) noexcept { return powf(x, y); }
}
// PTX div.approx.f32 is a * rcp(b), and the reciprocal of |b| in (2^126, 2^128) is below
// float's normal range and flushed: the quotient is 0, or NaN for an infinite a (libdevice
// __nv_fast_fdividef).
inline float __fdividef(float a, float b) {
  const float m = fabsf(b);
  if (m > 0x1p126f && m < __builtin_inff()) return a * copysignf(0.0f, b);
  return a / b;
}
inline float fdividef(float a, float b) { return a / b; }
inline double fdivide(double a, double b) { return a / b; }
inline float __saturatef(float x) { return x != x ? 0.0f : (x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x)); }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
inline double rcbrt(double x) { return 1.0 / cbrt(x); }
namespace cudashim {
// sin(pi x) or cos(pi x), x reduced exactly (modulo 2, then to a quarter turn) before it is
// multiplied by pi: sin(pi * x) itself is off by up to 1 once pi * x is rounded to a float
// whose ulp is large (sinpif(1e6f) gave 0.096, not 0). An exact zero is +0 for cospi and has
// x's sign for sinpi (IEEE 754 sinPi/cosPi; CUDA documents only sinpi(+-0) = +-0).
inline double _Sincospi(double __x, bool __cos) {
  if (__x == 0) return __cos ? 1.0 : __x;
  if (__builtin_isinf(__x)) return __x - __x;
  const double __r = std::fmod(__x, 2.0);
  const double __n = __builtin_roundeven(2.0 * __r);
  const double __f = __r - 0.5 * __n;
  const double __s = std::sin(M_PI * __f), __c = std::cos(M_PI * __f);
  double __v;
  switch (((int)__n + (__cos ? 1 : 0)) & 3) {
    case 0: __v = __s; break;
    case 1: __v = __c; break;
    case 2: __v = -__s; break;
    default: __v = -__c; break;
  }
  if (__v == 0) return __cos ? 0.0 : std::copysign(0.0, __x);
  return __v;
}
}  // namespace cudashim
inline float sinpif(float x) { return (float)cudashim::_Sincospi(x, false); }
inline float cospif(float x) { return (float)cudashim::_Sincospi(x, true); }
inline double sinpi(double x) { return cudashim::_Sincospi(x, false); }
inline double cospi(double x) { return cudashim::_Sincospi(x, true); }
inline void sincospif(float x, float* s, float* c) { *s = sinpif(x); *c = cospif(x); }
inline void sincospi(double x, double* s, double* c) { *s = sinpi(x); *c = cospi(x); }
inline float normcdff(float x) { return 0.5f * erfcf(-x * (float)M_SQRT1_2); }
inline double normcdf(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }
inline float rhypotf(float a, float b) { return 1.0f / hypotf(a, b); }
inline double rhypot(double a, double b) { return 1.0 / hypot(a, b); }
inline float norm3df(float a, float b, float c) { return sqrtf(a * a + b * b + c * c); }
inline float rnorm3df(float a, float b, float c) { return 1.0f / norm3df(a, b, c); }
inline double norm3d(double a, double b, double c) { return sqrt(a * a + b * b + c * c); }
inline float norm4df(float a, float b, float c, float d) { return sqrtf(a * a + b * b + c * c + d * d); }
namespace cudashim {
// In double for both precisions (the float forms round its result): not a template, which
// every program including the shim would instantiate (see CUDASHIM_ATOMIC_CAS).
inline double erfinv_impl(double y) {
  if (y <= -1.0) return -INFINITY;
  if (y >= 1.0) return INFINITY;
  // Giles' approximation refined by two Newton steps on erf.
  double w = -std::log((1.0 - y) * (1.0 + y)), x;
  if (w < 5.0) {
    w -= 2.5;
    x = 2.81022636e-08; x = 3.43273939e-07 + x * w; x = -3.5233877e-06 + x * w;
    x = -4.39150654e-06 + x * w; x = 0.00021858087 + x * w; x = -0.00125372503 + x * w;
    x = -0.00417768164 + x * w; x = 0.246640727 + x * w; x = 1.50140941 + x * w;
  } else {
    w = std::sqrt(w) - 3.0;
    x = -0.000200214257; x = 0.000100950558 + x * w; x = 0.00134934322 + x * w;
    x = -0.00367342844 + x * w; x = 0.00573950773 + x * w; x = -0.0076224613 + x * w;
    x = 0.00943887047 + x * w; x = 1.00167406 + x * w; x = 2.83297682 + x * w;
  }
  x *= y;
  for (int i = 0; i < 2; ++i) x -= (std::erf(x) - y) / (2.0 / std::sqrt(M_PI) * std::exp(-x * x));
  return x;
}
}  // namespace cudashim
inline float erfinvf(float y) { return (float)cudashim::erfinv_impl(y); }
inline double erfinv(double y) { return cudashim::erfinv_impl(y); }
inline float erfcinvf(float y) { return (float)cudashim::erfinv_impl(1.0f - y); }
inline double erfcinv(double y) { return cudashim::erfinv_impl(1.0 - y); }
inline float normcdfinvf(float p) { return -(float)M_SQRT2 * erfcinvf(2.0f * p); }
inline double normcdfinv(double p) { return -M_SQRT2 * erfcinv(2.0 * p); }

namespace cudashim {
// CUDA's _rn arithmetic intrinsics are never merged into an FMA (that is what they are for:
// `__fmul_rn(a, d) - __fmul_rn(b, c)` is exactly 0 where a*d == b*c); the shim builds with
// -ffp-contract=fast, so operands and result pass through an empty asm that g++ cannot see into.
inline float _Opaque(float __v) { __asm__("" : "+x"(__v)); return __v; }
inline double _Opaque(double __v) { __asm__("" : "+x"(__v)); return __v; }
// The _rz/_ru/_rd intrinsics round the exact result in their direction: from the result rounded
// to nearest, `__r`, and the sign of (exact - __r), `__dir`, that is __r or its neighbour toward
// the exact value. Each operation finds the sign exactly (error-free transformations), so the
// result is the correctly rounded one, as the GPU's.
enum _Rdir : int { _Rdir_z, _Rdir_u, _Rdir_d };
inline int _Sgn(double __a, double __b) { return (__a > __b) - (__a < __b); }
inline int _Sgnl(long double __a, long double __b) { return (__a > __b) - (__a < __b); }
inline float _Directed(float __r, int __dir, _Rdir __m) {
  if (__dir == 0) return __r;
  if (__m == _Rdir_u) return __dir > 0 ? std::nextafter(__r, __builtin_inff()) : __r;
  if (__m == _Rdir_d) return __dir < 0 ? std::nextafter(__r, -__builtin_inff()) : __r;
  return __r != 0 && (__r > 0) == (__dir < 0) ? std::nextafter(__r, 0.0f) : __r;
}
inline double _Directed(double __r, int __dir, _Rdir __m) {
  if (__dir == 0) return __r;
  if (__m == _Rdir_u) return __dir > 0 ? std::nextafter(__r, __builtin_inf()) : __r;
  if (__m == _Rdir_d) return __dir < 0 ? std::nextafter(__r, -__builtin_inf()) : __r;
  return __r != 0 && (__r > 0) == (__dir < 0) ? std::nextafter(__r, 0.0) : __r;
}
// An exact zero sum is -0 when rounding down unless both terms are +0 (IEEE 754), else as
// rounded to nearest.
inline bool _Neg_zero_sum(double __a, double __b, _Rdir __m) {
  return __m == _Rdir_d && (__builtin_signbit(__a) || __builtin_signbit(__b) || __a != 0);
}
// a + b for floats: s = a + b in double and its error e (TwoSum); s - r is exact and, where not
// 0, outweighs e.
inline float _Fadd(float __a, float __b, _Rdir __m) {
  const double __x = _Opaque((double)__a), __y = _Opaque((double)__b);
  const double __s = _Opaque(__x + __y), __bb = _Opaque(__s - __x);
  const double __e = (__x - (__s - __bb)) + (__y - __bb);
  const float __r = (float)__s;
  if (__s == 0) return _Neg_zero_sum(__x, __y, __m) ? -0.0f : __r;
  return _Directed(__r, __r != __s ? _Sgn(__s, __r) : _Sgn(__e, 0), __m);
}
inline float _Fmul(float __a, float __b, _Rdir __m) {
  const double __p = _Opaque((double)__a * (double)__b);  // exact
  const float __r = (float)__p;
  return _Directed(__r, _Sgn(__p, __r), __m);
}
// q = a / b rounded to nearest; a - q b is exact in double, its sign (times b's) that of a/b - q.
inline float _Fdiv(float __a, float __b, _Rdir __m) {
  const float __q = _Opaque(__a / __b);
  const double __rem = _Opaque((double)__a - _Opaque((double)__q * (double)__b));
  return _Directed(__q, _Sgn(__rem, 0) * (__b < 0 ? -1 : 1), __m);
}
inline float _Fsqrt(float __a, _Rdir __m) {
  const float __s = _Opaque(std::sqrt(__a));
  const double __rem = _Opaque((double)__a - _Opaque((double)__s * (double)__s));
  return _Directed(__s, _Sgn(__rem, 0), __m);
}
inline float _Ffma(float __a, float __b, float __c, _Rdir __m) {
  const double __p = _Opaque((double)__a * (double)__b), __y = (double)__c;  // p exact
  const double __s = _Opaque(__p + __y), __bb = _Opaque(__s - __p);
  const double __e = (__p - (__s - __bb)) + (__y - __bb);
  const float __r = (float)__s;
  if (__s == 0 && __e == 0) return _Neg_zero_sum(__p, __y, __m) ? -0.0f : __r;
  return _Directed(__r, __r != __s ? _Sgn(__s, __r) : _Sgn(__e, 0), __m);
}
inline double _Dadd(double __a, double __b, _Rdir __m) {
  __a = _Opaque(__a);
  __b = _Opaque(__b);
  const double __s = _Opaque(__a + __b), __bb = _Opaque(__s - __a);
  const double __e = (__a - (__s - __bb)) + (__b - __bb);
  if (__s == 0) return _Neg_zero_sum(__a, __b, __m) ? -0.0 : __s;
  return _Directed(__s, _Sgn(__e, 0), __m);
}
// The product, and the remainders a - q b and a - s s, are exact in binary128 (106 of its 113
// bits, far from its range's ends, where fma's error would underflow).
inline int _Sgnq(__float128 __a, __float128 __b) { return (__a > __b) - (__a < __b); }
inline double _Dmul(double __a, double __b, _Rdir __m) {
  const __float128 __p = (__float128)__a * (__float128)__b;
  const double __r = (double)__p;
  return _Directed(__r, _Sgnq(__p, (__float128)__r), __m);
}
inline double _Ddiv(double __a, double __b, _Rdir __m) {
  const double __q = _Opaque(_Opaque(__a) / _Opaque(__b));
  const __float128 __rem = (__float128)__a - (__float128)__q * (__float128)__b;
  return _Directed(__q, _Sgnq(__rem, 0) * (__b < 0 ? -1 : 1), __m);
}
inline double _Dsqrt(double __a, _Rdir __m) {
  const double __s = _Opaque(std::sqrt(__a));
  return _Directed(__s, _Sgnq((__float128)__a - (__float128)__s * (__float128)__s, 0), __m);
}
// a * b + c for doubles: the product is exact in binary128, the sum's error by TwoSum there.
inline double _Dfma(double __a, double __b, double __c, _Rdir __m) {
  const __float128 __p = (__float128)__a * (__float128)__b, __y = __c;
  const __float128 __s = __p + __y, __bb = __s - __p;
  const __float128 __e = (__p - (__s - __bb)) + (__y - __bb);
  const double __r = (double)__s;
  if (__s == 0 && __e == 0) return _Neg_zero_sum(__a * __b, __c, __m) ? -0.0 : std::fma(__a, __b, __c);
  return _Directed(__r, (__float128)__r != __s ? _Sgnq(__s, (__float128)__r) : _Sgnq(__e, 0), __m);
}
}  // namespace cudashim
#define CUDASHIM_RND4(NAME, T, ARGS, RN, FN, ...)                                             \
  inline T NAME##_rn ARGS { return RN; }                                                         \
  inline T NAME##_rz ARGS { return ::cudashim::FN(__VA_ARGS__, ::cudashim::_Rdir_z); }           \
  inline T NAME##_ru ARGS { return ::cudashim::FN(__VA_ARGS__, ::cudashim::_Rdir_u); }           \
  inline T NAME##_rd ARGS { return ::cudashim::FN(__VA_ARGS__, ::cudashim::_Rdir_d); }
#define CUDASHIM_OPQ(V) ::cudashim::_Opaque(V)
CUDASHIM_RND4(__fadd, float, (float a, float b), CUDASHIM_OPQ(CUDASHIM_OPQ(a) + CUDASHIM_OPQ(b)), _Fadd, a, b)
CUDASHIM_RND4(__fsub, float, (float a, float b), CUDASHIM_OPQ(CUDASHIM_OPQ(a) - CUDASHIM_OPQ(b)), _Fadd, a, -b)
CUDASHIM_RND4(__fmul, float, (float a, float b), CUDASHIM_OPQ(CUDASHIM_OPQ(a) * CUDASHIM_OPQ(b)), _Fmul, a, b)
CUDASHIM_RND4(__fdiv, float, (float a, float b), a / b, _Fdiv, a, b)
CUDASHIM_RND4(__fmaf, float, (float a, float b, float c), fmaf(a, b, c), _Ffma, a, b, c)
CUDASHIM_RND4(__frcp, float, (float a), 1.0f / a, _Fdiv, 1.0f, a)
CUDASHIM_RND4(__fsqrt, float, (float a), sqrtf(a), _Fsqrt, a)
CUDASHIM_RND4(__dadd, double, (double a, double b), CUDASHIM_OPQ(CUDASHIM_OPQ(a) + CUDASHIM_OPQ(b)), _Dadd, a, b)
CUDASHIM_RND4(__dsub, double, (double a, double b), CUDASHIM_OPQ(CUDASHIM_OPQ(a) - CUDASHIM_OPQ(b)), _Dadd, a, -b)
CUDASHIM_RND4(__dmul, double, (double a, double b), CUDASHIM_OPQ(CUDASHIM_OPQ(a) * CUDASHIM_OPQ(b)), _Dmul, a, b)
CUDASHIM_RND4(__ddiv, double, (double a, double b), a / b, _Ddiv, a, b)
CUDASHIM_RND4(__fma, double, (double a, double b, double c), fma(a, b, c), _Dfma, a, b, c)
CUDASHIM_RND4(__drcp, double, (double a), 1.0 / a, _Ddiv, 1.0, a)
CUDASHIM_RND4(__dsqrt, double, (double a), sqrt(a), _Dsqrt, a)
#undef CUDASHIM_OPQ
// Correctly rounded, as CUDA documents it: 1.0f / sqrtf(a) rounds twice (1 ulp off at
// a = 1 + 2^-23); the quotient in double is within 2^-52 (relative) of the exact value.
inline float __frsqrt_rn(float a) { return (float)(1.0 / std::sqrt((double)a)); }
inline float __fmaf_ieee_rn(float a, float b, float c) { return fmaf(a, b, c); }

// Conversions. _rn rounds to nearest even, _rz truncates, _rd/_ru floor/ceil. To an integer,
// PTX cvt saturates to the target's range, and a NaN gives 0, except from a double or to a
// 64-bit integer, where it gives 1 << (width - 1) (PTX ISA 9.0, cvt). A plain C++ cast gave x86's
// "integer indefinite" (1 << (width - 1)) for every NaN and out-of-range value, and wrapped a
// negative value converted to unsigned (-1.0f gave 0xFFFFFFFF, the GPU 0).
#define CUDASHIM_CVT1(NAME, FROM_T, TO_T, LO, HI, NANV, ROUND) \
  inline TO_T NAME(FROM_T x) {                                 \
    if (x != x) return (TO_T)(NANV);                           \
    const double t = ROUND((double)x);                         \
    if (t <= (double)(LO)) return (TO_T)(LO);                  \
    if (t >= (double)(HI)) return (TO_T)(HI);                  \
    return (TO_T)t;                                            \
  }
#define CUDASHIM_CVT(FROM, TO, TO_T, FROM_T, LO, HI, NANV)                                   \
  CUDASHIM_CVT1(__##FROM##2##TO##_rn, FROM_T, TO_T, LO, HI, NANV, __builtin_roundeven)     \
  CUDASHIM_CVT1(__##FROM##2##TO##_rz, FROM_T, TO_T, LO, HI, NANV, __builtin_trunc)         \
  CUDASHIM_CVT1(__##FROM##2##TO##_rd, FROM_T, TO_T, LO, HI, NANV, __builtin_floor)         \
  CUDASHIM_CVT1(__##FROM##2##TO##_ru, FROM_T, TO_T, LO, HI, NANV, __builtin_ceil)
CUDASHIM_CVT(float, int, int, float, -2147483647 - 1, 2147483647, 0)
CUDASHIM_CVT(float, uint, unsigned int, float, 0u, 4294967295u, 0u)
CUDASHIM_CVT(float, ll, long long, float, -9223372036854775807ll - 1, 9223372036854775807ll,
             -9223372036854775807ll - 1)
CUDASHIM_CVT(float, ull, unsigned long long, float, 0ull, 18446744073709551615ull, 9223372036854775808ull)
CUDASHIM_CVT(double, int, int, double, -2147483647 - 1, 2147483647, -2147483647 - 1)
CUDASHIM_CVT(double, uint, unsigned int, double, 0u, 4294967295u, 2147483648u)
CUDASHIM_CVT(double, ll, long long, double, -9223372036854775807ll - 1, 9223372036854775807ll,
             -9223372036854775807ll - 1)
CUDASHIM_CVT(double, ull, unsigned long long, double, 0ull, 18446744073709551615ull,
             9223372036854775808ull)
#undef CUDASHIM_CVT
#undef CUDASHIM_CVT1
// To floating point in a directed mode: the conversion rounded to nearest, moved one step where
// it went the wrong way (the comparison is exact: long double holds any 64-bit integer).
#define CUDASHIM_TOFLOAT(FROM, FROM_T, TO, TO_T)                                                       \
  inline TO_T __##FROM##2##TO##_rn(FROM_T x) { return (TO_T)x; }                                          \
  inline TO_T __##FROM##2##TO##_rz(FROM_T x) {                                                            \
    return ::cudashim::_Directed((TO_T)x, ::cudashim::_Sgnl((long double)x, (long double)(TO_T)x), ::cudashim::_Rdir_z); \
  }                                                                                                     \
  inline TO_T __##FROM##2##TO##_rd(FROM_T x) {                                                            \
    return ::cudashim::_Directed((TO_T)x, ::cudashim::_Sgnl((long double)x, (long double)(TO_T)x), ::cudashim::_Rdir_d); \
  }                                                                                                     \
  inline TO_T __##FROM##2##TO##_ru(FROM_T x) {                                                            \
    return ::cudashim::_Directed((TO_T)x, ::cudashim::_Sgnl((long double)x, (long double)(TO_T)x), ::cudashim::_Rdir_u); \
  }
CUDASHIM_TOFLOAT(int, int, float, float)
CUDASHIM_TOFLOAT(uint, unsigned int, float, float)
CUDASHIM_TOFLOAT(ll, long long, float, float)
CUDASHIM_TOFLOAT(ull, unsigned long long, float, float)
CUDASHIM_TOFLOAT(ll, long long, double, double)
CUDASHIM_TOFLOAT(ull, unsigned long long, double, double)
CUDASHIM_TOFLOAT(double, double, float, float)
inline double __int2double_rn(int x) { return x; }
inline double __uint2double_rn(unsigned x) { return x; }
inline float __float_as_float(float x) { return x; }
inline int __float_as_int(float x) { int r; memcpy(&r, &x, 4); return r; }
inline unsigned __float_as_uint(float x) { unsigned r; memcpy(&r, &x, 4); return r; }
inline float __int_as_float(int x) { float r; memcpy(&r, &x, 4); return r; }
inline float __uint_as_float(unsigned x) { float r; memcpy(&r, &x, 4); return r; }
inline long long __double_as_longlong(double x) { long long r; memcpy(&r, &x, 8); return r; }
inline double __longlong_as_double(long long x) { double r; memcpy(&r, &x, 8); return r; }
inline int __double2hiint(double x) { return (int)(__double_as_longlong(x) >> 32); }
inline int __double2loint(double x) { return (int)(unsigned)(__double_as_longlong(x) & 0xffffffffu); }
inline double __hiloint2double(int hi, int lo) { return __longlong_as_double(((long long)hi << 32) | (unsigned)lo); }

// Bit manipulation.
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned __brev(unsigned x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  return __builtin_bswap32(x);
}
inline unsigned long long __brevll(unsigned long long x) {
  return ((unsigned long long)__brev((unsigned)x) << 32) | __brev((unsigned)(x >> 32));
}
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  unsigned long long v = ((unsigned long long)y << 32) | x;
  unsigned r = 0;
  for (int i = 0; i < 4; ++i) r |= (unsigned)((v >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
  return r;
}
inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s) {
  unsigned long long v = ((unsigned long long)hi << 32) | lo;
  return (unsigned)((v << (s & 31)) >> 32);
}
inline unsigned __funnelshift_lc(unsigned lo, unsigned hi, unsigned s) {
  unsigned long long v = ((unsigned long long)hi << 32) | lo;
  return (unsigned)((v << (s > 32 ? 32 : s)) >> 32);
}
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) {
  unsigned long long v = ((unsigned long long)hi << 32) | lo;
  return (unsigned)(v >> (s & 31));
}
inline unsigned __funnelshift_rc(unsigned lo, unsigned hi, unsigned s) {
  unsigned long long v = ((unsigned long long)hi << 32) | lo;
  return (unsigned)(v >> (s > 32 ? 32 : s));
}
inline int __mul24(int a, int b) { return (int)((long long)((a << 8) >> 8) * ((b << 8) >> 8)); }
inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffffu) * (b & 0xffffffu); }
inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
inline long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
inline int __hadd(int a, int b) { return (int)(((long long)a + b) >> 1); }
inline int __rhadd(int a, int b) { return (int)(((long long)a + b + 1) >> 1); }
inline unsigned __uhadd(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a + b) >> 1); }
inline unsigned __urhadd(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a + b + 1) >> 1); }
// In unsigned arithmetic: the GPU's wraps, and a signed overflow (INT_MAX - INT_MIN) let g++
// assume it away.
inline unsigned __sad(int a, int b, unsigned c) { return (a > b ? (unsigned)a - (unsigned)b : (unsigned)b - (unsigned)a) + c; }
inline unsigned __usad(unsigned a, unsigned b, unsigned c) { return (a > b ? a - b : b - a) + c; }
inline int __dp4a(int a, int b, int c) {
  unsigned r = (unsigned)c;
  for (int i = 0; i < 4; ++i) r += (unsigned)((int)(signed char)(a >> (8 * i)) * (int)(signed char)(b >> (8 * i)));
  return (int)r;
}
inline unsigned __dp4a(unsigned a, unsigned b, unsigned c) {
  for (int i = 0; i < 4; ++i) c += ((a >> (8 * i)) & 0xff) * ((b >> (8 * i)) & 0xff);
  return c;
}
// SIMD-within-a-word (__vadd2 ... __vsubus4) and DPX (__vimax3_s32, __viaddmax_s16x2, ...).
#include <cudashim/simd_intrinsics.h>

// Texture and surface objects (arrays, cudaCreateTextureObject, tex2D, surf2Dwrite, ...).
#include <texture_indirect_functions.h>
#include <surface_indirect_functions.h>

// CUDA graphs: the parameters of memory allocation nodes and of nodes made by kind
// (cudaGraphAddNode, CUDA 12.4+), here because they hold a cudaMemPoolProps and a
// cudaMemcpy3DParms (texture_types.h).
struct cudaMemAllocNodeParams {
  struct cudaMemPoolProps poolProps;
  const struct cudaMemAccessDesc* accessDescs;
  size_t accessDescCount;
  size_t bytesize;
  void* dptr;  // out: the allocation's address, fixed when the node is made
};
struct cudaMemAllocNodeParamsV2 {
  struct cudaMemPoolProps poolProps;
  const struct cudaMemAccessDesc* accessDescs;
  size_t accessDescCount;
  size_t bytesize;
  void* dptr;
};
struct cudaMemFreeNodeParams { void* dptr; };
struct cudaKernelNodeParamsV2 {
  void* func;
  dim3 gridDim;
  dim3 blockDim;
  unsigned int sharedMemBytes;
  void** kernelParams;
  void** extra;
};
struct cudaMemcpyNodeParams {
  int flags;
  int reserved[3];
  struct cudaMemcpy3DParms copyParams;
};
struct cudaMemsetParamsV2 {
  void* dst;
  size_t pitch;
  unsigned int value;
  unsigned int elementSize;
  size_t width;
  size_t height;
};
struct cudaHostNodeParamsV2 {
  cudaHostFn_t fn;
  void* userData;
};
struct cudaChildGraphNodeParams { cudaGraph_t graph; };
struct cudaEventRecordNodeParams { cudaEvent_t event; };
struct cudaEventWaitNodeParams { cudaEvent_t event; };
struct cudaConditionalNodeParams {
  cudaGraphConditionalHandle handle;
  enum cudaGraphConditionalNodeType type;
  unsigned int size;
  cudaGraph_t* phGraph_out;  // out: the node's body graphs (`size` of them), owned by the node
};
struct cudaGraphNodeParams {
  enum cudaGraphNodeType type;
  int reserved0[3];
  union {
    long long reserved1[29];
    struct cudaKernelNodeParamsV2 kernel;
    struct cudaMemcpyNodeParams memcpy;
    struct cudaMemsetParamsV2 memset;
    struct cudaHostNodeParamsV2 host;
    struct cudaChildGraphNodeParams graph;
    struct cudaEventWaitNodeParams eventWait;
    struct cudaEventRecordNodeParams eventRecord;
    struct cudaMemAllocNodeParamsV2 alloc;
    struct cudaMemFreeNodeParams free;
    struct cudaConditionalNodeParams conditional;
  };
  long long reserved2;
};
cudaError_t cudaGraphAddNode(cudaGraphNode_t* n, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps,
                             cudaGraphNodeParams* p);
inline cudaError_t cudaGraphAddNode(cudaGraphNode_t* n, cudaGraph_t g, const cudaGraphNode_t* deps,
                                    const cudaGraphEdgeData*, size_t ndeps, cudaGraphNodeParams* p) {
  return cudaGraphAddNode(n, g, deps, ndeps, p);
}
cudaError_t cudaGraphNodeSetParams(cudaGraphNode_t n, cudaGraphNodeParams* p);
cudaError_t cudaGraphExecNodeSetParams(cudaGraphExec_t e, cudaGraphNode_t n, cudaGraphNodeParams* p);
// A kernel node's launch attributes (priority, access policy, ...): kept, changing nothing here,
// as a stream's are.
typedef cudaLaunchAttributeID cudaKernelNodeAttrID;
typedef cudaLaunchAttributeValue cudaKernelNodeAttrValue;
cudaError_t cudaGraphKernelNodeSetAttribute(cudaGraphNode_t n, cudaKernelNodeAttrID attr,
                                            const cudaKernelNodeAttrValue* value);
cudaError_t cudaGraphKernelNodeGetAttribute(cudaGraphNode_t n, cudaKernelNodeAttrID attr,
                                            cudaKernelNodeAttrValue* value);
cudaError_t cudaGraphKernelNodeCopyAttributes(cudaGraphNode_t dst, cudaGraphNode_t src);
// A DOT description of the graph (its nodes' kinds and edges) written to `path`.
cudaError_t cudaGraphDebugDotPrint(cudaGraph_t g, const char* path, unsigned int flags);

#endif  // CUDASHIM_CUDA_RUNTIME_H
