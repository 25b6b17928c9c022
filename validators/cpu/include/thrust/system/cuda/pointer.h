// cudashim: thrust::cuda::pointer / universal_pointer / reference, the device system's (see
// execution_policy.h), in host memory as the CPP system's.
#pragma once

#include <thrust/system/cuda/execution_policy.h>
#include <thrust/detail/pointer.h>
#include <thrust/detail/reference.h>

#include <type_traits>

THRUST_NAMESPACE_BEGIN
namespace system {
namespace cuda {
template <typename _Tp>
using pointer = thrust::pointer<_Tp, thrust::system::cuda::tag, thrust::tagged_reference<_Tp, thrust::system::cuda::tag>>;
template <typename _Tp>
using universal_pointer = thrust::pointer<_Tp, thrust::system::cuda::tag, typename std::add_lvalue_reference<_Tp>::type>;
template <typename _Tp>
using reference = thrust::reference<_Tp, thrust::system::cuda::tag>;
}  // namespace cuda
}  // namespace system
namespace cuda_cub {
using thrust::system::cuda::pointer;
using thrust::system::cuda::reference;
using thrust::system::cuda::universal_pointer;
}  // namespace cuda_cub
namespace cuda {
using thrust::system::cuda::pointer;
using thrust::system::cuda::reference;
using thrust::system::cuda::universal_pointer;
}  // namespace cuda
THRUST_NAMESPACE_END
