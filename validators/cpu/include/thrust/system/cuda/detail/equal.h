// cudashim: the device system (thrust::system::cuda, see ../execution_policy.h) runs the CPP
// system's equal, found by the same argument-dependent lookup.
#pragma once
#include <thrust/system/cpp/detail/equal.h>
