// cub::Traits<T>::UnsignedBits / TwiddleIn / TwiddleOut (radix-select key twiddling, as in
// topk-cuda's topk_per_row_kernels.h). CCCL's cub/util_type.cuh has them; the shim's Traits only Max/Lowest.
#include <cstdio>
#include <cub/cub.cuh>
template <typename T>
__global__ void twiddle(const T *in, typename cub::Traits<T>::UnsignedBits *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    T key = in[i];
    auto bits = reinterpret_cast<typename cub::Traits<T>::UnsignedBits &>(key);
    out[i] = cub::Traits<T>::TwiddleIn(bits);
  }
}
int main() {
  const int n = 4;
  float h[n] = {-2.0f, -0.5f, 0.25f, 3.0f};
  unsigned hb[n];
  float *d; unsigned *db;
  cudaMalloc(&d, sizeof h); cudaMalloc(&db, sizeof hb);
  cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
  twiddle<<<1, 32>>>(d, db, n);
  cudaMemcpy(hb, db, sizeof hb, cudaMemcpyDeviceToHost);
  bool ok = hb[0] < hb[1] && hb[1] < hb[2] && hb[2] < hb[3];   // twiddled bits sort as the floats
  unsigned back = cub::Traits<float>::TwiddleOut(hb[2]);
  float f; memcpy(&f, &back, 4);
  printf("%s\n", ok && f == 0.25f ? "PASS" : "FAIL");
}
