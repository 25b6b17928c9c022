// cudashim: cooperative_groups::memcpy_async, wait and wait_prior (cooperative groups API of the
// CUDA Programming Guide), on the asynchronous-copy engine of cuda_pipeline_primitives.h.
//
// memcpy_async is collective: every thread of the group calls it with the same arguments and
// queues only its share (rank r of S copies the r-th of S contiguous slices), then commits, so
// each call is one batch (stage). wait / wait_prior<N> complete the calling thread's batches
// (all, or all but the newest N) and then synchronise the group, after which every share is in
// place. Each thread copying its own share (rather than one thread copying everything) keeps
// the GPU's failure modes: a thread that skips the call leaves its slice undefined, and a group
// that does not wait together deadlocks. Until the wait, the destination reads as 0xFF bytes.
#pragma once
#include <cooperative_groups.h>
#include <cuda_pipeline_primitives.h>

namespace cuda {
// A byte count with a promise: the size is a multiple of _Align and the pointers are aligned
// to it (checked: breaking the promise is undefined behaviour on a GPU).
template <size_t _Align>
struct aligned_size_t {
  static constexpr size_t align = _Align;
  size_t value;
  explicit constexpr aligned_size_t(size_t size) : value(size) {}
  constexpr operator size_t() const { return value; }
};
}  // namespace cuda

namespace cooperative_groups {
namespace cudashim_detail {
template <class _Group>
inline void copy_share(const _Group& g, void* dst, const void* src, size_t bytes) {
  const unsigned long long n = (unsigned long long)g.size(), r = (unsigned long long)g.thread_rank();
  const size_t chunk = (bytes + n - 1) / n;
  const size_t lo = std::min<size_t>(bytes, chunk * r), hi = std::min<size_t>(bytes, lo + chunk);
  cudashim::async_copy::issue(static_cast<char*>(dst) + lo, static_cast<const char*>(src) + lo, hi - lo, 0);
  cudashim::async_copy::commit();
}
}  // namespace cudashim_detail

template <class _Group>
inline void memcpy_async(const _Group& g, void* dst, const void* src, size_t bytes) {
  cudashim_detail::copy_share(g, dst, src, bytes);
}

template <class _Group, size_t _Align>
inline void memcpy_async(const _Group& g, void* dst, const void* src, cuda::aligned_size_t<_Align> bytes,
                         std::source_location loc = std::source_location::current()) {
  const size_t dst_off = reinterpret_cast<uintptr_t>(dst) % _Align, src_off = reinterpret_cast<uintptr_t>(src) % _Align;
  if (dst_off || src_off || bytes.value % _Align) {
    char what[200];
    if (dst_off || src_off)
      snprintf(what, sizeof what, "misaligned address: %s is %zu bytes past a %zu-byte boundary (aligned_size_t<%zu>)",
               dst_off ? "dst" : "src", dst_off ? dst_off : src_off, _Align, _Align);
    else
      snprintf(what, sizeof what, "size %zu is not a multiple of %zu (aligned_size_t<%zu>)", bytes.value, _Align, _Align);
    cudashim::async_copy::_misuse("cooperative_groups::memcpy_async", loc, what);
  }
  cudashim_detail::copy_share(g, dst, src, bytes.value);
}

// Element-count form: copies min(dst_count, src_count) elements.
template <class _Group, class _Tp, class _DstLayout, class _SrcLayout>
inline void memcpy_async(const _Group& g, _Tp* dst, const _DstLayout& dst_count, const _Tp* src,
                         const _SrcLayout& src_count) {
  const size_t n = std::min<size_t>((size_t)dst_count, (size_t)src_count);
  cudashim_detail::copy_share(g, static_cast<void*>(dst), static_cast<const void*>(src), n * sizeof(_Tp));
}

template <class _Group>
inline void wait(const _Group& g) {
  cudashim::async_copy::complete(0);
  g.sync();
}

template <unsigned _Stages, class _Group>
inline void wait_prior(const _Group& g) {
  cudashim::async_copy::complete(_Stages);
  g.sync();
}
}  // namespace cooperative_groups
