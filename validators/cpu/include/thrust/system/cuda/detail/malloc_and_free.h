// cudashim: the device system (thrust::system::cuda, see ../execution_policy.h) runs the CPP
// system's malloc_and_free, found by the same argument-dependent lookup.
#pragma once
#include <thrust/system/cpp/detail/malloc_and_free.h>
