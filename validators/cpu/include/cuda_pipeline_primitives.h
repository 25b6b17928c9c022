// cudashim: the pipeline primitives of the CUDA Programming Guide ("Asynchronous Data Copies"):
// __pipeline_memcpy_async, __pipeline_commit, __pipeline_wait_prior. Also the engine behind
// cooperative_groups::memcpy_async (cooperative_groups/memcpy_async.h).
//
// On a GPU the destination of an asynchronous copy holds no defined value until the issuing
// thread waits for the copy's batch ("commit group"). The emulation keeps that visible instead
// of copying at issue: the destination is filled with 0xFF bytes when the copy is issued (a NaN
// for floats), and the bytes move from the source only when the issuing thread waits for the
// batch. A kernel that reads the destination before the wait (a missing wait, a wait one stage
// too late, a missing __syncthreads after the wait) reads the fill or stale data, and a copy
// issued into a buffer other threads still read (a missing barrier before the next stage)
// overwrites it early; either fails verification or differs between schedules.
//
// Copies live in the issuing CUDA thread's queue: `open` until __pipeline_commit(), then one
// batch per commit; __pipeline_wait_prior(N) completes every batch but the newest N (uncommitted
// copies are not waited for, as with cp.async.wait_group). Copies still queued when a thread
// exits are dropped with its block (the runtime's block_serial() tells block runs apart).
#pragma once
#include <cuda_runtime.h>

#include <deque>
#include <source_location>
#include <unordered_map>
#include <vector>

namespace cudashim {
unsigned long long block_serial();

namespace async_copy {
struct _Copy {
  char* dst;
  const char* src;
  size_t bytes;  // destination bytes
  size_t zfill;  // trailing destination bytes set to zero instead of copied
};
struct _Queue {
  std::vector<_Copy> open;
  std::deque<std::vector<_Copy>> committed;
};

inline unsigned _linear_tid() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }

// The calling CUDA thread's queue, per block run: a block that exits with copies in flight
// leaves nothing behind for the next block run on this worker.
inline _Queue& queue() {
  static thread_local std::unordered_map<unsigned long long, std::vector<_Queue>> runs;
  static thread_local unsigned long long last_serial = ~0ull;
  static thread_local std::vector<_Queue>* last = nullptr;
  const unsigned long long serial = block_serial();
  if (serial != last_serial || last == nullptr) {
    auto it = runs.find(serial);
    if (it == runs.end()) {
      // Block runs of one worker follow each other (cooperative launches may interleave a
      // few): keep the newest ones only.
      while (runs.size() >= 8) {
        auto oldest = runs.begin();
        for (auto j = runs.begin(); j != runs.end(); ++j)
          if (j->first < oldest->first) oldest = j;
        runs.erase(oldest);
      }
      const size_t n = (size_t)blockDim.x * blockDim.y * blockDim.z;
      it = runs.emplace(serial, std::vector<_Queue>(n ? n : 1)).first;
    }
    last_serial = serial;
    last = &it->second;
  }
  const unsigned lin = _linear_tid();
  if (lin >= last->size()) last->resize(lin + 1);
  return (*last)[lin];
}

[[noreturn]] inline void _misuse(const char* api, const std::source_location& loc, const char* what) {
  const char* file = loc.file_name();
  const char* slash = strrchr(file, '/');
  fatal("cudashim: async copy: %s at %s:%u (thread (%u,%u,%u), block (%u,%u,%u)): %s", api,
        slash ? slash + 1 : file, loc.line(), threadIdx.x, threadIdx.y, threadIdx.z, blockIdx.x,
        blockIdx.y, blockIdx.z, what);
}

// Queue one copy; the destination is undefined (0xFF bytes) until its batch is waited for.
inline void issue(void* dst, const void* src, size_t bytes, size_t zfill) {
  if (bytes == 0) return;
  memset(dst, 0xff, bytes);
  queue().open.push_back(_Copy{static_cast<char*>(dst), static_cast<const char*>(src), bytes, zfill});
}

inline void commit() {
  _Queue& q = queue();
  q.committed.push_back(std::move(q.open));
  q.open.clear();
}

// Complete every committed batch but the newest `pending`, oldest first.
inline void complete(size_t pending) {
  _Queue& q = queue();
  while (q.committed.size() > pending) {
    for (const _Copy& c : q.committed.front()) {
      const size_t n = c.bytes - c.zfill;
      if (n) memmove(c.dst, c.src, n);
      if (c.zfill) memset(c.dst + n, 0, c.zfill);
    }
    q.committed.pop_front();
  }
}
}  // namespace async_copy
}  // namespace cudashim

// size_and_align is 4, 8 or 16; dst and src are aligned to it; the last zfill bytes of dst are
// zeroed instead of copied (zfill <= size_and_align).
inline void __pipeline_memcpy_async(void* __restrict__ dst, const void* __restrict__ src, size_t size_and_align,
                                    size_t zfill = 0,
                                    std::source_location loc = std::source_location::current()) {
  using cudashim::async_copy::_misuse;
  char what[200];
  if (size_and_align != 4 && size_and_align != 8 && size_and_align != 16) {
    snprintf(what, sizeof what, "size_and_align is %zu (must be 4, 8 or 16)", size_and_align);
    _misuse("__pipeline_memcpy_async", loc, what);
  }
  if (zfill > size_and_align) {
    snprintf(what, sizeof what, "zfill %zu is larger than size_and_align %zu", zfill, size_and_align);
    _misuse("__pipeline_memcpy_async", loc, what);
  }
  const uintptr_t dst_off = reinterpret_cast<uintptr_t>(dst) % size_and_align;
  const uintptr_t src_off = reinterpret_cast<uintptr_t>(src) % size_and_align;
  if (dst_off || src_off) {
    snprintf(what, sizeof what, "misaligned address: %s is %zu bytes past a %zu-byte boundary", dst_off ? "dst" : "src",
             (size_t)(dst_off ? dst_off : src_off), size_and_align);
    _misuse("__pipeline_memcpy_async", loc, what);
  }
  cudashim::async_copy::issue(dst, src, size_and_align, zfill);
}
inline void __pipeline_commit() { cudashim::async_copy::commit(); }
inline void __pipeline_wait_prior(size_t prior) { cudashim::async_copy::complete(prior); }
