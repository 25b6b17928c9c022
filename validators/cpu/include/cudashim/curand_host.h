// cudashim: the cuRAND host API's functions (declared types in curand.h), over the device
// API's generators. A generator draws one sequence: subsequence 0 of its seed, from its offset,
// each call continuing where the last one stopped. cuRAND's GPU generators spread the
// sequence over many subsequences in an ordering of their own (CURAND_ORDERING_*), so the
// values here have the same distribution in another order (validators/cpu/README.md).
//
// A generation on a stream being captured (curandSetStream) is a node of the capture, as the
// generator's kernels are on a GPU: each launch of the graph draws the next values of the
// generator's one sequence (the node holds the generator, kept alive past its destruction while
// a graph needs it); a host generator (curandCreateGeneratorHost) works on the host, at the call.
#pragma once
#include <curand_kernel.h>

#include <atomic>
#include <memory>

struct curandGenerator_st {
  curandRngType_t __type;
  unsigned long long __seed = 0, __offset = 0;
  curandOrdering_t __ordering = CURAND_ORDERING_PSEUDO_DEFAULT;
  cudaStream_t __stream = 0;
  bool __fresh = true;  // seed or offset changed since the states were last set
  bool __host = false;  // curandCreateGeneratorHost
  std::atomic<int> __refs{1};  // the program's handle and the captured generations that use it
  curandStateXORWOW_t __xorwow;
  curandStatePhilox4_32_10_t __philox;
  curandStateMRG32k3a_t __mrg;
};

namespace cudashim {
// The runtime's (cudashim_runtime.cpp): a library call's work as a node of the capture `__s` is in.
cudaError_t capture_library_call(cudaStream_t __s, _Closure* __w, const char* __library, const char* __call);
}  // namespace cudashim

namespace cudashim::curand {
inline bool _Supported(curandRngType_t __t) {
  return __t == CURAND_RNG_PSEUDO_DEFAULT || __t == CURAND_RNG_PSEUDO_XORWOW ||
         __t == CURAND_RNG_PSEUDO_PHILOX4_32_10 || __t == CURAND_RNG_PSEUDO_MRG32K3A;
}
inline const char* _Type_name(curandRngType_t __t) {
  switch (__t) {
    case CURAND_RNG_TEST: return "CURAND_RNG_TEST";
    case CURAND_RNG_PSEUDO_MTGP32: return "CURAND_RNG_PSEUDO_MTGP32";
    case CURAND_RNG_PSEUDO_MT19937: return "CURAND_RNG_PSEUDO_MT19937";
    case CURAND_RNG_QUASI_DEFAULT: return "CURAND_RNG_QUASI_DEFAULT";
    case CURAND_RNG_QUASI_SOBOL32: return "CURAND_RNG_QUASI_SOBOL32";
    case CURAND_RNG_QUASI_SCRAMBLED_SOBOL32: return "CURAND_RNG_QUASI_SCRAMBLED_SOBOL32";
    case CURAND_RNG_QUASI_SOBOL64: return "CURAND_RNG_QUASI_SOBOL64";
    case CURAND_RNG_QUASI_SCRAMBLED_SOBOL64: return "CURAND_RNG_QUASI_SCRAMBLED_SOBOL64";
    default: return "an unknown generator type";
  }
}
inline curandStatus_t _Create(curandGenerator_t* __g, curandRngType_t __t, bool __host = false) {
  if (__g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
  if (!_Supported(__t)) {
    if ((int)__t == CURAND_RNG_TEST || ((int)__t > 100 && (int)__t <= 204)) {
      fflush(stdout);
      ::cudashim::fatal("cudashim: needs a GPU: curandCreateGenerator(%s) (outside the CPU shim's"
                        " cuRAND subset: XORWOW, PHILOX4_32_10, MRG32K3A)", _Type_name(__t));
    }
    return CURAND_STATUS_TYPE_ERROR;
  }
  *__g = new curandGenerator_st{};
  (*__g)->__type = __t;
  (*__g)->__host = __host;
  return CURAND_STATUS_SUCCESS;
}
inline void _Release(curandGenerator_t __g) {
  if (--__g->__refs == 0) delete __g;
}
// Call __f with the generator's device-API state, set from seed and offset when they changed.
template <class _Fn>
inline void _On_state(curandGenerator_t __g, const _Fn& __f) {
  switch (__g->__type) {
    case CURAND_RNG_PSEUDO_PHILOX4_32_10:
      if (__g->__fresh) ::curand_init(__g->__seed, 0, __g->__offset, &__g->__philox);
      __g->__fresh = false;
      __f(&__g->__philox);
      break;
    case CURAND_RNG_PSEUDO_MRG32K3A:
      if (__g->__fresh) ::curand_init(__g->__seed, 0, __g->__offset, &__g->__mrg);
      __g->__fresh = false;
      __f(&__g->__mrg);
      break;
    default:
      if (__g->__fresh) ::curand_init(__g->__seed, 0, __g->__offset, &__g->__xorwow);
      __g->__fresh = false;
      __f(&__g->__xorwow);
      break;
  }
}
// A generation: now, or as a node of the capture of the generator's stream (its arguments by
// value: the work runs when the graph does).
template <class _Fn>
inline curandStatus_t _With_state(curandGenerator_t __g, _Fn&& __f, const char* __call = __builtin_FUNCTION()) {
  if (__g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
  if (__g->__host || !::cudashim::capturing(__g->__stream)) {
    ::cudashim::_Library_access __da("curand", __call);
    _On_state(__g, __f);
    return CURAND_STATUS_SUCCESS;
  }
  ++__g->__refs;
  std::shared_ptr<curandGenerator_st> __keep(__g, _Release);
  auto __work = [__keep, __f = std::decay_t<_Fn>(std::forward<_Fn>(__f))] { _On_state(__keep.get(), __f); };
  auto* __w = new ::cudashim::_Closure_of<decltype(__work)>(std::move(__work));
  return ::cudashim::capture_library_call(__g->__stream, __w, "curand", __call) == cudaSuccess ? CURAND_STATUS_SUCCESS
                                                                                              : CURAND_STATUS_LAUNCH_FAILURE;
}
// Normal values come in Box-Muller pairs, so cuRAND asks for an even count.
template <class _Tp, class _Pairs>
inline curandStatus_t _Pairs_into(curandGenerator_t __g, _Tp* __out, size_t __n, _Pairs&& __pair,
                                  const char* __call = __builtin_FUNCTION()) {
  if (__g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
  if (__n % 2 != 0) return CURAND_STATUS_LENGTH_NOT_MULTIPLE;
  return _With_state(
      __g,
      [=](auto* __s) {
        for (size_t __i = 0; __i < __n; __i += 2) __pair(__s, __out + __i);
      },
      __call);
}
}  // namespace cudashim::curand

inline curandStatus_t curandCreateGenerator(curandGenerator_t* __g, curandRngType_t __t) {
  return ::cudashim::curand::_Create(__g, __t);
}
inline curandStatus_t curandCreateGeneratorHost(curandGenerator_t* __g, curandRngType_t __t) {
  return ::cudashim::curand::_Create(__g, __t, true);
}
inline curandStatus_t curandDestroyGenerator(curandGenerator_t __g) {
  if (__g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
  ::cudashim::curand::_Release(__g);
  return CURAND_STATUS_SUCCESS;
}
inline curandStatus_t curandGetVersion(int* __v) {
  if (__v == nullptr) return CURAND_STATUS_OUT_OF_RANGE;
  *__v = CURAND_VERSION;
  return CURAND_STATUS_SUCCESS;
}
inline curandStatus_t curandGetProperty(libraryPropertyType __t, int* __v) {
  if (__v == nullptr) return CURAND_STATUS_OUT_OF_RANGE;
  *__v = __t == MAJOR_VERSION ? CURAND_VER_MAJOR : __t == MINOR_VERSION ? CURAND_VER_MINOR : CURAND_VER_PATCH;
  return CURAND_STATUS_SUCCESS;
}
inline curandStatus_t curandSetStream(curandGenerator_t __g, cudaStream_t __s) {
  if (__g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
  __g->__stream = __s;
  return CURAND_STATUS_SUCCESS;
}
inline curandStatus_t curandSetPseudoRandomGeneratorSeed(curandGenerator_t __g, unsigned long long __seed) {
  if (__g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
  __g->__seed = __seed;
  __g->__fresh = true;
  return CURAND_STATUS_SUCCESS;
}
inline curandStatus_t curandSetGeneratorOffset(curandGenerator_t __g, unsigned long long __offset) {
  if (__g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
  __g->__offset = __offset;
  __g->__fresh = true;
  return CURAND_STATUS_SUCCESS;
}
// Recorded only: the order of the values here is one sequence whatever the ordering.
inline curandStatus_t curandSetGeneratorOrdering(curandGenerator_t __g, curandOrdering_t __o) {
  if (__g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
  if (__o < CURAND_ORDERING_PSEUDO_BEST || __o > CURAND_ORDERING_PSEUDO_DYNAMIC) return CURAND_STATUS_OUT_OF_RANGE;
  __g->__ordering = __o;
  return CURAND_STATUS_SUCCESS;
}
inline curandStatus_t curandGenerateSeeds(curandGenerator_t __g) {
  return ::cudashim::curand::_With_state(__g, [](auto*) {});
}
inline curandStatus_t curandGenerate(curandGenerator_t __g, unsigned int* __out, size_t __n) {
  return ::cudashim::curand::_With_state(__g, [=](auto* __s) {
    for (size_t __i = 0; __i < __n; ++__i) __out[__i] = ::curand(__s);
  });
}
inline curandStatus_t curandGenerateUniform(curandGenerator_t __g, float* __out, size_t __n) {
  return ::cudashim::curand::_With_state(__g, [=](auto* __s) {
    for (size_t __i = 0; __i < __n; ++__i) __out[__i] = ::curand_uniform(__s);
  });
}
inline curandStatus_t curandGenerateUniformDouble(curandGenerator_t __g, double* __out, size_t __n) {
  return ::cudashim::curand::_With_state(__g, [=](auto* __s) {
    for (size_t __i = 0; __i < __n; ++__i) __out[__i] = ::curand_uniform_double(__s);
  });
}
inline curandStatus_t curandGenerateNormal(curandGenerator_t __g, float* __out, size_t __n, float __mean,
                                           float __stddev) {
  return ::cudashim::curand::_Pairs_into(__g, __out, __n, [=](auto* __s, float* __o) {
    float2 __v = ::curand_normal2(__s);
    __o[0] = fmaf(__stddev, __v.x, __mean);
    __o[1] = fmaf(__stddev, __v.y, __mean);
  });
}
inline curandStatus_t curandGenerateNormalDouble(curandGenerator_t __g, double* __out, size_t __n,
                                                 double __mean, double __stddev) {
  return ::cudashim::curand::_Pairs_into(__g, __out, __n, [=](auto* __s, double* __o) {
    double2 __v = ::curand_normal2_double(__s);
    __o[0] = fma(__stddev, __v.x, __mean);
    __o[1] = fma(__stddev, __v.y, __mean);
  });
}
inline curandStatus_t curandGenerateLogNormal(curandGenerator_t __g, float* __out, size_t __n, float __mean,
                                              float __stddev) {
  return ::cudashim::curand::_Pairs_into(__g, __out, __n, [=](auto* __s, float* __o) {
    float2 __v = ::curand_log_normal2(__s, __mean, __stddev);
    __o[0] = __v.x;
    __o[1] = __v.y;
  });
}
inline curandStatus_t curandGenerateLogNormalDouble(curandGenerator_t __g, double* __out, size_t __n,
                                                    double __mean, double __stddev) {
  return ::cudashim::curand::_Pairs_into(__g, __out, __n, [=](auto* __s, double* __o) {
    double2 __v = ::curand_log_normal2_double(__s, __mean, __stddev);
    __o[0] = __v.x;
    __o[1] = __v.y;
  });
}
inline curandStatus_t curandGeneratePoisson(curandGenerator_t __g, unsigned int* __out, size_t __n,
                                            double __lambda) {
  if (!(__lambda > 0)) return CURAND_STATUS_OUT_OF_RANGE;
  return ::cudashim::curand::_With_state(__g, [=](auto* __s) {
    for (size_t __i = 0; __i < __n; ++__i) __out[__i] = ::curand_poisson(__s, __lambda);
  });
}
