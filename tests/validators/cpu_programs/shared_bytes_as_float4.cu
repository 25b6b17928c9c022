// A byte __shared__ array carved into float4 (nbnxm-cuda main.cu: `__shared__ uint8_t localPtr[...]`,
// `Float4* sm_xq = reinterpret_cast<Float4*>(ptr)`). On a GPU the array sits at the start of the
// block's shared window (aligned); the shim's `static thread_local` uint8_t array has alignment 1,
// GCC stores float4 with movaps and the misaligned store raises #GP, reported as
// "invalid memory access (address (nil))".
#include <cstdio>
#include <cstdint>
__global__ void flag_kernel(int *o) { __shared__ uint8_t f; f = 1; __syncthreads(); o[0] = f; }
__global__ void k(const float4 *in, float *out) {
  __shared__ uint8_t buf[64 * sizeof(float4) + 4];
  float4 *s = reinterpret_cast<float4 *>(buf);
  s[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  float4 v = s[63 - threadIdx.x];
  out[threadIdx.x] = v.x + v.y + v.z + v.w;
}
int main() {
  float4 h[64]; float r[64];
  for (int i = 0; i < 64; i++) h[i] = make_float4(i, 0, 0, 0);
  float4 *d; float *o;
  cudaMalloc(&d, sizeof h); cudaMalloc(&o, sizeof r);
  cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
  k<<<1, 64>>>(d, o);
  cudaMemcpy(r, o, sizeof r, cudaMemcpyDeviceToHost);
  printf("%s\n", r[0] == 63.0f ? "PASS" : "FAIL");
}
