// cudashim: cooperative groups for the grid, a block and its warp tiles. Clusters are GPU-only
// and deliberately absent (the build error maps to needs_gpu).
#pragma once
#include <cuda_runtime.h>

namespace cooperative_groups {

struct dim3_like {
  unsigned x, y, z;
};

class thread_block {
 public:
  void sync() const { __syncthreads(); }
  unsigned long long thread_rank() const {
    return threadIdx.x + blockDim.x * (threadIdx.y + (unsigned long long)blockDim.y * threadIdx.z);
  }
  unsigned long long size() const { return (unsigned long long)blockDim.x * blockDim.y * blockDim.z; }
  unsigned long long num_threads() const { return size(); }
  dim3 group_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
  dim3 thread_index() const { return dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
  dim3 group_dim() const { return blockDim; }
  dim3 dim_threads() const { return blockDim; }
};

inline thread_block this_thread_block() { return thread_block(); }

}  // namespace cooperative_groups
namespace cudashim {
// A barrier over every thread of the grid (runtime: cooperative launches only).
void grid_sync(unsigned line, const char* file);
bool grid_is_valid();
}  // namespace cudashim
namespace cooperative_groups {

// The whole grid of a cudaLaunchCooperativeKernel launch; sync() in any other launch stops
// the run (undefined on a GPU).
class grid_group {
 public:
  void sync(std::source_location loc = std::source_location::current()) const {
    cudashim::grid_sync(loc.line(), loc.file_name());
  }
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

namespace cudashim_detail {
inline unsigned linear_tid() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
}  // namespace cudashim_detail

// A partition of the block into groups of `_Size` consecutive threads (`_Size` <= 32 is a warp
// tile with warp operations; the lanes of a tile share one warp).
template <unsigned _Size>
class thread_block_tile {
  static_assert(_Size > 0 && (_Size & (_Size - 1)) == 0 && _Size <= 32, "tile size must be a power of two <= 32");

 public:
  static constexpr unsigned num_threads_v = _Size;
  unsigned mask() const {
    unsigned lane = cudashim_detail::linear_tid() % 32;
    unsigned base = lane & ~(_Size - 1);
    return _Size == 32 ? 0xffffffffu : (((1u << _Size) - 1) << base);
  }
  void sync() const { __syncwarp(mask()); }
  unsigned thread_rank() const { return cudashim_detail::linear_tid() & (_Size - 1); }
  unsigned size() const { return _Size; }
  unsigned num_threads() const { return _Size; }
  unsigned meta_group_rank() const { return cudashim_detail::linear_tid() / _Size; }
  unsigned meta_group_size() const {
    unsigned n = blockDim.x * blockDim.y * blockDim.z;
    return (n + _Size - 1) / _Size;
  }
  template <class _Tp>
  _Tp shfl(_Tp v, int src) const { return __shfl_sync(mask(), v, src, _Size); }
  template <class _Tp>
  _Tp shfl_down(_Tp v, unsigned d) const { return __shfl_down_sync(mask(), v, d, _Size); }
  template <class _Tp>
  _Tp shfl_up(_Tp v, unsigned d) const { return __shfl_up_sync(mask(), v, d, _Size); }
  template <class _Tp>
  _Tp shfl_xor(_Tp v, int m) const { return __shfl_xor_sync(mask(), v, m, _Size); }
  int any(int p) const { return __any_sync(mask(), p); }
  int all(int p) const { return __all_sync(mask(), p); }
  unsigned ballot(int p) const {
    unsigned lane = cudashim_detail::linear_tid() % 32;
    return __ballot_sync(mask(), p) >> (lane & ~(_Size - 1) & 31);
  }
};

template <unsigned _Size, class _Parent>
inline thread_block_tile<_Size> tiled_partition(const _Parent&) { return thread_block_tile<_Size>(); }

// The lanes of the warp that reached coalesced_threads() together (see resolve_coalesced in
// the runtime: the lanes arriving while the rest of the warp is blocked elsewhere or exited).
class coalesced_group {
  unsigned mask_;

 public:
  explicit coalesced_group(unsigned m) : mask_(m) {}
  unsigned mask() const { return mask_; }
  void sync() const { __syncwarp(mask_); }
  unsigned size() const { return __popc(mask_); }
  unsigned num_threads() const { return size(); }
  unsigned thread_rank() const {
    unsigned lane = cudashim_detail::linear_tid() % 32;
    return __popc(mask_ & ((1u << lane) - 1));
  }
  unsigned meta_group_rank() const { return 0; }
  unsigned meta_group_size() const { return 1; }
  template <class _Tp>
  _Tp shfl(_Tp v, unsigned rank) const {
    unsigned m = mask_;
    for (unsigned k = 0; k < rank && m; ++k) m &= m - 1;
    return __shfl_sync(mask_, v, m ? __ffs(m) - 1 : 0);
  }
  unsigned ballot(int p) const { return __ballot_sync(mask_, p); }
  int any(int p) const { return __any_sync(mask_, p); }
  int all(int p) const { return __all_sync(mask_, p); }
};
inline coalesced_group coalesced_threads(std::source_location loc = std::source_location::current()) {
  unsigned self = 1u << (cudashim_detail::linear_tid() % 32);
  return coalesced_group((unsigned)cudashim::warp_op(cudashim::_Wop_COALESCE, self, 0, 0, 32, loc.line(), loc.file_name()));
}

// The generic group (CUDA's base class of the others): a block, a warp tile of any size up to
// 32 (also one made at run time by tiled_partition(parent, size)), a coalesced group or the grid.
class thread_group {
  enum _Kind { _Block, _Tile, _Coalesced, _Grid } kind_;
  unsigned size_ = 0;  // tile: its size; coalesced: its lanes' mask
  unsigned mask() const {
    if (kind_ == _Coalesced) return size_;
    unsigned lane = cudashim_detail::linear_tid() % 32;
    return size_ == 32 ? 0xffffffffu : (((1u << size_) - 1) << (lane & ~(size_ - 1)));
  }

 public:
  thread_group(const thread_block&) : kind_(_Block) {}
  thread_group(const grid_group&) : kind_(_Grid) {}
  thread_group(const coalesced_group& c) : kind_(_Coalesced), size_(c.mask()) {}
  template <unsigned _Size>
  thread_group(const thread_block_tile<_Size>&) : kind_(_Tile), size_(_Size) {}
  static thread_group _tile(unsigned size) {
    thread_group g{thread_block()};
    g.kind_ = _Tile;
    g.size_ = size;
    return g;
  }
  void sync() const {
    switch (kind_) {
      case _Block: __syncthreads(); break;
      case _Grid: grid_group().sync(); break;
      default: __syncwarp(mask());
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
      case _Coalesced: return __popc(size_);
      default: return size_;
    }
  }
  unsigned long long num_threads() const { return size(); }
  bool is_valid() const { return kind_ != _Grid || grid_group().is_valid(); }
};

// A tile whose size is known at run time (a power of two up to 32), of a block or a group.
inline thread_group tiled_partition(const thread_group&, unsigned tilesz) {
  if (tilesz == 0 || tilesz > 32 || (tilesz & (tilesz - 1)))
    cudashim::fatal("cooperative_groups::tiled_partition(group, %u): the tile size must be a power of "
                    "two up to 32", tilesz);
  return thread_group::_tile(tilesz);
}

template <class _Group>
inline void sync(const _Group& g) { g.sync(); }
template <class _Group>
inline unsigned long long thread_rank(const _Group& g) { return g.thread_rank(); }
template <class _Group>
inline unsigned long long group_size(const _Group& g) { return g.size(); }

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

// Every lane of the tile gets the reduction of all lanes' values (a butterfly).
template <unsigned _Size, class _Tp, class _Op>
inline _Tp reduce(const thread_block_tile<_Size>& g, _Tp v, _Op op) {
  for (unsigned off = _Size / 2; off > 0; off /= 2) v = op(v, g.shfl_xor(v, off));
  return v;
}
template <unsigned _Size, class _Tp, class _Op>
inline _Tp inclusive_scan(const thread_block_tile<_Size>& g, _Tp v, _Op op) {
  for (unsigned off = 1; off < _Size; off *= 2) {
    _Tp o = g.shfl_up(v, off);
    if (g.thread_rank() >= off) v = op(v, o);
  }
  return v;
}
template <unsigned _Size, class _Tp>
inline _Tp inclusive_scan(const thread_block_tile<_Size>& g, _Tp v) { return inclusive_scan(g, v, plus<_Tp>()); }

}  // namespace cooperative_groups
