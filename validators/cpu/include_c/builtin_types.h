/* cudashim: for C units, everything CUDA declares here is in cuda_runtime_api.h. */
#include "cuda_runtime_api.h"
