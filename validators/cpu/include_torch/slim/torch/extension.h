// torch/extension.h as the cpu backend serves it: the forced include (cudashim_torch.h) already
// holds the tensor API, and in units that bind to Python pybind11 and torch's type casters; the
// C++ frontend (torch::nn, optim, data) of the real header is not part of it.
#pragma once
#include "cudashim_torch.h"
