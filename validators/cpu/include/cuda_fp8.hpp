// cudashim: CUDA's cuda_fp8.hpp holds what cuda_fp8.h declares; here both are one header.
#pragma once
#include <cuda_fp8.h>
