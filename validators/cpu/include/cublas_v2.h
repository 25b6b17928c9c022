// cudashim: the cuBLAS v2 API (a host subset: see cublas_api.h and validators/cpu/README.md).
#pragma once
#include <cublas_api.h>
