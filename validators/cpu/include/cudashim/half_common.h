// cudashim: what cuda_fp16.h and cuda_bf16.h share.
//
// - `_F16::_Round` rounds a value sign * mag * 2^exp exactly to a 16-bit binary format (half:
//   10 stored mantissa bits, bias 15; bfloat16: 7 bits, bias 127) in any of CUDA's four modes
//   (_rn nearest-even, _rz toward zero, _rd toward -inf, _ru toward +inf), subnormals and
//   overflow included (an overflow gives infinity, or the largest finite value where the mode
//   rounds toward zero). Conversions in the directed modes and from integers go through it;
//   nearest-even from float is the hardware's conversion (`_Float16`, or the bfloat16 bit trick)
//   and from double goes through `_Float_odd`. A NaN becomes the canonical NaN 0x7FFF, as CUDA's
//   conversions and arithmetic give.
// - Arithmetic rounds the exact result once: a sum, difference, product, quotient or square root
//   of 16-bit values computed in float and rounded to the format is the correctly rounded result
//   (24 >= 2 * 11 + 2 bits; a bfloat16 sum or product in float's subnormal range is exact or
//   rounds to zero either way, a quotient there is taken in double: `_Div`). A fused
//   multiply-add takes its exact product (at most 22 significant bits) and a sum rounded to odd
//   (`_Fma_odd`, then `_Float_odd`), which the final rounding to a much shorter format cannot get
//   wrong. The math functions (hexp, hsin, ...) are float libm results rounded once: within one
//   unit in the last place of the exact value, as a GPU's approximations are; hrsqrt is exact.
// - `CUDASHIM_F16_API` defines the API that reads the same for both types (arithmetic,
//   comparisons, math, pairs, operators, cache-hinted loads and stores) from a handful of
//   conversions each header provides.
//
// No templates are instantiated here: the header is parsed by every program that uses half or
// bfloat16. Every identifier is a reserved name: programs define macros such as `C` or `N`.
#ifndef CUDASHIM_HALF_COMMON_H
#define CUDASHIM_HALF_COMMON_H

#include <cmath>
#include <cstring>

namespace cudashim {
namespace _F16 {

enum _Rnd : int { _Rn, _Rz, _Rd, _Ru };

struct _Fmt {
  int _Mb;              // stored mantissa bits
  int _Bias;            // exponent bias, also the largest unbiased exponent
  unsigned short _Inf;  // bits of +infinity
};
inline constexpr _Fmt _Half_fmt{10, 15, 0x7C00}, _Bf16_fmt{7, 127, 0x7F80};
inline constexpr unsigned short _Nan = 0x7FFF;

inline unsigned short _Overflow(bool __neg, _Fmt __f, _Rnd __r) {
  const bool __to_inf = __r == _Rn || (__r == _Ru && !__neg) || (__r == _Rd && __neg);
  return (unsigned short)((__neg ? 0x8000u : 0u) | (__to_inf ? __f._Inf : (unsigned)__f._Inf - 1u));
}

// sign * __mag * 2^__exp, rounded to the format.
inline unsigned short _Round(bool __neg, unsigned long long __mag, int __exp, _Fmt __f, _Rnd __r) {
  const unsigned __sign = __neg ? 0x8000u : 0u;
  if (__mag == 0) return (unsigned short)__sign;
  const int __top = 63 - __builtin_clzll(__mag) + __exp;  // exponent of the leading bit
  const int __emin = 1 - __f._Bias;
  const int __et = __top < __emin ? __emin : __top;       // the result's exponent (or subnormal)
  if (__et > __f._Bias) return _Overflow(__neg, __f, __r);
  const int __shift = (__et - __f._Mb) - __exp;            // bits below the result's last place
  unsigned long long __kept;
  bool __inexact = false, __above = false, __tie = false;
  if (__shift <= 0) {
    __kept = __mag << -__shift;
  } else if (__shift > 64) {
    __kept = 0;
    __inexact = true;  // below a quarter of the last place
  } else if (__shift == 64) {
    __kept = 0;
    __inexact = true;
    __above = __mag > (1ull << 63);
    __tie = __mag == (1ull << 63);
  } else {
    __kept = __mag >> __shift;
    const unsigned long long __rem = __mag & ((1ull << __shift) - 1), __mid = 1ull << (__shift - 1);
    __inexact = __rem != 0;
    __above = __rem > __mid;
    __tie = __rem == __mid;
  }
  bool __up;
  switch (__r) {
    case _Rn: __up = __above || (__tie && (__kept & 1)); break;
    case _Ru: __up = __inexact && !__neg; break;
    case _Rd: __up = __inexact && __neg; break;
    default: __up = false; break;
  }
  // The hidden bit of a normal result carries into the exponent field.
  const unsigned long long __bits = ((unsigned long long)(__et - __emin) << __f._Mb) + __kept + __up;
  if (__bits >= __f._Inf) return _Overflow(__neg, __f, __r);
  return (unsigned short)(__sign | __bits);
}

inline unsigned short _From_double(double __x, _Fmt __f, _Rnd __r) {
  const unsigned long long __u = __builtin_bit_cast(unsigned long long, __x);
  const bool __neg = (__u >> 63) != 0;
  int __e = (int)((__u >> 52) & 0x7FF);
  unsigned long long __m = __u & ((1ull << 52) - 1);
  if (__e == 0x7FF) return __m ? _Nan : (unsigned short)((__neg ? 0x8000u : 0u) | __f._Inf);
  if (__e == 0) __e = 1;
  else __m |= 1ull << 52;
  return _Round(__neg, __m, __e - 1075, __f, __r);
}
inline unsigned short _From_ll(long long __i, _Fmt __f, _Rnd __r) {
  const bool __neg = __i < 0;
  return _Round(__neg, __neg ? 0ull - (unsigned long long)__i : (unsigned long long)__i, 0, __f, __r);
}
inline unsigned short _From_ull(unsigned long long __i, _Fmt __f, _Rnd __r) {
  return _Round(false, __i, 0, __f, __r);
}

// A double rounded to float, to odd (an inexact result gets its last bit set; past float's range,
// the largest float): rounding that to 16 bits, nearest-even, rounds the double itself (24 bits
// are at least 2 more than either format keeps, float's subnormals included).
inline float _Float_odd(double __d) {
  const float __f = (float)__d;
  if ((double)__f == __d || __d != __d) return __f;
  unsigned int __u = __builtin_bit_cast(unsigned int, __f);
  if ((__u & 0x7FFFFFFFu) == 0x7F800000u) __u -= 1;  // overflow: the largest float, odd
  else if ((__u & 1) == 0) __u += __builtin_fabs(__d) > __builtin_fabs((double)__f) ? 1 : -1;
  return __builtin_bit_cast(float, __u);
}

// a / b in float, rounded to a 16-bit format by the caller: correctly rounded there (24 >= 2 * 11
// + 2 bits) except below float's normal range, where the quotient is taken in double (a bfloat16
// subnormal result; for half it rounds to zero either way).
inline float _Div(float __a, float __b) {
  const float __q = __a / __b;
  if (__builtin_fabsf(__q) < 0x1p-126f && __q != 0.0f) return _Float_odd((double)__a / (double)__b);
  return __q;
}

// a * b + c for 16-bit inputs held in doubles: the product is exact; the sum is rounded to odd
// (on an inexact sum the last bit is set), so that rounding it to 16 bits rounds the exact value.
inline double _Fma_odd(double __a, double __b, double __c) {
  const double __p = __a * __b;
  const double __s = __p + __c;
  if (!std::isfinite(__s) || __s == 0) return __s;
  const double __bv = __s - __p;
  const double __err = (__p - (__s - __bv)) + (__c - __bv);
  unsigned long long __u = __builtin_bit_cast(unsigned long long, __s);
  if (__err != 0 && (__u & 1) == 0) __u += ((__err > 0) == (__s > 0)) ? 1 : -1;
  return __builtin_bit_cast(double, __u);
}

// A 16-bit value (exact in float) rounded to an integral value in the mode.
inline float _Integral(float __v, _Rnd __r) {
  switch (__r) {
    case _Rn: return __builtin_roundevenf(__v);
    case _Rz: return __builtin_truncf(__v);
    case _Rd: return __builtin_floorf(__v);
    default: return __builtin_ceilf(__v);
  }
}

// Conversions to integers round in the mode, then saturate to the target's range; NaN gives 0
// (0x8000000000000000 for the 64-bit targets), as CUDA's do.
#define CUDASHIM_F16_TO_INTEGER(_Name, _Ip, _Lo, _Hi, _Nanv) \
  inline _Ip _Name(float __v, _Rnd __r) {                    \
    if (__v != __v) return (_Ip)(_Nanv);                     \
    const float __t = _Integral(__v, __r);                   \
    if (__t >= (float)(_Hi)) return (_Ip)(_Hi);              \
    if (__t <= (float)(_Lo)) return (_Ip)(_Lo);              \
    return (_Ip)__t;                                         \
  }
CUDASHIM_F16_TO_INTEGER(_To_schar, signed char, -128, 127, 0)
CUDASHIM_F16_TO_INTEGER(_To_uchar, unsigned char, 0, 255, 0)
CUDASHIM_F16_TO_INTEGER(_To_short, short, -32768, 32767, 0)
CUDASHIM_F16_TO_INTEGER(_To_ushort, unsigned short, 0, 65535, 0)
CUDASHIM_F16_TO_INTEGER(_To_int, int, -2147483647 - 1, 2147483647, 0)
CUDASHIM_F16_TO_INTEGER(_To_uint, unsigned int, 0u, 4294967295u, 0u)
CUDASHIM_F16_TO_INTEGER(_To_ll, long long, -9223372036854775807ll - 1, 9223372036854775807ll,
                        -9223372036854775807ll - 1)
CUDASHIM_F16_TO_INTEGER(_To_ull, unsigned long long, 0ull, 18446744073709551615ull,
                        9223372036854775808ull)
#undef CUDASHIM_F16_TO_INTEGER

}  // namespace _F16
}  // namespace cudashim

// ------------------------------------------------------------------------------------------
// The API both types share. _Tp/_Tp2: the scalar and pair types; _Tof: value to float (exact);
// _Rnf: float to the type, nearest-even; _Bits/_Mk: the type to and from its bits; _Fmt: the
// format's descriptor. A result computed in double is rounded by `CUDASHIM_F16_RND_D`.
#define CUDASHIM_F16_RND_D(_Rnf, _Expr) _Rnf(::cudashim::_F16::_Float_odd(_Expr))

#define CUDASHIM_F16_LANES1(_Tp2, _Name2, _Name1) \
  inline _Tp2 _Name2(const _Tp2 __a) { return _Tp2(_Name1(__a.x), _Name1(__a.y)); }
#define CUDASHIM_F16_LANES2(_Tp2, _Name2, _Name1) \
  inline _Tp2 _Name2(const _Tp2 __a, const _Tp2 __b) { return _Tp2(_Name1(__a.x, __b.x), _Name1(__a.y, __b.y)); }
#define CUDASHIM_F16_LANES3(_Tp2, _Name2, _Name1)                          \
  inline _Tp2 _Name2(const _Tp2 __a, const _Tp2 __b, const _Tp2 __c) {     \
    return _Tp2(_Name1(__a.x, __b.x, __c.x), _Name1(__a.y, __b.y, __c.y)); \
  }

// Arithmetic (see above).
#define CUDASHIM_F16_ARITH(_Tp, _Tp2, _Tof, _Rnf, _Bits, _Mk, _Fmt)                                                    \
  inline _Tp __hadd(const _Tp __a, const _Tp __b) { return _Rnf(_Tof(__a) + _Tof(__b)); }                              \
  inline _Tp __hsub(const _Tp __a, const _Tp __b) { return _Rnf(_Tof(__a) - _Tof(__b)); }                              \
  inline _Tp __hmul(const _Tp __a, const _Tp __b) { return _Rnf(_Tof(__a) * _Tof(__b)); }                              \
  inline _Tp __hadd_rn(const _Tp __a, const _Tp __b) { return __hadd(__a, __b); }                                      \
  inline _Tp __hsub_rn(const _Tp __a, const _Tp __b) { return __hsub(__a, __b); }                                      \
  inline _Tp __hmul_rn(const _Tp __a, const _Tp __b) { return __hmul(__a, __b); }                                      \
  inline _Tp __hdiv(const _Tp __a, const _Tp __b) {                                                                    \
    return _Rnf(::cudashim::_F16::_Div(_Tof(__a), _Tof(__b)));                                                         \
  }                                                                                                                    \
  inline _Tp __hfma(const _Tp __a, const _Tp __b, const _Tp __c) {                                                     \
    return CUDASHIM_F16_RND_D(_Rnf, ::cudashim::_F16::_Fma_odd(_Tof(__a), _Tof(__b), _Tof(__c)));                      \
  }                                                                                                                    \
  inline _Tp __hneg(const _Tp __a) {                                                                                   \
    const unsigned short __u = _Bits(__a);                                                                             \
    return _Mk((__u & 0x7FFF) > _Fmt._Inf ? ::cudashim::_F16::_Nan : (unsigned short)(__u ^ 0x8000));                  \
  }                                                                                                                    \
  inline _Tp __habs(const _Tp __a) {                                                                                   \
    const unsigned short __u = _Bits(__a) & 0x7FFF;                                                                    \
    return _Mk(__u > _Fmt._Inf ? ::cudashim::_F16::_Nan : __u);                                                        \
  }                                                                                                                    \
  /* Clamped to [+0, 1]; NaN gives +0. */                                                                              \
  inline _Tp __cudashim_sat(const _Tp __a) {                                                                           \
    const float __v = _Tof(__a);                                                                                       \
    return !(__v > 0.0f) ? _Mk(0) : __v > 1.0f ? _Rnf(1.0f) : __a;                                                     \
  }                                                                                                                    \
  inline _Tp __hadd_sat(const _Tp __a, const _Tp __b) { return __cudashim_sat(__hadd(__a, __b)); }                     \
  inline _Tp __hsub_sat(const _Tp __a, const _Tp __b) { return __cudashim_sat(__hsub(__a, __b)); }                     \
  inline _Tp __hmul_sat(const _Tp __a, const _Tp __b) { return __cudashim_sat(__hmul(__a, __b)); }                     \
  inline _Tp __hfma_sat(const _Tp __a, const _Tp __b, const _Tp __c) { return __cudashim_sat(__hfma(__a, __b, __c)); } \
  /* NaN stays (canonical) NaN; anything not above zero gives +0. */                                                   \
  inline _Tp __hfma_relu(const _Tp __a, const _Tp __b, const _Tp __c) {                                                \
    const _Tp __r = __hfma(__a, __b, __c);                                                                             \
    const float __v = _Tof(__r);                                                                                       \
    return __v != __v ? _Mk(::cudashim::_F16::_Nan) : !(__v > 0.0f) ? _Mk(0) : __r;                                    \
  }                                                                                                                    \
  /* The non-NaN operand; canonical NaN when both are; max(+0, -0) = +0, min(+0, -0) = -0. */                          \
  inline _Tp __hmax(const _Tp __a, const _Tp __b) {                                                                    \
    const float __x = _Tof(__a), __y = _Tof(__b);                                                                      \
    if (__x != __x) return __y != __y ? _Mk(::cudashim::_F16::_Nan) : __b;                                             \
    if (__y != __y) return __a;                                                                                        \
    if (__x == __y) return (_Bits(__a) & 0x8000) ? __b : __a;                                                          \
    return __x > __y ? __a : __b;                                                                                      \
  }                                                                                                                    \
  inline _Tp __hmin(const _Tp __a, const _Tp __b) {                                                                    \
    const float __x = _Tof(__a), __y = _Tof(__b);                                                                      \
    if (__x != __x) return __y != __y ? _Mk(::cudashim::_F16::_Nan) : __b;                                             \
    if (__y != __y) return __a;                                                                                        \
    if (__x == __y) return (_Bits(__a) & 0x8000) ? __a : __b;                                                          \
    return __x < __y ? __a : __b;                                                                                      \
  }                                                                                                                    \
  inline _Tp __hmax_nan(const _Tp __a, const _Tp __b) {                                                                \
    return (_Tof(__a) != _Tof(__a) || _Tof(__b) != _Tof(__b)) ? _Mk(::cudashim::_F16::_Nan) : __hmax(__a, __b);        \
  }                                                                                                                    \
  inline _Tp __hmin_nan(const _Tp __a, const _Tp __b) {                                                                \
    return (_Tof(__a) != _Tof(__a) || _Tof(__b) != _Tof(__b)) ? _Mk(::cudashim::_F16::_Nan) : __hmin(__a, __b);        \
  }                                                                                                                    \
  CUDASHIM_F16_LANES2(_Tp2, __hadd2, __hadd)                                                                           \
  CUDASHIM_F16_LANES2(_Tp2, __hsub2, __hsub)                                                                           \
  CUDASHIM_F16_LANES2(_Tp2, __hmul2, __hmul)                                                                           \
  CUDASHIM_F16_LANES2(_Tp2, __hadd2_rn, __hadd)                                                                        \
  CUDASHIM_F16_LANES2(_Tp2, __hsub2_rn, __hsub)                                                                        \
  CUDASHIM_F16_LANES2(_Tp2, __hmul2_rn, __hmul)                                                                        \
  CUDASHIM_F16_LANES2(_Tp2, __h2div, __hdiv)                                                                           \
  CUDASHIM_F16_LANES2(_Tp2, __hadd2_sat, __hadd_sat)                                                                   \
  CUDASHIM_F16_LANES2(_Tp2, __hsub2_sat, __hsub_sat)                                                                   \
  CUDASHIM_F16_LANES2(_Tp2, __hmul2_sat, __hmul_sat)                                                                   \
  CUDASHIM_F16_LANES2(_Tp2, __hmax2, __hmax)                                                                           \
  CUDASHIM_F16_LANES2(_Tp2, __hmin2, __hmin)                                                                           \
  CUDASHIM_F16_LANES2(_Tp2, __hmax2_nan, __hmax_nan)                                                                   \
  CUDASHIM_F16_LANES2(_Tp2, __hmin2_nan, __hmin_nan)                                                                   \
  CUDASHIM_F16_LANES3(_Tp2, __hfma2, __hfma)                                                                           \
  CUDASHIM_F16_LANES3(_Tp2, __hfma2_sat, __hfma_sat)                                                                   \
  CUDASHIM_F16_LANES3(_Tp2, __hfma2_relu, __hfma_relu)                                                                 \
  CUDASHIM_F16_LANES1(_Tp2, __hneg2, __hneg)                                                                           \
  CUDASHIM_F16_LANES1(_Tp2, __habs2, __habs)                                                                           \
  /* (a.x + i a.y) * (b.x + i b.y) + (c.x + i c.y), as four fmas in CUDA's order. */                                   \
  inline _Tp2 __hcmadd(const _Tp2 __a, const _Tp2 __b, const _Tp2 __c) {                                               \
    const _Tp __re = __hfma(__hneg(__a.y), __b.y, __hfma(__a.x, __b.x, __c.x));                                        \
    const _Tp __im = __hfma(__a.y, __b.x, __hfma(__a.x, __b.y, __c.y));                                                \
    return _Tp2(__re, __im);                                                                                           \
  }

// Comparisons: ordered ones are false, unordered ones (`u`) true, where an operand is NaN. Pair
// forms give 1.0/0.0 per lane (`__heq2`), 0xFFFF/0 per lane (`__heq2_mask`, low lane in the low
// bits), or whether both lanes hold (`__hbeq2`).
#define CUDASHIM_F16_CMP1(_Tp, _Tp2, _Tof, _Rnf, _Name, _Name2, _Mask, _Op, _Unordered)            \
  inline bool _Name(const _Tp __a, const _Tp __b) {                                                \
    const float __x = _Tof(__a), __y = _Tof(__b);                                                  \
    return (__x != __x || __y != __y) ? (_Unordered) : (__x _Op __y);                              \
  }                                                                                                \
  inline _Tp2 _Name2(const _Tp2 __a, const _Tp2 __b) {                                             \
    return _Tp2(_Rnf(_Name(__a.x, __b.x) ? 1.0f : 0.0f), _Rnf(_Name(__a.y, __b.y) ? 1.0f : 0.0f)); \
  }                                                                                                \
  inline unsigned int _Mask(const _Tp2 __a, const _Tp2 __b) {                                      \
    return (_Name(__a.x, __b.x) ? 0xFFFFu : 0u) | (_Name(__a.y, __b.y) ? 0xFFFF0000u : 0u);        \
  }
#define CUDASHIM_F16_CMPB(_Tp2, _Bname, _Name) \
  inline bool _Bname(const _Tp2 __a, const _Tp2 __b) { return _Name(__a.x, __b.x) && _Name(__a.y, __b.y); }
#define CUDASHIM_F16_COMPARE(_Tp, _Tp2, _Tof, _Rnf, _Bits, _Mk, _Fmt)                      \
  CUDASHIM_F16_CMP1(_Tp, _Tp2, _Tof, _Rnf, __heq, __heq2, __heq2_mask, ==, false)          \
  CUDASHIM_F16_CMP1(_Tp, _Tp2, _Tof, _Rnf, __hne, __hne2, __hne2_mask, !=, false)          \
  CUDASHIM_F16_CMP1(_Tp, _Tp2, _Tof, _Rnf, __hlt, __hlt2, __hlt2_mask, <, false)           \
  CUDASHIM_F16_CMP1(_Tp, _Tp2, _Tof, _Rnf, __hle, __hle2, __hle2_mask, <=, false)          \
  CUDASHIM_F16_CMP1(_Tp, _Tp2, _Tof, _Rnf, __hgt, __hgt2, __hgt2_mask, >, false)           \
  CUDASHIM_F16_CMP1(_Tp, _Tp2, _Tof, _Rnf, __hge, __hge2, __hge2_mask, >=, false)          \
  CUDASHIM_F16_CMP1(_Tp, _Tp2, _Tof, _Rnf, __hequ, __hequ2, __hequ2_mask, ==, true)        \
  CUDASHIM_F16_CMP1(_Tp, _Tp2, _Tof, _Rnf, __hneu, __hneu2, __hneu2_mask, !=, true)        \
  CUDASHIM_F16_CMP1(_Tp, _Tp2, _Tof, _Rnf, __hltu, __hltu2, __hltu2_mask, <, true)         \
  CUDASHIM_F16_CMP1(_Tp, _Tp2, _Tof, _Rnf, __hleu, __hleu2, __hleu2_mask, <=, true)        \
  CUDASHIM_F16_CMP1(_Tp, _Tp2, _Tof, _Rnf, __hgtu, __hgtu2, __hgtu2_mask, >, true)         \
  CUDASHIM_F16_CMP1(_Tp, _Tp2, _Tof, _Rnf, __hgeu, __hgeu2, __hgeu2_mask, >=, true)        \
  CUDASHIM_F16_CMPB(_Tp2, __hbeq2, __heq)                                                  \
  CUDASHIM_F16_CMPB(_Tp2, __hbne2, __hne)                                                  \
  CUDASHIM_F16_CMPB(_Tp2, __hblt2, __hlt)                                                  \
  CUDASHIM_F16_CMPB(_Tp2, __hble2, __hle)                                                  \
  CUDASHIM_F16_CMPB(_Tp2, __hbgt2, __hgt)                                                  \
  CUDASHIM_F16_CMPB(_Tp2, __hbge2, __hge)                                                  \
  CUDASHIM_F16_CMPB(_Tp2, __hbequ2, __hequ)                                                \
  CUDASHIM_F16_CMPB(_Tp2, __hbneu2, __hneu)                                                \
  CUDASHIM_F16_CMPB(_Tp2, __hbltu2, __hltu)                                                \
  CUDASHIM_F16_CMPB(_Tp2, __hbleu2, __hleu)                                                \
  CUDASHIM_F16_CMPB(_Tp2, __hbgtu2, __hgtu)                                                \
  CUDASHIM_F16_CMPB(_Tp2, __hbgeu2, __hgeu)                                                \
  inline bool __hisnan(const _Tp __a) { return (_Bits(__a) & 0x7FFF) > _Fmt._Inf; }        \
  inline int __hisinf(const _Tp __a) {                                                     \
    const unsigned short __u = _Bits(__a);                                                 \
    return __u == _Fmt._Inf ? 1 : __u == (unsigned short)(_Fmt._Inf | 0x8000) ? -1 : 0;    \
  }                                                                                        \
  inline _Tp2 __hisnan2(const _Tp2 __a) {                                                  \
    return _Tp2(_Rnf(__hisnan(__a.x) ? 1.0f : 0.0f), _Rnf(__hisnan(__a.y) ? 1.0f : 0.0f)); \
  }

// Math functions: float libm, rounded once (rounding functions are exact in float).
#define CUDASHIM_F16_MATH1(_Tp, _Tp2, _Tof, _Rnf, _Name, _Name2, _Expr) \
  inline _Tp _Name(const _Tp __a) {                                     \
    const float __x = _Tof(__a);                                        \
    return _Rnf(_Expr);                                                 \
  }                                                                     \
  CUDASHIM_F16_LANES1(_Tp2, _Name2, _Name)
#define CUDASHIM_F16_MATH(_Tp, _Tp2, _Tof, _Rnf, _Bits, _Mk, _Fmt)                                                    \
  CUDASHIM_F16_MATH1(_Tp, _Tp2, _Tof, _Rnf, hsqrt, h2sqrt, __builtin_sqrtf(__x))                                      \
  CUDASHIM_F16_MATH1(_Tp, _Tp2, _Tof, _Rnf, hrsqrt, h2rsqrt, ::cudashim::_F16::_Float_odd(1.0 / ::sqrt((double)__x))) \
  CUDASHIM_F16_MATH1(_Tp, _Tp2, _Tof, _Rnf, hrcp, h2rcp, ::cudashim::_F16::_Div(1.0f, __x))                           \
  CUDASHIM_F16_MATH1(_Tp, _Tp2, _Tof, _Rnf, hexp, h2exp, ::expf(__x))                                                 \
  CUDASHIM_F16_MATH1(_Tp, _Tp2, _Tof, _Rnf, hexp2, h2exp2, ::exp2f(__x))                                              \
  CUDASHIM_F16_MATH1(_Tp, _Tp2, _Tof, _Rnf, hexp10, h2exp10, ::powf(10.0f, __x))                                      \
  CUDASHIM_F16_MATH1(_Tp, _Tp2, _Tof, _Rnf, hlog, h2log, ::logf(__x))                                                 \
  CUDASHIM_F16_MATH1(_Tp, _Tp2, _Tof, _Rnf, hlog2, h2log2, ::log2f(__x))                                              \
  CUDASHIM_F16_MATH1(_Tp, _Tp2, _Tof, _Rnf, hlog10, h2log10, ::log10f(__x))                                           \
  CUDASHIM_F16_MATH1(_Tp, _Tp2, _Tof, _Rnf, hsin, h2sin, ::sinf(__x))                                                 \
  CUDASHIM_F16_MATH1(_Tp, _Tp2, _Tof, _Rnf, hcos, h2cos, ::cosf(__x))                                                 \
  CUDASHIM_F16_MATH1(_Tp, _Tp2, _Tof, _Rnf, htanh, h2tanh, ::tanhf(__x))                                              \
  CUDASHIM_F16_MATH1(_Tp, _Tp2, _Tof, _Rnf, htanh_approx, h2tanh_approx, ::tanhf(__x))                                \
  CUDASHIM_F16_MATH1(_Tp, _Tp2, _Tof, _Rnf, hfloor, h2floor, __builtin_floorf(__x))                                   \
  CUDASHIM_F16_MATH1(_Tp, _Tp2, _Tof, _Rnf, hceil, h2ceil, __builtin_ceilf(__x))                                      \
  CUDASHIM_F16_MATH1(_Tp, _Tp2, _Tof, _Rnf, htrunc, h2trunc, __builtin_truncf(__x))                                   \
  CUDASHIM_F16_MATH1(_Tp, _Tp2, _Tof, _Rnf, hrint, h2rint, __builtin_roundevenf(__x))

// Operators, as CUDA defines them: `!=` is the unordered compare; pair comparisons hold when
// they hold for both lanes; ++/-- add or subtract one.
#define CUDASHIM_F16_OPERATORS(_Tp, _Tp2, _Tof, _Rnf, _Bits, _Mk, _Fmt)                                              \
  inline _Tp operator+(const _Tp& __a, const _Tp& __b) { return __hadd(__a, __b); }                                  \
  inline _Tp operator-(const _Tp& __a, const _Tp& __b) { return __hsub(__a, __b); }                                  \
  inline _Tp operator*(const _Tp& __a, const _Tp& __b) { return __hmul(__a, __b); }                                  \
  inline _Tp operator/(const _Tp& __a, const _Tp& __b) { return __hdiv(__a, __b); }                                  \
  inline _Tp& operator+=(_Tp& __a, const _Tp& __b) { return __a = __hadd(__a, __b); }                                \
  inline _Tp& operator-=(_Tp& __a, const _Tp& __b) { return __a = __hsub(__a, __b); }                                \
  inline _Tp& operator*=(_Tp& __a, const _Tp& __b) { return __a = __hmul(__a, __b); }                                \
  inline _Tp& operator/=(_Tp& __a, const _Tp& __b) { return __a = __hdiv(__a, __b); }                                \
  inline _Tp& operator++(_Tp& __a) { return __a = __hadd(__a, _Rnf(1.0f)); }                                         \
  inline _Tp& operator--(_Tp& __a) { return __a = __hsub(__a, _Rnf(1.0f)); }                                         \
  inline _Tp operator++(_Tp& __a, const int) { const _Tp __old = __a; __a = __hadd(__a, _Rnf(1.0f)); return __old; } \
  inline _Tp operator--(_Tp& __a, const int) { const _Tp __old = __a; __a = __hsub(__a, _Rnf(1.0f)); return __old; } \
  inline _Tp operator+(const _Tp& __a) { return __a; }                                                               \
  inline _Tp operator-(const _Tp& __a) { return __hneg(__a); }                                                       \
  inline bool operator==(const _Tp& __a, const _Tp& __b) { return __heq(__a, __b); }                                 \
  inline bool operator!=(const _Tp& __a, const _Tp& __b) { return __hneu(__a, __b); }                                \
  inline bool operator<(const _Tp& __a, const _Tp& __b) { return __hlt(__a, __b); }                                  \
  inline bool operator<=(const _Tp& __a, const _Tp& __b) { return __hle(__a, __b); }                                 \
  inline bool operator>(const _Tp& __a, const _Tp& __b) { return __hgt(__a, __b); }                                  \
  inline bool operator>=(const _Tp& __a, const _Tp& __b) { return __hge(__a, __b); }                                 \
  inline _Tp2 operator+(const _Tp2& __a, const _Tp2& __b) { return __hadd2(__a, __b); }                              \
  inline _Tp2 operator-(const _Tp2& __a, const _Tp2& __b) { return __hsub2(__a, __b); }                              \
  inline _Tp2 operator*(const _Tp2& __a, const _Tp2& __b) { return __hmul2(__a, __b); }                              \
  inline _Tp2 operator/(const _Tp2& __a, const _Tp2& __b) { return __h2div(__a, __b); }                              \
  inline _Tp2& operator+=(_Tp2& __a, const _Tp2& __b) { return __a = __hadd2(__a, __b); }                            \
  inline _Tp2& operator-=(_Tp2& __a, const _Tp2& __b) { return __a = __hsub2(__a, __b); }                            \
  inline _Tp2& operator*=(_Tp2& __a, const _Tp2& __b) { return __a = __hmul2(__a, __b); }                            \
  inline _Tp2& operator/=(_Tp2& __a, const _Tp2& __b) { return __a = __h2div(__a, __b); }                            \
  inline _Tp2& operator++(_Tp2& __a) { return __a = __hadd2(__a, _Tp2(_Rnf(1.0f), _Rnf(1.0f))); }                    \
  inline _Tp2& operator--(_Tp2& __a) { return __a = __hsub2(__a, _Tp2(_Rnf(1.0f), _Rnf(1.0f))); }                    \
  inline _Tp2 operator++(_Tp2& __a, const int) { const _Tp2 __old = __a; ++__a; return __old; }                      \
  inline _Tp2 operator--(_Tp2& __a, const int) { const _Tp2 __old = __a; --__a; return __old; }                      \
  inline _Tp2 operator+(const _Tp2& __a) { return __a; }                                                             \
  inline _Tp2 operator-(const _Tp2& __a) { return __hneg2(__a); }                                                    \
  inline bool operator==(const _Tp2& __a, const _Tp2& __b) { return __hbeq2(__a, __b); }                             \
  inline bool operator!=(const _Tp2& __a, const _Tp2& __b) { return __hbneu2(__a, __b); }                            \
  inline bool operator<(const _Tp2& __a, const _Tp2& __b) { return __hblt2(__a, __b); }                              \
  inline bool operator<=(const _Tp2& __a, const _Tp2& __b) { return __hble2(__a, __b); }                             \
  inline bool operator>(const _Tp2& __a, const _Tp2& __b) { return __hbgt2(__a, __b); }                              \
  inline bool operator>=(const _Tp2& __a, const _Tp2& __b) { return __hbge2(__a, __b); }

// Cache-hinted loads and stores: plain accesses on the host. The generic templates of
// cuda_runtime.h serve loads already; these overloads let a store convert its value (a float
// stored through a __half*), as CUDA's do. Warp shuffles are cuda_runtime.h's templates.
#define CUDASHIM_F16_MEMORY1(_Tp)                             \
  inline _Tp __ldg(const _Tp* __p) { return *__p; }           \
  inline _Tp __ldcg(const _Tp* __p) { return *__p; }          \
  inline _Tp __ldca(const _Tp* __p) { return *__p; }          \
  inline _Tp __ldcs(const _Tp* __p) { return *__p; }          \
  inline _Tp __ldlu(const _Tp* __p) { return *__p; }          \
  inline _Tp __ldcv(const _Tp* __p) { return *__p; }          \
  inline void __stcg(_Tp* __p, const _Tp __v) { *__p = __v; } \
  inline void __stcs(_Tp* __p, const _Tp __v) { *__p = __v; } \
  inline void __stwb(_Tp* __p, const _Tp __v) { *__p = __v; } \
  inline void __stwt(_Tp* __p, const _Tp __v) { *__p = __v; }
#define CUDASHIM_F16_API(_Tp, _Tp2, _Tof, _Rnf, _Bits, _Mk, _Fmt) \
  CUDASHIM_F16_ARITH(_Tp, _Tp2, _Tof, _Rnf, _Bits, _Mk, _Fmt)     \
  CUDASHIM_F16_COMPARE(_Tp, _Tp2, _Tof, _Rnf, _Bits, _Mk, _Fmt)   \
  CUDASHIM_F16_MATH(_Tp, _Tp2, _Tof, _Rnf, _Bits, _Mk, _Fmt)      \
  CUDASHIM_F16_OPERATORS(_Tp, _Tp2, _Tof, _Rnf, _Bits, _Mk, _Fmt) \
  CUDASHIM_F16_MEMORY1(_Tp)                                       \
  CUDASHIM_F16_MEMORY1(_Tp2)

#endif  // CUDASHIM_HALF_COMMON_H
