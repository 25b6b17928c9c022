// cudashim: CUB's <cub/warp/warp_scan.cuh> (see cub/detail/; the CPU shim's own implementation).
#pragma once
#include <cub/detail/cudashim_block.cuh>
