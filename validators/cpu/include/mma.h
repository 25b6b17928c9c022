// cudashim: the WMMA API (nvcuda::wmma, CUDA C++ Programming Guide, "Warp Matrix Functions")
// on the host. Our own implementation of the documented API, not NVIDIA's header.
//
// CUDA leaves the mapping of a tile's elements to the lanes of a warp unspecified. The shim
// picks one valid mapping: every lane's fragment holds the whole tile, element (r, c) of the
// logical matrix at x[r * cols + c] whatever the fragment's layout (num_elements is rows *
// cols). Loops over frag.x[i] that treat every element alike (scaling, alpha/beta epilogues,
// conversions, __float_to_tf32) therefore work; code that relies on one GPU generation's
// undocumented per-lane layout computes something else here (a wrong answer, not a crash).
//
// load_matrix_sync, store_matrix_sync and mma_sync are warp-collective: each first waits at a
// full-warp __syncwarp, so a call from part of the warp (the other lanes exited, or wait at
// another call) is reported as a deadlock naming the call and line, as for other warp
// operations. Then each lane does the whole operation on its own fragment (mma_sync reuses
// the previous lane's result when its tiles are bit-identical, the usual case); the 32
// identical stores of store_matrix_sync write the same values, which is harmless.
//
// Arithmetic: products of half/bf16/tf32 inputs are exact in float; mma_sync accumulates them
// in float from C in k order (fmaf), then rounds once to the accumulator type (a __half
// accumulator is rounded to half after every mma_sync). Tensor cores accumulate in an
// unspecified order and at least fp32 precision, so results differ from a GPU's by a few float
// ulps of the running sum. double (m8n8k4) accumulates in double, s8/u8 in 64-bit integers,
// wrapped to int32 (or clamped with satf).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <set>
#include <source_location>
#include <string>
#include <type_traits>

namespace nvcuda {
namespace wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

namespace precision {
struct tf32 {};
}  // namespace precision

namespace experimental {
namespace precision {
// Sub-byte types: declared so that a program using them names them in the error below.
struct u4 {};
struct s4 {};
struct b1 {};
}  // namespace precision
enum bmmaBitOp { bmmaBitOpXOR = 1, bmmaBitOpAND = 2 };
enum bmmaAccumulateOp { bmmaAccumulateOpPOPC = 1 };
}  // namespace experimental

namespace __cudashim_wmma {
template <class _Tp, class... _Us>
inline constexpr bool _One_of = (std::is_same_v<_Tp, _Us> || ...);
template <class...>
inline constexpr bool _Never = false;

// Element types of the inputs (matrix_a / matrix_b) and the accumulators per shape.
template <int _Mp, int _Np, int _Kp, class _Tp>
inline constexpr bool _Input_ok =
    ((_Mp == 16 && _Np == 16 && _Kp == 16) || (_Mp == 32 && _Np == 8 && _Kp == 16) ||
     (_Mp == 8 && _Np == 32 && _Kp == 16)) &&
        _One_of<_Tp, __half, __nv_bfloat16, signed char, unsigned char> ||
    (_Mp == 16 && _Np == 16 && _Kp == 8 && std::is_same_v<_Tp, precision::tf32>) ||
    (_Mp == 8 && _Np == 8 && _Kp == 4 && std::is_same_v<_Tp, double>);
template <int _Mp, int _Np, int _Kp, class _Tp>
inline constexpr bool _Acc_ok =
    ((_Mp == 16 && _Np == 16 && _Kp == 16) || (_Mp == 32 && _Np == 8 && _Kp == 16) ||
     (_Mp == 8 && _Np == 32 && _Kp == 16)) &&
        _One_of<_Tp, float, __half, int> ||
    (_Mp == 16 && _Np == 16 && _Kp == 8 && std::is_same_v<_Tp, float>) ||
    (_Mp == 8 && _Np == 8 && _Kp == 4 && std::is_same_v<_Tp, double>);

template <class _Tp>
struct _Storage { using type = _Tp; };
template <>
struct _Storage<precision::tf32> { using type = float; };  // tf32 lives in float, as in CUDA

template <class _Use, int _Mp, int _Np, int _Kp>
struct _Dims;
template <int _Mp, int _Np, int _Kp>
struct _Dims<matrix_a, _Mp, _Np, _Kp> { static constexpr int rows = _Mp, cols = _Kp; };
template <int _Mp, int _Np, int _Kp>
struct _Dims<matrix_b, _Mp, _Np, _Kp> { static constexpr int rows = _Kp, cols = _Np; };
template <int _Mp, int _Np, int _Kp>
struct _Dims<accumulator, _Mp, _Np, _Kp> { static constexpr int rows = _Mp, cols = _Np; };

template <class _Use, int _Mp, int _Np, int _Kp, class _Tp, class _Layout>
constexpr bool _check() {
  constexpr bool __sub_byte = _One_of<_Tp, experimental::precision::u4, experimental::precision::s4,
                                      experimental::precision::b1>;
  static_assert(!__sub_byte,
                "wmma: sub-byte fragments (experimental::precision::s4/u4/b1, bmma) are not in the "
                "CPU shim's WMMA subset");
  static_assert(_One_of<_Use, matrix_a, matrix_b, accumulator>, "wmma: unknown fragment use");
  if constexpr (!__sub_byte && std::is_same_v<_Use, accumulator>) {
    static_assert(_Acc_ok<_Mp, _Np, _Kp, _Tp>,
                  "wmma: this accumulator shape/type is not in the CPU shim's WMMA subset");
    static_assert(std::is_void_v<_Layout>, "wmma: an accumulator fragment takes no layout");
  } else if constexpr (!__sub_byte) {
    static_assert(_Input_ok<_Mp, _Np, _Kp, _Tp>,
                  "wmma: this matrix_a/matrix_b shape/type is not in the CPU shim's WMMA subset");
    static_assert(_One_of<_Layout, row_major, col_major>,
                  "wmma: matrix_a/matrix_b fragments need row_major or col_major");
  }
  return true;
}

// "wmma::mma_sync in main.cu": the file name the warp barrier reports (see the top comment).
inline const char* _site(const char* __op, const char* __file) {
  thread_local const char* __last_op = nullptr;
  thread_local const char* __last_file = nullptr;
  thread_local const char* __last = nullptr;
  if (__op == __last_op && __file == __last_file) return __last;
  static std::mutex __mu;
  static std::set<std::string> __names;  // never shrinks: the pointers stay valid
  std::lock_guard<std::mutex> __g(__mu);
  const char* __s = __names.insert(std::string("wmma::") + __op + " in " + __file).first->c_str();
  __last_op = __op;
  __last_file = __file;
  __last = __s;
  return __s;
}

// param 1: the whole warp must take part (a lane that exited is a deadlock, not a portability
// note as for __syncwarp): a GPU's tile is spread over all 32 lanes' registers.
inline void _warp_sync(const char* __op, const std::source_location& __loc) {
  cudashim::warp_op(cudashim::_Wop_SYNC, 0xffffffffu, 0, 1, 32, __loc.line(),
                    _site(__op, __loc.file_name()));
}

// CUDA requires ldm to be a multiple of 16 bytes (8 halves, 4 floats, 2 doubles, 16 chars);
// a violation is undefined on a GPU (garbage or a fault), so the shim stops the run. CUDA also
// requires mptr to be 256-bit aligned; that is not checked: the shim places static __shared__
// arrays at thread-local addresses with only their element type's alignment (nvcc's placement
// differs), so a check would reject correct programs. A null pointer is reported here rather
// than as a crash.
template <class _Tp>
inline void _check_access(const char* __op, const void* __p, unsigned __ldm,
                          const std::source_location& __loc) {
  if (__p == nullptr)
    cudashim::fatal("cudashim: wmma::%s at %s:%u: null matrix pointer", __op, __loc.file_name(),
                    __loc.line());
  if ((__ldm * sizeof(_Tp)) % 16 != 0)
    cudashim::fatal(
        "cudashim: wmma::%s at %s:%u: ldm %u is not a multiple of %d elements (16 bytes), which "
        "CUDA requires",
        __op, __loc.file_name(), __loc.line(), __ldm, (int)(16 / sizeof(_Tp)));
}

// The tf32 value a tensor core reads from a float: the top 19 bits (sign, 8-bit exponent,
// 10-bit mantissa). Inputs that __float_to_tf32 rounded are unchanged by this.
inline float _tf32_bits(float __f) {
  std::uint32_t __u;
  std::memcpy(&__u, &__f, 4);
  if ((__u & 0x7f800000u) != 0x7f800000u) __u &= 0xffffe000u;
  std::memcpy(&__f, &__u, 4);
  return __f;
}

template <class _Tp>
inline auto _operand(const _Tp& __v) {
  if constexpr (std::is_same_v<_Tp, double>) return __v;
  else if constexpr (std::is_integral_v<_Tp>) return (long long)__v;
  else return (float)__v;
}
}  // namespace __cudashim_wmma

template <class _Use, int _Mp, int _Np, int _Kp, class _Tp, class _Layout = void>
class fragment {
  static_assert(__cudashim_wmma::_check<_Use, _Mp, _Np, _Kp, _Tp, _Layout>());
  using _D = __cudashim_wmma::_Dims<_Use, _Mp, _Np, _Kp>;

 public:
  using element_type = typename __cudashim_wmma::_Storage<_Tp>::type;
  using storage_element_type = element_type;
  static constexpr int rows = _D::rows;
  static constexpr int cols = _D::cols;
  static constexpr int num_elements = rows * cols;
  element_type x[num_elements];
};

template <class _Use, int _Mp, int _Np, int _Kp, class _Tp, class _Layout, class _Vp>
inline void fill_fragment(fragment<_Use, _Mp, _Np, _Kp, _Tp, _Layout>& __f, const _Vp& __v) {
  using _E = typename fragment<_Use, _Mp, _Np, _Kp, _Tp, _Layout>::element_type;
  const _E __e = static_cast<_E>(__v);
  for (int __i = 0; __i < __f.num_elements; ++__i) __f.x[__i] = __e;
}

// matrix_a / matrix_b: the layout is the fragment's.
template <class _Use, int _Mp, int _Np, int _Kp, class _Tp, class _Layout>
  requires(!std::is_same_v<_Use, accumulator>)
inline void load_matrix_sync(
    fragment<_Use, _Mp, _Np, _Kp, _Tp, _Layout>& __f,
    const typename fragment<_Use, _Mp, _Np, _Kp, _Tp, _Layout>::element_type* __p, unsigned __ldm,
    std::source_location __loc = std::source_location::current()) {
  using _F = fragment<_Use, _Mp, _Np, _Kp, _Tp, _Layout>;
  using _E = typename _F::element_type;
  constexpr bool __row = std::is_same_v<_Layout, row_major>;
  __cudashim_wmma::_warp_sync("load_matrix_sync", __loc);
  __cudashim_wmma::_check_access<_E>("load_matrix_sync", __p, __ldm, __loc);
  for (int __r = 0; __r < _F::rows; ++__r)
    for (int __c = 0; __c < _F::cols; ++__c)
      __f.x[__r * _F::cols + __c] =
          __row ? __p[(size_t)__r * __ldm + __c] : __p[(size_t)__c * __ldm + __r];
}

// Accumulators: the memory layout is given at the call.
template <int _Mp, int _Np, int _Kp, class _Tp>
inline void load_matrix_sync(fragment<accumulator, _Mp, _Np, _Kp, _Tp>& __f, const _Tp* __p,
                             unsigned __ldm, layout_t __layout,
                             std::source_location __loc = std::source_location::current()) {
  using _F = fragment<accumulator, _Mp, _Np, _Kp, _Tp>;
  const bool __row = __layout == mem_row_major;
  __cudashim_wmma::_warp_sync("load_matrix_sync", __loc);
  __cudashim_wmma::_check_access<_Tp>("load_matrix_sync", __p, __ldm, __loc);
  for (int __r = 0; __r < _F::rows; ++__r)
    for (int __c = 0; __c < _F::cols; ++__c)
      __f.x[__r * _F::cols + __c] =
          __row ? __p[(size_t)__r * __ldm + __c] : __p[(size_t)__c * __ldm + __r];
}

template <int _Mp, int _Np, int _Kp, class _Tp>
inline void store_matrix_sync(_Tp* __p, const fragment<accumulator, _Mp, _Np, _Kp, _Tp>& __f,
                              unsigned __ldm, layout_t __layout,
                              std::source_location __loc = std::source_location::current()) {
  using _F = fragment<accumulator, _Mp, _Np, _Kp, _Tp>;
  const bool __row = __layout == mem_row_major;
  __cudashim_wmma::_warp_sync("store_matrix_sync", __loc);
  __cudashim_wmma::_check_access<_Tp>("store_matrix_sync", __p, __ldm, __loc);
  for (int __r = 0; __r < _F::rows; ++__r)
    for (int __c = 0; __c < _F::cols; ++__c)
      (__row ? __p[(size_t)__r * __ldm + __c] : __p[(size_t)__c * __ldm + __r]) =
          __f.x[__r * _F::cols + __c];
}

template <int _Mp, int _Np, int _Kp, class _Td, class _Ta, class _La, class _Tb, class _Lb,
          class _Tc>
inline void mma_sync(fragment<accumulator, _Mp, _Np, _Kp, _Td>& __d,
                     const fragment<matrix_a, _Mp, _Np, _Kp, _Ta, _La>& __a,
                     const fragment<matrix_b, _Mp, _Np, _Kp, _Tb, _Lb>& __b,
                     const fragment<accumulator, _Mp, _Np, _Kp, _Tc>& __c, bool __satf = false,
                     std::source_location __loc = std::source_location::current()) {
  static_assert(std::is_same_v<_Ta, _Tb>, "wmma::mma_sync: matrix_a and matrix_b types differ");
  static_assert(std::is_same_v<_Td, _Tc> || (__cudashim_wmma::_One_of<_Td, float, __half> &&
                                             __cudashim_wmma::_One_of<_Tc, float, __half>),
                "wmma::mma_sync: accumulator types do not match");
  __cudashim_wmma::_warp_sync("mma_sync", __loc);
  using _A = fragment<matrix_a, _Mp, _Np, _Kp, _Ta, _La>;
  using _B = fragment<matrix_b, _Mp, _Np, _Kp, _Tb, _Lb>;
  using _C = fragment<accumulator, _Mp, _Np, _Kp, _Tc>;
  using _D = fragment<accumulator, _Mp, _Np, _Kp, _Td>;
  // The 32 lanes of a warp run one after another on this worker thread and almost always hold
  // the same tiles: remember the last inputs (bit for bit) and their result.
  struct _Memo {
    bool valid = false, satf = false;
    _A a;
    _B b;
    _C c;
    _D d;
  };
  thread_local _Memo __memo;
  if (__memo.valid && __memo.satf == __satf && !std::memcmp(&__memo.a, &__a, sizeof(_A)) &&
      !std::memcmp(&__memo.b, &__b, sizeof(_B)) && !std::memcmp(&__memo.c, &__c, sizeof(_C))) {
    __d = __memo.d;
    return;
  }
  __memo.valid = false;
  std::memcpy(&__memo.a, &__a, sizeof(_A));
  std::memcpy(&__memo.b, &__b, sizeof(_B));
  std::memcpy(&__memo.c, &__c, sizeof(_C));
  __memo.satf = __satf;
  constexpr bool __tf32 = std::is_same_v<_Ta, precision::tf32>;
  using _Acc = std::conditional_t<std::is_same_v<_Td, double>, double,
                                  std::conditional_t<std::is_same_v<_Td, int>, long long, float>>;
  using _Op = decltype(__cudashim_wmma::_operand(__a.x[0]));
  _Op __av[_Mp * _Kp], __bv[_Kp * _Np];
  for (int __i = 0; __i < _Mp * _Kp; ++__i) {
    __av[__i] = __cudashim_wmma::_operand(__a.x[__i]);
    if constexpr (__tf32) __av[__i] = __cudashim_wmma::_tf32_bits(__av[__i]);
  }
  for (int __i = 0; __i < _Kp * _Np; ++__i) {
    __bv[__i] = __cudashim_wmma::_operand(__b.x[__i]);
    if constexpr (__tf32) __bv[__i] = __cudashim_wmma::_tf32_bits(__bv[__i]);
  }
  for (int __i = 0; __i < _Mp; ++__i) {
    // Row by row, k outer and j inner: every element still sums its products in k order.
    _Acc __s[_Np];
    for (int __j = 0; __j < _Np; ++__j)
      __s[__j] = static_cast<_Acc>(__cudashim_wmma::_operand(__c.x[__i * _Np + __j]));
    for (int __k = 0; __k < _Kp; ++__k) {
      const _Op __x = __av[__i * _Kp + __k];
      for (int __j = 0; __j < _Np; ++__j) {
        if constexpr (std::is_same_v<_Acc, long long>) __s[__j] += __x * __bv[__k * _Np + __j];
        else if constexpr (std::is_same_v<_Acc, double>) __s[__j] = std::fma(__x, __bv[__k * _Np + __j], __s[__j]);
        else __s[__j] = fmaf(__x, __bv[__k * _Np + __j], __s[__j]);
      }
    }
    for (int __j = 0; __j < _Np; ++__j) {
      if constexpr (std::is_same_v<_Acc, long long>) {
        constexpr long long __lo = std::numeric_limits<int>::min(), __hi = std::numeric_limits<int>::max();
        __memo.d.x[__i * _Np + __j] = __satf ? (int)std::min(std::max(__s[__j], __lo), __hi)
                                             : (int)(std::uint32_t)(unsigned long long)__s[__j];
      } else {
        _Td __v = static_cast<_Td>(__s[__j]);
        if (__satf) {
          // CUDA's satf: an infinite result becomes the largest finite value, NaN becomes +0.
          const double __r = (double)__v;
          const double __max = std::is_same_v<_Td, __half> ? 65504.0
                               : std::is_same_v<_Td, float> ? (double)std::numeric_limits<float>::max()
                                                            : std::numeric_limits<double>::max();
          if (__r != __r) __v = static_cast<_Td>(0.0f);
          else if (__r > __max) __v = static_cast<_Td>(__max);
          else if (__r < -__max) __v = static_cast<_Td>(-__max);
        }
        __memo.d.x[__i * _Np + __j] = __v;
      }
    }
  }
  __memo.valid = true;
  __d = __memo.d;  // d may be c (mma_sync(acc, a, b, acc)): written only now
}

// CUDA: round to nearest, ties away from zero, to tf32's 10 mantissa bits (kept in a float).
inline float __float_to_tf32(float __f) {
  std::uint32_t __u;
  std::memcpy(&__u, &__f, 4);
  if ((__u & 0x7f800000u) != 0x7f800000u) {
    __u += 0x1000u;
    __u &= 0xffffe000u;
  }
  std::memcpy(&__f, &__u, 4);
  return __f;
}

// Binary (b1) matrix multiply: not in the subset; a program using it fails to build with a
// message diagnostics.py reports as needs_gpu.
template <class... _Ap>
inline void bmma_sync(_Ap&&...) {
  static_assert(__cudashim_wmma::_Never<_Ap...>,
                "wmma: sub-byte fragments (experimental::precision::s4/u4/b1, bmma) are not in the "
                "CPU shim's WMMA subset");
}

}  // namespace wmma
}  // namespace nvcuda
