// cudashim: bfloat16 (__nv_bfloat16, __nv_bfloat162) on the host: the upper 16 bits of a float.
//
// The CUDA Math API's "Bfloat16 Precision Intrinsics" as CUDA 13 declares them, the same
// families as cuda_fp16.h's (the arithmetic, comparison and math functions are overloads of the
// same names): conversions in all four rounding modes, reinterpretations, pairs, arithmetic
// rounded once to nearest-even, comparisons, math functions, operators, cache-hinted loads and
// stores, atomicAdd, and the explicit conversions between __half and __nv_bfloat16. NaN results
// are the canonical NaN 0x7FFF.
#pragma once
// The include guard CUDA's own header defines: programs test it to know the header is in.
#define __CUDA_BF16_H__
#include <cuda_fp16.h>

struct __nv_bfloat16_raw {
  unsigned short x;
};
struct __nv_bfloat162_raw {
  unsigned short x, y;
};

namespace cudashim {
namespace _F16 {
// float to bfloat16, nearest-even (exact: the dropped bits are the float's low half).
inline unsigned short _Bf16_rn(float __f) {
  unsigned int __u = __builtin_bit_cast(unsigned int, __f);
  if ((__u & 0x7FFFFFFFu) > 0x7F800000u) return _Nan;
  __u += 0x7FFFu + ((__u >> 16) & 1u);
  return (unsigned short)(__u >> 16);
}
inline float _Bf16_float(unsigned short __u) { return __builtin_bit_cast(float, (unsigned int)__u << 16); }
inline unsigned short _Bf16_of(double __d) { return _Bf16_rn(_Float_odd(__d)); }
inline unsigned short _Bf16_of(long long __i) { return _From_ll(__i, _Bf16_fmt, _Rn); }
inline unsigned short _Bf16_of(unsigned long long __i) { return _From_ull(__i, _Bf16_fmt, _Rn); }
}  // namespace _F16
}  // namespace cudashim

struct __attribute__((aligned(2))) __nv_bfloat16 {
  unsigned short x;
  __nv_bfloat16() = default;
  constexpr __nv_bfloat16(const __nv_bfloat16_raw& __r) : x(__r.x) {}
  explicit __nv_bfloat16(const __half __q) : x(::cudashim::_F16::_Bf16_rn((float)__q.v)) {}
  __nv_bfloat16(float __f) : x(::cudashim::_F16::_Bf16_rn(__f)) {}
  __nv_bfloat16(double __d) : x(::cudashim::_F16::_Bf16_of(__d)) {}
  __nv_bfloat16(short __i) : x(::cudashim::_F16::_Bf16_rn((float)__i)) {}  // exact in float
  __nv_bfloat16(unsigned short __i) : x(::cudashim::_F16::_Bf16_rn((float)__i)) {}
  __nv_bfloat16(int __i) : x(::cudashim::_F16::_Bf16_of((long long)__i)) {}
  __nv_bfloat16(unsigned int __i) : x(::cudashim::_F16::_Bf16_of((unsigned long long)__i)) {}
  __nv_bfloat16(long __i) : x(::cudashim::_F16::_Bf16_of((long long)__i)) {}
  __nv_bfloat16(unsigned long __i) : x(::cudashim::_F16::_Bf16_of((unsigned long long)__i)) {}
  __nv_bfloat16(long long __i) : x(::cudashim::_F16::_Bf16_of(__i)) {}
  __nv_bfloat16(unsigned long long __i) : x(::cudashim::_F16::_Bf16_of(__i)) {}
  // Templates only the raw type deduces: `h = {}` is then the copy assignment, as nvcc takes it.
  template <class _Raw, ::std::enable_if_t<::std::is_same_v<_Raw, __nv_bfloat16_raw>, int> = 0>
  __nv_bfloat16& operator=(const _Raw& __r) {
    x = __r.x;
    return *this;
  }
  template <class _Raw, ::std::enable_if_t<::std::is_same_v<_Raw, __nv_bfloat16_raw>, int> = 0>
  volatile __nv_bfloat16& operator=(const _Raw& __r) volatile {
    x = __r.x;
    return *this;
  }
  template <class _Raw, ::std::enable_if_t<::std::is_same_v<_Raw, __nv_bfloat16_raw>, int> = 0>
  volatile __nv_bfloat16& operator=(const volatile _Raw& __r) volatile {
    x = __r.x;
    return *this;
  }
  operator __nv_bfloat16_raw() const { return __nv_bfloat16_raw{x}; }
  operator __nv_bfloat16_raw() const volatile { return __nv_bfloat16_raw{(unsigned short)x}; }
  float __cudashim_f() const { return ::cudashim::_F16::_Bf16_float(x); }
  operator float() const { return __cudashim_f(); }
  // To integers: toward zero, saturated, NaN gives 0 (as __bfloat162*_rz).
  operator signed char() const { return ::cudashim::_F16::_To_schar(__cudashim_f(), ::cudashim::_F16::_Rz); }
  operator unsigned char() const { return ::cudashim::_F16::_To_uchar(__cudashim_f(), ::cudashim::_F16::_Rz); }
  operator char() const { return (char)::cudashim::_F16::_To_schar(__cudashim_f(), ::cudashim::_F16::_Rz); }
  operator short() const { return ::cudashim::_F16::_To_short(__cudashim_f(), ::cudashim::_F16::_Rz); }
  operator unsigned short() const { return ::cudashim::_F16::_To_ushort(__cudashim_f(), ::cudashim::_F16::_Rz); }
  operator int() const { return ::cudashim::_F16::_To_int(__cudashim_f(), ::cudashim::_F16::_Rz); }
  operator unsigned int() const { return ::cudashim::_F16::_To_uint(__cudashim_f(), ::cudashim::_F16::_Rz); }
  operator long() const { return ::cudashim::_F16::_To_ll(__cudashim_f(), ::cudashim::_F16::_Rz); }
  operator unsigned long() const { return ::cudashim::_F16::_To_ull(__cudashim_f(), ::cudashim::_F16::_Rz); }
  operator long long() const { return ::cudashim::_F16::_To_ll(__cudashim_f(), ::cudashim::_F16::_Rz); }
  operator unsigned long long() const { return ::cudashim::_F16::_To_ull(__cudashim_f(), ::cudashim::_F16::_Rz); }
  constexpr operator bool() const { return (x & 0x7FFF) != 0; }
};

struct __attribute__((aligned(4))) __nv_bfloat162 {
  __nv_bfloat16 x, y;
  __nv_bfloat162() = default;
  constexpr __nv_bfloat162(const __nv_bfloat16& __a, const __nv_bfloat16& __b) : x(__a), y(__b) {}
  constexpr __nv_bfloat162(const __nv_bfloat162_raw& __r) : x(__nv_bfloat16_raw{__r.x}), y(__nv_bfloat16_raw{__r.y}) {}
  template <class _Raw, ::std::enable_if_t<::std::is_same_v<_Raw, __nv_bfloat162_raw>, int> = 0>
  __nv_bfloat162& operator=(const _Raw& __r) {
    x = __nv_bfloat16_raw{__r.x};
    y = __nv_bfloat16_raw{__r.y};
    return *this;
  }
  operator __nv_bfloat162_raw() const { return __nv_bfloat162_raw{x.x, y.x}; }
};
typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

// bfloat16 to half: exact in float, then rounded once.
inline __half::__half(const __nv_bfloat16 __b) : v(::cudashim::_F16::_Half_rn(::cudashim::_F16::_Bf16_float(__b.x))) {}

// ---------------------------------------------------------------- reinterpretations, float
inline unsigned short __bfloat16_as_ushort(const __nv_bfloat16 __b) { return __b.x; }
inline short __bfloat16_as_short(const __nv_bfloat16 __b) { return (short)__b.x; }
inline __nv_bfloat16 __ushort_as_bfloat16(const unsigned short __u) { return __nv_bfloat16(__nv_bfloat16_raw{__u}); }
inline __nv_bfloat16 __short_as_bfloat16(const short __u) { return __nv_bfloat16(__nv_bfloat16_raw{(unsigned short)__u}); }
inline float __bfloat162float(const __nv_bfloat16 __b) { return ::cudashim::_F16::_Bf16_float(__b.x); }
inline __nv_bfloat16 __float2bfloat16(const float __f) { return __nv_bfloat16(__f); }
inline __nv_bfloat16 __float2bfloat16_rn(const float __f) { return __nv_bfloat16(__f); }
inline __nv_bfloat16 __double2bfloat16(const double __d) { return __nv_bfloat16(__d); }

// ---------------------------------------------------------------- conversions in four modes
#define CUDASHIM_BF16_MODES(_Mode, _F2, _I2, _S2, _Ll2, _U2, _Us2, _Ull2, _2i, _2s, _2ll, _2u, _2us, _2ull)                                                       \
  inline __nv_bfloat16 _F2(const float __v) { return __ushort_as_bfloat16(::cudashim::_F16::_From_double(__v, ::cudashim::_F16::_Bf16_fmt, _Mode)); }             \
  inline __nv_bfloat16 _I2(const int __v) { return __ushort_as_bfloat16(::cudashim::_F16::_From_ll(__v, ::cudashim::_F16::_Bf16_fmt, _Mode)); }                   \
  inline __nv_bfloat16 _S2(const short __v) { return __ushort_as_bfloat16(::cudashim::_F16::_From_ll(__v, ::cudashim::_F16::_Bf16_fmt, _Mode)); }                 \
  inline __nv_bfloat16 _Ll2(const long long __v) { return __ushort_as_bfloat16(::cudashim::_F16::_From_ll(__v, ::cudashim::_F16::_Bf16_fmt, _Mode)); }            \
  inline __nv_bfloat16 _U2(const unsigned int __v) { return __ushort_as_bfloat16(::cudashim::_F16::_From_ull(__v, ::cudashim::_F16::_Bf16_fmt, _Mode)); }         \
  inline __nv_bfloat16 _Us2(const unsigned short __v) { return __ushort_as_bfloat16(::cudashim::_F16::_From_ull(__v, ::cudashim::_F16::_Bf16_fmt, _Mode)); }      \
  inline __nv_bfloat16 _Ull2(const unsigned long long __v) { return __ushort_as_bfloat16(::cudashim::_F16::_From_ull(__v, ::cudashim::_F16::_Bf16_fmt, _Mode)); } \
  inline int _2i(const __nv_bfloat16 __q) { return ::cudashim::_F16::_To_int(__bfloat162float(__q), _Mode); }                                                     \
  inline short _2s(const __nv_bfloat16 __q) { return ::cudashim::_F16::_To_short(__bfloat162float(__q), _Mode); }                                                 \
  inline long long _2ll(const __nv_bfloat16 __q) { return ::cudashim::_F16::_To_ll(__bfloat162float(__q), _Mode); }                                               \
  inline unsigned int _2u(const __nv_bfloat16 __q) { return ::cudashim::_F16::_To_uint(__bfloat162float(__q), _Mode); }                                           \
  inline unsigned short _2us(const __nv_bfloat16 __q) { return ::cudashim::_F16::_To_ushort(__bfloat162float(__q), _Mode); }                                      \
  inline unsigned long long _2ull(const __nv_bfloat16 __q) { return ::cudashim::_F16::_To_ull(__bfloat162float(__q), _Mode); }
CUDASHIM_BF16_MODES(::cudashim::_F16::_Rz, __float2bfloat16_rz, __int2bfloat16_rz, __short2bfloat16_rz, __ll2bfloat16_rz, __uint2bfloat16_rz, __ushort2bfloat16_rz, __ull2bfloat16_rz,
                    __bfloat162int_rz, __bfloat162short_rz, __bfloat162ll_rz, __bfloat162uint_rz, __bfloat162ushort_rz, __bfloat162ull_rz)
CUDASHIM_BF16_MODES(::cudashim::_F16::_Rd, __float2bfloat16_rd, __int2bfloat16_rd, __short2bfloat16_rd, __ll2bfloat16_rd, __uint2bfloat16_rd, __ushort2bfloat16_rd, __ull2bfloat16_rd,
                    __bfloat162int_rd, __bfloat162short_rd, __bfloat162ll_rd, __bfloat162uint_rd, __bfloat162ushort_rd, __bfloat162ull_rd)
CUDASHIM_BF16_MODES(::cudashim::_F16::_Ru, __float2bfloat16_ru, __int2bfloat16_ru, __short2bfloat16_ru, __ll2bfloat16_ru, __uint2bfloat16_ru, __ushort2bfloat16_ru, __ull2bfloat16_ru,
                    __bfloat162int_ru, __bfloat162short_ru, __bfloat162ll_ru, __bfloat162uint_ru, __bfloat162ushort_ru, __bfloat162ull_ru)
#undef CUDASHIM_BF16_MODES
inline __nv_bfloat16 __int2bfloat16_rn(const int __i) { return __nv_bfloat16(__i); }
inline __nv_bfloat16 __short2bfloat16_rn(const short __i) { return __nv_bfloat16(__i); }
inline __nv_bfloat16 __ll2bfloat16_rn(const long long __i) { return __nv_bfloat16(__i); }
inline __nv_bfloat16 __uint2bfloat16_rn(const unsigned int __i) { return __nv_bfloat16(__i); }
inline __nv_bfloat16 __ushort2bfloat16_rn(const unsigned short __i) { return __nv_bfloat16(__i); }
inline __nv_bfloat16 __ull2bfloat16_rn(const unsigned long long __i) { return __nv_bfloat16(__i); }
inline int __bfloat162int_rn(const __nv_bfloat16 __b) { return ::cudashim::_F16::_To_int(__bfloat162float(__b), ::cudashim::_F16::_Rn); }
inline short __bfloat162short_rn(const __nv_bfloat16 __b) { return ::cudashim::_F16::_To_short(__bfloat162float(__b), ::cudashim::_F16::_Rn); }
inline long long __bfloat162ll_rn(const __nv_bfloat16 __b) { return ::cudashim::_F16::_To_ll(__bfloat162float(__b), ::cudashim::_F16::_Rn); }
inline unsigned int __bfloat162uint_rn(const __nv_bfloat16 __b) { return ::cudashim::_F16::_To_uint(__bfloat162float(__b), ::cudashim::_F16::_Rn); }
inline unsigned short __bfloat162ushort_rn(const __nv_bfloat16 __b) { return ::cudashim::_F16::_To_ushort(__bfloat162float(__b), ::cudashim::_F16::_Rn); }
inline unsigned long long __bfloat162ull_rn(const __nv_bfloat16 __b) { return ::cudashim::_F16::_To_ull(__bfloat162float(__b), ::cudashim::_F16::_Rn); }
inline signed char __bfloat162char_rz(const __nv_bfloat16 __b) { return ::cudashim::_F16::_To_schar(__bfloat162float(__b), ::cudashim::_F16::_Rz); }
inline unsigned char __bfloat162uchar_rz(const __nv_bfloat16 __b) { return ::cudashim::_F16::_To_uchar(__bfloat162float(__b), ::cudashim::_F16::_Rz); }

// ---------------------------------------------------------------- pairs
inline __nv_bfloat162 make_bfloat162(const __nv_bfloat16 __a, const __nv_bfloat16 __b) { return __nv_bfloat162(__a, __b); }
inline __nv_bfloat162 __halves2bfloat162(const __nv_bfloat16 __a, const __nv_bfloat16 __b) { return __nv_bfloat162(__a, __b); }
inline __nv_bfloat162 __bfloat162bfloat162(const __nv_bfloat16 __a) { return __nv_bfloat162(__a, __a); }
inline __nv_bfloat162 __float2bfloat162_rn(const float __f) { return __nv_bfloat162(__nv_bfloat16(__f), __nv_bfloat16(__f)); }
inline __nv_bfloat162 __floats2bfloat162_rn(const float __a, const float __b) { return __nv_bfloat162(__nv_bfloat16(__a), __nv_bfloat16(__b)); }
inline __nv_bfloat162 __float22bfloat162_rn(const float2 __f) { return __nv_bfloat162(__nv_bfloat16(__f.x), __nv_bfloat16(__f.y)); }
inline float2 __bfloat1622float2(const __nv_bfloat162 __b) { return make_float2(__bfloat162float(__b.x), __bfloat162float(__b.y)); }
inline __nv_bfloat16 __low2bfloat16(const __nv_bfloat162 __b) { return __b.x; }
inline __nv_bfloat16 __high2bfloat16(const __nv_bfloat162 __b) { return __b.y; }
inline float __low2float(const __nv_bfloat162 __b) { return __bfloat162float(__b.x); }
inline float __high2float(const __nv_bfloat162 __b) { return __bfloat162float(__b.y); }
inline __nv_bfloat162 __low2bfloat162(const __nv_bfloat162 __b) { return __nv_bfloat162(__b.x, __b.x); }
inline __nv_bfloat162 __high2bfloat162(const __nv_bfloat162 __b) { return __nv_bfloat162(__b.y, __b.y); }
inline __nv_bfloat162 __lowhigh2highlow(const __nv_bfloat162 __b) { return __nv_bfloat162(__b.y, __b.x); }
inline __nv_bfloat162 __lows2bfloat162(const __nv_bfloat162 __a, const __nv_bfloat162 __b) { return __nv_bfloat162(__a.x, __b.x); }
inline __nv_bfloat162 __highs2bfloat162(const __nv_bfloat162 __a, const __nv_bfloat162 __b) { return __nv_bfloat162(__a.y, __b.y); }

// ---------------------------------------------------------------- arithmetic, compares, math, operators
CUDASHIM_F16_API(__nv_bfloat16, __nv_bfloat162, __bfloat162float, __float2bfloat16_rn, __bfloat16_as_ushort,
                 __ushort_as_bfloat16, ::cudashim::_F16::_Bf16_fmt)

inline __nv_bfloat16 atomicAdd(__nv_bfloat16* __p, const __nv_bfloat16 __v) {
  return cudashim::atomic_update(__p, [__v](__nv_bfloat16 __o) { return __hadd(__o, __v); });
}
inline __nv_bfloat162 atomicAdd(__nv_bfloat162* __p, const __nv_bfloat162 __v) {
  return cudashim::atomic_update(__p, [__v](__nv_bfloat162 __o) { return __hadd2(__o, __v); });
}

#define CUDART_INF_BF16 __ushort_as_bfloat16((unsigned short)0x7F80U)
#define CUDART_NAN_BF16 __ushort_as_bfloat16((unsigned short)0x7FFFU)
#define CUDART_MIN_DENORM_BF16 __ushort_as_bfloat16((unsigned short)0x0001U)
#define CUDART_MAX_NORMAL_BF16 __ushort_as_bfloat16((unsigned short)0x7F7FU)
#define CUDART_NEG_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x8000U)
#define CUDART_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x0000U)
#define CUDART_ONE_BF16 __ushort_as_bfloat16((unsigned short)0x3F80U)
