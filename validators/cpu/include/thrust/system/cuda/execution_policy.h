// cudashim: Thrust's CUDA execution policies on Thrust's CPP system (the shim runs Thrust on
// the host, from the toolkit's CCCL headers). Force-included (-include) into every program that
// uses Thrust, and found first for <thrust/system/cuda/execution_policy.h>, which would
// otherwise pull in Thrust's CUDA backend.
//
// thrust::cuda::par / par_nosync (also under thrust::cuda_cub and thrust::system::cuda) are
// thrust::cpp::par with `.on(stream)` (the stream is ignored: the shim runs everything in issue
// order, so a nosync algorithm simply runs synchronously) and `(allocator)`, which keeps `.on`.
#ifndef CUDASHIM_THRUST_CUDA_EXECUTION_POLICY_H
#define CUDASHIM_THRUST_CUDA_EXECUTION_POLICY_H

#include <cuda_runtime.h>
#include <thrust/execution_policy.h>
#include <thrust/system/cpp/execution_policy.h>
// Thrust's device storage, noted with the uploads in the kernel-work check's runs.
#include <cudashim/thrust_storage.h>

THRUST_NAMESPACE_BEGIN
namespace cuda_cub {

template <class _Base>
struct __cudashim_on_stream : _Base {
  using _Base::_Base;
  __cudashim_on_stream(const _Base& __b) : _Base(__b) {}
  __cudashim_on_stream on(cudaStream_t) const { return *this; }
  cudaStream_t stream() const { return 0; }
};

template <class _Derived>
struct __cudashim_policy : thrust::system::cpp::detail::par_t {
  constexpr __cudashim_policy() = default;
  _Derived on(cudaStream_t) const { return _Derived(); }
  cudaStream_t stream() const { return 0; }
  // par(allocator): Thrust's execute_with_allocator on the CPP system, still with `.on`.
  template <class _Alloc>
  auto operator()(_Alloc&& __a) const {
    using _Ret = decltype(thrust::system::cpp::detail::par_t{}(std::forward<_Alloc>(__a)));
    return __cudashim_on_stream<_Ret>(thrust::system::cpp::detail::par_t{}(std::forward<_Alloc>(__a)));
  }
};

struct par_t : __cudashim_policy<par_t> {
  constexpr par_t() = default;
};
struct par_nosync_t : __cudashim_policy<par_nosync_t> {
  constexpr par_nosync_t() = default;
};
inline constexpr par_t par{};
inline constexpr par_nosync_t par_nosync{};

using tag = thrust::system::cpp::tag;
template <class _Derived>
using execution_policy = thrust::system::cpp::execution_policy<_Derived>;
}  // namespace cuda_cub

namespace system {
namespace cuda {
using thrust::cuda_cub::execution_policy;
using thrust::cuda_cub::par;
using thrust::cuda_cub::par_nosync;
using thrust::cuda_cub::tag;
namespace detail {
using thrust::cuda_cub::par_nosync_t;
using thrust::cuda_cub::par_t;
}  // namespace detail
}  // namespace cuda
}  // namespace system

namespace cuda {
using thrust::cuda_cub::execution_policy;
using thrust::cuda_cub::par;
using thrust::cuda_cub::par_nosync;
using thrust::cuda_cub::tag;
}  // namespace cuda
THRUST_NAMESPACE_END

#endif
