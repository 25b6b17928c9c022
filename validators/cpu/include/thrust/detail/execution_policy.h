// cudashim: Thrust's thrust/detail/execution_policy.h (included next), with derived_cast taking a
// defaulted second argument: a cudashim::_Thrust_call for the policy, built where the call is
// made. Every Thrust algorithm entry (thrust/detail/*.inl), element access through a device
// reference (thrust/detail/reference.h) and system selection passes its policy through
// derived_cast as an argument of the call that runs the algorithm, so the temporary lives for
// that whole call: for a policy of the device system (thrust::system::cuda, see
// thrust/system/cuda/execution_policy.h) it holds device memory open and notes the call as
// library work (cudashim/thrust_device.h), and applies the capture rules to a policy on a stream
// being captured (`__check`); for any other it does nothing.
#pragma once

#define derived_cast __cudashim_thrust_derived_cast
#include_next <thrust/detail/execution_policy.h>
#undef derived_cast

#include <cudashim/thrust_device.h>

THRUST_NAMESPACE_BEGIN
namespace detail {

template <typename _Derived>
constexpr _Derived& derived_cast(execution_policy_base<_Derived>& __x,
                                 ::cudashim::_Thrust_call<_Derived>&& __call = ::cudashim::_Thrust_call<_Derived>(
                                   __builtin_FUNCTION())) {
  __call.__check(static_cast<const _Derived&>(__x));
  return static_cast<_Derived&>(__x);
}

template <typename _Derived>
constexpr const _Derived& derived_cast(const execution_policy_base<_Derived>& __x,
                                       ::cudashim::_Thrust_call<_Derived>&& __call = ::cudashim::_Thrust_call<_Derived>(
                                         __builtin_FUNCTION())) {
  __call.__check(static_cast<const _Derived&>(__x));
  return static_cast<const _Derived&>(__x);
}

}  // namespace detail
THRUST_NAMESPACE_END
