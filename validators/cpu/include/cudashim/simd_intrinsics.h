// SIMD-within-a-word and DPX intrinsics of the CUDA Math API ("SIMD Intrinsics"), written from
// its documented semantics and the PTX ISA's definition of the SIMD video instructions:
//
// - `__v*2` work on the two halfwords of an unsigned int, `__v*4` on its four bytes, lane 0 in
//   the low bits. Each lane is read as signed (`s`) or unsigned (`u`) as the name says, the
//   result is exact, then wrapped to the lane (plain forms), clamped to the lane's signed
//   (`ss`) or unsigned (`us`) range, or, for comparisons, all ones (`__vcmp*`) or 1 (`__vset*`)
//   where the comparison holds. `__vsad*` sum the lanes' absolute differences.
// - averages: `__vavgu*` is (a + b + 1) >> 1, `__vhaddu*` is (a + b) >> 1, `__vavgs*` rounds
//   half away from zero (PTX vavrg: (a + b + 1) >> 1 for a non-negative sum, (a + b) >> 1
//   otherwise, with an arithmetic shift).
// - DPX (`__vimax*`, `__vimin*`, `__viaddmax*`, `__viaddmin*`, `__vibmax*`, `__vibmin*`): s32/u32
//   on the whole word, s16x2/u16x2 per halfword; `_relu` clamps the result below at 0; the sum
//   in `__viadd*` wraps in the lane (a packed add, then the max or min); `__vibmax`/`__vibmin`
//   store `a >= b` (`a <= b`) per lane through the predicate pointers.
//
// Every identifier is a reserved name: programs define macros such as `C` or `W`.
#ifndef CUDASHIM_SIMD_INTRINSICS_H
#define CUDASHIM_SIMD_INTRINSICS_H

// Each intrinsic is a template with nothing to deduce (called as the plain function it documents,
// its arguments converted as before): the helpers its body instantiates are then instantiated
// only in a program that calls it. As plain inline functions, their ~200 instantiations were
// queued at the end of every translation unit that includes the shim, precompiled header or
// not: a quarter of the compile of a small program.
#define _CUDASHIM_LAZY template <class = void>

namespace cudashim {
namespace _Simd {

template <int _W>
inline long long _S(unsigned __x) {
  return _W == 8 ? (long long)(signed char)__x : (long long)(short)__x;
}
template <int _W>
inline long long _U(unsigned __x) {
  return (long long)(__x & ((1u << _W) - 1u));
}
template <int _W>
inline long long _Clamp_s(long long __v) {
  const long long __hi = (1ll << (_W - 1)) - 1, __lo = -(1ll << (_W - 1));
  return __v > __hi ? __hi : __v < __lo ? __lo : __v;
}
template <int _W>
inline long long _Clamp_u(long long __v) {
  const long long __hi = (1ll << _W) - 1;
  return __v > __hi ? __hi : __v < 0 ? 0 : __v;
}

// Applies `__op(lane of a, lane of b, lane of c)` to every lane and packs the results.
template <int _W, class _Op>
inline unsigned _Map(unsigned __a, unsigned __b, unsigned __c, _Op __op) {
  const unsigned __m = (1u << _W) - 1u;
  unsigned __r = 0;
  for (int __i = 0; __i < 32; __i += _W)
    __r |= ((unsigned)__op((__a >> __i) & __m, (__b >> __i) & __m, (__c >> __i) & __m) & __m) << __i;
  return __r;
}

template <int _W>
inline long long _Avg_s(long long __x, long long __y) {
  const long long __s = __x + __y;
  return __s >= 0 ? (__s + 1) >> 1 : __s >> 1;
}

template <class _Tp>
inline _Tp _Max(_Tp __x, _Tp __y) { return __x > __y ? __x : __y; }
template <class _Tp>
inline _Tp _Min(_Tp __x, _Tp __y) { return __x < __y ? __x : __y; }

}  // namespace _Simd
}  // namespace cudashim

// `_CUDASHIM_LANE(stem, expr)` defines the lane operation `stem_lane<width>` from `expr`, which
// sees the lanes of a and b as unsigned (`_X`, `_Y`) and signed (`_SX`, `_SY`) values and the
// lane width as `_WIDTH`; the exact result is wrapped to the lane when packed.
#define _CUDASHIM_LANE(_STEM, _EXPR)                                  \
  namespace cudashim::_Simd {                                         \
  template <int _WIDTH>                                               \
  inline long long _STEM##_lane(unsigned __x, unsigned __y) {         \
    const long long _X = _U<_WIDTH>(__x), _Y = _U<_WIDTH>(__y);       \
    const long long _SX = _S<_WIDTH>(__x), _SY = _S<_WIDTH>(__y);     \
    (void)_X, (void)_Y, (void)_SX, (void)_SY;                         \
    return _EXPR;                                                     \
  }                                                                   \
  }
#define _CUDASHIM_PACKED(_NAME, _STEM, _WIDTH_)                                                 \
  _CUDASHIM_LAZY inline unsigned int _NAME(unsigned int __a, unsigned int __b) { \
    return ::cudashim::_Simd::_Map<_WIDTH_>(                                                   \
        __a, __b, 0u, [](unsigned __x, unsigned __y, unsigned) {                               \
          return ::cudashim::_Simd::_STEM##_lane<_WIDTH_>(__x, __y);                           \
        });                                                                                    \
  }
#define _CUDASHIM_PACKED1(_NAME, _STEM, _WIDTH_)                                                \
  _CUDASHIM_LAZY inline unsigned int _NAME(unsigned int __a) { \
    return ::cudashim::_Simd::_Map<_WIDTH_>(__a, 0u, 0u, [](unsigned __x, unsigned, unsigned) { \
      return ::cudashim::_Simd::_STEM##_lane<_WIDTH_>(__x, 0u);                                \
    });                                                                                        \
  }
#define _CUDASHIM_BOTH(_STEM, _EXPR) \
  _CUDASHIM_LANE(_STEM, _EXPR)       \
  _CUDASHIM_PACKED(_STEM##2, _STEM, 16) _CUDASHIM_PACKED(_STEM##4, _STEM, 8)
#define _CUDASHIM_BOTH1(_STEM, _EXPR) \
  _CUDASHIM_LANE(_STEM, _EXPR)        \
  _CUDASHIM_PACKED1(_STEM##2, _STEM, 16) _CUDASHIM_PACKED1(_STEM##4, _STEM, 8)
#define _CUDASHIM_SS(_V) _Clamp_s<_WIDTH>(_V)
#define _CUDASHIM_US(_V) _Clamp_u<_WIDTH>(_V)

#define _CUDASHIM_ALL_ONES ((1ll << _WIDTH) - 1)

_CUDASHIM_BOTH1(__vabs, _SX < 0 ? -_SX : _SX)
_CUDASHIM_BOTH1(__vabsss, _CUDASHIM_SS(_SX < 0 ? -_SX : _SX))
_CUDASHIM_BOTH(__vabsdiffs, _SX > _SY ? _SX - _SY : _SY - _SX)
_CUDASHIM_BOTH(__vabsdiffu, _X > _Y ? _X - _Y : _Y - _X)
_CUDASHIM_BOTH(__vadd, _X + _Y)
_CUDASHIM_BOTH(__vaddss, _CUDASHIM_SS(_SX + _SY))
_CUDASHIM_BOTH(__vaddus, _CUDASHIM_US(_X + _Y))
_CUDASHIM_BOTH(__vsub, _X - _Y)
_CUDASHIM_BOTH(__vsubss, _CUDASHIM_SS(_SX - _SY))
_CUDASHIM_BOTH(__vsubus, _CUDASHIM_US(_X - _Y))
_CUDASHIM_BOTH(__vavgs, _Avg_s<_WIDTH>(_SX, _SY))
_CUDASHIM_BOTH(__vavgu, (_X + _Y + 1) >> 1)
_CUDASHIM_BOTH(__vhaddu, (_X + _Y) >> 1)
_CUDASHIM_BOTH(__vmaxs, _Max(_SX, _SY))
_CUDASHIM_BOTH(__vmaxu, _Max(_X, _Y))
_CUDASHIM_BOTH(__vmins, _Min(_SX, _SY))
_CUDASHIM_BOTH(__vminu, _Min(_X, _Y))
_CUDASHIM_BOTH(__vcmpeq, _X == _Y ? _CUDASHIM_ALL_ONES : 0)
_CUDASHIM_BOTH(__vcmpne, _X != _Y ? _CUDASHIM_ALL_ONES : 0)
_CUDASHIM_BOTH(__vcmpges, _SX >= _SY ? _CUDASHIM_ALL_ONES : 0)
_CUDASHIM_BOTH(__vcmpgeu, _X >= _Y ? _CUDASHIM_ALL_ONES : 0)
_CUDASHIM_BOTH(__vcmpgts, _SX > _SY ? _CUDASHIM_ALL_ONES : 0)
_CUDASHIM_BOTH(__vcmpgtu, _X > _Y ? _CUDASHIM_ALL_ONES : 0)
_CUDASHIM_BOTH(__vcmples, _SX <= _SY ? _CUDASHIM_ALL_ONES : 0)
_CUDASHIM_BOTH(__vcmpleu, _X <= _Y ? _CUDASHIM_ALL_ONES : 0)
_CUDASHIM_BOTH(__vcmplts, _SX < _SY ? _CUDASHIM_ALL_ONES : 0)
_CUDASHIM_BOTH(__vcmpltu, _X < _Y ? _CUDASHIM_ALL_ONES : 0)
_CUDASHIM_BOTH(__vseteq, _X == _Y ? 1 : 0)
_CUDASHIM_BOTH(__vsetne, _X != _Y ? 1 : 0)
_CUDASHIM_BOTH(__vsetges, _SX >= _SY ? 1 : 0)
_CUDASHIM_BOTH(__vsetgeu, _X >= _Y ? 1 : 0)
_CUDASHIM_BOTH(__vsetgts, _SX > _SY ? 1 : 0)
_CUDASHIM_BOTH(__vsetgtu, _X > _Y ? 1 : 0)
_CUDASHIM_BOTH(__vsetles, _SX <= _SY ? 1 : 0)
_CUDASHIM_BOTH(__vsetleu, _X <= _Y ? 1 : 0)
_CUDASHIM_BOTH(__vsetlts, _SX < _SY ? 1 : 0)
_CUDASHIM_BOTH(__vsetltu, _X < _Y ? 1 : 0)
_CUDASHIM_BOTH1(__vneg, -_SX)
_CUDASHIM_BOTH1(__vnegss, _CUDASHIM_SS(-_SX))

#undef _CUDASHIM_ALL_ONES
#undef _CUDASHIM_BOTH
#undef _CUDASHIM_BOTH1
#undef _CUDASHIM_PACKED
#undef _CUDASHIM_PACKED1
#undef _CUDASHIM_LANE
#undef _CUDASHIM_SS
#undef _CUDASHIM_US

namespace cudashim::_Simd {
template <int _W, bool _Signed>
inline unsigned _Sad(unsigned __a, unsigned __b) {
  unsigned __sum = 0;
  for (int __i = 0; __i < 32; __i += _W) {
    const long long __x = _Signed ? _S<_W>(__a >> __i) : _U<_W>(__a >> __i);
    const long long __y = _Signed ? _S<_W>(__b >> __i) : _U<_W>(__b >> __i);
    __sum += (unsigned)(__x > __y ? __x - __y : __y - __x);
  }
  return __sum;
}
}  // namespace cudashim::_Simd
_CUDASHIM_LAZY inline unsigned int __vsads2(unsigned int __a, unsigned int __b) { return ::cudashim::_Simd::_Sad<16, true>(__a, __b); }
_CUDASHIM_LAZY inline unsigned int __vsads4(unsigned int __a, unsigned int __b) { return ::cudashim::_Simd::_Sad<8, true>(__a, __b); }
_CUDASHIM_LAZY inline unsigned int __vsadu2(unsigned int __a, unsigned int __b) { return ::cudashim::_Simd::_Sad<16, false>(__a, __b); }
_CUDASHIM_LAZY inline unsigned int __vsadu4(unsigned int __a, unsigned int __b) { return ::cudashim::_Simd::_Sad<8, false>(__a, __b); }

// ---------------------------------------------------------------- DPX
namespace cudashim::_Simd {
// Per-halfword three-operand map, lanes read as signed or unsigned 16-bit values.
template <bool _Signed, class _Op>
inline unsigned _Map16(unsigned __a, unsigned __b, unsigned __c, _Op __op) {
  return _Map<16>(__a, __b, __c, [&](unsigned __x, unsigned __y, unsigned __z) -> long long {
    if (_Signed) return __op(_S<16>(__x), _S<16>(__y), _S<16>(__z));
    return __op(_U<16>(__x), _U<16>(__y), _U<16>(__z));
  });
}
inline long long _Relu(long long __v) { return __v < 0 ? 0 : __v; }
// The lane sum of a packed add: wrapped to 16 bits, read back as the lane's type.
template <bool _Signed>
inline long long _Add16(long long __x, long long __y) {
  const unsigned __s = (unsigned)(__x + __y) & 0xffffu;
  return _Signed ? _S<16>(__s) : _U<16>(__s);
}
inline int _Add32(int __x, int __y) { return (int)((unsigned)__x + (unsigned)__y); }
}  // namespace cudashim::_Simd

_CUDASHIM_LAZY inline int __vimax_s32_relu(const int __a, const int __b) {
  return ::cudashim::_Simd::_Max(::cudashim::_Simd::_Max(__a, __b), 0);
}
_CUDASHIM_LAZY inline int __vimin_s32_relu(const int __a, const int __b) {
  return ::cudashim::_Simd::_Max(::cudashim::_Simd::_Min(__a, __b), 0);
}
_CUDASHIM_LAZY inline unsigned int __vimax_s16x2_relu(const unsigned int __a, const unsigned int __b) {
  using namespace ::cudashim::_Simd;
  return _Map16<true>(__a, __b, 0u, [](long long __x, long long __y, long long) { return _Relu(_Max(__x, __y)); });
}
_CUDASHIM_LAZY inline unsigned int __vimin_s16x2_relu(const unsigned int __a, const unsigned int __b) {
  using namespace ::cudashim::_Simd;
  return _Map16<true>(__a, __b, 0u, [](long long __x, long long __y, long long) { return _Relu(_Min(__x, __y)); });
}

#define _CUDASHIM_DPX3(_NAME, _EXPR32, _EXPR16)                                                   \
  _CUDASHIM_LAZY inline int _NAME##_s32(const int __a, const int __b, const int __c) { \
    using namespace ::cudashim::_Simd;                                                            \
    const int _X = __a, _Y = __b, _Z = __c;                                                       \
    return _EXPR32;                                                                               \
  }                                                                                               \
  _CUDASHIM_LAZY inline int _NAME##_s32_relu(const int __a, const int __b, const int __c) { \
    using namespace ::cudashim::_Simd;                                                            \
    const int _X = __a, _Y = __b, _Z = __c;                                                       \
    return _Max(_EXPR32, 0);                                                                      \
  }                                                                                               \
  _CUDASHIM_LAZY inline unsigned int _NAME##_u32(const unsigned int __a, const unsigned int __b, \
                                  const unsigned int __c) {                                       \
    using namespace ::cudashim::_Simd;                                                            \
    const unsigned _X = __a, _Y = __b, _Z = __c;                                                  \
    return _EXPR32;                                                                               \
  }                                                                                               \
  _CUDASHIM_LAZY inline unsigned int _NAME##_s16x2(const unsigned int __a, const unsigned int __b, \
                                    const unsigned int __c) {                                     \
    using namespace ::cudashim::_Simd;                                                            \
    return _Map16<true>(__a, __b, __c, [](long long _X, long long _Y, long long _Z) {             \
      constexpr bool _Signed = true;                                                              \
      return _EXPR16;                                                                             \
    });                                                                                           \
  }                                                                                               \
  _CUDASHIM_LAZY inline unsigned int _NAME##_s16x2_relu(const unsigned int __a, const unsigned int __b, \
                                         const unsigned int __c) {                                \
    using namespace ::cudashim::_Simd;                                                            \
    return _Map16<true>(__a, __b, __c, [](long long _X, long long _Y, long long _Z) {             \
      constexpr bool _Signed = true;                                                              \
      return _Relu(_EXPR16);                                                                      \
    });                                                                                           \
  }                                                                                               \
  _CUDASHIM_LAZY inline unsigned int _NAME##_u16x2(const unsigned int __a, const unsigned int __b, \
                                    const unsigned int __c) {                                     \
    using namespace ::cudashim::_Simd;                                                            \
    return _Map16<false>(__a, __b, __c, [](long long _X, long long _Y, long long _Z) {            \
      constexpr bool _Signed = false;                                                             \
      return _EXPR16;                                                                             \
    });                                                                                           \
  }

_CUDASHIM_DPX3(__vimax3, _Max(_Max(_X, _Y), _Z), _Max(_Max(_X, _Y), _Z))
_CUDASHIM_DPX3(__vimin3, _Min(_Min(_X, _Y), _Z), _Min(_Min(_X, _Y), _Z))
_CUDASHIM_DPX3(__viaddmax, _Max((decltype(_X))_Add32((int)_X, (int)_Y), _Z),
               _Max(_Add16<_Signed>(_X, _Y), _Z))
_CUDASHIM_DPX3(__viaddmin, _Min((decltype(_X))_Add32((int)_X, (int)_Y), _Z),
               _Min(_Add16<_Signed>(_X, _Y), _Z))
#undef _CUDASHIM_DPX3

_CUDASHIM_LAZY inline int __vibmax_s32(const int __a, const int __b, bool* const __pred) {
  *__pred = __a >= __b;
  return __a >= __b ? __a : __b;
}
_CUDASHIM_LAZY inline unsigned int __vibmax_u32(const unsigned int __a, const unsigned int __b, bool* const __pred) {
  *__pred = __a >= __b;
  return __a >= __b ? __a : __b;
}
_CUDASHIM_LAZY inline int __vibmin_s32(const int __a, const int __b, bool* const __pred) {
  *__pred = __a <= __b;
  return __a <= __b ? __a : __b;
}
_CUDASHIM_LAZY inline unsigned int __vibmin_u32(const unsigned int __a, const unsigned int __b, bool* const __pred) {
  *__pred = __a <= __b;
  return __a <= __b ? __a : __b;
}

namespace cudashim::_Simd {
template <bool _Signed, bool _Is_max>
inline unsigned _Select16(unsigned __a, unsigned __b, bool* __hi, bool* __lo) {
  unsigned __r = 0;
  for (int __i = 0; __i < 32; __i += 16) {
    const long long __x = _Signed ? _S<16>(__a >> __i) : _U<16>(__a >> __i);
    const long long __y = _Signed ? _S<16>(__b >> __i) : _U<16>(__b >> __i);
    const bool __p = _Is_max ? __x >= __y : __x <= __y;
    *(__i ? __hi : __lo) = __p;
    __r |= ((unsigned)(__p ? __x : __y) & 0xffffu) << __i;
  }
  return __r;
}
}  // namespace cudashim::_Simd
_CUDASHIM_LAZY inline unsigned int __vibmax_s16x2(const unsigned int __a, const unsigned int __b, bool* const __pred_hi,
                                   bool* const __pred_lo) {
  return ::cudashim::_Simd::_Select16<true, true>(__a, __b, __pred_hi, __pred_lo);
}
_CUDASHIM_LAZY inline unsigned int __vibmax_u16x2(const unsigned int __a, const unsigned int __b, bool* const __pred_hi,
                                   bool* const __pred_lo) {
  return ::cudashim::_Simd::_Select16<false, true>(__a, __b, __pred_hi, __pred_lo);
}
_CUDASHIM_LAZY inline unsigned int __vibmin_s16x2(const unsigned int __a, const unsigned int __b, bool* const __pred_hi,
                                   bool* const __pred_lo) {
  return ::cudashim::_Simd::_Select16<true, false>(__a, __b, __pred_hi, __pred_lo);
}
_CUDASHIM_LAZY inline unsigned int __vibmin_u16x2(const unsigned int __a, const unsigned int __b, bool* const __pred_hi,
                                   bool* const __pred_lo) {
  return ::cudashim::_Simd::_Select16<false, false>(__a, __b, __pred_hi, __pred_lo);
}

#undef _CUDASHIM_LAZY

#endif  // CUDASHIM_SIMD_INTRINSICS_H
