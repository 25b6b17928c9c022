// cudashim: cooperative groups (CUDA 12/13 API) for the grid, a block, its tiles and coalesced
// groups. Written from the CUDA Programming Guide's description of the API, not from NVIDIA's
// headers. Clusters are GPU-only and deliberately absent (the build error maps to needs_gpu).
//
// - Warp tiles (thread_block_tile<N>, N <= 32) and coalesced groups (coalesced_threads(),
//   binary_partition, labeled_partition, tiled_partition(coalesced_group, n)) are a mask of
//   lanes of one warp: every collective is a warp operation of the runtime over that mask, so a
//   partition's sync waits for its members only, and lanes meeting at different operations are
//   reported as a deadlock (see validators/cpu/README.md).
// - Tiles of more than a warp (thread_block_tile<64..1024>, which a GPU builds in the scratch of
//   block_tile_memory or, from compute capability 8.0, in hardware) wait at a barrier over the
//   tile's threads (the runtime's _Sync_wait, as libcu++'s barriers do): a tile whose member never
//   arrives is reported as a deadlock. Their collectives (shfl, any, all, reduce, scans) combine
//   per-warp results through per-block scratch kept here, so block_tile_memory is accepted
//   (checked against the block size) but not needed.
// - Collectives take the caller's source location, so reports name the program's line; a warp
//   group's sync() keeps one call site of its own, so a group's lanes that sync at different
//   lines still meet (as __syncwarp's do on GPUs since Volta; the runtime pairs by call site).
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <new>
#include <source_location>
#include <type_traits>
#include <utility>

namespace cudashim {
// A barrier over every thread of the grid (runtime: cooperative launches only).
void grid_sync(unsigned line, const char* file);
bool grid_is_valid();
unsigned long long block_serial();
void _Sync_wait(bool (*__ready)(const void*), const void* __arg, const void* __obj, int __kind, const char* __what,
                unsigned __line, const char* __file);
void _Sync_notify(const void* __obj);
}  // namespace cudashim

#define CUDASHIM_CG_LOC ::std::source_location __loc = ::std::source_location::current()

namespace cooperative_groups {

struct dim3_like {
  unsigned x, y, z;
};

namespace cudashim_detail {
inline unsigned linear_tid() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
inline unsigned block_threads() { return blockDim.x * blockDim.y * blockDim.z; }
inline unsigned lane() { return linear_tid() % 32; }
// The lane of the `rank`-th member of `mask` (32 when there is none).
inline unsigned nth_lane(unsigned mask, unsigned rank) {
  for (unsigned k = 0; k < rank && mask; ++k) mask &= mask - 1;
  return mask ? (unsigned)__builtin_ctz(mask) : 32u;
}
// The bits of `lanes` at the members of `mask`, packed in rank order (bit r: rank r).
inline unsigned pack_lanes(unsigned mask, unsigned lanes) {
  unsigned out = 0, r = 0;
  for (unsigned m = mask; m; m &= m - 1, ++r)
    if (lanes & (m & (0u - m))) out |= 1u << r;
  return out;
}
// A warp group's sync: one call site for every group, so lanes of a group that sync at different
// lines of the program still meet, as __syncwarp's do on GPUs since Volta (the runtime pairs warp
// operations by call site).
inline void warp_sync(unsigned mask) { __syncwarp(mask); }
inline unsigned rank_in(unsigned mask) { return (unsigned)__builtin_popcount(mask & ((1u << lane()) - 1)); }
struct tile_tag {};
}  // namespace cudashim_detail

class thread_block {
 public:
  void sync(CUDASHIM_CG_LOC) const { __syncthreads(__loc); }
  static unsigned long long thread_rank() {
    return threadIdx.x + blockDim.x * (threadIdx.y + (unsigned long long)blockDim.y * threadIdx.z);
  }
  static unsigned long long size() { return (unsigned long long)blockDim.x * blockDim.y * blockDim.z; }
  static unsigned long long num_threads() { return size(); }
  static dim3 group_index() { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
  static dim3 thread_index() { return dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
  static dim3 group_dim() { return blockDim; }
  static dim3 dim_threads() { return blockDim; }
};

inline thread_block this_thread_block() { return thread_block(); }

// Shared scratch a GPU builds tiles of more than 32 threads in: block_tile_memory<MaxBlockSize>
// (CUDA 12), or CUDA 11's block_tile_memory<TileCommunicationSize, MaxBlockSize>. The shim keeps
// the tiles' state itself; the block may not have more threads than MaxBlockSize (the scratch
// would be too small on a GPU).
template <unsigned _First = 1024, unsigned _Second = 0>
struct block_tile_memory {
  static constexpr unsigned max_block_size = _Second ? _Second : _First;
  static_assert(max_block_size > 0 && max_block_size <= 1024, "block_tile_memory: MaxBlockSize must be 1..1024");
  alignas(16) unsigned char _Reserved[(max_block_size + 31) / 32 * 8 + 16];
};

template <unsigned _First, unsigned _Second>
inline thread_block this_thread_block(block_tile_memory<_First, _Second>&, CUDASHIM_CG_LOC) {
  constexpr unsigned __max = block_tile_memory<_First, _Second>::max_block_size;
  if (cudashim_detail::block_threads() > __max)
    cudashim::fatal("cudashim: cooperative_groups::this_thread_block(block_tile_memory<%u>&) at %s:%u in a block of %u "
                    "threads: the scratch holds blocks of at most %u threads (undefined behaviour in CUDA)",
                    __max, __loc.file_name(), (unsigned)__loc.line(), cudashim_detail::block_threads(), __max);
  return thread_block();
}

// The whole grid of a cudaLaunchCooperativeKernel launch; sync() in any other launch stops
// the run (undefined on a GPU).
class grid_group {
 public:
  void sync(CUDASHIM_CG_LOC) const { cudashim::grid_sync(__loc.line(), __loc.file_name()); }
  bool is_valid() const { return cudashim::grid_is_valid(); }
  unsigned long long block_rank() const {
    return blockIdx.x + gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
  }
  unsigned long long num_blocks() const { return (unsigned long long)gridDim.x * gridDim.y * gridDim.z; }
  unsigned long long thread_rank() const {
    return block_rank() * ((unsigned long long)blockDim.x * blockDim.y * blockDim.z) +
           this_thread_block().thread_rank();
  }
  unsigned long long num_threads() const { return num_blocks() * blockDim.x * blockDim.y * blockDim.z; }
  unsigned long long size() const { return num_threads(); }
  dim3 group_dim() const { return gridDim; }
  dim3 dim_blocks() const { return gridDim; }
  dim3 block_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
  dim3 dim_threads() const { return blockDim; }
};

inline grid_group this_grid() { return grid_group(); }

template <class _Tp>
struct plus { _Tp operator()(const _Tp& a, const _Tp& b) const { return a + b; } };
template <class _Tp>
struct less { _Tp operator()(const _Tp& a, const _Tp& b) const { return b < a ? b : a; } };
template <class _Tp>
struct greater { _Tp operator()(const _Tp& a, const _Tp& b) const { return a < b ? b : a; } };
template <class _Tp>
struct bit_and { _Tp operator()(const _Tp& a, const _Tp& b) const { return a & b; } };
template <class _Tp>
struct bit_or { _Tp operator()(const _Tp& a, const _Tp& b) const { return a | b; } };
template <class _Tp>
struct bit_xor { _Tp operator()(const _Tp& a, const _Tp& b) const { return a ^ b; } };

// ---------------------------------------------------------------- collectives over a lane mask
namespace cudashim_detail {
// The value of the member of rank `src` of the lanes in `mask` (every member calls it).
template <class _Tp>
inline _Tp rank_shfl(unsigned mask, _Tp v, unsigned src, const std::source_location& loc) {
  unsigned l = nth_lane(mask, src);
  return cudashim::shfl(cudashim::_Wop_SHFL, mask, v, (int)(l < 32 ? l : lane()), 32, loc);
}

// A reduction the runtime computes in one warp operation (CUDA's __reduce_*_sync): int and
// unsigned with the group functors. -1: none.
template <class _Tp, class _Op>
constexpr int native_reduce() {
  using _Up = std::remove_cvref_t<_Tp>;
  using _Fn = std::remove_cvref_t<_Op>;
  constexpr bool is_int = std::is_same_v<_Up, int>, is_uns = std::is_same_v<_Up, unsigned>;
  if constexpr (is_int || is_uns) {
    if constexpr (std::is_same_v<_Fn, plus<_Up>>) return cudashim::_Wop_REDUCE_ADD;
    if constexpr (std::is_same_v<_Fn, less<_Up>>) return is_int ? cudashim::_Wop_REDUCE_MIN : cudashim::_Wop_REDUCE_UMIN;
    if constexpr (std::is_same_v<_Fn, greater<_Up>>) return is_int ? cudashim::_Wop_REDUCE_MAX : cudashim::_Wop_REDUCE_UMAX;
    if constexpr (std::is_same_v<_Fn, bit_and<_Up>>) return cudashim::_Wop_REDUCE_AND;
    if constexpr (std::is_same_v<_Fn, bit_or<_Up>>) return cudashim::_Wop_REDUCE_OR;
    if constexpr (std::is_same_v<_Fn, bit_xor<_Up>>) return cudashim::_Wop_REDUCE_XOR;
  }
  return -1;
}

// Every member of `mask` (n members, the caller has rank r) gets the reduction of all members'
// values, combined in rank order.
template <class _Rp, class _Tp, class _Op>
inline _Rp mask_reduce(unsigned mask, unsigned r, unsigned n, _Tp&& val, _Op&& op, const std::source_location& loc) {
  constexpr int native = native_reduce<_Rp, _Op>();
  if constexpr (native >= 0) {
    const _Rp v = static_cast<_Rp>(val);
    return (_Rp)cudashim::warp_op(native, mask, (unsigned long long)(long long)v, 0, 32, loc.line(), loc.file_name());
  } else {
    _Rp v = static_cast<_Rp>(val);
    if (mask == 0xffffffffu) {  // a whole warp: a butterfly leaves the result in every lane
      for (int off = 16; off > 0; off /= 2)
        v = op(v, cudashim::shfl(cudashim::_Wop_SHFL_XOR, mask, v, off, 32, loc));
      return v;
    }
    // A tree over the ranks (n need not be a power of two), then rank 0 broadcasts.
    for (unsigned off = 1; off < n; off *= 2) {
      _Rp o = rank_shfl(mask, v, std::min(r + off, n - 1), loc);
      if ((r & (2 * off - 1)) == 0 && r + off < n) v = op(v, o);
    }
    return rank_shfl(mask, v, 0, loc);
  }
}

// Inclusive scan over the members of `mask` in rank order.
template <class _Rp, class _Op>
inline _Rp mask_inclusive_scan(unsigned mask, unsigned r, unsigned n, _Rp v, _Op&& op, const std::source_location& loc) {
  for (unsigned off = 1; off < n; off *= 2) {
    _Rp o = rank_shfl(mask, v, r >= off ? r - off : r, loc);
    if (r >= off) v = op(o, v);
  }
  return v;
}

// Exclusive scan: rank 0 gets a value-initialised _Rp (CUDA leaves it undefined for any op but
// plus, where it is 0).
template <class _Rp, class _Op>
inline _Rp mask_exclusive_scan(unsigned mask, unsigned r, unsigned n, _Rp v, _Op&& op, const std::source_location& loc) {
  _Rp inc = mask_inclusive_scan<_Rp>(mask, r, n, v, op, loc);
  _Rp prev = rank_shfl(mask, inc, r ? r - 1 : 0, loc);
  return r ? prev : _Rp{};
}

// ---------------------------------------------------------------- tiles of more than a warp
// One barrier per tile of the block, by size class (64, 128, ..., 1024) and tile index, kept per
// host thread (a block runs on one) and reset for each block run.
struct big_bar {
  std::atomic<unsigned long long> serial{0};
  std::atomic<unsigned> arrived{0};
  std::atomic<unsigned> phase{0};
};
constexpr unsigned size_class(unsigned size) {
  return size <= 64 ? 0 : size <= 128 ? 1 : size <= 256 ? 2 : size <= 512 ? 3 : 4;
}
inline const char* big_sync_name(unsigned size) {
  switch (size) {
    case 64: return "thread_block_tile<64>::sync()";
    case 128: return "thread_block_tile<128>::sync()";
    case 256: return "thread_block_tile<256>::sync()";
    case 512: return "thread_block_tile<512>::sync()";
    default: return "thread_block_tile<1024>::sync()";
  }
}
struct big_tile {
  unsigned size, first, members;  // the tile's size, first thread (linear index) and live size
  big_bar* bar;
};
inline big_tile this_big_tile(unsigned size) {
  static thread_local big_bar bars[5][16];
  const unsigned lin = linear_tid(), n = block_threads(), idx = lin / size;
  big_bar& b = bars[size_class(size)][idx & 15];
  const unsigned long long serial = cudashim::block_serial();
  if (b.serial.load(std::memory_order_relaxed) != serial) {  // the first use in this block run
    b.serial.store(serial, std::memory_order_relaxed);
    b.arrived.store(0, std::memory_order_relaxed);
    b.phase.store(0, std::memory_order_relaxed);
  }
  return big_tile{size, idx * size, std::min(size, n - idx * size), &b};
}
// The tile's current phase: the barrier cannot complete it before the caller arrives.
inline unsigned big_phase(const big_tile& t) { return t.bar->phase.load(std::memory_order_acquire); }
// Arrive at the tile's barrier of phase `phase` and wait until every member has.
inline void big_arrive_wait(const big_tile& t, unsigned phase, const std::source_location& loc) {
  big_bar* b = t.bar;
  if (b->arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == t.members) {
    b->arrived.store(0, std::memory_order_relaxed);
    b->phase.store(phase + 1, std::memory_order_release);
    cudashim::_Sync_notify(b);
    return;
  }
  struct _Arg {
    const big_bar* b;
    unsigned phase;
  } arg{b, phase};
  cudashim::_Sync_wait([](const void* a) {
    auto* x = static_cast<const _Arg*>(a);
    return x->b->phase.load(std::memory_order_acquire) != x->phase;
  }, &arg, b, 0, big_sync_name(t.size), loc.line(), loc.file_name());
}
inline void big_sync(unsigned size, const std::source_location& loc) {
  big_tile t = this_big_tile(size);
  big_arrive_wait(t, big_phase(t), loc);
}
// Per-warp slots a collective of a tile of size class `cls` passes values through, two sets used
// in alternate barrier phases: a slot written before the barrier of phase p is read after it, and
// written again only in phase p + 2, after every member has arrived at (so finished reading
// before) the barrier of phase p + 1.
template <class _Tp>
inline _Tp* big_slots(unsigned cls, unsigned phase) {
  alignas(alignof(_Tp) > 16 ? alignof(_Tp) : 16) static thread_local unsigned char buf[5 * 2 * 32 * sizeof(_Tp)];
  return reinterpret_cast<_Tp*>(buf) + (cls * 2 + (phase & 1)) * 32;
}
template <class _Tp>
inline _Tp slot_read(_Tp* p) { return *std::launder(p); }

// The lanes of the caller's warp (all of them belong to its tile) and the caller's rank among them.
inline unsigned warp_lanes() {
  const unsigned n = block_threads(), w = linear_tid() / 32;
  const unsigned k = std::min(32u, n - w * 32);
  return k == 32 ? 0xffffffffu : (1u << k) - 1;
}

template <class _Tp>
inline _Tp big_shfl(unsigned size, _Tp v, unsigned src, const std::source_location& loc) {
  big_tile t = this_big_tile(size);
  const unsigned phase = big_phase(t);
  _Tp* slot = big_slots<_Tp>(size_class(size), phase) + t.first / 32;
  if (linear_tid() - t.first == src) ::new (static_cast<void*>(slot)) _Tp(v);
  big_arrive_wait(t, phase, loc);
  return slot_read(slot);
}

template <class _Rp, class _Tp, class _Op>
inline _Rp big_reduce(unsigned size, _Tp&& val, _Op&& op, const std::source_location& loc) {
  const unsigned wmask = warp_lanes();
  _Rp part = mask_reduce<_Rp>(wmask, lane(), (unsigned)__builtin_popcount(wmask), std::forward<_Tp>(val), op, loc);
  big_tile t = this_big_tile(size);
  const unsigned phase = big_phase(t);
  _Rp* slots = big_slots<_Rp>(size_class(size), phase);
  const unsigned w = linear_tid() / 32, w0 = t.first / 32, nw = (t.members + 31) / 32;
  if (lane() == 0) ::new (static_cast<void*>(slots + w)) _Rp(part);
  big_arrive_wait(t, phase, loc);
  _Rp r = slot_read(slots + w0);
  for (unsigned k = 1; k < nw; ++k) r = op(r, slot_read(slots + w0 + k));
  return r;
}

template <class _Rp, class _Op>
inline _Rp big_scan(unsigned size, _Rp v, _Op&& op, bool inclusive, const std::source_location& loc) {
  const unsigned wmask = warp_lanes(), n = (unsigned)__builtin_popcount(wmask), l = lane();
  _Rp inc = mask_inclusive_scan<_Rp>(wmask, l, n, v, op, loc);
  _Rp exc{};
  if (!inclusive) {
    _Rp prev = rank_shfl(wmask, inc, l ? l - 1 : 0, loc);
    if (l) exc = prev;
  }
  big_tile t = this_big_tile(size);
  const unsigned phase = big_phase(t);
  _Rp* slots = big_slots<_Rp>(size_class(size), phase);
  const unsigned w = linear_tid() / 32, w0 = t.first / 32;
  if (l == n - 1) ::new (static_cast<void*>(slots + w)) _Rp(inc);
  big_arrive_wait(t, phase, loc);
  if (w == w0) return inclusive ? inc : exc;
  _Rp pre = slot_read(slots + w0);
  for (unsigned k = w0 + 1; k < w; ++k) pre = op(pre, slot_read(slots + k));
  if (inclusive) return op(pre, inc);
  return l ? op(pre, exc) : pre;
}
}  // namespace cudashim_detail

// ---------------------------------------------------------------- thread_block_tile
// A partition of the block (or of a tile) into groups of `_Size` consecutive threads. Up to 32 a
// warp tile, with warp operations (the lanes of a tile share one warp); 64 to 1024 a tile of
// several warps, with sync, shfl (a broadcast), any, all, reduce and the scans, as in CUDA.
// thread_block_tile<N, Parent> (what tiled_partition<N>(parent) returns) converts to
// thread_block_tile<N>, whose meta group is the parent's partition.
template <unsigned _Size, class _Parent = void>
class thread_block_tile;

template <unsigned _Size>
class thread_block_tile<_Size, void> {
  static_assert(_Size > 0 && (_Size & (_Size - 1)) == 0 && _Size <= 1024,
                "thread_block_tile: the size must be a power of two up to 1024");
  static constexpr bool _Multi = _Size > 32;
  unsigned meta_rank_, meta_size_;

 public:
  static constexpr unsigned num_threads_v = _Size;
  // A tile of the block (CUDA has no public constructor; tiled_partition makes them).
  thread_block_tile()
      : meta_rank_(cudashim_detail::linear_tid() / _Size),
        meta_size_((cudashim_detail::block_threads() + _Size - 1) / _Size) {}
  thread_block_tile(cudashim_detail::tile_tag, unsigned meta_rank, unsigned meta_size)
      : meta_rank_(meta_rank), meta_size_(meta_size) {}

  // The tile's lanes in its warp (warp tiles).
  unsigned mask() const
    requires(!_Multi)
  {
    unsigned base = cudashim_detail::lane() & ~(_Size - 1);
    return _Size == 32 ? 0xffffffffu : (((1u << _Size) - 1) << base);
  }
  void sync(CUDASHIM_CG_LOC) const {
    if constexpr (_Multi)
      cudashim_detail::big_sync(_Size, __loc);
    else
      cudashim_detail::warp_sync(mask());
  }
  static unsigned thread_rank() { return cudashim_detail::linear_tid() & (_Size - 1); }
  static constexpr unsigned size() { return _Size; }
  static constexpr unsigned num_threads() { return _Size; }
  unsigned meta_group_rank() const { return meta_rank_; }
  unsigned meta_group_size() const { return meta_size_; }

  template <class _Tp>
  _Tp shfl(_Tp v, int src, CUDASHIM_CG_LOC) const {
    if constexpr (_Multi)
      return cudashim_detail::big_shfl(_Size, v, (unsigned)src, __loc);
    else
      return cudashim::shfl(cudashim::_Wop_SHFL, mask(), v, src, _Size, __loc);
  }
  template <class _Tp>
  _Tp shfl_down(_Tp v, unsigned d, CUDASHIM_CG_LOC) const
    requires(!_Multi)
  {
    return cudashim::shfl(cudashim::_Wop_SHFL_DOWN, mask(), v, (int)d, _Size, __loc);
  }
  template <class _Tp>
  _Tp shfl_up(_Tp v, unsigned d, CUDASHIM_CG_LOC) const
    requires(!_Multi)
  {
    return cudashim::shfl(cudashim::_Wop_SHFL_UP, mask(), v, (int)d, _Size, __loc);
  }
  template <class _Tp>
  _Tp shfl_xor(_Tp v, unsigned m, CUDASHIM_CG_LOC) const
    requires(!_Multi)
  {
    return cudashim::shfl(cudashim::_Wop_SHFL_XOR, mask(), v, (int)m, _Size, __loc);
  }
  int any(int p, CUDASHIM_CG_LOC) const {
    if constexpr (_Multi)
      return cudashim_detail::big_reduce<int>(_Size, p != 0, bit_or<int>(), __loc);
    else
      return (int)cudashim::warp_op(cudashim::_Wop_ANY, mask(), p != 0, 0, 32, __loc.line(), __loc.file_name());
  }
  int all(int p, CUDASHIM_CG_LOC) const {
    if constexpr (_Multi)
      return cudashim_detail::big_reduce<int>(_Size, p != 0, bit_and<int>(), __loc);
    else
      return (int)cudashim::warp_op(cudashim::_Wop_ALL, mask(), p != 0, 0, 32, __loc.line(), __loc.file_name());
  }
  // Bit r: the predicate of rank r.
  unsigned ballot(int p, CUDASHIM_CG_LOC) const
    requires(!_Multi)
  {
    unsigned b = (unsigned)cudashim::warp_op(cudashim::_Wop_BALLOT, mask(), p != 0, 0, 32, __loc.line(), __loc.file_name());
    return b >> (cudashim_detail::lane() & ~(_Size - 1) & 31);
  }
  template <class _Tp>
  unsigned match_any(_Tp v, CUDASHIM_CG_LOC) const
    requires(!_Multi)
  {
    unsigned m = (unsigned)cudashim::warp_op(cudashim::_Wop_MATCH_ANY, mask(), cudashim::to_bits(v), 0, 32,
                                             __loc.line(), __loc.file_name());
    return m >> (cudashim_detail::lane() & ~(_Size - 1) & 31);
  }
  template <class _Tp>
  unsigned match_all(_Tp v, int& pred, CUDASHIM_CG_LOC) const
    requires(!_Multi)
  {
    unsigned m = (unsigned)cudashim::warp_op(cudashim::_Wop_MATCH_ALL, mask(), cudashim::to_bits(v), 0, 32,
                                             __loc.line(), __loc.file_name());
    pred = m != 0;
    return m >> (cudashim_detail::lane() & ~(_Size - 1) & 31);
  }
};

template <unsigned _Size, class _Parent>
class thread_block_tile : public thread_block_tile<_Size, void> {
 public:
  using thread_block_tile<_Size, void>::thread_block_tile;
};

namespace cudashim_detail {
template <class>
struct tile_traits {
  static constexpr bool is_tile = false;
  static constexpr unsigned size = 0;
};
template <unsigned _Size, class _Parent>
struct tile_traits<thread_block_tile<_Size, _Parent>> {
  static constexpr bool is_tile = true;
  static constexpr unsigned size = _Size;
};
}  // namespace cudashim_detail

// The tile of `_Size` threads the caller belongs to. Its meta group: the parent's partition (a
// tile's rank within its parent tile, or within the block).
template <unsigned _Size, class _Parent>
inline thread_block_tile<_Size, _Parent> tiled_partition(const _Parent& parent) {
  using _Traits = cudashim_detail::tile_traits<std::remove_cvref_t<_Parent>>;
  if constexpr (_Traits::is_tile) {
    static_assert(_Size <= _Traits::size, "tiled_partition: the tile is larger than its parent tile");
    return thread_block_tile<_Size, _Parent>(cudashim_detail::tile_tag{}, (unsigned)parent.thread_rank() / _Size,
                                             _Traits::size / _Size);
  } else {
    (void)parent;
    return thread_block_tile<_Size, _Parent>(cudashim_detail::tile_tag{}, cudashim_detail::linear_tid() / _Size,
                                             (cudashim_detail::block_threads() + _Size - 1) / _Size);
  }
}

namespace experimental {
template <unsigned _TileCommunicationSize = 8, unsigned _MaxBlockSize = 1024>
using block_tile_memory = ::cooperative_groups::block_tile_memory<_TileCommunicationSize, _MaxBlockSize>;
using ::cooperative_groups::this_thread_block;
using ::cooperative_groups::tiled_partition;
}  // namespace experimental

// The calling thread alone.
inline thread_block_tile<1> this_thread() {
  return thread_block_tile<1>(cudashim_detail::tile_tag{}, 0, 1);
}

// ---------------------------------------------------------------- coalesced_group
// Lanes of one warp: those that reached coalesced_threads() together (see resolve_coalesced in
// the runtime: the lanes arriving while the rest of the warp is blocked elsewhere or exited), or a
// partition of a warp tile or coalesced group. Ranks follow lane order.
class coalesced_group {
  unsigned mask_;
  unsigned meta_rank_ = 0, meta_size_ = 1;

 public:
  explicit coalesced_group(unsigned m) : mask_(m) {}
  coalesced_group(unsigned m, unsigned meta_rank, unsigned meta_size)
      : mask_(m), meta_rank_(meta_rank), meta_size_(meta_size) {}
  unsigned mask() const { return mask_; }
  void sync(CUDASHIM_CG_LOC) const {
    (void)__loc;
    cudashim_detail::warp_sync(mask_);
  }
  unsigned size() const { return (unsigned)__builtin_popcount(mask_); }
  unsigned num_threads() const { return size(); }
  unsigned thread_rank() const { return cudashim_detail::rank_in(mask_); }
  unsigned meta_group_rank() const { return meta_rank_; }
  unsigned meta_group_size() const { return meta_size_; }
  template <class _Tp>
  _Tp shfl(_Tp v, unsigned rank, CUDASHIM_CG_LOC) const {
    unsigned l = cudashim_detail::nth_lane(mask_, rank);
    return cudashim::shfl(cudashim::_Wop_SHFL, mask_, v, (int)(l < 32 ? l : __builtin_ctz(mask_)), 32, __loc);
  }
  template <class _Tp>
  _Tp shfl_up(_Tp v, unsigned d, CUDASHIM_CG_LOC) const {
    unsigned r = thread_rank();
    return cudashim_detail::rank_shfl(mask_, v, r >= d ? r - d : r, __loc);
  }
  template <class _Tp>
  _Tp shfl_down(_Tp v, unsigned d, CUDASHIM_CG_LOC) const {
    unsigned r = thread_rank();
    return cudashim_detail::rank_shfl(mask_, v, r + d < size() ? r + d : r, __loc);
  }
  // Bit r: the predicate of rank r.
  unsigned ballot(int p, CUDASHIM_CG_LOC) const {
    unsigned b = (unsigned)cudashim::warp_op(cudashim::_Wop_BALLOT, mask_, p != 0, 0, 32, __loc.line(), __loc.file_name());
    return cudashim_detail::pack_lanes(mask_, b);
  }
  int any(int p, CUDASHIM_CG_LOC) const {
    return (int)cudashim::warp_op(cudashim::_Wop_ANY, mask_, p != 0, 0, 32, __loc.line(), __loc.file_name());
  }
  int all(int p, CUDASHIM_CG_LOC) const {
    return (int)cudashim::warp_op(cudashim::_Wop_ALL, mask_, p != 0, 0, 32, __loc.line(), __loc.file_name());
  }
  template <class _Tp>
  unsigned match_any(_Tp v, CUDASHIM_CG_LOC) const {
    unsigned m = (unsigned)cudashim::warp_op(cudashim::_Wop_MATCH_ANY, mask_, cudashim::to_bits(v), 0, 32, __loc.line(),
                                             __loc.file_name());
    return cudashim_detail::pack_lanes(mask_, m);
  }
  template <class _Tp>
  unsigned match_all(_Tp v, int& pred, CUDASHIM_CG_LOC) const {
    unsigned m = (unsigned)cudashim::warp_op(cudashim::_Wop_MATCH_ALL, mask_, cudashim::to_bits(v), 0, 32, __loc.line(),
                                             __loc.file_name());
    pred = m != 0;
    return cudashim_detail::pack_lanes(mask_, m);
  }
};
inline coalesced_group coalesced_threads(CUDASHIM_CG_LOC) {
  unsigned self = 1u << cudashim_detail::lane();
  return coalesced_group((unsigned)cudashim::warp_op(cudashim::_Wop_COALESCE, self, 0, 0, 32, __loc.line(), __loc.file_name()));
}

namespace cudashim_detail {
// The members of `parent` whose key equals the caller's (the lanes that reached the call with
// it: exited lanes drop out), and their group's rank among the partition's groups, ordered by
// each group's lowest lane (CUDA: bounded by meta_group_size).
template <class _Key>
inline coalesced_group partition_by(unsigned parent, _Key key, bool binary, bool pred, const std::source_location& loc) {
  const unsigned mine = (unsigned)cudashim::warp_op(cudashim::_Wop_MATCH_ANY, parent, cudashim::to_bits(key), 0, 32,
                                                    loc.line(), loc.file_name());
  const unsigned leader = (unsigned)__builtin_ctz(mine);
  const unsigned leaders = (unsigned)cudashim::warp_op(cudashim::_Wop_BALLOT, parent, lane() == leader, 0, 32,
                                                       loc.line(), loc.file_name());
  const unsigned groups = (unsigned)__builtin_popcount(leaders);
  // binary_partition: the group of the lanes whose predicate is true has rank 1 when both exist.
  const unsigned rank = binary ? (groups == 2 && pred ? 1u : 0u)
                               : (unsigned)__builtin_popcount(leaders & ((1u << leader) - 1));
  return coalesced_group(mine, rank, groups);
}
}  // namespace cudashim_detail

// The lanes of the group with the same predicate (compute capability 7.0+ in CUDA).
inline coalesced_group binary_partition(const coalesced_group& g, bool pred, CUDASHIM_CG_LOC) {
  return cudashim_detail::partition_by(g.mask(), (unsigned)pred, true, pred, __loc);
}
template <unsigned _Size, class _Parent>
inline coalesced_group binary_partition(const thread_block_tile<_Size, _Parent>& g, bool pred, CUDASHIM_CG_LOC) {
  static_assert(_Size <= 32, "binary_partition: the parent tile must have at most 32 threads");
  return cudashim_detail::partition_by(g.mask(), (unsigned)pred, true, pred, __loc);
}
// The lanes of the group with the same label (an integral value).
template <class _Label>
inline coalesced_group labeled_partition(const coalesced_group& g, _Label label, CUDASHIM_CG_LOC) {
  static_assert(std::is_integral_v<_Label> || std::is_enum_v<_Label>, "labeled_partition: the label must be integral");
  return cudashim_detail::partition_by(g.mask(), label, false, false, __loc);
}
template <unsigned _Size, class _Parent, class _Label>
inline coalesced_group labeled_partition(const thread_block_tile<_Size, _Parent>& g, _Label label, CUDASHIM_CG_LOC) {
  static_assert(_Size <= 32, "labeled_partition: the parent tile must have at most 32 threads");
  static_assert(std::is_integral_v<_Label> || std::is_enum_v<_Label>, "labeled_partition: the label must be integral");
  return cudashim_detail::partition_by(g.mask(), label, false, false, __loc);
}

// Groups of `tilesz` consecutive ranks of a coalesced group (the last may be smaller).
inline coalesced_group tiled_partition(const coalesced_group& g, unsigned tilesz, CUDASHIM_CG_LOC) {
  if (tilesz == 0 || tilesz > 32 || (tilesz & (tilesz - 1)))
    cudashim::fatal("cudashim: cooperative_groups::tiled_partition(coalesced_group, %u) at %s:%u: the tile size must be "
                    "a power of two up to 32",
                    tilesz, __loc.file_name(), (unsigned)__loc.line());
  const unsigned r = g.thread_rank(), first = r / tilesz * tilesz;
  unsigned m = 0, k = 0;
  for (unsigned rest = g.mask(); rest; rest &= rest - 1, ++k)
    if (k >= first && k < first + tilesz) m |= rest & (0u - rest);
  return coalesced_group(m, r / tilesz, (g.size() + tilesz - 1) / tilesz);
}

// ---------------------------------------------------------------- thread_group
// The generic group (CUDA's base class of the others): a block, a tile of any size (also one made
// at run time by tiled_partition(parent, size), up to 32), a coalesced group or the grid.
class thread_group {
  enum _Kind { _Block, _Tile, _Coalesced, _Grid } kind_;
  unsigned size_ = 0;  // tile: its size; coalesced: its lanes' mask
  unsigned mask() const {
    if (kind_ == _Coalesced) return size_;
    unsigned lane = cudashim_detail::lane();
    return size_ >= 32 ? 0xffffffffu : (((1u << size_) - 1) << (lane & ~(size_ - 1)));
  }

 public:
  thread_group(const thread_block&) : kind_(_Block) {}
  thread_group(const grid_group&) : kind_(_Grid) {}
  thread_group(const coalesced_group& c) : kind_(_Coalesced), size_(c.mask()) {}
  template <unsigned _Size, class _Parent>
  thread_group(const thread_block_tile<_Size, _Parent>&) : kind_(_Tile), size_(_Size) {}
  static thread_group _tile(unsigned size) {
    thread_group g{thread_block()};
    g.kind_ = _Tile;
    g.size_ = size;
    return g;
  }
  bool _is_coalesced() const { return kind_ == _Coalesced; }
  unsigned _coalesced_mask() const { return size_; }
  void sync(CUDASHIM_CG_LOC) const {
    switch (kind_) {
      case _Block: __syncthreads(__loc); break;
      case _Grid: grid_group().sync(__loc); break;
      case _Tile:
        if (size_ > 32) {
          cudashim_detail::big_sync(size_, __loc);
          break;
        }
        [[fallthrough]];
      default: cudashim_detail::warp_sync(mask());
    }
  }
  unsigned long long thread_rank() const {
    switch (kind_) {
      case _Block: return thread_block().thread_rank();
      case _Grid: return grid_group().thread_rank();
      case _Coalesced: return coalesced_group(size_).thread_rank();
      default: return cudashim_detail::linear_tid() & (size_ - 1);
    }
  }
  unsigned long long size() const {
    switch (kind_) {
      case _Block: return thread_block().size();
      case _Grid: return grid_group().size();
      case _Coalesced: return (unsigned)__builtin_popcount(size_);
      default: return size_;
    }
  }
  unsigned long long num_threads() const { return size(); }
  bool is_valid() const { return kind_ != _Grid || grid_group().is_valid(); }
};

// A tile whose size is known at run time (a power of two up to 32), of a block or a group; of a
// coalesced group, its consecutive ranks.
inline thread_group tiled_partition(const thread_group& parent, unsigned tilesz, CUDASHIM_CG_LOC) {
  if (tilesz == 0 || tilesz > 32 || (tilesz & (tilesz - 1)))
    cudashim::fatal("cudashim: cooperative_groups::tiled_partition(group, %u) at %s:%u: the tile size must be a "
                    "power of two up to 32",
                    tilesz, __loc.file_name(), (unsigned)__loc.line());
  if (parent._is_coalesced()) return tiled_partition(coalesced_group(parent._coalesced_mask()), tilesz, __loc);
  return thread_group::_tile(tilesz);
}

template <class _Group>
inline void sync(const _Group& g, CUDASHIM_CG_LOC) { g.sync(__loc); }
template <class _Group>
inline unsigned long long thread_rank(const _Group& g) { return g.thread_rank(); }
template <class _Group>
inline unsigned long long group_size(const _Group& g) { return g.size(); }

// ---------------------------------------------------------------- reduce and scans
// Over a tile (any size) or a coalesced group: every member gets the result. A scan combines in
// rank order; exclusive_scan gives rank 0 a value-initialised result.
namespace cudashim_detail {
template <class _Group>
concept partition_group = tile_traits<std::remove_cvref_t<_Group>>::is_tile ||
                          std::is_same_v<std::remove_cvref_t<_Group>, coalesced_group>;

// The group's lanes that exist (a warp tile in the last, partial warp of a block has fewer),
// with the caller's rank and their count.
struct lanes_rank {
  unsigned mask, rank, n;
};
template <class _Group>
inline lanes_rank group_lanes(const _Group& g) {
  const unsigned m = tile_traits<std::remove_cvref_t<_Group>>::is_tile ? g.mask() & warp_lanes() : g.mask();
  return lanes_rank{m, rank_in(m), (unsigned)__builtin_popcount(m)};
}

template <class _Group, class _Rp, class _Op>
inline _Rp group_scan(const _Group& g, _Rp v, _Op&& op, bool inclusive, const std::source_location& loc) {
  using _Traits = tile_traits<std::remove_cvref_t<_Group>>;
  if constexpr (_Traits::is_tile && _Traits::size > 32) {
    return big_scan<_Rp>(_Traits::size, v, op, inclusive, loc);
  } else {
    const lanes_rank l = group_lanes(g);
    return inclusive ? mask_inclusive_scan<_Rp>(l.mask, l.rank, l.n, v, op, loc)
                     : mask_exclusive_scan<_Rp>(l.mask, l.rank, l.n, v, op, loc);
  }
}
}  // namespace cudashim_detail

template <class _Group, class _Tp, class _Op>
  requires cudashim_detail::partition_group<_Group>
inline auto reduce(const _Group& g, _Tp&& val, _Op&& op, CUDASHIM_CG_LOC)
    -> std::remove_cvref_t<decltype(op(val, val))> {
  using _Rp = std::remove_cvref_t<decltype(op(val, val))>;
  using _Traits = cudashim_detail::tile_traits<std::remove_cvref_t<_Group>>;
  if constexpr (_Traits::is_tile && _Traits::size > 32)
    return cudashim_detail::big_reduce<_Rp>(_Traits::size, std::forward<_Tp>(val), op, __loc);
  else {
    const cudashim_detail::lanes_rank l = cudashim_detail::group_lanes(g);
    return cudashim_detail::mask_reduce<_Rp>(l.mask, l.rank, l.n, std::forward<_Tp>(val), op, __loc);
  }
}

template <class _Group, class _Tp, class _Op>
  requires cudashim_detail::partition_group<_Group>
inline auto inclusive_scan(const _Group& g, _Tp&& val, _Op&& op, CUDASHIM_CG_LOC)
    -> std::remove_cvref_t<decltype(op(val, val))> {
  using _Rp = std::remove_cvref_t<decltype(op(val, val))>;
  return cudashim_detail::group_scan<_Group, _Rp>(g, static_cast<_Rp>(val), op, true, __loc);
}
template <class _Group, class _Tp>
  requires cudashim_detail::partition_group<_Group>
inline std::remove_cvref_t<_Tp> inclusive_scan(const _Group& g, _Tp&& val, CUDASHIM_CG_LOC) {
  using _Up = std::remove_cvref_t<_Tp>;
  return cudashim_detail::group_scan<_Group, _Up>(g, static_cast<_Up>(val), plus<_Up>(), true, __loc);
}
template <class _Group, class _Tp, class _Op>
  requires cudashim_detail::partition_group<_Group>
inline auto exclusive_scan(const _Group& g, _Tp&& val, _Op&& op, CUDASHIM_CG_LOC)
    -> std::remove_cvref_t<decltype(op(val, val))> {
  using _Rp = std::remove_cvref_t<decltype(op(val, val))>;
  return cudashim_detail::group_scan<_Group, _Rp>(g, static_cast<_Rp>(val), op, false, __loc);
}
template <class _Group, class _Tp>
  requires cudashim_detail::partition_group<_Group>
inline std::remove_cvref_t<_Tp> exclusive_scan(const _Group& g, _Tp&& val, CUDASHIM_CG_LOC) {
  using _Up = std::remove_cvref_t<_Tp>;
  return cudashim_detail::group_scan<_Group, _Up>(g, static_cast<_Up>(val), plus<_Up>(), false, __loc);
}

}  // namespace cooperative_groups

#undef CUDASHIM_CG_LOC
