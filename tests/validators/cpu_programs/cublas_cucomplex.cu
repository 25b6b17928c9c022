// cuComplex types reached through <cublas_v2.h> only (gels-cuda): NVIDIA's cublas_api.h includes
// "cuComplex.h" (so does cusparse.h); the shim's cublas_api.h/cusparse.h do not, and the failed
// build is reported as needs_gpu "cuComplex (not provided by the CPU shim)" although the shim has it.
#include <cstdio>
#include <cublas_v2.h>
__global__ void add(const cuComplex *a, const cuComplex *b, cuComplex *c) {
  c[threadIdx.x] = cuCaddf(a[threadIdx.x], b[threadIdx.x]);
}
int main() {
  cublasHandle_t h; cublasCreate(&h);
  cuComplex ha[4], hb[4], hc[4];
  for (int i = 0; i < 4; i++) { ha[i] = make_cuComplex(i, 1); hb[i] = make_cuComplex(1, i); }
  cuComplex *a, *b, *c;
  cudaMalloc(&a, sizeof ha); cudaMalloc(&b, sizeof hb); cudaMalloc(&c, sizeof hc);
  cudaMemcpy(a, ha, sizeof ha, cudaMemcpyHostToDevice);
  cudaMemcpy(b, hb, sizeof hb, cudaMemcpyHostToDevice);
  add<<<1, 4>>>(a, b, c);
  cudaMemcpy(hc, c, sizeof hc, cudaMemcpyDeviceToHost);
  cublasDestroy(h);
  printf("%s\n", cuCrealf(hc[3]) == 4 && cuCimagf(hc[3]) == 4 ? "PASS" : "FAIL");
}
