// cudashim: CUB's <cub/util_arch.cuh> (see cub/detail/; the CPU shim's own implementation).
#pragma once
#include <cub/detail/cudashim_core.cuh>
