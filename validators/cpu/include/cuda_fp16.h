// cudashim: half precision (__half, __half2) on the host, stored as IEEE binary16 (_Float16).
// Arithmetic is done in float and rounded back, as CUDA's operators behave on most GPUs.
#pragma once
#include <cuda_runtime.h>

struct __half_raw {
  unsigned short x;
};
struct __half2_raw {
  unsigned short x, y;
};

struct __attribute__((aligned(2))) __half {
  _Float16 v;
  __half() = default;
  __half(float f) : v((_Float16)f) {}
  __half(double d) : v((_Float16)d) {}
  __half(int i) : v((_Float16)i) {}
  __half(unsigned int i) : v((_Float16)i) {}
  __half(short i) : v((_Float16)i) {}
  __half(unsigned short i) : v((_Float16)i) {}
  __half(long long i) : v((_Float16)i) {}
  __half(unsigned long long i) : v((_Float16)i) {}
  __half(_Float16 f) : v(f) {}
  __half(const __half_raw& r) { memcpy(&v, &r.x, 2); }
  operator float() const { return (float)v; }
  operator __half_raw() const {
    __half_raw r;
    memcpy(&r.x, &v, 2);
    return r;
  }
  __half& operator=(const __half_raw& r) {
    memcpy(&v, &r.x, 2);
    return *this;
  }
};

struct __attribute__((aligned(4))) __half2 {
  __half x, y;
  __half2() = default;
  __half2(const __half& a, const __half& b) : x(a), y(b) {}
  __half2(const __half2_raw& r) {
    memcpy(&x, &r.x, 2);
    memcpy(&y, &r.y, 2);
  }
};

typedef __half half;
typedef __half2 half2;

inline __half __float2half(float f) { return __half(f); }
inline __half __float2half_rn(float f) { return __half(f); }
inline __half __float2half_rz(float f) { return __half(f); }
inline __half __double2half(double d) { return __half(d); }
inline float __half2float(__half h) { return (float)h.v; }
inline __half __int2half_rn(int i) { return __half(i); }
inline __half __uint2half_rn(unsigned i) { return __half(i); }
inline int __half2int_rn(__half h) { return (int)nearbyintf((float)h.v); }
inline int __half2int_rz(__half h) { return (int)(float)h.v; }
inline unsigned short __half_as_ushort(__half h) { unsigned short r; memcpy(&r, &h, 2); return r; }
inline short __half_as_short(__half h) { short r; memcpy(&r, &h, 2); return r; }
inline __half __ushort_as_half(unsigned short u) { __half h; memcpy(&h, &u, 2); return h; }
inline __half __short_as_half(short u) { __half h; memcpy(&h, &u, 2); return h; }

#define CUDASHIM_H_BIN(NAME, EXPR) \
  inline __half NAME(__half a, __half b) { float x = (float)a.v, y = (float)b.v; return __half(EXPR); }
CUDASHIM_H_BIN(__hadd, x + y)
CUDASHIM_H_BIN(__hsub, x - y)
CUDASHIM_H_BIN(__hmul, x * y)
CUDASHIM_H_BIN(__hdiv, x / y)
CUDASHIM_H_BIN(__hmax, fmaxf(x, y))
CUDASHIM_H_BIN(__hmin, fminf(x, y))
CUDASHIM_H_BIN(__hadd_sat, fminf(fmaxf(x + y, 0.f), 1.f))
CUDASHIM_H_BIN(__hmul_sat, fminf(fmaxf(x * y, 0.f), 1.f))
inline __half __hfma(__half a, __half b, __half c) { return __half(fmaf((float)a.v, (float)b.v, (float)c.v)); }
inline __half __hneg(__half a) { return __half(-(float)a.v); }
inline __half __habs(__half a) { return __half(fabsf((float)a.v)); }
inline bool __heq(__half a, __half b) { return (float)a.v == (float)b.v; }
inline bool __hne(__half a, __half b) { return (float)a.v != (float)b.v; }
inline bool __hlt(__half a, __half b) { return (float)a.v < (float)b.v; }
inline bool __hle(__half a, __half b) { return (float)a.v <= (float)b.v; }
inline bool __hgt(__half a, __half b) { return (float)a.v > (float)b.v; }
inline bool __hge(__half a, __half b) { return (float)a.v >= (float)b.v; }
inline bool __hisnan(__half a) { return a.v != a.v; }
inline int __hisinf(__half a) { float f = (float)a.v; return std::isinf(f) ? (f > 0 ? 1 : -1) : 0; }
#define CUDASHIM_H_UN(NAME, EXPR) \
  inline __half NAME(__half a) { float x = (float)a.v; return __half(EXPR); }
CUDASHIM_H_UN(hsqrt, sqrtf(x))
CUDASHIM_H_UN(hrsqrt, 1.f / sqrtf(x))
CUDASHIM_H_UN(hrcp, 1.f / x)
CUDASHIM_H_UN(hexp, expf(x))
CUDASHIM_H_UN(hexp2, exp2f(x))
CUDASHIM_H_UN(hlog, logf(x))
CUDASHIM_H_UN(hlog2, log2f(x))
CUDASHIM_H_UN(hsin, sinf(x))
CUDASHIM_H_UN(hcos, cosf(x))
CUDASHIM_H_UN(htanh, tanhf(x))
CUDASHIM_H_UN(hfloor, floorf(x))
CUDASHIM_H_UN(hceil, ceilf(x))
CUDASHIM_H_UN(htrunc, truncf(x))
CUDASHIM_H_UN(hrint, rintf(x))

inline __half operator+(const __half& a, const __half& b) { return __hadd(a, b); }
inline __half operator-(const __half& a, const __half& b) { return __hsub(a, b); }
inline __half operator*(const __half& a, const __half& b) { return __hmul(a, b); }
inline __half operator/(const __half& a, const __half& b) { return __hdiv(a, b); }
inline __half operator-(const __half& a) { return __hneg(a); }
inline __half& operator+=(__half& a, const __half& b) { return a = __hadd(a, b); }
inline __half& operator-=(__half& a, const __half& b) { return a = __hsub(a, b); }
inline __half& operator*=(__half& a, const __half& b) { return a = __hmul(a, b); }
inline __half& operator/=(__half& a, const __half& b) { return a = __hdiv(a, b); }
inline bool operator==(const __half& a, const __half& b) { return __heq(a, b); }
inline bool operator!=(const __half& a, const __half& b) { return __hne(a, b); }
inline bool operator<(const __half& a, const __half& b) { return __hlt(a, b); }
inline bool operator<=(const __half& a, const __half& b) { return __hle(a, b); }
inline bool operator>(const __half& a, const __half& b) { return __hgt(a, b); }
inline bool operator>=(const __half& a, const __half& b) { return __hge(a, b); }

inline __half2 __halves2half2(__half a, __half b) { return __half2(a, b); }
inline __half2 __half2half2(__half a) { return __half2(a, a); }
inline __half2 __float2half2_rn(float f) { return __half2(__half(f), __half(f)); }
inline __half2 __floats2half2_rn(float a, float b) { return __half2(__half(a), __half(b)); }
inline float2 __half22float2(__half2 h) { return make_float2((float)h.x.v, (float)h.y.v); }
inline __half2 __float22half2_rn(float2 f) { return __half2(__half(f.x), __half(f.y)); }
inline __half __low2half(__half2 h) { return h.x; }
inline __half __high2half(__half2 h) { return h.y; }
inline float __low2float(__half2 h) { return (float)h.x.v; }
inline float __high2float(__half2 h) { return (float)h.y.v; }
inline __half2 __lows2half2(__half2 a, __half2 b) { return __half2(a.x, b.x); }
inline __half2 __highs2half2(__half2 a, __half2 b) { return __half2(a.y, b.y); }
#define CUDASHIM_H2_BIN(NAME, ONE) \
  inline __half2 NAME(__half2 a, __half2 b) { return __half2(ONE(a.x, b.x), ONE(a.y, b.y)); }
CUDASHIM_H2_BIN(__hadd2, __hadd)
CUDASHIM_H2_BIN(__hsub2, __hsub)
CUDASHIM_H2_BIN(__hmul2, __hmul)
CUDASHIM_H2_BIN(__h2div, __hdiv)
CUDASHIM_H2_BIN(__hmax2, __hmax)
CUDASHIM_H2_BIN(__hmin2, __hmin)
inline __half2 __hfma2(__half2 a, __half2 b, __half2 c) { return __half2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); }
inline __half2 __hneg2(__half2 a) { return __half2(__hneg(a.x), __hneg(a.y)); }
inline __half2 __habs2(__half2 a) { return __half2(__habs(a.x), __habs(a.y)); }
inline __half2 h2sqrt(__half2 a) { return __half2(hsqrt(a.x), hsqrt(a.y)); }
inline __half2 h2exp(__half2 a) { return __half2(hexp(a.x), hexp(a.y)); }
inline __half2 operator+(const __half2& a, const __half2& b) { return __hadd2(a, b); }
inline __half2 operator-(const __half2& a, const __half2& b) { return __hsub2(a, b); }
inline __half2 operator*(const __half2& a, const __half2& b) { return __hmul2(a, b); }
inline __half2 operator/(const __half2& a, const __half2& b) { return __h2div(a, b); }
inline __half2& operator+=(__half2& a, const __half2& b) { return a = __hadd2(a, b); }
inline __half2& operator*=(__half2& a, const __half2& b) { return a = __hmul2(a, b); }

inline __half atomicAdd(__half* p, __half v) { return cudashim::atomic_update(p, [v](__half o) { return __hadd(o, v); }); }
inline __half2 atomicAdd(__half2* p, __half2 v) { return cudashim::atomic_update(p, [v](__half2 o) { return __hadd2(o, v); }); }
