// cudashim: CUB's <cub/iterator/transform_input_iterator.cuh> (see cub/detail/; the CPU shim's own implementation).
#pragma once
#include <cub/detail/cudashim_extras.cuh>
