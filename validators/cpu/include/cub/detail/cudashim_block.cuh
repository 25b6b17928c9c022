// cudashim: CUB's block- and warp-wide collectives (BlockReduce, BlockScan, WarpReduce,
// WarpScan) on top of the shim's barriers. Every thread stores its item in the TempStorage
// (the program's __shared__ object, per block as on a GPU), one thread combines them in order
// after a barrier, and the results are read after another. As in CUB, results of a BlockReduce
// are valid in thread 0 only (warp: lane 0), and reusing a BlockReduce/BlockScan TempStorage
// needs a __syncthreads() in between; a program that forgets it races, which the schedule check
// reports. WarpReduce/WarpScan end with a __syncwarp, as CUB's shuffle versions need none.
#ifndef CUDASHIM_CUB_BLOCK_CUH
#define CUDASHIM_CUB_BLOCK_CUH

#include <cub/detail/cudashim_core.cuh>

#include <new>
#include <optional>

namespace cub {

enum BlockReduceAlgorithm {
  BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY,
  BLOCK_REDUCE_RAKING,
  BLOCK_REDUCE_WARP_REDUCTIONS,
};
enum BlockScanAlgorithm {
  BLOCK_SCAN_RAKING,
  BLOCK_SCAN_RAKING_MEMOIZE,
  BLOCK_SCAN_WARP_SCANS,
};

namespace cudashim_detail {
template <class _Tp, int _Np>
struct slots {
  alignas(_Tp) unsigned char __raw[sizeof(_Tp) * _Np];
  _Tp* get() { return reinterpret_cast<_Tp*>(__raw); }
};
inline int block_threads() { return (int)(blockDim.x * blockDim.y * blockDim.z); }
template <int _Bx, int _By>
inline int linear_tid() {
  return (int)threadIdx.x + (int)threadIdx.y * _Bx + (int)threadIdx.z * _Bx * _By;
}
// The lanes of a logical warp of _Lw threads that exist in this block (a partial last warp
// has fewer), as a mask over the physical warp.
template <int _Lw>
inline unsigned logical_warp_mask() {
  const int __tid = (int)threadIdx.x + (int)threadIdx.y * (int)blockDim.x + (int)threadIdx.z * (int)blockDim.x * (int)blockDim.y;
  const int __lane = __tid % 32;
  const int __warp_base = __tid - __lane;
  const int __first = (__lane / _Lw) * _Lw;
  unsigned __mask = 0;
  for (int __l = __first; __l < __first + _Lw && __l < 32; ++__l)
    if (__warp_base + __l < block_threads()) __mask |= 1u << __l;
  return __mask;
}
template <class _Tp, int _Np, class _Op>
_Tp thread_reduce(_Tp (&__items)[_Np], _Op __op) {
  _Tp __acc = __items[0];
  for (int __i = 1; __i < _Np; ++__i) __acc = __op(__acc, __items[__i]);
  return __acc;
}
struct no_prefix {
  template <class _Tp>
  _Tp operator()(const _Tp& __v) const { return __v; }
};
}  // namespace cudashim_detail

// ------------------------------------------------------------------------------ BlockReduce
template <class _Tp, int _Bx, BlockReduceAlgorithm _Alg = BLOCK_REDUCE_WARP_REDUCTIONS, int _By = 1, int _Bz = 1,
          int _Arch = 800>
class BlockReduce {
  static constexpr int _Threads = _Bx * _By * _Bz;

 public:
  struct TempStorage : cudashim_detail::slots<_Tp, _Threads> {};

  BlockReduce() : __storage(__private_storage()), __tid(cudashim_detail::linear_tid<_Bx, _By>()) {}
  explicit BlockReduce(TempStorage& __s) : __storage(__s), __tid(cudashim_detail::linear_tid<_Bx, _By>()) {}

  template <class _Op>
  _Tp Reduce(_Tp __input, _Op __op) { return Reduce(__input, __op, _Threads); }
  template <class _Op>
  _Tp Reduce(_Tp __input, _Op __op, int __num_valid) {
    _Tp* __slot = __storage.get();
    if (__tid < _Threads && __tid < __num_valid) ::new (&__slot[__tid]) _Tp(__input);
    __syncthreads();
    if (__tid != 0) return __input;
    const int __count = std::min({__num_valid, _Threads, cudashim_detail::block_threads()});
    _Tp __acc = __slot[0];
    for (int __i = 1; __i < __count; ++__i) __acc = __op(__acc, __slot[__i]);
    return __acc;
  }
  template <int _Np, class _Op>
  _Tp Reduce(_Tp (&__items)[_Np], _Op __op) { return Reduce(cudashim_detail::thread_reduce(__items, __op), __op); }
  _Tp Sum(_Tp __input) { return Reduce(__input, ::cub::Sum{}); }
  _Tp Sum(_Tp __input, int __num_valid) { return Reduce(__input, ::cub::Sum{}, __num_valid); }
  template <int _Np>
  _Tp Sum(_Tp (&__items)[_Np]) { return Reduce(__items, ::cub::Sum{}); }

 private:
  static TempStorage& __private_storage() {
    __shared__ TempStorage __s;
    return __s;
  }
  TempStorage& __storage;
  int __tid;
};

// ------------------------------------------------------------------ BlockAdjacentDifference
// Each thread stores its last item (SubtractLeft) or first (SubtractRight), then after a barrier
// combines its items with their neighbours: output[i] = op(input[i], left or right neighbour).
// The tile's first item (left; the predecessor's difference when one is given) and last item
// (right; the successor's) keep their input, and so does every item of a partial tile past its
// valid items (left: index >= valid; right: index >= valid - 1), as CUB documents. Items are
// read before being overwritten, so output may be the input array, as CUB allows. The operator
// gets non-const lvalues, as CUB's own example's `operator()(T& lhs, T& rhs)` needs.
template <class _Tp, int _Bx, int _By = 1, int _Bz = 1, int _Arch = 0>
class BlockAdjacentDifference {
  static constexpr int _Threads = _Bx * _By * _Bz;

 public:
  struct TempStorage : cudashim_detail::slots<_Tp, _Threads> {};

  BlockAdjacentDifference() : __storage(__private_storage()), __tid(cudashim_detail::linear_tid<_Bx, _By>()) {}
  explicit BlockAdjacentDifference(TempStorage& __s) : __storage(__s), __tid(cudashim_detail::linear_tid<_Bx, _By>()) {}

  template <int _Np, class _Out, class _Op>
  void SubtractLeft(_Tp (&__in)[_Np], _Out (&__out)[_Np], _Op __op) { __left(__in, __out, __op, nullptr, _Threads * _Np); }
  template <int _Np, class _Out, class _Op>
  void SubtractLeft(_Tp (&__in)[_Np], _Out (&__out)[_Np], _Op __op, _Tp __pred) { __left(__in, __out, __op, &__pred, _Threads * _Np); }
  template <int _Np, class _Out, class _Op>
  void SubtractLeftPartialTile(_Tp (&__in)[_Np], _Out (&__out)[_Np], _Op __op, int __valid) {
    __left(__in, __out, __op, nullptr, __valid);
  }
  template <int _Np, class _Out, class _Op>
  void SubtractLeftPartialTile(_Tp (&__in)[_Np], _Out (&__out)[_Np], _Op __op, int __valid, _Tp __pred) {
    __left(__in, __out, __op, &__pred, __valid);
  }
  template <int _Np, class _Out, class _Op>
  void SubtractRight(_Tp (&__in)[_Np], _Out (&__out)[_Np], _Op __op) { __right(__in, __out, __op, nullptr, _Threads * _Np); }
  template <int _Np, class _Out, class _Op>
  void SubtractRight(_Tp (&__in)[_Np], _Out (&__out)[_Np], _Op __op, _Tp __succ) { __right(__in, __out, __op, &__succ, _Threads * _Np); }
  template <int _Np, class _Out, class _Op>
  void SubtractRightPartialTile(_Tp (&__in)[_Np], _Out (&__out)[_Np], _Op __op, int __valid) {
    __right(__in, __out, __op, nullptr, __valid);
  }

 private:
  template <int _Np, class _Out, class _Op>
  void __left(_Tp (&__in)[_Np], _Out (&__out)[_Np], _Op& __op, _Tp* __pred, int __valid) {
    _Tp* __slot = __storage.get();
    if (__tid < _Threads) ::new (&__slot[__tid]) _Tp(__in[_Np - 1]);
    __syncthreads();
    for (int __i = _Np - 1; __i > 0; --__i)
      __out[__i] = __tid * _Np + __i < __valid ? static_cast<_Out>(__op(__in[__i], __in[__i - 1])) : static_cast<_Out>(__in[__i]);
    if (__tid * _Np >= __valid || (__tid == 0 && __pred == nullptr))
      __out[0] = static_cast<_Out>(__in[0]);
    else
      __out[0] = static_cast<_Out>(__op(__in[0], *(__tid == 0 ? __pred : &__slot[__tid - 1])));
  }
  template <int _Np, class _Out, class _Op>
  void __right(_Tp (&__in)[_Np], _Out (&__out)[_Np], _Op& __op, _Tp* __succ, int __valid) {
    _Tp* __slot = __storage.get();
    if (__tid < _Threads) ::new (&__slot[__tid]) _Tp(__in[0]);
    __syncthreads();
    for (int __i = 0; __i < _Np - 1; ++__i)
      __out[__i] = __tid * _Np + __i < __valid - 1 ? static_cast<_Out>(__op(__in[__i], __in[__i + 1])) : static_cast<_Out>(__in[__i]);
    const int __last = __tid * _Np + _Np - 1;
    if (__last < __valid - 1)
      __out[_Np - 1] = static_cast<_Out>(__op(__in[_Np - 1], __slot[__tid + 1]));
    else if (__succ != nullptr && __last == _Threads * _Np - 1)
      __out[_Np - 1] = static_cast<_Out>(__op(__in[_Np - 1], *__succ));
    else
      __out[_Np - 1] = static_cast<_Out>(__in[_Np - 1]);
  }
  static TempStorage& __private_storage() {
    __shared__ TempStorage __s;
    return __s;
  }
  TempStorage& __storage;
  int __tid;
};

// -------------------------------------------------------------------------------- BlockScan
template <class _Tp, int _Bx, BlockScanAlgorithm _Alg = BLOCK_SCAN_RAKING, int _By = 1, int _Bz = 1, int _Arch = 800>
class BlockScan {
  static constexpr int _Threads = _Bx * _By * _Bz;
  struct __store {
    cudashim_detail::slots<_Tp, _Threads> __res;
    cudashim_detail::slots<_Tp, 2> __agg;  // [0] aggregate of the inputs, [1] prefix from the callback
  };

 public:
  struct TempStorage : __store {};

  BlockScan() : __storage(__private_storage()), __tid(cudashim_detail::linear_tid<_Bx, _By>()) {}
  explicit BlockScan(TempStorage& __s) : __storage(__s), __tid(cudashim_detail::linear_tid<_Bx, _By>()) {}

  // Sums
  void ExclusiveSum(_Tp __in, _Tp& __out) { _Tp __a; __scan(__in, __out, ::cub::Sum{}, _Tp(0), true, __a, __nop()); }
  void ExclusiveSum(_Tp __in, _Tp& __out, _Tp& __agg) { __scan(__in, __out, ::cub::Sum{}, _Tp(0), true, __agg, __nop()); }
  template <class _Pf>
    requires std::is_invocable_v<_Pf&, _Tp>
  void ExclusiveSum(_Tp __in, _Tp& __out, _Pf& __prefix) { _Tp __a; __scan(__in, __out, ::cub::Sum{}, _Tp(0), true, __a, &__prefix); }
  void InclusiveSum(_Tp __in, _Tp& __out) { _Tp __a; __scan(__in, __out, ::cub::Sum{}, _Tp(0), false, __a, __nop()); }
  void InclusiveSum(_Tp __in, _Tp& __out, _Tp& __agg) { __scan(__in, __out, ::cub::Sum{}, _Tp(0), false, __agg, __nop()); }
  template <class _Pf>
    requires std::is_invocable_v<_Pf&, _Tp>
  void InclusiveSum(_Tp __in, _Tp& __out, _Pf& __prefix) { _Tp __a; __scan(__in, __out, ::cub::Sum{}, _Tp(0), false, __a, &__prefix); }
  // Scans with an operator
  template <class _Op>
  void ExclusiveScan(_Tp __in, _Tp& __out, _Tp __init, _Op __op) { _Tp __a; __scan(__in, __out, __op, __init, true, __a, __nop()); }
  template <class _Op>
  void ExclusiveScan(_Tp __in, _Tp& __out, _Tp __init, _Op __op, _Tp& __agg) { __scan(__in, __out, __op, __init, true, __agg, __nop()); }
  template <class _Op, class _Pf>
    requires std::is_invocable_v<_Pf&, _Tp>
  void ExclusiveScan(_Tp __in, _Tp& __out, _Op __op, _Pf& __prefix) { _Tp __a; __scan(__in, __out, __op, std::nullopt, true, __a, &__prefix); }
  template <class _Op>
    requires(!std::is_convertible_v<_Op, _Tp>)
  void ExclusiveScan(_Tp __in, _Tp& __out, _Op __op) { _Tp __a; __scan(__in, __out, __op, std::nullopt, true, __a, __nop()); }
  template <class _Op>
  void InclusiveScan(_Tp __in, _Tp& __out, _Op __op) { _Tp __a; __scan(__in, __out, __op, std::nullopt, false, __a, __nop()); }
  template <class _Op>
  void InclusiveScan(_Tp __in, _Tp& __out, _Op __op, _Tp& __agg) { __scan(__in, __out, __op, std::nullopt, false, __agg, __nop()); }
  template <class _Op, class _Pf>
    requires std::is_invocable_v<_Pf&, _Tp>
  void InclusiveScan(_Tp __in, _Tp& __out, _Op __op, _Pf& __prefix) { _Tp __a; __scan(__in, __out, __op, std::nullopt, false, __a, &__prefix); }

  // Blocked arrangements: _Np consecutive items per thread.
  template <int _Np>
  void ExclusiveSum(_Tp (&__in)[_Np], _Tp (&__out)[_Np]) { _Tp __a; __scan_items(__in, __out, ::cub::Sum{}, _Tp(0), true, __a, __nop()); }
  template <int _Np>
  void ExclusiveSum(_Tp (&__in)[_Np], _Tp (&__out)[_Np], _Tp& __agg) { __scan_items(__in, __out, ::cub::Sum{}, _Tp(0), true, __agg, __nop()); }
  template <int _Np, class _Pf>
    requires std::is_invocable_v<_Pf&, _Tp>
  void ExclusiveSum(_Tp (&__in)[_Np], _Tp (&__out)[_Np], _Pf& __prefix) { _Tp __a; __scan_items(__in, __out, ::cub::Sum{}, _Tp(0), true, __a, &__prefix); }
  template <int _Np>
  void InclusiveSum(_Tp (&__in)[_Np], _Tp (&__out)[_Np]) { _Tp __a; __scan_items(__in, __out, ::cub::Sum{}, _Tp(0), false, __a, __nop()); }
  template <int _Np>
  void InclusiveSum(_Tp (&__in)[_Np], _Tp (&__out)[_Np], _Tp& __agg) { __scan_items(__in, __out, ::cub::Sum{}, _Tp(0), false, __agg, __nop()); }
  template <int _Np, class _Pf>
    requires std::is_invocable_v<_Pf&, _Tp>
  void InclusiveSum(_Tp (&__in)[_Np], _Tp (&__out)[_Np], _Pf& __prefix) { _Tp __a; __scan_items(__in, __out, ::cub::Sum{}, _Tp(0), false, __a, &__prefix); }
  template <int _Np, class _Op>
  void ExclusiveScan(_Tp (&__in)[_Np], _Tp (&__out)[_Np], _Tp __init, _Op __op) { _Tp __a; __scan_items(__in, __out, __op, __init, true, __a, __nop()); }
  template <int _Np, class _Op>
  void ExclusiveScan(_Tp (&__in)[_Np], _Tp (&__out)[_Np], _Tp __init, _Op __op, _Tp& __agg) { __scan_items(__in, __out, __op, __init, true, __agg, __nop()); }
  template <int _Np, class _Op>
  void InclusiveScan(_Tp (&__in)[_Np], _Tp (&__out)[_Np], _Op __op) { _Tp __a; __scan_items(__in, __out, __op, std::nullopt, false, __a, __nop()); }
  template <int _Np, class _Op>
  void InclusiveScan(_Tp (&__in)[_Np], _Tp (&__out)[_Np], _Op __op, _Tp& __agg) { __scan_items(__in, __out, __op, std::nullopt, false, __agg, __nop()); }

 private:
  static cudashim_detail::no_prefix* __nop() { return nullptr; }
  static TempStorage& __private_storage() {
    __shared__ TempStorage __s;
    return __s;
  }

  // One item per thread. Thread 0 folds the items in order after a barrier; with a prefix
  // callback, the threads of warp 0 call it with the block aggregate (CUB's protocol: only
  // lane 0's return value is used) and the prefix seeds the scan.
  template <class _Op, class _Pf>
  void __scan(const _Tp& __x, _Tp& __out, _Op __op, std::optional<_Tp> __init, bool __exclusive, _Tp& __agg_out,
              _Pf* __prefix) {
    _Tp* __res = __storage.__res.get();
    _Tp* __agg = __storage.__agg.get();
    const int __count = std::min(_Threads, cudashim_detail::block_threads());
    if (__tid < _Threads) ::new (&__res[__tid]) _Tp(__x);
    __syncthreads();
    if (__tid == 0) {
      _Tp __acc = __res[0];
      for (int __i = 1; __i < __count; ++__i) __acc = __op(__acc, __res[__i]);
      ::new (&__agg[0]) _Tp(__acc);
      if (__prefix == nullptr) __fold(__res, __count, __op, __init);
    }
    __syncthreads();
    if (__prefix != nullptr) {
      if (__tid < 32) {
        _Tp __p = (*__prefix)(__agg[0]);
        if (__tid == 0) __fold(__res, __count, __op, std::optional<_Tp>(__p));
      }
      __syncthreads();
      __init = _Tp(__res[0]);  // thread 0's exclusive value is the prefix itself
    }
    __agg_out = __agg[0];
    const bool __has_excl = __tid > 0 || __init.has_value();
    const _Tp __excl = __tid < _Threads ? __res[__tid] : __x;
    __out = __exclusive ? __excl : (__has_excl ? _Tp(__op(__excl, __x)) : __x);
  }

  // Exclusive prefixes, in place: __res[i] = init op x0 op ... op x(i-1) (__res[0] is left as is
  // without an init: CUB leaves thread 0's exclusive output undefined).
  template <class _Op>
  static void __fold(_Tp* __res, int __count, _Op __op, const std::optional<_Tp>& __init) {
    std::optional<_Tp> __acc = __init;
    for (int __i = 0; __i < __count; ++__i) {
      _Tp __v = __res[__i];
      if (__acc.has_value()) {
        __res[__i] = *__acc;
        __acc = _Tp(__op(*__acc, __v));
      } else {
        __acc = __v;
      }
    }
  }

  template <int _Np, class _Op, class _Pf>
  void __scan_items(_Tp (&__in)[_Np], _Tp (&__out)[_Np], _Op __op, std::optional<_Tp> __init, bool __exclusive,
                    _Tp& __agg_out, _Pf* __prefix) {
    _Tp __partial = cudashim_detail::thread_reduce(__in, __op);
    _Tp __excl;
    __scan(__partial, __excl, __op, __init, true, __agg_out, __prefix);
    const bool __has_excl = __tid > 0 || __init.has_value() || __prefix != nullptr;
    std::optional<_Tp> __acc;
    if (__has_excl) __acc = __excl;
    for (int __i = 0; __i < _Np; ++__i) {
      _Tp __v = __in[__i];
      if (__exclusive) {
        __out[__i] = __acc.has_value() ? *__acc : __v;
        __acc = __acc.has_value() ? _Tp(__op(*__acc, __v)) : __v;
      } else {
        __acc = __acc.has_value() ? _Tp(__op(*__acc, __v)) : __v;
        __out[__i] = *__acc;
      }
    }
  }

  TempStorage& __storage;
  int __tid;
};

// ------------------------------------------------------------------------ WarpReduce / Scan
template <class _Tp, int _Lw = 32, int _Arch = 800>
class WarpReduce {
  static_assert(_Lw >= 1 && _Lw <= 32 && (_Lw & (_Lw - 1)) == 0, "cub::WarpReduce: LOGICAL_WARP_THREADS must be a power of two up to 32");

 public:
  struct TempStorage : cudashim_detail::slots<_Tp, _Lw> {};
  explicit WarpReduce(TempStorage& __s) : __storage(__s) {}

  template <class _Op>
  _Tp Reduce(_Tp __input, _Op __op) { return Reduce(__input, __op, _Lw); }
  template <class _Op>
  _Tp Reduce(_Tp __input, _Op __op, int __valid_items) {
    const unsigned __mask = cudashim_detail::logical_warp_mask<_Lw>();
    const int __lane = __tid() % _Lw;
    _Tp* __slot = __storage.get();
    ::new (&__slot[__lane]) _Tp(__input);
    __syncwarp(__mask);
    _Tp __acc = __input;
    if (__lane == 0) {
      const int __count = std::min(__valid_items, (int)__builtin_popcount(__mask));
      for (int __i = 1; __i < __count; ++__i) __acc = __op(__acc, __slot[__i]);
    }
    __syncwarp(__mask);
    return __acc;
  }
  _Tp Sum(_Tp __input) { return Reduce(__input, ::cub::Sum{}); }
  _Tp Sum(_Tp __input, int __valid_items) { return Reduce(__input, ::cub::Sum{}, __valid_items); }

 private:
  static int __tid() {
    return (int)threadIdx.x + (int)threadIdx.y * (int)blockDim.x + (int)threadIdx.z * (int)blockDim.x * (int)blockDim.y;
  }
  TempStorage& __storage;
};

template <class _Tp, int _Lw = 32, int _Arch = 800>
class WarpScan {
  static_assert(_Lw >= 1 && _Lw <= 32 && (_Lw & (_Lw - 1)) == 0, "cub::WarpScan: LOGICAL_WARP_THREADS must be a power of two up to 32");

 public:
  struct TempStorage : cudashim_detail::slots<_Tp, _Lw> {};
  explicit WarpScan(TempStorage& __s) : __storage(__s) {}

  void InclusiveSum(_Tp __in, _Tp& __out) { _Tp __a; __scan(__in, __out, ::cub::Sum{}, std::nullopt, false, __a); }
  void InclusiveSum(_Tp __in, _Tp& __out, _Tp& __agg) { __scan(__in, __out, ::cub::Sum{}, std::nullopt, false, __agg); }
  void ExclusiveSum(_Tp __in, _Tp& __out) { _Tp __a; __scan(__in, __out, ::cub::Sum{}, _Tp(0), true, __a); }
  void ExclusiveSum(_Tp __in, _Tp& __out, _Tp& __agg) { __scan(__in, __out, ::cub::Sum{}, _Tp(0), true, __agg); }
  template <class _Op>
  void InclusiveScan(_Tp __in, _Tp& __out, _Op __op) { _Tp __a; __scan(__in, __out, __op, std::nullopt, false, __a); }
  template <class _Op>
  void InclusiveScan(_Tp __in, _Tp& __out, _Op __op, _Tp& __agg) { __scan(__in, __out, __op, std::nullopt, false, __agg); }
  template <class _Op>
  void ExclusiveScan(_Tp __in, _Tp& __out, _Tp __init, _Op __op) { _Tp __a; __scan(__in, __out, __op, __init, true, __a); }
  template <class _Op>
  void ExclusiveScan(_Tp __in, _Tp& __out, _Tp __init, _Op __op, _Tp& __agg) { __scan(__in, __out, __op, __init, true, __agg); }
  template <class _Op>
    requires(!std::is_convertible_v<_Op, _Tp>)
  void ExclusiveScan(_Tp __in, _Tp& __out, _Op __op) { _Tp __a; __scan(__in, __out, __op, std::nullopt, true, __a); }

 private:
  // Every lane gets its inclusive prefix from lane 0's in-order fold; the aggregate is the last
  // lane's; exclusive = inclusive of the previous lane (seeded by init).
  template <class _Op>
  void __scan(const _Tp& __x, _Tp& __out, _Op __op, std::optional<_Tp> __init, bool __exclusive, _Tp& __agg) {
    const unsigned __mask = cudashim_detail::logical_warp_mask<_Lw>();
    const int __tid = (int)threadIdx.x + (int)threadIdx.y * (int)blockDim.x + (int)threadIdx.z * (int)blockDim.x * (int)blockDim.y;
    const int __lane = __tid % _Lw;
    const int __count = __builtin_popcount(__mask);
    _Tp* __slot = __storage.get();
    ::new (&__slot[__lane]) _Tp(__x);
    __syncwarp(__mask);
    if (__lane == 0) {
      for (int __i = 1; __i < __count; ++__i) __slot[__i] = __op(__slot[__i - 1], __slot[__i]);
    }
    __syncwarp(__mask);
    __agg = __slot[__count - 1];
    if (__exclusive) {
      if (__lane == 0) __out = __init.has_value() ? *__init : __x;
      else __out = __init.has_value() ? _Tp(__op(*__init, __slot[__lane - 1])) : __slot[__lane - 1];
    } else {
      __out = __slot[__lane];
    }
    __syncwarp(__mask);
  }
  TempStorage& __storage;
};

}  // namespace cub

#endif
