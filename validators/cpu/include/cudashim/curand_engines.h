// cudashim: the cuRAND generators (XORWOW, Philox4x32-10, MRG32k3a) and their conversions to
// uniform, normal, log-normal and Poisson values, shared by the device API (curand_kernel.h)
// and the host API (curand.h).
//
// The aim is cuRAND's sequences bit for bit: a program that seeds a state with (seed,
// subsequence, offset) draws the same 32-bit words a GPU draws, and the same uniform floats and
// doubles (the conversions are written with the fused multiply-adds nvcc emits for them). Values
// that go through a transcendental function (normal, log-normal, Poisson) use the host's math
// library where the GPU uses its own (and `__sincosf`'s approximation): they agree to a few
// units in the last place, not bit for bit.
//
// Skipping ahead is exact: XORWOW's 2^67-step subsequences and its offsets use powers of the
// one-step matrix over GF(2), MRG32k3a's (2^76-step subsequences) powers of its two 3x3 matrices
// modulo m1 and m2, computed once per process, the first time a state skips.
// Every local name is reserved (`__x`, `_Xy`): a program's `-D` size macros cannot collide.
#pragma once
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

namespace cudashim::curand {

// ----------------------------------------------------------------------------- XORWOW
// Marsaglia's xorwow (five 32-bit words of xorshift, plus a Weyl sequence `__d`).
struct _Xorwow_jumps {
  // _Pow[__k] is the one-step map A raised to 2^__k, as nibble tables: _Pow[__k][__n][__v] is
  // the image of the 4-bit value __v placed at nibble __n of the 160-bit state (words low first),
  // so applying a power costs 40 table lookups rather than a 160x160 bit product.
  static constexpr int _Bits = 160;
  static constexpr int _Powers = 64 + 67;
  uint32_t _Pow[_Powers][40][16][5];

  static void _Step(uint32_t* __v) {
    uint32_t __t = __v[0] ^ (__v[0] >> 2);
    __v[0] = __v[1];
    __v[1] = __v[2];
    __v[2] = __v[3];
    __v[3] = __v[4];
    __v[4] = (__v[4] ^ (__v[4] << 4)) ^ (__t ^ (__t << 1));
  }

  _Xorwow_jumps() {
    // Columns of the current power: the image of each basis bit.
    static uint32_t __col[_Bits][5], __next[_Bits][5];
    for (int __i = 0; __i < _Bits; ++__i) {
      for (int __w = 0; __w < 5; ++__w) __col[__i][__w] = 0;
      __col[__i][__i / 32] = 1u << (__i % 32);
      _Step(__col[__i]);
    }
    for (int __k = 0; __k < _Powers; ++__k) {
      _Tabulate(__k, __col);
      // Squaring: the new column i is the old map applied to old column i.
      for (int __i = 0; __i < _Bits; ++__i) _Apply_columns(__col, __col[__i], __next[__i]);
      for (int __i = 0; __i < _Bits; ++__i)
        for (int __w = 0; __w < 5; ++__w) __col[__i][__w] = __next[__i][__w];
    }
  }

  static void _Apply_columns(const uint32_t (*__col)[5], const uint32_t* __x, uint32_t* __out) {
    uint32_t __r[5] = {0, 0, 0, 0, 0};
    for (int __i = 0; __i < _Bits; ++__i)
      if ((__x[__i / 32] >> (__i % 32)) & 1u)
        for (int __w = 0; __w < 5; ++__w) __r[__w] ^= __col[__i][__w];
    for (int __w = 0; __w < 5; ++__w) __out[__w] = __r[__w];
  }

  void _Tabulate(int __k, const uint32_t (*__col)[5]) {
    for (int __n = 0; __n < 40; ++__n)
      for (int __v = 0; __v < 16; ++__v) {
        uint32_t __r[5] = {0, 0, 0, 0, 0};
        for (int __b = 0; __b < 4; ++__b)
          if ((__v >> __b) & 1)
            for (int __w = 0; __w < 5; ++__w) __r[__w] ^= __col[__n * 4 + __b][__w];
        for (int __w = 0; __w < 5; ++__w) _Pow[__k][__n][__v][__w] = __r[__w];
      }
  }

  void _Apply(int __k, uint32_t* __v) const {
    uint32_t __r[5] = {0, 0, 0, 0, 0};
    for (int __n = 0; __n < 40; ++__n) {
      const uint32_t* __e = _Pow[__k][__n][(__v[__n / 8] >> ((__n % 8) * 4)) & 15u];
      for (int __w = 0; __w < 5; ++__w) __r[__w] ^= __e[__w];
    }
    for (int __w = 0; __w < 5; ++__w) __v[__w] = __r[__w];
  }
};

inline const _Xorwow_jumps& xorwow_jumps() {
  static const _Xorwow_jumps* __j = new _Xorwow_jumps();  // 1.7 MB, kept for the process
  return *__j;
}

// Advance the xorshift words by __n * 2^__shift steps (__shift: 0 for offsets, 67 for
// subsequences); the Weyl word is the caller's.
inline void xorwow_jump(uint32_t* __v, unsigned long long __n, int __shift) {
  if (__n == 0) return;
  // A few steps are cheaper stepped than tabled (and need no tables at all).
  if (__shift == 0 && __n < 64) {
    for (unsigned long long __i = 0; __i < __n; ++__i) _Xorwow_jumps::_Step(__v);
    return;
  }
  const _Xorwow_jumps& __j = xorwow_jumps();
  for (int __b = 0; __b < 64; ++__b)
    if ((__n >> __b) & 1ull) __j._Apply(__b + __shift, __v);
}

// ----------------------------------------------------------------------------- Philox4x32-10
inline uint4 philox4x32_10(uint4 __c, uint2 __k) {
  for (int __r = 0; __r < 10; ++__r) {
    if (__r) {
      __k.x += 0x9E3779B9u;
      __k.y += 0xBB67AE85u;
    }
    uint64_t __p0 = (uint64_t)0xD2511F53u * __c.x, __p1 = (uint64_t)0xCD9E8D57u * __c.z;
    __c = make_uint4((uint32_t)(__p1 >> 32) ^ __c.y ^ __k.x, (uint32_t)__p1,
                     (uint32_t)(__p0 >> 32) ^ __c.w ^ __k.y, (uint32_t)__p0);
  }
  return __c;
}

// The counter's low 64 bits advance by __n. cuRAND propagates a carry out of the low word into
// word y but tests the carry out of y as `y < added`, which misses it when the added high word
// wrapped to 0: kept as the GPU computes it (it matters only past 2^64 blocks).
inline void philox_advance(uint4& __c, unsigned long long __n) {
  uint32_t __lo = (uint32_t)__n, __hi = (uint32_t)(__n >> 32);
  __c.x += __lo;
  if (__c.x < __lo) ++__hi;
  __c.y += __hi;
  if (__hi <= __c.y) return;
  if (++__c.z) return;
  ++__c.w;
}

inline void philox_advance_high(uint4& __c, unsigned long long __n) {
  uint32_t __lo = (uint32_t)__n, __hi = (uint32_t)(__n >> 32);
  __c.z += __lo;
  if (__c.z < __lo) ++__hi;
  __c.w += __hi;
}

// ----------------------------------------------------------------------------- MRG32k3a
inline constexpr uint64_t _Mrg_m1 = 4294967087ull, _Mrg_m2 = 4294944443ull;

struct _Mrg_jumps {
  // _P1[__k], _P2[__k]: the one-step matrices of the two components raised to 2^__k mod m.
  static constexpr int _Powers = 64 + 76;
  uint64_t _P1[_Powers][3][3], _P2[_Powers][3][3];

  static void _Square(const uint64_t (*__a)[3], uint64_t (*__o)[3], uint64_t __m) {
    uint64_t __t[3][3];
    for (int __i = 0; __i < 3; ++__i)
      for (int __j = 0; __j < 3; ++__j) {
        unsigned __int128 __s = 0;
        for (int __l = 0; __l < 3; ++__l) __s += (unsigned __int128)__a[__i][__l] * __a[__l][__j];
        __t[__i][__j] = (uint64_t)(__s % __m);
      }
    for (int __i = 0; __i < 3; ++__i)
      for (int __j = 0; __j < 3; ++__j) __o[__i][__j] = __t[__i][__j];
  }

  _Mrg_jumps() {
    // s_new = (s1, s2, a12*s1 - a13*s0) and (s1, s2, a21*s2 - a23*s0), negatives taken mod m.
    const uint64_t __a1[3][3] = {{0, 1, 0}, {0, 0, 1}, {_Mrg_m1 - 810728u, 1403580u, 0}};
    const uint64_t __a2[3][3] = {{0, 1, 0}, {0, 0, 1}, {_Mrg_m2 - 1370589u, 0, 527612u}};
    for (int __i = 0; __i < 3; ++__i)
      for (int __j = 0; __j < 3; ++__j) {
        _P1[0][__i][__j] = __a1[__i][__j];
        _P2[0][__i][__j] = __a2[__i][__j];
      }
    for (int __k = 1; __k < _Powers; ++__k) {
      _Square(_P1[__k - 1], _P1[__k], _Mrg_m1);
      _Square(_P2[__k - 1], _P2[__k], _Mrg_m2);
    }
  }

  static void _Apply(const uint64_t (*__a)[3], uint32_t* __s, uint64_t __m) {
    uint64_t __r[3];
    for (int __i = 0; __i < 3; ++__i) {
      unsigned __int128 __t = 0;
      for (int __l = 0; __l < 3; ++__l) __t += (unsigned __int128)__a[__i][__l] * __s[__l];
      __r[__i] = (uint64_t)(__t % __m);
    }
    for (int __i = 0; __i < 3; ++__i) __s[__i] = (uint32_t)__r[__i];
  }
};

inline const _Mrg_jumps& mrg_jumps() {
  static const _Mrg_jumps* __j = new _Mrg_jumps();
  return *__j;
}

inline void mrg_jump(uint32_t* __s1, uint32_t* __s2, unsigned long long __n, int __shift) {
  if (__n == 0) return;
  const _Mrg_jumps& __j = mrg_jumps();
  for (int __b = 0; __b < 64; ++__b)
    if ((__n >> __b) & 1ull) {
      _Mrg_jumps::_Apply(__j._P1[__b + __shift], __s1, _Mrg_m1);
      _Mrg_jumps::_Apply(__j._P2[__b + __shift], __s2, _Mrg_m2);
    }
}

// One step; the combined value in [1, m1] as a double (what cuRAND's conversions scale).
inline double mrg_step(uint32_t* __s1, uint32_t* __s2) {
  uint64_t __p1 = ((uint64_t)1403580u * __s1[1] + (uint64_t)810728u * (_Mrg_m1 - __s1[0])) % _Mrg_m1;
  uint64_t __p2 = ((uint64_t)527612u * __s2[2] + (uint64_t)1370589u * (_Mrg_m2 - __s2[0])) % _Mrg_m2;
  __s1[0] = __s1[1]; __s1[1] = __s1[2]; __s1[2] = (uint32_t)__p1;
  __s2[0] = __s2[1]; __s2[1] = __s2[2]; __s2[2] = (uint32_t)__p2;
  return __p1 > __p2 ? (double)(__p1 - __p2) : (double)(__p1 + _Mrg_m1 - __p2);
}

// ----------------------------------------------------------------------------- conversions
// cuRAND's constants are decimal literals; 2^-32 as a float literal is not 2^-32 exactly.
inline constexpr float _Inv32f = 2.3283064e-10f;
inline constexpr float _Inv32_2pi = 2.3283064e-10f * 6.2831855f;
inline constexpr float _Two_pi_f = 6.2831855f;
inline constexpr double _Inv32d = 2.3283064365386963e-10;
inline constexpr double _Inv53d = 1.1102230246251565e-16;
inline constexpr double _Mrg_norm = 2.3283065498378288e-10;
inline constexpr double _Mrg_bits = 1.000000048662;

// nvcc contracts `x * C + C/2` into one fused multiply-add (its default -fmad=true).
inline float uniform_from(uint32_t __x) { return fmaf((float)__x, _Inv32f, _Inv32f / 2.0f); }
inline double uniform_double_from(uint32_t __x) { return fma((double)__x, _Inv32d, _Inv32d); }
inline double uniform_double_hq(uint32_t __x, uint32_t __y) {
  uint64_t __z = (uint64_t)__x ^ ((uint64_t)__y << 21);
  return fma((double)__z, _Inv53d, _Inv53d / 2.0);
}

inline float2 box_muller(uint32_t __x, uint32_t __y) {
  float __u = fmaf((float)__x, _Inv32f, _Inv32f / 2.0f);
  float __v = fmaf((float)__y, _Inv32_2pi, _Inv32_2pi / 2.0f);
  float __s = sqrtf(-2.0f * logf(__u));
  float2 __r;
  __sincosf(__v, &__r.x, &__r.y);
  __r.x *= __s;
  __r.y *= __s;
  return __r;
}

inline double2 box_muller_double(uint32_t __x0, uint32_t __x1, uint32_t __y0, uint32_t __y1) {
  uint64_t __zx = (uint64_t)__x0 ^ ((uint64_t)__x1 << 21);
  uint64_t __zy = (uint64_t)__y0 ^ ((uint64_t)__y1 << 21);
  double __u = fma((double)__zx, _Inv53d, _Inv53d / 2.0);
  double __v = fma((double)__zy, _Inv53d * 2.0, _Inv53d);
  double __s = sqrt(-2.0 * log(__u));
  double2 __r;
  ::sincospi(__v, &__r.x, &__r.y);
  __r.x *= __s;
  __r.y *= __s;
  return __r;
}

}  // namespace cudashim::curand
