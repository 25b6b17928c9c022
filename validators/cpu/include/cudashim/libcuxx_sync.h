// libcu++'s synchronisation objects on the CPU shim: cuda::barrier (and cuda::std::barrier),
// cuda::latch (cuda::std::latch), cuda::counting_semaphore / binary_semaphore (and their
// cuda::std forms), and cuda::memcpy_async with a barrier. Written from the CUDA Programming
// Guide ("Asynchronous Barrier") and libcu++'s documented semantics, not from NVIDIA's code.
//
// A block's CUDA threads are fibers of one worker thread, so a wait cannot block the host
// thread: it goes through the runtime (_Sync_wait), which runs the block's other threads until
// one of them changes the object (_Sync_notify), and reports a deadlock when none can (see
// validators/cpu/README.md, "libcu++ barriers, latches and semaphores"). Every state word is an
// atomic: host threads (std::thread with cuda::std::barrier) and the blocks of a cooperative
// launch may share an object, and the race build orders the writes these objects publish.
#pragma once
#include <algorithm>
#include <atomic>
#include <climits>
#include <cstddef>
#include <cstring>
#include <source_location>
#include <thread>
#include <mutex>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include <cooperative_groups/memcpy_async.h>  // cuda::aligned_size_t, shared with it

#if __has_include(<cuda/std/atomic>)
// The toolkit's libcu++ (library-mode builds): its cuda::thread_scope, so that <cuda/atomic>
// and these headers agree on one enumeration.
#include <cuda/std/atomic>
#else
namespace cuda {
enum thread_scope {
  thread_scope_system = 0,
  thread_scope_device = 1,
  thread_scope_block = 2,
  thread_scope_thread = 10
};
}  // namespace cuda
#endif

namespace cudashim {
unsigned long long block_serial();
int _Sync_context();
void _Sync_wait(bool (*__ready)(const void*), const void* __arg, const void* __obj, int __kind, const char* __what,
                unsigned __line, const char* __file);
void _Sync_notify(const void* __obj);
[[noreturn]] void fatal(const char* __fmt, ...);
// Synchronisation across blocks that are not co-resident: one report, whichever way it is found.
[[noreturn]] void _Sync_needs_gpu(const char* __what, const char* __file, unsigned __line);

// The block run an object's current use belongs to (0: none yet). Threads of two blocks using one
// barrier or latch at once is synchronisation across blocks, which only co-resident blocks make
// progress with: the shim runs it in cooperative launches (objects of device or system scope)
// and reports any other case as needing a GPU, naming the object.
struct _Sync_owner {
  static constexpr unsigned long long _Shared = ~0ull;
  ::std::atomic<unsigned long long> __o{0};
  void _Reset() noexcept { __o.store(0, ::std::memory_order_relaxed); }
  void _Claim(const char* __what, bool __block_scope, const std::source_location& __loc) {
    const int __where = _Sync_context();
    if (__where == 0) return;  // host code: host threads may share an object freely
    const unsigned long long __me = block_serial();
    unsigned long long __cur = __o.load(::std::memory_order_relaxed);
    if (__cur == __me || __cur == _Shared) return;
    if (__cur == 0 && __o.compare_exchange_strong(__cur, __me)) return;
    if (__cur == __me || __cur == _Shared) return;
    if (!__block_scope && __where == 2) {
      __o.store(_Shared, ::std::memory_order_relaxed);
      return;
    }
    _Sync_needs_gpu(__what, __loc.file_name(), (unsigned)__loc.line());
  }
};

// cuda::memcpy_async with a barrier: the copy is complete when the barrier's current phase
// completes, and the destination is undefined until then. As the pipeline primitives do
// (cuda_pipeline_primitives.h), the destination reads as 0xFF bytes from the call and the bytes
// move from the source when the phase completes, so a kernel that reads it too early fails
// rather than passing by luck. Pending copies are kept by barrier address (a cooperative
// launch's blocks, on other host threads, may complete a barrier of device scope); init()
// forgets a barrier's copies left by a block that never completed its phase.
struct _Barrier_copy {
  void* __dst;
  const void* __src;
  ::std::size_t __n;
};
inline ::std::mutex& _Barrier_copies_mutex() {
  static ::std::mutex __m;
  return __m;
}
inline ::std::unordered_multimap<const void*, _Barrier_copy>& _Barrier_copies() {
  static auto* __m = new ::std::unordered_multimap<const void*, _Barrier_copy>();
  return *__m;
}
inline ::std::atomic<long> _Barrier_copies_pending{0};
inline void _Barrier_copy_issue(const void* __bar, void* __dst, const void* __src, ::std::size_t __n) {
  if (__n == 0) return;
  ::std::memset(__dst, 0xFF, __n);
  ::std::lock_guard<::std::mutex> __lk(_Barrier_copies_mutex());
  _Barrier_copies().emplace(__bar, _Barrier_copy{__dst, __src, __n});
  _Barrier_copies_pending.fetch_add(1, ::std::memory_order_relaxed);
}
inline void _Barrier_copies_settle(const void* __bar, bool __copy) {
  if (_Barrier_copies_pending.load(::std::memory_order_relaxed) == 0) return;
  ::std::lock_guard<::std::mutex> __lk(_Barrier_copies_mutex());
  auto __range = _Barrier_copies().equal_range(__bar);
  for (auto __it = __range.first; __it != __range.second; ++__it) {
    if (__copy) ::std::memcpy(__it->second.__dst, __it->second.__src, __it->second.__n);
    _Barrier_copies_pending.fetch_sub(1, ::std::memory_order_relaxed);
  }
  _Barrier_copies().erase(__range.first, __range.second);
}

struct _Empty_completion {
  void operator()() noexcept {}
};

// Waits, by kind (runtime _Sync_wait): 0 block scope, 1 a barrier or latch of wider scope,
// 2 a semaphore of wider scope.
constexpr int _Sync_kind(int __scope, bool __semaphore) {
  return __scope == ::cuda::thread_scope_block || __scope == ::cuda::thread_scope_thread ? 0 : (__semaphore ? 2 : 1);
}
}  // namespace cudashim

namespace cuda {

template <thread_scope _Sco, class _CompletionF = ::cudashim::_Empty_completion>
class barrier {
 public:
  class arrival_token {
    friend class barrier;
    unsigned long long __phase = 0;
    explicit arrival_token(unsigned long long __p) noexcept : __phase(__p) {}

   public:
    arrival_token() = default;
  };

  static constexpr ::std::ptrdiff_t max() noexcept { return PTRDIFF_MAX; }

  // Left uninitialised, as a __shared__ barrier is until init(&bar, n).
  barrier() = default;
  constexpr explicit barrier(::std::ptrdiff_t __expected, _CompletionF __cf = _CompletionF())
      : __expected_(__expected), __pending_(__expected), __phase_(0), __cf_(::std::move(__cf)) {}
  barrier(const barrier&) = delete;
  barrier& operator=(const barrier&) = delete;

  friend void init(barrier* __b, ::std::ptrdiff_t __expected, _CompletionF __cf = _CompletionF(),
                   ::std::source_location __loc = ::std::source_location::current()) {
    if (__expected < 0)
      ::cudashim::fatal("cudashim: libcu++: init(cuda::barrier*, %td) at %s:%u: the expected count is negative",
                        __expected, __loc.file_name(), (unsigned)__loc.line());
    __b->__expected_.store(__expected, ::std::memory_order_relaxed);
    __b->__pending_.store(__expected, ::std::memory_order_relaxed);
    __b->__phase_.store(0, ::std::memory_order_relaxed);
    __b->__owner_._Reset();
    ::cudashim::_Barrier_copies_settle(__b, false);
    ::new (static_cast<void*>(&__b->__cf_)) _CompletionF(::std::move(__cf));
  }

  [[nodiscard]] arrival_token arrive(::std::ptrdiff_t __n = 1,
                                     ::std::source_location __loc = ::std::source_location::current()) {
    return arrival_token(_Arrive(__n, false, __loc));
  }
  void wait(arrival_token&& __t, ::std::source_location __loc = ::std::source_location::current()) const {
    _Wait_phase(__t.__phase, "cuda::barrier::wait", __loc);
  }
  [[nodiscard]] bool try_wait(arrival_token&& __t) const {
    return __phase_.load(::std::memory_order_acquire) != __t.__phase;
  }
  void arrive_and_wait(::std::source_location __loc = ::std::source_location::current()) {
    _Wait_phase(_Arrive(1, false, __loc), "cuda::barrier::arrive_and_wait", __loc);
  }
  void arrive_and_drop(::std::source_location __loc = ::std::source_location::current()) {
    (void)_Arrive(1, true, __loc);
  }
  // The phase of parity `__parity` (0 even, 1 odd) has completed when the current phase's parity
  // differs from it (libcu++'s wait_parity/try_wait_parity).
  [[nodiscard]] bool try_wait_parity(bool __parity) const {
    return (__phase_.load(::std::memory_order_acquire) & 1) != (unsigned long long)__parity;
  }
  void wait_parity(bool __parity, ::std::source_location __loc = ::std::source_location::current()) const {
    _Wait_parity(__parity, "cuda::barrier::wait_parity", __loc);
  }
  // A parity wait named for what it stands for (cuda::pipeline's stage waits), so a deadlock
  // report names the program's call.
  void _Wait_parity(bool __parity, const char* __what, const ::std::source_location& __loc) const {
    const_cast<barrier*>(this)->__owner_._Claim(__what, _Kind == 0, __loc);
    struct _Arg {
      const barrier* __b;
      bool __p;
    } __arg{this, __parity};
    ::cudashim::_Sync_wait([](const void* __a) {
      auto* __x = static_cast<const _Arg*>(__a);
      return __x->__b->try_wait_parity(__x->__p);
    }, &__arg, this, _Kind, __what, __loc.line(), __loc.file_name());
  }

 private:
  static constexpr int _Kind = ::cudashim::_Sync_kind(_Sco, false);

  unsigned long long _Arrive(::std::ptrdiff_t __n, bool __drop, const ::std::source_location& __loc) {
    __owner_._Claim("cuda::barrier", _Kind == 0, __loc);
    const unsigned long long __phase = __phase_.load(::std::memory_order_acquire);
    const ::std::ptrdiff_t __left = __pending_.load(::std::memory_order_relaxed);
    if (__n <= 0 || __n > __left)
      ::cudashim::fatal("cudashim: libcu++: cuda::barrier::%s at %s:%u: %td arrivals where the phase expects %td "
                        "more (undefined behaviour in CUDA)",
                        __drop ? "arrive_and_drop" : "arrive", __loc.file_name(), (unsigned)__loc.line(), __n,
                        __left);
    if (__drop) __expected_.fetch_sub(1, ::std::memory_order_relaxed);
    if (__pending_.fetch_sub(__n, ::std::memory_order_acq_rel) == __n) {
      // The last arrival of the phase: its asynchronous copies land, the completion step runs,
      // then the next phase begins.
      ::cudashim::_Barrier_copies_settle(this, true);
      __cf_();
      __pending_.store(__expected_.load(::std::memory_order_relaxed), ::std::memory_order_relaxed);
      __owner_._Reset();
      __phase_.fetch_add(1, ::std::memory_order_release);
      ::cudashim::_Sync_notify(this);
    }
    return __phase;
  }

  void _Wait_phase(unsigned long long __phase, const char* __what, const ::std::source_location& __loc) const {
    if (__phase_.load(::std::memory_order_acquire) != __phase) return;
    const_cast<barrier*>(this)->__owner_._Claim(__what, _Kind == 0, __loc);
    struct _Arg {
      const barrier* __b;
      unsigned long long __p;
    } __arg{this, __phase};
    ::cudashim::_Sync_wait([](const void* __a) {
      auto* __x = static_cast<const _Arg*>(__a);
      return __x->__b->__phase_.load(::std::memory_order_acquire) != __x->__p;
    }, &__arg, this, _Kind, __what, __loc.line(), __loc.file_name());
  }

  ::std::atomic<::std::ptrdiff_t> __expected_;
  ::std::atomic<::std::ptrdiff_t> __pending_;
  ::std::atomic<unsigned long long> __phase_;
  ::cudashim::_Sync_owner __owner_;
  [[no_unique_address]] _CompletionF __cf_;
};

template <thread_scope _Sco, ::std::ptrdiff_t _LeastMaxValue = PTRDIFF_MAX>
class counting_semaphore {
 public:
  static constexpr ::std::ptrdiff_t max() noexcept { return _LeastMaxValue; }
  constexpr explicit counting_semaphore(::std::ptrdiff_t __desired) : __count_(__desired) {}
  counting_semaphore(const counting_semaphore&) = delete;
  counting_semaphore& operator=(const counting_semaphore&) = delete;

  void release(::std::ptrdiff_t __update = 1, ::std::source_location __loc = ::std::source_location::current()) {
    const ::std::ptrdiff_t __before = __count_.load(::std::memory_order_relaxed);
    if (__update < 0 || __update > max() - __before)
      ::cudashim::fatal("cudashim: libcu++: counting_semaphore::release(%td) at %s:%u with the count at %td: "
                        "above max() %td (undefined behaviour in CUDA)",
                        __update, __loc.file_name(), (unsigned)__loc.line(), __before, max());
    __count_.fetch_add(__update, ::std::memory_order_release);
    ::cudashim::_Sync_notify(this);
  }
  [[nodiscard]] bool try_acquire() noexcept {
    ::std::ptrdiff_t __c = __count_.load(::std::memory_order_relaxed);
    while (__c > 0)
      if (__count_.compare_exchange_weak(__c, __c - 1, ::std::memory_order_acquire, ::std::memory_order_relaxed))
        return true;
    return false;
  }
  void acquire(::std::source_location __loc = ::std::source_location::current()) {
    while (!try_acquire())
      ::cudashim::_Sync_wait([](const void* __a) {
        return static_cast<const counting_semaphore*>(__a)->__count_.load(::std::memory_order_relaxed) > 0;
      }, this, this, ::cudashim::_Sync_kind(_Sco, true), "counting_semaphore::acquire", __loc.line(),
         __loc.file_name());
  }

 private:
  ::std::atomic<::std::ptrdiff_t> __count_;
};

template <thread_scope _Sco>
using binary_semaphore = counting_semaphore<_Sco, 1>;

template <thread_scope _Sco>
class latch {
 public:
  static constexpr ::std::ptrdiff_t max() noexcept { return PTRDIFF_MAX; }
  constexpr explicit latch(::std::ptrdiff_t __expected) : __count_(__expected) {}
  latch(const latch&) = delete;
  latch& operator=(const latch&) = delete;

  void count_down(::std::ptrdiff_t __n = 1, ::std::source_location __loc = ::std::source_location::current()) {
    __owner_._Claim("cuda::latch", _Kind == 0, __loc);
    const ::std::ptrdiff_t __left = __count_.load(::std::memory_order_relaxed);
    if (__n < 0 || __n > __left)
      ::cudashim::fatal("cudashim: libcu++: cuda::latch::count_down(%td) at %s:%u with %td left (undefined "
                        "behaviour in CUDA)",
                        __n, __loc.file_name(), (unsigned)__loc.line(), __left);
    if (__count_.fetch_sub(__n, ::std::memory_order_release) == __n) ::cudashim::_Sync_notify(this);
  }
  [[nodiscard]] bool try_wait() const noexcept { return __count_.load(::std::memory_order_acquire) == 0; }
  void wait(::std::source_location __loc = ::std::source_location::current()) const {
    _Wait("cuda::latch::wait", __loc);
  }
  void arrive_and_wait(::std::ptrdiff_t __n = 1, ::std::source_location __loc = ::std::source_location::current()) {
    count_down(__n, __loc);
    _Wait("cuda::latch::arrive_and_wait", __loc);
  }

 private:
  static constexpr int _Kind = ::cudashim::_Sync_kind(_Sco, false);
  void _Wait(const char* __what, const ::std::source_location& __loc) const {
    if (try_wait()) return;
    const_cast<latch*>(this)->__owner_._Claim(__what, _Kind == 0, __loc);
    ::cudashim::_Sync_wait([](const void* __a) { return static_cast<const latch*>(__a)->try_wait(); }, this, this,
                           _Kind, __what, __loc.line(), __loc.file_name());
  }
  ::std::atomic<::std::ptrdiff_t> __count_;
  ::cudashim::_Sync_owner __owner_;
};

// memcpy_async with a barrier (see _Barrier_copy_issue): a group's threads each issue their
// share (rank r of S: the r-th of S contiguous slices), as cooperative_groups::memcpy_async does.
template <class _Size, thread_scope _Sco, class _CF>
inline void memcpy_async(void* __dst, const void* __src, _Size __size, barrier<_Sco, _CF>& __bar) {
  ::cudashim::_Barrier_copy_issue(&__bar, __dst, __src, static_cast<::std::size_t>(__size));
}
template <class _Group, class _Size, thread_scope _Sco, class _CF>
inline auto memcpy_async(const _Group& __g, void* __dst, const void* __src, _Size __size, barrier<_Sco, _CF>& __bar)
    -> decltype((void)__g.thread_rank(), (void)__g.size()) {
  const ::std::size_t __n = static_cast<::std::size_t>(__size);
  const ::std::size_t __parts = static_cast<::std::size_t>(__g.size());
  const ::std::size_t __r = static_cast<::std::size_t>(__g.thread_rank());
  const ::std::size_t __chunk = (__n + __parts - 1) / __parts;
  const ::std::size_t __lo = ::std::min(__n, __r * __chunk), __hi = ::std::min(__n, __lo + __chunk);
  ::cudashim::_Barrier_copy_issue(&__bar, static_cast<char*>(__dst) + __lo, static_cast<const char*>(__src) + __lo,
                                  __hi - __lo);
}

namespace std {
template <class _CompletionF = ::cudashim::_Empty_completion>
class barrier : public ::cuda::barrier<::cuda::thread_scope_system, _CompletionF> {
 public:
  constexpr explicit barrier(::std::ptrdiff_t __expected, _CompletionF __cf = _CompletionF())
      : ::cuda::barrier<::cuda::thread_scope_system, _CompletionF>(__expected, ::std::move(__cf)) {}
};
class latch : public ::cuda::latch<::cuda::thread_scope_system> {
 public:
  constexpr explicit latch(::std::ptrdiff_t __expected) : ::cuda::latch<::cuda::thread_scope_system>(__expected) {}
};
template <::std::ptrdiff_t _LeastMaxValue = PTRDIFF_MAX>
class counting_semaphore : public ::cuda::counting_semaphore<::cuda::thread_scope_system, _LeastMaxValue> {
 public:
  constexpr explicit counting_semaphore(::std::ptrdiff_t __desired)
      : ::cuda::counting_semaphore<::cuda::thread_scope_system, _LeastMaxValue>(__desired) {}
};
using binary_semaphore = counting_semaphore<1>;
}  // namespace std

}  // namespace cuda
