// cudashim: the device system (thrust::system::cuda, see ../execution_policy.h) runs the CPP
// system's iter_swap, found by the same argument-dependent lookup.
#pragma once
#include <thrust/system/cpp/detail/iter_swap.h>
