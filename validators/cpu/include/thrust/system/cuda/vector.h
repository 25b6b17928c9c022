// cudashim: thrust::cuda::vector / universal_vector, the device system's (see execution_policy.h).
#pragma once

#include <thrust/system/cuda/memory.h>
#include <thrust/detail/vector_base.h>

THRUST_NAMESPACE_BEGIN
namespace system {
namespace cuda {
template <typename _Tp, typename _Alloc = thrust::system::cuda::allocator<_Tp>>
using vector = thrust::detail::vector_base<_Tp, _Alloc>;
template <typename _Tp, typename _Alloc = thrust::system::cuda::universal_allocator<_Tp>>
using universal_vector = thrust::detail::vector_base<_Tp, _Alloc>;
template <typename _Tp>
using universal_host_pinned_vector = thrust::detail::vector_base<_Tp, universal_host_pinned_allocator<_Tp>>;
}  // namespace cuda
}  // namespace system
namespace cuda_cub {
using thrust::system::cuda::universal_host_pinned_vector;
using thrust::system::cuda::universal_vector;
using thrust::system::cuda::vector;
}  // namespace cuda_cub
namespace cuda {
using thrust::system::cuda::universal_host_pinned_vector;
using thrust::system::cuda::universal_vector;
using thrust::system::cuda::vector;
}  // namespace cuda
THRUST_NAMESPACE_END
