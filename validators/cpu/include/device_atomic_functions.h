// cudashim: everything CUDA declares here is in cuda_runtime.h.
#pragma once
#include <cuda_runtime.h>
