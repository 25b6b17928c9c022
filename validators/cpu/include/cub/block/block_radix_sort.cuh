// cudashim: CUB's <cub/block/block_radix_sort.cuh> (see cub/detail/; the CPU shim's own implementation).
#pragma once
#include <cub/detail/cudashim_block_io.cuh>
