// cudashim: CUB's <cub/device/device_scan.cuh> (see cub/detail/; the CPU shim's own implementation).
#pragma once
#include <cub/detail/cudashim_device.cuh>
