// cudashim: the device system (thrust::system::cuda, see ../execution_policy.h) runs the CPP
// system's unique_by_key, found by the same argument-dependent lookup.
#pragma once
#include <thrust/system/cpp/detail/unique_by_key.h>
