// cudashim: texture-object fetches (tex1Dfetch, tex1D, tex2D, tex3D and their Lod/Grad forms,
// returning the value or writing it through a pointer). Sampling rules: cudashim/texture_object.h.
// The arrays are not mipmapped, so a level of detail or gradient changes nothing (as on a GPU
// for a texture without mipmaps). Also pulls in the host API (cudashim/texture_runtime.h).
#ifndef CUDASHIM_TEXTURE_INDIRECT_FUNCTIONS_H
#define CUDASHIM_TEXTURE_INDIRECT_FUNCTIONS_H

#include <cudashim/texture_object.h>
#include <cudashim/texture_runtime.h>

// Linear memory, integer index, no filtering or addressing: outside [0, N) every component is 0.
template <class _Tp>
inline _Tp tex1Dfetch(cudaTextureObject_t __t, int __x) {
  using namespace cudashim::tex;
  const Object* __o = lookup(__t, "tex1Dfetch");
  double __v[4] = {0.0, 0.0, 0.0, 0.0};
  if (__x >= 0 && __x < __o->__n[0]) decode(__o, __o->__base + size_t(__x) * __o->__elem, __v);
  return make_result<_Tp>(__v);
}
template <class _Tp>
inline _Tp tex1D(cudaTextureObject_t __t, float __x) {
  const float __c[3] = {__x, 0.0f, 0.0f};
  return cudashim::tex::fetch<_Tp>(__t, 1, __c, "tex1D");
}
template <class _Tp>
inline _Tp tex2D(cudaTextureObject_t __t, float __x, float __y) {
  const float __c[3] = {__x, __y, 0.0f};
  return cudashim::tex::fetch<_Tp>(__t, 2, __c, "tex2D");
}
template <class _Tp>
inline _Tp tex3D(cudaTextureObject_t __t, float __x, float __y, float __z) {
  const float __c[3] = {__x, __y, __z};
  return cudashim::tex::fetch<_Tp>(__t, 3, __c, "tex3D");
}
template <class _Tp>
inline _Tp tex1DLod(cudaTextureObject_t __t, float __x, float) { return tex1D<_Tp>(__t, __x); }
template <class _Tp>
inline _Tp tex2DLod(cudaTextureObject_t __t, float __x, float __y, float) { return tex2D<_Tp>(__t, __x, __y); }
template <class _Tp>
inline _Tp tex3DLod(cudaTextureObject_t __t, float __x, float __y, float __z, float) {
  return tex3D<_Tp>(__t, __x, __y, __z);
}
template <class _Tp>
inline _Tp tex1DGrad(cudaTextureObject_t __t, float __x, float, float) { return tex1D<_Tp>(__t, __x); }
template <class _Tp>
inline _Tp tex2DGrad(cudaTextureObject_t __t, float __x, float __y, float2, float2) { return tex2D<_Tp>(__t, __x, __y); }
template <class _Tp>
inline _Tp tex3DGrad(cudaTextureObject_t __t, float __x, float __y, float __z, float4, float4) {
  return tex3D<_Tp>(__t, __x, __y, __z);
}

// The forms that write through a pointer.
template <class _Tp>
inline void tex1Dfetch(_Tp* __r, cudaTextureObject_t __t, int __x) { *__r = tex1Dfetch<_Tp>(__t, __x); }
template <class _Tp>
inline void tex1D(_Tp* __r, cudaTextureObject_t __t, float __x) { *__r = tex1D<_Tp>(__t, __x); }
template <class _Tp>
inline void tex2D(_Tp* __r, cudaTextureObject_t __t, float __x, float __y) { *__r = tex2D<_Tp>(__t, __x, __y); }
template <class _Tp>
inline void tex3D(_Tp* __r, cudaTextureObject_t __t, float __x, float __y, float __z) {
  *__r = tex3D<_Tp>(__t, __x, __y, __z);
}
template <class _Tp>
inline void tex2DLod(_Tp* __r, cudaTextureObject_t __t, float __x, float __y, float) {
  *__r = tex2D<_Tp>(__t, __x, __y);
}

#endif  // CUDASHIM_TEXTURE_INDIRECT_FUNCTIONS_H
