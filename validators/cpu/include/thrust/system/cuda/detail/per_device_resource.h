// cudashim: the device system (thrust::system::cuda, see ../execution_policy.h) runs the CPP
// system's per_device_resource, found by the same argument-dependent lookup.
#pragma once
#include <thrust/system/cpp/detail/per_device_resource.h>
