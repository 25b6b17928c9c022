// cudashim: CUB's <cub/config.cuh> (see cub/detail/; the CPU shim's own implementation).
#pragma once
#include <cub/detail/cudashim_core.cuh>
