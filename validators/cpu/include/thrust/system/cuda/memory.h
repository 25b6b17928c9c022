// cudashim: thrust::cuda::pointer / allocator / malloc / free / vector / universal_vector as
// their Thrust CPP-system counterparts (device memory is host memory in the shim). Found first
// for <thrust/system/cuda/{memory,pointer,vector}.h>, which would pull in Thrust's CUDA backend.
#ifndef CUDASHIM_THRUST_CUDA_MEMORY_H
#define CUDASHIM_THRUST_CUDA_MEMORY_H

#include <thrust/system/cuda/execution_policy.h>
#include <thrust/system/cpp/memory.h>
#include <thrust/system/cpp/pointer.h>
#include <thrust/system/cpp/vector.h>

THRUST_NAMESPACE_BEGIN
namespace cuda_cub {
template <class _Tp>
using pointer = thrust::system::cpp::pointer<_Tp>;
template <class _Tp>
using universal_pointer = thrust::system::cpp::universal_pointer<_Tp>;
template <class _Tp>
using reference = thrust::system::cpp::reference<_Tp>;
template <class _Tp>
using allocator = thrust::system::cpp::allocator<_Tp>;
template <class _Tp>
using universal_allocator = thrust::system::cpp::universal_allocator<_Tp>;
template <class _Tp, class _Alloc = allocator<_Tp>>
using vector = thrust::system::cpp::vector<_Tp, _Alloc>;
template <class _Tp, class _Alloc = universal_allocator<_Tp>>
using universal_vector = thrust::system::cpp::universal_vector<_Tp, _Alloc>;
using thrust::system::cpp::free;
using thrust::system::cpp::malloc;
}  // namespace cuda_cub

namespace system {
namespace cuda {
using thrust::cuda_cub::allocator;
using thrust::cuda_cub::free;
using thrust::cuda_cub::malloc;
using thrust::cuda_cub::pointer;
using thrust::cuda_cub::reference;
using thrust::cuda_cub::universal_allocator;
using thrust::cuda_cub::universal_pointer;
using thrust::cuda_cub::universal_vector;
using thrust::cuda_cub::vector;
}  // namespace cuda
}  // namespace system

namespace cuda {
using thrust::cuda_cub::allocator;
using thrust::cuda_cub::free;
using thrust::cuda_cub::malloc;
using thrust::cuda_cub::pointer;
using thrust::cuda_cub::reference;
using thrust::cuda_cub::universal_allocator;
using thrust::cuda_cub::universal_pointer;
using thrust::cuda_cub::universal_vector;
using thrust::cuda_cub::vector;
}  // namespace cuda
THRUST_NAMESPACE_END

#endif
