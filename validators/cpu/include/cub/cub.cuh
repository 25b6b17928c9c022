// cudashim: CUB's <cub/cub.cuh> (see cub/detail/; the CPU shim's own implementation).
#pragma once
#include <cub/detail/cudashim_core.cuh>
#include <cub/detail/cudashim_device.cuh>
#include <cub/detail/cudashim_block.cuh>
#include <cub/detail/cudashim_block_io.cuh>
#include <cub/detail/cudashim_extras.cuh>
