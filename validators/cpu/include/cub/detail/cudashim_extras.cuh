// cudashim: CUB's CachingDeviceAllocator (plain cudaMalloc/cudaFree: nothing is cached, so
// AddressSanitizer sees every block at its exact size) and its fancy input iterators.
#ifndef CUDASHIM_CUB_EXTRAS_CUH
#define CUDASHIM_CUB_EXTRAS_CUH

#include <cub/detail/cudashim_core.cuh>

#include <cstddef>
#include <iterator>

namespace cub {

struct CachingDeviceAllocator {
  static constexpr unsigned int INVALID_BIN = (unsigned int)-1;
  static constexpr size_t INVALID_SIZE = (size_t)-1;
  static constexpr int INVALID_DEVICE_ORDINAL = -1;
  CachingDeviceAllocator(unsigned int = 8, unsigned int = 3, unsigned int = INVALID_BIN, size_t = INVALID_SIZE,
                         bool = true, bool = false) {}
  explicit CachingDeviceAllocator(bool, bool = false) {}
  cudaError_t SetMaxCachedBytes(size_t) { return cudaSuccess; }
  cudaError_t DeviceAllocate(int, void** __p, size_t __bytes, cudaStream_t = 0) { return cudaMalloc(__p, __bytes); }
  cudaError_t DeviceAllocate(void** __p, size_t __bytes, cudaStream_t = 0) { return cudaMalloc(__p, __bytes); }
  cudaError_t DeviceFree(int, void* __p) { return cudaFree(__p); }
  cudaError_t DeviceFree(void* __p) { return cudaFree(__p); }
  cudaError_t FreeAllCached() { return cudaSuccess; }
};

namespace cudashim_detail {
// A random-access input iterator whose item i is __at(i) of the derived class.
template <class _Derived, class _Vt, class _Off>
struct input_iterator_base {
  using iterator_category = std::random_access_iterator_tag;
  using value_type = _Vt;
  using difference_type = _Off;
  using pointer = void;
  using reference = _Vt;
  _Off __i = 0;
  _Derived __at(_Off __j) const {
    _Derived __d = static_cast<const _Derived&>(*this);
    __d.__i = __j;
    return __d;
  }
  _Vt operator[](_Off __n) const { return static_cast<const _Derived&>(*this).__value(__i + __n); }
  _Vt operator*() const { return static_cast<const _Derived&>(*this).__value(__i); }
  _Derived& operator++() { ++__i; return static_cast<_Derived&>(*this); }
  _Derived operator++(int) { _Derived __d = static_cast<const _Derived&>(*this); ++__i; return __d; }
  _Derived& operator--() { --__i; return static_cast<_Derived&>(*this); }
  _Derived& operator+=(_Off __n) { __i += __n; return static_cast<_Derived&>(*this); }
  _Derived& operator-=(_Off __n) { __i -= __n; return static_cast<_Derived&>(*this); }
  _Derived operator+(_Off __n) const { return __at(__i + __n); }
  _Derived operator-(_Off __n) const { return __at(__i - __n); }
  _Off operator-(const _Derived& __o) const { return __i - __o.__i; }
  bool operator==(const _Derived& __o) const { return __i == __o.__i; }
  bool operator!=(const _Derived& __o) const { return __i != __o.__i; }
  bool operator<(const _Derived& __o) const { return __i < __o.__i; }
};
}  // namespace cudashim_detail

template <class _Vt, class _Off = std::ptrdiff_t>
struct CountingInputIterator : cudashim_detail::input_iterator_base<CountingInputIterator<_Vt, _Off>, _Vt, _Off> {
  _Vt __start;
  CountingInputIterator(const _Vt& __v = _Vt()) : __start(__v) {}
  _Vt __value(_Off __j) const { return (_Vt)(__start + (_Vt)__j); }
};

template <class _Vt, class _Off = std::ptrdiff_t>
struct ConstantInputIterator : cudashim_detail::input_iterator_base<ConstantInputIterator<_Vt, _Off>, _Vt, _Off> {
  _Vt __v;
  ConstantInputIterator(const _Vt& __value = _Vt()) : __v(__value) {}
  _Vt __value(_Off) const { return __v; }
};

template <class _Vt, class _Op, class _In, class _Off = std::ptrdiff_t>
struct TransformInputIterator
    : cudashim_detail::input_iterator_base<TransformInputIterator<_Vt, _Op, _In, _Off>, _Vt, _Off> {
  _In __in;
  _Op __op;
  TransformInputIterator(_In __input, _Op __f) : __in(__input), __op(__f) {}
  _Vt __value(_Off __j) const { return (_Vt)__op(__in[__j]); }
};

}  // namespace cub

#endif
