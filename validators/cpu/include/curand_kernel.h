// cudashim: the cuRAND device API (curand_kernel.h) for the pseudorandom generators XORWOW
// (curandState_t), Philox4_32_10 and MRG32k3a, with cuRAND's sequences for the same seed,
// subsequence and offset (the algorithms are in cudashim/curand_engines.h, written from their
// published descriptions). The states have cuRAND's sizes, so `n * sizeof(curandState)` buffers
// hold the same count. Not here (a compile error reported `needs_gpu`, naming the function):
// the quasirandom Sobol states, MTGP32, discrete distributions, and curand_poisson for lambda in
// [64, 4000], which stops the run as `needs_gpu` (cuRAND's rejection method there uses the GPU's
// approximate intrinsics; its values could not match).
#pragma once
// The include guard CUDA's own header defines: programs test it to know the header is in.
#define CURAND_KERNEL_H_
#include <cudashim/curand_engines.h>
#include <curand.h>

#define EXTRA_FLAG_NORMAL 0x00000001
#define EXTRA_FLAG_LOG_NORMAL 0x00000002
#define CURAND_2POW32_INV (2.3283064e-10f)
#define CURAND_2POW32_INV_DOUBLE (2.3283064365386963e-10)
#define CURAND_2POW53_INV_DOUBLE (1.1102230246251565e-16)
#define CURAND_2PI (6.2831855f)
#define CURAND_PI_DOUBLE (3.1415926535897932)
#define CURAND_SQRT2 (-1.4142135f)
#define CURAND_SQRT2_DOUBLE (-1.4142135623730951)

// Field order and types as cuRAND's, for the same sizes and alignment.
struct curandStateXORWOW {
  unsigned int __d, __v[5];
  int __bm_flag, __bm_flag_double;
  float __bm_extra;
  double __bm_extra_double;
};
typedef struct curandStateXORWOW curandStateXORWOW_t;
typedef struct curandStateXORWOW curandState_t;
typedef struct curandStateXORWOW curandState;

struct curandStatePhilox4_32_10 {
  uint4 __ctr, __output;
  uint2 __key;
  unsigned int __state;
  int __bm_flag, __bm_flag_double;
  float __bm_extra;
  double __bm_extra_double;
};
typedef struct curandStatePhilox4_32_10 curandStatePhilox4_32_10_t;

struct curandStateMRG32k3a {
  unsigned int __s1[3], __s2[3];
  int __bm_flag, __bm_flag_double;
  float __bm_extra;
  double __bm_extra_double;
};
typedef struct curandStateMRG32k3a curandStateMRG32k3a_t;

namespace cudashim::curand {
template <class _St>
inline void _Clear_extra(_St* __s) {
  __s->__bm_flag = 0;
  __s->__bm_flag_double = 0;
  __s->__bm_extra = 0.f;
  __s->__bm_extra_double = 0.;
}
}  // namespace cudashim::curand

// ----------------------------------------------------------------------------- XORWOW
inline void skipahead(unsigned long long __n, curandStateXORWOW_t* __s) {
  ::cudashim::curand::xorwow_jump(__s->__v, __n, 0);
  __s->__d += 362437u * (unsigned int)__n;
}
// A subsequence is 2^67 steps: the Weyl word moves by a multiple of 2^32, i.e. not at all.
inline void skipahead_sequence(unsigned long long __n, curandStateXORWOW_t* __s) {
  ::cudashim::curand::xorwow_jump(__s->__v, __n, 67);
}
inline void curand_init(unsigned long long __seed, unsigned long long __subsequence,
                        unsigned long long __offset, curandStateXORWOW_t* __s) {
  // cuRAND's seed scrambling: each half salted, then multiplied by an odd constant.
  unsigned int __t0 = 1099087573u * ((unsigned int)__seed ^ 0xaad26b49u);
  unsigned int __t1 = 2591861531u * ((unsigned int)(__seed >> 32) ^ 0xf7dcefddu);
  __s->__d = 6615241u + __t1 + __t0;
  __s->__v[0] = 123456789u + __t0;
  __s->__v[1] = 362436069u ^ __t0;
  __s->__v[2] = 521288629u + __t1;
  __s->__v[3] = 88675123u ^ __t1;
  __s->__v[4] = 5783321u + __t0;
  skipahead_sequence(__subsequence, __s);
  skipahead(__offset, __s);
  ::cudashim::curand::_Clear_extra(__s);
}
inline unsigned int curand(curandStateXORWOW_t* __s) {
  unsigned int __t = __s->__v[0] ^ (__s->__v[0] >> 2);
  __s->__v[0] = __s->__v[1];
  __s->__v[1] = __s->__v[2];
  __s->__v[2] = __s->__v[3];
  __s->__v[3] = __s->__v[4];
  __s->__v[4] = (__s->__v[4] ^ (__s->__v[4] << 4)) ^ (__t ^ (__t << 1));
  __s->__d += 362437u;
  return __s->__v[4] + __s->__d;
}

// ----------------------------------------------------------------------------- Philox4_32_10
// `__output` always holds the block the next value comes from; `__state` is the position in it.
inline void skipahead(unsigned long long __n, curandStatePhilox4_32_10_t* __s) {
  __s->__state += (unsigned int)(__n & 3);
  __n /= 4;
  if (__s->__state > 3) {
    __n += 1;
    __s->__state -= 4;
  }
  ::cudashim::curand::philox_advance(__s->__ctr, __n);
  __s->__output = ::cudashim::curand::philox4x32_10(__s->__ctr, __s->__key);
}
// A subsequence is 2^66 values: the counter's high 64 bits.
inline void skipahead_sequence(unsigned long long __n, curandStatePhilox4_32_10_t* __s) {
  ::cudashim::curand::philox_advance_high(__s->__ctr, __n);
  __s->__output = ::cudashim::curand::philox4x32_10(__s->__ctr, __s->__key);
}
inline void curand_init(unsigned long long __seed, unsigned long long __subsequence,
                        unsigned long long __offset, curandStatePhilox4_32_10_t* __s) {
  __s->__ctr = make_uint4(0, 0, 0, 0);
  __s->__key = make_uint2((unsigned int)__seed, (unsigned int)(__seed >> 32));
  __s->__state = 0;
  ::cudashim::curand::_Clear_extra(__s);
  skipahead_sequence(__subsequence, __s);
  skipahead(__offset, __s);
}
inline unsigned int curand(curandStatePhilox4_32_10_t* __s) {
  const unsigned int __w[4] = {__s->__output.x, __s->__output.y, __s->__output.z, __s->__output.w};
  unsigned int __r = __w[__s->__state & 3];
  if (++__s->__state == 4) {
    ::cudashim::curand::philox_advance(__s->__ctr, 1);
    __s->__output = ::cudashim::curand::philox4x32_10(__s->__ctr, __s->__key);
    __s->__state = 0;
  }
  return __r;
}
// The next four values, from wherever the state stands in its block.
inline uint4 curand4(curandStatePhilox4_32_10_t* __s) {
  const uint4 __a = __s->__output;
  ::cudashim::curand::philox_advance(__s->__ctr, 1);
  __s->__output = ::cudashim::curand::philox4x32_10(__s->__ctr, __s->__key);
  const unsigned int __w[8] = {__a.x, __a.y, __a.z, __a.w, __s->__output.x, __s->__output.y,
                               __s->__output.z, __s->__output.w};
  unsigned int __p = __s->__state & 3;
  return make_uint4(__w[__p], __w[__p + 1], __w[__p + 2], __w[__p + 3]);
}

// ----------------------------------------------------------------------------- MRG32k3a
inline void skipahead(unsigned long long __n, curandStateMRG32k3a_t* __s) {
  ::cudashim::curand::mrg_jump(__s->__s1, __s->__s2, __n, 0);
}
// curand_init's subsequences are 2^76 values; skipahead_sequence's 2^127.
inline void skipahead_subsequence(unsigned long long __n, curandStateMRG32k3a_t* __s) {
  ::cudashim::curand::mrg_jump(__s->__s1, __s->__s2, __n, 76);
}
inline void skipahead_sequence(unsigned long long __n, curandStateMRG32k3a_t* __s) {
  ::cudashim::curand::mrg_jump(__s->__s1, __s->__s2, __n, 127);
}
inline void curand_init(unsigned long long __seed, unsigned long long __subsequence,
                        unsigned long long __offset, curandStateMRG32k3a_t* __s) {
  using ::cudashim::curand::_Mrg_m1;
  using ::cudashim::curand::_Mrg_m2;
  for (int __i = 0; __i < 3; ++__i) __s->__s1[__i] = __s->__s2[__i] = 12345u;
  if (__seed != 0ull) {
    // Each word of the default seed times a salted half of the seed, modulo its component's m.
    unsigned long long __x1 = (unsigned int)__seed ^ 0x55555555u;
    unsigned long long __x2 = (unsigned int)(__seed >> 32) ^ 0xAAAAAAAAu;
    __s->__s1[0] = (unsigned int)(__x1 * 12345u % _Mrg_m1);
    __s->__s1[1] = (unsigned int)(__x2 * 12345u % _Mrg_m1);
    __s->__s1[2] = (unsigned int)(__x1 * 12345u % _Mrg_m1);
    __s->__s2[0] = (unsigned int)(__x2 * 12345u % _Mrg_m2);
    __s->__s2[1] = (unsigned int)(__x1 * 12345u % _Mrg_m2);
    __s->__s2[2] = (unsigned int)(__x2 * 12345u % _Mrg_m2);
  }
  skipahead_subsequence(__subsequence, __s);
  skipahead(__offset, __s);
  ::cudashim::curand::_Clear_extra(__s);
}
inline unsigned int curand(curandStateMRG32k3a_t* __s) {
  return (unsigned int)(::cudashim::curand::mrg_step(__s->__s1, __s->__s2) *
                        ::cudashim::curand::_Mrg_bits);
}

// ----------------------------------------------------------------------------- uniform
inline float curand_uniform(curandStateXORWOW_t* __s) {
  return ::cudashim::curand::uniform_from(curand(__s));
}
inline float curand_uniform(curandStatePhilox4_32_10_t* __s) {
  return ::cudashim::curand::uniform_from(curand(__s));
}
inline float curand_uniform(curandStateMRG32k3a_t* __s) {
  return (float)(::cudashim::curand::mrg_step(__s->__s1, __s->__s2) * ::cudashim::curand::_Mrg_norm);
}
inline double curand_uniform_double(curandStateXORWOW_t* __s) {
  unsigned int __x = curand(__s);
  unsigned int __y = curand(__s);
  return ::cudashim::curand::uniform_double_hq(__x, __y);
}
// Philox's double takes one 32-bit value (curand_uniform2_double takes two per double).
inline double curand_uniform_double(curandStatePhilox4_32_10_t* __s) {
  return ::cudashim::curand::uniform_double_from(curand(__s));
}
inline double curand_uniform_double(curandStateMRG32k3a_t* __s) {
  return ::cudashim::curand::mrg_step(__s->__s1, __s->__s2) * ::cudashim::curand::_Mrg_norm;
}
inline float4 curand_uniform4(curandStatePhilox4_32_10_t* __s) {
  uint4 __x = curand4(__s);
  return make_float4(::cudashim::curand::uniform_from(__x.x), ::cudashim::curand::uniform_from(__x.y),
                     ::cudashim::curand::uniform_from(__x.z), ::cudashim::curand::uniform_from(__x.w));
}
inline double2 curand_uniform2_double(curandStatePhilox4_32_10_t* __s) {
  uint4 __x = curand4(__s);
  return make_double2(::cudashim::curand::uniform_double_hq(__x.x, __x.y),
                      ::cudashim::curand::uniform_double_hq(__x.z, __x.w));
}

// ----------------------------------------------------------------------------- normal
namespace cudashim::curand {
// Box-Muller pairs: the float pair from two 32-bit values, the double pair from four.
inline float2 _Pair(curandStateXORWOW_t* __s) {
  unsigned int __x = ::curand(__s);
  unsigned int __y = ::curand(__s);
  return box_muller(__x, __y);
}
inline float2 _Pair(curandStatePhilox4_32_10_t* __s) {
  unsigned int __x = ::curand(__s);
  unsigned int __y = ::curand(__s);
  return box_muller(__x, __y);
}
// MRG32k3a's pair comes from its float uniforms, the angle scaled by a float 2*pi.
inline float2 _Pair(curandStateMRG32k3a_t* __s) {
  float __x = ::curand_uniform(__s);
  float __y = ::curand_uniform(__s) * _Two_pi_f;
  float __r = sqrtf(-2.0f * logf(__x));
  float2 __p;
  __sincosf(__y, &__p.x, &__p.y);
  __p.x *= __r;
  __p.y *= __r;
  return __p;
}
inline double2 _Pair_double(curandStateXORWOW_t* __s) {
  unsigned int __x0 = ::curand(__s);
  unsigned int __x1 = ::curand(__s);
  unsigned int __y0 = ::curand(__s);
  unsigned int __y1 = ::curand(__s);
  return box_muller_double(__x0, __x1, __y0, __y1);
}
inline double2 _Pair_double(curandStatePhilox4_32_10_t* __s) {
  uint4 __x = ::curand4(__s);
  return box_muller_double(__x.x, __x.y, __x.z, __x.w);
}
inline double2 _Pair_double(curandStateMRG32k3a_t* __s) {
  double __x = ::curand_uniform_double(__s);
  double __y = ::curand_uniform_double(__s) * 2.0;
  double __r = sqrt(-2.0 * log(__x));
  double2 __p;
  ::sincospi(__y, &__p.x, &__p.y);
  __p.x *= __r;
  __p.y *= __r;
  return __p;
}
// One value of a pair per call, the other kept in the state for the next call (cuRAND's cache;
// a log-normal call uses the same slot with its own flag, so the two do not share a pair).
template <class _St>
inline float _Cached(_St* __s, int __flag, float __mean, float __stddev) {
  if (__s->__bm_flag != __flag) {
    float2 __v = _Pair(__s);
    if (__flag == EXTRA_FLAG_LOG_NORMAL) {
      __v.x = expf(fmaf(__stddev, __v.x, __mean));
      __v.y = expf(fmaf(__stddev, __v.y, __mean));
    }
    __s->__bm_extra = __v.y;
    __s->__bm_flag = __flag;
    return __v.x;
  }
  __s->__bm_flag = 0;
  return __s->__bm_extra;
}
template <class _St>
inline double _Cached_double(_St* __s, int __flag, double __mean, double __stddev) {
  if (__s->__bm_flag_double != __flag) {
    double2 __v = _Pair_double(__s);
    if (__flag == EXTRA_FLAG_LOG_NORMAL) {
      __v.x = exp(fma(__stddev, __v.x, __mean));
      __v.y = exp(fma(__stddev, __v.y, __mean));
    }
    __s->__bm_extra_double = __v.y;
    __s->__bm_flag_double = __flag;
    return __v.x;
  }
  __s->__bm_flag_double = 0;
  return __s->__bm_extra_double;
}
template <class _St>
inline unsigned int _Poisson(_St* __s, double __lambda) {
  if (__lambda < 64) {
    // Knuth: multiply uniforms into e^lambda until the product drops to 1.
    unsigned int __k = 0;
    float __p = expf((float)__lambda);
    do {
      ++__k;
      __p *= ::curand_uniform(__s);
    } while (__p > 1.0);
    return __k - 1;
  }
  if (__lambda > 4000)
    return (unsigned int)(fma(sqrt(__lambda), _Cached_double(__s, EXTRA_FLAG_NORMAL, 0.0, 1.0), __lambda) + 0.5);
  ::cudashim::fatal("cudashim: needs a GPU: curand_poisson with lambda %g (cuRAND's method for lambda"
                    " in [64, 4000] is outside the CPU shim's cuRAND subset)", __lambda);
}
}  // namespace cudashim::curand

#define _CUDASHIM_CURAND_DISTRIBUTIONS(_St)                                                      \
  inline float curand_normal(_St* __s) {                                                         \
    return ::cudashim::curand::_Cached(__s, EXTRA_FLAG_NORMAL, 0.f, 1.f);                        \
  }                                                                                              \
  inline double curand_normal_double(_St* __s) {                                                 \
    return ::cudashim::curand::_Cached_double(__s, EXTRA_FLAG_NORMAL, 0.0, 1.0);                 \
  }                                                                                              \
  inline float2 curand_normal2(_St* __s) { return ::cudashim::curand::_Pair(__s); }              \
  inline double2 curand_normal2_double(_St* __s) { return ::cudashim::curand::_Pair_double(__s); } \
  inline float curand_log_normal(_St* __s, float __mean, float __stddev) {                      \
    return ::cudashim::curand::_Cached(__s, EXTRA_FLAG_LOG_NORMAL, __mean, __stddev);            \
  }                                                                                              \
  inline double curand_log_normal_double(_St* __s, double __mean, double __stddev) {            \
    return ::cudashim::curand::_Cached_double(__s, EXTRA_FLAG_LOG_NORMAL, __mean, __stddev);     \
  }                                                                                              \
  inline float2 curand_log_normal2(_St* __s, float __mean, float __stddev) {                    \
    float2 __v = ::cudashim::curand::_Pair(__s);                                                 \
    return make_float2(expf(fmaf(__stddev, __v.x, __mean)), expf(fmaf(__stddev, __v.y, __mean))); \
  }                                                                                              \
  inline double2 curand_log_normal2_double(_St* __s, double __mean, double __stddev) {          \
    double2 __v = ::cudashim::curand::_Pair_double(__s);                                         \
    return make_double2(exp(fma(__stddev, __v.x, __mean)), exp(fma(__stddev, __v.y, __mean)));  \
  }                                                                                              \
  inline unsigned int curand_poisson(_St* __s, double __lambda) {                               \
    return ::cudashim::curand::_Poisson(__s, __lambda);                                          \
  }
_CUDASHIM_CURAND_DISTRIBUTIONS(curandStateXORWOW_t)
_CUDASHIM_CURAND_DISTRIBUTIONS(curandStatePhilox4_32_10_t)
_CUDASHIM_CURAND_DISTRIBUTIONS(curandStateMRG32k3a_t)
#undef _CUDASHIM_CURAND_DISTRIBUTIONS

inline float4 curand_normal4(curandStatePhilox4_32_10_t* __s) {
  uint4 __x = curand4(__s);
  float2 __a = ::cudashim::curand::box_muller(__x.x, __x.y);
  float2 __b = ::cudashim::curand::box_muller(__x.z, __x.w);
  return make_float4(__a.x, __a.y, __b.x, __b.y);
}
inline float4 curand_log_normal4(curandStatePhilox4_32_10_t* __s, float __mean, float __stddev) {
  float4 __v = curand_normal4(__s);
  return make_float4(expf(fmaf(__stddev, __v.x, __mean)), expf(fmaf(__stddev, __v.y, __mean)),
                     expf(fmaf(__stddev, __v.z, __mean)), expf(fmaf(__stddev, __v.w, __mean)));
}
inline uint4 curand_poisson4(curandStatePhilox4_32_10_t* __s, double __lambda) {
  uint4 __r;
  if (__lambda > 4000) {
    // Two fresh pairs, the state's cached normal left as it was.
    const double __q = sqrt(__lambda);
    uint4 __a = curand4(__s), __b = curand4(__s);
    double2 __u = ::cudashim::curand::box_muller_double(__a.x, __a.y, __a.z, __a.w);
    double2 __v = ::cudashim::curand::box_muller_double(__b.x, __b.y, __b.z, __b.w);
    return make_uint4((unsigned int)(fma(__q, __u.x, __lambda) + 0.5), (unsigned int)(fma(__q, __u.y, __lambda) + 0.5),
                      (unsigned int)(fma(__q, __v.x, __lambda) + 0.5), (unsigned int)(fma(__q, __v.y, __lambda) + 0.5));
  }
  __r.x = curand_poisson(__s, __lambda);
  __r.y = curand_poisson(__s, __lambda);
  __r.z = curand_poisson(__s, __lambda);
  __r.w = curand_poisson(__s, __lambda);
  return __r;
}

#include <cudashim/curand_host.h>
