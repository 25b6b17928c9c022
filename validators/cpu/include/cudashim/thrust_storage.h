// cudashim: what Thrust's device storage holds, noted with the uploads (included by
// thrust/system/cuda/execution_policy.h, the header force-included into every Thrust program).
//
// The shim runs Thrust's CPP system: a device_vector (universal_vector, thrust::cuda::vector)
// lives in host memory, filled by host copies the runtime never sees, so the kernel-work check
// (validators/kernel_work.py) cannot replace the inputs a device_vector receives. What it can
// still tell is whether the device received anything that depends on the inputs: when the
// uploads are noted (CUDASHIM_LOG_UPLOADS, the check's runs), every block of that storage is
// noted like an upload (length and hash of its bytes) when it is freed, and the blocks still
// live at exit then. A program that computes its outputs on the host and keeps its inputs out of
// Thrust's storage sends the same nothing whatever its inputs (rejected); one whose device data
// lives there sends bytes that change with its inputs (the check cannot tell, and says so).
//
// The hooks: the device system's two memory resources (cuda::memory_resource, behind
// thrust::device_allocator and cuda::allocator, and cuda::universal_memory_resource; see
// thrust/system/cuda/execution_policy.h) are fancy_pointer_resource specialisations over
// new_delete_resource; their do_allocate and do_deallocate are specialised here, before any use,
// to do what Thrust's do and keep the list. thrust::device_malloc/device_free (device_new, the
// device algorithms' temporary storage) reach the sequential system's malloc/free with the device
// system's tag: overloads for that tag, found by the same lookup and preferred to the templates,
// do the same.
#ifndef CUDASHIM_THRUST_STORAGE_H
#define CUDASHIM_THRUST_STORAGE_H

#include <cuda_runtime.h>
#include <thrust/mr/fancy_pointer_resource.h>
#include <thrust/mr/new.h>
#include <thrust/system/cuda/detail/execution_policy.h>
#include <thrust/system/cuda/memory_resource.h>
#include <thrust/system/detail/sequential/malloc_and_free.h>

#include <cstddef>
#include <cstdlib>
#include <mutex>
#include <unordered_map>

namespace cudashim {
namespace thrust_storage {

struct _Blocks {
  std::mutex mu;
  std::unordered_map<void*, std::size_t> live;
};

// Never destroyed: a device_vector with static storage is freed after every static destructor
// this program's own translation unit would order before it.
inline _Blocks& _blocks() {
  static _Blocks* b = new _Blocks;
  return *b;
}

inline void _note_live() {
  _Blocks& b = _blocks();
  std::lock_guard<std::mutex> lk(b.mu);
  for (const auto& [p, n] : b.live) ::cudashim::note_upload(p, n);
  b.live.clear();
}

inline void allocated(void* p, std::size_t n) {
  if (!p || !n || !::cudashim::uploads_noted()) return;
  _Blocks& b = _blocks();
  std::lock_guard<std::mutex> lk(b.mu);
  static const bool __at_exit = (std::atexit(_note_live), true);
  (void)__at_exit;
  b.live[p] = n;
}

// `n` 0: the size noted when it was allocated (free(ptr) takes none).
inline void freed(void* p, std::size_t n = 0) {
  if (!p || !::cudashim::uploads_noted()) return;
  _Blocks& b = _blocks();
  std::lock_guard<std::mutex> lk(b.mu);
  auto it = b.live.find(p);
  if (it != b.live.end()) {
    n = n ? n : it->second;
    b.live.erase(it);
  }
  if (n) ::cudashim::note_upload(p, n);
}

}  // namespace thrust_storage
}  // namespace cudashim

THRUST_NAMESPACE_BEGIN
namespace mr {

#define CUDASHIM_THRUST_STORAGE(_Pointer)                                                            \
  template <>                                                                                        \
  inline _Pointer fancy_pointer_resource<new_delete_resource, _Pointer>::do_allocate(                \
    std::size_t __bytes, std::size_t __alignment) {                                                  \
    _Pointer __p = static_cast<_Pointer>(m_upstream->do_allocate(__bytes, __alignment));             \
    ::cudashim::thrust_storage::allocated(thrust::detail::pointer_traits<_Pointer>::get(__p), __bytes); \
    return __p;                                                                                      \
  }                                                                                                  \
  template <>                                                                                        \
  inline void fancy_pointer_resource<new_delete_resource, _Pointer>::do_deallocate(                  \
    _Pointer __p, std::size_t __bytes, std::size_t __alignment) {                                    \
    void* __raw = thrust::detail::pointer_traits<_Pointer>::get(__p);                                \
    ::cudashim::thrust_storage::freed(__raw, __bytes);                                               \
    m_upstream->do_deallocate(__raw, __bytes, __alignment);                                          \
  }

CUDASHIM_THRUST_STORAGE(thrust::system::cuda::pointer<void>)
CUDASHIM_THRUST_STORAGE(thrust::system::cuda::universal_pointer<void>)
#undef CUDASHIM_THRUST_STORAGE

}  // namespace mr

namespace system {
namespace detail {
namespace sequential {
inline void* malloc(execution_policy<thrust::system::cuda::detail::tag>&, std::size_t __n) {
  void* __p = std::malloc(__n);
  ::cudashim::thrust_storage::allocated(__p, __n);
  return __p;
}
template <typename _Pointer>
inline void free(execution_policy<thrust::system::cuda::detail::tag>&, _Pointer __ptr) {
  void* __p = thrust::raw_pointer_cast(__ptr);
  ::cudashim::thrust_storage::freed(__p);
  std::free(__p);
}
}  // namespace sequential
}  // namespace detail
}  // namespace system
THRUST_NAMESPACE_END

#endif
