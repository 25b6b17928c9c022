// cudashim: what a call of Thrust's device system does besides its work (see
// thrust/detail/execution_policy.h, which builds one of these for every policy passed through
// derived_cast, and thrust/system/cuda/execution_policy.h, the device system).
//
// On a GPU, device memory is reachable from Thrust's device algorithms (kernels) and from device
// references (copies), never from host code. The shim runs the device system's algorithms as
// host code, so the runtime holds device memory open for exactly their duration (opened at the
// first access that faults, closed when the outermost call returns); host code outside them that
// reads a cudaMalloc'd buffer faults as on a GPU. `_Thrust_device_call` also notes the call as
// library work (the kernel-work check's record of computation without a launch) unless it only
// moves data (copy, fill, element access); plumbing (system selection, temporary storage) touches
// no device memory and is neither.
#pragma once

#include <type_traits>

#include <thrust/detail/config.h>

THRUST_NAMESPACE_BEGIN
namespace system {
namespace cuda {
namespace detail {
template <typename>
struct execution_policy;
}  // namespace detail
}  // namespace cuda
}  // namespace system
THRUST_NAMESPACE_END

namespace cudashim {
// The device-system call named `__fn` (the Thrust function that made it) begins: true when it
// may work on device memory, which is then open to it until `_Thrust_device_return`; noted as
// library work when it computes.
bool _Thrust_device_call(const char* __fn);
void _Thrust_device_return();

template <class _Policy,
          bool = std::is_base_of<THRUST_NS_QUALIFIER::system::cuda::detail::execution_policy<_Policy>, _Policy>::value>
struct _Thrust_call {
  constexpr explicit _Thrust_call(const char*) {}
};

template <class _Policy>
struct _Thrust_call<_Policy, true> {
  bool __open;
  explicit _Thrust_call(const char* __fn) : __open(_Thrust_device_call(__fn)) {}
  ~_Thrust_call() {
    if (__open) _Thrust_device_return();
  }
  _Thrust_call(const _Thrust_call&) = delete;
  _Thrust_call& operator=(const _Thrust_call&) = delete;
};
}  // namespace cudashim
