/* cudashim: the CUDA runtime API as C sees it, listed once.

   nvcc hands a .c unit to the host C compiler with CUDA's include folder on its path, and
   libcudart exports the runtime API with C linkage, so C host code may call it. The shim's API
   is C++ (include/cuda_runtime.h, runtime/cudashim_runtime.cpp); from these lists
   include_c/cuda_runtime_api.h declares its C face for C units, and runtime/c_api.cpp defines
   each function with C linkage, forwarding to the C++ one, and checks at compile time that every
   value and field here is the C++ header's (a C unit and the runtime must agree on the ABI).

   Enums: X(enumerator, value). Structs: F(type, field, array bounds or nothing). Functions:
   X(return type, name, (parameters), (arguments)); parameter names are reserved identifiers,
   so a program's -D macros (-DN=..., -Dsize=...) cannot reach them. */
#ifndef CUDASHIM_C_LISTS_H
#define CUDASHIM_C_LISTS_H

#define CUDASHIM_C_ENUM_cudaError(X) \
  X(cudaSuccess, 0) X(cudaErrorInvalidValue, 1) X(cudaErrorMemoryAllocation, 2) \
  X(cudaErrorInitializationError, 3) X(cudaErrorCudartUnloading, 4) \
  X(cudaErrorProfilerDisabled, 5) X(cudaErrorProfilerNotInitialized, 6) \
  X(cudaErrorProfilerAlreadyStarted, 7) X(cudaErrorProfilerAlreadyStopped, 8) \
  X(cudaErrorInvalidConfiguration, 9) X(cudaErrorInvalidPitchValue, 12) \
  X(cudaErrorInvalidSymbol, 13) X(cudaErrorInvalidHostPointer, 16) \
  X(cudaErrorInvalidDevicePointer, 17) X(cudaErrorInvalidTexture, 18) \
  X(cudaErrorInvalidTextureBinding, 19) X(cudaErrorInvalidChannelDescriptor, 20) \
  X(cudaErrorInvalidMemcpyDirection, 21) X(cudaErrorAddressOfConstant, 22) \
  X(cudaErrorTextureFetchFailed, 23) X(cudaErrorTextureNotBound, 24) \
  X(cudaErrorSynchronizationError, 25) X(cudaErrorInvalidFilterSetting, 26) \
  X(cudaErrorInvalidNormSetting, 27) X(cudaErrorMixedDeviceExecution, 28) \
  X(cudaErrorNotYetImplemented, 31) X(cudaErrorMemoryValueTooLarge, 32) \
  X(cudaErrorStubLibrary, 34) X(cudaErrorInsufficientDriver, 35) \
  X(cudaErrorCallRequiresNewerDriver, 36) X(cudaErrorInvalidSurface, 37) \
  X(cudaErrorDuplicateVariableName, 43) X(cudaErrorDuplicateTextureName, 44) \
  X(cudaErrorDuplicateSurfaceName, 45) X(cudaErrorDevicesUnavailable, 46) \
  X(cudaErrorIncompatibleDriverContext, 49) X(cudaErrorMissingConfiguration, 52) \
  X(cudaErrorPriorLaunchFailure, 53) X(cudaErrorLaunchMaxDepthExceeded, 65) \
  X(cudaErrorLaunchFileScopedTex, 66) X(cudaErrorLaunchFileScopedSurf, 67) \
  X(cudaErrorSyncDepthExceeded, 68) X(cudaErrorLaunchPendingCountExceeded, 69) \
  X(cudaErrorInvalidDeviceFunction, 98) X(cudaErrorNoDevice, 100) \
  X(cudaErrorInvalidDevice, 101) X(cudaErrorDeviceNotLicensed, 102) \
  X(cudaErrorSoftwareValidityNotEstablished, 103) X(cudaErrorStartupFailure, 127) \
  X(cudaErrorInvalidKernelImage, 200) X(cudaErrorDeviceUninitialized, 201) \
  X(cudaErrorMapBufferObjectFailed, 205) X(cudaErrorUnmapBufferObjectFailed, 206) \
  X(cudaErrorArrayIsMapped, 207) X(cudaErrorAlreadyMapped, 208) \
  X(cudaErrorNoKernelImageForDevice, 209) X(cudaErrorAlreadyAcquired, 210) \
  X(cudaErrorNotMapped, 211) X(cudaErrorNotMappedAsArray, 212) \
  X(cudaErrorNotMappedAsPointer, 213) X(cudaErrorECCUncorrectable, 214) \
  X(cudaErrorUnsupportedLimit, 215) X(cudaErrorDeviceAlreadyInUse, 216) \
  X(cudaErrorPeerAccessUnsupported, 217) X(cudaErrorInvalidPtx, 218) \
  X(cudaErrorInvalidGraphicsContext, 219) X(cudaErrorNvlinkUncorrectable, 220) \
  X(cudaErrorJitCompilerNotFound, 221) X(cudaErrorUnsupportedPtxVersion, 222) \
  X(cudaErrorJitCompilationDisabled, 223) X(cudaErrorUnsupportedExecAffinity, 224) \
  X(cudaErrorUnsupportedDevSideSync, 225) X(cudaErrorContained, 226) \
  X(cudaErrorInvalidSource, 300) X(cudaErrorFileNotFound, 301) \
  X(cudaErrorSharedObjectSymbolNotFound, 302) X(cudaErrorSharedObjectInitFailed, 303) \
  X(cudaErrorOperatingSystem, 304) X(cudaErrorInvalidResourceHandle, 400) \
  X(cudaErrorIllegalState, 401) X(cudaErrorLossyQuery, 402) X(cudaErrorSymbolNotFound, 500) \
  X(cudaErrorNotReady, 600) X(cudaErrorIllegalAddress, 700) \
  X(cudaErrorLaunchOutOfResources, 701) X(cudaErrorLaunchTimeout, 702) \
  X(cudaErrorLaunchIncompatibleTexturing, 703) X(cudaErrorPeerAccessAlreadyEnabled, 704) \
  X(cudaErrorPeerAccessNotEnabled, 705) X(cudaErrorSetOnActiveProcess, 708) \
  X(cudaErrorContextIsDestroyed, 709) X(cudaErrorAssert, 710) X(cudaErrorTooManyPeers, 711) \
  X(cudaErrorHostMemoryAlreadyRegistered, 712) X(cudaErrorHostMemoryNotRegistered, 713) \
  X(cudaErrorHardwareStackError, 714) X(cudaErrorIllegalInstruction, 715) \
  X(cudaErrorMisalignedAddress, 716) X(cudaErrorInvalidAddressSpace, 717) \
  X(cudaErrorInvalidPc, 718) X(cudaErrorLaunchFailure, 719) \
  X(cudaErrorCooperativeLaunchTooLarge, 720) X(cudaErrorTensorMemoryLeak, 721) \
  X(cudaErrorNotPermitted, 800) X(cudaErrorNotSupported, 801) X(cudaErrorSystemNotReady, 802) \
  X(cudaErrorSystemDriverMismatch, 803) X(cudaErrorCompatNotSupportedOnDevice, 804) \
  X(cudaErrorMpsConnectionFailed, 805) X(cudaErrorMpsRpcFailure, 806) \
  X(cudaErrorMpsServerNotReady, 807) X(cudaErrorMpsMaxClientsReached, 808) \
  X(cudaErrorMpsMaxConnectionsReached, 809) X(cudaErrorMpsClientTerminated, 810) \
  X(cudaErrorCdpNotSupported, 811) X(cudaErrorCdpVersionMismatch, 812) \
  X(cudaErrorStreamCaptureUnsupported, 900) X(cudaErrorStreamCaptureInvalidated, 901) \
  X(cudaErrorStreamCaptureMerge, 902) X(cudaErrorStreamCaptureUnmatched, 903) \
  X(cudaErrorStreamCaptureUnjoined, 904) X(cudaErrorStreamCaptureIsolation, 905) \
  X(cudaErrorStreamCaptureImplicit, 906) X(cudaErrorCapturedEvent, 907) \
  X(cudaErrorStreamCaptureWrongThread, 908) X(cudaErrorTimeout, 909) \
  X(cudaErrorGraphExecUpdateFailure, 910) X(cudaErrorExternalDevice, 911) \
  X(cudaErrorInvalidClusterSize, 912) X(cudaErrorFunctionNotLoaded, 913) \
  X(cudaErrorInvalidResourceType, 914) X(cudaErrorInvalidResourceConfiguration, 915) \
  X(cudaErrorUnknown, 999) X(cudaErrorApiFailureBase, 10000)

#define CUDASHIM_C_ENUM_cudaMemcpyKind(X) \
  X(cudaMemcpyHostToHost, 0) X(cudaMemcpyHostToDevice, 1) X(cudaMemcpyDeviceToHost, 2) \
  X(cudaMemcpyDeviceToDevice, 3) X(cudaMemcpyDefault, 4)

#define CUDASHIM_C_ENUM_cudaFuncCache(X) \
  X(cudaFuncCachePreferNone, 0) X(cudaFuncCachePreferShared, 1) X(cudaFuncCachePreferL1, 2) \
  X(cudaFuncCachePreferEqual, 3)

#define CUDASHIM_C_ENUM_cudaSharedMemConfig(X) \
  X(cudaSharedMemBankSizeDefault, 0) X(cudaSharedMemBankSizeFourByte, 1) \
  X(cudaSharedMemBankSizeEightByte, 2)

#define CUDASHIM_C_ENUM_cudaLimit(X) \
  X(cudaLimitStackSize, 0) X(cudaLimitPrintfFifoSize, 1) X(cudaLimitMallocHeapSize, 2) \
  X(cudaLimitDevRuntimeSyncDepth, 3) X(cudaLimitDevRuntimePendingLaunchCount, 4) \
  X(cudaLimitMaxL2FetchGranularity, 5) X(cudaLimitPersistingL2CacheSize, 6)

#define CUDASHIM_C_ENUM_cudaComputeMode(X) \
  X(cudaComputeModeDefault, 0) X(cudaComputeModeExclusive, 1) X(cudaComputeModeProhibited, 2) \
  X(cudaComputeModeExclusiveProcess, 3)

#define CUDASHIM_C_ENUM_cudaDeviceAttr(X) \
  X(cudaDevAttrMaxThreadsPerBlock, 1) X(cudaDevAttrMaxBlockDimX, 2) \
  X(cudaDevAttrMaxBlockDimY, 3) X(cudaDevAttrMaxBlockDimZ, 4) X(cudaDevAttrMaxGridDimX, 5) \
  X(cudaDevAttrMaxGridDimY, 6) X(cudaDevAttrMaxGridDimZ, 7) \
  X(cudaDevAttrMaxSharedMemoryPerBlock, 8) X(cudaDevAttrTotalConstantMemory, 9) \
  X(cudaDevAttrWarpSize, 10) X(cudaDevAttrMaxPitch, 11) X(cudaDevAttrMaxRegistersPerBlock, 12) \
  X(cudaDevAttrClockRate, 13) X(cudaDevAttrTextureAlignment, 14) X(cudaDevAttrGpuOverlap, 15) \
  X(cudaDevAttrMultiProcessorCount, 16) X(cudaDevAttrKernelExecTimeout, 17) \
  X(cudaDevAttrIntegrated, 18) X(cudaDevAttrCanMapHostMemory, 19) X(cudaDevAttrComputeMode, 20) \
  X(cudaDevAttrMaxTexture1DWidth, 21) X(cudaDevAttrMaxTexture2DWidth, 22) \
  X(cudaDevAttrMaxTexture2DHeight, 23) X(cudaDevAttrMaxTexture3DWidth, 24) \
  X(cudaDevAttrMaxTexture3DHeight, 25) X(cudaDevAttrMaxTexture3DDepth, 26) \
  X(cudaDevAttrMaxTexture2DLayeredWidth, 27) X(cudaDevAttrMaxTexture2DLayeredHeight, 28) \
  X(cudaDevAttrMaxTexture2DLayeredLayers, 29) X(cudaDevAttrSurfaceAlignment, 30) \
  X(cudaDevAttrConcurrentKernels, 31) X(cudaDevAttrEccEnabled, 32) X(cudaDevAttrPciBusId, 33) \
  X(cudaDevAttrPciDeviceId, 34) X(cudaDevAttrTccDriver, 35) X(cudaDevAttrMemoryClockRate, 36) \
  X(cudaDevAttrGlobalMemoryBusWidth, 37) X(cudaDevAttrL2CacheSize, 38) \
  X(cudaDevAttrMaxThreadsPerMultiProcessor, 39) X(cudaDevAttrAsyncEngineCount, 40) \
  X(cudaDevAttrUnifiedAddressing, 41) X(cudaDevAttrMaxTexture1DLayeredWidth, 42) \
  X(cudaDevAttrMaxTexture1DLayeredLayers, 43) X(cudaDevAttrMaxTexture2DGatherWidth, 45) \
  X(cudaDevAttrMaxTexture2DGatherHeight, 46) X(cudaDevAttrMaxTexture3DWidthAlt, 47) \
  X(cudaDevAttrMaxTexture3DHeightAlt, 48) X(cudaDevAttrMaxTexture3DDepthAlt, 49) \
  X(cudaDevAttrPciDomainId, 50) X(cudaDevAttrTexturePitchAlignment, 51) \
  X(cudaDevAttrMaxTextureCubemapWidth, 52) X(cudaDevAttrMaxTextureCubemapLayeredWidth, 53) \
  X(cudaDevAttrMaxTextureCubemapLayeredLayers, 54) X(cudaDevAttrMaxSurface1DWidth, 55) \
  X(cudaDevAttrMaxSurface2DWidth, 56) X(cudaDevAttrMaxSurface2DHeight, 57) \
  X(cudaDevAttrMaxSurface3DWidth, 58) X(cudaDevAttrMaxSurface3DHeight, 59) \
  X(cudaDevAttrMaxSurface3DDepth, 60) X(cudaDevAttrMaxSurface1DLayeredWidth, 61) \
  X(cudaDevAttrMaxSurface1DLayeredLayers, 62) X(cudaDevAttrMaxSurface2DLayeredWidth, 63) \
  X(cudaDevAttrMaxSurface2DLayeredHeight, 64) X(cudaDevAttrMaxSurface2DLayeredLayers, 65) \
  X(cudaDevAttrMaxSurfaceCubemapWidth, 66) X(cudaDevAttrMaxSurfaceCubemapLayeredWidth, 67) \
  X(cudaDevAttrMaxSurfaceCubemapLayeredLayers, 68) X(cudaDevAttrMaxTexture1DLinearWidth, 69) \
  X(cudaDevAttrMaxTexture2DLinearWidth, 70) X(cudaDevAttrMaxTexture2DLinearHeight, 71) \
  X(cudaDevAttrMaxTexture2DLinearPitch, 72) X(cudaDevAttrMaxTexture2DMipmappedWidth, 73) \
  X(cudaDevAttrMaxTexture2DMipmappedHeight, 74) X(cudaDevAttrComputeCapabilityMajor, 75) \
  X(cudaDevAttrComputeCapabilityMinor, 76) X(cudaDevAttrMaxTexture1DMipmappedWidth, 77) \
  X(cudaDevAttrStreamPrioritiesSupported, 78) X(cudaDevAttrGlobalL1CacheSupported, 79) \
  X(cudaDevAttrLocalL1CacheSupported, 80) X(cudaDevAttrMaxSharedMemoryPerMultiprocessor, 81) \
  X(cudaDevAttrMaxRegistersPerMultiprocessor, 82) X(cudaDevAttrManagedMemory, 83) \
  X(cudaDevAttrIsMultiGpuBoard, 84) X(cudaDevAttrMultiGpuBoardGroupID, 85) \
  X(cudaDevAttrHostNativeAtomicSupported, 86) \
  X(cudaDevAttrSingleToDoublePrecisionPerfRatio, 87) X(cudaDevAttrPageableMemoryAccess, 88) \
  X(cudaDevAttrConcurrentManagedAccess, 89) X(cudaDevAttrComputePreemptionSupported, 90) \
  X(cudaDevAttrCanUseHostPointerForRegisteredMem, 91) X(cudaDevAttrReserved92, 92) \
  X(cudaDevAttrReserved93, 93) X(cudaDevAttrReserved94, 94) X(cudaDevAttrCooperativeLaunch, 95) \
  X(cudaDevAttrReserved96, 96) X(cudaDevAttrMaxSharedMemoryPerBlockOptin, 97) \
  X(cudaDevAttrCanFlushRemoteWrites, 98) X(cudaDevAttrHostRegisterSupported, 99) \
  X(cudaDevAttrPageableMemoryAccessUsesHostPageTables, 100) \
  X(cudaDevAttrDirectManagedMemAccessFromHost, 101) \
  X(cudaDevAttrMaxBlocksPerMultiprocessor, 106) X(cudaDevAttrMaxPersistingL2CacheSize, 108) \
  X(cudaDevAttrMaxAccessPolicyWindowSize, 109) X(cudaDevAttrReservedSharedMemoryPerBlock, 111) \
  X(cudaDevAttrSparseCudaArraySupported, 112) X(cudaDevAttrHostRegisterReadOnlySupported, 113) \
  X(cudaDevAttrTimelineSemaphoreInteropSupported, 114) X(cudaDevAttrMemoryPoolsSupported, 115) \
  X(cudaDevAttrGPUDirectRDMASupported, 116) X(cudaDevAttrGPUDirectRDMAFlushWritesOptions, 117) \
  X(cudaDevAttrGPUDirectRDMAWritesOrdering, 118) \
  X(cudaDevAttrMemoryPoolSupportedHandleTypes, 119) X(cudaDevAttrClusterLaunch, 120) \
  X(cudaDevAttrDeferredMappingCudaArraySupported, 121) X(cudaDevAttrReserved122, 122) \
  X(cudaDevAttrReserved123, 123) X(cudaDevAttrReserved124, 124) \
  X(cudaDevAttrIpcEventSupport, 125) X(cudaDevAttrMemSyncDomainCount, 126) \
  X(cudaDevAttrReserved127, 127) X(cudaDevAttrReserved128, 128) X(cudaDevAttrReserved129, 129) \
  X(cudaDevAttrNumaConfig, 130) X(cudaDevAttrNumaId, 131) X(cudaDevAttrReserved132, 132) \
  X(cudaDevAttrMpsEnabled, 133) X(cudaDevAttrHostNumaId, 134) \
  X(cudaDevAttrD3D12CigSupported, 135) X(cudaDevAttrVulkanCigSupported, 138) \
  X(cudaDevAttrGpuPciDeviceId, 139) X(cudaDevAttrGpuPciSubsystemId, 140) \
  X(cudaDevAttrReserved141, 141) X(cudaDevAttrHostNumaMemoryPoolsSupported, 142) \
  X(cudaDevAttrHostNumaMultinodeIpcSupported, 143) X(cudaDevAttrHostMemoryPoolsSupported, 144) \
  X(cudaDevAttrReserved145, 145) X(cudaDevAttrOnlyPartialHostNativeAtomicSupported, 147)

#define CUDASHIM_C_ENUM_cudaDeviceP2PAttr(X) \
  X(cudaDevP2PAttrPerformanceRank, 1) X(cudaDevP2PAttrAccessSupported, 2) \
  X(cudaDevP2PAttrNativeAtomicSupported, 3) X(cudaDevP2PAttrCudaArrayAccessSupported, 4) \
  X(cudaDevP2PAttrOnlyPartialNativeAtomicSupported, 5)

#define CUDASHIM_C_ENUM_cudaMemoryAdvise(X) \
  X(cudaMemAdviseSetReadMostly, 1) X(cudaMemAdviseUnsetReadMostly, 2) \
  X(cudaMemAdviseSetPreferredLocation, 3) X(cudaMemAdviseUnsetPreferredLocation, 4) \
  X(cudaMemAdviseSetAccessedBy, 5) X(cudaMemAdviseUnsetAccessedBy, 6)

#define CUDASHIM_C_ENUM_cudaMemoryType(X) \
  X(cudaMemoryTypeUnregistered, 0) X(cudaMemoryTypeHost, 1) X(cudaMemoryTypeDevice, 2) \
  X(cudaMemoryTypeManaged, 3)

#define CUDASHIM_C_STRUCT_cudaDeviceProp(F) \
  F(char, name, [256]) F(char, uuid, [16]) F(size_t, totalGlobalMem, ) \
  F(size_t, sharedMemPerBlock, ) F(int, regsPerBlock, ) F(int, warpSize, ) \
  F(size_t, memPitch, ) F(int, maxThreadsPerBlock, ) F(int, maxThreadsDim, [3]) \
  F(int, maxGridSize, [3]) F(int, clockRate, ) F(size_t, totalConstMem, ) F(int, major, ) \
  F(int, minor, ) F(size_t, textureAlignment, ) F(int, deviceOverlap, ) \
  F(int, multiProcessorCount, ) F(int, kernelExecTimeoutEnabled, ) F(int, integrated, ) \
  F(int, canMapHostMemory, ) F(int, computeMode, ) F(int, concurrentKernels, ) \
  F(int, ECCEnabled, ) F(int, pciBusID, ) F(int, pciDeviceID, ) F(int, pciDomainID, ) \
  F(int, asyncEngineCount, ) F(int, unifiedAddressing, ) F(int, memoryClockRate, ) \
  F(int, memoryBusWidth, ) F(int, l2CacheSize, ) F(int, persistingL2CacheMaxSize, ) \
  F(int, maxThreadsPerMultiProcessor, ) F(int, streamPrioritiesSupported, ) \
  F(int, globalL1CacheSupported, ) F(int, localL1CacheSupported, ) \
  F(size_t, sharedMemPerMultiprocessor, ) F(int, regsPerMultiprocessor, ) \
  F(int, managedMemory, ) F(int, isMultiGpuBoard, ) F(int, multiGpuBoardGroupID, ) \
  F(int, pageableMemoryAccess, ) F(int, concurrentManagedAccess, ) \
  F(int, computePreemptionSupported, ) F(int, cooperativeLaunch, ) \
  F(int, cooperativeMultiDeviceLaunch, ) F(size_t, sharedMemPerBlockOptin, ) \
  F(int, maxBlocksPerMultiProcessor, ) F(int, accessPolicyMaxWindowSize, ) \
  F(size_t, reservedSharedMemPerBlock, ) F(char, luid, [8]) \
  F(unsigned int, luidDeviceNodeMask, ) F(size_t, texturePitchAlignment, ) \
  F(int, maxTexture1D, ) F(int, maxTexture1DMipmap, ) F(int, maxTexture2D, [2]) \
  F(int, maxTexture2DMipmap, [2]) F(int, maxTexture2DLinear, [3]) \
  F(int, maxTexture2DGather, [2]) F(int, maxTexture3D, [3]) F(int, maxTexture3DAlt, [3]) \
  F(int, maxTextureCubemap, ) F(int, maxTexture1DLayered, [2]) F(int, maxTexture2DLayered, [3]) \
  F(int, maxTextureCubemapLayered, [2]) F(int, maxSurface1D, ) F(int, maxSurface2D, [2]) \
  F(int, maxSurface3D, [3]) F(int, maxSurface1DLayered, [2]) F(int, maxSurface2DLayered, [3]) \
  F(int, maxSurfaceCubemap, ) F(int, maxSurfaceCubemapLayered, [2]) \
  F(size_t, surfaceAlignment, ) F(int, tccDriver, ) F(int, hostNativeAtomicSupported, ) \
  F(int, singleToDoublePrecisionPerfRatio, ) F(int, canUseHostPointerForRegisteredMem, ) \
  F(int, pageableMemoryAccessUsesHostPageTables, ) F(int, directManagedMemAccessFromHost, ) \
  F(int, hostRegisterSupported, ) F(int, sparseCudaArraySupported, ) \
  F(int, hostRegisterReadOnlySupported, ) F(int, timelineSemaphoreInteropSupported, ) \
  F(int, memoryPoolsSupported, ) F(int, gpuDirectRDMASupported, ) \
  F(unsigned int, gpuDirectRDMAFlushWritesOptions, ) F(int, gpuDirectRDMAWritesOrdering, ) \
  F(unsigned int, memoryPoolSupportedHandleTypes, ) F(int, deferredMappingCudaArraySupported, ) \
  F(int, ipcEventSupported, ) F(int, clusterLaunch, ) F(int, unifiedFunctionPointers, ) \
  F(int, deviceNumaConfig, ) F(int, deviceNumaId, ) F(int, mpsEnabled, ) F(int, hostNumaId, ) \
  F(unsigned int, gpuPciDeviceID, ) F(unsigned int, gpuPciSubsystemID, ) \
  F(int, hostNumaMultinodeIpcSupported, ) F(int, reserved, [56])

#define CUDASHIM_C_ENUMS(E) \
  E(cudaError) E(cudaMemcpyKind) E(cudaFuncCache) E(cudaSharedMemConfig) E(cudaLimit) \
  E(cudaComputeMode) E(cudaDeviceAttr) E(cudaDeviceP2PAttr) E(cudaMemoryAdvise) E(cudaMemoryType)

#define CUDASHIM_C_STRUCT_cudaPointerAttributes(F) \
  F(enum cudaMemoryType, type, ) F(int, device, ) F(void*, devicePointer, ) \
  F(void*, hostPointer, ) F(long, reserved, [8])

#define CUDASHIM_C_STRUCTS(S) S(cudaDeviceProp) S(cudaPointerAttributes)

/* What C host code calls: errors, devices, memory, streams, events, the profiler. Kernel
   launches, symbols, textures, arrays and graphs name device code, which only a CUDA unit has.
   The forms are CUDA 12's (an int device where CUDA 13 takes a cudaMemLocation): the shim
   stands for CUDA 12.4 (CUDART_VERSION). */
#define CUDASHIM_C_FUNCTIONS(X) \
  X(cudaError_t, cudaGetLastError, (void), ()) \
  X(cudaError_t, cudaPeekAtLastError, (void), ()) \
  X(const char*, cudaGetErrorString, (cudaError_t _Err), (_Err)) \
  X(const char*, cudaGetErrorName, (cudaError_t _Err), (_Err)) \
  X(cudaError_t, cudaGetDeviceCount, (int* _Count), (_Count)) \
  X(cudaError_t, cudaSetDevice, (int _Dev), (_Dev)) \
  X(cudaError_t, cudaGetDevice, (int* _Dev), (_Dev)) \
  X(cudaError_t, cudaGetDeviceProperties, (struct cudaDeviceProp* _Prop, int _Dev), (_Prop, _Dev)) \
  X(cudaError_t, cudaDeviceGetAttribute, (int* _Value, enum cudaDeviceAttr _Attr, int _Dev), \
    (_Value, _Attr, _Dev)) \
  X(cudaError_t, cudaChooseDevice, (int* _Dev, const struct cudaDeviceProp* _Prop), (_Dev, _Prop)) \
  X(cudaError_t, cudaInitDevice, (int _Dev, unsigned int _DevFlags, unsigned int _Flags), \
    (_Dev, _DevFlags, _Flags)) \
  X(cudaError_t, cudaSetDeviceFlags, (unsigned int _Flags), (_Flags)) \
  X(cudaError_t, cudaGetDeviceFlags, (unsigned int* _Flags), (_Flags)) \
  X(cudaError_t, cudaSetValidDevices, (int* _Devs, int _Len), (_Devs, _Len)) \
  X(cudaError_t, cudaDeviceGetByPCIBusId, (int* _Dev, const char* _Bus), (_Dev, _Bus)) \
  X(cudaError_t, cudaDeviceGetPCIBusId, (char* _Bus, int _Len, int _Dev), (_Bus, _Len, _Dev)) \
  X(cudaError_t, cudaDeviceSynchronize, (void), ()) \
  X(cudaError_t, cudaThreadSynchronize, (void), ()) \
  X(cudaError_t, cudaDeviceReset, (void), ()) \
  X(cudaError_t, cudaThreadExit, (void), ()) \
  X(cudaError_t, cudaDeviceSetLimit, (enum cudaLimit _Limit, size_t _Value), (_Limit, _Value)) \
  X(cudaError_t, cudaDeviceGetLimit, (size_t* _Value, enum cudaLimit _Limit), (_Value, _Limit)) \
  X(cudaError_t, cudaDeviceSetCacheConfig, (enum cudaFuncCache _Config), (_Config)) \
  X(cudaError_t, cudaDeviceGetCacheConfig, (enum cudaFuncCache* _Config), (_Config)) \
  X(cudaError_t, cudaDeviceSetSharedMemConfig, (enum cudaSharedMemConfig _Config), (_Config)) \
  X(cudaError_t, cudaDeviceGetSharedMemConfig, (enum cudaSharedMemConfig* _Config), (_Config)) \
  X(cudaError_t, cudaDeviceGetStreamPriorityRange, (int* _Least, int* _Greatest), \
    (_Least, _Greatest)) \
  X(cudaError_t, cudaDeviceCanAccessPeer, (int* _Can, int _Dev, int _Peer), (_Can, _Dev, _Peer)) \
  X(cudaError_t, cudaDeviceEnablePeerAccess, (int _Peer, unsigned int _Flags), (_Peer, _Flags)) \
  X(cudaError_t, cudaDeviceDisablePeerAccess, (int _Peer), (_Peer)) \
  X(cudaError_t, cudaDeviceGetP2PAttribute, \
    (int* _Value, enum cudaDeviceP2PAttr _Attr, int _Src, int _Dst), (_Value, _Attr, _Src, _Dst)) \
  X(cudaError_t, cudaDriverGetVersion, (int* _Version), (_Version)) \
  X(cudaError_t, cudaRuntimeGetVersion, (int* _Version), (_Version)) \
  X(cudaError_t, cudaMemGetInfo, (size_t* _Free, size_t* _Total), (_Free, _Total)) \
  X(cudaError_t, cudaMalloc, (void** _Ptr, size_t _Size), (_Ptr, _Size)) \
  X(cudaError_t, cudaMallocManaged, (void** _Ptr, size_t _Size, unsigned int _Flags), \
    (_Ptr, _Size, _Flags)) \
  X(cudaError_t, cudaMallocHost, (void** _Ptr, size_t _Size), (_Ptr, _Size)) \
  X(cudaError_t, cudaHostAlloc, (void** _Ptr, size_t _Size, unsigned int _Flags), \
    (_Ptr, _Size, _Flags)) \
  X(cudaError_t, cudaMallocPitch, (void** _Ptr, size_t* _Pitch, size_t _Width, size_t _Height), \
    (_Ptr, _Pitch, _Width, _Height)) \
  X(cudaError_t, cudaMallocAsync, (void** _Ptr, size_t _Size, cudaStream_t _Stream), \
    (_Ptr, _Size, _Stream)) \
  X(cudaError_t, cudaFree, (void* _Ptr), (_Ptr)) \
  X(cudaError_t, cudaFreeHost, (void* _Ptr), (_Ptr)) \
  X(cudaError_t, cudaFreeAsync, (void* _Ptr, cudaStream_t _Stream), (_Ptr, _Stream)) \
  X(cudaError_t, cudaHostRegister, (void* _Ptr, size_t _Size, unsigned int _Flags), \
    (_Ptr, _Size, _Flags)) \
  X(cudaError_t, cudaHostUnregister, (void* _Ptr), (_Ptr)) \
  X(cudaError_t, cudaHostGetDevicePointer, (void** _Dst, void* _Host, unsigned int _Flags), \
    (_Dst, _Host, _Flags)) \
  X(cudaError_t, cudaPointerGetAttributes, \
    (struct cudaPointerAttributes* _Attr, const void* _Ptr), (_Attr, _Ptr)) \
  X(cudaError_t, cudaMemcpy, (void* _Dst, const void* _Src, size_t _Size, enum cudaMemcpyKind _Kind), \
    (_Dst, _Src, _Size, _Kind)) \
  X(cudaError_t, cudaMemcpyAsync, \
    (void* _Dst, const void* _Src, size_t _Size, enum cudaMemcpyKind _Kind, cudaStream_t _Stream), \
    (_Dst, _Src, _Size, _Kind, _Stream)) \
  X(cudaError_t, cudaMemcpy2D, \
    (void* _Dst, size_t _DPitch, const void* _Src, size_t _SPitch, size_t _Width, size_t _Height, \
     enum cudaMemcpyKind _Kind), (_Dst, _DPitch, _Src, _SPitch, _Width, _Height, _Kind)) \
  X(cudaError_t, cudaMemcpy2DAsync, \
    (void* _Dst, size_t _DPitch, const void* _Src, size_t _SPitch, size_t _Width, size_t _Height, \
     enum cudaMemcpyKind _Kind, cudaStream_t _Stream), \
    (_Dst, _DPitch, _Src, _SPitch, _Width, _Height, _Kind, _Stream)) \
  X(cudaError_t, cudaMemcpyPeer, \
    (void* _Dst, int _DstDev, const void* _Src, int _SrcDev, size_t _Size), \
    (_Dst, _DstDev, _Src, _SrcDev, _Size)) \
  X(cudaError_t, cudaMemset, (void* _Ptr, int _Value, size_t _Size), (_Ptr, _Value, _Size)) \
  X(cudaError_t, cudaMemsetAsync, (void* _Ptr, int _Value, size_t _Size, cudaStream_t _Stream), \
    (_Ptr, _Value, _Size, _Stream)) \
  X(cudaError_t, cudaMemset2D, \
    (void* _Ptr, size_t _Pitch, int _Value, size_t _Width, size_t _Height), \
    (_Ptr, _Pitch, _Value, _Width, _Height)) \
  X(cudaError_t, cudaMemPrefetchAsync, \
    (const void* _Ptr, size_t _Size, int _Dev, cudaStream_t _Stream), (_Ptr, _Size, _Dev, _Stream)) \
  X(cudaError_t, cudaMemAdvise, \
    (const void* _Ptr, size_t _Size, enum cudaMemoryAdvise _Advice, int _Dev), \
    (_Ptr, _Size, _Advice, _Dev)) \
  X(cudaError_t, cudaStreamCreate, (cudaStream_t* _Stream), (_Stream)) \
  X(cudaError_t, cudaStreamCreateWithFlags, (cudaStream_t* _Stream, unsigned int _Flags), \
    (_Stream, _Flags)) \
  X(cudaError_t, cudaStreamCreateWithPriority, \
    (cudaStream_t* _Stream, unsigned int _Flags, int _Priority), (_Stream, _Flags, _Priority)) \
  X(cudaError_t, cudaStreamDestroy, (cudaStream_t _Stream), (_Stream)) \
  X(cudaError_t, cudaStreamSynchronize, (cudaStream_t _Stream), (_Stream)) \
  X(cudaError_t, cudaStreamQuery, (cudaStream_t _Stream), (_Stream)) \
  X(cudaError_t, cudaStreamWaitEvent, (cudaStream_t _Stream, cudaEvent_t _Event, unsigned int _Flags), \
    (_Stream, _Event, _Flags)) \
  X(cudaError_t, cudaStreamAddCallback, \
    (cudaStream_t _Stream, cudaStreamCallback_t _Fn, void* _Data, unsigned int _Flags), \
    (_Stream, _Fn, _Data, _Flags)) \
  X(cudaError_t, cudaLaunchHostFunc, (cudaStream_t _Stream, cudaHostFn_t _Fn, void* _Data), \
    (_Stream, _Fn, _Data)) \
  X(cudaError_t, cudaStreamGetFlags, (cudaStream_t _Stream, unsigned int* _Flags), (_Stream, _Flags)) \
  X(cudaError_t, cudaStreamGetPriority, (cudaStream_t _Stream, int* _Priority), (_Stream, _Priority)) \
  X(cudaError_t, cudaEventCreate, (cudaEvent_t* _Event), (_Event)) \
  X(cudaError_t, cudaEventCreateWithFlags, (cudaEvent_t* _Event, unsigned int _Flags), \
    (_Event, _Flags)) \
  X(cudaError_t, cudaEventDestroy, (cudaEvent_t _Event), (_Event)) \
  X(cudaError_t, cudaEventRecord, (cudaEvent_t _Event, cudaStream_t _Stream), (_Event, _Stream)) \
  X(cudaError_t, cudaEventSynchronize, (cudaEvent_t _Event), (_Event)) \
  X(cudaError_t, cudaEventQuery, (cudaEvent_t _Event), (_Event)) \
  X(cudaError_t, cudaEventElapsedTime, (float* _Ms, cudaEvent_t _Start, cudaEvent_t _End), \
    (_Ms, _Start, _End)) \
  X(cudaError_t, cudaProfilerStart, (void), ()) \
  X(cudaError_t, cudaProfilerStop, (void), ())

#endif
