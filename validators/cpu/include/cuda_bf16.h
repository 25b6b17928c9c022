// cudashim: bfloat16 (__nv_bfloat16, __nv_bfloat162) on the host: the upper 16 bits of a float,
// converted with round-to-nearest-even; arithmetic in float, rounded back.
#pragma once
#include <cuda_fp16.h>

struct __nv_bfloat16_raw {
  unsigned short x;
};
struct __nv_bfloat162_raw {
  unsigned short x, y;
};

struct __attribute__((aligned(2))) __nv_bfloat16 {
  unsigned short x;
  static unsigned short from_float(float f) {
    unsigned int u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40);  // NaN stays NaN
    u += 0x7fffu + ((u >> 16) & 1u);
    return (unsigned short)(u >> 16);
  }
  __nv_bfloat16() = default;
  __nv_bfloat16(float f) : x(from_float(f)) {}
  __nv_bfloat16(double d) : x(from_float((float)d)) {}
  __nv_bfloat16(int i) : x(from_float((float)i)) {}
  __nv_bfloat16(const __nv_bfloat16_raw& r) : x(r.x) {}
  operator float() const {
    unsigned int u = (unsigned int)x << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
  }
  operator __nv_bfloat16_raw() const { return __nv_bfloat16_raw{x}; }
};

struct __attribute__((aligned(4))) __nv_bfloat162 {
  __nv_bfloat16 x, y;
  __nv_bfloat162() = default;
  __nv_bfloat162(const __nv_bfloat16& a, const __nv_bfloat16& b) : x(a), y(b) {}
  __nv_bfloat162(const __nv_bfloat162_raw& _Raw) : x(__nv_bfloat16_raw{_Raw.x}), y(__nv_bfloat16_raw{_Raw.y}) {}
  operator __nv_bfloat162_raw() const { return __nv_bfloat162_raw{x.x, y.x}; }
};
typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
inline float __bfloat162float(__nv_bfloat16 b) { return (float)b; }
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 b) { return b.x; }
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short u) { __nv_bfloat16 b; b.x = u; return b; }
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) { return __nv_bfloat162(a, b); }
inline __nv_bfloat162 __float2bfloat162_rn(float a) { return __nv_bfloat162(a, a); }
inline float2 __bfloat1622float2(__nv_bfloat162 h) { return make_float2((float)h.x, (float)h.y); }
inline __nv_bfloat16 __low2bfloat16(__nv_bfloat162 h) { return h.x; }
inline __nv_bfloat16 __high2bfloat16(__nv_bfloat162 h) { return h.y; }
inline __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) { return __nv_bfloat162(a, b); }
#define CUDASHIM_B_BIN(NAME, EXPR) \
  inline __nv_bfloat16 NAME(__nv_bfloat16 a, __nv_bfloat16 b) { float x = (float)a, y = (float)b; return __nv_bfloat16(EXPR); }
CUDASHIM_B_BIN(__hadd, x + y)
CUDASHIM_B_BIN(__hsub, x - y)
CUDASHIM_B_BIN(__hmul, x * y)
CUDASHIM_B_BIN(__hdiv, x / y)
CUDASHIM_B_BIN(__hmax, fmaxf(x, y))
CUDASHIM_B_BIN(__hmin, fminf(x, y))
inline __nv_bfloat16 __hfma(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c) { return __nv_bfloat16(fmaf(a, b, c)); }
inline __nv_bfloat16 operator+(const __nv_bfloat16& a, const __nv_bfloat16& b) { return __hadd(a, b); }
inline __nv_bfloat16 operator-(const __nv_bfloat16& a, const __nv_bfloat16& b) { return __hsub(a, b); }
inline __nv_bfloat16 operator*(const __nv_bfloat16& a, const __nv_bfloat16& b) { return __hmul(a, b); }
inline __nv_bfloat16 operator/(const __nv_bfloat16& a, const __nv_bfloat16& b) { return __hdiv(a, b); }
inline __nv_bfloat16& operator+=(__nv_bfloat16& a, const __nv_bfloat16& b) { return a = __hadd(a, b); }
inline __nv_bfloat162 __hadd2(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162(__hadd(a.x, b.x), __hadd(a.y, b.y)); }
inline __nv_bfloat162 __hmul2(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162(__hmul(a.x, b.x), __hmul(a.y, b.y)); }
inline __nv_bfloat162 operator+(const __nv_bfloat162& a, const __nv_bfloat162& b) { return __hadd2(a, b); }
inline __nv_bfloat16 atomicAdd(__nv_bfloat16* p, __nv_bfloat16 v) {
  return cudashim::atomic_update(p, [v](__nv_bfloat16 o) { return __hadd(o, v); });
}
inline __nv_bfloat162 atomicAdd(__nv_bfloat162* p, __nv_bfloat162 v) {
  return cudashim::atomic_update(p, [v](__nv_bfloat162 o) { return __hadd2(o, v); });
}
