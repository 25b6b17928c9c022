// cudashim: cuFFT's functions (declared types in cufft.h), computed on the host.
//
// A plan is a handle (an int, as in cuFFT) into a table of plan records; a handle never created,
// or destroyed, is CUFFT_INVALID_PLAN. Making a plan checks its sizes and layout and prepares
// one 1-D transform per distinct length (`_Fft1`): mixed radix (radices 4, 2, 3, 5 and any other
// prime up to `kMaxRadix`) when every prime factor of the length is small, Bluestein's chirp-z
// algorithm over a power-of-two length otherwise, so every length costs O(n log n). Values are
// computed in double whatever the precision and rounded once when stored; transforms are
// unnormalized, as cuFFT's (a forward then an inverse transform multiplies by the size).
//
// An execution works on one batch element at a time: it reads the element through the input
// layout into a contiguous buffer (row-major, the last dimension varying fastest), transforms
// it along each dimension and writes it through the output layout (in place in an advanced
// layout where one element's output may land on another's input, all are read first), so
// in-place transforms (the same pointer in and out) work in every layout cuFFT accepts.
// Callbacks set with cufftXtSetCallback are called where an element is read or written, with
// its offset from the data pointer (cuFFT's arguments). The inverse complex transform is
// conj(F(conj(x))). R2C keeps the n/2+1 non-redundant outputs of the last dimension; C2R reads
// them (the imaginary parts of the two self-conjugate terms are ignored, as for a Hermitian
// input) and may overwrite its input, as cuFFT says it may. Executions are library work
// (`_Library_access`): device memory is open while they run, and each counts as a cuFFT call.
#pragma once
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <exception>
#include <new>
#include <type_traits>
#include <vector>

namespace cudashim::cufft {
using _Cx = std::complex<double>;

// Prime factors above this go through Bluestein's algorithm rather than an O(p) butterfly.
constexpr size_t kMaxRadix = 64;
// Lengths (and batch x size) above this are refused with CUFFT_INVALID_SIZE: well past what a
// host buffer can hold (the 64-bit API's sizes are 64-bit, as cuFFT's).
constexpr long long kMaxElements = 1LL << 40;

// exp(-2 pi i k / n), k reduced mod n, computed in long double.
inline _Cx _Root(unsigned long long __k, unsigned long long __n) {
  __k %= __n;
  const long double __a = -2.0L * 3.141592653589793238462643383279502884L * (long double)__k / (long double)__n;
  return _Cx((double)std::cos(__a), (double)std::sin(__a));
}

class _Fft1;
inline std::shared_ptr<const _Fft1> _Prepared(size_t __n);

// The forward transform of one length: X_k = sum_j x_j exp(-2 pi i j k / n), in place.
class _Fft1 {
 public:
  explicit _Fft1(size_t __n) : _n(__n) {
    if (__n <= 1) return;
    size_t __r = __n;
    while (__r % 4 == 0) _f.push_back(4), __r /= 4;
    while (__r % 2 == 0) _f.push_back(2), __r /= 2;
    for (size_t __p = 3; __p * __p <= __r; __p += 2)
      while (__r % __p == 0) _f.push_back(__p), __r /= __p;
    if (__r > 1) _f.push_back(__r);
    if (*std::max_element(_f.begin(), _f.end()) <= kMaxRadix) {
      _w.resize(__n);
      for (size_t __k = 0; __k <= __n / 2; ++__k) _w[__k] = _Root(__k, __n);
      for (size_t __k = __n / 2 + 1; __k < __n; ++__k) _w[__k] = std::conj(_w[__n - __k]);
      return;
    }
    // Bluestein: j k = (j^2 + k^2 - (k - j)^2) / 2 turns the transform into a convolution with
    // the chirp exp(-i pi k^2 / n), done by power-of-two transforms of a length m >= 2n - 1.
    _f.clear();
    _blue = true;
    _m = 1;
    while (_m < 2 * __n - 1) _m <<= 1;
    _sub = _Prepared(_m);
    _chirp.resize(__n);
    for (size_t __k = 0; __k < __n; ++__k) {
      const unsigned long long __k2 = (unsigned long long)__k * __k % (2ULL * __n);
      _chirp[__k] = _Root(__k2, 2ULL * __n);
    }
    _kern.assign(_m, _Cx(0, 0));
    _kern[0] = std::conj(_chirp[0]);
    for (size_t __k = 1; __k < __n; ++__k) _kern[__k] = _kern[_m - __k] = std::conj(_chirp[__k]);
    std::vector<_Cx> __s(_sub->scratch());
    _sub->forward(_kern.data(), __s.data());
    const double __inv = 1.0 / (double)_m;
    for (auto& __v : _kern) __v *= __inv;
  }
  size_t size() const { return _n; }
  // Complex elements of scratch `forward` needs.
  size_t scratch() const { return _blue ? 2 * _m : _n; }
  void forward(_Cx* __x, _Cx* __s) const {
    if (_n <= 1) return;
    if (_blue) return _bluestein(__x, __s);
    std::copy(__x, __x + _n, __s);
    _rec(__x, __s, 1, 0, _n);
  }

 private:
  size_t _n;
  std::vector<size_t> _f;  // radices, product _n (mixed radix)
  std::vector<_Cx> _w;     // _w[k] = exp(-2 pi i k / n)
  bool _blue = false;
  size_t _m = 0;
  std::vector<_Cx> _chirp, _kern;  // exp(-i pi k^2 / n); the transform of its conjugate / m
  std::shared_ptr<const _Fft1> _sub;

  // __out[0, __len) = the transform of __in[0], __in[__s], ..., __in[(__len - 1) __s], with
  // radices _f[__k...] (decimation in time: one sub-transform per residue mod the radix).
  void _rec(_Cx* __out, const _Cx* __in, size_t __s, size_t __k, size_t __len) const {
    const size_t __p = _f[__k], __m = __len / __p;
    if (__m == 1) {
      for (size_t __r = 0; __r < __p; ++__r) __out[__r] = __in[__r * __s];
    } else {
      for (size_t __r = 0; __r < __p; ++__r) _rec(__out + __r * __m, __in + __r * __s, __s * __p, __k + 1, __m);
    }
    _butterflies(__out, __m, __p, _n / __len);
  }
  // Combine __p sub-transforms of length __m (at __out + r __m) into one of length __p __m.
  void _butterflies(_Cx* __out, size_t __m, size_t __p, size_t __tstep) const {
    _Cx __y[kMaxRadix];
    const size_t __pstep = _n / __p;
    for (size_t __j = 0; __j < __m; ++__j) {
      __y[0] = __out[__j];
      for (size_t __r = 1; __r < __p; ++__r) __y[__r] = __out[__r * __m + __j] * _w[__r * __j * __tstep];
      switch (__p) {
        case 2:
          __out[__j] = __y[0] + __y[1];
          __out[__j + __m] = __y[0] - __y[1];
          break;
        case 3: {
          const _Cx __t = __y[1] + __y[2], __d = __y[1] - __y[2];
          const _Cx __a = __y[0] - 0.5 * __t;
          const _Cx __b(0.8660254037844386467637231707529362 * __d.imag(),
                        -0.8660254037844386467637231707529362 * __d.real());  // -i sqrt(3)/2 d
          __out[__j] = __y[0] + __t;
          __out[__j + __m] = __a + __b;
          __out[__j + 2 * __m] = __a - __b;
          break;
        }
        case 4: {
          const _Cx __s02 = __y[0] + __y[2], __d02 = __y[0] - __y[2];
          const _Cx __s13 = __y[1] + __y[3], __d13 = __y[1] - __y[3];
          const _Cx __md13(__d13.imag(), -__d13.real());  // -i (y1 - y3)
          __out[__j] = __s02 + __s13;
          __out[__j + __m] = __d02 + __md13;
          __out[__j + 2 * __m] = __s02 - __s13;
          __out[__j + 3 * __m] = __d02 - __md13;
          break;
        }
        default: {
          _Cx __x[kMaxRadix];
          for (size_t __q = 0; __q < __p; ++__q) {
            _Cx __acc = __y[0];
            for (size_t __r = 1; __r < __p; ++__r) __acc += __y[__r] * _w[(__r * __q % __p) * __pstep];
            __x[__q] = __acc;
          }
          for (size_t __q = 0; __q < __p; ++__q) __out[__j + __q * __m] = __x[__q];
        }
      }
    }
  }
  void _bluestein(_Cx* __x, _Cx* __s) const {
    _Cx* __a = __s;
    _Cx* __t = __s + _m;
    for (size_t __k = 0; __k < _n; ++__k) __a[__k] = __x[__k] * _chirp[__k];
    std::fill(__a + _n, __a + _m, _Cx(0, 0));
    _sub->forward(__a, __t);
    // The inverse transform of the product, as conj(F(conj(.))) (the 1/m is in _kern).
    for (size_t __k = 0; __k < _m; ++__k) __a[__k] = std::conj(__a[__k] * _kern[__k]);
    _sub->forward(__a, __t);
    for (size_t __k = 0; __k < _n; ++__k) __x[__k] = std::conj(__a[__k]) * _chirp[__k];
  }
};

// Prepared transforms, shared by the plans of a process (a plan made in a loop prepares its
// lengths once, Bluestein's power-of-two lengths are shared); cleared when it holds many.
inline std::shared_ptr<const _Fft1> _Prepared(size_t __n) {
  static std::mutex __mu;
  static std::map<size_t, std::shared_ptr<const _Fft1>> __cache;
  {
    std::lock_guard<std::mutex> __lk(__mu);
    auto __it = __cache.find(__n);
    if (__it != __cache.end()) return __it->second;
  }
  auto __f = std::make_shared<const _Fft1>(__n);  // outside the lock: Bluestein's asks for another
  std::lock_guard<std::mutex> __lk(__mu);
  if (__cache.size() >= 64) __cache.clear();
  return __cache.emplace(__n, __f).first->second;
}

// A load or store callback (cufftXt.h): the function, its caller info, and shared bytes.
struct _Callback {
  void* __fn = nullptr;
  void* __info = nullptr;
  size_t __shared = 0;
};
// cufftXtCallbackType's values.
enum { _CB_LD_COMPLEX, _CB_LD_COMPLEX_DOUBLE, _CB_LD_REAL, _CB_LD_REAL_DOUBLE, _CB_ST_COMPLEX,
       _CB_ST_COMPLEX_DOUBLE, _CB_ST_REAL, _CB_ST_REAL_DOUBLE, _CB_COUNT };

// One side's layout: logical dims padded to rank 3 with leading ones, and where element
// (i0, i1, i2) of batch b is: b dist + stride ((i0 embed[1] + i1) embed[2] + i2).
struct _Layout {
  long long __dims[3], __embed[3], __stride, __dist;
  long long __at(long long __b, long long __i0, long long __i1, long long __i2) const {
    return __b * __dist + __stride * ((__i0 * __embed[1] + __i1) * __embed[2] + __i2);
  }
};

struct _Plan {
  bool __made = false;
  cufftType __type = CUFFT_C2C;
  int __rank = 0;
  long long __n[3] = {1, 1, 1};  // the logical sizes, padded to rank 3 with leading ones
  long long __batch = 1;
  bool __basic_in = true, __basic_out = true;  // NULL inembed / onembed: the basic layout
  long long __inembed[3] = {1, 1, 1}, __istride = 1, __idist = 0;
  long long __onembed[3] = {1, 1, 1}, __ostride = 1, __odist = 0;
  cudaStream_t __stream = 0;
  bool __auto = true;
  void* __work = nullptr;
  size_t __work_size = 0;
  std::shared_ptr<const _Fft1> __fft[3];  // per padded dimension
  _Callback __cb[_CB_COUNT];
};

struct _Table {
  std::mutex __mu;
  std::map<int, std::unique_ptr<_Plan>> __plans;
  int __next = 1;
};
inline _Table& _table() {
  static _Table* __t = new _Table;  // never destroyed: plans may be destroyed at exit
  return *__t;
}
inline _Plan* _Find(cufftHandle __h) {
  _Table& __t = _table();
  std::lock_guard<std::mutex> __lk(__t.__mu);
  auto __it = __t.__plans.find(__h);
  return __it == __t.__plans.end() ? nullptr : __it->second.get();
}

inline bool _Valid_type(cufftType __t) {
  return __t == CUFFT_R2C || __t == CUFFT_C2R || __t == CUFFT_C2C || __t == CUFFT_D2Z ||
         __t == CUFFT_Z2D || __t == CUFFT_Z2Z;
}
inline bool _Double(cufftType __t) { return __t == CUFFT_D2Z || __t == CUFFT_Z2D || __t == CUFFT_Z2Z; }
inline bool _Forward_real(cufftType __t) { return __t == CUFFT_R2C || __t == CUFFT_D2Z; }
inline bool _Inverse_real(cufftType __t) { return __t == CUFFT_C2R || __t == CUFFT_Z2D; }

// Checks a plan's parameters; fills `__p` (not made) when they are valid.
inline cufftResult _Describe(_Plan& __p, int __rank, const long long* __n, const long long* __inembed,
                             long long __istride, long long __idist, const long long* __onembed,
                             long long __ostride, long long __odist, cufftType __type, long long __batch) {
  if (!_Valid_type(__type)) return CUFFT_INVALID_TYPE;
  if (__rank < 1 || __rank > 3 || __n == nullptr) return CUFFT_INVALID_SIZE;
  if (__batch < 1) return CUFFT_INVALID_SIZE;
  long long __total = 1;
  for (int __d = 0; __d < __rank; ++__d) {
    if (__n[__d] < 1 || __n[__d] > kMaxElements) return CUFFT_INVALID_SIZE;
    __total *= __n[__d];
    if (__total > kMaxElements) return CUFFT_INVALID_SIZE;
  }
  if (__batch > kMaxElements / __total) return CUFFT_INVALID_SIZE;
  __p.__type = __type;
  __p.__rank = __rank;
  __p.__batch = __batch;
  for (int __d = 0; __d < 3; ++__d) __p.__n[__d] = __d < 3 - __rank ? 1 : __n[__d - (3 - __rank)];
  // The advanced layout: strides and distances of either side are read only with its embed.
  const long long __last = __n[__rank - 1], __half = __last / 2 + 1;
  const long long __in_last = _Inverse_real(__type) ? __half : __last;
  const long long __out_last = _Forward_real(__type) ? __half : __last;
  __p.__basic_in = __inembed == nullptr;
  __p.__basic_out = __onembed == nullptr;
  if (!__p.__basic_in) {
    if (__istride < 1 || __idist < 0) return CUFFT_INVALID_VALUE;
    for (int __d = 1; __d < __rank; ++__d)
      if (__inembed[__d] < (__d == __rank - 1 ? __in_last : __n[__d])) return CUFFT_INVALID_VALUE;
    if (__rank == 1 && __inembed[0] < 1) return CUFFT_INVALID_VALUE;
    for (int __d = 0; __d < 3; ++__d) __p.__inembed[__d] = __d < 3 - __rank ? 1 : __inembed[__d - (3 - __rank)];
    __p.__istride = __istride;
    __p.__idist = __idist;
  }
  if (!__p.__basic_out) {
    if (__ostride < 1 || __odist < 0) return CUFFT_INVALID_VALUE;
    for (int __d = 1; __d < __rank; ++__d)
      if (__onembed[__d] < (__d == __rank - 1 ? __out_last : __n[__d])) return CUFFT_INVALID_VALUE;
    if (__rank == 1 && __onembed[0] < 1) return CUFFT_INVALID_VALUE;
    for (int __d = 0; __d < 3; ++__d) __p.__onembed[__d] = __d < 3 - __rank ? 1 : __onembed[__d - (3 - __rank)];
    __p.__ostride = __ostride;
    __p.__odist = __odist;
  }
  // The work area cuFFT would ask for: here, the size of the batch's complex data.
  const long long __complex_elems = __total / __last * (_Forward_real(__type) || _Inverse_real(__type) ? __half : __last);
  __p.__work_size = (size_t)(__complex_elems * __batch) * (_Double(__type) ? 16 : 8);
  return CUFFT_SUCCESS;
}

// Size check and work size without a plan (cufftEstimate*, cufftGetSize*).
inline cufftResult _Estimate(int __rank, const long long* __n, const long long* __inembed, long long __istride,
                             long long __idist, const long long* __onembed, long long __ostride, long long __odist,
                             cufftType __type, long long __batch, size_t* __ws) {
  _Plan __p;
  cufftResult __r = _Describe(__p, __rank, __n, __inembed, __istride, __idist, __onembed, __ostride, __odist,
                              __type, __batch);
  if (__r == CUFFT_SUCCESS && __ws != nullptr) *__ws = __p.__work_size;
  return __r;
}

inline cufftResult _Make(cufftHandle __h, int __rank, const long long* __n, const long long* __inembed,
                         long long __istride, long long __idist, const long long* __onembed, long long __ostride,
                         long long __odist, cufftType __type, long long __batch, size_t* __ws) {
  _Plan* __p = _Find(__h);
  if (__p == nullptr) return CUFFT_INVALID_PLAN;
  _Plan __q;
  cufftResult __r = _Describe(__q, __rank, __n, __inembed, __istride, __idist, __onembed, __ostride, __odist,
                              __type, __batch);
  if (__r != CUFFT_SUCCESS) return __r;
  try {
    for (int __d = 0; __d < 3; ++__d) __q.__fft[__d] = _Prepared((size_t)__q.__n[__d]);
  } catch (const std::exception&) {  // bad_alloc, length_error: too large for this host
    return CUFFT_ALLOC_FAILED;
  }
  // What was set on the handle before it was made stays (stream, work area, callbacks).
  __q.__stream = __p->__stream;
  __q.__auto = __p->__auto;
  __q.__work = __p->__work;
  for (int __c = 0; __c < _CB_COUNT; ++__c) __q.__cb[__c] = __p->__cb[__c];
  __q.__made = true;
  *__p = __q;
  if (__ws != nullptr) *__ws = __p->__work_size;
  return CUFFT_SUCCESS;
}

inline cufftResult _Create(cufftHandle* __h) {
  if (__h == nullptr) return CUFFT_INVALID_PLAN;
  _Table& __t = _table();
  try {
    std::lock_guard<std::mutex> __lk(__t.__mu);
    if (__t.__next == 0x7fffffff) return CUFFT_ALLOC_FAILED;
    const int __id = __t.__next++;
    __t.__plans[__id].reset(new _Plan);
    *__h = __id;
  } catch (const std::exception&) {  // bad_alloc, length_error: too large for this host
    return CUFFT_ALLOC_FAILED;
  }
  return CUFFT_SUCCESS;
}
inline cufftResult _Destroy(cufftHandle __h) {
  _Table& __t = _table();
  std::lock_guard<std::mutex> __lk(__t.__mu);
  return __t.__plans.erase(__h) ? CUFFT_SUCCESS : CUFFT_INVALID_PLAN;
}
// cufftPlan*: a handle made at once, not handed out if the sizes are refused.
inline cufftResult _Plan_new(cufftHandle* __h, int __rank, const long long* __n, const long long* __inembed,
                             long long __istride, long long __idist, const long long* __onembed, long long __ostride,
                             long long __odist, cufftType __type, long long __batch) {
  if (__h == nullptr) return CUFFT_INVALID_PLAN;
  cufftHandle __id;
  cufftResult __r = _Create(&__id);
  if (__r != CUFFT_SUCCESS) return __r;
  __r = _Make(__id, __rank, __n, __inembed, __istride, __idist, __onembed, __ostride, __odist, __type, __batch,
              nullptr);
  if (__r != CUFFT_SUCCESS) {
    _Destroy(__id);
    return __r;
  }
  *__h = __id;
  return CUFFT_SUCCESS;
}
// The int API's arrays, widened.
struct _Wide {
  long long __v[3] = {0, 0, 0};
  const long long* __p = nullptr;
  _Wide(int __rank, const int* __a) {
    if (__a == nullptr || __rank < 1) return;
    for (int __d = 0; __d < __rank && __d < 3; ++__d) __v[__d] = __a[__d];
    __p = __v;
  }
  _Wide(int __rank, const long long* __a) {
    if (__a == nullptr || __rank < 1) return;
    for (int __d = 0; __d < __rank && __d < 3; ++__d) __v[__d] = __a[__d];
    __p = __v;
  }
};

// Element access with the callbacks, if any. Complex elements are _R pairs (float2/double2).
template <class _R>
struct _Vec2;
template <>
struct _Vec2<float> { using type = float2; };
template <>
struct _Vec2<double> { using type = double2; };

template <class _R>
struct _Io {
  using _V = typename _Vec2<_R>::type;
  const _Callback* __ld;
  const _Callback* __st;
  void* __ld_shared;
  void* __st_shared;
  _Cx load_c(const void* __base, long long __off) const {
    _V __v;
    if (__ld && __ld->__fn) {
      typedef _V (*_Fn)(void*, size_t, void*, void*);
      __v = reinterpret_cast<_Fn>(__ld->__fn)(const_cast<void*>(__base), (size_t)__off, __ld->__info, __ld_shared);
    } else {
      __v = static_cast<const _V*>(__base)[__off];
    }
    return _Cx(__v.x, __v.y);
  }
  double load_r(const void* __base, long long __off) const {
    if (__ld && __ld->__fn) {
      typedef _R (*_Fn)(void*, size_t, void*, void*);
      return reinterpret_cast<_Fn>(__ld->__fn)(const_cast<void*>(__base), (size_t)__off, __ld->__info, __ld_shared);
    }
    return static_cast<const _R*>(__base)[__off];
  }
  void store_c(void* __base, long long __off, _Cx __c) const {
    _V __v;
    __v.x = (_R)__c.real();
    __v.y = (_R)__c.imag();
    if (__st && __st->__fn) {
      typedef void (*_Fn)(void*, size_t, _V, void*, void*);
      reinterpret_cast<_Fn>(__st->__fn)(__base, (size_t)__off, __v, __st->__info, __st_shared);
    } else {
      static_cast<_V*>(__base)[__off] = __v;
    }
  }
  void store_r(void* __base, long long __off, double __x) const {
    if (__st && __st->__fn) {
      typedef void (*_Fn)(void*, size_t, _R, void*, void*);
      reinterpret_cast<_Fn>(__st->__fn)(__base, (size_t)__off, (_R)__x, __st->__info, __st_shared);
    } else {
      static_cast<_R*>(__base)[__off] = (_R)__x;
    }
  }
};

// Transforms a contiguous row-major block of dims __d[0..2] along dimensions 0 .. __axes-1
// (forward), lines gathered a few at a time so that long strides stay cache-friendly.
inline void _Along(_Cx* __buf, const long long* __d, int __axes, const std::shared_ptr<const _Fft1>* __fft,
                   std::vector<_Cx>& __line, std::vector<_Cx>& __scratch) {
  constexpr long long kLines = 16;
  for (int __a = 0; __a < __axes; ++__a) {
    const long long __len = __d[__a];
    if (__len <= 1) continue;
    const _Fft1& __f = *__fft[__a];
    long long __inner = 1, __outer = 1;
    for (int __b = __a + 1; __b < 3; ++__b) __inner *= __d[__b];
    for (int __b = 0; __b < __a; ++__b) __outer *= __d[__b];
    if (__inner == 1) {
      for (long long __o = 0; __o < __outer; ++__o) __f.forward(__buf + __o * __len, __scratch.data());
      continue;
    }
    for (long long __o = 0; __o < __outer; ++__o) {
      _Cx* __blk = __buf + __o * __len * __inner;
      for (long long __i0 = 0; __i0 < __inner; __i0 += kLines) {
        const long long __cnt = std::min(kLines, __inner - __i0);
        for (long long __t = 0; __t < __len; ++__t)
          for (long long __c = 0; __c < __cnt; ++__c) __line[__c * __len + __t] = __blk[__t * __inner + __i0 + __c];
        for (long long __c = 0; __c < __cnt; ++__c) __f.forward(__line.data() + __c * __len, __scratch.data());
        for (long long __t = 0; __t < __len; ++__t)
          for (long long __c = 0; __c < __cnt; ++__c) __blk[__t * __inner + __i0 + __c] = __line[__c * __len + __t];
      }
    }
  }
}

// The layouts of an execution: the plan's advanced ones, or the basic layout (an in-place real
// transform's real side has rows padded to 2 (n/2 + 1) reals).
inline void _Layouts(const _Plan& __p, bool __in_place, _Layout& __in, _Layout& __out) {
  const long long __nl = __p.__n[2], __half = __nl / 2 + 1;
  const bool __r2c = _Forward_real(__p.__type), __c2r = _Inverse_real(__p.__type);
  auto __basic = [&](_Layout& __l, bool __complex_half, bool __padded_real) {
    __l.__embed[0] = __p.__n[0];
    __l.__embed[1] = __p.__n[1];
    __l.__embed[2] = __complex_half ? __half : __padded_real ? 2 * __half : __nl;
    __l.__stride = 1;
    __l.__dist = __l.__embed[0] * __l.__embed[1] * __l.__embed[2];
  };
  if (__p.__basic_in) {
    __basic(__in, __c2r, __r2c && __in_place);
  } else {
    std::copy(__p.__inembed, __p.__inembed + 3, __in.__embed);
    __in.__stride = __p.__istride;
    __in.__dist = __p.__idist;
  }
  if (__p.__basic_out) {
    __basic(__out, __r2c, __c2r && __in_place);
  } else {
    std::copy(__p.__onembed, __p.__onembed + 3, __out.__embed);
    __out.__stride = __p.__ostride;
    __out.__dist = __p.__odist;
  }
  for (int __d = 0; __d < 3; ++__d) __in.__dims[__d] = __out.__dims[__d] = __p.__n[__d];
  if (__c2r) __in.__dims[2] = __half;
  if (__r2c) __out.__dims[2] = __half;
}

// One transform of a checked plan. _R: the storage precision; __kind: 0 C2C/Z2Z, 1 R2C/D2Z,
// 2 C2R/Z2D.
template <class _R>
inline cufftResult _Run(const _Plan& __plan, int __kind, const void* __idata, void* __odata, int __dir) {
  const _Plan* __p = &__plan;
  const bool __dbl = std::is_same<_R, double>::value;
  _Layout __in, __out;
  _Layouts(*__p, __idata == __odata, __in, __out);
  const int __ld = __kind == 2 ? (__dbl ? _CB_LD_COMPLEX_DOUBLE : _CB_LD_COMPLEX)
                   : __kind == 1 ? (__dbl ? _CB_LD_REAL_DOUBLE : _CB_LD_REAL)
                                 : (__dbl ? _CB_LD_COMPLEX_DOUBLE : _CB_LD_COMPLEX);
  const int __st = __kind == 2 ? (__dbl ? _CB_ST_REAL_DOUBLE : _CB_ST_REAL)
                                : (__dbl ? _CB_ST_COMPLEX_DOUBLE : _CB_ST_COMPLEX);
  try {
    std::vector<char> __ld_shared(__p->__cb[__ld].__shared), __st_shared(__p->__cb[__st].__shared);
    const _Io<_R> __io{&__p->__cb[__ld], &__p->__cb[__st], __ld_shared.empty() ? nullptr : __ld_shared.data(),
                       __st_shared.empty() ? nullptr : __st_shared.data()};
    const long long* __n = __p->__n;
    const long long __nl = __n[2], __half = __nl / 2 + 1, __rows = __n[0] * __n[1];
    const long long __elems = __rows * (__kind == 0 ? __nl : __half);
    const long long __maxlen = std::max(__n[0], std::max(__n[1], __n[2]));
    size_t __scr = 0;
    for (int __d = 0; __d < 3; ++__d) __scr = std::max(__scr, __p->__fft[__d]->scratch());
    // Batch elements are read, transformed and written one at a time, except in place in an
    // advanced layout where one element's output may land on another's input (interleaved
    // batches of a real transform, or different in and out layouts): all are read first.
    const bool __same_layout = __in.__stride == __out.__stride && __in.__dist == __out.__dist &&
                               std::equal(__in.__embed + 1, __in.__embed + 3, __out.__embed + 1);
    const long long __chunk = __idata == __odata && __p->__batch > 1 && !(__p->__basic_in && __p->__basic_out) &&
                                      (__kind != 0 || !__same_layout)
                                  ? __p->__batch
                                  : 1;
    std::vector<_Cx> __buf((size_t)(__elems * __chunk)), __line((size_t)(16 * __maxlen)), __scratch(__scr + 1);
    std::vector<_Cx> __row(__kind == 0 ? 0 : (size_t)__nl);
    const bool __conj = __kind == 0 && __dir == CUFFT_INVERSE;
    const long long __hd[3] = {__n[0], __n[1], __half};
    const std::shared_ptr<const _Fft1> __hf[3] = {__p->__fft[0], __p->__fft[1], nullptr};
    for (long long __b0 = 0; __b0 < __p->__batch; __b0 += __chunk) {
      // Read.
      for (long long __b = __b0; __b < __b0 + __chunk; ++__b) {
        _Cx* __x = __buf.data() + (__b - __b0) * __elems;
        for (long long __i0 = 0; __i0 < __n[0]; ++__i0)
          for (long long __i1 = 0; __i1 < __n[1]; ++__i1) {
            if (__kind == 0) {
              for (long long __i2 = 0; __i2 < __nl; ++__i2) {
                const _Cx __v = __io.load_c(__idata, __in.__at(__b, __i0, __i1, __i2));
                *__x++ = __conj ? std::conj(__v) : __v;
              }
            } else if (__kind == 1) {
              // Each row's full transform, of which the first n/2 + 1 terms are kept.
              for (long long __i2 = 0; __i2 < __nl; ++__i2)
                __row[__i2] = _Cx(__io.load_r(__idata, __in.__at(__b, __i0, __i1, __i2)), 0.0);
              __p->__fft[2]->forward(__row.data(), __scratch.data());
              __x = std::copy(__row.data(), __row.data() + __half, __x);
            } else {
              // The inverse over the other dimensions comes first, as conj(F(conj(.))).
              for (long long __i2 = 0; __i2 < __half; ++__i2)
                *__x++ = std::conj(__io.load_c(__idata, __in.__at(__b, __i0, __i1, __i2)));
            }
          }
      }
      // Transform.
      for (long long __b = __b0; __b < __b0 + __chunk; ++__b) {
        _Cx* __x = __buf.data() + (__b - __b0) * __elems;
        if (__kind == 0)
          _Along(__x, __n, 3, __p->__fft, __line, __scratch);
        else
          _Along(__x, __hd, 2, __hf, __line, __scratch);
      }
      // Write.
      for (long long __b = __b0; __b < __b0 + __chunk; ++__b) {
        const _Cx* __x = __buf.data() + (__b - __b0) * __elems;
        for (long long __i0 = 0; __i0 < __n[0]; ++__i0)
          for (long long __i1 = 0; __i1 < __n[1]; ++__i1) {
            if (__kind == 0) {
              for (long long __i2 = 0; __i2 < __nl; ++__i2, ++__x)
                __io.store_c(__odata, __out.__at(__b, __i0, __i1, __i2), __conj ? std::conj(*__x) : *__x);
            } else if (__kind == 1) {
              for (long long __i2 = 0; __i2 < __half; ++__i2, ++__x)
                __io.store_c(__odata, __out.__at(__b, __i0, __i1, __i2), *__x);
            } else {
              // The row holds conj(G), G the inverse over the other dimensions; the row to
              // transform forward is conj(Z), Z[k] = G[k] for k <= n/2 and conj(G[n - k])
              // above, and the output is the real part. (The imaginary parts of the
              // self-conjugate terms do not reach it.)
              for (long long __k = 0; __k < __half; ++__k) __row[__k] = __x[__k];
              for (long long __k = __half; __k < __nl; ++__k) __row[__k] = std::conj(__x[__nl - __k]);
              __p->__fft[2]->forward(__row.data(), __scratch.data());
              for (long long __i2 = 0; __i2 < __nl; ++__i2)
                __io.store_r(__odata, __out.__at(__b, __i0, __i1, __i2), __row[__i2].real());
              __x += __half;
            }
          }
      }
    }
  } catch (const std::exception&) {  // bad_alloc, length_error: too large for this host
    return CUFFT_ALLOC_FAILED;
  }
  return CUFFT_SUCCESS;
}
}  // namespace cudashim::cufft
namespace cudashim {
// The runtime's (cudashim_runtime.cpp): a library call's work as a node of the capture `__s` is in.
cudaError_t capture_library_call(cudaStream_t __s, _Closure* __w, const char* __library, const char* __call);
}  // namespace cudashim
namespace cudashim::cufft {
// One execution: checked now; run now, or, on a plan whose stream is being captured, made a node
// of the capture that each launch of the graph runs (a GPU records the plan's kernels). The node
// keeps a copy of the plan as it is now, as those kernels keep their parameters: the program may
// change or destroy the plan before it launches the graph.
template <class _R>
inline cufftResult _Exec(cufftHandle __h, int __kind, const void* __idata, void* __odata, int __dir,
                         const char* __call) {
  _Plan* __p = _Find(__h);
  if (__p == nullptr || !__p->__made) return CUFFT_INVALID_PLAN;
  const bool __dbl = std::is_same<_R, double>::value;
  const int __plan_kind = _Forward_real(__p->__type) ? 1 : _Inverse_real(__p->__type) ? 2 : 0;
  if (__plan_kind != __kind || _Double(__p->__type) != __dbl) return CUFFT_INVALID_VALUE;
  if (__idata == nullptr || __odata == nullptr) return CUFFT_INVALID_VALUE;
  if (__kind == 0 && __dir != CUFFT_FORWARD && __dir != CUFFT_INVERSE) return CUFFT_INVALID_VALUE;
  if (!__p->__auto && __p->__work == nullptr && __p->__work_size > 0) return CUFFT_NO_WORKSPACE;
  if (::cudashim::capturing(__p->__stream)) {
    auto __plan = std::make_shared<const _Plan>(*__p);
    auto __work = [__plan, __kind, __idata, __odata, __dir] { _Run<_R>(*__plan, __kind, __idata, __odata, __dir); };
    auto* __w = new ::cudashim::_Closure_of<decltype(__work)>(std::move(__work));
    return ::cudashim::capture_library_call(__p->__stream, __w, "cufft", __call) == cudaSuccess ? CUFFT_SUCCESS
                                                                                                 : CUFFT_EXEC_FAILED;
  }
  ::cudashim::_Library_access __da("cufft", __call);
  return _Run<_R>(*__p, __kind, __idata, __odata, __dir);
}
}  // namespace cudashim::cufft

inline cufftResult cufftCreate(cufftHandle* __h) { return ::cudashim::cufft::_Create(__h); }
inline cufftResult cufftDestroy(cufftHandle __h) { return ::cudashim::cufft::_Destroy(__h); }

inline cufftResult cufftPlan1d(cufftHandle* __h, int __nx, cufftType __t, int __batch) {
  const long long __n[1] = {__nx};
  return ::cudashim::cufft::_Plan_new(__h, 1, __n, nullptr, 1, 0, nullptr, 1, 0, __t, __batch);
}
inline cufftResult cufftPlan2d(cufftHandle* __h, int __nx, int __ny, cufftType __t) {
  const long long __n[2] = {__nx, __ny};
  return ::cudashim::cufft::_Plan_new(__h, 2, __n, nullptr, 1, 0, nullptr, 1, 0, __t, 1);
}
inline cufftResult cufftPlan3d(cufftHandle* __h, int __nx, int __ny, int __nz, cufftType __t) {
  const long long __n[3] = {__nx, __ny, __nz};
  return ::cudashim::cufft::_Plan_new(__h, 3, __n, nullptr, 1, 0, nullptr, 1, 0, __t, 1);
}
inline cufftResult cufftPlanMany(cufftHandle* __h, int __rank, int* __n, int* __inembed, int __istride, int __idist,
                                 int* __onembed, int __ostride, int __odist, cufftType __t, int __batch) {
  if (__n == nullptr) return CUFFT_INVALID_SIZE;
  ::cudashim::cufft::_Wide __wn(__rank, __n), __wi(__rank, __inembed), __wo(__rank, __onembed);
  return ::cudashim::cufft::_Plan_new(__h, __rank, __wn.__p, __wi.__p, __istride, __idist, __wo.__p, __ostride,
                                      __odist, __t, __batch);
}

inline cufftResult cufftMakePlan1d(cufftHandle __h, int __nx, cufftType __t, int __batch, size_t* __ws) {
  const long long __n[1] = {__nx};
  return ::cudashim::cufft::_Make(__h, 1, __n, nullptr, 1, 0, nullptr, 1, 0, __t, __batch, __ws);
}
inline cufftResult cufftMakePlan2d(cufftHandle __h, int __nx, int __ny, cufftType __t, size_t* __ws) {
  const long long __n[2] = {__nx, __ny};
  return ::cudashim::cufft::_Make(__h, 2, __n, nullptr, 1, 0, nullptr, 1, 0, __t, 1, __ws);
}
inline cufftResult cufftMakePlan3d(cufftHandle __h, int __nx, int __ny, int __nz, cufftType __t, size_t* __ws) {
  const long long __n[3] = {__nx, __ny, __nz};
  return ::cudashim::cufft::_Make(__h, 3, __n, nullptr, 1, 0, nullptr, 1, 0, __t, 1, __ws);
}
inline cufftResult cufftMakePlanMany(cufftHandle __h, int __rank, int* __n, int* __inembed, int __istride,
                                     int __idist, int* __onembed, int __ostride, int __odist, cufftType __t,
                                     int __batch, size_t* __ws) {
  if (::cudashim::cufft::_Find(__h) == nullptr) return CUFFT_INVALID_PLAN;
  if (__n == nullptr) return CUFFT_INVALID_SIZE;
  ::cudashim::cufft::_Wide __wn(__rank, __n), __wi(__rank, __inembed), __wo(__rank, __onembed);
  return ::cudashim::cufft::_Make(__h, __rank, __wn.__p, __wi.__p, __istride, __idist, __wo.__p, __ostride,
                                  __odist, __t, __batch, __ws);
}
inline cufftResult cufftMakePlanMany64(cufftHandle __h, int __rank, long long int* __n, long long int* __inembed,
                                       long long int __istride, long long int __idist, long long int* __onembed,
                                       long long int __ostride, long long int __odist, cufftType __t,
                                       long long int __batch, size_t* __ws) {
  if (::cudashim::cufft::_Find(__h) == nullptr) return CUFFT_INVALID_PLAN;
  if (__n == nullptr) return CUFFT_INVALID_SIZE;
  ::cudashim::cufft::_Wide __wn(__rank, __n), __wi(__rank, __inembed), __wo(__rank, __onembed);
  return ::cudashim::cufft::_Make(__h, __rank, __wn.__p, __wi.__p, __istride, __idist, __wo.__p, __ostride,
                                  __odist, __t, __batch, __ws);
}

inline cufftResult cufftEstimate1d(int __nx, cufftType __t, int __batch, size_t* __ws) {
  const long long __n[1] = {__nx};
  return ::cudashim::cufft::_Estimate(1, __n, nullptr, 1, 0, nullptr, 1, 0, __t, __batch, __ws);
}
inline cufftResult cufftEstimate2d(int __nx, int __ny, cufftType __t, size_t* __ws) {
  const long long __n[2] = {__nx, __ny};
  return ::cudashim::cufft::_Estimate(2, __n, nullptr, 1, 0, nullptr, 1, 0, __t, 1, __ws);
}
inline cufftResult cufftEstimate3d(int __nx, int __ny, int __nz, cufftType __t, size_t* __ws) {
  const long long __n[3] = {__nx, __ny, __nz};
  return ::cudashim::cufft::_Estimate(3, __n, nullptr, 1, 0, nullptr, 1, 0, __t, 1, __ws);
}
inline cufftResult cufftEstimateMany(int __rank, int* __n, int* __inembed, int __istride, int __idist, int* __onembed,
                                     int __ostride, int __odist, cufftType __t, int __batch, size_t* __ws) {
  if (__n == nullptr) return CUFFT_INVALID_SIZE;
  ::cudashim::cufft::_Wide __wn(__rank, __n), __wi(__rank, __inembed), __wo(__rank, __onembed);
  return ::cudashim::cufft::_Estimate(__rank, __wn.__p, __wi.__p, __istride, __idist, __wo.__p, __ostride, __odist,
                                      __t, __batch, __ws);
}

inline cufftResult cufftGetSize1d(cufftHandle __h, int __nx, cufftType __t, int __batch, size_t* __ws) {
  if (::cudashim::cufft::_Find(__h) == nullptr) return CUFFT_INVALID_PLAN;
  return cufftEstimate1d(__nx, __t, __batch, __ws);
}
inline cufftResult cufftGetSize2d(cufftHandle __h, int __nx, int __ny, cufftType __t, size_t* __ws) {
  if (::cudashim::cufft::_Find(__h) == nullptr) return CUFFT_INVALID_PLAN;
  return cufftEstimate2d(__nx, __ny, __t, __ws);
}
inline cufftResult cufftGetSize3d(cufftHandle __h, int __nx, int __ny, int __nz, cufftType __t, size_t* __ws) {
  if (::cudashim::cufft::_Find(__h) == nullptr) return CUFFT_INVALID_PLAN;
  return cufftEstimate3d(__nx, __ny, __nz, __t, __ws);
}
inline cufftResult cufftGetSizeMany(cufftHandle __h, int __rank, int* __n, int* __inembed, int __istride, int __idist,
                                    int* __onembed, int __ostride, int __odist, cufftType __t, int __batch,
                                    size_t* __ws) {
  if (::cudashim::cufft::_Find(__h) == nullptr) return CUFFT_INVALID_PLAN;
  return cufftEstimateMany(__rank, __n, __inembed, __istride, __idist, __onembed, __ostride, __odist, __t, __batch,
                           __ws);
}
inline cufftResult cufftGetSizeMany64(cufftHandle __h, int __rank, long long int* __n, long long int* __inembed,
                                      long long int __istride, long long int __idist, long long int* __onembed,
                                      long long int __ostride, long long int __odist, cufftType __t,
                                      long long int __batch, size_t* __ws) {
  if (::cudashim::cufft::_Find(__h) == nullptr) return CUFFT_INVALID_PLAN;
  if (__n == nullptr) return CUFFT_INVALID_SIZE;
  ::cudashim::cufft::_Wide __wn(__rank, __n), __wi(__rank, __inembed), __wo(__rank, __onembed);
  return ::cudashim::cufft::_Estimate(__rank, __wn.__p, __wi.__p, __istride, __idist, __wo.__p, __ostride, __odist,
                                      __t, __batch, __ws);
}
inline cufftResult cufftGetSize(cufftHandle __h, size_t* __ws) {
  ::cudashim::cufft::_Plan* __p = ::cudashim::cufft::_Find(__h);
  if (__p == nullptr) return CUFFT_INVALID_PLAN;
  if (__ws == nullptr) return CUFFT_INVALID_VALUE;
  *__ws = __p->__made ? __p->__work_size : 0;
  return CUFFT_SUCCESS;
}

inline cufftResult cufftSetWorkArea(cufftHandle __h, void* __work) {
  ::cudashim::cufft::_Plan* __p = ::cudashim::cufft::_Find(__h);
  if (__p == nullptr) return CUFFT_INVALID_PLAN;
  __p->__work = __work;
  return CUFFT_SUCCESS;
}
inline cufftResult cufftSetAutoAllocation(cufftHandle __h, int __auto) {
  ::cudashim::cufft::_Plan* __p = ::cudashim::cufft::_Find(__h);
  if (__p == nullptr) return CUFFT_INVALID_PLAN;
  __p->__auto = __auto != 0;
  return CUFFT_SUCCESS;
}
// Executions run at once, in issue order, except on a stream being captured (`_Exec`).
inline cufftResult cufftSetStream(cufftHandle __h, cudaStream_t __s) {
  ::cudashim::cufft::_Plan* __p = ::cudashim::cufft::_Find(__h);
  if (__p == nullptr) return CUFFT_INVALID_PLAN;
  __p->__stream = __s;
  return CUFFT_SUCCESS;
}
// FFTW padding is the only mode left in cuFFT (the layouts above).
inline cufftResult cufftSetCompatibilityMode(cufftHandle __h, cufftCompatibility __mode) {
  if (::cudashim::cufft::_Find(__h) == nullptr) return CUFFT_INVALID_PLAN;
  return __mode == CUFFT_COMPATIBILITY_FFTW_PADDING ? CUFFT_SUCCESS : CUFFT_INVALID_VALUE;
}

inline cufftResult cufftExecC2C(cufftHandle __h, cufftComplex* __i, cufftComplex* __o, int __dir) {
  return ::cudashim::cufft::_Exec<float>(__h, 0, __i, __o, __dir, "cufftExecC2C");
}
inline cufftResult cufftExecR2C(cufftHandle __h, cufftReal* __i, cufftComplex* __o) {
  return ::cudashim::cufft::_Exec<float>(__h, 1, __i, __o, CUFFT_FORWARD, "cufftExecR2C");
}
inline cufftResult cufftExecC2R(cufftHandle __h, cufftComplex* __i, cufftReal* __o) {
  return ::cudashim::cufft::_Exec<float>(__h, 2, __i, __o, CUFFT_INVERSE, "cufftExecC2R");
}
inline cufftResult cufftExecZ2Z(cufftHandle __h, cufftDoubleComplex* __i, cufftDoubleComplex* __o, int __dir) {
  return ::cudashim::cufft::_Exec<double>(__h, 0, __i, __o, __dir, "cufftExecZ2Z");
}
inline cufftResult cufftExecD2Z(cufftHandle __h, cufftDoubleReal* __i, cufftDoubleComplex* __o) {
  return ::cudashim::cufft::_Exec<double>(__h, 1, __i, __o, CUFFT_FORWARD, "cufftExecD2Z");
}
inline cufftResult cufftExecZ2D(cufftHandle __h, cufftDoubleComplex* __i, cufftDoubleReal* __o) {
  return ::cudashim::cufft::_Exec<double>(__h, 2, __i, __o, CUFFT_INVERSE, "cufftExecZ2D");
}

inline cufftResult cufftGetVersion(int* __v) {
  if (__v == nullptr) return CUFFT_INVALID_VALUE;
  *__v = CUFFT_VERSION;
  return CUFFT_SUCCESS;
}
inline cufftResult cufftGetProperty(libraryPropertyType __t, int* __v) {
  if (__v == nullptr) return CUFFT_INVALID_VALUE;
  switch (__t) {
    case MAJOR_VERSION: *__v = CUFFT_VER_MAJOR; return CUFFT_SUCCESS;
    case MINOR_VERSION: *__v = CUFFT_VER_MINOR; return CUFFT_SUCCESS;
    case PATCH_LEVEL: *__v = CUFFT_VER_PATCH; return CUFFT_SUCCESS;
    default: return CUFFT_INVALID_TYPE;
  }
}
