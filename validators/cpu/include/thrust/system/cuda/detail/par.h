// cudashim: thrust::cuda::par / par_nosync, the device system's policies (thrust::device is par).
// `.on(stream)` is accepted and ignored (the shim runs everything in issue order, so a nosync
// algorithm simply runs synchronously); `par(allocator)` keeps `.on`.
#pragma once

#include <cuda_runtime.h>
#include <thrust/detail/allocator_aware_execution_policy.h>
#include <thrust/system/cuda/detail/execution_policy.h>

#include <utility>

THRUST_NAMESPACE_BEGIN
namespace system {
namespace cuda {
namespace detail {

template <class _Base>
struct __cudashim_on_stream : _Base {
  using _Base::_Base;
  __cudashim_on_stream(const _Base& __b) : _Base(__b) {}
  __cudashim_on_stream on(cudaStream_t) const { return *this; }
  cudaStream_t stream() const { return 0; }
};

template <class _Derived>
struct __cudashim_policy
    : execution_policy<_Derived>
    , thrust::detail::allocator_aware_execution_policy<execution_policy> {
  constexpr __cudashim_policy() : execution_policy<_Derived>() {}
  _Derived on(cudaStream_t) const { return _Derived(); }
  cudaStream_t stream() const { return 0; }
  template <class _Alloc>
  auto operator()(_Alloc&& __a) const {
    using _Aware = thrust::detail::allocator_aware_execution_policy<execution_policy>;
    using _Ret = decltype(_Aware::operator()(std::forward<_Alloc>(__a)));
    return __cudashim_on_stream<_Ret>(_Aware::operator()(std::forward<_Alloc>(__a)));
  }
};

struct par_t : __cudashim_policy<par_t> {
  constexpr par_t() = default;
};
struct par_nosync_t : __cudashim_policy<par_nosync_t> {
  constexpr par_nosync_t() = default;
};

}  // namespace detail

_CCCL_GLOBAL_CONSTANT detail::par_t par;
_CCCL_GLOBAL_CONSTANT detail::par_nosync_t par_nosync;
}  // namespace cuda
}  // namespace system

namespace cuda_cub {
using thrust::system::cuda::par;
using thrust::system::cuda::par_nosync;
using thrust::system::cuda::detail::par_nosync_t;
using thrust::system::cuda::detail::par_t;
}  // namespace cuda_cub

namespace cuda {
using thrust::system::cuda::par;
using thrust::system::cuda::par_nosync;
}  // namespace cuda
THRUST_NAMESPACE_END
