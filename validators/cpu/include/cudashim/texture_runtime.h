// cudashim: the host side of CUDA's texture-object API: channel descriptors, CUDA arrays, copies
// to and from them, and texture object creation (Runtime API reference semantics; device
// memory is host memory, so every copy is a memmove done in issue order; an async copy on a stream
// being captured is a copy node of the capture instead, `cudashim::_async_copy`).
#ifndef CUDASHIM_TEXTURE_RUNTIME_H
#define CUDASHIM_TEXTURE_RUNTIME_H

#include <cudashim/texture_object.h>

#include <cstdlib>

// ---------------------------------------------------------------- channel descriptors
inline cudaChannelFormatDesc cudaCreateChannelDesc(int __x, int __y, int __z, int __w, cudaChannelFormatKind __f) {
  return cudaChannelFormatDesc{__x, __y, __z, __w, __f};
}
template <class _Tp>
inline cudaChannelFormatDesc cudaCreateChannelDesc() {
  return cudaChannelFormatDesc{0, 0, 0, 0, cudaChannelFormatKindNone};
}
#define CUDASHIM_CHANNEL(_Ty, _Bits, _Np, _Kind)                                                        \
  template <>                                                                                         \
  inline cudaChannelFormatDesc cudaCreateChannelDesc<_Ty>() {                                          \
    return cudaChannelFormatDesc{_Bits, _Np > 1 ? _Bits : 0, _Np > 2 ? _Bits : 0, _Np > 3 ? _Bits : 0, \
                                 cudaChannelFormatKind##_Kind};                                       \
  }
#define CUDASHIM_CHANNEL_VEC(_Vp, _Bits, _Kind)                                            \
  CUDASHIM_CHANNEL(_Vp##1, _Bits, 1, _Kind) CUDASHIM_CHANNEL(_Vp##2, _Bits, 2, _Kind) \
  CUDASHIM_CHANNEL(_Vp##4, _Bits, 4, _Kind)
#if CHAR_MIN == 0
CUDASHIM_CHANNEL(char, 8, 1, Unsigned)
#else
CUDASHIM_CHANNEL(char, 8, 1, Signed)
#endif
CUDASHIM_CHANNEL(signed char, 8, 1, Signed)
CUDASHIM_CHANNEL(unsigned char, 8, 1, Unsigned)
CUDASHIM_CHANNEL(short, 16, 1, Signed)
CUDASHIM_CHANNEL(unsigned short, 16, 1, Unsigned)
CUDASHIM_CHANNEL(int, 32, 1, Signed)
CUDASHIM_CHANNEL(unsigned int, 32, 1, Unsigned)
CUDASHIM_CHANNEL(float, 32, 1, Float)
CUDASHIM_CHANNEL_VEC(char, 8, Signed)
CUDASHIM_CHANNEL_VEC(uchar, 8, Unsigned)
CUDASHIM_CHANNEL_VEC(short, 16, Signed)
CUDASHIM_CHANNEL_VEC(ushort, 16, Unsigned)
CUDASHIM_CHANNEL_VEC(int, 32, Signed)
CUDASHIM_CHANNEL_VEC(uint, 32, Unsigned)
CUDASHIM_CHANNEL_VEC(float, 32, Float)
#undef CUDASHIM_CHANNEL_VEC
#undef CUDASHIM_CHANNEL
inline cudaChannelFormatDesc cudaCreateChannelDescHalf() { return {16, 0, 0, 0, cudaChannelFormatKindFloat}; }
inline cudaChannelFormatDesc cudaCreateChannelDescHalf1() { return {16, 0, 0, 0, cudaChannelFormatKindFloat}; }
inline cudaChannelFormatDesc cudaCreateChannelDescHalf2() { return {16, 16, 0, 0, cudaChannelFormatKindFloat}; }
inline cudaChannelFormatDesc cudaCreateChannelDescHalf4() { return {16, 16, 16, 16, cudaChannelFormatKindFloat}; }

namespace cudashim {
namespace tex {
inline cudaError_t fail(cudaError_t __e) {
  cudashim::set_error(__e);
  return __e;
}
inline bool valid_array(cudaArray_const_t __a) { return __a != nullptr && __a->__magic == kArrayMagic; }
inline size_t array_width(cudaArray_const_t __a) { return __a->__extent.width; }
inline size_t array_height(cudaArray_const_t __a) { return __a->__extent.height ? __a->__extent.height : 1; }
inline size_t array_depth(cudaArray_const_t __a) { return __a->__extent.depth ? __a->__extent.depth : 1; }
inline size_t array_row_bytes(cudaArray_const_t __a) { return __a->__extent.width * __a->__elem; }

inline cudaError_t new_array(cudaArray_t* __out, const cudaChannelFormatDesc* __desc, cudaExtent __e, unsigned __flags) {
  int __ncomp = 0, __bits = 0;
  if (__out == nullptr || __desc == nullptr || !valid_desc(*__desc, &__ncomp, &__bits)) return fail(cudaErrorInvalidValue);
  if (__flags & cudaArrayCubemap) {
    // Six square faces; with cudaArrayLayered, depth / 6 cubemaps of six faces.
    const bool __six = (__flags & cudaArrayLayered) ? __e.depth % 6 == 0 : __e.depth == 6;
    if (__e.width == 0 || __e.height != __e.width || __e.depth == 0 || !__six) return fail(cudaErrorInvalidValue);
  } else if (__flags & cudaArrayLayered) {
    // depth layers of width (1D layered: height 0) or width x height texels.
    if (__e.width == 0 || __e.depth == 0) return fail(cudaErrorInvalidValue);
  } else if (__e.width == 0 || (__e.height == 0 && __e.depth != 0)) {
    return fail(cudaErrorInvalidValue);
  }
  cudaArray* __a = new cudaArray{kArrayMagic, *__desc, __e, __flags, size_t(__ncomp * __bits / 8), nullptr};
  // Exactly the texels' bytes, so AddressSanitizer sees copies that overrun the array.
  const size_t __bytes = array_row_bytes(__a) * array_height(__a) * array_depth(__a);
  __a->__data = static_cast<unsigned char*>(calloc(__bytes, 1));
  if (__a->__data == nullptr) {
    delete __a;
    return fail(cudaErrorMemoryAllocation);
  }
  *__out = __a;
  return cudaSuccess;
}

// A 2D copy of `__height` rows of `__width` bytes, after the bounds checks of the caller.
inline cudaError_t copy_rows(void* __dst, size_t __dpitch, const void* __src, size_t __spitch, size_t __width,
                             size_t __height, cudaMemcpyKind __kind) {
  for (size_t __r = 0; __r < __height; ++__r) {
    cudaError_t __e = cudaMemcpy(static_cast<char*>(__dst) + __r * __dpitch,
                                 static_cast<const char*>(__src) + __r * __spitch, __width, __kind);
    if (__e != cudaSuccess) return __e;
  }
  return cudaSuccess;
}

// The address of byte column `__x` (bytes), row `__y`, slice `__z` of an array, if the box of
// `__w` bytes x `__h` rows x `__d` slices there fits in it.
inline unsigned char* array_box(cudaArray_const_t __a, size_t __x, size_t __y, size_t __z, size_t __w, size_t __h,
                                size_t __d) {
  if (__x + __w > array_row_bytes(__a) || __y + __h > array_height(__a) || __z + __d > array_depth(__a)) return nullptr;
  return __a->__data + (__z * array_height(__a) + __y) * array_row_bytes(__a) + __x;
}
}  // namespace tex
}  // namespace cudashim

// ---------------------------------------------------------------- CUDA arrays
inline cudaError_t cudaMallocArray(cudaArray_t* __array, const cudaChannelFormatDesc* __desc, size_t __width,
                                   size_t __height = 0, unsigned int __flags = 0) {
  // Layered and cubemap arrays are made by cudaMalloc3DArray only.
  if (__flags & (cudaArrayLayered | cudaArrayCubemap)) return cudashim::tex::fail(cudaErrorInvalidValue);
  return cudashim::tex::new_array(__array, __desc, cudaExtent{__width, __height, 0}, __flags);
}
inline cudaError_t cudaMalloc3DArray(cudaArray_t* __array, const cudaChannelFormatDesc* __desc, cudaExtent __extent,
                                     unsigned int __flags = 0) {
  return cudashim::tex::new_array(__array, __desc, __extent, __flags);
}
inline cudaError_t cudaFreeArray(cudaArray_t __array) {
  if (__array == nullptr) return cudaSuccess;
  if (!cudashim::tex::valid_array(__array)) return cudashim::tex::fail(cudaErrorInvalidValue);
  __array->__magic = 0;
  free(__array->__data);
  delete __array;
  return cudaSuccess;
}
inline cudaError_t cudaArrayGetInfo(cudaChannelFormatDesc* __desc, cudaExtent* __extent, unsigned int* __flags,
                                    cudaArray_t __array) {
  if (!cudashim::tex::valid_array(__array)) return cudashim::tex::fail(cudaErrorInvalidValue);
  if (__desc) *__desc = __array->__desc;
  if (__extent) *__extent = __array->__extent;
  if (__flags) *__flags = __array->__flags;
  return cudaSuccess;
}
inline cudaError_t cudaGetChannelDesc(cudaChannelFormatDesc* __desc, cudaArray_const_t __array) {
  if (__desc == nullptr || !cudashim::tex::valid_array(__array)) return cudashim::tex::fail(cudaErrorInvalidValue);
  *__desc = __array->__desc;
  return cudaSuccess;
}

// wOffset and width are in bytes, hOffset and height in rows, as in the Runtime API.
inline cudaError_t cudaMemcpy2DToArray(cudaArray_t __dst, size_t __wOffset, size_t __hOffset, const void* __src,
                                       size_t __spitch, size_t __width, size_t __height, cudaMemcpyKind __kind) { ::cudashim::_Device_access __cudashim_da;
  using namespace cudashim::tex;
  if (!valid_array(__dst)) return fail(cudaErrorInvalidValue);
  if (__width > __spitch && __height > 1) return fail(cudaErrorInvalidPitchValue);
  unsigned char* __p = array_box(__dst, __wOffset, __hOffset, 0, __width, __height, 1);
  if (__p == nullptr) return fail(cudaErrorInvalidValue);
  return copy_rows(__p, array_row_bytes(__dst), __src, __spitch, __width, __height, __kind);
}
template <class = void>  // not instantiated in a program that makes no such copy
inline cudaError_t cudaMemcpy2DToArrayAsync(cudaArray_t __dst, size_t __wOffset, size_t __hOffset, const void* __src,
                                            size_t __spitch, size_t __width, size_t __height, cudaMemcpyKind __kind,
                                            cudaStream_t __s = 0) {
  if (!cudashim::tex::valid_array(__dst)) return cudashim::tex::fail(cudaErrorInvalidValue);
  return cudashim::_async_copy(__s, [=] {
    return cudaMemcpy2DToArray(__dst, __wOffset, __hOffset, __src, __spitch, __width, __height, __kind);
  });
}
inline cudaError_t cudaMemcpy2DFromArray(void* __dst, size_t __dpitch, cudaArray_const_t __src, size_t __wOffset,
                                         size_t __hOffset, size_t __width, size_t __height, cudaMemcpyKind __kind) { ::cudashim::_Device_access __cudashim_da;
  using namespace cudashim::tex;
  if (!valid_array(__src)) return fail(cudaErrorInvalidValue);
  if (__width > __dpitch && __height > 1) return fail(cudaErrorInvalidPitchValue);
  const unsigned char* __p = array_box(__src, __wOffset, __hOffset, 0, __width, __height, 1);
  if (__p == nullptr) return fail(cudaErrorInvalidValue);
  return copy_rows(__dst, __dpitch, __p, array_row_bytes(__src), __width, __height, __kind);
}
template <class = void>  // not instantiated in a program that makes no such copy
inline cudaError_t cudaMemcpy2DFromArrayAsync(void* __dst, size_t __dpitch, cudaArray_const_t __src, size_t __wOffset,
                                              size_t __hOffset, size_t __width, size_t __height, cudaMemcpyKind __kind,
                                              cudaStream_t __s = 0) {
  if (!cudashim::tex::valid_array(__src)) return cudashim::tex::fail(cudaErrorInvalidValue);
  return cudashim::_async_copy(__s, [=] {
    return cudaMemcpy2DFromArray(__dst, __dpitch, __src, __wOffset, __hOffset, __width, __height, __kind);
  });
}
// Deprecated but common: `count` bytes from (wOffset bytes, hOffset rows) on, row after row.
inline cudaError_t cudaMemcpyToArray(cudaArray_t __dst, size_t __wOffset, size_t __hOffset, const void* __src,
                                     size_t __count, cudaMemcpyKind __kind) { ::cudashim::_Device_access __cudashim_da;
  using namespace cudashim::tex;
  if (!valid_array(__dst)) return fail(cudaErrorInvalidValue);
  const size_t __start = __hOffset * array_row_bytes(__dst) + __wOffset;
  if (__wOffset > array_row_bytes(__dst) ||
      __start + __count > array_row_bytes(__dst) * array_height(__dst) * array_depth(__dst))
    return fail(cudaErrorInvalidValue);
  return cudaMemcpy(__dst->__data + __start, __src, __count, __kind);
}
template <class = void>  // not instantiated in a program that makes no such copy
inline cudaError_t cudaMemcpyToArrayAsync(cudaArray_t __dst, size_t __wOffset, size_t __hOffset, const void* __src,
                                          size_t __count, cudaMemcpyKind __kind, cudaStream_t __s = 0) {
  if (!cudashim::tex::valid_array(__dst)) return cudashim::tex::fail(cudaErrorInvalidValue);
  return cudashim::_async_copy(__s, [=] { return cudaMemcpyToArray(__dst, __wOffset, __hOffset, __src, __count, __kind); });
}
inline cudaError_t cudaMemcpyFromArray(void* __dst, cudaArray_const_t __src, size_t __wOffset, size_t __hOffset,
                                       size_t __count, cudaMemcpyKind __kind) { ::cudashim::_Device_access __cudashim_da;
  using namespace cudashim::tex;
  if (!valid_array(__src)) return fail(cudaErrorInvalidValue);
  const size_t __start = __hOffset * array_row_bytes(__src) + __wOffset;
  if (__wOffset > array_row_bytes(__src) ||
      __start + __count > array_row_bytes(__src) * array_height(__src) * array_depth(__src))
    return fail(cudaErrorInvalidValue);
  return cudaMemcpy(__dst, __src->__data + __start, __count, __kind);
}
template <class = void>  // not instantiated in a program that makes no such copy
inline cudaError_t cudaMemcpyFromArrayAsync(void* __dst, cudaArray_const_t __src, size_t __wOffset, size_t __hOffset,
                                            size_t __count, cudaMemcpyKind __kind, cudaStream_t __s = 0) {
  if (!cudashim::tex::valid_array(__src)) return cudashim::tex::fail(cudaErrorInvalidValue);
  return cudashim::_async_copy(__s, [=] { return cudaMemcpyFromArray(__dst, __src, __wOffset, __hOffset, __count, __kind); });
}

// Positions and the extent are in elements of the array taking part (bytes when none does).
inline cudaError_t cudaMemcpy3D(const cudaMemcpy3DParms* __p) { ::cudashim::_Device_access __cudashim_da;
  using namespace cudashim::tex;
  if (__p == nullptr) return fail(cudaErrorInvalidValue);
  const bool __sa = __p->srcArray != nullptr, __da = __p->dstArray != nullptr;
  if ((__sa && !valid_array(__p->srcArray)) || (__da && !valid_array(__p->dstArray))) return fail(cudaErrorInvalidValue);
  if ((!__sa && __p->srcPtr.ptr == nullptr) || (!__da && __p->dstPtr.ptr == nullptr)) return fail(cudaErrorInvalidValue);
  const size_t __elem = __sa ? __p->srcArray->__elem : __da ? __p->dstArray->__elem : 1;
  if (__sa && __da && __p->srcArray->__elem != __p->dstArray->__elem) return fail(cudaErrorInvalidValue);
  const cudaExtent __e = __p->extent;
  const size_t __w = __e.width * __elem, __h = __e.height, __d = __e.depth;
  if (__w == 0 || __h == 0 || __d == 0) return cudaSuccess;
  // One side: the address of row (y, z) of the box.
  auto __row = [&](bool __is_array, cudaArray_const_t __a, const cudaPitchedPtr& __pp, const cudaPos& __pos, size_t __y,
                   size_t __z) -> unsigned char* {
    if (__is_array) return array_box(__a, __pos.x * __elem, __pos.y + __y, __pos.z + __z, __w, 1, 1);
    if (__pos.x + __w > __pp.pitch) return nullptr;
    const size_t __rows = __pp.ysize ? __pp.ysize : 1;
    return static_cast<unsigned char*>(__pp.ptr) + ((__pos.z + __z) * __rows + __pos.y + __y) * __pp.pitch + __pos.x;
  };
  for (size_t __z = 0; __z < __d; ++__z) {
    for (size_t __y = 0; __y < __h; ++__y) {
      unsigned char* __s = __row(__sa, __p->srcArray, __p->srcPtr, __p->srcPos, __y, __z);
      unsigned char* __t = __row(__da, __p->dstArray, __p->dstPtr, __p->dstPos, __y, __z);
      if (__s == nullptr || __t == nullptr) return fail(cudaErrorInvalidValue);
      cudaError_t __r = cudaMemcpy(__t, __s, __w, __p->kind);
      if (__r != cudaSuccess) return __r;
    }
  }
  return cudaSuccess;
}
// The parameters are taken at the call (a captured copy keeps them, as a GPU's copy node does).
template <class = void>  // not instantiated in a program that makes no such copy
inline cudaError_t cudaMemcpy3DAsync(const cudaMemcpy3DParms* __p, cudaStream_t __s = 0) {
  if (__p == nullptr) return cudashim::tex::fail(cudaErrorInvalidValue);
  const cudaMemcpy3DParms __parms = *__p;
  return cudashim::_async_copy(__s, [=] { return cudaMemcpy3D(&__parms); });
}

// ---------------------------------------------------------------- texture objects
inline cudaError_t cudaCreateTextureObject(cudaTextureObject_t* __out, const cudaResourceDesc* __res,
                                           const cudaTextureDesc* __td, const cudaResourceViewDesc* __view) {
  using namespace cudashim::tex;
  if (__out == nullptr || __res == nullptr || __td == nullptr) return fail(cudaErrorInvalidValue);
  // A view that keeps the resource's format is the resource itself, unless it starts past its
  // first layer or level (not modelled).
  if (__view != nullptr &&
      (__view->format != cudaResViewFormatNone || __view->firstLayer != 0 || __view->firstMipmapLevel != 0))
    cudashim::fatal("cudashim: needs a GPU: texture (resource views are not in the CPU shim)");
  if (__td->sRGB) cudashim::fatal("cudashim: needs a GPU: texture (sRGB textures are not in the CPU shim)");
  Object __o{};
  __o.__magic = kTextureMagic;
  __o.__res = *__res;
  __o.__td = *__td;
  __o.__n[0] = __o.__n[1] = __o.__n[2] = 1;
  cudaChannelFormatDesc __desc{};
  switch (__res->resType) {
    case cudaResourceTypeArray: {
      cudaArray_const_t __a = __res->res.array.array;
      if (!valid_array(__a)) return fail(cudaErrorInvalidValue);
      __desc = __a->__desc;
      __o.__base = __a->__data;
      __o.__n[0] = (long)array_width(__a);
      __o.__n[1] = (long)array_height(__a);
      __o.__n[2] = (long)array_depth(__a);
      __o.__pitch = array_row_bytes(__a);
      __o.__slice = __o.__pitch * array_height(__a);
      if (__a->__flags & (cudaArrayLayered | cudaArrayCubemap)) {
        // Each layer (face) is a 1D or 2D image; the depth extent counts them.
        const bool __cube = (__a->__flags & cudaArrayCubemap) != 0;
        __o.__shape = __cube ? ((__a->__flags & cudaArrayLayered) ? kCubemapLayered : kCubemap)
                             : (__a->__extent.height == 0 ? kLayered1D : kLayered2D);
        __o.__layers = (long)array_depth(__a) / (__cube ? 6 : 1);
        __o.__layer_bytes = __o.__slice;
        __o.__n[2] = 1;
      }
      break;
    }
    case cudaResourceTypeLinear:
      __desc = __res->res.linear.desc;
      __o.__base = static_cast<const unsigned char*>(__res->res.linear.devPtr);
      __o.__linear_res = true;
      break;
    case cudaResourceTypePitch2D:
      __desc = __res->res.pitch2D.desc;
      __o.__base = static_cast<const unsigned char*>(__res->res.pitch2D.devPtr);
      __o.__n[0] = (long)__res->res.pitch2D.width;
      __o.__n[1] = (long)__res->res.pitch2D.height;
      __o.__pitch = __res->res.pitch2D.pitchInBytes;
      break;
    default:
      return fail(cudaErrorInvalidValue);  // mipmapped arrays cannot be made here
  }
  if (!valid_desc(__desc, &__o.__ncomp, &__o.__bits) || __o.__base == nullptr) return fail(cudaErrorInvalidValue);
  __o.__kind = __desc.f;
  __o.__elem = size_t(__o.__ncomp * __o.__bits / 8);
  if (__o.__linear_res) {
    const size_t __n = __res->res.linear.sizeInBytes / __o.__elem;
    if (__n == 0 || __n > (size_t(1) << 27)) return fail(cudaErrorInvalidValue);  // maxTexture1DLinear
    __o.__n[0] = (long)__n;
  }
  if (__res->resType == cudaResourceTypePitch2D) {
    // texturePitchAlignment is 32 bytes on the GPUs the shim stands for.
    if (__o.__n[0] == 0 || __o.__n[1] == 0 || __o.__pitch % 32 != 0 || __o.__pitch < __o.__n[0] * __o.__elem)
      return fail(cudaErrorInvalidValue);
  }
  __o.__normalize = __td->readMode == cudaReadModeNormalizedFloat && __o.__kind != cudaChannelFormatKindFloat &&
                    __o.__bits < 32;
  for (int __d = 0; __d < 3; ++__d)
    if ((unsigned)__td->addressMode[__d] > (unsigned)cudaAddressModeBorder) return fail(cudaErrorInvalidValue);
  if ((unsigned)__td->filterMode > (unsigned)cudaFilterModeLinear ||
      (unsigned)__td->readMode > (unsigned)cudaReadModeNormalizedFloat)
    return fail(cudaErrorInvalidValue);
  // Linear filtering needs a texture that returns floating-point data.
  if (__td->filterMode == cudaFilterModeLinear && __o.__kind != cudaChannelFormatKindFloat && !__o.__normalize)
    return fail(cudaErrorInvalidValue);
  Object* __obj = new Object(__o);
  {
    std::lock_guard<std::mutex> __lk(registry_mutex());
    __obj->__next = registry();
    registry() = __obj;
  }
  *__out = static_cast<cudaTextureObject_t>(reinterpret_cast<uintptr_t>(__obj));
  return cudaSuccess;
}

inline cudaError_t cudaDestroyTextureObject(cudaTextureObject_t __t) {
  using namespace cudashim::tex;
  std::lock_guard<std::mutex> __lk(registry_mutex());
  for (Object* __o = registry(); __o != nullptr; __o = __o->__next) {
    if (reinterpret_cast<uintptr_t>(__o) == __t && __o->__magic == kTextureMagic) {
      __o->__magic = 0;
      return cudaSuccess;
    }
  }
  return fail(cudaErrorInvalidValue);
}

inline cudaError_t cudaGetTextureObjectResourceDesc(cudaResourceDesc* __res, cudaTextureObject_t __t) {
  using namespace cudashim::tex;
  std::lock_guard<std::mutex> __lk(registry_mutex());
  for (Object* __o = registry(); __o != nullptr; __o = __o->__next) {
    if (reinterpret_cast<uintptr_t>(__o) == __t && __o->__magic == kTextureMagic && __res != nullptr) {
      *__res = __o->__res;
      return cudaSuccess;
    }
  }
  return fail(cudaErrorInvalidValue);
}
inline cudaError_t cudaGetTextureObjectTextureDesc(cudaTextureDesc* __td, cudaTextureObject_t __t) {
  using namespace cudashim::tex;
  std::lock_guard<std::mutex> __lk(registry_mutex());
  for (Object* __o = registry(); __o != nullptr; __o = __o->__next) {
    if (reinterpret_cast<uintptr_t>(__o) == __t && __o->__magic == kTextureMagic && __td != nullptr) {
      *__td = __o->__td;
      return cudaSuccess;
    }
  }
  return fail(cudaErrorInvalidValue);
}

#endif  // CUDASHIM_TEXTURE_RUNTIME_H
