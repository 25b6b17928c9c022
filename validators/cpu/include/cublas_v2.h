// cudashim: the cuBLAS v2 API (a host subset: see cublas_api.h and validators/cpu/README.md).
#pragma once
// The include guard CUDA's own header defines: programs test it to know the header is in.
#define CUBLAS_V2_H_
#include <cublas_api.h>
