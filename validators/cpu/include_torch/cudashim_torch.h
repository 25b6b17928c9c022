// The forced include (and precompiled header) of every PyTorch extension built for the cpu
// backend (validators/cpu/extension.py). Order matters: torch's headers are parsed first, as a
// host compiler sees them (with __CUDACC__ defined they would take their nvcc paths and include
// NVIDIA's own headers), then the shim, then the CUDA side of torch's C++ API over CPU tensors.
// Precompiled twice (extension.py): with CUDASHIM_TORCH_BIND for units that bind to Python, and
// without it (torch's tensor API, no pybind11) for the rest.
#pragma once
#ifdef CUDASHIM_TORCH_FULL
// The whole of torch/extension.h (the C++ frontend: torch::nn, optim, ...): not precompiled, for
// the extensions the slim set below does not serve (extension.py retries with it).
#include <torch/extension.h>
#else
#include <torch/types.h>
#ifdef CUDASHIM_TORCH_BIND
// Only the units that bind to Python (load_inline's generated main.cpp, a source with its own
// PYBIND11_MODULE): pybind11's headers make g++ emit ~100 kB of pybind11 code in every unit that
// includes them, bound or not (a one-line unit: 14 s of CPU with them, 8 s without).
#include <torch/csrc/utils/pybind.h>
#include <torch/csrc/Exceptions.h>
#endif
#endif
#include <cuda_runtime.h>
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <vector>
#include <string>
#include "cudashim_torch_cuda.h"
