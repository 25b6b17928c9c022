// cudashim: Thrust's device algorithms on a stream being captured (`par.on(s)`, `par_nosync.on(s)`
// while s captures), as CCCL's CUDA backend behaves there (thrust/system/cuda/detail/util.h):
//
// - `par` synchronises the stream at the end of every algorithm (synchronize -> cub::SyncStream
//   -> cudaStreamSynchronize), which a capture refuses: cudaErrorStreamCaptureUnsupported, the
//   capture invalidated, and Thrust throws thrust::system_error. So does any algorithm that hands
//   the host a result computed on the device (reduce, count, find, copy_if's end, ...), even
//   under `par_nosync`: it copies the result back and synchronises. Both are done here alike,
//   before the work.
// - `par_nosync` algorithms that need no result on the host and no temporary storage (for_each,
//   for_each_n, transform, fill, fill_n, sequence, tabulate, gather, scatter) launch kernels only:
//   a GPU records them. Here they are kernel nodes of the capture (the overloads below, which the
//   algorithm entries reach by argument-dependent lookup on par_nosync_t), run by each launch of
//   the graph with the iterators and functors of the call.
// - The rest under `par_nosync` (sort, scans, copy, ... : temporary storage through cudaMalloc /
//   cudaFree, or copies that may touch the host) the shim cannot record faithfully: the run stops
//   with a `needs a GPU` report rather than running the work once at the call.
#pragma once

#include <cuda_runtime.h>
#include <thrust/fill.h>
#include <thrust/for_each.h>
#include <thrust/gather.h>
#include <thrust/scatter.h>
#include <thrust/sequence.h>
#include <thrust/system/system_error.h>
#include <thrust/tabulate.h>
#include <thrust/transform.h>

#include <cstdio>
#include <cstring>
#include <iterator>
#include <string>
#include <utility>

namespace cudashim {
cudaError_t capture_library_call(cudaStream_t __s, _Closure* __w, const char* __library, const char* __call);
void invalidate_capture(cudaStream_t __s);

[[noreturn]] inline void _Thrust_capture_refused(cudaStream_t __s, const char* __what, const std::string& __name) {
  invalidate_capture(__s);
  std::string __msg = __name + ": " + __what + ": cudaErrorStreamCaptureUnsupported: operation not permitted when "
                                                "stream is capturing";
  fprintf(stderr, "cudashim: Thrust's %s on a stream being captured: %s (a GPU's Thrust waits for the stream "
                  "here, which the capture refuses; the capture is invalidated)\n",
          __name.c_str(), __what);
  throw THRUST_NS_QUALIFIER::system_error((int)cudaErrorStreamCaptureUnsupported, THRUST_NS_QUALIFIER::generic_category(),
                                          __msg);
}

inline void _Thrust_in_capture(cudaStream_t __s, bool __nosync, bool __records, const char* __fn) {
  std::string __name(__fn ? __fn : "?", __fn ? strcspn(__fn, "<(") : 1);
  auto __in = [&](std::initializer_list<const char*> __names) {
    for (const char* __n : __names)
      if (__name == __n) return true;
    return false;
  };
  if (!__nosync) _Thrust_capture_refused(__s, "failed to synchronize", __name);
  if (__records && __in({"for_each", "for_each_n", "transform", "fill", "fill_n", "sequence", "tabulate", "gather",
                         "scatter"}))
    return;  // recorded by the overloads below
  if (__in({"reduce", "count", "count_if", "find", "find_if", "find_if_not", "mismatch", "equal", "all_of", "any_of",
            "none_of", "is_sorted", "is_sorted_until", "is_partitioned", "partition_point", "min_element",
            "max_element", "minmax_element", "inner_product", "transform_reduce", "adjacent_find", "equal_range",
            "copy_if", "remove", "remove_if", "remove_copy", "remove_copy_if", "unique", "unique_copy",
            "unique_count", "unique_by_key", "unique_by_key_copy", "reduce_by_key", "partition", "partition_copy",
            "stable_partition", "stable_partition_copy", "set_union", "set_intersection", "set_difference",
            "set_symmetric_difference", "set_union_by_key", "set_intersection_by_key", "set_difference_by_key",
            "set_symmetric_difference_by_key"}))
    _Thrust_capture_refused(__s, "failed to copy the result to the host", __name);
  fatal("cudashim: needs a GPU: Thrust's %s with par_nosync on a stream being captured (a GPU may record its "
        "kernels into the graph; the CPU shim records only for_each, transform, fill, sequence, tabulate, "
        "gather and scatter)",
        __name.c_str());
}
}  // namespace cudashim

THRUST_NAMESPACE_BEGIN
namespace system {
namespace cuda {
namespace detail {

inline bool __cudashim_capturing(const par_nosync_t& __p) {
  return __p.__cudashim_stream != 0 && ::cudashim::capturing(__p.__cudashim_stream);
}
// The algorithm as a kernel node of the capture; each launch of the graph runs it afresh with
// the call's arguments (a `par` policy on no stream: nothing more to check then).
template <class _Fn>
void __cudashim_record(const par_nosync_t& __p, _Fn __work, const char* __name) {
  auto __each = [__work] {
    _Fn __w = __work;
    __w();
  };
  cudaError_t __e = ::cudashim::capture_library_call(
    __p.__cudashim_stream, new ::cudashim::_Closure_of<decltype(__each)>(std::move(__each)), "thrust", __name);
  if (__e != cudaSuccess)  // an invalidated capture: the kernel launch fails and Thrust throws
    throw THRUST_NS_QUALIFIER::system_error((int)__e, THRUST_NS_QUALIFIER::generic_category(),
                                            std::string(__name) + ": failed to launch: " + cudaGetErrorString(__e));
}

template <class _It, class _Fn>
_It for_each(par_nosync_t& __p, _It __first, _It __last, _Fn __f) {
  if (!__cudashim_capturing(__p)) return THRUST_NS_QUALIFIER::for_each(par_t(), __first, __last, __f);
  __cudashim_record(__p, [=] { THRUST_NS_QUALIFIER::for_each(par_t(), __first, __last, __f); }, "for_each");
  return __last;
}
template <class _It, class _Size, class _Fn>
_It for_each_n(par_nosync_t& __p, _It __first, _Size __n, _Fn __f) {
  if (!__cudashim_capturing(__p)) return THRUST_NS_QUALIFIER::for_each_n(par_t(), __first, __n, __f);
  __cudashim_record(__p, [=] { THRUST_NS_QUALIFIER::for_each_n(par_t(), __first, __n, __f); }, "for_each_n");
  return std::next(__first, __n);
}
template <class _In, class _Out, class _Op>
_Out transform(par_nosync_t& __p, _In __first, _In __last, _Out __result, _Op __op) {
  if (!__cudashim_capturing(__p)) return THRUST_NS_QUALIFIER::transform(par_t(), __first, __last, __result, __op);
  __cudashim_record(__p, [=] { THRUST_NS_QUALIFIER::transform(par_t(), __first, __last, __result, __op); }, "transform");
  return std::next(__result, std::distance(__first, __last));
}
template <class _In1, class _In2, class _Out, class _Op>
_Out transform(par_nosync_t& __p, _In1 __first1, _In1 __last1, _In2 __first2, _Out __result, _Op __op) {
  if (!__cudashim_capturing(__p))
    return THRUST_NS_QUALIFIER::transform(par_t(), __first1, __last1, __first2, __result, __op);
  __cudashim_record(
    __p, [=] { THRUST_NS_QUALIFIER::transform(par_t(), __first1, __last1, __first2, __result, __op); }, "transform");
  return std::next(__result, std::distance(__first1, __last1));
}
template <class _It, class _Tp>
void fill(par_nosync_t& __p, _It __first, _It __last, const _Tp& __value) {
  if (!__cudashim_capturing(__p)) return THRUST_NS_QUALIFIER::fill(par_t(), __first, __last, __value);
  __cudashim_record(__p, [=] { THRUST_NS_QUALIFIER::fill(par_t(), __first, __last, __value); }, "fill");
}
template <class _It, class _Size, class _Tp>
_It fill_n(par_nosync_t& __p, _It __first, _Size __n, const _Tp& __value) {
  if (!__cudashim_capturing(__p)) return THRUST_NS_QUALIFIER::fill_n(par_t(), __first, __n, __value);
  __cudashim_record(__p, [=] { THRUST_NS_QUALIFIER::fill_n(par_t(), __first, __n, __value); }, "fill_n");
  return std::next(__first, __n);
}
template <class _It>
void sequence(par_nosync_t& __p, _It __first, _It __last) {
  if (!__cudashim_capturing(__p)) return THRUST_NS_QUALIFIER::sequence(par_t(), __first, __last);
  __cudashim_record(__p, [=] { THRUST_NS_QUALIFIER::sequence(par_t(), __first, __last); }, "sequence");
}
template <class _It, class _Tp>
void sequence(par_nosync_t& __p, _It __first, _It __last, _Tp __init) {
  if (!__cudashim_capturing(__p)) return THRUST_NS_QUALIFIER::sequence(par_t(), __first, __last, __init);
  __cudashim_record(__p, [=] { THRUST_NS_QUALIFIER::sequence(par_t(), __first, __last, __init); }, "sequence");
}
template <class _It, class _Tp>
void sequence(par_nosync_t& __p, _It __first, _It __last, _Tp __init, _Tp __step) {
  if (!__cudashim_capturing(__p)) return THRUST_NS_QUALIFIER::sequence(par_t(), __first, __last, __init, __step);
  __cudashim_record(__p, [=] { THRUST_NS_QUALIFIER::sequence(par_t(), __first, __last, __init, __step); }, "sequence");
}
template <class _It, class _Op>
void tabulate(par_nosync_t& __p, _It __first, _It __last, _Op __op) {
  if (!__cudashim_capturing(__p)) return THRUST_NS_QUALIFIER::tabulate(par_t(), __first, __last, __op);
  __cudashim_record(__p, [=] { THRUST_NS_QUALIFIER::tabulate(par_t(), __first, __last, __op); }, "tabulate");
}
template <class _Map, class _In, class _Out>
_Out gather(par_nosync_t& __p, _Map __map_first, _Map __map_last, _In __input, _Out __result) {
  if (!__cudashim_capturing(__p)) return THRUST_NS_QUALIFIER::gather(par_t(), __map_first, __map_last, __input, __result);
  __cudashim_record(
    __p, [=] { THRUST_NS_QUALIFIER::gather(par_t(), __map_first, __map_last, __input, __result); }, "gather");
  return std::next(__result, std::distance(__map_first, __map_last));
}
template <class _In, class _Map, class _Out>
void scatter(par_nosync_t& __p, _In __first, _In __last, _Map __map, _Out __output) {
  if (!__cudashim_capturing(__p)) return THRUST_NS_QUALIFIER::scatter(par_t(), __first, __last, __map, __output);
  __cudashim_record(__p, [=] { THRUST_NS_QUALIFIER::scatter(par_t(), __first, __last, __map, __output); }, "scatter");
}

}  // namespace detail
}  // namespace cuda
}  // namespace system
THRUST_NAMESPACE_END
