// libcu++'s cuda::pipeline on the CPU shim: block-scope pipelines over a
// cuda::pipeline_shared_state (cuda::make_pipeline(group, &state[, producer count or role])),
// thread-scope pipelines (cuda::make_pipeline()), cuda::memcpy_async into a pipeline's stage,
// cuda::pipeline_consumer_wait_prior<N> and cuda::pipeline_producer_commit(pipe, barrier).
// Written from the CUDA Programming Guide ("Asynchronous Data Copies using cuda::pipeline") and
// libcu++'s documented semantics, not from NVIDIA's code.
//
// A block-scope pipeline is a ring of stages, each a pair of the shim's cuda::barriers: producers
// wait for a stage's `consumed` phase before filling it and arrive on its `produced` barrier when
// they commit; consumers wait for `produced` and arrive on `consumed` when they release. Waiting
// is the barriers' parity wait, so a waiting thread hands its turn to the block's other fibers.
// A copy into a stage is bound to the stage's `produced` barrier (as cuda::memcpy_async with a
// barrier is): its destination reads 0xFF bytes until every producer of the stage has committed,
// so a consumer that reads before consumer_wait() fails rather than passing by luck.
// A thread-scope pipeline is the calling thread's own queue of asynchronous copies (the one the
// pipeline primitives use, cuda_pipeline_primitives.h): each commit is a batch, and a wait lands
// the oldest batches' bytes.
#pragma once
#include <cstdint>

#include <cudashim/libcuxx_sync.h>

namespace cudashim {
// An aligned size's promise (aligned pointers, a size multiple of the alignment) is checked:
// breaking it is undefined behaviour on a GPU, which a CPU run would otherwise hide.
template <class _Size>
inline ::std::size_t _Pipeline_copy_size(const _Size& __size, const void* __dst, const void* __src,
                                         const ::std::source_location& __loc) {
  const ::std::size_t __n = static_cast<::std::size_t>(__size);
  if constexpr (requires { _Size::align; }) {
    constexpr ::std::size_t __a = _Size::align;
    const ::std::size_t __d = reinterpret_cast<::std::uintptr_t>(__dst) % __a;
    const ::std::size_t __s = reinterpret_cast<::std::uintptr_t>(__src) % __a;
    char __what[200];
    if (__d || __s) {
      snprintf(__what, sizeof __what, "misaligned address: %s is %zu bytes past a %zu-byte boundary (aligned_size_t<%zu>)",
               __d ? "dst" : "src", __d ? __d : __s, __a, __a);
      async_copy::_misuse("cuda::memcpy_async", __loc, __what);
    }
    if (__n % __a) {
      snprintf(__what, sizeof __what, "size %zu is not a multiple of %zu (aligned_size_t<%zu>)", __n, __a, __a);
      async_copy::_misuse("cuda::memcpy_async", __loc, __what);
    }
  }
  return __n;
}

// A group's share of a collective copy: rank r of S takes the r-th of S contiguous slices, as
// cooperative_groups::memcpy_async does (every thread passes the same arguments).
struct _Share {
  ::std::size_t __lo, __hi;
};
template <class _Group>
inline _Share _Group_share(const _Group& __g, ::std::size_t __n) {
  const ::std::size_t __parts = static_cast<::std::size_t>(__g.size());
  const ::std::size_t __r = static_cast<::std::size_t>(__g.thread_rank());
  const ::std::size_t __chunk = (__n + __parts - 1) / __parts;
  const ::std::size_t __lo = ::std::min(__n, __r * __chunk);
  return {__lo, ::std::min(__n, __lo + __chunk)};
}
}  // namespace cudashim

namespace cuda {

enum class pipeline_role { producer, consumer };

template <thread_scope _Sco>
class pipeline;

template <thread_scope _Sco, ::std::uint8_t _Stages>
class pipeline_shared_state {
  static_assert(_Stages > 0, "a pipeline has at least one stage");
  static_assert(_Sco != thread_scope_thread, "a thread-scope pipeline has no shared state (cuda::make_pipeline())");

 public:
  // Left uninitialised, as a __shared__ object is: make_pipeline() sets it up.
  pipeline_shared_state() = default;
  pipeline_shared_state(const pipeline_shared_state&) = delete;
  pipeline_shared_state& operator=(const pipeline_shared_state&) = delete;

 private:
  template <thread_scope>
  friend class pipeline;
  template <class _Group, thread_scope _S2, ::std::uint8_t _N2>
  friend pipeline<_S2> _Make_pipeline(const _Group&, pipeline_shared_state<_S2, _N2>*, bool, bool, bool);

  struct _Stage {
    barrier<_Sco> __produced;
    barrier<_Sco> __consumed;
  };
  _Stage __stages_[_Stages];
  ::std::atomic<::std::uint32_t> __refcount_;
};

// One thread's view of a collective pipeline: where its next stage to fill (head) and to consume
// (tail) are, and the parity of the phase each waits for (libcu++'s documented protocol: the
// first round of producer_acquire finds every stage free).
template <thread_scope _Sco>
class pipeline {
 public:
  pipeline(pipeline&& __o) noexcept { *this = ::std::move(__o); }
  pipeline& operator=(pipeline&& __o) noexcept {
    __produced_ = __o.__produced_;
    __consumed_ = __o.__consumed_;
    __refcount_ = __o.__refcount_;
    __stages_ = __o.__stages_;
    __stride_ = __o.__stride_;
    __head_ = __o.__head_;
    __tail_ = __o.__tail_;
    __consumed_parity_ = __o.__consumed_parity_;
    __produced_parity_ = __o.__produced_parity_;
    __producer_ = __o.__producer_;
    __consumer_ = __o.__consumer_;
    __active_ = ::std::exchange(__o.__active_, false);
    return *this;
  }
  pipeline(const pipeline&) = delete;
  pipeline& operator=(const pipeline&) = delete;
  ~pipeline() {
    if (__active_) (void)quit();
  }

  void producer_acquire(::std::source_location __loc = ::std::source_location::current()) {
    _Role(__producer_, "producer_acquire", __loc);
    _Consumed(__head_)._Wait_parity(__consumed_parity_, "cuda::pipeline::producer_acquire", __loc);
  }
  void producer_commit(::std::source_location __loc = ::std::source_location::current()) {
    _Role(__producer_, "producer_commit", __loc);
    (void)_Produced(__head_).arrive(1, __loc);
    if (++__head_ == __stages_) {
      __head_ = 0;
      __consumed_parity_ = !__consumed_parity_;
    }
  }
  void consumer_wait(::std::source_location __loc = ::std::source_location::current()) {
    _Role(__consumer_, "consumer_wait", __loc);
    _Produced(__tail_)._Wait_parity(__produced_parity_, "cuda::pipeline::consumer_wait", __loc);
  }
  void consumer_release(::std::source_location __loc = ::std::source_location::current()) {
    _Role(__consumer_, "consumer_release", __loc);
    (void)_Consumed(__tail_).arrive(1, __loc);
    if (++__tail_ == __stages_) {
      __tail_ = 0;
      __produced_parity_ = !__produced_parity_;
    }
  }
  // Leaves the pipeline; true for the last thread of the group to leave.
  bool quit() {
    __active_ = false;
    return __refcount_->fetch_sub(1, ::std::memory_order_acq_rel) == 1;
  }

  // The stage a producer's copies belong to (cuda::memcpy_async).
  barrier<_Sco>& _Head_barrier(const ::std::source_location& __loc) {
    _Role(__producer_, "memcpy_async", __loc);
    return _Produced(__head_);
  }

 private:
  template <class _Group, thread_scope _S2, ::std::uint8_t _N2>
  friend pipeline<_S2> _Make_pipeline(const _Group&, pipeline_shared_state<_S2, _N2>*, bool, bool, bool);
  pipeline() = default;

  barrier<_Sco>& _Produced(unsigned __s) const {
    return *reinterpret_cast<barrier<_Sco>*>(reinterpret_cast<char*>(__produced_) + __s * __stride_);
  }
  barrier<_Sco>& _Consumed(unsigned __s) const {
    return *reinterpret_cast<barrier<_Sco>*>(reinterpret_cast<char*>(__consumed_) + __s * __stride_);
  }
  void _Role(bool __ok, const char* __op, const ::std::source_location& __loc) const {
    if (!__active_)
      ::cudashim::fatal("cudashim: libcu++: cuda::pipeline::%s at %s:%u on a pipeline this thread has quit "
                        "(undefined behaviour in CUDA)",
                        __op, __loc.file_name(), (unsigned)__loc.line());
    if (!__ok)
      ::cudashim::fatal("cudashim: libcu++: cuda::pipeline::%s at %s:%u by a thread whose role is %s "
                        "(undefined behaviour in CUDA)",
                        __op, __loc.file_name(), (unsigned)__loc.line(), __producer_ ? "producer" : "consumer");
  }

  barrier<_Sco>* __produced_ = nullptr;
  barrier<_Sco>* __consumed_ = nullptr;
  ::std::atomic<::std::uint32_t>* __refcount_ = nullptr;
  unsigned __stages_ = 0;
  ::std::size_t __stride_ = 0;
  unsigned __head_ = 0, __tail_ = 0;
  bool __consumed_parity_ = true, __produced_parity_ = false;
  bool __producer_ = false, __consumer_ = false, __active_ = false;
};

// A thread-scope pipeline: the calling thread's own asynchronous copies, one batch per commit.
template <>
class pipeline<thread_scope_thread> {
 public:
  pipeline(pipeline&& __o) noexcept
      : __head_(__o.__head_), __tail_(__o.__tail_), __active_(::std::exchange(__o.__active_, false)) {}
  pipeline(const pipeline&) = delete;
  pipeline& operator=(const pipeline&) = delete;
  ~pipeline() = default;

  void producer_acquire() noexcept {}
  void producer_commit() {
    ::cudashim::async_copy::commit();
    ++__head_;
  }
  // The oldest stage not yet released has landed.
  void consumer_wait() {
    const unsigned long long __in_flight = __head_ - __tail_;
    ::cudashim::async_copy::complete(__in_flight ? __in_flight - 1 : 0);
  }
  void consumer_release() noexcept {
    if (__tail_ < __head_) ++__tail_;
  }
  bool quit() noexcept {
    __active_ = false;
    return true;
  }

  // pipeline_consumer_wait_prior<N>: every stage but the newest N has landed and counts as
  // consumed (libcu++ moves the tail to head - N).
  void _Wait_prior(unsigned long long __prior) {
    ::cudashim::async_copy::complete(__prior);
    if (__head_ - __tail_ > __prior) __tail_ = __head_ - __prior;
  }

 private:
  friend pipeline<thread_scope_thread> make_pipeline();
  pipeline() = default;
  unsigned long long __head_ = 0, __tail_ = 0;
  bool __active_ = true;
};

inline pipeline<thread_scope_thread> make_pipeline() { return pipeline<thread_scope_thread>(); }

// Collective: every thread of the group calls it. The group's first thread sets up the stages'
// barriers (expecting every producer, or every consumer, per phase) once the roles are counted.
template <class _Group, thread_scope _Sco, ::std::uint8_t _Stages>
pipeline<_Sco> _Make_pipeline(const _Group& __group, pipeline_shared_state<_Sco, _Stages>* __state, bool __producer,
                              bool __consumer, bool __count_roles) {
  const ::std::uint32_t __size = static_cast<::std::uint32_t>(__group.size());
  const bool __first = __group.thread_rank() == 0;
  ::std::uint32_t __producers = __size, __consumers = __size;
  if (__count_roles) {
    if (__first) __state->__refcount_.store(0, ::std::memory_order_relaxed);
    __group.sync();
    if (__producer) __state->__refcount_.fetch_add(1, ::std::memory_order_relaxed);
    __group.sync();
    __producers = __state->__refcount_.load(::std::memory_order_relaxed);
    __consumers = __size - __producers;
    __group.sync();
  }
  if (__first) {
    for (auto& __st : __state->__stages_) {
      init(&__st.__produced, __producers);
      init(&__st.__consumed, __consumers);
    }
    __state->__refcount_.store(__size, ::std::memory_order_relaxed);
  }
  __group.sync();
  pipeline<_Sco> __p;
  __p.__produced_ = &__state->__stages_[0].__produced;
  __p.__consumed_ = &__state->__stages_[0].__consumed;
  __p.__refcount_ = &__state->__refcount_;
  __p.__stages_ = _Stages;
  __p.__stride_ = sizeof(typename pipeline_shared_state<_Sco, _Stages>::_Stage);
  __p.__producer_ = __producer;
  __p.__consumer_ = __consumer;
  __p.__active_ = true;
  return __p;
}

// Every thread both produces and consumes.
template <class _Group, thread_scope _Sco, ::std::uint8_t _Stages>
pipeline<_Sco> make_pipeline(const _Group& __group, pipeline_shared_state<_Sco, _Stages>* __state) {
  return _Make_pipeline(__group, __state, true, true, false);
}
// The group's first `producer_count` threads (by rank) produce, the others consume.
template <class _Group, thread_scope _Sco, ::std::uint8_t _Stages>
pipeline<_Sco> make_pipeline(const _Group& __group, pipeline_shared_state<_Sco, _Stages>* __state,
                             ::std::size_t __producer_count) {
  const bool __producer = static_cast<::std::size_t>(__group.thread_rank()) < __producer_count;
  return _Make_pipeline(__group, __state, __producer, !__producer, true);
}
template <class _Group, thread_scope _Sco, ::std::uint8_t _Stages>
pipeline<_Sco> make_pipeline(const _Group& __group, pipeline_shared_state<_Sco, _Stages>* __state,
                             pipeline_role __role) {
  const bool __producer = __role == pipeline_role::producer;
  return _Make_pipeline(__group, __state, __producer, !__producer, true);
}

template <::std::uint8_t _Prior>
inline void pipeline_consumer_wait_prior(pipeline<thread_scope_thread>& __pipe) {
  __pipe._Wait_prior(_Prior);
}

// The copies of the stage being committed complete before `__bar`'s current phase does (they
// land when it completes); the stage itself is committed empty.
template <thread_scope _Sco, class _CF>
inline void pipeline_producer_commit(pipeline<thread_scope_thread>& __pipe, barrier<_Sco, _CF>& __bar) {
  auto& __open = ::cudashim::async_copy::queue().open;
  auto __keep = __open.begin();
  for (auto __it = __open.begin(); __it != __open.end(); ++__it) {
    if (__it->zfill == 0)  // zero-filled copies stay with the pipeline's batch
      ::cudashim::_Barrier_copy_issue(&__bar, __it->dst, __it->src, __it->bytes);
    else
      *__keep++ = *__it;
  }
  __open.erase(__keep, __open.end());
  __pipe.producer_commit();
}

template <class _Size, thread_scope _Sco>
inline void memcpy_async(void* __dst, const void* __src, _Size __size, pipeline<_Sco>& __pipe,
                         ::std::source_location __loc = ::std::source_location::current()) {
  const ::std::size_t __n = ::cudashim::_Pipeline_copy_size(__size, __dst, __src, __loc);
  if constexpr (_Sco == thread_scope_thread)
    ::cudashim::async_copy::issue(__dst, __src, __n, 0);
  else
    ::cudashim::_Barrier_copy_issue(&__pipe._Head_barrier(__loc), __dst, __src, __n);
}
template <class _Group, class _Size, thread_scope _Sco>
inline auto memcpy_async(const _Group& __g, void* __dst, const void* __src, _Size __size, pipeline<_Sco>& __pipe,
                         ::std::source_location __loc = ::std::source_location::current())
    -> decltype((void)__g.thread_rank(), (void)__g.size()) {
  const ::std::size_t __n = ::cudashim::_Pipeline_copy_size(__size, __dst, __src, __loc);
  const ::cudashim::_Share __s = ::cudashim::_Group_share(__g, __n);
  char* __d = static_cast<char*>(__dst) + __s.__lo;
  const char* __c = static_cast<const char*>(__src) + __s.__lo;
  if constexpr (_Sco == thread_scope_thread)
    ::cudashim::async_copy::issue(__d, __c, __s.__hi - __s.__lo, 0);
  else
    ::cudashim::_Barrier_copy_issue(&__pipe._Head_barrier(__loc), __d, __c, __s.__hi - __s.__lo);
}

}  // namespace cuda
