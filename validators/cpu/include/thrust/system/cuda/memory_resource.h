// cudashim: the device system's memory resources (thrust::device_vector's storage): Thrust's
// new/delete resource, as the CPP system's, behind the device system's pointers.
#pragma once

#include <thrust/system/cuda/pointer.h>
#include <thrust/mr/fancy_pointer_resource.h>
#include <thrust/mr/new.h>

THRUST_NAMESPACE_BEGIN
namespace system {
namespace cuda {
namespace detail {
using native_resource = thrust::mr::fancy_pointer_resource<thrust::mr::new_delete_resource, pointer<void>>;
using universal_native_resource =
  thrust::mr::fancy_pointer_resource<thrust::mr::new_delete_resource, universal_pointer<void>>;
}  // namespace detail
using memory_resource = detail::native_resource;
using universal_memory_resource = detail::universal_native_resource;
using universal_host_pinned_memory_resource = universal_memory_resource;
}  // namespace cuda
}  // namespace system
THRUST_NAMESPACE_END
