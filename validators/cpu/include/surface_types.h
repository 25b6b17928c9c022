// cudashim: the types of CUDA's surface-object API (Runtime API reference). Legacy surface
// references (`surface<void, 2>`, cudaBindSurfaceToArray; removed in CUDA 12) are absent.
#ifndef CUDASHIM_SURFACE_TYPES_H
#define CUDASHIM_SURFACE_TYPES_H

#include <texture_types.h>

enum cudaSurfaceBoundaryMode {
  cudaBoundaryModeZero = 0,
  cudaBoundaryModeClamp = 1,
  cudaBoundaryModeTrap = 2,
};
enum cudaSurfaceFormatMode { cudaFormatModeForced = 0, cudaFormatModeAuto = 1 };

typedef unsigned long long cudaSurfaceObject_t;

#endif  // CUDASHIM_SURFACE_TYPES_H
