// cudashim: texture-object fetches (tex1Dfetch, tex1D, tex2D, tex3D, tex1DLayered,
// tex2DLayered, texCubemap, texCubemapLayered and their Lod/Grad forms, returning the value or
// writing it through a pointer). Sampling rules: cudashim/texture_object.h.
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


// Layered and cubemap textures (arrays made with cudaArrayLayered / cudaArrayCubemap).
template <class _Tp>
inline _Tp tex1DLayered(cudaTextureObject_t __t, float __x, int __layer) {
  const float __c[3] = {__x, 0.0f, 0.0f};
  return cudashim::tex::fetch_layered<_Tp>(__t, 1, __c, __layer, "tex1DLayered");
}
template <class _Tp>
inline _Tp tex2DLayered(cudaTextureObject_t __t, float __x, float __y, int __layer) {
  const float __c[3] = {__x, __y, 0.0f};
  return cudashim::tex::fetch_layered<_Tp>(__t, 2, __c, __layer, "tex2DLayered");
}
template <class _Tp>
inline _Tp texCubemap(cudaTextureObject_t __t, float __x, float __y, float __z) {
  return cudashim::tex::fetch_cube<_Tp>(__t, __x, __y, __z, false, 0, "texCubemap");
}
template <class _Tp>
inline _Tp texCubemapLayered(cudaTextureObject_t __t, float __x, float __y, float __z, int __layer) {
  return cudashim::tex::fetch_cube<_Tp>(__t, __x, __y, __z, true, __layer, "texCubemapLayered");
}
template <class _Tp>
inline _Tp tex1DLayeredLod(cudaTextureObject_t __t, float __x, int __layer, float) {
  return tex1DLayered<_Tp>(__t, __x, __layer);
}
template <class _Tp>
inline _Tp tex2DLayeredLod(cudaTextureObject_t __t, float __x, float __y, int __layer, float) {
  return tex2DLayered<_Tp>(__t, __x, __y, __layer);
}
template <class _Tp>
inline _Tp texCubemapLod(cudaTextureObject_t __t, float __x, float __y, float __z, float) {
  return texCubemap<_Tp>(__t, __x, __y, __z);
}
template <class _Tp>
inline _Tp texCubemapLayeredLod(cudaTextureObject_t __t, float __x, float __y, float __z, int __layer, float) {
  return texCubemapLayered<_Tp>(__t, __x, __y, __z, __layer);
}
template <class _Tp>
inline _Tp tex1DLayeredGrad(cudaTextureObject_t __t, float __x, int __layer, float, float) {
  return tex1DLayered<_Tp>(__t, __x, __layer);
}
template <class _Tp>
inline _Tp tex2DLayeredGrad(cudaTextureObject_t __t, float __x, float __y, int __layer, float2, float2) {
  return tex2DLayered<_Tp>(__t, __x, __y, __layer);
}
template <class _Tp>
inline _Tp texCubemapGrad(cudaTextureObject_t __t, float __x, float __y, float __z, float4, float4) {
  return texCubemap<_Tp>(__t, __x, __y, __z);
}
template <class _Tp>
inline _Tp texCubemapLayeredGrad(cudaTextureObject_t __t, float __x, float __y, float __z, int __layer, float4,
                                 float4) {
  return texCubemapLayered<_Tp>(__t, __x, __y, __z, __layer);
}

template <class _Tp>
inline void tex1DLayered(_Tp* __r, cudaTextureObject_t __t, float __x, int __layer) {
  *__r = tex1DLayered<_Tp>(__t, __x, __layer);
}
template <class _Tp>
inline void tex2DLayered(_Tp* __r, cudaTextureObject_t __t, float __x, float __y, int __layer) {
  *__r = tex2DLayered<_Tp>(__t, __x, __y, __layer);
}
template <class _Tp>
inline void texCubemap(_Tp* __r, cudaTextureObject_t __t, float __x, float __y, float __z) {
  *__r = texCubemap<_Tp>(__t, __x, __y, __z);
}
template <class _Tp>
inline void texCubemapLayered(_Tp* __r, cudaTextureObject_t __t, float __x, float __y, float __z, int __layer) {
  *__r = texCubemapLayered<_Tp>(__t, __x, __y, __z, __layer);
}
template <class _Tp>
inline void tex1DLayeredLod(_Tp* __r, cudaTextureObject_t __t, float __x, int __layer, float) {
  *__r = tex1DLayered<_Tp>(__t, __x, __layer);
}
template <class _Tp>
inline void tex2DLayeredLod(_Tp* __r, cudaTextureObject_t __t, float __x, float __y, int __layer, float) {
  *__r = tex2DLayered<_Tp>(__t, __x, __y, __layer);
}
template <class _Tp>
inline void texCubemapLod(_Tp* __r, cudaTextureObject_t __t, float __x, float __y, float __z, float) {
  *__r = texCubemap<_Tp>(__t, __x, __y, __z);
}
template <class _Tp>
inline void texCubemapLayeredLod(_Tp* __r, cudaTextureObject_t __t, float __x, float __y, float __z, int __layer,
                                 float) {
  *__r = texCubemapLayered<_Tp>(__t, __x, __y, __z, __layer);
}
template <class _Tp>
inline void tex1DLayeredGrad(_Tp* __r, cudaTextureObject_t __t, float __x, int __layer, float, float) {
  *__r = tex1DLayered<_Tp>(__t, __x, __layer);
}
template <class _Tp>
inline void tex2DLayeredGrad(_Tp* __r, cudaTextureObject_t __t, float __x, float __y, int __layer, float2, float2) {
  *__r = tex2DLayered<_Tp>(__t, __x, __y, __layer);
}
template <class _Tp>
inline void texCubemapGrad(_Tp* __r, cudaTextureObject_t __t, float __x, float __y, float __z, float4, float4) {
  *__r = texCubemap<_Tp>(__t, __x, __y, __z);
}
template <class _Tp>
inline void texCubemapLayeredGrad(_Tp* __r, cudaTextureObject_t __t, float __x, float __y, float __z, int __layer,
                                  float4, float4) {
  *__r = texCubemapLayered<_Tp>(__t, __x, __y, __z, __layer);
}

#endif  // CUDASHIM_TEXTURE_INDIRECT_FUNCTIONS_H
