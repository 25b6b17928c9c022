// cudashim: thrust::cuda::par / par_nosync, the device system's policies (thrust::device is par).
// Work runs at the call in issue order (a nosync algorithm simply runs synchronously), so
// `.on(stream)` matters only while that stream is being captured: the policy keeps the stream
// and whether it is nosync for the capture rules of cudashim_capture.h; `par(allocator)` keeps
// `.on`.
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
  cudaStream_t __cudashim_stream = 0;
  bool __cudashim_nosync = false;
  using _Base::_Base;
  __cudashim_on_stream(const _Base& __b, bool __nosync) : _Base(__b), __cudashim_nosync(__nosync) {}
  __cudashim_on_stream on(cudaStream_t __s) const {
    __cudashim_on_stream __p = *this;
    __p.__cudashim_stream = __s;
    return __p;
  }
  cudaStream_t stream() const { return __cudashim_stream; }
};

template <class _Derived, bool _Nosync>
struct __cudashim_policy
    : execution_policy<_Derived>
    , thrust::detail::allocator_aware_execution_policy<execution_policy> {
  cudaStream_t __cudashim_stream = 0;
  static constexpr bool __cudashim_nosync = _Nosync;
  constexpr __cudashim_policy() : execution_policy<_Derived>() {}
  _Derived on(cudaStream_t __s) const {
    _Derived __p;
    __p.__cudashim_stream = __s;
    return __p;
  }
  cudaStream_t stream() const { return __cudashim_stream; }
  template <class _Alloc>
  auto operator()(_Alloc&& __a) const {
    using _Aware = thrust::detail::allocator_aware_execution_policy<execution_policy>;
    using _Ret = decltype(_Aware::operator()(std::forward<_Alloc>(__a)));
    return __cudashim_on_stream<_Ret>(_Aware::operator()(std::forward<_Alloc>(__a)), _Nosync);
  }
};

struct par_t : __cudashim_policy<par_t, false> {
  constexpr par_t() = default;
};
// Its algorithms that a GPU records into a capture are recorded here too (cudashim_capture.h).
struct par_nosync_t : __cudashim_policy<par_nosync_t, true> {
  static constexpr bool __cudashim_records = true;
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
