// Stand-in for llm.c's dev/cuda/common.h (see ../README.md): only what permute-cuda uses.
#pragma once
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

template <class T>
__host__ __device__ T ceil_div(T dividend, T divisor) {
  return (dividend + divisor - 1) / divisor;
}

inline void cuda_check(cudaError_t error, const char* file, int line) {
  if (error != cudaSuccess) {
    std::printf("[CUDA ERROR] at file %s:%d:\n%s\n", file, line, cudaGetErrorString(error));
    std::exit(EXIT_FAILURE);
  }
}
#define cudaCheck(err) (cuda_check(err, __FILE__, __LINE__))

// Uniform in [-1, 1], from rand() so a run is reproducible.
inline float* make_random_float(size_t n) {
  float* out = static_cast<float*>(std::malloc(n * sizeof(float)));
  for (size_t i = 0; i < n; ++i) out[i] = (static_cast<float>(std::rand()) / RAND_MAX) * 2.0f - 1.0f;
  return out;
}

// Copies `n` device values back and checks them against the CPU result; any element outside
// the tolerance ends the program with a non-zero status, as in llm.c.
template <class D, class T>
void validate_result(D* device_result, const T* cpu_reference, const char* name, size_t n,
                     T tolerance = 1e-4) {
  D* got = static_cast<D*>(std::malloc(n * sizeof(D)));
  cudaCheck(cudaMemcpy(got, device_result, n * sizeof(D), cudaMemcpyDeviceToHost));
  const float rtol = 1.0f / 128.0f;  // llm.c also allows a bf16-sized relative error
  for (size_t i = 0; i < n; ++i) {
    const float ref = static_cast<float>(cpu_reference[i]);
    const float val = static_cast<float>(got[i]);
    if (!(std::fabs(ref - val) <= tolerance + std::fabs(ref) * rtol)) {
      std::printf("Mismatch of %s at %zu: CPU_ref: %f vs GPU: %f\n", name, i, ref, val);
      std::free(got);
      std::exit(EXIT_FAILURE);
    }
  }
  std::free(got);
}

// Mean milliseconds of `repeats` calls of `kernel(args...)`, timed with CUDA events.
template <class Kernel, class... Args>
float benchmark_kernel(int repeats, Kernel kernel, Args&&... args) {
  cudaEvent_t start, stop;
  cudaCheck(cudaEventCreate(&start));
  cudaCheck(cudaEventCreate(&stop));
  float total_ms = 0.0f;
  for (int i = 0; i < repeats; ++i) {
    cudaCheck(cudaEventRecord(start, nullptr));
    kernel(std::forward<Args>(args)...);
    cudaCheck(cudaEventRecord(stop, nullptr));
    cudaCheck(cudaEventSynchronize(stop));
    float ms = 0.0f;
    cudaCheck(cudaEventElapsedTime(&ms, start, stop));
    total_ms += ms;
  }
  cudaCheck(cudaEventDestroy(start));
  cudaCheck(cudaEventDestroy(stop));
  return repeats > 0 ? total_ms / repeats : 0.0f;
}
