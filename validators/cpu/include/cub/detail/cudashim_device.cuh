// cudashim: CUB's device-wide algorithms (DeviceScan, DeviceReduce, DeviceSegmentedReduce,
// DeviceRadixSort, DeviceSelect, DeviceRunLengthEncode, DeviceHistogram) run sequentially on
// the host, with CUB's signatures and its two-phase temporary-storage protocol. "Device" memory
// is host memory in the shim, so every iterator (raw pointer, thrust or CUB iterator) is read
// directly. Work runs at the call, in issue order, except on a stream being captured, where it is a
// node of the capture (`enqueue`); debug_synchronous is accepted and ignored.
#ifndef CUDASHIM_CUB_DEVICE_CUH
#define CUDASHIM_CUB_DEVICE_CUH

#include <cub/detail/cudashim_core.cuh>

#include <cstring>
#include <numeric>

// Size query (null d_temp_storage): set the size and do nothing else; too small: CUB's error.
#define CUDASHIM_CUB_TEMP(_Dp, _Bp)                                          \
  if (::cub::cudashim_detail::size_query(_Dp, _Bp)) return cudaSuccess;     \
  if (cudaError_t __err = ::cub::cudashim_detail::check_temp(_Bp)) return __err

namespace cudashim {
// The runtime's (cudashim_runtime.cpp): a library call's work as a node of the capture `__s` is
// in (it owns `__w`).
cudaError_t capture_library_call(cudaStream_t __s, _Closure* __w, const char* __library, const char* __call);
}  // namespace cudashim

namespace cub {
namespace cudashim_detail {

template <class _Op, class _Ap, class _Bp>
using accum_t = std::decay_t<std::invoke_result_t<_Op&, _Ap, _Bp>>;

template <class _In, class _Out, class _Op, class _Acc, class _Np>
void exclusive_scan(_In __in, _Out __out, _Op __op, _Acc __acc, _Np __n) {
  for (_Np __i = 0; __i < __n; ++__i, ++__in, ++__out) {
    auto __x = *__in;  // read before writing: the scan may be in place
    _Acc __next = static_cast<_Acc>(__op(__acc, __x));
    *__out = __acc;
    __acc = __next;
  }
}

template <class _Acc, class _In, class _Out, class _Op, class _Np>
void inclusive_scan(_In __in, _Out __out, _Op __op, _Np __n) {
  if (__n <= 0) return;
  _Acc __acc = static_cast<_Acc>(*__in);
  *__out = __acc;
  for (_Np __i = 1; __i < __n; ++__i) {
    ++__in;
    ++__out;
    __acc = static_cast<_Acc>(__op(__acc, *__in));
    *__out = __acc;
  }
}

template <class _Acc, class _In, class _Out, class _Op, class _Np>
void inclusive_scan_init(_In __in, _Out __out, _Op __op, _Acc __acc, _Np __n) {
  for (_Np __i = 0; __i < __n; ++__i, ++__in, ++__out) {
    __acc = static_cast<_Acc>(__op(__acc, *__in));
    *__out = __acc;
  }
}

// By-key scans restart at every key that differs (equality_op) from the previous one.
template <class _Acc, bool _Exclusive, class _Keys, class _In, class _Out, class _Op, class _Eq, class _Np>
void scan_by_key(_Keys __keys, _In __in, _Out __out, _Op __op, const _Acc* __init, _Np __n, _Eq __eq) {
  using _Kt = value_t<_Keys>;
  _Acc __acc{};
  _Kt __prev{};
  for (_Np __i = 0; __i < __n; ++__i, ++__keys, ++__in, ++__out) {
    _Kt __k = *__keys;
    auto __x = *__in;
    bool __head = __i == 0 || !__eq(__prev, __k);
    __prev = __k;
    if constexpr (_Exclusive) {
      if (__head) __acc = *__init;
      _Acc __next = static_cast<_Acc>(__op(__acc, __x));
      *__out = __acc;
      __acc = __next;
    } else {
      __acc = __head ? static_cast<_Acc>(__x) : static_cast<_Acc>(__op(__acc, __x));
      *__out = __acc;
    }
  }
}

template <class _Acc, class _In, class _Op, class _Np>
_Acc reduce(_In __in, _Np __n, _Op __op, _Acc __acc) {
  for (_Np __i = 0; __i < __n; ++__i, ++__in) __acc = static_cast<_Acc>(__op(__acc, *__in));
  return __acc;
}

// Index and value of the first minimum (_Max: maximum) of [__in, __in + __n).
template <bool _Max, class _Vt, class _In, class _Np>
std::pair<long long, _Vt> arg_extreme(_In __in, _Np __n) {
  if (__n <= 0) return {1, _Max ? Traits<_Vt>::Lowest() : Traits<_Vt>::Max()};
  _Vt __best = *__in;
  long long __at = 0;
  for (_Np __i = 1; __i < __n; ++__i) {
    ++__in;
    _Vt __x = *__in;
    if (_Max ? (__best < __x) : (__x < __best)) {
      __best = __x;
      __at = (long long)__i;
    }
  }
  return {__at, __best};
}

template <class _Kv, class _Pair>
_Kv make_kv(const _Pair& __p) {
  _Kv __kv;
  __kv.key = static_cast<typename _Kv::Key>(__p.first);
  __kv.value = static_cast<typename _Kv::Value>(__p.second);
  return __kv;
}

// Radix-sort order of a key: its bits as an unsigned integer whose order is the key's order
// (sign bit flipped for signed integers; for floating point all bits of negatives flipped, and
// -0.0 taken as +0.0 as CUB does).
template <class _Kp>
unsigned long long radix_bits(_Kp __k) {
  if constexpr (std::is_same_v<_Kp, bool>) {
    return __k ? 1u : 0u;
  } else if constexpr (std::is_integral_v<_Kp>) {
    using _Up = std::make_unsigned_t<_Kp>;
    _Up __u = (_Up)__k;
    if constexpr (std::is_signed_v<_Kp>) __u ^= (_Up)((_Up)1 << (sizeof(_Up) * 8 - 1));
    return __u;
  } else if constexpr (std::is_floating_point_v<_Kp> && (sizeof(_Kp) == 4 || sizeof(_Kp) == 8)) {
    using _Up = std::conditional_t<sizeof(_Kp) == 4, unsigned int, unsigned long long>;
    if (__k == 0) __k = 0;
    _Up __u;
    memcpy(&__u, &__k, sizeof __u);
    const _Up __high = (_Up)1 << (sizeof(_Up) * 8 - 1);
    __u = (__u & __high) ? (_Up)~__u : (_Up)(__u | __high);
    return __u;
  } else {
    static_assert(sizeof(_Kp) == 0, "cub::DeviceRadixSort: this key type is not supported by the CPU shim");
    return 0;
  }
}

// Stable radix sort by bits [__begin, __end) of the keys; values (if any) follow their keys.
template <bool _Descending, class _Kp, class _Vp, class _Np>
void radix_sort(const _Kp* __keys_in, _Kp* __keys_out, const _Vp* __vals_in, _Vp* __vals_out, _Np __n, int __begin,
                int __end) {
  if (__n <= 0) return;
  const size_t __count = (size_t)__n;
  const int __width = __end - __begin;
  const unsigned long long __mask = __width >= 64 ? ~0ull : ((1ull << (__width > 0 ? __width : 0)) - 1);
  std::vector<unsigned long long> __digit(__count);
  for (size_t __i = 0; __i < __count; ++__i)
    __digit[__i] = __begin >= 64 ? 0 : ((radix_bits(__keys_in[__i]) >> __begin) & __mask);
  std::vector<size_t> __order(__count);
  std::iota(__order.begin(), __order.end(), size_t(0));
  std::stable_sort(__order.begin(), __order.end(), [&](size_t __a, size_t __b) {
    return _Descending ? __digit[__b] < __digit[__a] : __digit[__a] < __digit[__b];
  });
  std::vector<_Kp> __ks(__count);
  for (size_t __i = 0; __i < __count; ++__i) __ks[__i] = __keys_in[__order[__i]];
  if constexpr (!std::is_same_v<_Vp, NullType>) {
    if (__vals_in != nullptr && __vals_out != nullptr) {
      std::vector<_Vp> __vs(__count);
      for (size_t __i = 0; __i < __count; ++__i) __vs[__i] = __vals_in[__order[__i]];
      std::copy(__vs.begin(), __vs.end(), __vals_out);
    }
  }
  std::copy(__ks.begin(), __ks.end(), __keys_out);
}

// A device-wide algorithm's work: run now, or, on a stream being captured, a node of the capture
// that each launch of the graph runs (CUB's kernels are recorded on a GPU; the size query and
// the temporary-storage check stay at the call). Each run starts from a copy of the work, whose
// iterators the body advances.
template <class _Fn>
cudaError_t enqueue(cudaStream_t __s, _Fn __work, const char* __call = __builtin_FUNCTION()) {
  if (!::cudashim::capturing(__s)) {
    __work();
    return cudaSuccess;
  }
  auto __each = [__work] {
    _Fn __w = __work;
    __w();
  };
  return ::cudashim::capture_library_call(__s, new ::cudashim::_Closure_of<decltype(__each)>(std::move(__each)), "cub",
                                          __call);
}

template <class _Out, class _Vt>
void write_count(_Out __out, _Vt __count) {
  *__out = static_cast<out_value_t<_Out, long long>>(__count);
}

}  // namespace cudashim_detail

#define CUDASHIM_TEMP_PARAMS void *__d_temp_storage, size_t &__temp_storage_bytes
#define CUDASHIM_STREAM_PARAMS cudaStream_t __stream = 0, bool __debug_synchronous = false
namespace __cd = cudashim_detail;

// ------------------------------------------------------------------------------- DeviceScan
struct DeviceScan {
  template <class _In, class _Out, class _Np>
    requires __cd::iterator_like<_Out> && __cd::count_like<_Np>
  static cudaError_t ExclusiveSum(CUDASHIM_TEMP_PARAMS, _In __in, _Out __out, _Np __n, CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    CUDASHIM_CUB_TEMP(__d_temp_storage, __temp_storage_bytes);
    return __cd::enqueue(__stream, [=]() mutable {
      using _Vt = __cd::value_t<_In>;
      __cd::exclusive_scan(__in, __out, Sum{}, __cd::accum_t<Sum, _Vt, _Vt>(), __n);
    });
  }
  template <class _Io, class _Np>
    requires __cd::count_like<_Np>
  static cudaError_t ExclusiveSum(CUDASHIM_TEMP_PARAMS, _Io __data, _Np __n, CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    return ExclusiveSum(__d_temp_storage, __temp_storage_bytes, __data, __data, __n, __stream);
  }
  template <class _In, class _Out, class _Np>
    requires __cd::iterator_like<_Out> && __cd::count_like<_Np>
  static cudaError_t InclusiveSum(CUDASHIM_TEMP_PARAMS, _In __in, _Out __out, _Np __n, CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    CUDASHIM_CUB_TEMP(__d_temp_storage, __temp_storage_bytes);
    return __cd::enqueue(__stream, [=]() mutable {
      using _Vt = __cd::value_t<_In>;
      __cd::inclusive_scan<__cd::accum_t<Sum, _Vt, _Vt>>(__in, __out, Sum{}, __n);
    });
  }
  template <class _Io, class _Np>
    requires __cd::count_like<_Np>
  static cudaError_t InclusiveSum(CUDASHIM_TEMP_PARAMS, _Io __data, _Np __n, CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    return InclusiveSum(__d_temp_storage, __temp_storage_bytes, __data, __data, __n, __stream);
  }
  template <class _In, class _Out, class _Op, class _Init, class _Np>
    requires __cd::iterator_like<_Out> && __cd::count_like<_Np>
  static cudaError_t ExclusiveScan(CUDASHIM_TEMP_PARAMS, _In __in, _Out __out, _Op __op, _Init __init, _Np __n,
                                   CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    CUDASHIM_CUB_TEMP(__d_temp_storage, __temp_storage_bytes);
    return __cd::enqueue(__stream, [=]() mutable {
      using _Acc = __cd::accum_t<_Op, _Init, __cd::value_t<_In>>;
      __cd::exclusive_scan(__in, __out, __op, static_cast<_Acc>(__init), __n);
    });
  }
  template <class _Io, class _Op, class _Init, class _Np>
    requires(!__cd::iterator_like<_Op>) && __cd::count_like<_Np>
  static cudaError_t ExclusiveScan(CUDASHIM_TEMP_PARAMS, _Io __data, _Op __op, _Init __init, _Np __n,
                                   CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    return ExclusiveScan(__d_temp_storage, __temp_storage_bytes, __data, __data, __op, __init, __n, __stream);
  }
  template <class _In, class _Out, class _Op, class _Np>
    requires __cd::iterator_like<_Out> && __cd::count_like<_Np>
  static cudaError_t InclusiveScan(CUDASHIM_TEMP_PARAMS, _In __in, _Out __out, _Op __op, _Np __n,
                                   CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    CUDASHIM_CUB_TEMP(__d_temp_storage, __temp_storage_bytes);
    return __cd::enqueue(__stream, [=]() mutable {
      using _Vt = __cd::value_t<_In>;
      __cd::inclusive_scan<__cd::accum_t<_Op, _Vt, _Vt>>(__in, __out, __op, __n);
    });
  }
  template <class _Io, class _Op, class _Np>
    requires(!__cd::iterator_like<_Op>) && __cd::count_like<_Np>
  static cudaError_t InclusiveScan(CUDASHIM_TEMP_PARAMS, _Io __data, _Op __op, _Np __n, CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    return InclusiveScan(__d_temp_storage, __temp_storage_bytes, __data, __data, __op, __n, __stream);
  }
  template <class _In, class _Out, class _Op, class _Init, class _Np>
    requires __cd::iterator_like<_Out> && __cd::count_like<_Np>
  static cudaError_t InclusiveScanInit(CUDASHIM_TEMP_PARAMS, _In __in, _Out __out, _Op __op, _Init __init, _Np __n,
                                       CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    CUDASHIM_CUB_TEMP(__d_temp_storage, __temp_storage_bytes);
    return __cd::enqueue(__stream, [=]() mutable {
      using _Acc = __cd::accum_t<_Op, _Init, __cd::value_t<_In>>;
      __cd::inclusive_scan_init(__in, __out, __op, static_cast<_Acc>(__init), __n);
    });
  }

  template <class _Keys, class _In, class _Out, class _Np, class _Eq = Equality>
    requires __cd::count_like<_Np>
  static cudaError_t ExclusiveSumByKey(CUDASHIM_TEMP_PARAMS, _Keys __keys, _In __in, _Out __out, _Np __n,
                                       _Eq __eq = _Eq(), CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    CUDASHIM_CUB_TEMP(__d_temp_storage, __temp_storage_bytes);
    return __cd::enqueue(__stream, [=]() mutable {
      using _Vt = __cd::value_t<_In>;
      using _Acc = __cd::accum_t<Sum, _Vt, _Vt>;
      const _Acc __zero{};
      __cd::scan_by_key<_Acc, true>(__keys, __in, __out, Sum{}, &__zero, __n, __eq);
    });
  }
  template <class _Keys, class _In, class _Out, class _Np, class _Eq = Equality>
    requires __cd::count_like<_Np>
  static cudaError_t InclusiveSumByKey(CUDASHIM_TEMP_PARAMS, _Keys __keys, _In __in, _Out __out, _Np __n,
                                       _Eq __eq = _Eq(), CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    CUDASHIM_CUB_TEMP(__d_temp_storage, __temp_storage_bytes);
    return __cd::enqueue(__stream, [=]() mutable {
      using _Vt = __cd::value_t<_In>;
      __cd::scan_by_key<__cd::accum_t<Sum, _Vt, _Vt>, false>(__keys, __in, __out, Sum{}, nullptr, __n, __eq);
    });
  }
  template <class _Keys, class _In, class _Out, class _Op, class _Init, class _Np, class _Eq = Equality>
    requires __cd::count_like<_Np>
  static cudaError_t ExclusiveScanByKey(CUDASHIM_TEMP_PARAMS, _Keys __keys, _In __in, _Out __out, _Op __op,
                                        _Init __init, _Np __n, _Eq __eq = _Eq(), CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    CUDASHIM_CUB_TEMP(__d_temp_storage, __temp_storage_bytes);
    return __cd::enqueue(__stream, [=]() mutable {
      using _Acc = __cd::accum_t<_Op, _Init, __cd::value_t<_In>>;
      const _Acc __first = static_cast<_Acc>(__init);
      __cd::scan_by_key<_Acc, true>(__keys, __in, __out, __op, &__first, __n, __eq);
    });
  }
  template <class _Keys, class _In, class _Out, class _Op, class _Np, class _Eq = Equality>
    requires __cd::count_like<_Np>
  static cudaError_t InclusiveScanByKey(CUDASHIM_TEMP_PARAMS, _Keys __keys, _In __in, _Out __out, _Op __op, _Np __n,
                                        _Eq __eq = _Eq(), CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    CUDASHIM_CUB_TEMP(__d_temp_storage, __temp_storage_bytes);
    return __cd::enqueue(__stream, [=]() mutable {
      using _Vt = __cd::value_t<_In>;
      __cd::scan_by_key<__cd::accum_t<_Op, _Vt, _Vt>, false>(__keys, __in, __out, __op, nullptr, __n, __eq);
    });
  }
};

// ----------------------------------------------------------------------------- DeviceReduce
struct DeviceReduce {
  template <class _In, class _Out, class _Np, class _Op, class _Init>
    requires __cd::count_like<_Np>
  static cudaError_t Reduce(CUDASHIM_TEMP_PARAMS, _In __in, _Out __out, _Np __n, _Op __op, _Init __init,
                            CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    CUDASHIM_CUB_TEMP(__d_temp_storage, __temp_storage_bytes);
    return __cd::enqueue(__stream, [=]() mutable {
      using _Acc = __cd::accum_t<_Op, _Init, __cd::value_t<_In>>;
      *__out = __cd::reduce(__in, __n, __op, static_cast<_Acc>(__init));
    });
  }
  template <class _In, class _Out, class _Np>
    requires __cd::count_like<_Np>
  static cudaError_t Sum(CUDASHIM_TEMP_PARAMS, _In __in, _Out __out, _Np __n, CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    using _Vt = __cd::value_t<_In>;
    using _Init = __cd::out_value_t<_Out, _Vt>;
    return Reduce(__d_temp_storage, __temp_storage_bytes, __in, __out, __n, ::cub::Sum{}, _Init{}, __stream);
  }
  template <class _In, class _Out, class _Np>
    requires __cd::count_like<_Np>
  static cudaError_t Min(CUDASHIM_TEMP_PARAMS, _In __in, _Out __out, _Np __n, CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    using _Vt = __cd::value_t<_In>;
    return Reduce(__d_temp_storage, __temp_storage_bytes, __in, __out, __n, ::cub::Min{}, Traits<_Vt>::Max(), __stream);
  }
  template <class _In, class _Out, class _Np>
    requires __cd::count_like<_Np>
  static cudaError_t Max(CUDASHIM_TEMP_PARAMS, _In __in, _Out __out, _Np __n, CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    using _Vt = __cd::value_t<_In>;
    return Reduce(__d_temp_storage, __temp_storage_bytes, __in, __out, __n, ::cub::Max{}, Traits<_Vt>::Lowest(),
                  __stream);
  }
  // ArgMin/ArgMax write a KeyValuePair {index, value} (the first extreme; {1, Max()/Lowest()}
  // for an empty input), or the value and the index to two outputs (the CCCL 3 overloads).
  template <class _In, class _Out, class _Np>
    requires __cd::count_like<_Np>
  static cudaError_t ArgMin(CUDASHIM_TEMP_PARAMS, _In __in, _Out __out, _Np __n, CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    CUDASHIM_CUB_TEMP(__d_temp_storage, __temp_storage_bytes);
    return __cd::enqueue(__stream, [=]() mutable {
      using _Kv = __cd::value_t<_Out>;
      *__out = __cd::make_kv<_Kv>(__cd::arg_extreme<false, typename _Kv::Value>(__in, __n));
    });
  }
  template <class _In, class _Out, class _Np>
    requires __cd::count_like<_Np>
  static cudaError_t ArgMax(CUDASHIM_TEMP_PARAMS, _In __in, _Out __out, _Np __n, CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    CUDASHIM_CUB_TEMP(__d_temp_storage, __temp_storage_bytes);
    return __cd::enqueue(__stream, [=]() mutable {
      using _Kv = __cd::value_t<_Out>;
      *__out = __cd::make_kv<_Kv>(__cd::arg_extreme<true, typename _Kv::Value>(__in, __n));
    });
  }
  template <class _In, class _Vo, class _Io, class _Np>
    requires __cd::iterator_like<_Io> && __cd::count_like<_Np>
  static cudaError_t ArgMin(CUDASHIM_TEMP_PARAMS, _In __in, _Vo __val_out, _Io __idx_out, _Np __n,
                            CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    CUDASHIM_CUB_TEMP(__d_temp_storage, __temp_storage_bytes);
    return __cd::enqueue(__stream, [=]() mutable {
      auto __r = __cd::arg_extreme<false, __cd::value_t<_In>>(__in, __n);
      *__val_out = __r.second;
      *__idx_out = static_cast<__cd::out_value_t<_Io, long long>>(__r.first);
    });
  }
  template <class _In, class _Vo, class _Io, class _Np>
    requires __cd::iterator_like<_Io> && __cd::count_like<_Np>
  static cudaError_t ArgMax(CUDASHIM_TEMP_PARAMS, _In __in, _Vo __val_out, _Io __idx_out, _Np __n,
                            CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    CUDASHIM_CUB_TEMP(__d_temp_storage, __temp_storage_bytes);
    return __cd::enqueue(__stream, [=]() mutable {
      auto __r = __cd::arg_extreme<true, __cd::value_t<_In>>(__in, __n);
      *__val_out = __r.second;
      *__idx_out = static_cast<__cd::out_value_t<_Io, long long>>(__r.first);
    });
  }
  template <class _Keys, class _UniqOut, class _Vals, class _AggOut, class _NumRuns, class _Op, class _Np>
    requires __cd::count_like<_Np>
  static cudaError_t ReduceByKey(CUDASHIM_TEMP_PARAMS, _Keys __keys, _UniqOut __uniq, _Vals __vals, _AggOut __aggs,
                                 _NumRuns __num_runs, _Op __op, _Np __n, CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    CUDASHIM_CUB_TEMP(__d_temp_storage, __temp_storage_bytes);
    return __cd::enqueue(__stream, [=]() mutable {
      using _Kt = __cd::value_t<_Keys>;
      using _Vt = __cd::value_t<_Vals>;
      using _Acc = __cd::accum_t<_Op, _Vt, _Vt>;
      long long __runs = 0;
      _Kt __prev{};
      _Acc __acc{};
      for (_Np __i = 0; __i < __n; ++__i, ++__keys, ++__vals) {
        _Kt __k = *__keys;
        _Vt __v = *__vals;
        if (__i == 0 || !(__prev == __k)) {
          if (__i > 0) __aggs[__runs - 1] = __acc;
          __uniq[__runs++] = __k;
          __acc = static_cast<_Acc>(__v);
        } else {
          __acc = static_cast<_Acc>(__op(__acc, __v));
        }
        __prev = __k;
      }
      if (__runs > 0) __aggs[__runs - 1] = __acc;
      __cd::write_count(__num_runs, __runs);
    });
  }
};

// -------------------------------------------------------------------- DeviceSegmentedReduce
struct DeviceSegmentedReduce {
  template <class _In, class _Out, class _Beg, class _End, class _Op, class _Init, class _Sn>
    requires __cd::count_like<_Sn>
  static cudaError_t Reduce(CUDASHIM_TEMP_PARAMS, _In __in, _Out __out, _Sn __segments, _Beg __begins, _End __ends,
                            _Op __op, _Init __init, CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    CUDASHIM_CUB_TEMP(__d_temp_storage, __temp_storage_bytes);
    return __cd::enqueue(__stream, [=]() mutable {
      using _Acc = __cd::accum_t<_Op, _Init, __cd::value_t<_In>>;
      for (_Sn __s = 0; __s < __segments; ++__s) {
        long long __b = (long long)__begins[__s], __e = (long long)__ends[__s];
        __out[__s] = __cd::reduce(__in + __b, __e > __b ? __e - __b : 0, __op, static_cast<_Acc>(__init));
      }
    });
  }
  template <class _In, class _Out, class _Beg, class _End, class _Sn>
    requires __cd::count_like<_Sn>
  static cudaError_t Sum(CUDASHIM_TEMP_PARAMS, _In __in, _Out __out, _Sn __segments, _Beg __begins, _End __ends,
                         CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    using _Init = __cd::out_value_t<_Out, __cd::value_t<_In>>;
    return Reduce(__d_temp_storage, __temp_storage_bytes, __in, __out, __segments, __begins, __ends, ::cub::Sum{},
                  _Init{}, __stream);
  }
  template <class _In, class _Out, class _Beg, class _End, class _Sn>
    requires __cd::count_like<_Sn>
  static cudaError_t Min(CUDASHIM_TEMP_PARAMS, _In __in, _Out __out, _Sn __segments, _Beg __begins, _End __ends,
                         CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    return Reduce(__d_temp_storage, __temp_storage_bytes, __in, __out, __segments, __begins, __ends, ::cub::Min{},
                  Traits<__cd::value_t<_In>>::Max(), __stream);
  }
  template <class _In, class _Out, class _Beg, class _End, class _Sn>
    requires __cd::count_like<_Sn>
  static cudaError_t Max(CUDASHIM_TEMP_PARAMS, _In __in, _Out __out, _Sn __segments, _Beg __begins, _End __ends,
                         CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    return Reduce(__d_temp_storage, __temp_storage_bytes, __in, __out, __segments, __begins, __ends, ::cub::Max{},
                  Traits<__cd::value_t<_In>>::Lowest(), __stream);
  }
  // Keys are offsets within each segment, as in CUB.
  template <class _In, class _Out, class _Beg, class _End, class _Sn>
    requires __cd::count_like<_Sn>
  static cudaError_t ArgMin(CUDASHIM_TEMP_PARAMS, _In __in, _Out __out, _Sn __segments, _Beg __begins, _End __ends,
                            CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    CUDASHIM_CUB_TEMP(__d_temp_storage, __temp_storage_bytes);
    return __cd::enqueue(__stream, [=]() mutable {
      using _Kv = __cd::value_t<_Out>;
      for (_Sn __s = 0; __s < __segments; ++__s) {
        long long __b = (long long)__begins[__s], __e = (long long)__ends[__s];
        __out[__s] = __cd::make_kv<_Kv>(__cd::arg_extreme<false, typename _Kv::Value>(__in + __b, __e - __b));
      }
    });
  }
  template <class _In, class _Out, class _Beg, class _End, class _Sn>
    requires __cd::count_like<_Sn>
  static cudaError_t ArgMax(CUDASHIM_TEMP_PARAMS, _In __in, _Out __out, _Sn __segments, _Beg __begins, _End __ends,
                            CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    CUDASHIM_CUB_TEMP(__d_temp_storage, __temp_storage_bytes);
    return __cd::enqueue(__stream, [=]() mutable {
      using _Kv = __cd::value_t<_Out>;
      for (_Sn __s = 0; __s < __segments; ++__s) {
        long long __b = (long long)__begins[__s], __e = (long long)__ends[__s];
        __out[__s] = __cd::make_kv<_Kv>(__cd::arg_extreme<true, typename _Kv::Value>(__in + __b, __e - __b));
      }
    });
  }
};

// -------------------------------------------------------------------------- DeviceRadixSort
// Stable; sorts by bits [begin_bit, end_bit) of each key's radix order. The DoubleBuffer
// overloads sort from Current() into Alternate() and flip the selector (use Current() after).
struct DeviceRadixSort {
#define CUDASHIM_RADIX_BITS int __begin_bit = 0, int __end_bit = (int)sizeof(_Kp) * 8
#define CUDASHIM_RADIX_KEYS(NAME, DESC)                                                                        \
  template <class _Kp, class _Np>                                                                              \
    requires __cd::count_like<_Np>                                                                             \
  static cudaError_t NAME(CUDASHIM_TEMP_PARAMS, const _Kp* __keys_in, _Kp* __keys_out, _Np __n,                 \
                          CUDASHIM_RADIX_BITS, CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub"); \
    CUDASHIM_CUB_TEMP(__d_temp_storage, __temp_storage_bytes);                                                 \
    return __cd::enqueue(__stream, [=] {                                                                       \
      __cd::radix_sort<DESC, _Kp, NullType>(__keys_in, __keys_out, nullptr, nullptr, __n, __begin_bit, __end_bit); \
    });                                                                                                        \
  }                                                                                                            \
  template <class _Kp, class _Np>                                                                              \
    requires __cd::count_like<_Np>                                                                             \
  static cudaError_t NAME(CUDASHIM_TEMP_PARAMS, DoubleBuffer<_Kp>& __keys, _Np __n, CUDASHIM_RADIX_BITS,        \
                          CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");          \
    CUDASHIM_CUB_TEMP(__d_temp_storage, __temp_storage_bytes);                                                 \
    /* CUB flips the selector at the call (host side); the kernels, captured or not, use the buffers as they \
       were then. */                                                                                           \
    _Kp *__from = __keys.Current(), *__to = __keys.Alternate();                                                \
    cudaError_t __err = __cd::enqueue(__stream, [=] {                                                          \
      __cd::radix_sort<DESC, _Kp, NullType>(__from, __to, nullptr, nullptr, __n, __begin_bit, __end_bit);      \
    });                                                                                                        \
    if (__err == cudaSuccess) __keys.selector ^= 1;                                                            \
    return __err;                                                                                              \
  }
#define CUDASHIM_RADIX_PAIRS(NAME, DESC)                                                                       \
  template <class _Kp, class _Vp, class _Np>                                                                   \
    requires __cd::count_like<_Np>                                                                             \
  static cudaError_t NAME(CUDASHIM_TEMP_PARAMS, const _Kp* __keys_in, _Kp* __keys_out, const _Vp* __vals_in,    \
                          _Vp* __vals_out, _Np __n, CUDASHIM_RADIX_BITS, CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub"); \
    CUDASHIM_CUB_TEMP(__d_temp_storage, __temp_storage_bytes);                                                 \
    return __cd::enqueue(__stream, [=] {                                                                       \
      __cd::radix_sort<DESC>(__keys_in, __keys_out, __vals_in, __vals_out, __n, __begin_bit, __end_bit);        \
    });                                                                                                        \
  }                                                                                                            \
  template <class _Kp, class _Vp, class _Np>                                                                   \
    requires __cd::count_like<_Np>                                                                             \
  static cudaError_t NAME(CUDASHIM_TEMP_PARAMS, DoubleBuffer<_Kp>& __keys, DoubleBuffer<_Vp>& __vals, _Np __n,  \
                          CUDASHIM_RADIX_BITS, CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub"); \
    CUDASHIM_CUB_TEMP(__d_temp_storage, __temp_storage_bytes);                                                 \
    _Kp *__kfrom = __keys.Current(), *__kto = __keys.Alternate();                                              \
    _Vp *__vfrom = __vals.Current(), *__vto = __vals.Alternate();                                              \
    cudaError_t __err = __cd::enqueue(__stream, [=] {                                                          \
      __cd::radix_sort<DESC>(__kfrom, __kto, __vfrom, __vto, __n, __begin_bit, __end_bit);                      \
    });                                                                                                        \
    if (__err == cudaSuccess) {                                                                                \
      __keys.selector ^= 1;                                                                                    \
      __vals.selector ^= 1;                                                                                    \
    }                                                                                                          \
    return __err;                                                                                              \
  }
  CUDASHIM_RADIX_KEYS(SortKeys, false)
  CUDASHIM_RADIX_KEYS(SortKeysDescending, true)
  CUDASHIM_RADIX_PAIRS(SortPairs, false)
  CUDASHIM_RADIX_PAIRS(SortPairsDescending, true)
#undef CUDASHIM_RADIX_KEYS
#undef CUDASHIM_RADIX_PAIRS
#undef CUDASHIM_RADIX_BITS
};

// ----------------------------------------------------------------------------- DeviceSelect
struct DeviceSelect {
  template <class _In, class _Out, class _NumSel, class _Np, class _Pred>
    requires __cd::iterator_like<_Out> && __cd::iterator_like<_NumSel> && __cd::count_like<_Np>
  static cudaError_t If(CUDASHIM_TEMP_PARAMS, _In __in, _Out __out, _NumSel __num_selected, _Np __n, _Pred __pred,
                        CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    CUDASHIM_CUB_TEMP(__d_temp_storage, __temp_storage_bytes);
    return __cd::enqueue(__stream, [=]() mutable {
      std::vector<__cd::value_t<_In>> __kept;
      for (_Np __i = 0; __i < __n; ++__i, ++__in) {
        auto __x = *__in;
        if (__pred(__x)) __kept.push_back(__x);
      }
      std::copy(__kept.begin(), __kept.end(), __out);
      __cd::write_count(__num_selected, (long long)__kept.size());
    });
  }
  template <class _Io, class _NumSel, class _Np, class _Pred>
    requires __cd::iterator_like<_NumSel> && __cd::count_like<_Np>
  static cudaError_t If(CUDASHIM_TEMP_PARAMS, _Io __data, _NumSel __num_selected, _Np __n, _Pred __pred,
                        CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    return If(__d_temp_storage, __temp_storage_bytes, __data, __data, __num_selected, __n, __pred, __stream);
  }
  template <class _In, class _Flags, class _Out, class _NumSel, class _Np>
    requires __cd::iterator_like<_Out> && __cd::iterator_like<_NumSel> && __cd::count_like<_Np>
  static cudaError_t Flagged(CUDASHIM_TEMP_PARAMS, _In __in, _Flags __flags, _Out __out, _NumSel __num_selected,
                             _Np __n, CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    CUDASHIM_CUB_TEMP(__d_temp_storage, __temp_storage_bytes);
    return __cd::enqueue(__stream, [=]() mutable {
      std::vector<__cd::value_t<_In>> __kept;
      for (_Np __i = 0; __i < __n; ++__i, ++__in, ++__flags)
        if (*__flags) __kept.push_back(*__in);
      std::copy(__kept.begin(), __kept.end(), __out);
      __cd::write_count(__num_selected, (long long)__kept.size());
    });
  }
  template <class _Io, class _Flags, class _NumSel, class _Np>
    requires __cd::iterator_like<_NumSel> && __cd::count_like<_Np>
  static cudaError_t Flagged(CUDASHIM_TEMP_PARAMS, _Io __data, _Flags __flags, _NumSel __num_selected, _Np __n,
                             CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    return Flagged(__d_temp_storage, __temp_storage_bytes, __data, __flags, __data, __num_selected, __n, __stream);
  }
  template <class _In, class _Out, class _NumSel, class _Np>
    requires __cd::iterator_like<_NumSel> && __cd::count_like<_Np>
  static cudaError_t Unique(CUDASHIM_TEMP_PARAMS, _In __in, _Out __out, _NumSel __num_selected, _Np __n,
                            CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    CUDASHIM_CUB_TEMP(__d_temp_storage, __temp_storage_bytes);
    return __cd::enqueue(__stream, [=]() mutable {
      std::vector<__cd::value_t<_In>> __kept;
      for (_Np __i = 0; __i < __n; ++__i, ++__in) {
        auto __x = *__in;
        if (__kept.empty() || !(__kept.back() == __x)) __kept.push_back(__x);
      }
      std::copy(__kept.begin(), __kept.end(), __out);
      __cd::write_count(__num_selected, (long long)__kept.size());
    });
  }
  template <class _Kin, class _Vin, class _Kout, class _Vout, class _NumSel, class _Np>
    requires __cd::iterator_like<_NumSel> && __cd::count_like<_Np>
  static cudaError_t UniqueByKey(CUDASHIM_TEMP_PARAMS, _Kin __keys_in, _Vin __vals_in, _Kout __keys_out,
                                 _Vout __vals_out, _NumSel __num_selected, _Np __n, CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    CUDASHIM_CUB_TEMP(__d_temp_storage, __temp_storage_bytes);
    return __cd::enqueue(__stream, [=]() mutable {
      std::vector<__cd::value_t<_Kin>> __ks;
      std::vector<__cd::value_t<_Vin>> __vs;
      for (_Np __i = 0; __i < __n; ++__i, ++__keys_in, ++__vals_in) {
        auto __k = *__keys_in;
        if (__ks.empty() || !(__ks.back() == __k)) {
          __ks.push_back(__k);
          __vs.push_back(*__vals_in);
        }
      }
      std::copy(__ks.begin(), __ks.end(), __keys_out);
      std::copy(__vs.begin(), __vs.end(), __vals_out);
      __cd::write_count(__num_selected, (long long)__ks.size());
    });
  }
};

// -------------------------------------------------------------------- DeviceRunLengthEncode
struct DeviceRunLengthEncode {
  template <class _In, class _UniqOut, class _CountOut, class _NumRuns, class _Np>
    requires __cd::count_like<_Np>
  static cudaError_t Encode(CUDASHIM_TEMP_PARAMS, _In __in, _UniqOut __uniq, _CountOut __counts, _NumRuns __num_runs,
                            _Np __n, CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    CUDASHIM_CUB_TEMP(__d_temp_storage, __temp_storage_bytes);
    return __cd::enqueue(__stream, [=]() mutable {
      using _Ct = __cd::out_value_t<_CountOut, int>;
      long long __runs = 0;
      __cd::value_t<_In> __prev{};
      for (_Np __i = 0; __i < __n; ++__i, ++__in) {
        auto __x = *__in;
        if (__i == 0 || !(__prev == __x)) {
          __uniq[__runs] = __x;
          __counts[__runs] = _Ct(0);
          ++__runs;
        }
        __counts[__runs - 1] = _Ct(__counts[__runs - 1] + 1);
        __prev = __x;
      }
      __cd::write_count(__num_runs, __runs);
    });
  }
  // Runs longer than one item: their offsets and lengths.
  template <class _In, class _OffOut, class _LenOut, class _NumRuns, class _Np>
    requires __cd::count_like<_Np>
  static cudaError_t NonTrivialRuns(CUDASHIM_TEMP_PARAMS, _In __in, _OffOut __offsets, _LenOut __lengths,
                                    _NumRuns __num_runs, _Np __n, CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    CUDASHIM_CUB_TEMP(__d_temp_storage, __temp_storage_bytes);
    return __cd::enqueue(__stream, [=]() mutable {
      long long __runs = 0, __start = 0;
      for (long long __i = 1; __i <= (long long)__n; ++__i) {
        if (__i == (long long)__n || !(__in[__i] == __in[__start])) {
          if (__i - __start > 1) {
            __offsets[__runs] = static_cast<__cd::out_value_t<_OffOut, long long>>(__start);
            __lengths[__runs] = static_cast<__cd::out_value_t<_LenOut, long long>>(__i - __start);
            ++__runs;
          }
          __start = __i;
        }
      }
      __cd::write_count(__num_runs, __runs);
    });
  }
};

// -------------------------------------------------------------------------- DeviceHistogram
// HistogramEven: num_levels - 1 equal bins over [lower, upper); HistogramRange: bin i is
// [levels[i], levels[i+1]). Samples outside are not counted; the histogram is zeroed first.
struct DeviceHistogram {
  template <class _Sp, class _Lp>
  static long long even_bin(const _Sp& __s, _Lp __lo, _Lp __hi, long long __bins) {
    if (!(__s >= __lo && __s < __hi)) return -1;
    long long __b;
    if constexpr (std::is_integral_v<_Lp> && std::is_integral_v<_Sp>)
      __b = (long long)(((__int128)((long long)__s - (long long)__lo) * __bins) / ((long long)__hi - (long long)__lo));
    else
      __b = (long long)(((double)__s - (double)__lo) / (((double)__hi - (double)__lo) / (double)__bins));
    return __b < 0 ? 0 : (__b >= __bins ? __bins - 1 : __b);
  }
  template <class _Samples, class _Counter, class _Lp, class _Np>
    requires __cd::count_like<_Np>
  static cudaError_t HistogramEven(CUDASHIM_TEMP_PARAMS, _Samples __samples, _Counter* __hist, int __num_levels,
                                   _Lp __lower, _Lp __upper, _Np __n, CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    CUDASHIM_CUB_TEMP(__d_temp_storage, __temp_storage_bytes);
    return __cd::enqueue(__stream, [=]() mutable {
      const long long __bins = __num_levels - 1;
      for (long long __b = 0; __b < __bins; ++__b) __hist[__b] = _Counter(0);
      for (_Np __i = 0; __i < __n; ++__i, ++__samples) {
        long long __b = even_bin(*__samples, __lower, __upper, __bins);
        if (__b >= 0) ++__hist[__b];
      }
    });
  }
  template <class _Samples, class _Counter, class _Lp, class _Np, class _Rp>
    requires __cd::count_like<_Np> && __cd::count_like<_Rp>
  static cudaError_t HistogramEven(CUDASHIM_TEMP_PARAMS, _Samples __samples, _Counter* __hist, int __num_levels,
                                   _Lp __lower, _Lp __upper, _Np __row_samples, _Rp __rows, size_t __row_stride_bytes,
                                   CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    CUDASHIM_CUB_TEMP(__d_temp_storage, __temp_storage_bytes);
    return __cd::enqueue(__stream, [=]() mutable {
      using _St = __cd::value_t<_Samples>;
      const long long __bins = __num_levels - 1;
      for (long long __b = 0; __b < __bins; ++__b) __hist[__b] = _Counter(0);
      for (_Rp __r = 0; __r < __rows; ++__r) {
        const _St* __row = reinterpret_cast<const _St*>(reinterpret_cast<const char*>(&*__samples) + __r * __row_stride_bytes);
        for (_Np __i = 0; __i < __row_samples; ++__i) {
          long long __b = even_bin(__row[__i], __lower, __upper, __bins);
          if (__b >= 0) ++__hist[__b];
        }
      }
    });
  }
  template <class _Samples, class _Counter, class _Lp, class _Np>
    requires __cd::count_like<_Np>
  static cudaError_t HistogramRange(CUDASHIM_TEMP_PARAMS, _Samples __samples, _Counter* __hist, int __num_levels,
                                    const _Lp* __levels, _Np __n, CUDASHIM_STREAM_PARAMS) { ::cudashim::_Library_access __cudashim_da("cub");
    CUDASHIM_CUB_TEMP(__d_temp_storage, __temp_storage_bytes);
    return __cd::enqueue(__stream, [=]() mutable {
      const long long __bins = __num_levels - 1;
      for (long long __b = 0; __b < __bins; ++__b) __hist[__b] = _Counter(0);
      for (_Np __i = 0; __i < __n; ++__i, ++__samples) {
        auto __s = *__samples;
        if (__bins <= 0 || !(__s >= __levels[0] && __s < __levels[__bins])) continue;
        long long __b = (long long)(std::upper_bound(__levels, __levels + __num_levels, __s) - __levels) - 1;
        if (__b >= 0 && __b < __bins) ++__hist[__b];
      }
    });
  }
};

#undef CUDASHIM_TEMP_PARAMS
#undef CUDASHIM_STREAM_PARAMS
}  // namespace cub

#endif
