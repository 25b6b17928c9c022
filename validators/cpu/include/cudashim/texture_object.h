// cudashim: CUDA arrays, texture objects and the texture sampler, after the CUDA Programming
// Guide (appendix "Texture Fetching") and the Runtime API reference.
//
// Sampling, per dimension of size N:
// - the coordinate in texel space is u = x * N for normalized coordinates, else u = x;
// - point filtering reads texel floor(u);
// - linear filtering reads texels i = floor(u - 0.5) and i + 1 with weight alpha = frac(u - 0.5)
//   held, as the Programming Guide says, in 9-bit fixed point with 8 fractional bits (rounded
//   to the nearest 1/256, ties up); products and sums are done in float;
// - each texel index outside [0, N) is addressed: clamp to [0, N - 1], wrap (i mod N), mirror
//   (period 2N, reflected) or border (the texel reads as borderColor). Wrap and mirror are only
//   defined for normalized coordinates; with unnormalized ones they act as clamp.
// - readMode NormalizedFloat turns 8- and 16-bit integers into [0, 1] (unsigned: v / (2^n - 1))
//   or [-1, 1] (signed: max(v / (2^(n-1) - 1), -1)) before filtering; 32-bit integers and
//   floats are returned as they are.
//
// Layered and cubemap arrays (cudaMalloc3DArray with cudaArrayLayered / cudaArrayCubemap): the
// depth extent counts layers (faces), stored one after the other. A layered fetch samples one
// layer as a 1D/2D texture (filtering never blends layers); the layer index is an unsigned
// integer, as PTX's tex.a1d/a2d take it, clamped to the last layer. A cubemap fetch picks the
// face from the direction (x, y, z) by the Programming Guide's table: the major axis m (the
// largest |component|; ties go to z, then y, as D3D orders them) with its sign selects the face,
// the other two give sc, tc, and the face is sampled as a 2D texture at the normalized
// coordinates ((sc/|m| + 1) / 2, (tc/|m| + 1) / 2), whatever normalizedCoords says:
//   face 0 (+x): sc = -z, tc = -y   face 1 (-x): sc = z, tc = -y
//   face 2 (+y): sc = x,  tc = z    face 3 (-y): sc = x, tc = -z
//   face 4 (+z): sc = x,  tc = -y   face 5 (-z): sc = -x, tc = -y
// The face is addressed with addressMode[0..1], unless seamlessCubemap is set: then point
// filtering clamps, and linear filtering takes the texels past a face's edge from the adjacent
// face (a tap past a corner, which no face holds, reads the mean of the other three taps, as
// OpenGL recommends). A layered cubemap's layer selects the cubemap: faces layer*6 .. layer*6+5.
#ifndef CUDASHIM_TEXTURE_OBJECT_H
#define CUDASHIM_TEXTURE_OBJECT_H

#include <texture_types.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <vector>

struct cudaArray {
  unsigned __magic;
  cudaChannelFormatDesc __desc;
  cudaExtent __extent;  // as allocated: height 0 for 1D, depth 0 for 1D/2D
  unsigned __flags;
  size_t __elem;
  unsigned char* __data;
};

namespace cudashim {
namespace tex {

inline constexpr unsigned kArrayMagic = 0x43415252u;
inline constexpr unsigned kTextureMagic = 0x43544558u;

struct Object {
  unsigned __magic;
  cudaResourceDesc __res;
  cudaTextureDesc __td;
  const unsigned char* __base;
  long __n[3];       // texels per dimension (1 past the resource's dimensions)
  size_t __pitch;    // bytes per row
  size_t __slice;    // bytes per 2D slice
  size_t __elem;     // bytes per texel
  int __ncomp;
  int __bits;        // bits per component (all equal)
  cudaChannelFormatKind __kind;
  bool __linear_res;  // cudaResourceTypeLinear: tex1Dfetch only
  bool __normalize;   // NormalizedFloat on an 8- or 16-bit integer format
  int __shape;        // kPlain, or the layered / cubemap kind of the array (fetched by its own calls)
  long __layers;      // layers of a layered array, cubemaps of a layered cubemap (1 for a cubemap)
  size_t __layer_bytes;  // bytes per layer (per face of a cubemap)
  Object* __next = nullptr;  // the registry's next object
};

// The kinds of texture a fetch function reads (and the call that reads each).
enum : int { kPlain = 0, kLayered1D = 1, kLayered2D = 2, kCubemap = 3, kCubemapLayered = 4 };
inline const char* shape_fetch(int __shape) {
  switch (__shape) {
    case kLayered1D: return "tex1DLayered";
    case kLayered2D: return "tex2DLayered";
    case kCubemap: return "texCubemap";
    case kCubemapLayered: return "texCubemapLayered";
    default: return "tex1D/tex2D/tex3D";
  }
}

// Objects are never freed: a destroyed handle keeps a dead magic, so a later fetch through it
// is reported rather than reading freed memory. The registry is a list threaded through the
// objects (newest first): a std::vector here would have every program that includes the shim
// instantiate its members, used or not.
inline std::mutex& registry_mutex() {
  static std::mutex __m;
  return __m;
}
inline Object*& registry() {
  static Object* __head = nullptr;
  return __head;
}

// Channel formats CUDA arrays and texture objects accept: 1, 2 or 4 components of equal size
// (8/16/32-bit integers, 16/32-bit floats), packed from x.
inline bool valid_desc(const cudaChannelFormatDesc& __d, int* __ncomp, int* __bits) {
  const int __c[4] = {__d.x, __d.y, __d.z, __d.w};
  int __n = 0;
  while (__n < 4 && __c[__n] != 0) ++__n;
  for (int __k = __n; __k < 4; ++__k)
    if (__c[__k] != 0) return false;
  if (__n == 0 || __n == 3) return false;
  for (int __k = 1; __k < __n; ++__k)
    if (__c[__k] != __c[0]) return false;
  const int __b = __c[0];
  switch (__d.f) {
    case cudaChannelFormatKindSigned:
    case cudaChannelFormatKindUnsigned:
      if (__b != 8 && __b != 16 && __b != 32) return false;
      break;
    case cudaChannelFormatKindFloat:
      if (__b != 16 && __b != 32) return false;
      break;
    default:
      return false;
  }
  *__ncomp = __n;
  *__bits = __b;
  return true;
}

inline const Object* lookup(cudaTextureObject_t __t, const char* __fn) {
  const Object* __o = reinterpret_cast<const Object*>(static_cast<uintptr_t>(__t));
  if (__o == nullptr || __o->__magic != kTextureMagic)
    cudashim::fatal("cudashim: %s on an invalid texture object (%#llx): never created, or destroyed", __fn, __t);
  return __o;
}

// One texel's components (after NormalizedFloat), as doubles (exact for 32-bit integers).
inline void decode(const Object* __o, const unsigned char* __p, double* __v) {
  for (int __c = 0; __c < 4; ++__c) {
    if (__c >= __o->__ncomp) {
      __v[__c] = 0.0;
      continue;
    }
    const unsigned char* __q = __p + __c * (__o->__bits / 8);
    double __x = 0.0;
    switch (__o->__kind) {
      case cudaChannelFormatKindSigned:
        if (__o->__bits == 8) { signed char __s; memcpy(&__s, __q, 1); __x = __s; }
        else if (__o->__bits == 16) { short __s; memcpy(&__s, __q, 2); __x = __s; }
        else { int __s; memcpy(&__s, __q, 4); __x = __s; }
        if (__o->__normalize) {
          const double __m = __o->__bits == 8 ? 127.0 : 32767.0;
          __x = (double)std::max((float)(__x / __m), -1.0f);
        }
        break;
      case cudaChannelFormatKindUnsigned:
        if (__o->__bits == 8) { unsigned char __s; memcpy(&__s, __q, 1); __x = __s; }
        else if (__o->__bits == 16) { unsigned short __s; memcpy(&__s, __q, 2); __x = __s; }
        else { unsigned __s; memcpy(&__s, __q, 4); __x = __s; }
        if (__o->__normalize) __x = (double)(float)(__x / (__o->__bits == 8 ? 255.0 : 65535.0));
        break;
      default:
        if (__o->__bits == 16) { _Float16 __h; memcpy(&__h, __q, 2); __x = (double)(float)__h; }
        else { float __f; memcpy(&__f, __q, 4); __x = __f; }
        break;
    }
    __v[__c] = __x;
  }
}

// The texel index `__i` of a dimension with `__n` texels after addressing; -1 means border.
inline long address(long __i, long __n, cudaTextureAddressMode __m, bool __normalized) {
  if (__i >= 0 && __i < __n) return __i;
  if (!__normalized && (__m == cudaAddressModeWrap || __m == cudaAddressModeMirror)) __m = cudaAddressModeClamp;
  switch (__m) {
    case cudaAddressModeWrap:
      return ((__i % __n) + __n) % __n;
    case cudaAddressModeMirror: {
      const long __p = 2 * __n;
      const long __r = ((__i % __p) + __p) % __p;
      return __r < __n ? __r : __p - 1 - __r;
    }
    case cudaAddressModeBorder:
      return -1;
    default:
      return __i < 0 ? 0 : __n - 1;
  }
}

// floor() of a texel-space coordinate as an index; NaN reads texel 0, huge values saturate.
inline long floor_index(float __u) {
  if (__u != __u) return 0;
  const float __f = floorf(__u);
  if (__f < -1e9f) return -1000000000L;
  if (__f > 1e9f) return 1000000000L;
  return (long)__f;
}

inline void texel(const Object* __o, const unsigned char* __base, const long* __idx, int __dims, double* __v) {
  for (int __d = 0; __d < __dims; ++__d) {
    if (__idx[__d] < 0) {
      for (int __c = 0; __c < 4; ++__c) __v[__c] = __o->__td.borderColor[__c];
      return;
    }
  }
  const long __j = __dims > 1 ? __idx[1] : 0, __k = __dims > 2 ? __idx[2] : 0;
  decode(__o, __base + __k * __o->__slice + __j * __o->__pitch + __idx[0] * __o->__elem, __v);
}

// Linear filtering along one dimension: the lower texel floor(u - 0.5) (before addressing) and
// the weight of the upper one, in 9-bit fixed point.
inline long linear_tap(float __u, float* __alpha) {
  __u -= 0.5f;
  const long __i = floor_index(__u);
  // u - floor(u) rounds up to 1.0f for tiny negative u: all the weight then goes to i + 1.
  float __frac = __u != __u ? 0.0f : __u - floorf(__u);
  if (!(__frac >= 0.0f)) __frac = 0.0f;  // infinities
  if (__frac > 1.0f) __frac = 1.0f;
  *__alpha = floorf(__frac * 256.0f + 0.5f) / 256.0f;  // 9-bit fixed point, 8 fraction bits
  return __i;
}

// Samples the image at `__base` (the texture's, or one layer / face of it) at `__dims`
// coordinates, with the filter mode and the address modes `__modes`.
inline void sample_image(const Object* __o, const unsigned char* __base, int __dims, const float* __xyz, double* __out,
                         const cudaTextureAddressMode* __modes, bool __norm) {
  if (__o->__td.filterMode != cudaFilterModeLinear) {
    long __idx[3];
    for (int __d = 0; __d < __dims; ++__d) {
      const float __u = __norm ? __xyz[__d] * (float)__o->__n[__d] : __xyz[__d];
      __idx[__d] = address(floor_index(__u), __o->__n[__d], __modes[__d], __norm);
    }
    texel(__o, __base, __idx, __dims, __out);
    return;
  }
  long __lo[3], __hi[3];
  float __a[3];
  for (int __d = 0; __d < __dims; ++__d) {
    const long __i = linear_tap(__norm ? __xyz[__d] * (float)__o->__n[__d] : __xyz[__d], &__a[__d]);
    __lo[__d] = address(__i, __o->__n[__d], __modes[__d], __norm);
    __hi[__d] = address(__i + 1, __o->__n[__d], __modes[__d], __norm);
  }
  float __acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int __corner = 0; __corner < (1 << __dims); ++__corner) {
    long __idx[3];
    float __w = 1.0f;
    for (int __d = 0; __d < __dims; ++__d) {
      const bool __up = (__corner >> __d) & 1;
      __idx[__d] = __up ? __hi[__d] : __lo[__d];
      __w *= __up ? __a[__d] : 1.0f - __a[__d];
    }
    double __v[4];
    texel(__o, __base, __idx, __dims, __v);
    for (int __c = 0; __c < 4; ++__c) __acc[__c] += __w * (float)__v[__c];
  }
  for (int __c = 0; __c < 4; ++__c) __out[__c] = __acc[__c];
}

// Samples a texture at (x, y, z) with its filter and address modes; `__dims` coordinates count.
inline void sample(const Object* __o, int __dims, const float* __xyz, double* __out) {
  sample_image(__o, __o->__base, __dims, __xyz, __out, __o->__td.addressMode, __o->__td.normalizedCoords != 0);
}

// ---------------------------------------------------------------- cubemaps
// The face a direction points at and its coordinates (sc/|m| + 1) / 2, (tc/|m| + 1) / 2.
// A macro for float and double, not a template: the inline functions below would instantiate
// it in every program, textures or not (tests/validators/test_cpu_shim_instantiations.py).
#define CUDASHIM_CUBE_FACE(_Fp) \
inline int cube_face(_Fp __x, _Fp __y, _Fp __z, _Fp* __s, _Fp* __t) { \
  const _Fp __ax = __x < 0 ? -__x : __x, __ay = __y < 0 ? -__y : __y, __az = __z < 0 ? -__z : __z; \
  int __face; \
  _Fp __m, __sc, __tc; \
  if (__az >= __ax && __az >= __ay) { \
    __face = __z >= 0 ? 4 : 5; \
    __m = __az; \
    __sc = __z >= 0 ? __x : -__x; \
    __tc = -__y; \
  } else if (__ay >= __ax) { \
    __face = __y >= 0 ? 2 : 3; \
    __m = __ay; \
    __sc = __x; \
    __tc = __y >= 0 ? __z : -__z; \
  } else { \
    __face = __x >= 0 ? 0 : 1; \
    __m = __ax; \
    __sc = __x >= 0 ? -__z : __z; \
    __tc = -__y; \
  } \
  *__s = (__sc / __m + _Fp(1)) * _Fp(0.5); \
  *__t = (__tc / __m + _Fp(1)) * _Fp(0.5); \
  return __face; \
}
CUDASHIM_CUBE_FACE(float)
CUDASHIM_CUBE_FACE(double)
#undef CUDASHIM_CUBE_FACE

// Seamless filtering: the texel (i, j) just past an edge of face `__face` (N x N texels) is the
// one of the adjacent face its centre's direction points at.
inline int cube_neighbor(int __face, long __i, long __j, long __n, long* __i2, long* __j2) {
  const double __s = 2.0 * (__i + 0.5) / __n - 1.0, __t = 2.0 * (__j + 0.5) / __n - 1.0;
  double __d[3];
  switch (__face) {
    case 0: __d[0] = 1; __d[1] = -__t; __d[2] = -__s; break;
    case 1: __d[0] = -1; __d[1] = -__t; __d[2] = __s; break;
    case 2: __d[0] = __s; __d[1] = 1; __d[2] = __t; break;
    case 3: __d[0] = __s; __d[1] = -1; __d[2] = -__t; break;
    case 4: __d[0] = __s; __d[1] = -__t; __d[2] = 1; break;
    default: __d[0] = -__s; __d[1] = -__t; __d[2] = -1; break;
  }
  double __fs, __ft;
  const int __f2 = cube_face(__d[0], __d[1], __d[2], &__fs, &__ft);
  *__i2 = std::min(std::max((long)floor(__fs * __n), 0L), __n - 1);
  *__j2 = std::min(std::max((long)floor(__ft * __n), 0L), __n - 1);
  return __f2;
}

// Samples cubemap `__cube` (0 for a plain cubemap) in the direction (x, y, z).
inline void sample_cube(const Object* __o, float __x, float __y, float __z, long __cube, double* __out) {
  float __st[3] = {0.0f, 0.0f, 0.0f};
  const int __face = cube_face(__x, __y, __z, &__st[0], &__st[1]);
  auto __face_base = [&](int __f) { return __o->__base + size_t(__cube * 6 + __f) * __o->__layer_bytes; };
  static const cudaTextureAddressMode __clamp[3] = {cudaAddressModeClamp, cudaAddressModeClamp, cudaAddressModeClamp};
  if (!__o->__td.seamlessCubemap) {
    sample_image(__o, __face_base(__face), 2, __st, __out, __o->__td.addressMode, true);
    return;
  }
  if (__o->__td.filterMode != cudaFilterModeLinear) {
    sample_image(__o, __face_base(__face), 2, __st, __out, __clamp, true);
    return;
  }
  const long __n = __o->__n[0];
  float __a[2];
  const long __i = linear_tap(__st[0] * (float)__n, &__a[0]);
  const long __j = linear_tap(__st[1] * (float)__n, &__a[1]);
  double __v[4][4];
  int __missing = -1;
  for (int __corner = 0; __corner < 4; ++__corner) {
    long __idx[2] = {__i + (__corner & 1), __j + (__corner >> 1)};
    const bool __in0 = __idx[0] >= 0 && __idx[0] < __n, __in1 = __idx[1] >= 0 && __idx[1] < __n;
    int __f = __face;
    if (!__in0 && !__in1) {
      __missing = __corner;
      continue;
    }
    if (!__in0 || !__in1) {
      // Far-away coordinates (huge or NaN) stay on the face, clamped.
      if (__idx[0] < -1 || __idx[0] > __n || __idx[1] < -1 || __idx[1] > __n) {
        __idx[0] = std::min(std::max(__idx[0], 0L), __n - 1);
        __idx[1] = std::min(std::max(__idx[1], 0L), __n - 1);
      } else {
        __f = cube_neighbor(__face, __idx[0], __idx[1], __n, &__idx[0], &__idx[1]);
      }
    }
    texel(__o, __face_base(__f), __idx, 2, __v[__corner]);
  }
  if (__missing >= 0)
    for (int __c = 0; __c < 4; ++__c)
      __v[__missing][__c] = ((float)__v[__missing ^ 1][__c] + (float)__v[__missing ^ 2][__c] +
                             (float)__v[__missing ^ 3][__c]) / 3.0f;
  float __acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int __corner = 0; __corner < 4; ++__corner) {
    const float __w = ((__corner & 1) ? __a[0] : 1.0f - __a[0]) * ((__corner >> 1) ? __a[1] : 1.0f - __a[1]);
    for (int __c = 0; __c < 4; ++__c) __acc[__c] += __w * (float)__v[__corner][__c];
  }
  for (int __c = 0; __c < 4; ++__c) __out[__c] = __acc[__c];
}

// The return types CUDA's texture fetches take: scalar and vector integer and float types.
template <class _Tp>
struct fetch_type {
  static constexpr int __n = 0;
};
#define CUDASHIM_TEX_RET(_Ty, _Cp, _Np) \
  template <>                           \
  struct fetch_type<_Ty> {              \
    using __comp = _Cp;                 \
    static constexpr int __n = _Np;     \
  };
#define CUDASHIM_TEX_RET_VEC(_Vp, _Cp) \
  CUDASHIM_TEX_RET(_Vp##1, _Cp, 1) CUDASHIM_TEX_RET(_Vp##2, _Cp, 2) CUDASHIM_TEX_RET(_Vp##4, _Cp, 4)
CUDASHIM_TEX_RET(char, char, 1)
CUDASHIM_TEX_RET(signed char, signed char, 1)
CUDASHIM_TEX_RET(unsigned char, unsigned char, 1)
CUDASHIM_TEX_RET(short, short, 1)
CUDASHIM_TEX_RET(unsigned short, unsigned short, 1)
CUDASHIM_TEX_RET(int, int, 1)
CUDASHIM_TEX_RET(unsigned int, unsigned int, 1)
CUDASHIM_TEX_RET(float, float, 1)
CUDASHIM_TEX_RET_VEC(char, signed char)
CUDASHIM_TEX_RET_VEC(uchar, unsigned char)
CUDASHIM_TEX_RET_VEC(short, short)
CUDASHIM_TEX_RET_VEC(ushort, unsigned short)
CUDASHIM_TEX_RET_VEC(int, int)
CUDASHIM_TEX_RET_VEC(uint, unsigned int)
CUDASHIM_TEX_RET_VEC(float, float)
#undef CUDASHIM_TEX_RET_VEC
#undef CUDASHIM_TEX_RET

template <class _Tp>
inline _Tp make_result(const double* __v) {
  static_assert(fetch_type<_Tp>::__n > 0,
                "cudashim: a texture fetch returns a CUDA scalar or vector type (char..uint, float, "
                "and their 1-, 2- and 4-component vectors)");
  using _Cp = typename fetch_type<_Tp>::__comp;
  constexpr int __n = fetch_type<_Tp>::__n;
  static_assert(sizeof(_Tp) == __n * sizeof(_Cp));
  _Cp __c[__n];
  for (int __k = 0; __k < __n; ++__k) __c[__k] = (_Cp)__v[__k];
  _Tp __r;
  memcpy(&__r, __c, sizeof __r);
  return __r;
}

// A fetch of the wrong kind (tex2D on a layered array, tex2DLayered on a plain one, ...) is
// undefined on a GPU: the run stops and says which call the texture takes.
inline void check_shape(const Object* __o, int __shape, const char* __fn) {
  if (__o->__linear_res)
    cudashim::fatal("cudashim: %s on a texture object over linear memory (cudaResourceTypeLinear is read "
                    "with tex1Dfetch only)", __fn);
  if (__o->__shape != __shape)
    cudashim::fatal("cudashim: %s on a texture object whose array is read with %s (a fetch of another kind "
                    "is undefined)", __fn, shape_fetch(__o->__shape));
}

template <class _Tp>
inline _Tp fetch(cudaTextureObject_t __t, int __dims, const float* __xyz, const char* __fn) {
  const Object* __o = lookup(__t, __fn);
  check_shape(__o, kPlain, __fn);
  double __v[4];
  sample(__o, __dims, __xyz, __v);
  return make_result<_Tp>(__v);
}

// The layer index after clamping (an unsigned integer, as PTX takes it).
inline long layer_index(const Object* __o, int __layer) {
  const unsigned long __l = (unsigned)__layer;
  return __l >= (unsigned long)__o->__layers ? __o->__layers - 1 : (long)__l;
}

template <class _Tp>
inline _Tp fetch_layered(cudaTextureObject_t __t, int __dims, const float* __xyz, int __layer, const char* __fn) {
  const Object* __o = lookup(__t, __fn);
  check_shape(__o, __dims == 1 ? kLayered1D : kLayered2D, __fn);
  double __v[4];
  sample_image(__o, __o->__base + size_t(layer_index(__o, __layer)) * __o->__layer_bytes, __dims, __xyz, __v,
               __o->__td.addressMode, __o->__td.normalizedCoords != 0);
  return make_result<_Tp>(__v);
}

template <class _Tp>
inline _Tp fetch_cube(cudaTextureObject_t __t, float __x, float __y, float __z, bool __layered, int __layer,
                      const char* __fn) {
  const Object* __o = lookup(__t, __fn);
  check_shape(__o, __layered ? kCubemapLayered : kCubemap, __fn);
  double __v[4];
  sample_cube(__o, __x, __y, __z, __layered ? layer_index(__o, __layer) : 0, __v);
  return make_result<_Tp>(__v);
}

}  // namespace tex
}  // namespace cudashim

#endif  // CUDASHIM_TEXTURE_OBJECT_H
