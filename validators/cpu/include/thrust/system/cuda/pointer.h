// cudashim: see memory.h (Thrust CPP-system aliases under thrust::cuda).
#pragma once
#include <thrust/system/cuda/memory.h>
