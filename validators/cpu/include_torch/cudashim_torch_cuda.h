// torch's CUDA C++ API over CPU tensors: the emulator's device memory is any host memory, so a
// CPU tensor's data_ptr() is what a kernel gets on a GPU. There is one device, index 0, one
// stream (everything runs synchronously in issue order, cudashim's model).
#pragma once
#include <c10/core/Device.h>
#include <c10/core/Stream.h>
#include <c10/util/Exception.h>
#include <optional>

// Accessors with `__restrict__` data pointers (the extension tutorial's
// `packed_accessor32<float, 2, torch::RestrictPtrTraits>`): torch declares the traits only for
// nvcc (`__CUDACC__`), and its headers are read here as a host compiler reads them.
#if __has_include(<torch/headeronly/core/TensorAccessor.h>)
namespace torch::headeronly {
template <typename T> struct RestrictPtrTraits { typedef T* __restrict__ PtrType; };
}  // namespace torch::headeronly
namespace at { using torch::headeronly::RestrictPtrTraits; }
#else
namespace at {
template <typename T> struct RestrictPtrTraits { typedef T* __restrict__ PtrType; };
}  // namespace at
#endif

namespace c10::cuda {
using DeviceIndex = c10::DeviceIndex;
class CUDAStream {
 public:
  CUDAStream() = default;
  explicit CUDAStream(cudaStream_t s) : _M_s(s) {}
  cudaStream_t stream() const { return _M_s; }
  operator cudaStream_t() const { return _M_s; }
  c10::DeviceIndex device_index() const { return 0; }
  c10::Device device() const { return c10::Device(c10::kCPU, 0); }
  int64_t id() const { return 0; }
  bool query() const { return true; }
  void synchronize() const { cudaStreamSynchronize(_M_s); }
  bool operator==(const CUDAStream& o) const { return _M_s == o._M_s; }
  bool operator!=(const CUDAStream& o) const { return _M_s != o._M_s; }
 private:
  cudaStream_t _M_s = nullptr;
};
inline CUDAStream getCurrentCUDAStream(c10::DeviceIndex = -1) { return CUDAStream(); }
inline CUDAStream getDefaultCUDAStream(c10::DeviceIndex = -1) { return CUDAStream(); }
inline CUDAStream getStreamFromPool(bool = false, c10::DeviceIndex = -1) { return CUDAStream(); }
inline CUDAStream getStreamFromPool(int, c10::DeviceIndex = -1) { return CUDAStream(); }
inline void setCurrentCUDAStream(CUDAStream) {}
inline c10::DeviceIndex current_device() { return 0; }
inline c10::DeviceIndex device_count() noexcept { return 1; }
inline void set_device(c10::DeviceIndex) {}
inline void device_synchronize() { cudaDeviceSynchronize(); }

// Guards: a no-op on the one device (any index: a CPU tensor's get_device() is -1).
struct CUDAGuard {
  CUDAGuard() = default;
  explicit CUDAGuard(c10::DeviceIndex) {}
  explicit CUDAGuard(c10::Device) {}
  CUDAGuard(const CUDAGuard&) = delete;
  void set_device(c10::Device) {}
  void reset_device(c10::Device) {}
  void set_index(c10::DeviceIndex) {}
  c10::Device original_device() const { return c10::Device(c10::kCPU, 0); }
  c10::Device current_device() const { return c10::Device(c10::kCPU, 0); }
};
struct OptionalCUDAGuard {
  OptionalCUDAGuard() = default;
  explicit OptionalCUDAGuard(std::optional<c10::Device>) {}
  explicit OptionalCUDAGuard(std::optional<c10::DeviceIndex>) {}
  explicit OptionalCUDAGuard(c10::Device) {}
  explicit OptionalCUDAGuard(c10::DeviceIndex) {}
  void set_device(c10::Device) {}
  void reset_device(c10::Device) {}
  void set_index(c10::DeviceIndex) {}
  void reset() {}
  std::optional<c10::Device> original_device() const { return c10::Device(c10::kCPU, 0); }
  std::optional<c10::Device> current_device() const { return c10::Device(c10::kCPU, 0); }
};
struct CUDAStreamGuard {
  explicit CUDAStreamGuard(CUDAStream) {}
  void reset_stream(CUDAStream) {}
  CUDAStream original_stream() const { return CUDAStream(); }
  CUDAStream current_stream() const { return CUDAStream(); }
};
struct OptionalCUDAStreamGuard {
  OptionalCUDAStreamGuard() = default;
  explicit OptionalCUDAStreamGuard(CUDAStream) {}
  explicit OptionalCUDAStreamGuard(std::optional<CUDAStream>) {}
  void reset_stream(CUDAStream) {}
  void reset() {}
};
}  // namespace c10::cuda

namespace at::cuda {
using c10::cuda::CUDAStream;
using c10::cuda::getCurrentCUDAStream;
using c10::cuda::getDefaultCUDAStream;
using c10::cuda::getStreamFromPool;
using c10::cuda::setCurrentCUDAStream;
using c10::cuda::CUDAGuard;
using c10::cuda::OptionalCUDAGuard;
using c10::cuda::CUDAStreamGuard;
using c10::cuda::OptionalCUDAStreamGuard;
using c10::cuda::device_count;
inline c10::DeviceIndex current_device() { return 0; }
inline void set_device(c10::DeviceIndex) {}
inline bool is_available() { return true; }
inline cudaDeviceProp* getDeviceProperties(c10::DeviceIndex = 0) {
  static cudaDeviceProp __p = [] { cudaDeviceProp __q{}; cudaGetDeviceProperties(&__q, 0); return __q; }();
  return &__p;
}
inline cudaDeviceProp* getCurrentDeviceProperties() { return getDeviceProperties(0); }
inline int warp_size() { return 32; }
template <typename _Tp> struct _Needs_gpu : std::false_type {};
// cuBLAS/cuDNN handles through torch reach NVIDIA's libraries: not emulated (needs_gpu).
template <typename _Tp = void>
inline void* getCurrentCUDABlasHandle() {
  static_assert(_Needs_gpu<_Tp>::value, "torch_cuda: cuBLAS handle through torch (at::cuda::getCurrentCUDABlasHandle) needs a GPU; CPU shim");
  return nullptr;
}
template <typename _Tp = void>
inline void* getCurrentCUDASparseHandle() {
  static_assert(_Needs_gpu<_Tp>::value, "torch_cuda: cuSPARSE handle through torch (at::cuda::getCurrentCUDASparseHandle) needs a GPU; CPU shim");
  return nullptr;
}
template <typename _Tp = void>
inline void* getCurrentCUDABlasLtHandle() {
  static_assert(_Needs_gpu<_Tp>::value, "torch_cuda: cuBLASLt handle through torch (at::cuda::getCurrentCUDABlasLtHandle) needs a GPU; CPU shim");
  return nullptr;
}
}  // namespace at::cuda

namespace at::native {
template <typename _Tp = void>
inline void* getCudnnHandle() {
  static_assert(at::cuda::_Needs_gpu<_Tp>::value, "torch_cuda: cuDNN handle through torch (at::native::getCudnnHandle) needs a GPU; CPU shim");
  return nullptr;
}
}  // namespace at::native

#define C10_CUDA_CHECK(_EXPR)                                                              \
  do {                                                                                     \
    const cudaError_t __cudashim_err = (_EXPR);                                            \
    TORCH_CHECK(__cudashim_err == cudaSuccess, "CUDA error: ", cudaGetErrorString(__cudashim_err)); \
  } while (0)
#define C10_CUDA_CHECK_WARN(_EXPR) ((void)(_EXPR))
#define C10_CUDA_KERNEL_LAUNCH_CHECK() C10_CUDA_CHECK(cudaGetLastError())
#define AT_CUDA_CHECK(_EXPR) C10_CUDA_CHECK(_EXPR)
#define CUDA_KERNEL_ASSERT(_C) assert(_C)

// A CPU tensor stands for a device tensor: is_cuda() holds for it, and the CUDA device type
// names the CPU one, so TensorOptions().device(torch::kCUDA) and x.to(at::kCUDA) allocate host
// memory the kernels use as device memory. Function-like, so only calls are renamed.
#define is_cuda() is_cpu()
#define kCUDA kCPU
