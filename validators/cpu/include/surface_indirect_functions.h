// cudashim: surface objects over CUDA arrays made with cudaArraySurfaceLoadStore:
// cudaCreateSurfaceObject / cudaDestroySurfaceObject, surf{1,2,3}D{read,write} and, over layered
// and cubemap arrays, surf{1,2}DLayered, surfCubemap and surfCubemapLayered {read,write} (the
// layer, face or layer * 6 + face is the slice). As in CUDA,
// the x coordinate is in bytes, y and z in rows and slices; reads and writes move sizeof(T)
// raw bytes. Boundary modes: Zero (an access that does not fit reads 0 / writes nothing),
// Clamp (the byte coordinate is clamped to [0, row bytes - sizeof(T)], y and z to the last
// row/slice) and Trap (the default: the run stops with an invalid-memory-access report).
#ifndef CUDASHIM_SURFACE_INDIRECT_FUNCTIONS_H
#define CUDASHIM_SURFACE_INDIRECT_FUNCTIONS_H

#include <cudashim/texture_runtime.h>
#include <surface_types.h>

namespace cudashim {
namespace surf {

inline constexpr unsigned kSurfaceMagic = 0x43535246u;

struct Object {
  unsigned __magic;
  cudaResourceDesc __res;
  unsigned char* __base;
  long __row_bytes, __h, __d;
  Object* __next = nullptr;  // the registry's next object (a list, as texture objects')
};

inline Object*& registry() {
  static Object* __head = nullptr;
  return __head;
}

inline const Object* lookup(cudaSurfaceObject_t __s, const char* __fn) {
  const Object* __o = reinterpret_cast<const Object*>(static_cast<uintptr_t>(__s));
  if (__o == nullptr || __o->__magic != kSurfaceMagic)
    cudashim::fatal("cudashim: %s on an invalid surface object (%#llx): never created, or destroyed", __fn, __s);
  return __o;
}

// The address of `__n` bytes at byte x, row y, slice z after the boundary mode; null: no access.
inline unsigned char* locate(const Object* __o, long __x, long __y, long __z, long __n, cudaSurfaceBoundaryMode __m,
                             const char* __fn) {
  const bool __fits = __x >= 0 && __x + __n <= __o->__row_bytes && __y >= 0 && __y < __o->__h && __z >= 0 &&
                      __z < __o->__d;
  if (!__fits) {
    if (__m == cudaBoundaryModeZero) return nullptr;
    if (__m == cudaBoundaryModeClamp) {
      __x = std::clamp(__x, 0L, std::max(0L, __o->__row_bytes - __n));
      __y = std::clamp(__y, 0L, __o->__h - 1);
      __z = std::clamp(__z, 0L, __o->__d - 1);
      if (__x + __n > __o->__row_bytes) return nullptr;  // an element wider than a row
    } else {
      cudashim::fatal("cudashim: invalid memory access: %s of %ld bytes at byte x=%ld, y=%ld, z=%ld outside the "
                      "%ld-byte x %ld x %ld surface (cudaBoundaryModeTrap)",
                      __fn, __n, __x, __y, __z, __o->__row_bytes, __o->__h, __o->__d);
    }
  }
  return __o->__base + (__z * __o->__h + __y) * __o->__row_bytes + __x;
}

template <class _Tp>
inline _Tp read(cudaSurfaceObject_t __s, long __x, long __y, long __z, cudaSurfaceBoundaryMode __m, const char* __fn) {
  const Object* __o = lookup(__s, __fn);
  _Tp __r;
  memset(&__r, 0, sizeof __r);
  if (const unsigned char* __p = locate(__o, __x, __y, __z, (long)sizeof(_Tp), __m, __fn)) memcpy(&__r, __p, sizeof __r);
  return __r;
}

template <class _Tp>
inline void write(const _Tp& __v, cudaSurfaceObject_t __s, long __x, long __y, long __z, cudaSurfaceBoundaryMode __m,
                  const char* __fn) {
  const Object* __o = lookup(__s, __fn);
  if (unsigned char* __p = locate(__o, __x, __y, __z, (long)sizeof(_Tp), __m, __fn)) memcpy(__p, &__v, sizeof __v);
}

}  // namespace surf
}  // namespace cudashim

inline cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t* __out, const cudaResourceDesc* __res) {
  using namespace cudashim::tex;
  if (__out == nullptr || __res == nullptr || __res->resType != cudaResourceTypeArray) return fail(cudaErrorInvalidValue);
  cudaArray_t __a = __res->res.array.array;
  if (!valid_array(__a) || !(__a->__flags & cudaArraySurfaceLoadStore)) return fail(cudaErrorInvalidValue);
  auto* __o = new cudashim::surf::Object{cudashim::surf::kSurfaceMagic, *__res, __a->__data,
                                          (long)array_row_bytes(__a), (long)array_height(__a), (long)array_depth(__a)};
  {
    std::lock_guard<std::mutex> __lk(registry_mutex());
    __o->__next = cudashim::surf::registry();
    cudashim::surf::registry() = __o;
  }
  *__out = static_cast<cudaSurfaceObject_t>(reinterpret_cast<uintptr_t>(__o));
  return cudaSuccess;
}
inline cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t __s) {
  std::lock_guard<std::mutex> __lk(cudashim::tex::registry_mutex());
  for (cudashim::surf::Object* __o = cudashim::surf::registry(); __o != nullptr; __o = __o->__next) {
    if (reinterpret_cast<uintptr_t>(__o) == __s && __o->__magic == cudashim::surf::kSurfaceMagic) {
      __o->__magic = 0;
      return cudaSuccess;
    }
  }
  return cudashim::tex::fail(cudaErrorInvalidValue);
}
inline cudaError_t cudaGetSurfaceObjectResourceDesc(cudaResourceDesc* __res, cudaSurfaceObject_t __s) {
  std::lock_guard<std::mutex> __lk(cudashim::tex::registry_mutex());
  for (cudashim::surf::Object* __o = cudashim::surf::registry(); __o != nullptr; __o = __o->__next) {
    if (reinterpret_cast<uintptr_t>(__o) == __s && __o->__magic == cudashim::surf::kSurfaceMagic && __res) {
      *__res = __o->__res;
      return cudaSuccess;
    }
  }
  return cudashim::tex::fail(cudaErrorInvalidValue);
}

template <class _Tp>
inline _Tp surf1Dread(cudaSurfaceObject_t __s, int __x, cudaSurfaceBoundaryMode __m = cudaBoundaryModeTrap) {
  return cudashim::surf::read<_Tp>(__s, __x, 0, 0, __m, "surf1Dread");
}
template <class _Tp>
inline _Tp surf2Dread(cudaSurfaceObject_t __s, int __x, int __y, cudaSurfaceBoundaryMode __m = cudaBoundaryModeTrap) {
  return cudashim::surf::read<_Tp>(__s, __x, __y, 0, __m, "surf2Dread");
}
template <class _Tp>
inline _Tp surf3Dread(cudaSurfaceObject_t __s, int __x, int __y, int __z,
                      cudaSurfaceBoundaryMode __m = cudaBoundaryModeTrap) {
  return cudashim::surf::read<_Tp>(__s, __x, __y, __z, __m, "surf3Dread");
}
template <class _Tp>
inline void surf1Dread(_Tp* __r, cudaSurfaceObject_t __s, int __x, cudaSurfaceBoundaryMode __m = cudaBoundaryModeTrap) {
  *__r = surf1Dread<_Tp>(__s, __x, __m);
}
template <class _Tp>
inline void surf2Dread(_Tp* __r, cudaSurfaceObject_t __s, int __x, int __y,
                       cudaSurfaceBoundaryMode __m = cudaBoundaryModeTrap) {
  *__r = surf2Dread<_Tp>(__s, __x, __y, __m);
}
template <class _Tp>
inline void surf3Dread(_Tp* __r, cudaSurfaceObject_t __s, int __x, int __y, int __z,
                       cudaSurfaceBoundaryMode __m = cudaBoundaryModeTrap) {
  *__r = surf3Dread<_Tp>(__s, __x, __y, __z, __m);
}
template <class _Tp>
inline void surf1Dwrite(_Tp __v, cudaSurfaceObject_t __s, int __x, cudaSurfaceBoundaryMode __m = cudaBoundaryModeTrap) {
  cudashim::surf::write(__v, __s, __x, 0, 0, __m, "surf1Dwrite");
}
template <class _Tp>
inline void surf2Dwrite(_Tp __v, cudaSurfaceObject_t __s, int __x, int __y,
                        cudaSurfaceBoundaryMode __m = cudaBoundaryModeTrap) {
  cudashim::surf::write(__v, __s, __x, __y, 0, __m, "surf2Dwrite");
}
template <class _Tp>
inline void surf3Dwrite(_Tp __v, cudaSurfaceObject_t __s, int __x, int __y, int __z,
                        cudaSurfaceBoundaryMode __m = cudaBoundaryModeTrap) {
  cudashim::surf::write(__v, __s, __x, __y, __z, __m, "surf3Dwrite");
}


// Layered and cubemap surfaces: the layer (face, cubemap layer * 6 + face) is the array's slice.
#define CUDASHIM_SURF_LAYERED(_Name, _Params, _Args)                                                             \
  template <class _Tp>                                                                                          \
  inline _Tp _Name##read(cudaSurfaceObject_t __s, CUDASHIM_SURF_UNPAREN _Params,                                \
                         cudaSurfaceBoundaryMode __m = cudaBoundaryModeTrap) {                                  \
    return cudashim::surf::read<_Tp>(__s, CUDASHIM_SURF_UNPAREN _Args, __m, #_Name "read");                     \
  }                                                                                                             \
  template <class _Tp>                                                                                          \
  inline void _Name##read(_Tp* __r, cudaSurfaceObject_t __s, CUDASHIM_SURF_UNPAREN _Params,                     \
                          cudaSurfaceBoundaryMode __m = cudaBoundaryModeTrap) {                                 \
    *__r = cudashim::surf::read<_Tp>(__s, CUDASHIM_SURF_UNPAREN _Args, __m, #_Name "read");                     \
  }                                                                                                             \
  template <class _Tp>                                                                                          \
  inline void _Name##write(_Tp __v, cudaSurfaceObject_t __s, CUDASHIM_SURF_UNPAREN _Params,                     \
                           cudaSurfaceBoundaryMode __m = cudaBoundaryModeTrap) {                                \
    cudashim::surf::write(__v, __s, CUDASHIM_SURF_UNPAREN _Args, __m, #_Name "write");                          \
  }
#define CUDASHIM_SURF_UNPAREN(...) __VA_ARGS__
CUDASHIM_SURF_LAYERED(surf1DLayered, (int __x, int __layer), (__x, 0, __layer))
CUDASHIM_SURF_LAYERED(surf2DLayered, (int __x, int __y, int __layer), (__x, __y, __layer))
CUDASHIM_SURF_LAYERED(surfCubemap, (int __x, int __y, int __face), (__x, __y, __face))
CUDASHIM_SURF_LAYERED(surfCubemapLayered, (int __x, int __y, int __layerFace), (__x, __y, __layerFace))
#undef CUDASHIM_SURF_UNPAREN
#undef CUDASHIM_SURF_LAYERED

#endif  // CUDASHIM_SURFACE_INDIRECT_FUNCTIONS_H
