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

#include <cuda_runtime.h>

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

bool capturing(cudaStream_t __s);
// A device-system algorithm called with a policy on stream `__s` while it is being captured
// (thrust/system/cuda/detail/cudashim_capture.h): what a GPU's Thrust would do there.
void _Thrust_in_capture(cudaStream_t __s, bool __nosync, bool __records, const char* __fn);
// Device-system calls under way on this thread: only the outermost is the program's own.
inline int& _Thrust_depth() {
  static thread_local int __depth = 0;
  return __depth;
}

template <class _Policy,
          bool = std::is_base_of<THRUST_NS_QUALIFIER::system::cuda::detail::execution_policy<_Policy>, _Policy>::value>
struct _Thrust_call {
  constexpr explicit _Thrust_call(const char*) {}
  constexpr void __check(const _Policy&) const {}
};

template <class _Policy>
struct _Thrust_call<_Policy, true> {
  bool __open;
  bool __outer;
  const char* __fn;
  explicit _Thrust_call(const char* __f) : __open(_Thrust_device_call(__f)), __outer(_Thrust_depth()++ == 0), __fn(__f) {}
  ~_Thrust_call() {
    --_Thrust_depth();
    if (__open) _Thrust_device_return();
  }
  _Thrust_call(const _Thrust_call&) = delete;
  _Thrust_call& operator=(const _Thrust_call&) = delete;
  // The policy the program passed (`par.on(s)`): the capture rules apply when its stream captures.
  void __check(const _Policy& __p) const {
    if constexpr (requires { __p.__cudashim_stream; }) {
      if (__outer && __p.__cudashim_stream != 0 && ::cudashim::capturing(__p.__cudashim_stream))
        _Thrust_in_capture(__p.__cudashim_stream, __p.__cudashim_nosync, requires { _Policy::__cudashim_records; },
                           __fn);
    }
  }
};
}  // namespace cudashim
