// cudashim: CUDA's internal path for the WMMA API; see ../mma.h.
#pragma once
#include <mma.h>
