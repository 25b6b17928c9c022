// torch's header, served by the cpu backend: the definitions are in cudashim_torch_cuda.h.
#pragma once
#include "cudashim_torch_cuda.h"
