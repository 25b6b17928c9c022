// cudashim: half precision (__half, __half2) on the host, stored as IEEE binary16 (_Float16).
//
// The CUDA Math API's "Half Precision Intrinsics" as CUDA 13 declares them: conversions in all
// four rounding modes (rounded exactly: cudashim/half_common.h), reinterpretations, pairs,
// arithmetic (each result rounded once to nearest-even, as a GPU's half instructions do),
// comparisons, math functions, operators, cache-hinted loads and stores, atomicAdd. NaN results
// are the canonical NaN 0x7FFF. Warp shuffles of __half/__half2 are cuda_runtime.h's templates.
// Not provided: the mask-less __shfl* forms CUDA deprecates (as for every other type).
#pragma once
// The include guard CUDA's own header defines: programs test it to know the header is in.
#define __CUDA_FP16_H__
#include <cuda_runtime.h>
#include <cudashim/half_common.h>

struct __half_raw {
  unsigned short x;
};
struct __half2_raw {
  unsigned short x, y;
};
struct __nv_bfloat16;  // cuda_bf16.h: the explicit conversion __half(__nv_bfloat16)

namespace cudashim {
namespace _F16 {
inline _Float16 _Half_bits(unsigned short __u) { return __builtin_bit_cast(_Float16, __u); }
inline _Float16 _Half_rn(float __f) { return __f == __f ? (_Float16)__f : _Half_bits(_Nan); }
inline _Float16 _Half_of(double __d) { return _Half_rn(_Float_odd(__d)); }
inline _Float16 _Half_of(long long __i) { return _Half_bits(_From_ll(__i, _Half_fmt, _Rn)); }
inline _Float16 _Half_of(unsigned long long __i) { return _Half_bits(_From_ull(__i, _Half_fmt, _Rn)); }
}  // namespace _F16
}  // namespace cudashim

struct __attribute__((aligned(2))) __half {
  _Float16 v;
  __half() = default;
  constexpr __half(const __half_raw& __r) : v(__builtin_bit_cast(_Float16, __r.x)) {}
  __half(_Float16 __f) : v(__f) {}
  explicit __half(const __nv_bfloat16 __b);
  __half(float __f) : v(::cudashim::_F16::_Half_rn(__f)) {}
  __half(double __d) : v(::cudashim::_F16::_Half_of(__d)) {}
  __half(short __i) : v((_Float16)(float)__i) {}  // exact in float
  __half(unsigned short __i) : v((_Float16)(float)__i) {}
  __half(int __i) : v(::cudashim::_F16::_Half_of((long long)__i)) {}
  __half(unsigned int __i) : v(::cudashim::_F16::_Half_of((unsigned long long)__i)) {}
  __half(long __i) : v(::cudashim::_F16::_Half_of((long long)__i)) {}
  __half(unsigned long __i) : v(::cudashim::_F16::_Half_of((unsigned long long)__i)) {}
  __half(long long __i) : v(::cudashim::_F16::_Half_of(__i)) {}
  __half(unsigned long long __i) : v(::cudashim::_F16::_Half_of(__i)) {}
  // Templates only the raw type deduces: `h = {}` is then the copy assignment, as nvcc takes it.
  template <class _Raw, ::std::enable_if_t<::std::is_same_v<_Raw, __half_raw>, int> = 0>
  __half& operator=(const _Raw& __r) {
    v = __builtin_bit_cast(_Float16, __r.x);
    return *this;
  }
  template <class _Raw, ::std::enable_if_t<::std::is_same_v<_Raw, __half_raw>, int> = 0>
  volatile __half& operator=(const _Raw& __r) volatile {
    v = __builtin_bit_cast(_Float16, __r.x);
    return *this;
  }
  template <class _Raw, ::std::enable_if_t<::std::is_same_v<_Raw, __half_raw>, int> = 0>
  volatile __half& operator=(const volatile _Raw& __r) volatile {
    v = __builtin_bit_cast(_Float16, (unsigned short)__r.x);
    return *this;
  }
  operator __half_raw() const { return __half_raw{__builtin_bit_cast(unsigned short, v)}; }
  operator __half_raw() const volatile { return __half_raw{__builtin_bit_cast(unsigned short, (_Float16)v)}; }
  operator float() const { return (float)v; }
  // To integers: toward zero, saturated, NaN gives 0 (as __half2*_rz).
  operator signed char() const { return ::cudashim::_F16::_To_schar((float)v, ::cudashim::_F16::_Rz); }
  operator unsigned char() const { return ::cudashim::_F16::_To_uchar((float)v, ::cudashim::_F16::_Rz); }
  operator char() const { return (char)::cudashim::_F16::_To_schar((float)v, ::cudashim::_F16::_Rz); }
  operator short() const { return ::cudashim::_F16::_To_short((float)v, ::cudashim::_F16::_Rz); }
  operator unsigned short() const { return ::cudashim::_F16::_To_ushort((float)v, ::cudashim::_F16::_Rz); }
  operator int() const { return ::cudashim::_F16::_To_int((float)v, ::cudashim::_F16::_Rz); }
  operator unsigned int() const { return ::cudashim::_F16::_To_uint((float)v, ::cudashim::_F16::_Rz); }
  operator long() const { return ::cudashim::_F16::_To_ll((float)v, ::cudashim::_F16::_Rz); }
  operator unsigned long() const { return ::cudashim::_F16::_To_ull((float)v, ::cudashim::_F16::_Rz); }
  operator long long() const { return ::cudashim::_F16::_To_ll((float)v, ::cudashim::_F16::_Rz); }
  operator unsigned long long() const { return ::cudashim::_F16::_To_ull((float)v, ::cudashim::_F16::_Rz); }
  constexpr operator bool() const { return (__builtin_bit_cast(unsigned short, v) & 0x7FFF) != 0; }
};

struct __attribute__((aligned(4))) __half2 {
  __half x, y;
  __half2() = default;
  constexpr __half2(const __half& __a, const __half& __b) : x(__a), y(__b) {}
  constexpr __half2(const __half2_raw& __r) : x(__half_raw{__r.x}), y(__half_raw{__r.y}) {}
  template <class _Raw, ::std::enable_if_t<::std::is_same_v<_Raw, __half2_raw>, int> = 0>
  __half2& operator=(const _Raw& __r) {
    x = __half_raw{__r.x};
    y = __half_raw{__r.y};
    return *this;
  }
  operator __half2_raw() const { return __half2_raw{__half_raw(x).x, __half_raw(y).x}; }
};

typedef __half half;
typedef __half2 half2;
typedef __half __nv_half;
typedef __half2 __nv_half2;
typedef __half_raw __nv_half_raw;
typedef __half2_raw __nv_half2_raw;
typedef __half nv_half;
typedef __half2 nv_half2;

// ---------------------------------------------------------------- reinterpretations, float
inline unsigned short __half_as_ushort(const __half __q) { return __builtin_bit_cast(unsigned short, __q.v); }
inline short __half_as_short(const __half __q) { return __builtin_bit_cast(short, __q.v); }
inline __half __ushort_as_half(const unsigned short __u) { return __half(__builtin_bit_cast(_Float16, __u)); }
inline __half __short_as_half(const short __u) { return __half(__builtin_bit_cast(_Float16, __u)); }
inline float __half2float(const __half __q) { return (float)__q.v; }
inline __half __float2half(const float __f) { return __half(__f); }
inline __half __float2half_rn(const float __f) { return __half(__f); }
inline __half __double2half(const double __d) { return __half(__d); }

// ---------------------------------------------------------------- conversions in four modes
#define CUDASHIM_HALF_MODES(_Mode, _F2, _I2, _S2, _Ll2, _U2, _Us2, _Ull2, _2i, _2s, _2ll, _2u, _2us, _2ull)                                            \
  inline __half _F2(const float __v) { return __ushort_as_half(::cudashim::_F16::_From_double(__v, ::cudashim::_F16::_Half_fmt, _Mode)); }             \
  inline __half _I2(const int __v) { return __ushort_as_half(::cudashim::_F16::_From_ll(__v, ::cudashim::_F16::_Half_fmt, _Mode)); }                   \
  inline __half _S2(const short __v) { return __ushort_as_half(::cudashim::_F16::_From_ll(__v, ::cudashim::_F16::_Half_fmt, _Mode)); }                 \
  inline __half _Ll2(const long long __v) { return __ushort_as_half(::cudashim::_F16::_From_ll(__v, ::cudashim::_F16::_Half_fmt, _Mode)); }            \
  inline __half _U2(const unsigned int __v) { return __ushort_as_half(::cudashim::_F16::_From_ull(__v, ::cudashim::_F16::_Half_fmt, _Mode)); }         \
  inline __half _Us2(const unsigned short __v) { return __ushort_as_half(::cudashim::_F16::_From_ull(__v, ::cudashim::_F16::_Half_fmt, _Mode)); }      \
  inline __half _Ull2(const unsigned long long __v) { return __ushort_as_half(::cudashim::_F16::_From_ull(__v, ::cudashim::_F16::_Half_fmt, _Mode)); } \
  inline int _2i(const __half __q) { return ::cudashim::_F16::_To_int((float)__q.v, _Mode); }                                                          \
  inline short _2s(const __half __q) { return ::cudashim::_F16::_To_short((float)__q.v, _Mode); }                                                      \
  inline long long _2ll(const __half __q) { return ::cudashim::_F16::_To_ll((float)__q.v, _Mode); }                                                    \
  inline unsigned int _2u(const __half __q) { return ::cudashim::_F16::_To_uint((float)__q.v, _Mode); }                                                \
  inline unsigned short _2us(const __half __q) { return ::cudashim::_F16::_To_ushort((float)__q.v, _Mode); }                                           \
  inline unsigned long long _2ull(const __half __q) { return ::cudashim::_F16::_To_ull((float)__q.v, _Mode); }
CUDASHIM_HALF_MODES(::cudashim::_F16::_Rz, __float2half_rz, __int2half_rz, __short2half_rz, __ll2half_rz, __uint2half_rz, __ushort2half_rz, __ull2half_rz,
                    __half2int_rz, __half2short_rz, __half2ll_rz, __half2uint_rz, __half2ushort_rz, __half2ull_rz)
CUDASHIM_HALF_MODES(::cudashim::_F16::_Rd, __float2half_rd, __int2half_rd, __short2half_rd, __ll2half_rd, __uint2half_rd, __ushort2half_rd, __ull2half_rd,
                    __half2int_rd, __half2short_rd, __half2ll_rd, __half2uint_rd, __half2ushort_rd, __half2ull_rd)
CUDASHIM_HALF_MODES(::cudashim::_F16::_Ru, __float2half_ru, __int2half_ru, __short2half_ru, __ll2half_ru, __uint2half_ru, __ushort2half_ru, __ull2half_ru,
                    __half2int_ru, __half2short_ru, __half2ll_ru, __half2uint_ru, __half2ushort_ru, __half2ull_ru)
#undef CUDASHIM_HALF_MODES
// Nearest-even from integers: exact before the one rounding.
inline __half __int2half_rn(const int __i) { return __half(__i); }
inline __half __short2half_rn(const short __i) { return __half(__i); }
inline __half __ll2half_rn(const long long __i) { return __half(__i); }
inline __half __uint2half_rn(const unsigned int __i) { return __half(__i); }
inline __half __ushort2half_rn(const unsigned short __i) { return __half(__i); }
inline __half __ull2half_rn(const unsigned long long __i) { return __half(__i); }
inline int __half2int_rn(const __half __q) { return ::cudashim::_F16::_To_int((float)__q.v, ::cudashim::_F16::_Rn); }
inline short __half2short_rn(const __half __q) { return ::cudashim::_F16::_To_short((float)__q.v, ::cudashim::_F16::_Rn); }
inline long long __half2ll_rn(const __half __q) { return ::cudashim::_F16::_To_ll((float)__q.v, ::cudashim::_F16::_Rn); }
inline unsigned int __half2uint_rn(const __half __q) { return ::cudashim::_F16::_To_uint((float)__q.v, ::cudashim::_F16::_Rn); }
inline unsigned short __half2ushort_rn(const __half __q) { return ::cudashim::_F16::_To_ushort((float)__q.v, ::cudashim::_F16::_Rn); }
inline unsigned long long __half2ull_rn(const __half __q) { return ::cudashim::_F16::_To_ull((float)__q.v, ::cudashim::_F16::_Rn); }
inline signed char __half2char_rz(const __half __q) { return ::cudashim::_F16::_To_schar((float)__q.v, ::cudashim::_F16::_Rz); }
inline unsigned char __half2uchar_rz(const __half __q) { return ::cudashim::_F16::_To_uchar((float)__q.v, ::cudashim::_F16::_Rz); }

// ---------------------------------------------------------------- pairs
inline __half2 make_half2(const __half __a, const __half __b) { return __half2(__a, __b); }
inline __half2 __halves2half2(const __half __a, const __half __b) { return __half2(__a, __b); }
inline __half2 __half2half2(const __half __a) { return __half2(__a, __a); }
inline __half2 __float2half2_rn(const float __f) { return __half2(__half(__f), __half(__f)); }
inline __half2 __floats2half2_rn(const float __a, const float __b) { return __half2(__half(__a), __half(__b)); }
inline __half2 __float22half2_rn(const float2 __f) { return __half2(__half(__f.x), __half(__f.y)); }
inline float2 __half22float2(const __half2 __q) { return make_float2((float)__q.x.v, (float)__q.y.v); }
inline __half __low2half(const __half2 __q) { return __q.x; }
inline __half __high2half(const __half2 __q) { return __q.y; }
inline float __low2float(const __half2 __q) { return (float)__q.x.v; }
inline float __high2float(const __half2 __q) { return (float)__q.y.v; }
inline __half2 __low2half2(const __half2 __q) { return __half2(__q.x, __q.x); }
inline __half2 __high2half2(const __half2 __q) { return __half2(__q.y, __q.y); }
inline __half2 __lowhigh2highlow(const __half2 __q) { return __half2(__q.y, __q.x); }
inline __half2 __lows2half2(const __half2 __a, const __half2 __b) { return __half2(__a.x, __b.x); }
inline __half2 __highs2half2(const __half2 __a, const __half2 __b) { return __half2(__a.y, __b.y); }

// ---------------------------------------------------------------- arithmetic, compares, math, operators
CUDASHIM_F16_API(__half, __half2, __half2float, __float2half_rn, __half_as_ushort, __ushort_as_half,
                 ::cudashim::_F16::_Half_fmt)

inline __half atomicAdd(__half* __p, const __half __v) {
  return cudashim::atomic_update(__p, [__v](__half __o) { return __hadd(__o, __v); });
}
inline __half2 atomicAdd(__half2* __p, const __half2 __v) {
  return cudashim::atomic_update(__p, [__v](__half2 __o) { return __hadd2(__o, __v); });
}

#define CUDART_INF_FP16 __ushort_as_half((unsigned short)0x7C00U)
#define CUDART_NAN_FP16 __ushort_as_half((unsigned short)0x7FFFU)
#define CUDART_MIN_DENORM_FP16 __ushort_as_half((unsigned short)0x0001U)
#define CUDART_MAX_NORMAL_FP16 __ushort_as_half((unsigned short)0x7BFFU)
#define CUDART_NEG_ZERO_FP16 __ushort_as_half((unsigned short)0x8000U)
#define CUDART_ZERO_FP16 __ushort_as_half((unsigned short)0x0000U)
#define CUDART_ONE_FP16 __ushort_as_half((unsigned short)0x3C00U)
