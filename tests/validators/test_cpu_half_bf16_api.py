"""cuda_fp16.h and cuda_bf16.h on the CPU shim: every function of CUDA 13's half and bfloat16
API, called in kernels of one program the `cpu` backend builds and runs (built once per module),
compared here with references computed in Python.

- Unary functions, conversions to integers and the pair helpers run on all 65536 bit patterns of
  each type; binary functions on special values crossed with each other and on random pairs;
  fma on random triples and on products that land exactly on a rounding midpoint, nudged by a
  tiny addend either way; conversions from float, double and the integer types on every
  representable value, the midpoints between them and their neighbours, and values past both
  ends of the range.
- References: rounding of a double (exact) to either format in any mode by scaling to the last
  place and numpy's rint/floor/ceil/trunc; exact integer arithmetic for 64-bit integers and fma;
  numpy's float64 math rounded once (transcendental functions may differ by one unit in the last
  place, as libm and GPU implementations do).
- The same program compiles with the real nvcc (`-arch=sm_90 -c`) when it is installed, so the
  names and signatures are CUDA 13's; every function the real headers declare appears in it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from schemas import Program
from validators.backends.cpu import CpuBackend
from validators.build_cache import BuildCache
from validators.cpu.diagnostics import gpu_feature_from_errors, half_api_names
from validators.sandbox import Limits, run_sandboxed

pytestmark = [
    pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed"),
    # NaN payloads between float widths
    pytest.mark.filterwarnings("ignore:invalid value encountered in cast:RuntimeWarning"),
]

PROGRAM = r"""
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

typedef unsigned short u16;
typedef long long i64;

static std::vector<char> slurp(const char* name) {
  char path[256];
  snprintf(path, sizeof path, "data/%s.bin", name);
  FILE* f = fopen(path, "rb");
  if (!f) { fprintf(stderr, "cannot open %s\n", path); exit(1); }
  fseek(f, 0, SEEK_END);
  std::vector<char> data(ftell(f));
  fseek(f, 0, SEEK_SET);
  if (fread(data.data(), 1, data.size(), f) != data.size()) exit(1);
  fclose(f);
  return data;
}
template <class T> static T* upload(const char* name, int* count) {
  std::vector<char> host = slurp(name);
  T* d;
  cudaMalloc(&d, host.size());
  cudaMemcpy(d, host.data(), host.size(), cudaMemcpyHostToDevice);
  if (count) *count = (int)(host.size() / sizeof(T));
  return d;
}
template <class T> static T* alloc(size_t n) {
  T* d;
  cudaMalloc(&d, n * sizeof(T));
  cudaMemset(d, 0, n * sizeof(T));
  return d;
}
template <class T> static void dump(const char* kind, const char* type, const T* d, size_t n) {
  std::vector<T> host(n);
  cudaMemcpy(host.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost);
  char path[256];
  snprintf(path, sizeof path, "data/%s_%s.bin", kind, type);
  FILE* f = fopen(path, "wb");
  fwrite(host.data(), sizeof(T), n, f);
  fclose(f);
  cudaFree((void*)d);
}

// What differs between the two types; everything else is called by the same (overloaded) name.
template <class T> struct F;
template <> struct F<__half> {
  typedef __half2 T2;
  static __device__ u16 u(const __half a) { return __half_as_ushort(a); }
  static __device__ __half h(const u16 b) { return __ushort_as_half(b); }
  static __device__ short s(const __half a) { return __half_as_short(a); }
  static __device__ __half fs(const short b) { return __short_as_half(b); }
  static __device__ float tof(const __half a) { return __half2float(a); }
  static __device__ float2 tof2(const __half2 a) { return __half22float2(a); }
  static __device__ __half2 pair(const __half a, const __half b) { return make_half2(a, b); }
  static __device__ __half2 halves(const __half a, const __half b) { return __halves2half2(a, b); }
  static __device__ __half2 dup(const __half a) { return __half2half2(a); }
  static __device__ __half low(const __half2 p) { return __low2half(p); }
  static __device__ __half high(const __half2 p) { return __high2half(p); }
  static __device__ __half2 low2(const __half2 p) { return __low2half2(p); }
  static __device__ __half2 high2(const __half2 p) { return __high2half2(p); }
  static __device__ __half2 lows(const __half2 p, const __half2 q) { return __lows2half2(p, q); }
  static __device__ __half2 highs(const __half2 p, const __half2 q) { return __highs2half2(p, q); }
  static __device__ u16 other(const __half a) { return __bfloat16_as_ushort(__nv_bfloat16(a)); }
  static __device__ u16 rawtrip(const __half a) { __half_raw r = a; __half b(r); return u(b); }
  static __device__ __half2 rawtrip2(const __half2 p) { __half2_raw r = p; __half2 q(r); return q; }
  static __device__ void to_ints(const __half a, i64* o) {
    o[0] = __half2int_rn(a); o[1] = __half2int_rz(a); o[2] = __half2int_rd(a); o[3] = __half2int_ru(a);
    o[4] = __half2short_rn(a); o[5] = __half2short_rz(a); o[6] = __half2short_rd(a); o[7] = __half2short_ru(a);
    o[8] = __half2ll_rn(a); o[9] = __half2ll_rz(a); o[10] = __half2ll_rd(a); o[11] = __half2ll_ru(a);
    o[12] = __half2uint_rn(a); o[13] = __half2uint_rz(a); o[14] = __half2uint_rd(a); o[15] = __half2uint_ru(a);
    o[16] = __half2ushort_rn(a); o[17] = __half2ushort_rz(a); o[18] = __half2ushort_rd(a); o[19] = __half2ushort_ru(a);
    o[20] = (i64)__half2ull_rn(a); o[21] = (i64)__half2ull_rz(a); o[22] = (i64)__half2ull_rd(a); o[23] = (i64)__half2ull_ru(a);
    o[24] = __half2char_rz(a); o[25] = __half2uchar_rz(a);
  }
  static __device__ void from_float(const float f, u16* o) {
    o[0] = u(__float2half(f)); o[1] = u(__float2half_rn(f)); o[2] = u(__float2half_rz(f));
    o[3] = u(__float2half_rd(f)); o[4] = u(__float2half_ru(f)); o[5] = u(__half(f));
    __half2 p = __float2half2_rn(f); o[6] = u(p.x); o[7] = u(p.y);
    p = __floats2half2_rn(f, -f); o[8] = u(p.x); o[9] = u(p.y);
    p = __float22half2_rn(make_float2(-f, f)); o[10] = u(p.x); o[11] = u(p.y);
  }
  static __device__ void from_double(const double d, u16* o) { o[0] = u(__double2half(d)); o[1] = u(__half(d)); }
  static __device__ void from_ints(const i64 v, u16* o) {
    const int vi = (int)v; const unsigned vu = (unsigned)v; const short vs = (short)v;
    const unsigned short vus = (unsigned short)v; const unsigned long long vull = (unsigned long long)v;
    o[0] = u(__int2half_rn(vi)); o[1] = u(__int2half_rz(vi)); o[2] = u(__int2half_rd(vi)); o[3] = u(__int2half_ru(vi));
    o[4] = u(__uint2half_rn(vu)); o[5] = u(__uint2half_rz(vu)); o[6] = u(__uint2half_rd(vu)); o[7] = u(__uint2half_ru(vu));
    o[8] = u(__short2half_rn(vs)); o[9] = u(__short2half_rz(vs)); o[10] = u(__short2half_rd(vs)); o[11] = u(__short2half_ru(vs));
    o[12] = u(__ushort2half_rn(vus)); o[13] = u(__ushort2half_rz(vus)); o[14] = u(__ushort2half_rd(vus)); o[15] = u(__ushort2half_ru(vus));
    o[16] = u(__ll2half_rn(v)); o[17] = u(__ll2half_rz(v)); o[18] = u(__ll2half_rd(v)); o[19] = u(__ll2half_ru(v));
    o[20] = u(__ull2half_rn(vull)); o[21] = u(__ull2half_rz(vull)); o[22] = u(__ull2half_rd(vull)); o[23] = u(__ull2half_ru(vull));
    o[24] = u(__half(vi)); o[25] = u(__half(vu)); o[26] = u(__half(vs)); o[27] = u(__half(vus));
    o[28] = u(__half(v)); o[29] = u(__half(vull)); o[30] = u(__half((long)v)); o[31] = u(__half((unsigned long)v));
  }
};
template <> struct F<__nv_bfloat16> {
  typedef __nv_bfloat162 T2;
  static __device__ u16 u(const __nv_bfloat16 a) { return __bfloat16_as_ushort(a); }
  static __device__ __nv_bfloat16 h(const u16 b) { return __ushort_as_bfloat16(b); }
  static __device__ short s(const __nv_bfloat16 a) { return __bfloat16_as_short(a); }
  static __device__ __nv_bfloat16 fs(const short b) { return __short_as_bfloat16(b); }
  static __device__ float tof(const __nv_bfloat16 a) { return __bfloat162float(a); }
  static __device__ float2 tof2(const __nv_bfloat162 a) { return __bfloat1622float2(a); }
  static __device__ __nv_bfloat162 pair(const __nv_bfloat16 a, const __nv_bfloat16 b) { return make_bfloat162(a, b); }
  static __device__ __nv_bfloat162 halves(const __nv_bfloat16 a, const __nv_bfloat16 b) { return __halves2bfloat162(a, b); }
  static __device__ __nv_bfloat162 dup(const __nv_bfloat16 a) { return __bfloat162bfloat162(a); }
  static __device__ __nv_bfloat16 low(const __nv_bfloat162 p) { return __low2bfloat16(p); }
  static __device__ __nv_bfloat16 high(const __nv_bfloat162 p) { return __high2bfloat16(p); }
  static __device__ __nv_bfloat162 low2(const __nv_bfloat162 p) { return __low2bfloat162(p); }
  static __device__ __nv_bfloat162 high2(const __nv_bfloat162 p) { return __high2bfloat162(p); }
  static __device__ __nv_bfloat162 lows(const __nv_bfloat162 p, const __nv_bfloat162 q) { return __lows2bfloat162(p, q); }
  static __device__ __nv_bfloat162 highs(const __nv_bfloat162 p, const __nv_bfloat162 q) { return __highs2bfloat162(p, q); }
  static __device__ u16 other(const __nv_bfloat16 a) { return __half_as_ushort(__half(a)); }
  static __device__ u16 rawtrip(const __nv_bfloat16 a) { __nv_bfloat16_raw r = a; __nv_bfloat16 b(r); return u(b); }
  static __device__ __nv_bfloat162 rawtrip2(const __nv_bfloat162 p) { __nv_bfloat162_raw r = p; __nv_bfloat162 q(r); return q; }
  static __device__ void to_ints(const __nv_bfloat16 a, i64* o) {
    o[0] = __bfloat162int_rn(a); o[1] = __bfloat162int_rz(a); o[2] = __bfloat162int_rd(a); o[3] = __bfloat162int_ru(a);
    o[4] = __bfloat162short_rn(a); o[5] = __bfloat162short_rz(a); o[6] = __bfloat162short_rd(a); o[7] = __bfloat162short_ru(a);
    o[8] = __bfloat162ll_rn(a); o[9] = __bfloat162ll_rz(a); o[10] = __bfloat162ll_rd(a); o[11] = __bfloat162ll_ru(a);
    o[12] = __bfloat162uint_rn(a); o[13] = __bfloat162uint_rz(a); o[14] = __bfloat162uint_rd(a); o[15] = __bfloat162uint_ru(a);
    o[16] = __bfloat162ushort_rn(a); o[17] = __bfloat162ushort_rz(a); o[18] = __bfloat162ushort_rd(a); o[19] = __bfloat162ushort_ru(a);
    o[20] = (i64)__bfloat162ull_rn(a); o[21] = (i64)__bfloat162ull_rz(a); o[22] = (i64)__bfloat162ull_rd(a); o[23] = (i64)__bfloat162ull_ru(a);
    o[24] = __bfloat162char_rz(a); o[25] = __bfloat162uchar_rz(a);
  }
  static __device__ void from_float(const float f, u16* o) {
    o[0] = u(__float2bfloat16(f)); o[1] = u(__float2bfloat16_rn(f)); o[2] = u(__float2bfloat16_rz(f));
    o[3] = u(__float2bfloat16_rd(f)); o[4] = u(__float2bfloat16_ru(f)); o[5] = u(__nv_bfloat16(f));
    __nv_bfloat162 p = __float2bfloat162_rn(f); o[6] = u(p.x); o[7] = u(p.y);
    p = __floats2bfloat162_rn(f, -f); o[8] = u(p.x); o[9] = u(p.y);
    p = __float22bfloat162_rn(make_float2(-f, f)); o[10] = u(p.x); o[11] = u(p.y);
  }
  static __device__ void from_double(const double d, u16* o) { o[0] = u(__double2bfloat16(d)); o[1] = u(__nv_bfloat16(d)); }
  static __device__ void from_ints(const i64 v, u16* o) {
    const int vi = (int)v; const unsigned vu = (unsigned)v; const short vs = (short)v;
    const unsigned short vus = (unsigned short)v; const unsigned long long vull = (unsigned long long)v;
    o[0] = u(__int2bfloat16_rn(vi)); o[1] = u(__int2bfloat16_rz(vi)); o[2] = u(__int2bfloat16_rd(vi)); o[3] = u(__int2bfloat16_ru(vi));
    o[4] = u(__uint2bfloat16_rn(vu)); o[5] = u(__uint2bfloat16_rz(vu)); o[6] = u(__uint2bfloat16_rd(vu)); o[7] = u(__uint2bfloat16_ru(vu));
    o[8] = u(__short2bfloat16_rn(vs)); o[9] = u(__short2bfloat16_rz(vs)); o[10] = u(__short2bfloat16_rd(vs)); o[11] = u(__short2bfloat16_ru(vs));
    o[12] = u(__ushort2bfloat16_rn(vus)); o[13] = u(__ushort2bfloat16_rz(vus)); o[14] = u(__ushort2bfloat16_rd(vus)); o[15] = u(__ushort2bfloat16_ru(vus));
    o[16] = u(__ll2bfloat16_rn(v)); o[17] = u(__ll2bfloat16_rz(v)); o[18] = u(__ll2bfloat16_rd(v)); o[19] = u(__ll2bfloat16_ru(v));
    o[20] = u(__ull2bfloat16_rn(vull)); o[21] = u(__ull2bfloat16_rz(vull)); o[22] = u(__ull2bfloat16_rd(vull)); o[23] = u(__ull2bfloat16_ru(vull));
    o[24] = u(__nv_bfloat16(vi)); o[25] = u(__nv_bfloat16(vu)); o[26] = u(__nv_bfloat16(vs)); o[27] = u(__nv_bfloat16(vus));
    o[28] = u(__nv_bfloat16(v)); o[29] = u(__nv_bfloat16(vull)); o[30] = u(__nv_bfloat16((long)v)); o[31] = u(__nv_bfloat16((unsigned long)v));
  }
};

#define LANES(e) { const T2 r_ = (e); o[c++] = f::u(r_.x); o[c++] = f::u(r_.y); }
#define NU 102
#define NI 37
#define NF 6
// Every bit pattern i; g is pattern j = (40503 i + 1) mod 2^16, the pair's other lane.
template <class T> __global__ void unary(u16* o16, i64* oi, float* of) {
  typedef F<T> f;
  typedef typename f::T2 T2;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= 65536) return;
  const int j = (i * 40503 + 1) & 0xFFFF;
  const T a = f::h((u16)i), g = f::h((u16)j);
  u16* o = o16 + (size_t)i * NU;
  int c = 0;
  o[c++] = f::u(__hneg(a)); o[c++] = f::u(__habs(a)); o[c++] = f::u(hsqrt(a)); o[c++] = f::u(hrsqrt(a));
  o[c++] = f::u(hrcp(a)); o[c++] = f::u(hexp(a)); o[c++] = f::u(hexp2(a)); o[c++] = f::u(hexp10(a));
  o[c++] = f::u(hlog(a)); o[c++] = f::u(hlog2(a)); o[c++] = f::u(hlog10(a)); o[c++] = f::u(hsin(a));
  o[c++] = f::u(hcos(a)); o[c++] = f::u(htanh(a)); o[c++] = f::u(htanh_approx(a)); o[c++] = f::u(hfloor(a));
  o[c++] = f::u(hceil(a)); o[c++] = f::u(htrunc(a)); o[c++] = f::u(hrint(a)); o[c++] = f::u(-a);
  o[c++] = f::u(+a);
  { T t = a; o[c++] = f::u(++t); }
  { T t = a; t++; o[c++] = f::u(t); }
  { T t = a; o[c++] = f::u(--t); }
  { T t = a; t--; o[c++] = f::u(t); }
  o[c++] = f::other(a);
  o[c++] = __hisnan(a);
  o[c++] = (u16)(short)__hisinf(a);
  o[c++] = (bool)a;
  o[c++] = f::u(f::fs(f::s(a)));
  o[c++] = f::rawtrip(a);
  { T t = a; o[c++] = f::u(t++); }
  const T2 p = f::pair(a, g);
  LANES(__hneg2(p)) LANES(__habs2(p)) LANES(h2sqrt(p)) LANES(h2rsqrt(p))
  LANES(h2rcp(p)) LANES(h2exp(p)) LANES(h2exp2(p)) LANES(h2exp10(p))
  LANES(h2log(p)) LANES(h2log2(p)) LANES(h2log10(p)) LANES(h2sin(p))
  LANES(h2cos(p)) LANES(h2tanh(p)) LANES(h2tanh_approx(p)) LANES(h2floor(p))
  LANES(h2ceil(p)) LANES(h2trunc(p)) LANES(h2rint(p)) LANES(-p)
  LANES(+p)
  { T2 t = p; LANES(++t) }
  { T2 t = p; t++; LANES(t) }
  { T2 t = p; LANES(--t) }
  { T2 t = p; t--; LANES(t) }
  LANES(__hisnan2(p))
  const T2 q = f::pair(g, a);
  o[c++] = f::u(f::low(p)); o[c++] = f::u(f::high(p));
  LANES(f::low2(p)) LANES(f::high2(p)) LANES(__lowhigh2highlow(p)) LANES(f::lows(p, q))
  LANES(f::highs(p, q)) LANES(f::halves(g, a)) LANES(f::dup(a)) LANES(f::rawtrip2(p))
  if (c != NU) printf("unary: %d columns\n", c);
  i64* w = oi + (size_t)i * NI;
  f::to_ints(a, w);
  w[26] = (signed char)a; w[27] = (unsigned char)a; w[28] = (char)a; w[29] = (short)a;
  w[30] = (unsigned short)a; w[31] = (int)a; w[32] = (unsigned int)a; w[33] = (long)a;
  w[34] = (i64)(unsigned long)a; w[35] = (long long)a; w[36] = (i64)(unsigned long long)a;
  float* x = of + (size_t)i * NF;
  const float2 ff = f::tof2(p);
  x[0] = f::tof(a); x[1] = __low2float(p); x[2] = __high2float(p); x[3] = ff.x; x[4] = ff.y; x[5] = (float)a;
}

#define NB 90
#define NB32 14
// Pairs (x, y); pair forms get p = (x, y) and q = (y, x).
template <class T> __global__ void binary(const u16* ab, const u16* bb, int n, u16* o16, unsigned* o32) {
  typedef F<T> f;
  typedef typename f::T2 T2;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const T x = f::h(ab[i]), y = f::h(bb[i]);
  u16* o = o16 + (size_t)i * NB;
  int c = 0;
  o[c++] = f::u(__hadd(x, y)); o[c++] = f::u(__hsub(x, y)); o[c++] = f::u(__hmul(x, y)); o[c++] = f::u(__hdiv(x, y));
  o[c++] = f::u(__hadd_rn(x, y)); o[c++] = f::u(__hsub_rn(x, y)); o[c++] = f::u(__hmul_rn(x, y));
  o[c++] = f::u(__hadd_sat(x, y)); o[c++] = f::u(__hsub_sat(x, y)); o[c++] = f::u(__hmul_sat(x, y));
  o[c++] = f::u(__hmax(x, y)); o[c++] = f::u(__hmin(x, y)); o[c++] = f::u(__hmax_nan(x, y)); o[c++] = f::u(__hmin_nan(x, y));
  o[c++] = f::u(x + y); o[c++] = f::u(x - y); o[c++] = f::u(x * y); o[c++] = f::u(x / y);
  { T t = x; t += y; o[c++] = f::u(t); }
  { T t = x; t -= y; o[c++] = f::u(t); }
  { T t = x; t *= y; o[c++] = f::u(t); }
  { T t = x; t /= y; o[c++] = f::u(t); }
  const T2 p = f::pair(x, y), q = f::pair(y, x);
  LANES(__hadd2(p, q)) LANES(__hsub2(p, q)) LANES(__hmul2(p, q)) LANES(__h2div(p, q))
  LANES(__hadd2_rn(p, q)) LANES(__hsub2_rn(p, q)) LANES(__hmul2_rn(p, q))
  LANES(__hadd2_sat(p, q)) LANES(__hsub2_sat(p, q)) LANES(__hmul2_sat(p, q))
  LANES(__hmax2(p, q)) LANES(__hmin2(p, q)) LANES(__hmax2_nan(p, q)) LANES(__hmin2_nan(p, q))
  LANES(p + q) LANES(p - q) LANES(p * q) LANES(p / q)
  { T2 t = p; t += q; LANES(t) }
  { T2 t = p; t -= q; LANES(t) }
  { T2 t = p; t *= q; LANES(t) }
  { T2 t = p; t /= q; LANES(t) }
  LANES(__heq2(p, q)) LANES(__hne2(p, q)) LANES(__hlt2(p, q)) LANES(__hle2(p, q))
  LANES(__hgt2(p, q)) LANES(__hge2(p, q)) LANES(__hequ2(p, q)) LANES(__hneu2(p, q))
  LANES(__hltu2(p, q)) LANES(__hleu2(p, q)) LANES(__hgtu2(p, q)) LANES(__hgeu2(p, q))
  if (c != NB) printf("binary: %d columns\n", c);
  unsigned* w = o32 + (size_t)i * NB32;
  const bool s[18] = {__heq(x, y), __hne(x, y), __hlt(x, y), __hle(x, y), __hgt(x, y), __hge(x, y),
                      __hequ(x, y), __hneu(x, y), __hltu(x, y), __hleu(x, y), __hgtu(x, y), __hgeu(x, y),
                      x == y, x != y, x < y, x <= y, x > y, x >= y};
  const bool b[18] = {__hbeq2(p, q), __hbne2(p, q), __hblt2(p, q), __hble2(p, q), __hbgt2(p, q), __hbge2(p, q),
                      __hbequ2(p, q), __hbneu2(p, q), __hbltu2(p, q), __hbleu2(p, q), __hbgtu2(p, q), __hbgeu2(p, q),
                      p == q, p != q, p < q, p <= q, p > q, p >= q};
  w[0] = 0; w[1] = 0;
  for (int k = 0; k < 18; k++) { w[0] |= (unsigned)s[k] << k; w[1] |= (unsigned)b[k] << k; }
  w[2] = __heq2_mask(p, q); w[3] = __hne2_mask(p, q); w[4] = __hlt2_mask(p, q); w[5] = __hle2_mask(p, q);
  w[6] = __hgt2_mask(p, q); w[7] = __hge2_mask(p, q); w[8] = __hequ2_mask(p, q); w[9] = __hneu2_mask(p, q);
  w[10] = __hltu2_mask(p, q); w[11] = __hleu2_mask(p, q); w[12] = __hgtu2_mask(p, q); w[13] = __hgeu2_mask(p, q);
}

#define NT 11
// Triples (x, y, z); pair forms get p = (x, y), q = (y, z), r = (z, x).
template <class T> __global__ void ternary(const u16* ab, const u16* bb, const u16* cb, int n, u16* o16) {
  typedef F<T> f;
  typedef typename f::T2 T2;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const T x = f::h(ab[i]), y = f::h(bb[i]), z = f::h(cb[i]);
  u16* o = o16 + (size_t)i * NT;
  int c = 0;
  o[c++] = f::u(__hfma(x, y, z)); o[c++] = f::u(__hfma_sat(x, y, z)); o[c++] = f::u(__hfma_relu(x, y, z));
  const T2 p = f::pair(x, y), q = f::pair(y, z), r = f::pair(z, x);
  LANES(__hfma2(p, q, r)) LANES(__hfma2_sat(p, q, r)) LANES(__hfma2_relu(p, q, r)) LANES(__hcmadd(p, q, r))
}

#define NW 36
// One warp: cache-hinted loads and stores, shuffles, atomicAdd.
template <class T> __global__ void warp(const T* src, const typename F<T>::T2* src2, u16* o16, T* dst,
                                       typename F<T>::T2* dst2, T* acc, typename F<T>::T2* acc2) {
  typedef F<T> f;
  typedef typename f::T2 T2;
  const int l = threadIdx.x;
  const unsigned full = 0xffffffffu;
  u16* o = o16 + l * NW;
  int c = 0;
  o[c++] = f::u(__ldg(src + l)); o[c++] = f::u(__ldcg(src + l)); o[c++] = f::u(__ldca(src + l));
  o[c++] = f::u(__ldcs(src + l)); o[c++] = f::u(__ldlu(src + l)); o[c++] = f::u(__ldcv(src + l));
  LANES(__ldg(src2 + l)) LANES(__ldcg(src2 + l)) LANES(__ldca(src2 + l))
  LANES(__ldcs(src2 + l)) LANES(__ldlu(src2 + l)) LANES(__ldcv(src2 + l))
  const T v = src[l];
  const T2 pv = src2[l];
  __stcg(dst + 5 * l, v); __stcs(dst + 5 * l + 1, v); __stwb(dst + 5 * l + 2, v); __stwt(dst + 5 * l + 3, v);
  __stcg(dst + 5 * l + 4, 1.5f);
  __stcg(dst2 + 4 * l, pv); __stcs(dst2 + 4 * l + 1, pv); __stwb(dst2 + 4 * l + 2, pv); __stwt(dst2 + 4 * l + 3, pv);
  o[c++] = f::u(__shfl_sync(full, v, (l + 5) & 31)); o[c++] = f::u(__shfl_up_sync(full, v, 3));
  o[c++] = f::u(__shfl_down_sync(full, v, 2)); o[c++] = f::u(__shfl_xor_sync(full, v, 7));
  o[c++] = f::u(__shfl_xor_sync(full, v, 1, 16)); o[c++] = f::u(__shfl_sync(full, v, 3, 8));
  LANES(__shfl_sync(full, pv, (l + 5) & 31)) LANES(__shfl_up_sync(full, pv, 3))
  LANES(__shfl_down_sync(full, pv, 2)) LANES(__shfl_xor_sync(full, pv, 7))
  LANES(__shfl_xor_sync(full, pv, 1, 16)) LANES(__shfl_sync(full, pv, 3, 8))
  atomicAdd(acc, T(0.5f));
  atomicAdd(acc2, f::pair(T(1.0f), T(0.25f)));
}

#define NCF 24
#define NCD 4
#define NCI 64
__global__ void convert_f32(const float* in, int n, u16* o) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  F<__half>::from_float(in[i], o + (size_t)i * NCF);
  F<__nv_bfloat16>::from_float(in[i], o + (size_t)i * NCF + 12);
}
__global__ void convert_f64(const double* in, int n, u16* o) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  F<__half>::from_double(in[i], o + (size_t)i * NCD);
  F<__nv_bfloat16>::from_double(in[i], o + (size_t)i * NCD + 2);
}
__global__ void convert_int(const i64* in, int n, u16* o) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  F<__half>::from_ints(in[i], o + (size_t)i * NCI);
  F<__nv_bfloat16>::from_ints(in[i], o + (size_t)i * NCI + 32);
}

template <class T> static void run_type(const char* name) {
  typedef typename F<T>::T2 T2;
  char key[64];
  u16* o16 = alloc<u16>(65536 * (size_t)NU);
  i64* oi = alloc<i64>(65536 * (size_t)NI);
  float* of = alloc<float>(65536 * (size_t)NF);
  unary<T><<<256, 256>>>(o16, oi, of);
  dump("unary", name, o16, 65536 * (size_t)NU);
  dump("unary_int", name, oi, 65536 * (size_t)NI);
  dump("unary_float", name, of, 65536 * (size_t)NF);

  int n = 0;
  snprintf(key, sizeof key, "bin_a_%s", name);
  u16* a = upload<u16>(key, &n);
  snprintf(key, sizeof key, "bin_b_%s", name);
  u16* b = upload<u16>(key, 0);
  u16* ob = alloc<u16>((size_t)n * NB);
  unsigned* ob32 = alloc<unsigned>((size_t)n * NB32);
  binary<T><<<(n + 255) / 256, 256>>>(a, b, n, ob, ob32);
  dump("binary", name, ob, (size_t)n * NB);
  dump("binary32", name, ob32, (size_t)n * NB32);

  snprintf(key, sizeof key, "ter_a_%s", name);
  u16* ta = upload<u16>(key, &n);
  snprintf(key, sizeof key, "ter_b_%s", name);
  u16* tb = upload<u16>(key, 0);
  snprintf(key, sizeof key, "ter_c_%s", name);
  u16* tc = upload<u16>(key, 0);
  u16* ot = alloc<u16>((size_t)n * NT);
  ternary<T><<<(n + 255) / 256, 256>>>(ta, tb, tc, n, ot);
  dump("ternary", name, ot, (size_t)n * NT);

  snprintf(key, sizeof key, "warp_%s", name);
  T* src = upload<T>(key, 0);
  snprintf(key, sizeof key, "warp2_%s", name);
  T2* src2 = upload<T2>(key, 0);
  u16* ow = alloc<u16>(32 * NW);
  T* dst = alloc<T>(32 * 5);
  T2* dst2 = alloc<T2>(32 * 4);
  T* acc = alloc<T>(1);
  T2* acc2 = alloc<T2>(1);
  warp<T><<<1, 32>>>(src, src2, ow, dst, dst2, acc, acc2);
  dump("warp", name, ow, 32 * NW);
  dump("store", name, dst, 32 * 5);
  dump("store2", name, dst2, 32 * 4);
  dump("acc", name, acc, 1);
  dump("acc2", name, acc2, 1);
}

int main() {
  run_type<__half>("half");
  run_type<__nv_bfloat16>("bf16");
  int n = 0;
  float* f = upload<float>("f32", &n);
  u16* of = alloc<u16>((size_t)n * NCF);
  convert_f32<<<(n + 255) / 256, 256>>>(f, n, of);
  dump("conv", "f32", of, (size_t)n * NCF);
  double* d = upload<double>("f64", &n);
  u16* od = alloc<u16>((size_t)n * NCD);
  convert_f64<<<(n + 255) / 256, 256>>>(d, n, od);
  dump("conv", "f64", od, (size_t)n * NCD);
  i64* iv = upload<i64>("i64", &n);
  u16* oi = alloc<u16>((size_t)n * NCI);
  convert_int<<<(n + 255) / 256, 256>>>(iv, n, oi);
  dump("conv", "i64", oi, (size_t)n * NCI);
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { printf("error %s\n", cudaGetErrorString(err)); return 1; }
  printf("done\n");
  return 0;
}
"""

NU, NI, NF, NB, NB32, NT, NW = 102, 37, 6, 90, 14, 11, 36
FORMATS = ("half", "bf16")
MB = {"half": 10, "bf16": 7}
BIAS = {"half": 15, "bf16": 127}
INF = {"half": 0x7C00, "bf16": 0x7F80}
ONE = {"half": 0x3C00, "bf16": 0x3F80}
NAN = 0x7FFF
MODES = ("rn", "rz", "rd", "ru")
I64_MIN = -(2**63)


# --- references ---------------------------------------------------------------------------------
def decode(bits: np.ndarray, fmt: str) -> np.ndarray:
    bits = np.asarray(bits, dtype=np.uint16)
    with np.errstate(invalid="ignore"):  # NaN payloads
        if fmt == "half":
            return bits.view(np.float16).astype(np.float64)
        return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def encode_exact(v: np.ndarray, fmt: str) -> np.ndarray:
    """Bits of values the format holds exactly (or infinities)."""
    v = np.asarray(v, dtype=np.float64)
    if fmt == "half":
        return v.astype(np.float16).view(np.uint16)
    return (v.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


def round_to(x, fmt: str, mode: str = "rn") -> np.ndarray:
    """An exact double rounded to the format: scaled to the result's last place (a power of two:
    exact), rounded to an integer there in the mode, scaled back. NaN gives 0x7FFF."""
    with np.errstate(invalid="ignore", over="ignore"):
        return _round_to(np.atleast_1d(np.asarray(x, dtype=np.float64)), fmt, mode)


def _round_to(x: np.ndarray, fmt: str, mode: str) -> np.ndarray:
    mb, bias = MB[fmt], BIAS[fmt]
    neg = np.signbit(x)
    ax = np.abs(x)
    finite = np.isfinite(ax)
    safe = np.where(finite, ax, 0.0)
    _, e = np.frexp(safe)
    quantum = np.ldexp(1.0, np.maximum(e - 1, 1 - bias) - mb)
    k = safe / quantum
    if mode == "rn":
        k = np.rint(k)
    elif mode == "rz":
        k = np.floor(k)
    else:
        up = neg if mode == "rd" else ~neg  # the magnitude rounds up
        k = np.where(up, np.ceil(k), np.floor(k))
    val = k * quantum
    top = (2.0 - 2.0**-mb) * 2.0**bias
    to_inf = {"rn": np.ones_like(neg), "rz": np.zeros_like(neg), "rd": neg, "ru": ~neg}[mode]
    val = np.where(val > top, np.where(to_inf, np.inf, top), val)
    val = np.where(finite, val, ax)
    bits = encode_exact(np.where(neg, -val, val), fmt)
    bits[np.isnan(x)] = NAN
    return bits


def round_scaled(n: int, shift: int, fmt: str, mode: str, neg_zero: bool = False) -> float:
    """n * 2**-shift (Python integers: exact) rounded to the format, as a double."""
    mb, bias = MB[fmt], BIAS[fmt]
    neg = n < 0
    a = -n if neg else n
    if a == 0:
        return -0.0 if neg_zero else 0.0
    e = max(a.bit_length() - 1 - shift, 1 - bias)  # the result's exponent
    drop = e - mb + shift  # bits of a below its last place
    if drop <= 0:
        k, rem, half = a << -drop, 0, 1
    else:
        k, rem = divmod(a, 1 << drop)
        half = 1 << (drop - 1)
    if mode == "rn":
        k += rem > half or (rem == half and k & 1)
    elif mode == ("rd" if neg else "ru"):
        k += rem != 0
    val = k * 2.0 ** (e - mb)
    top = (2.0 - 2.0**-mb) * 2.0**bias
    if val > top:
        to_inf = mode == "rn" or (mode == "ru" and not neg) or (mode == "rd" and neg)
        val = np.inf if to_inf else top
    return -val if neg else val


def round_ints(values: np.ndarray, fmt: str, mode: str) -> np.ndarray:
    """Integers (int64 or uint64) rounded to the format: exactly in double below 2**53,
    in Python integers above."""
    values = np.asarray(values)
    small = np.abs(values.astype(np.float64)) < 2.0**53
    out = round_to(np.where(small, values, 0).astype(np.float64), fmt, mode)
    big = np.flatnonzero(~small)
    if len(big):
        out[big] = encode_exact(np.array([round_scaled(int(values[k]), 0, fmt, mode) for k in big]), fmt)
    return out


INT_TYPES = {  # name: (lo, hi, value for NaN)
    "int": (-(2**31), 2**31 - 1, 0),
    "short": (-(2**15), 2**15 - 1, 0),
    "ll": (I64_MIN, 2**63 - 1, I64_MIN),
    "uint": (0, 2**32 - 1, 0),
    "ushort": (0, 2**16 - 1, 0),
    "ull": (0, 2**64 - 1, 2**63),
    "schar": (-128, 127, 0),
    "uchar": (0, 255, 0),
}
ROUND = {"rn": np.rint, "rz": np.trunc, "rd": np.floor, "ru": np.ceil}


def to_integer(v: np.ndarray, mode: str, kind: str) -> np.ndarray:
    """Rounded in the mode, saturated, NaN to the documented value; as the int64 the kernel
    stores (an unsigned 64-bit result wraps)."""
    lo, hi, nan_value = INT_TYPES[kind]
    nan = np.isnan(v)
    t = ROUND[mode](np.where(nan, 0.0, v))
    big, small = t >= float(hi), t <= float(lo)
    mid = ~big & ~small
    dtype = np.uint64 if kind == "ull" else np.int64
    out = np.zeros(v.shape, dtype)
    out[mid] = t[mid].astype(dtype)
    out[big] = hi
    out[small] = lo
    out[nan] = nan_value
    return out.view(np.int64)


def ordered(bits: np.ndarray) -> np.ndarray:
    """Bit patterns on a line where neighbours differ by one unit in the last place."""
    b = bits.astype(np.int64)
    return np.where(b & 0x8000, -(b & 0x7FFF), b)


def assert_bits(got, want, what: str, inputs=None, ulps: int = 0) -> None:
    """Bit-exact, or within `ulps` units in the last place; a NaN must be the canonical one."""
    got = np.asarray(got, dtype=np.uint16)
    want = np.asarray(want, dtype=np.uint16)
    assert got.shape == want.shape, what
    if ulps:
        bad = np.where(want == NAN, got != NAN, np.abs(ordered(got) - ordered(want)) > ulps)
    else:
        bad = got != want
    idx = np.flatnonzero(bad)
    if len(idx):
        shown = ", ".join(
            f"in={inputs[k] if inputs is not None else k!r}: got {got[k]:#06x} want {want[k]:#06x}"
            for k in idx[:8]
        )
        pytest.fail(f"{what}: {len(idx)} mismatches, e.g. {shown}")


# --- inputs -------------------------------------------------------------------------------------
SPECIALS = {
    "half": [0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x3C00, 0xBC00, 0x3800, 0x4000, 0x7BFF,
             0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7C01, 0x3555, 0x3C01, 0x3BFF, 0x5640, 0x7800,
             0x0200, 0x1400, 0x6400, 0xC500, 0x3E00, 0x4100, 0x4300, 0x3A00, 0xB800, 0x7A00],
    "bf16": [0x0000, 0x8000, 0x0001, 0x8001, 0x007F, 0x0080, 0x3F80, 0xBF80, 0x3F00, 0x4000, 0x7F7F,
             0xFF7F, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0x7F81, 0x3EAB, 0x3F81, 0x3F7F, 0x42C8, 0x4700,
             0x4F00, 0x5F00, 0x5F80, 0xCF00, 0x3FC0, 0x4020, 0x4060, 0x3F40, 0xBF00, 0x7F00],
}


def binary_inputs(fmt: str, rng) -> tuple[np.ndarray, np.ndarray]:
    s = np.array(SPECIALS[fmt], dtype=np.uint16)
    a, b = np.meshgrid(s, s)
    rand_a = rng.integers(0, 65536, 30000).astype(np.uint16)
    rand_b = rng.integers(0, 65536, 30000).astype(np.uint16)
    near_a = rng.integers(0, 65536, 10000).astype(np.uint16)  # close magnitudes: cancellation
    near_b = (near_a.astype(np.int64) + rng.integers(-40, 41, 10000)).astype(np.uint16) ^ np.uint16(0x8000)
    one = ONE[fmt]
    unit_a = rng.integers(one - 0x400, one + 0x400, 10000).astype(np.uint16)  # around [0.5, 2)
    unit_b = rng.integers(one - 0x400, one + 0x400, 10000).astype(np.uint16)
    return (np.concatenate([a.ravel(), rand_a, near_a, unit_a]),
            np.concatenate([b.ravel(), rand_b, near_b, unit_b]))


def ternary_inputs(fmt: str, rng) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    s = np.array(SPECIALS[fmt][:16], dtype=np.uint16)
    a, b, c = (g.ravel() for g in np.meshgrid(s, s, s))
    ra, rb, rc = (rng.integers(0, 65536, 12000).astype(np.uint16) for _ in range(3))
    # Products exactly on a rounding midpoint (an odd mantissa times 1.5), the addend a tiny
    # power of two either way (or zero): only an fma that rounds once gets them all right.
    mb = MB[fmt]
    m = rng.integers(0, 2**mb // 6, 6000) * 2 + 1  # odd: a in [1, 4/3), a * 1.5 in [1.5, 2)
    ma = ((BIAS[fmt] << mb) | m).astype(np.uint16)
    mb_ = np.full(6000, (BIAS[fmt] << mb) | (1 << (mb - 1)), dtype=np.uint16)  # 1.5
    tiny = round_to(np.ldexp(1.0, rng.integers(-24 if fmt == "half" else -133, -8, 6000)), fmt)
    sign = rng.integers(0, 2, 6000).astype(np.uint16) << 15
    mc = np.where(rng.random(6000) < 0.1, 0, tiny | sign).astype(np.uint16)
    flip = rng.integers(0, 2, 6000).astype(np.uint16) << 15
    return (np.concatenate([a, ra, ma ^ flip]), np.concatenate([b, rb, mb_]), np.concatenate([c, rc, mc]))


def float_inputs(rng) -> np.ndarray:
    parts = []
    for fmt in FORMATS:
        v = decode(np.arange(65536, dtype=np.uint16), fmt)
        fin = np.unique(np.abs(v[np.isfinite(v)]))
        mids = (fin[:-1] + fin[1:]) / 2
        top = fin[-1] + (fin[-1] - fin[-2]) / 2  # past it, nearest-even overflows
        m32 = np.append(mids, top).astype(np.float32)
        parts += [v.astype(np.float32), m32, np.nextafter(m32, np.float32(np.inf)),
                  np.nextafter(m32, np.float32(0))]
    parts += [
        (2.0 ** rng.uniform(-150, 128, 20000)).astype(np.float32),
        rng.standard_normal(5000).astype(np.float32),
        np.array([0.0, np.inf, np.nan, 1e-45, 3.4e38, 65504.0, 65519.99, 65520.0, 1e6], dtype=np.float32),
        np.array([0x7FC00001, 0x7F800001, 0x7FFFFFFF], dtype=np.uint32).view(np.float32),
    ]
    x = np.concatenate(parts).astype(np.float32)
    return np.concatenate([x, -x])


def double_inputs(rng) -> np.ndarray:
    parts = []
    for fmt in FORMATS:
        v = decode(np.arange(65536, dtype=np.uint16), fmt)
        fin = np.unique(np.abs(v[np.isfinite(v)]))
        mids = np.append((fin[:-1] + fin[1:]) / 2, fin[-1] + (fin[-1] - fin[-2]) / 2)
        # a double a hair off a midpoint rounds to float32 onto it: only a direct conversion
        # gets these right
        parts += [v[np.isfinite(v)], mids, mids * (1 + 2.0**-40), mids * (1 - 2.0**-40)]
    parts += [2.0 ** rng.uniform(-160, 140, 20000),
              np.array([0.0, np.inf, np.nan, 1e300, 1e-300, 5e-324, np.finfo(np.float64).max])]
    x = np.concatenate(parts)
    return np.concatenate([x, -x])


def int_inputs(rng) -> np.ndarray:
    vals = set(range(-300, 301))
    for k in range(64):
        for d in (-3, -1, 0, 1, 3):
            vals.update({2**k + d, -(2**k) + d})
        for mb in (10, 7):  # exact midpoints of both formats and their neighbours
            if k > mb:
                mid = 2**k + 2 ** (k - mb - 1)
                vals.update({mid - 1, mid, mid + 1, mid + 2 ** (k - mb), -mid, -mid - 1})
    vals.update({65504, 65519, 65520, 65521, 65535, 65536, 2**63 - 1, -(2**63)})
    bits = rng.integers(1, 64, 3000)
    vals.update(int(x) for x in rng.integers(0, 2**62, 3000) >> (62 - np.minimum(bits, 62)))
    vals.update(-int(x) for x in rng.integers(0, 2**62, 1000))
    vals = [v for v in vals if -(2**63) <= v < 2**63]
    return np.array(sorted(vals), dtype=np.int64)


def warp_inputs(fmt: str, rng) -> np.ndarray:
    return np.concatenate([np.array(SPECIALS[fmt][:32], dtype=np.uint16),
                           rng.integers(0, 65536, 32).astype(np.uint16)])


# --- the program, built and run once ------------------------------------------------------------
@pytest.fixture(scope="module")
def run(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("half_bf16")
    backend = CpuBackend(cache=BuildCache(root / "builds"))
    exe = backend.build(Program(source=PROGRAM, filename="main.cu"), {})
    assert exe.compile.ok, exe.compile.diagnostics
    data = root / "work" / "data"
    data.mkdir(parents=True)
    rng = np.random.default_rng(16)
    inputs: dict = {"f32": float_inputs(rng), "f64": double_inputs(rng), "i64": int_inputs(rng)}
    for fmt in FORMATS:
        inputs[f"bin_{fmt}"] = binary_inputs(fmt, rng)
        inputs[f"ter_{fmt}"] = ternary_inputs(fmt, rng)
        inputs[f"warp_{fmt}"] = warp_inputs(fmt, rng)
        for name, arr in zip("ab", inputs[f"bin_{fmt}"], strict=True):
            arr.tofile(data / f"bin_{name}_{fmt}.bin")
        for name, arr in zip("abc", inputs[f"ter_{fmt}"], strict=True):
            arr.tofile(data / f"ter_{name}_{fmt}.bin")
        w = inputs[f"warp_{fmt}"]
        w[:32].tofile(data / f"warp_{fmt}.bin")
        np.stack([w[:32], w[32:]], axis=1).tofile(data / f"warp2_{fmt}.bin")
    for name in ("f32", "f64", "i64"):
        inputs[name].tofile(data / f"{name}.bin")
    argv, env = backend.command(exe, [])
    out = run_sandboxed(argv, root / "work", limits=Limits(wall_seconds=120, cpu_seconds=240), env=env)
    assert out.exit_code == 0 and out.stdout.strip() == "done", out.stdout + out.stderr

    def load(kind: str, name: str, dtype, cols: int) -> np.ndarray:
        return np.fromfile(data / f"{kind}_{name}.bin", dtype).reshape(-1, cols)

    res = {"inputs": inputs}
    for fmt in FORMATS:
        res[f"unary_{fmt}"] = load("unary", fmt, np.uint16, NU)
        res[f"unary_int_{fmt}"] = load("unary_int", fmt, np.int64, NI)
        res[f"unary_float_{fmt}"] = load("unary_float", fmt, np.float32, NF)
        res[f"binary_{fmt}"] = load("binary", fmt, np.uint16, NB)
        res[f"binary32_{fmt}"] = load("binary32", fmt, np.uint32, NB32)
        res[f"ternary_{fmt}"] = load("ternary", fmt, np.uint16, NT)
        res[f"warp_{fmt}"] = load("warp", fmt, np.uint16, NW)
        res[f"store_{fmt}"] = load("store", fmt, np.uint16, 5)
        res[f"store2_{fmt}"] = load("store2", fmt, np.uint16, 8)
        res[f"acc_{fmt}"] = np.fromfile(data / f"acc_{fmt}.bin", np.uint16)
        res[f"acc2_{fmt}"] = np.fromfile(data / f"acc2_{fmt}.bin", np.uint16)
    res["conv_f32"] = load("conv", "f32", np.uint16, 24)
    res["conv_f64"] = load("conv", "f64", np.uint16, 4)
    res["conv_i64"] = load("conv", "i64", np.uint16, 64)
    return res


ALL = np.arange(65536, dtype=np.uint16)
PARTNER = ((np.arange(65536) * 40503 + 1) & 0xFFFF).astype(np.uint16)


def unary_reference(fmt: str) -> dict[int, tuple[np.ndarray, int]]:
    """Column -> (expected bits for every pattern, ulps allowed)."""
    v = decode(ALL, fmt)
    nan = np.isnan(v)
    other = "bf16" if fmt == "half" else "half"
    with np.errstate(all="ignore"):
        exact = {
            0: np.where(nan, NAN, ALL ^ 0x8000),
            1: np.where(nan, NAN, ALL & 0x7FFF),
            2: round_to(np.sqrt(v), fmt),
            3: round_to(1.0 / np.sqrt(v), fmt),
            4: round_to(1.0 / v, fmt),
            15: round_to(np.floor(v), fmt),
            16: round_to(np.ceil(v), fmt),
            17: round_to(np.trunc(v), fmt),
            18: round_to(np.rint(v), fmt),
            19: np.where(nan, NAN, ALL ^ 0x8000),
            20: ALL,
            21: round_to(v + 1, fmt),
            22: round_to(v + 1, fmt),
            23: round_to(v - 1, fmt),
            24: round_to(v - 1, fmt),
            25: round_to(v, other),
            26: nan.astype(np.uint16),
            27: np.where(ALL == INF[fmt], 1, np.where(ALL == (INF[fmt] | 0x8000), 0xFFFF, 0)),
            28: ((ALL & 0x7FFF) != 0).astype(np.uint16),
            29: ALL,
            30: ALL,
            31: ALL,
        }
        approx = {
            5: round_to(np.exp(v), fmt), 6: round_to(np.exp2(v), fmt), 7: round_to(np.power(10.0, v), fmt),
            8: round_to(np.log(v), fmt), 9: round_to(np.log2(v), fmt), 10: round_to(np.log10(v), fmt),
            11: round_to(np.sin(v), fmt), 12: round_to(np.cos(v), fmt), 13: round_to(np.tanh(v), fmt),
            14: round_to(np.tanh(v), fmt),
        }
    ref = {k: (np.asarray(w, dtype=np.uint16), 0) for k, w in exact.items()}
    ref.update({k: (w, 1) for k, w in approx.items()})
    return ref


UNARY_NAMES = ["__hneg", "__habs", "hsqrt", "hrsqrt", "hrcp", "hexp", "hexp2", "hexp10", "hlog", "hlog2",
               "hlog10", "hsin", "hcos", "htanh", "htanh_approx", "hfloor", "hceil", "htrunc", "hrint", "-a",
               "+a", "++a", "a++", "--a", "a--", "explicit conversion", "__hisnan", "__hisinf", "bool",
               "as_short/short_as", "raw", "a++ (old)"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_unary_functions_on_every_bit_pattern(run, fmt):
    got = run[f"unary_{fmt}"]
    for col, (want, ulps) in unary_reference(fmt).items():
        assert_bits(got[:, col], want, f"{fmt} {UNARY_NAMES[col]}", ALL, ulps)


@pytest.mark.parametrize("fmt", FORMATS)
def test_pair_forms_are_the_scalar_ones_per_lane(run, fmt):
    got = run[f"unary_{fmt}"]
    ref = unary_reference(fmt)
    for k in range(25):  # h2sqrt, __hneg2, -p, ++p, ...: lane x is pattern i, lane y pattern j
        want, ulps = ref[k]
        assert_bits(got[:, 32 + 2 * k], want, f"{fmt} pair {UNARY_NAMES[k]} (low)", ALL, ulps)
        assert_bits(got[:, 33 + 2 * k], want[PARTNER], f"{fmt} pair {UNARY_NAMES[k]} (high)", ALL, ulps)
    nan = np.isnan(decode(ALL, fmt))
    assert_bits(got[:, 82], np.where(nan, ONE[fmt], 0), f"{fmt} __hisnan2 (low)")
    assert_bits(got[:, 83], np.where(nan[PARTNER], ONE[fmt], 0), f"{fmt} __hisnan2 (high)")
    i, j = ALL, PARTNER
    helpers = [("low", i), ("high", j), ("low2", i), ("low2", i), ("high2", j), ("high2", j),
               ("lowhigh2highlow", j), ("lowhigh2highlow", i), ("lows", i), ("lows", j), ("highs", j),
               ("highs", i), ("halves", j), ("halves", i), ("dup", i), ("dup", i), ("raw2", i), ("raw2", j)]
    for n, (name, want) in enumerate(helpers):
        assert_bits(got[:, 84 + n], want, f"{fmt} {name}")


@pytest.mark.parametrize("fmt", FORMATS)
def test_conversions_to_integers_and_float(run, fmt):
    got = run[f"unary_int_{fmt}"]
    v = decode(ALL, fmt)
    col = 0
    for kind in ("int", "short", "ll", "uint", "ushort", "ull"):
        for mode in MODES:
            want = to_integer(v, mode, kind)
            bad = np.flatnonzero(got[:, col] != want)
            assert not len(bad), f"{fmt} to {kind} {mode}: {[(hex(k), v[k], got[k, col], want[k]) for k in bad[:5]]}"
            col += 1
    operators = ["schar", "uchar", "schar", "uchar", "schar", "short", "ushort", "int", "uint", "ll", "ull",
                 "ll", "ull"]  # __half2char_rz, __half2uchar_rz, then the conversion operators
    for kind in operators:
        want = to_integer(v, "rz", kind)
        bad = np.flatnonzero(got[:, col] != want)
        assert not len(bad), f"{fmt} column {col} ({kind}): {[(hex(k), v[k], got[k, col], want[k]) for k in bad[:5]]}"
        col += 1
    assert col == NI
    floats = run[f"unary_float_{fmt}"].astype(np.float64)
    for c, idx in enumerate([ALL, ALL, PARTNER, ALL, PARTNER, ALL]):
        want = v[idx]
        same = (floats[:, c] == want) | (np.isnan(floats[:, c]) & np.isnan(want))
        assert same.all(), f"{fmt} float column {c}"


def binary_reference(fmt: str, xb: np.ndarray, yb: np.ndarray) -> list[np.ndarray]:
    """The 22 scalar results for (x, y), in the kernel's order."""
    x, y = decode(xb, fmt), decode(yb, fmt)
    nx, ny = np.isnan(x), np.isnan(y)
    with np.errstate(all="ignore"):
        add, sub, mul, div = (round_to(r, fmt) for r in (x + y, x - y, x * y, x / y))

    def sat(bits):
        r = decode(bits, fmt)
        return np.where(~(r > 0), 0, np.where(r > 1, ONE[fmt], bits)).astype(np.uint16)

    bigger = np.where(x == y, np.where(np.signbit(x), yb, xb), np.where(x > y, xb, yb))
    smaller = np.where(x == y, np.where(np.signbit(x), xb, yb), np.where(x < y, xb, yb))

    def nan_rule(res, drop_nan: bool):
        if drop_nan:  # the other operand; canonical NaN when both are
            return np.where(nx & ny, NAN, np.where(nx, yb, np.where(ny, xb, res))).astype(np.uint16)
        return np.where(nx | ny, NAN, res).astype(np.uint16)

    hmax, hmin = nan_rule(bigger, True), nan_rule(smaller, True)
    return [add, sub, mul, div, add, sub, mul, sat(add), sat(sub), sat(mul), hmax, hmin,
            nan_rule(bigger, False), nan_rule(smaller, False), add, sub, mul, div, add, sub, mul, div]


BINARY_NAMES = ["__hadd", "__hsub", "__hmul", "__hdiv", "__hadd_rn", "__hsub_rn", "__hmul_rn", "__hadd_sat",
                "__hsub_sat", "__hmul_sat", "__hmax", "__hmin", "__hmax_nan", "__hmin_nan", "+", "-", "*", "/",
                "+=", "-=", "*=", "/="]


def compare_reference(x: np.ndarray, y: np.ndarray) -> list[np.ndarray]:
    nan = np.isnan(x) | np.isnan(y)
    with np.errstate(invalid="ignore"):
        ordered_ = [x == y, (x != y) & ~nan, x < y, x <= y, x > y, x >= y]
    unordered = [r | nan for r in ordered_[:1]] + [x != y] + [r | nan for r in ordered_[2:]]
    return ordered_ + unordered


@pytest.mark.parametrize("fmt", FORMATS)
def test_arithmetic_and_comparisons(run, fmt):
    xb, yb = run["inputs"][f"bin_{fmt}"]
    got = run[f"binary_{fmt}"]
    pairs = [f"{a:#06x},{b:#06x}" for a, b in zip(xb, yb, strict=True)]
    fwd, rev = binary_reference(fmt, xb, yb), binary_reference(fmt, yb, xb)
    for k, name in enumerate(BINARY_NAMES):
        assert_bits(got[:, k], fwd[k], f"{fmt} {name}", pairs)
        assert_bits(got[:, 22 + 2 * k], fwd[k], f"{fmt} pair {name} (low)", pairs)
        assert_bits(got[:, 23 + 2 * k], rev[k], f"{fmt} pair {name} (high)", pairs)
    x, y = decode(xb, fmt), decode(yb, fmt)
    cf, cr = compare_reference(x, y), compare_reference(y, x)
    names = ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu"]
    for k, name in enumerate(names):
        assert_bits(got[:, 66 + 2 * k], np.where(cf[k], ONE[fmt], 0), f"{fmt} __h{name}2 (low)", pairs)
        assert_bits(got[:, 67 + 2 * k], np.where(cr[k], ONE[fmt], 0), f"{fmt} __h{name}2 (high)", pairs)
    w = run[f"binary32_{fmt}"]
    ops = [cf[0], cf[7], cf[2], cf[3], cf[4], cf[5]]  # == is __heq, != is __hneu, ...
    ops2 = [cf[k] & cr[k] for k in (0, 7, 2, 3, 4, 5)]
    both = [a & b for a, b in zip(cf, cr, strict=True)] + ops2
    for k, (want, want2) in enumerate(zip(cf + ops, both, strict=True)):
        label = names[k] if k < 12 else ["==", "!=", "<", "<=", ">", ">="][k - 12]
        bad = np.flatnonzero(((w[:, 0] >> k) & 1).astype(bool) != want)
        assert not len(bad), f"{fmt} scalar {label}: {[pairs[i] for i in bad[:5]]}"
        bad = np.flatnonzero(((w[:, 1] >> k) & 1).astype(bool) != want2)
        assert not len(bad), f"{fmt} pair (both lanes) {label}: {[pairs[i] for i in bad[:5]]}"
    for k, name in enumerate(names):
        want = np.where(cf[k], 0xFFFF, 0) | np.where(cr[k], 0xFFFF0000, 0)
        bad = np.flatnonzero(w[:, 2 + k] != want)
        assert not len(bad), f"{fmt} __h{name}2_mask: {[pairs[i] for i in bad[:5]]}"


def fma_reference(fmt: str, xb, yb, zb) -> np.ndarray:
    """x * y + z rounded once: exact integer arithmetic on the values scaled to integers."""
    x, y, z = decode(xb, fmt), decode(yb, fmt), decode(zb, fmt)
    with np.errstate(all="ignore"):
        out = round_to(x * y + z, fmt)  # specials; exact products and sums in range
    scale = 24 if fmt == "half" else 133
    finite = np.flatnonzero(np.isfinite(x) & np.isfinite(y) & np.isfinite(z))
    vals = []
    for k in finite:
        xs, ys, zs = (int(np.ldexp(v[k], scale)) for v in (x, y, z))
        total = xs * ys + (zs << scale)
        neg_zero = total == 0 and bool(np.signbit(x[k] * y[k] + z[k]))
        vals.append(round_scaled(total, 2 * scale, fmt, "rn", neg_zero))
    out[finite] = encode_exact(np.array(vals), fmt)
    return out


@pytest.mark.parametrize("fmt", FORMATS)
def test_fma_rounds_once(run, fmt):
    xb, yb, zb = run["inputs"][f"ter_{fmt}"]
    got = run[f"ternary_{fmt}"]
    triples = [f"{a:#06x},{b:#06x},{c:#06x}" for a, b, c in zip(xb, yb, zb, strict=True)]

    def variants(a, b, c):
        fma = fma_reference(fmt, a, b, c)
        r = decode(fma, fmt)
        sat = np.where(~(r > 0), 0, np.where(r > 1, ONE[fmt], fma)).astype(np.uint16)
        relu = np.where(np.isnan(r), NAN, np.where(~(r > 0), 0, fma)).astype(np.uint16)
        return [fma, sat, relu]

    fwd, rot = variants(xb, yb, zb), variants(yb, zb, xb)
    for k, name in enumerate(["__hfma", "__hfma_sat", "__hfma_relu"]):
        assert_bits(got[:, k], fwd[k], f"{fmt} {name}", triples)
        assert_bits(got[:, 3 + 2 * k], fwd[k], f"{fmt} pair {name} (low)", triples)
        assert_bits(got[:, 4 + 2 * k], rot[k], f"{fmt} pair {name} (high)", triples)
    # __hcmadd((x, y), (y, z), (z, x)): re = fma(-y, z, fma(x, y, z)), im = fma(y, y, fma(x, z, x))
    neg_y = np.where((yb & 0x7FFF) > INF[fmt], NAN, yb ^ 0x8000).astype(np.uint16)
    re = fma_reference(fmt, neg_y, zb, fma_reference(fmt, xb, yb, zb))
    im = fma_reference(fmt, yb, yb, fma_reference(fmt, xb, zb, xb))
    assert_bits(got[:, 9], re, f"{fmt} __hcmadd (real)", triples)
    assert_bits(got[:, 10], im, f"{fmt} __hcmadd (imaginary)", triples)


def test_conversions_from_float_in_every_mode(run):
    f = run["inputs"]["f32"]
    got = run["conv_f32"]
    x = f.astype(np.float64)
    for base, fmt in ((0, "half"), (12, "bf16")):
        rn = round_to(x, fmt)
        for col, mode in ((0, "rn"), (1, "rn"), (2, "rz"), (3, "rd"), (4, "ru"), (5, "rn")):
            assert_bits(got[:, base + col], round_to(x, fmt, mode), f"float to {fmt} ({col}: {mode})", f)
        for col, want in ((6, rn), (7, rn), (8, rn), (9, round_to(-x, fmt)), (10, round_to(-x, fmt)), (11, rn)):
            assert_bits(got[:, base + col], want, f"float to {fmt} pair column {col}", f)


def test_conversions_from_double_round_once(run):
    d = run["inputs"]["f64"]
    got = run["conv_f64"]
    for col, fmt in ((0, "half"), (1, "half"), (2, "bf16"), (3, "bf16")):
        assert_bits(got[:, col], round_to(d, fmt), f"double to {fmt} ({col})", d)


def test_conversions_from_integers_in_every_mode(run):
    v = run["inputs"]["i64"]
    got = run["conv_i64"]
    as_int = {
        "int": v.astype(np.int32), "uint": v.astype(np.uint32), "short": v.astype(np.int16),
        "ushort": v.astype(np.uint16), "ll": v, "ull": v.view(np.uint64),
    }
    for base, fmt in ((0, "half"), (32, "bf16")):
        col = base
        refs = {}
        for kind in ("int", "uint", "short", "ushort", "ll", "ull"):
            for mode in MODES:
                refs[kind, mode] = round_ints(as_int[kind], fmt, mode)
                assert_bits(got[:, col], refs[kind, mode], f"{kind} to {fmt} {mode}", as_int[kind])
                col += 1
        for kind in ("int", "uint", "short", "ushort", "ll", "ull", "ll", "ull"):  # the constructors
            assert_bits(got[:, col], refs[kind, "rn"], f"{fmt}({kind}) constructor", as_int[kind])
            col += 1


@pytest.mark.parametrize("fmt", FORMATS)
def test_loads_stores_shuffles_and_atomics(run, fmt):
    w = run["inputs"][f"warp_{fmt}"]
    lo, hi = w[:32], w[32:]
    got = run[f"warp_{fmt}"]
    lane = np.arange(32)
    for c in range(6):  # __ldg, __ldcg, __ldca, __ldcs, __ldlu, __ldcv
        assert_bits(got[:, c], lo, f"{fmt} load {c}")
        assert_bits(got[:, 6 + 2 * c], lo, f"{fmt} pair load {c} (low)")
        assert_bits(got[:, 7 + 2 * c], hi, f"{fmt} pair load {c} (high)")
    sources = [
        (lane + 5) & 31,                         # __shfl_sync(v, l + 5)
        np.where(lane >= 3, lane - 3, lane),     # __shfl_up_sync(v, 3)
        np.where(lane + 2 < 32, lane + 2, lane),  # __shfl_down_sync(v, 2)
        lane ^ 7,                                # __shfl_xor_sync(v, 7)
        lane ^ 1,                                # __shfl_xor_sync(v, 1, 16)
        (lane & ~7) + 3,                         # __shfl_sync(v, 3, 8)
    ]
    for k, src in enumerate(sources):
        assert_bits(got[:, 18 + k], lo[src], f"{fmt} shuffle {k}")
        assert_bits(got[:, 24 + 2 * k], lo[src], f"{fmt} pair shuffle {k} (low)")
        assert_bits(got[:, 25 + 2 * k], hi[src], f"{fmt} pair shuffle {k} (high)")
    store = run[f"store_{fmt}"]
    for c in range(4):  # __stcg, __stcs, __stwb, __stwt
        assert_bits(store[:, c], lo, f"{fmt} store {c}")
    assert_bits(store[:, 4], np.full(32, round_to(1.5, fmt)[0]), f"{fmt} __stcg of a float")
    store2 = run[f"store2_{fmt}"]
    for c in range(4):
        assert_bits(store2[:, 2 * c], lo, f"{fmt} pair store {c} (low)")
        assert_bits(store2[:, 2 * c + 1], hi, f"{fmt} pair store {c} (high)")
    assert_bits(run[f"acc_{fmt}"], round_to(16.0, fmt), f"{fmt} atomicAdd")
    assert_bits(run[f"acc2_{fmt}"], np.concatenate([round_to(32.0, fmt), round_to(8.0, fmt)]), f"{fmt} pair atomicAdd")


# --- names and signatures: CUDA 13's headers ----------------------------------------------------
def _cuda_include() -> Path | None:
    nvcc = shutil.which("nvcc")
    candidates = [Path(nvcc).resolve().parent.parent / "include"] if nvcc else []
    candidates.append(Path("/usr/local/cuda/include"))
    return next((p for p in candidates if (p / "cuda_fp16.h").is_file() and (p / "cuda_bf16.h").is_file()), None)


# Mask-less shuffles are deprecated (and, as for every other type, not in the shim).
DEPRECATED = {"__shfl", "__shfl_up", "__shfl_down", "__shfl_xor"}
# Declared for these types by CUDA, served by cuda_runtime.h's templates or the shim's overloads.
GENERIC = {"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "atomicAdd", "__ldg",
           "__ldcg", "__ldca", "__ldcs", "__ldlu", "__ldcv", "__stcg", "__stcs", "__stwb", "__stwt"}


def cuda_api_names(include: Path) -> set[str]:
    """The functions CUDA's cuda_fp16.h and cuda_bf16.h declare (operators and internals aside)."""
    names: set[str] = set()
    for header in ("cuda_fp16.h", "cuda_bf16.h"):
        text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", (include / header).read_text(), flags=re.S)
        for m in re.finditer(r"__CUDA_(?:HOSTDEVICE_)?(?:FP16|BF16)_DECL__\s+([^;{(]*?)(\w+)\s*\(", text):
            names.add(m.group(2))
    # macros of theirs that a declaration's pattern also reads
    return {n for n in names if re.fullmatch(r"(?:__)?[a-z][a-z0-9_]*", n) and not n.endswith("__")
            and n != "defined"}


def test_every_cuda_13_function_is_provided_and_called():
    include = _cuda_include()
    if include is None:
        pytest.skip("CUDA's headers not installed")
    names = cuda_api_names(include) - DEPRECATED
    assert len(names) > 250, sorted(names)
    shim = half_api_names()
    missing = sorted(n for n in names if n not in shim and n not in GENERIC)
    assert not missing, f"declared by CUDA, not by the shim's headers: {missing}"
    called = set(re.findall(r"\b\w+\b", PROGRAM))
    uncalled = sorted(names - called)
    assert not uncalled, f"not called by the test program: {uncalled}"


def test_the_program_compiles_with_nvcc(tmp_path):
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not installed")
    (tmp_path / "main.cu").write_text(PROGRAM)
    proc = subprocess.run([nvcc, "-arch=sm_90", "-c", "main.cu", "-o", "main.o"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("__float22bfloat162_rn", "the CPU shim declares it in cuda_bf16.h"),  # not included
        ("__hadd2", "the CPU shim declares it in cuda_fp16.h"),
        ("__float2half_rx", "half (__float2half_rx is not in the CPU shim's half precision API)"),
        ("__float2bfloat16_xyz", "bfloat16 (__float2bfloat16_xyz is not in the CPU shim's bfloat16 API)"),
        ("hsqrt", None),  # an undeclared name of the program's own, as before
    ],
)
def test_diagnostics_name_what_the_shim_provides(name, expected):
    feature = gpu_feature_from_errors(f"main.cu:9:5: error: ‘{name}’ was not declared in this scope")
    if expected is None:
        assert feature is None
    else:
        assert feature is not None and expected in feature


def test_assignment_from_braces_and_from_raw_values(tmp_path):
    """`res2 = {};` (HeCBench's quant3MatMul) was ambiguous in g++ between the copy assignment
    and the one from the raw struct; nvcc's front end takes the copy assignment."""
    from validators.cpu.toolchain import compile_program

    src = r"""
#include <cstdio>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
__global__ void k(float* out) {
  half2 h2 = __floats2half2_rn(1.f, 2.f);
  h2 = {};
  __half h = 3.f;
  h = {};
  __nv_bfloat162 b2 = __floats2bfloat162_rn(1.f, 2.f);
  b2 = {};
  __nv_bfloat16 b = 5.f;
  b = {};
  __half_raw r;
  r.x = 0x3C00;  // 1.0
  volatile __half vh;
  vh = r;
  h = r;
  __nv_bfloat16_raw br;
  br.x = 0x4000;  // 2.0
  b = br;
  out[0] = __low2float(h2) + __high2float(h2) + __bfloat162float(b2.x) + __bfloat162float(b2.y);
  out[1] = __half2float(h) + __bfloat162float(b) + __half2float(const_cast<__half&>(vh));
}
int main() {
  float* d;
  cudaMalloc(&d, 2 * sizeof(float));
  k<<<1, 1>>>(d);
  float h[2];
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  printf("%g %g\n", h[0], h[1]);
  return 0;
}
"""
    out = compile_program(src, tmp_path / "braces")
    assert out.ok, out.diagnostics
    proc = subprocess.run([str(out.exe)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.split() == ["0", "4"], proc.stdout + proc.stderr
