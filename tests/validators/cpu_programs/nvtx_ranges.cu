// NVTX as real projects use it: C ranges and marks, an event attribute, a named category, a
// stream's name and the C++ scoped range. Without a profiler each is a no-op.
#include <cstdio>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCudaRt.h>
#include <nvtx3/nvtx3.hpp>

__global__ void iota(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = i;
}

int main() {
  const int n = 1000;
  nvtxRangePushA("setup");
  nvtxNameCategoryA(1, "kernels");
  int* d = nullptr;
  cudaMalloc(&d, n * sizeof(int));
  cudaStream_t s;
  cudaStreamCreate(&s);
  nvtxNameCudaStreamA(s, "work");
  nvtxRangePop();
  nvtxEventAttributes_t attr = {};
  attr.version = NVTX_VERSION;
  attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attr.message.ascii = "iota";
  nvtxRangeId_t id = nvtxRangeStartEx(&attr);
  {
    nvtx3::scoped_range r{"launch"};
    iota<<<(n + 255) / 256, 256, 0, s>>>(d, n);
  }
  nvtxRangeEnd(id);
  static int h[n];
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  nvtxMarkA("done");
  long sum = 0;
  for (int i = 0; i < n; i++) sum += h[i];
  std::printf("sum %ld\n", sum);
  return sum == (long)n * (n - 1) / 2 ? 0 : 1;
}
