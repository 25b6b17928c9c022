// cudashim: 8-bit floating point (cuda_fp8.h) on the host.
//
// Two formats, as the CUDA math API documents them:
//   E4M3 (OCP "fn"): bias 7, no infinities, NaN = 0x7F/0xFF, largest finite 448;
//   E5M2: bias 15, IEEE-like (0x7C = inf, 0x7D..0x7F = NaN), largest finite 57344.
// Narrowing conversions round to nearest even from the exact input value (never through an
// intermediate type), subnormals included. Saturation: __NV_SATFINITE turns anything beyond the
// largest finite value, infinities included, into +/-max and keeps NaN a NaN; __NV_NOSAT gives
// NaN (E4M3) or +/-inf (E5M2) on overflow. The class constructors use __NV_SATFINITE. NaN inputs
// of type float, __half and __nv_bfloat16 become the canonical NaN 0x7F (CUDA canonicalises them
// first); a double NaN keeps its sign (and, for E5M2, its two leading payload bits, made quiet).
// Widening conversions are exact (every fp8 value is a __half value); an fp8 NaN widens to the
// canonical __half NaN 0x7FFF (float 0x7FFFFFFF), sign dropped.
//
// Every identifier here is a reserved name (`_Xv`, `_Code`) or CUDA's own, so a program's
// `-DN=...` size macros cannot collide with it.
#pragma once
#include <cuda_bf16.h>

#include <bit>
#include <limits>

#define __CUDA_FP8_TYPES_EXIST__

typedef unsigned char __nv_fp8_storage_t;
typedef unsigned short int __nv_fp8x2_storage_t;
typedef unsigned int __nv_fp8x4_storage_t;

typedef enum __nv_saturation_t { __NV_NOSAT, __NV_SATFINITE } __nv_saturation_t;
typedef enum __nv_fp8_interpretation_t { __NV_E4M3, __NV_E5M2 } __nv_fp8_interpretation_t;

namespace cudashim {

// --- fp8 -> wider: one 256-entry table per format, built at compile time ---------------------
inline constexpr unsigned _Fp8_canonical_nan_f32 = 0x7FFFFFFFu;

constexpr float _Fp8_decode_one(unsigned _Code, bool _E4) {
  const unsigned _Mbits = _E4 ? 3u : 2u, _Bias = _E4 ? 7u : 15u;
  const unsigned _Sign = (_Code & 0x80u) << 24;
  const unsigned _Exp = (_Code & 0x7Fu) >> _Mbits, _Man = _Code & ((1u << _Mbits) - 1u);
  const unsigned _Expmax = (1u << (7u - _Mbits)) - 1u, _Manmax = (1u << _Mbits) - 1u;
  // E4M3 spends only S.1111.111 on NaN; E5M2 is IEEE-like (S.11111.00 is inf, the rest NaN).
  if (_Exp == _Expmax && (_E4 ? _Man == _Manmax : _Man != 0u))
    return std::bit_cast<float>(_Fp8_canonical_nan_f32);
  if (!_E4 && _Exp == _Expmax) return std::bit_cast<float>(_Sign | 0x7F800000u);
  if (_Exp == 0u) {  // subnormal: _Man quanta of 2^(1 - bias - mbits), exact in float
    const float _Quantum = _E4 ? 1.0f / 512.0f : 1.0f / 65536.0f;
    const float _Mag = (float)_Man * _Quantum;
    return _Sign ? -_Mag : _Mag;
  }
  return std::bit_cast<float>(_Sign | ((_Exp - _Bias + 127u) << 23) | (_Man << (23u - _Mbits)));
}

struct _Fp8_table {
  float _Value[256];
};

constexpr _Fp8_table _Fp8_make_table(bool _E4) {
  _Fp8_table _Tbl{};
  for (unsigned _Code = 0; _Code < 256u; ++_Code) _Tbl._Value[_Code] = _Fp8_decode_one(_Code, _E4);
  return _Tbl;
}

inline constexpr _Fp8_table _Fp8_e4m3_values = _Fp8_make_table(true);
inline constexpr _Fp8_table _Fp8_e5m2_values = _Fp8_make_table(false);

inline float _Fp8_to_float(__nv_fp8_storage_t _Code, __nv_fp8_interpretation_t _Fmt) {
  return (_Fmt == __NV_E4M3 ? _Fp8_e4m3_values : _Fp8_e5m2_values)._Value[_Code];
}

inline unsigned short _Fp8_to_half_bits(__nv_fp8_storage_t _Code, __nv_fp8_interpretation_t _Fmt) {
  const float _Fv = _Fp8_to_float(_Code, _Fmt);
  if (_Fv != _Fv) return 0x7FFFu;
  const _Float16 _Hv = (_Float16)_Fv;  // exact: every fp8 value is a binary16 value
  return std::bit_cast<unsigned short>(_Hv);
}

// --- wider -> fp8 ----------------------------------------------------------------------------
// |_Av| (finite, > 0) rounded to nearest even on the fp8 grid, as an unsigned code that may lie
// past the largest finite code (the caller decides what overflow gives). Codes are consecutive
// along the grid, ((exponent - emin) << mbits) + quanta, so a mantissa carry moves into the next
// binade by itself and subnormals need no special case.
inline unsigned _Fp8_round_magnitude(double _Av, int _Mbits, int _Bias) {
  int _Exp2;
  (void)std::frexp(_Av, &_Exp2);  // _Av = f * 2^_Exp2 with f in [0.5, 1)
  const int _Emin = 1 - _Bias;
  int _Exp = _Exp2 - 1;
  if (_Exp > 64) return 0x100u;  // far beyond every fp8 value
  if (_Exp < _Emin) _Exp = _Emin;  // subnormal range: quanta of the smallest binade
  const double _Quanta = std::ldexp(_Av, _Mbits - _Exp);  // exact: a power-of-two scaling
  double _Whole = std::floor(_Quanta);
  const double _Rest = _Quanta - _Whole;
  if (_Rest > 0.5 || (_Rest == 0.5 && std::fmod(_Whole, 2.0) != 0.0)) _Whole += 1.0;
  return ((unsigned)(_Exp - _Emin) << _Mbits) + (unsigned)_Whole;
}

inline __nv_fp8_storage_t _Fp8_from_double(double _Xv, __nv_saturation_t _Sat,
                                           __nv_fp8_interpretation_t _Fmt) {
  const bool _E4 = _Fmt == __NV_E4M3;
  const unsigned _Sign = std::signbit(_Xv) ? 0x80u : 0u;
  if (_Xv != _Xv) {
    if (_E4) return (__nv_fp8_storage_t)(0x7Fu | _Sign);
    const unsigned long long _Bits = std::bit_cast<unsigned long long>(_Xv);
    return (__nv_fp8_storage_t)(0x7Eu | ((_Bits >> 50) & 3u) | _Sign);
  }
  const unsigned _Maxcode = _E4 ? 0x7Eu : 0x7Bu;
  unsigned _Code = 0u;
  if (std::isinf(_Xv))
    _Code = 0x100u;
  else if (_Xv != 0.0)
    _Code = _Fp8_round_magnitude(std::fabs(_Xv), _E4 ? 3 : 2, _E4 ? 7 : 15);
  if (_Code > _Maxcode) _Code = _Sat == __NV_SATFINITE ? _Maxcode : (_E4 ? 0x7Fu : 0x7Cu);
  return (__nv_fp8_storage_t)(_Code | _Sign);
}

inline __nv_fp8_storage_t _Fp8_from_float(float _Fv, __nv_saturation_t _Sat,
                                          __nv_fp8_interpretation_t _Fmt) {
  if (_Fv != _Fv) return 0x7Fu;  // canonical NaN, whatever the sign and payload
  return _Fp8_from_double((double)_Fv, _Sat, _Fmt);
}

inline float _Fp8_half_bits_to_float(unsigned short _Bits) {
  return (float)std::bit_cast<_Float16>(_Bits);
}

inline float _Fp8_bf16_bits_to_float(unsigned short _Bits) {
  return std::bit_cast<float>((unsigned)_Bits << 16);
}

// Conversions to integers truncate toward zero and saturate to the target's range; NaN gives 0
// (0x8000000000000000 for 64-bit targets), as CUDA's __half2*_rz conversions do.
template <class _Ip>
inline _Ip _Fp8_float_to_integer(float _Fv) {
  if (_Fv != _Fv) return sizeof(_Ip) == 8 ? (_Ip)(1ull << 63) : (_Ip)0;
  constexpr _Ip _Hi = std::numeric_limits<_Ip>::max(), _Lo = std::numeric_limits<_Ip>::min();
  if (_Fv >= (float)_Hi) return _Hi;
  if (_Fv <= (float)_Lo) return _Lo;
  return (_Ip)_Fv;
}

inline __half2_raw _Fp8_half2_raw(const __half2& _Hv) {
  __half2_raw _Raw;
  memcpy(&_Raw, &_Hv, sizeof(_Raw));
  return _Raw;
}

}  // namespace cudashim

// --- the C-style conversion functions ----------------------------------------------------------
inline __nv_fp8_storage_t __nv_cvt_double_to_fp8(const double _Xv, const __nv_saturation_t _Sat,
                                                 const __nv_fp8_interpretation_t _Fmt) {
  return cudashim::_Fp8_from_double(_Xv, _Sat, _Fmt);
}
inline __nv_fp8x2_storage_t __nv_cvt_double2_to_fp8x2(const double2 _Xv, const __nv_saturation_t _Sat,
                                                      const __nv_fp8_interpretation_t _Fmt) {
  return (__nv_fp8x2_storage_t)(cudashim::_Fp8_from_double(_Xv.x, _Sat, _Fmt) |
                                (cudashim::_Fp8_from_double(_Xv.y, _Sat, _Fmt) << 8));
}
inline __nv_fp8_storage_t __nv_cvt_float_to_fp8(const float _Xv, const __nv_saturation_t _Sat,
                                                const __nv_fp8_interpretation_t _Fmt) {
  return cudashim::_Fp8_from_float(_Xv, _Sat, _Fmt);
}
inline __nv_fp8x2_storage_t __nv_cvt_float2_to_fp8x2(const float2 _Xv, const __nv_saturation_t _Sat,
                                                     const __nv_fp8_interpretation_t _Fmt) {
  return (__nv_fp8x2_storage_t)(cudashim::_Fp8_from_float(_Xv.x, _Sat, _Fmt) |
                                (cudashim::_Fp8_from_float(_Xv.y, _Sat, _Fmt) << 8));
}
inline __nv_fp8_storage_t __nv_cvt_halfraw_to_fp8(const __half_raw _Xv, const __nv_saturation_t _Sat,
                                                  const __nv_fp8_interpretation_t _Fmt) {
  return cudashim::_Fp8_from_float(cudashim::_Fp8_half_bits_to_float(_Xv.x), _Sat, _Fmt);
}
inline __nv_fp8x2_storage_t __nv_cvt_halfraw2_to_fp8x2(const __half2_raw _Xv,
                                                       const __nv_saturation_t _Sat,
                                                       const __nv_fp8_interpretation_t _Fmt) {
  return (__nv_fp8x2_storage_t)(__nv_cvt_halfraw_to_fp8(__half_raw{_Xv.x}, _Sat, _Fmt) |
                                (__nv_cvt_halfraw_to_fp8(__half_raw{_Xv.y}, _Sat, _Fmt) << 8));
}
// CUDA's __half2 converts to __half2_raw implicitly; the shim's does not, hence this overload.
inline __nv_fp8x2_storage_t __nv_cvt_halfraw2_to_fp8x2(const __half2 _Xv, const __nv_saturation_t _Sat,
                                                       const __nv_fp8_interpretation_t _Fmt) {
  return __nv_cvt_halfraw2_to_fp8x2(cudashim::_Fp8_half2_raw(_Xv), _Sat, _Fmt);
}
inline __nv_fp8_storage_t __nv_cvt_bfloat16raw_to_fp8(const __nv_bfloat16_raw _Xv,
                                                      const __nv_saturation_t _Sat,
                                                      const __nv_fp8_interpretation_t _Fmt) {
  return cudashim::_Fp8_from_float(cudashim::_Fp8_bf16_bits_to_float(_Xv.x), _Sat, _Fmt);
}
inline __nv_fp8x2_storage_t __nv_cvt_bfloat16raw2_to_fp8x2(const __nv_bfloat162_raw _Xv,
                                                           const __nv_saturation_t _Sat,
                                                           const __nv_fp8_interpretation_t _Fmt) {
  return (__nv_fp8x2_storage_t)(
      __nv_cvt_bfloat16raw_to_fp8(__nv_bfloat16_raw{_Xv.x}, _Sat, _Fmt) |
      (__nv_cvt_bfloat16raw_to_fp8(__nv_bfloat16_raw{_Xv.y}, _Sat, _Fmt) << 8));
}
inline __half_raw __nv_cvt_fp8_to_halfraw(const __nv_fp8_storage_t _Xv,
                                          const __nv_fp8_interpretation_t _Fmt) {
  return __half_raw{cudashim::_Fp8_to_half_bits(_Xv, _Fmt)};
}
inline __half2_raw __nv_cvt_fp8x2_to_halfraw2(const __nv_fp8x2_storage_t _Xv,
                                              const __nv_fp8_interpretation_t _Fmt) {
  return __half2_raw{cudashim::_Fp8_to_half_bits((__nv_fp8_storage_t)(_Xv & 0xFFu), _Fmt),
                     cudashim::_Fp8_to_half_bits((__nv_fp8_storage_t)(_Xv >> 8), _Fmt)};
}

// --- the classes ---------------------------------------------------------------------------------
// Constructors and conversion operators are `explicit`, as in CUDA: `(float)x` works, `float f = x`
// does not compile there either.
#define CUDASHIM_FP8_INT_CTOR(_Name, _Fmt, _Ip) \
  explicit _Name(const _Ip _Val) : __x(cudashim::_Fp8_from_float((float)_Val, __NV_SATFINITE, _Fmt)) {}
#define CUDASHIM_FP8_INT_OP(_Fmt, _Ip) \
  explicit operator _Ip() const { return cudashim::_Fp8_float_to_integer<_Ip>(cudashim::_Fp8_to_float(__x, _Fmt)); }

#define CUDASHIM_FP8_SCALAR(_Name, _Fmt)                                                          \
  struct __attribute__((aligned(1))) _Name {                                                      \
    __nv_fp8_storage_t __x;                                                                       \
    _Name() = default;                                                                            \
    explicit _Name(const __half _Hv) : __x(__nv_cvt_halfraw_to_fp8(__half_raw(_Hv), __NV_SATFINITE, _Fmt)) {} \
    explicit _Name(const __nv_bfloat16 _Bv)                                                       \
        : __x(__nv_cvt_bfloat16raw_to_fp8(__nv_bfloat16_raw(_Bv), __NV_SATFINITE, _Fmt)) {}       \
    explicit _Name(const float _Fv) : __x(cudashim::_Fp8_from_float(_Fv, __NV_SATFINITE, _Fmt)) {} \
    explicit _Name(const double _Dv) : __x(cudashim::_Fp8_from_double(_Dv, __NV_SATFINITE, _Fmt)) {} \
    CUDASHIM_FP8_INT_CTOR(_Name, _Fmt, short)                                                     \
    CUDASHIM_FP8_INT_CTOR(_Name, _Fmt, int)                                                       \
    CUDASHIM_FP8_INT_CTOR(_Name, _Fmt, long)                                                      \
    CUDASHIM_FP8_INT_CTOR(_Name, _Fmt, long long)                                                 \
    CUDASHIM_FP8_INT_CTOR(_Name, _Fmt, unsigned short)                                            \
    CUDASHIM_FP8_INT_CTOR(_Name, _Fmt, unsigned int)                                              \
    CUDASHIM_FP8_INT_CTOR(_Name, _Fmt, unsigned long)                                             \
    CUDASHIM_FP8_INT_CTOR(_Name, _Fmt, unsigned long long)                                        \
    explicit operator float() const { return cudashim::_Fp8_to_float(__x, _Fmt); }              \
    explicit operator double() const { return (double)cudashim::_Fp8_to_float(__x, _Fmt); }     \
    explicit operator __half() const { return __half(__nv_cvt_fp8_to_halfraw(__x, _Fmt)); }      \
    explicit operator __nv_bfloat16() const { return __nv_bfloat16(cudashim::_Fp8_to_float(__x, _Fmt)); } \
    explicit operator bool() const { return (__x & 0x7Fu) != 0u; }                              \
    CUDASHIM_FP8_INT_OP(_Fmt, char)                                                               \
    CUDASHIM_FP8_INT_OP(_Fmt, signed char)                                                        \
    CUDASHIM_FP8_INT_OP(_Fmt, unsigned char)                                                      \
    CUDASHIM_FP8_INT_OP(_Fmt, short)                                                              \
    CUDASHIM_FP8_INT_OP(_Fmt, unsigned short)                                                     \
    CUDASHIM_FP8_INT_OP(_Fmt, int)                                                                \
    CUDASHIM_FP8_INT_OP(_Fmt, unsigned int)                                                       \
    CUDASHIM_FP8_INT_OP(_Fmt, long)                                                               \
    CUDASHIM_FP8_INT_OP(_Fmt, unsigned long)                                                      \
    CUDASHIM_FP8_INT_OP(_Fmt, long long)                                                          \
    CUDASHIM_FP8_INT_OP(_Fmt, unsigned long long)                                                 \
  };

#define CUDASHIM_FP8_PAIR(_Name, _Fmt)                                                            \
  struct __attribute__((aligned(2))) _Name {                                                      \
    __nv_fp8x2_storage_t __x;                                                                     \
    _Name() = default;                                                                            \
    explicit _Name(const __half2 _Hv) : __x(__nv_cvt_halfraw2_to_fp8x2(_Hv, __NV_SATFINITE, _Fmt)) {} \
    explicit _Name(const __nv_bfloat162 _Bv)                                                      \
        : __x(__nv_cvt_bfloat16raw2_to_fp8x2(__nv_bfloat162_raw(_Bv), __NV_SATFINITE, _Fmt)) {}   \
    explicit _Name(const float2 _Fv) : __x(__nv_cvt_float2_to_fp8x2(_Fv, __NV_SATFINITE, _Fmt)) {} \
    explicit _Name(const double2 _Dv) : __x(__nv_cvt_double2_to_fp8x2(_Dv, __NV_SATFINITE, _Fmt)) {} \
    explicit operator __half2() const { return __half2(__nv_cvt_fp8x2_to_halfraw2(__x, _Fmt)); } \
    explicit operator float2() const {                                                            \
      return make_float2(cudashim::_Fp8_to_float((__nv_fp8_storage_t)(__x & 0xFFu), _Fmt),        \
                         cudashim::_Fp8_to_float((__nv_fp8_storage_t)(__x >> 8), _Fmt));          \
    }                                                                                             \
  };

#define CUDASHIM_FP8_QUAD(_Name, _Fmt)                                                            \
  struct __attribute__((aligned(4))) _Name {                                                      \
    __nv_fp8x4_storage_t __x;                                                                     \
    _Name() = default;                                                                            \
    explicit _Name(const __half2 _Lo, const __half2 _Hi)                                          \
        : __x((__nv_fp8x4_storage_t)__nv_cvt_halfraw2_to_fp8x2(_Lo, __NV_SATFINITE, _Fmt) |       \
              ((__nv_fp8x4_storage_t)__nv_cvt_halfraw2_to_fp8x2(_Hi, __NV_SATFINITE, _Fmt) << 16)) {} \
    explicit _Name(const __nv_bfloat162 _Lo, const __nv_bfloat162 _Hi)                            \
        : __x((__nv_fp8x4_storage_t)__nv_cvt_bfloat16raw2_to_fp8x2(__nv_bfloat162_raw(_Lo), __NV_SATFINITE, _Fmt) | \
              ((__nv_fp8x4_storage_t)__nv_cvt_bfloat16raw2_to_fp8x2(__nv_bfloat162_raw(_Hi), __NV_SATFINITE, _Fmt) \
               << 16)) {}                                                                         \
    explicit _Name(const float4 _Fv)                                                              \
        : __x((__nv_fp8x4_storage_t)__nv_cvt_float2_to_fp8x2(make_float2(_Fv.x, _Fv.y), __NV_SATFINITE, _Fmt) | \
              ((__nv_fp8x4_storage_t)__nv_cvt_float2_to_fp8x2(make_float2(_Fv.z, _Fv.w), __NV_SATFINITE, _Fmt) \
               << 16)) {}                                                                         \
    explicit _Name(const double4 _Dv)                                                             \
        : __x((__nv_fp8x4_storage_t)__nv_cvt_double2_to_fp8x2(make_double2(_Dv.x, _Dv.y), __NV_SATFINITE, _Fmt) | \
              ((__nv_fp8x4_storage_t)__nv_cvt_double2_to_fp8x2(make_double2(_Dv.z, _Dv.w), __NV_SATFINITE, _Fmt) \
               << 16)) {}                                                                         \
    explicit operator float4() const {                                                            \
      return make_float4(cudashim::_Fp8_to_float((__nv_fp8_storage_t)(__x & 0xFFu), _Fmt),        \
                         cudashim::_Fp8_to_float((__nv_fp8_storage_t)((__x >> 8) & 0xFFu), _Fmt), \
                         cudashim::_Fp8_to_float((__nv_fp8_storage_t)((__x >> 16) & 0xFFu), _Fmt), \
                         cudashim::_Fp8_to_float((__nv_fp8_storage_t)(__x >> 24), _Fmt));         \
    }                                                                                             \
  };

CUDASHIM_FP8_SCALAR(__nv_fp8_e4m3, __NV_E4M3)
CUDASHIM_FP8_SCALAR(__nv_fp8_e5m2, __NV_E5M2)
CUDASHIM_FP8_PAIR(__nv_fp8x2_e4m3, __NV_E4M3)
CUDASHIM_FP8_PAIR(__nv_fp8x2_e5m2, __NV_E5M2)
CUDASHIM_FP8_QUAD(__nv_fp8x4_e4m3, __NV_E4M3)
CUDASHIM_FP8_QUAD(__nv_fp8x4_e5m2, __NV_E5M2)

#undef CUDASHIM_FP8_SCALAR
#undef CUDASHIM_FP8_PAIR
#undef CUDASHIM_FP8_QUAD
#undef CUDASHIM_FP8_INT_CTOR
#undef CUDASHIM_FP8_INT_OP

static_assert(sizeof(__nv_fp8_e4m3) == 1 && sizeof(__nv_fp8x2_e5m2) == 2 && sizeof(__nv_fp8x4_e4m3) == 4);
