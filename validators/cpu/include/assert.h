// cudashim: <assert.h> with CUDA's device-side semantics. In a kernel, a failed assert prints
// CUDA's message, stops the kernel and makes the next synchronising call return
// cudaErrorAssert (sticky), instead of aborting the process; in host code it is the C assert.
// No include guard: like the C header, it may be included again (after NDEBUG changes).
#include_next <assert.h>
#ifndef NDEBUG
#undef assert
#ifdef __cplusplus
namespace cudashim {
[[gnu::cold]] void assert_fail(const char* expr, const char* file, unsigned line, const char* func);
}
#define assert(expr) \
  (static_cast<bool>(expr) ? void(0) : ::cudashim::assert_fail(#expr, __FILE__, __LINE__, __PRETTY_FUNCTION__))
#endif
#endif
