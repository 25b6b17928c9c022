// cudashim: the host side of CUB's public vocabulary (macros, KeyValuePair, DoubleBuffer, the
// operator functors, Traits). Every identifier that is not CUB's own public name is reserved
// (_Tp, __n, ...), so a program's -DN=... size macros cannot collide with it.
#ifndef CUDASHIM_CUB_CORE_CUH
#define CUDASHIM_CUB_CORE_CUH

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

// Same version as the toolkit's CCCL (3.0.1) so version checks take their modern paths.
#ifndef CUB_VERSION
#define CUB_VERSION 300001
#define CUB_MAJOR_VERSION 3
#define CUB_MINOR_VERSION 0
#define CUB_SUBMINOR_VERSION 1
#define CUB_PATCH_NUMBER 0
#endif
#define CUDASHIM_CUB 1

#define CUB_NAMESPACE_BEGIN namespace cub {
#define CUB_NAMESPACE_END }
#define CUB_NS_PREFIX
#define CUB_NS_POSTFIX
#define CUB_NS_QUALIFIER ::cub
#define CUB_RUNTIME_FUNCTION
#define CUB_RUNTIME_ENABLED 1
#define CUB_HOST_FUNCTION
#define CUB_DEVICE_FUNCTION
#define CUB_QUALIFIER
#define CUB_INLINE inline
#define CUB_PTX_ARCH 800
#define CUB_PTX_WARP_THREADS 32
#define CUB_WARP_THREADS(_Ap) 32
#define CUB_LOG_WARP_THREADS(_Ap) 5
#define CUB_MAX(_Ap, _Bp) (((_Bp) > (_Ap)) ? (_Bp) : (_Ap))
#define CUB_MIN(_Ap, _Bp) (((_Bp) < (_Ap)) ? (_Bp) : (_Ap))
#define CUB_QUOTIENT_FLOOR(_Xp, _Yp) ((_Xp) / (_Yp))
#define CUB_QUOTIENT_CEILING(_Xp, _Yp) (((_Xp) + (_Yp) - 1) / (_Yp))
#define CUB_ROUND_UP_NEAREST(_Xp, _Yp) ((((_Xp) + (_Yp) - 1) / (_Yp)) * (_Yp))
#define CUB_ROUND_DOWN_NEAREST(_Xp, _Yp) (((_Xp) / (_Yp)) * (_Yp))

namespace cub {

// CubDebug / CubDebugExit: report (and for Exit, stop on) a failed CUDA call.
inline cudaError_t Debug(cudaError_t __e, const char* __file, int __line) {
  if (__e != cudaSuccess) fprintf(stderr, "CUDA error %d [%s, %d]: %s\n", (int)__e, __file, __line, cudaGetErrorString(__e));
  return __e;
}
#ifndef CubDebug
#define CubDebug(_Ep) ::cub::Debug((cudaError_t)(_Ep), __FILE__, __LINE__)
#endif
#ifndef CubDebugExit
#define CubDebugExit(_Ep) \
  if (::cub::Debug((cudaError_t)(_Ep), __FILE__, __LINE__)) { exit(1); }
#endif

struct NullType {};

template <class _Kp, class _Vp>
struct KeyValuePair {
  typedef _Kp Key;
  typedef _Vp Value;
  _Kp key;
  _Vp value;
  KeyValuePair() = default;
  constexpr KeyValuePair(const _Kp& __k, const _Vp& __v) : key(__k), value(__v) {}
  constexpr bool operator!=(const KeyValuePair& __o) const { return value != __o.value || key != __o.key; }
  constexpr bool operator==(const KeyValuePair& __o) const { return !(*this != __o); }
};

template <class _Tp>
struct DoubleBuffer {
  _Tp* d_buffers[2];
  int selector;
  DoubleBuffer() : d_buffers{nullptr, nullptr}, selector(0) {}
  DoubleBuffer(_Tp* __current, _Tp* __alternate) : d_buffers{__current, __alternate}, selector(0) {}
  _Tp* Current() { return d_buffers[selector]; }
  _Tp* Alternate() { return d_buffers[selector ^ 1]; }
};

struct Sum {
  template <class _Tp, class _Up>
  constexpr auto operator()(_Tp&& __a, _Up&& __b) const -> decltype(std::forward<_Tp>(__a) + std::forward<_Up>(__b)) {
    return std::forward<_Tp>(__a) + std::forward<_Up>(__b);
  }
};
struct Max {
  template <class _Tp, class _Up>
  constexpr std::common_type_t<_Tp, _Up> operator()(const _Tp& __a, const _Up& __b) const { return __a < __b ? __b : __a; }
};
struct Min {
  template <class _Tp, class _Up>
  constexpr std::common_type_t<_Tp, _Up> operator()(const _Tp& __a, const _Up& __b) const { return __b < __a ? __b : __a; }
};
struct Equality {
  template <class _Tp, class _Up>
  constexpr bool operator()(const _Tp& __a, const _Up& __b) const { return __a == __b; }
};
struct Inequality {
  template <class _Tp, class _Up>
  constexpr bool operator()(const _Tp& __a, const _Up& __b) const { return __a != __b; }
};
template <class _Op>
struct InequalityWrapper {
  _Op op;
  InequalityWrapper(_Op __op) : op(__op) {}
  template <class _Tp>
  bool operator()(const _Tp& __a, const _Tp& __b) { return !op(__a, __b); }
};
// Ties go to the lower index, as in CUB.
struct ArgMax {
  template <class _Kp, class _Vp>
  constexpr KeyValuePair<_Kp, _Vp> operator()(const KeyValuePair<_Kp, _Vp>& __a, const KeyValuePair<_Kp, _Vp>& __b) const {
    if ((__b.value > __a.value) || ((__a.value == __b.value) && (__b.key < __a.key))) return __b;
    return __a;
  }
};
struct ArgMin {
  template <class _Kp, class _Vp>
  constexpr KeyValuePair<_Kp, _Vp> operator()(const KeyValuePair<_Kp, _Vp>& __a, const KeyValuePair<_Kp, _Vp>& __b) const {
    if ((__b.value < __a.value) || ((__a.value == __b.value) && (__b.key < __a.key))) return __b;
    return __a;
  }
};
template <class _Bp>
struct CastOp {
  template <class _Ap>
  constexpr _Bp operator()(const _Ap& __a) const { return (_Bp)__a; }
};

enum Category { NOT_A_NUMBER, SIGNED_INTEGER, UNSIGNED_INTEGER, FLOATING_POINT };

namespace cudashim_detail {
template <std::size_t _Sz> struct _Bits_of { using type = void; };
template <> struct _Bits_of<1> { using type = unsigned char; };
template <> struct _Bits_of<2> { using type = unsigned short; };
template <> struct _Bits_of<4> { using type = unsigned int; };
template <> struct _Bits_of<8> { using type = unsigned long long; };
template <class _Tp>
constexpr Category _Category_of() {
  if constexpr (std::is_floating_point_v<_Tp>) return FLOATING_POINT;
  else if constexpr (std::is_integral_v<_Tp> && std::is_signed_v<_Tp>) return SIGNED_INTEGER;
  else if constexpr (std::is_integral_v<_Tp>) return UNSIGNED_INTEGER;
  else return NOT_A_NUMBER;
}
}  // namespace cudashim_detail

namespace cudashim_detail {
// Radix keys as CUB defines them: the key's bits as an unsigned integer, "twiddled" so that
// unsigned order is the key's order (sign bit flipped for signed integers; for floating point,
// every bit of a negative and the sign bit of a positive), and the lowest and highest keys.
template <class _Tp, Category _Cat = _Category_of<_Tp>(),
          class _Bits = typename _Bits_of<sizeof(_Tp)>::type>
struct _Radix_traits {
  static constexpr Category CATEGORY = NOT_A_NUMBER;
  static constexpr bool PRIMITIVE = false;
};
template <class _Tp, Category _Cat, class _Bits>
  requires(_Cat != NOT_A_NUMBER && !std::is_void_v<_Bits>)
struct _Radix_traits<_Tp, _Cat, _Bits> {
  static constexpr Category CATEGORY = _Cat;
  static constexpr bool PRIMITIVE = true;
  using UnsignedBits = _Bits;
  static constexpr UnsignedBits ALL = UnsignedBits(~UnsignedBits(0));
  static constexpr UnsignedBits HIGH_BIT = UnsignedBits(UnsignedBits(1) << (sizeof(UnsignedBits) * 8 - 1));
  static constexpr UnsignedBits LOWEST_KEY =
      _Cat == UNSIGNED_INTEGER ? UnsignedBits(0) : _Cat == SIGNED_INTEGER ? HIGH_BIT : ALL;
  static constexpr UnsignedBits MAX_KEY = _Cat == UNSIGNED_INTEGER ? ALL : UnsignedBits(ALL ^ HIGH_BIT);
  static UnsignedBits TwiddleIn(UnsignedBits __key) {
    if constexpr (_Cat == SIGNED_INTEGER) return __key ^ HIGH_BIT;
    else if constexpr (_Cat == FLOATING_POINT) return __key ^ ((__key & HIGH_BIT) ? ALL : HIGH_BIT);
    else return __key;
  }
  static UnsignedBits TwiddleOut(UnsignedBits __key) {
    if constexpr (_Cat == SIGNED_INTEGER) return __key ^ HIGH_BIT;
    else if constexpr (_Cat == FLOATING_POINT) return __key ^ ((__key & HIGH_BIT) ? HIGH_BIT : ALL);
    else return __key;
  }
};
}  // namespace cudashim_detail

template <class _Tp>
struct Traits : cudashim_detail::_Radix_traits<_Tp> {
  static constexpr bool NULL_TYPE = false;
  static constexpr _Tp Max() { return std::numeric_limits<_Tp>::max(); }
  static constexpr _Tp Lowest() { return std::numeric_limits<_Tp>::lowest(); }
};
template <class _Tp>
struct NumericTraits : Traits<_Tp> {};

template <int _Ap, int _Bp>
struct Log2 {
  enum { VALUE = (_Ap <= 1) ? _Bp : Log2<(_Ap >> 1), _Bp + 1>::VALUE };
};
template <int _Bp>
struct Log2<0, _Bp> { enum { VALUE = _Bp }; };
template <int _Bp>
struct Log2<1, _Bp> { enum { VALUE = _Bp }; };

template <class _Tp>
constexpr _Tp DivideAndRoundUp(_Tp __a, _Tp __b) { return (__a + __b - 1) / __b; }

inline cudaError_t PtxVersion(int& __v) { __v = 800; return cudaSuccess; }
inline cudaError_t SmVersion(int& __v, int = 0) { __v = 800; return cudaSuccess; }
inline int CurrentDevice() { return 0; }
// A GPU refuses it on a stream being captured (and invalidates the capture): as the runtime does.
inline cudaError_t SyncStream(cudaStream_t __s) { return cudaStreamSynchronize(__s); }

namespace cudashim_detail {
template <class _It>
using value_t = std::remove_cv_t<typename std::iterator_traits<_It>::value_type>;

// The value an output iterator takes (CUB: the output's value type unless it is void, e.g. a
// discard iterator, then the input's).
template <class _Out, class _Fallback, class = void>
struct out_value { using type = _Fallback; };
template <class _Out, class _Fallback>
struct out_value<_Out, _Fallback, std::enable_if_t<!std::is_void_v<typename std::iterator_traits<_Out>::value_type>>> {
  using type = std::remove_cv_t<typename std::iterator_traits<_Out>::value_type>;
};
template <class _Out, class _Fallback>
using out_value_t = typename out_value<_Out, _Fallback>::type;

template <class _Tp>
concept iterator_like = !std::is_arithmetic_v<std::remove_cvref_t<_Tp>> && requires(_Tp __it) { *__it; };
template <class _Tp>
concept count_like = std::is_integral_v<std::remove_cvref_t<_Tp>>;

// The two-phase temporary-storage protocol: a null d_temp_storage asks for the size (CUB's
// allocations are 256-byte aligned, so no real request is smaller) and does no work; a second
// call with a smaller size fails as CUB's does.
inline constexpr size_t temp_bytes = 256;
inline bool size_query(void* __d_temp, size_t& __bytes) {
  if (__d_temp == nullptr) {
    __bytes = temp_bytes;
    return true;
  }
  return false;
}
inline cudaError_t check_temp(size_t __bytes) {
  return __bytes < temp_bytes ? cudaErrorInvalidValue : cudaSuccess;
}
}  // namespace cudashim_detail
}  // namespace cub

#endif
