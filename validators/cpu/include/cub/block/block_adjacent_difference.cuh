// cudashim: CUB's <cub/block/block_adjacent_difference.cuh> (see cub/detail/; the CPU shim's own implementation).
#pragma once
#include <cub/detail/cudashim_block.cuh>
