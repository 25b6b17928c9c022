// cudashim: Thrust's device system on the shim. Force-included (-include) into every program that
// uses Thrust (toolchain.thrust_flags()), and found first for <thrust/system/cuda/...>, which
// would otherwise pull in Thrust's CUDA backend.
//
// The toolkit's Thrust runs with THRUST_DEVICE_SYSTEM_CPP, but its device system's namespace (the
// one thrust::device, device_vector, device_ptr and device_system_tag name) is set here to
// `cuda` before any Thrust header uses it: thrust::system::cuda, a system of the shim's own
// (thrust/system/cuda/detail/) whose tag and policies derive from the CPP system's, so that every
// algorithm runs as the CPP system's, on the host, while a device-system call can be told apart
// from a host one. thrust/detail/execution_policy.h (the shim's, wrapping Thrust's) opens device
// memory for each device-system algorithm call and notes it as library work
// (cudashim/thrust_device.h). thrust::cuda::par / par_nosync (also under thrust::cuda_cub and
// thrust::system::cuda) are its policies, with `.on(stream)`; thrust::cuda::pointer, vector,
// allocator, malloc/free, universal_vector are its storage (host memory, as the CPP system's).
#ifndef CUDASHIM_THRUST_CUDA_EXECUTION_POLICY_H
#define CUDASHIM_THRUST_CUDA_EXECUTION_POLICY_H

#include <thrust/detail/config.h>
#if THRUST_DEVICE_SYSTEM != THRUST_DEVICE_SYSTEM_CPP
#  error "cudashim: Thrust builds run the toolkit's Thrust with THRUST_DEVICE_SYSTEM_CPP"
#endif
#undef __THRUST_DEVICE_SYSTEM_NAMESPACE
#define __THRUST_DEVICE_SYSTEM_NAMESPACE cuda

#include <cuda_runtime.h>
#include <thrust/system/cuda/detail/execution_policy.h>
#include <thrust/system/cuda/detail/par.h>
#include <thrust/execution_policy.h>
#include <thrust/system/cpp/execution_policy.h>
// Thrust's device storage, noted with the uploads in the kernel-work check's runs.
#include <cudashim/thrust_storage.h>
// Device algorithms on a stream being captured: recorded, refused or reported as a GPU's Thrust.
#include <thrust/system/cuda/detail/cudashim_capture.h>

#endif
