// cudashim: thrust::cuda::malloc / free / allocator / universal_allocator, the device system's
// (see execution_policy.h): host memory, as the CPP system's. Found first for
// <thrust/system/cuda/{memory,pointer,vector}.h>, which would pull in Thrust's CUDA backend.
#pragma once

#include <thrust/system/cuda/execution_policy.h>
#include <thrust/system/cuda/memory_resource.h>
#include <thrust/system/cuda/pointer.h>
#include <thrust/detail/type_traits.h>
#include <thrust/memory.h>
#include <thrust/mr/allocator.h>
#include <thrust/system/cuda/detail/malloc_and_free.h>

#include <cstddef>

THRUST_NAMESPACE_BEGIN
namespace system {
namespace cuda {
inline pointer<void> malloc(std::size_t __n) {
  tag __t;
  return pointer<void>(thrust::system::detail::sequential::malloc(__t, __n));
}
template <typename _Tp>
inline pointer<_Tp> malloc(std::size_t __n) {
  pointer<void> __raw = thrust::system::cuda::malloc(sizeof(_Tp) * __n);
  return pointer<_Tp>(reinterpret_cast<_Tp*>(__raw.get()));
}
inline void free(pointer<void> __p) {
  tag __t;
  thrust::system::detail::sequential::free(__t, __p);
}
template <typename _Tp>
using allocator = thrust::mr::stateless_resource_allocator<_Tp, thrust::system::cuda::memory_resource>;
template <typename _Tp>
using universal_allocator = thrust::mr::stateless_resource_allocator<_Tp, thrust::system::cuda::universal_memory_resource>;
template <typename _Tp>
using universal_host_pinned_allocator =
  thrust::mr::stateless_resource_allocator<_Tp, thrust::system::cuda::universal_host_pinned_memory_resource>;
}  // namespace cuda
}  // namespace system
namespace cuda_cub {
using thrust::system::cuda::allocator;
using thrust::system::cuda::free;
using thrust::system::cuda::malloc;
using thrust::system::cuda::universal_allocator;
using thrust::system::cuda::universal_host_pinned_allocator;
}  // namespace cuda_cub
namespace cuda {
using thrust::system::cuda::allocator;
using thrust::system::cuda::free;
using thrust::system::cuda::malloc;
using thrust::system::cuda::universal_allocator;
using thrust::system::cuda::universal_host_pinned_allocator;
}  // namespace cuda
THRUST_NAMESPACE_END
