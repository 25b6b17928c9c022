// cudashim: CUB's BlockLoad / BlockStore (and LoadDirect* / StoreDirect*) and BlockRadixSort.
// Loads and stores read and write the tile directly in the arrangement the algorithm yields
// (blocked, or striped for BLOCK_LOAD_STRIPED / BLOCK_STORE_STRIPED): the transposing
// algorithms differ from the direct ones only in speed on a GPU. BlockRadixSort gathers the
// block's items in its TempStorage, one thread sorts them (stable, by bits [begin_bit,
// end_bit) of their radix order, as DeviceRadixSort), and each thread reads its ranks back.
#ifndef CUDASHIM_CUB_BLOCK_IO_CUH
#define CUDASHIM_CUB_BLOCK_IO_CUH

#include <cub/detail/cudashim_block.cuh>
#include <cub/detail/cudashim_device.cuh>

namespace cub {

enum BlockLoadAlgorithm {
  BLOCK_LOAD_DIRECT,
  BLOCK_LOAD_STRIPED,
  BLOCK_LOAD_VECTORIZE,
  BLOCK_LOAD_TRANSPOSE,
  BLOCK_LOAD_WARP_TRANSPOSE,
  BLOCK_LOAD_WARP_TRANSPOSE_TIMESLICED,
};
enum BlockStoreAlgorithm {
  BLOCK_STORE_DIRECT,
  BLOCK_STORE_STRIPED,
  BLOCK_STORE_VECTORIZE,
  BLOCK_STORE_TRANSPOSE,
  BLOCK_STORE_WARP_TRANSPOSE,
  BLOCK_STORE_WARP_TRANSPOSE_TIMESLICED,
};

// Thread __tid's item __i sits at tile offset __tid * _Np + __i (blocked) or __i * _Threads +
// __tid (striped).
template <class _Tp, int _Np, class _It>
void LoadDirectBlocked(int __tid, _It __it, _Tp (&__items)[_Np]) {
  for (int __i = 0; __i < _Np; ++__i) __items[__i] = __it[__tid * _Np + __i];
}
template <class _Tp, int _Np, class _It>
void LoadDirectBlocked(int __tid, _It __it, _Tp (&__items)[_Np], int __valid) {
  for (int __i = 0; __i < _Np; ++__i)
    if (__tid * _Np + __i < __valid) __items[__i] = __it[__tid * _Np + __i];
}
template <class _Tp, class _Dp, int _Np, class _It>
void LoadDirectBlocked(int __tid, _It __it, _Tp (&__items)[_Np], int __valid, _Dp __oob) {
  for (int __i = 0; __i < _Np; ++__i) __items[__i] = (__tid * _Np + __i < __valid) ? _Tp(__it[__tid * _Np + __i]) : _Tp(__oob);
}
template <int _Threads, class _Tp, int _Np, class _It>
void LoadDirectStriped(int __tid, _It __it, _Tp (&__items)[_Np]) {
  for (int __i = 0; __i < _Np; ++__i) __items[__i] = __it[__i * _Threads + __tid];
}
template <int _Threads, class _Tp, int _Np, class _It>
void LoadDirectStriped(int __tid, _It __it, _Tp (&__items)[_Np], int __valid) {
  for (int __i = 0; __i < _Np; ++__i)
    if (__i * _Threads + __tid < __valid) __items[__i] = __it[__i * _Threads + __tid];
}
template <int _Threads, class _Tp, class _Dp, int _Np, class _It>
void LoadDirectStriped(int __tid, _It __it, _Tp (&__items)[_Np], int __valid, _Dp __oob) {
  for (int __i = 0; __i < _Np; ++__i)
    __items[__i] = (__i * _Threads + __tid < __valid) ? _Tp(__it[__i * _Threads + __tid]) : _Tp(__oob);
}
template <class _Tp, int _Np, class _It>
void StoreDirectBlocked(int __tid, _It __it, _Tp (&__items)[_Np]) {
  for (int __i = 0; __i < _Np; ++__i) __it[__tid * _Np + __i] = __items[__i];
}
template <class _Tp, int _Np, class _It>
void StoreDirectBlocked(int __tid, _It __it, _Tp (&__items)[_Np], int __valid) {
  for (int __i = 0; __i < _Np; ++__i)
    if (__tid * _Np + __i < __valid) __it[__tid * _Np + __i] = __items[__i];
}
template <int _Threads, class _Tp, int _Np, class _It>
void StoreDirectStriped(int __tid, _It __it, _Tp (&__items)[_Np]) {
  for (int __i = 0; __i < _Np; ++__i) __it[__i * _Threads + __tid] = __items[__i];
}
template <int _Threads, class _Tp, int _Np, class _It>
void StoreDirectStriped(int __tid, _It __it, _Tp (&__items)[_Np], int __valid) {
  for (int __i = 0; __i < _Np; ++__i)
    if (__i * _Threads + __tid < __valid) __it[__i * _Threads + __tid] = __items[__i];
}

template <class _Tp, int _Bx, int _Np, BlockLoadAlgorithm _Alg = BLOCK_LOAD_DIRECT, int _By = 1, int _Bz = 1,
          int _Arch = 800>
class BlockLoad {
  static constexpr int _Threads = _Bx * _By * _Bz;

 public:
  struct TempStorage {
    unsigned char __unused;
  };
  BlockLoad() : __tid(cudashim_detail::linear_tid<_Bx, _By>()) {}
  explicit BlockLoad(TempStorage&) : __tid(cudashim_detail::linear_tid<_Bx, _By>()) {}
  template <class _It>
  void Load(_It __it, _Tp (&__items)[_Np]) {
    if constexpr (_Alg == BLOCK_LOAD_STRIPED) LoadDirectStriped<_Threads>(__tid, __it, __items);
    else LoadDirectBlocked(__tid, __it, __items);
  }
  template <class _It>
  void Load(_It __it, _Tp (&__items)[_Np], int __valid) {
    if constexpr (_Alg == BLOCK_LOAD_STRIPED) LoadDirectStriped<_Threads>(__tid, __it, __items, __valid);
    else LoadDirectBlocked(__tid, __it, __items, __valid);
  }
  template <class _It, class _Dp>
  void Load(_It __it, _Tp (&__items)[_Np], int __valid, _Dp __oob) {
    if constexpr (_Alg == BLOCK_LOAD_STRIPED) LoadDirectStriped<_Threads>(__tid, __it, __items, __valid, __oob);
    else LoadDirectBlocked(__tid, __it, __items, __valid, __oob);
  }

 private:
  int __tid;
};

template <class _Tp, int _Bx, int _Np, BlockStoreAlgorithm _Alg = BLOCK_STORE_DIRECT, int _By = 1, int _Bz = 1,
          int _Arch = 800>
class BlockStore {
  static constexpr int _Threads = _Bx * _By * _Bz;

 public:
  struct TempStorage {
    unsigned char __unused;
  };
  BlockStore() : __tid(cudashim_detail::linear_tid<_Bx, _By>()) {}
  explicit BlockStore(TempStorage&) : __tid(cudashim_detail::linear_tid<_Bx, _By>()) {}
  template <class _It>
  void Store(_It __it, _Tp (&__items)[_Np]) {
    if constexpr (_Alg == BLOCK_STORE_STRIPED) StoreDirectStriped<_Threads>(__tid, __it, __items);
    else StoreDirectBlocked(__tid, __it, __items);
  }
  template <class _It>
  void Store(_It __it, _Tp (&__items)[_Np], int __valid) {
    if constexpr (_Alg == BLOCK_STORE_STRIPED) StoreDirectStriped<_Threads>(__tid, __it, __items, __valid);
    else StoreDirectBlocked(__tid, __it, __items, __valid);
  }

 private:
  int __tid;
};

template <class _Kp, int _Bx, int _Np, class _Vp = NullType, int _RadixBits = 4, bool _Memoize = true,
          BlockScanAlgorithm _ScanAlg = BLOCK_SCAN_WARP_SCANS, cudaSharedMemConfig _Smem = cudaSharedMemBankSizeFourByte,
          int _By = 1, int _Bz = 1, int _Arch = 800>
class BlockRadixSort {
  static constexpr int _Threads = _Bx * _By * _Bz;
  static constexpr int _Tile = _Threads * _Np;
  static constexpr bool _HasValues = !std::is_same_v<_Vp, NullType>;
  struct __store {
    cudashim_detail::slots<_Kp, _Tile> __keys;
    cudashim_detail::slots<std::conditional_t<_HasValues, _Vp, char>, _HasValues ? _Tile : 1> __vals;
  };

 public:
  struct TempStorage : __store {};
  BlockRadixSort() : __storage(__private_storage()), __tid(cudashim_detail::linear_tid<_Bx, _By>()) {}
  explicit BlockRadixSort(TempStorage& __s) : __storage(__s), __tid(cudashim_detail::linear_tid<_Bx, _By>()) {}

  void Sort(_Kp (&__k)[_Np], int __begin = 0, int __end = sizeof(_Kp) * 8) { __sort<false, false>(__k, nullptr, __begin, __end); }
  void SortDescending(_Kp (&__k)[_Np], int __begin = 0, int __end = sizeof(_Kp) * 8) { __sort<true, false>(__k, nullptr, __begin, __end); }
  void SortBlockedToStriped(_Kp (&__k)[_Np], int __begin = 0, int __end = sizeof(_Kp) * 8) { __sort<false, true>(__k, nullptr, __begin, __end); }
  void SortDescendingBlockedToStriped(_Kp (&__k)[_Np], int __begin = 0, int __end = sizeof(_Kp) * 8) { __sort<true, true>(__k, nullptr, __begin, __end); }
  template <class _V2 = _Vp>
    requires _HasValues
  void Sort(_Kp (&__k)[_Np], _V2 (&__v)[_Np], int __begin = 0, int __end = sizeof(_Kp) * 8) { __sort<false, false>(__k, &__v, __begin, __end); }
  template <class _V2 = _Vp>
    requires _HasValues
  void SortDescending(_Kp (&__k)[_Np], _V2 (&__v)[_Np], int __begin = 0, int __end = sizeof(_Kp) * 8) { __sort<true, false>(__k, &__v, __begin, __end); }
  template <class _V2 = _Vp>
    requires _HasValues
  void SortBlockedToStriped(_Kp (&__k)[_Np], _V2 (&__v)[_Np], int __begin = 0, int __end = sizeof(_Kp) * 8) { __sort<false, true>(__k, &__v, __begin, __end); }
  template <class _V2 = _Vp>
    requires _HasValues
  void SortDescendingBlockedToStriped(_Kp (&__k)[_Np], _V2 (&__v)[_Np], int __begin = 0, int __end = sizeof(_Kp) * 8) { __sort<true, true>(__k, &__v, __begin, __end); }

 private:
  static TempStorage& __private_storage() {
    __shared__ TempStorage __s;
    return __s;
  }
  template <bool _Desc, bool _Striped, class _Va>
  void __sort(_Kp (&__k)[_Np], _Va* __v, int __begin, int __end) {
    _Kp* __keys = __storage.__keys.get();
    auto* __vals = __storage.__vals.get();
    if (__tid < _Threads) {
      for (int __i = 0; __i < _Np; ++__i) {
        ::new (&__keys[__tid * _Np + __i]) _Kp(__k[__i]);
        if constexpr (_HasValues) if (__v != nullptr) ::new (&__vals[__tid * _Np + __i]) _Vp((*__v)[__i]);
      }
    }
    __syncthreads();
    if (__tid == 0) {
      const int __count = std::min(_Threads, cudashim_detail::block_threads()) * _Np;
      if constexpr (_HasValues)
        cudashim_detail::radix_sort<_Desc>(__keys, __keys, __vals, __vals, __count, __begin, __end);
      else
        cudashim_detail::radix_sort<_Desc, _Kp, NullType>(__keys, __keys, nullptr, nullptr, __count, __begin, __end);
    }
    __syncthreads();
    if (__tid >= _Threads) return;
    for (int __i = 0; __i < _Np; ++__i) {
      const int __at = _Striped ? __i * _Threads + __tid : __tid * _Np + __i;
      __k[__i] = __keys[__at];
      if constexpr (_HasValues) if (__v != nullptr) (*__v)[__i] = __vals[__at];
    }
  }
  TempStorage& __storage;
  int __tid;
};

// Lane of the calling thread in its warp.
inline unsigned int LaneId() { return cudashim::lane_id(); }

}  // namespace cub

#endif
