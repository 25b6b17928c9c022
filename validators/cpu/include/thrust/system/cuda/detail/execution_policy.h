// cudashim: Thrust's device system on the shim, thrust::system::cuda (see ../execution_policy.h).
//
// The CPP system's algorithms, under a tag of its own: tag and execution_policy<Derived> derive
// from the CPP system's (as Thrust's OpenMP system does), so every algorithm is the CPP system's,
// found by the same argument-dependent lookup, while a device-system call stays distinguishable
// from a host one (thrust/detail/execution_policy.h here: device memory is open to it, and it is
// noted as library work). Host and device iterators together select the device system, as the
// OpenMP system does: its tag converts to the CPP one, not the other way.
#pragma once

#include <thrust/detail/config.h>
#include <thrust/system/cpp/detail/execution_policy.h>

THRUST_NAMESPACE_BEGIN
namespace system {
namespace cuda {
namespace detail {

struct tag;

template <typename>
struct execution_policy;

template <>
struct execution_policy<tag> : thrust::system::cpp::detail::execution_policy<tag> {
  using tag_type = tag;
};

struct tag : execution_policy<tag> {};

template <typename _Derived>
struct execution_policy : thrust::system::cpp::detail::execution_policy<_Derived> {
  using tag_type = tag;
  operator tag() const { return tag(); }
};

}  // namespace detail

using thrust::system::cuda::detail::execution_policy;
using thrust::system::cuda::detail::tag;
}  // namespace cuda
}  // namespace system

namespace cuda_cub {
using thrust::system::cuda::detail::execution_policy;
using thrust::system::cuda::detail::tag;
}  // namespace cuda_cub

namespace cuda {
using thrust::system::cuda::detail::execution_policy;
using thrust::system::cuda::detail::tag;
}  // namespace cuda
THRUST_NAMESPACE_END
