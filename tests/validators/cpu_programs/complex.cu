// cuComplex arithmetic in a kernel: prints a, b and every operation's result, one pair per line.
#include <cstdio>
#include <cuComplex.h>
__global__ void ops(const cuFloatComplex* a, const cuFloatComplex* b, cuFloatComplex* out,
                    cuDoubleComplex* dout, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[6 * i + 0] = cuCaddf(a[i], b[i]);
  out[6 * i + 1] = cuCsubf(a[i], b[i]);
  out[6 * i + 2] = cuCmulf(a[i], b[i]);
  out[6 * i + 3] = cuCdivf(a[i], b[i]);
  out[6 * i + 4] = make_cuFloatComplex(cuCabsf(a[i]), cuCimagf(cuConjf(a[i])));
  out[6 * i + 5] = cuCfmaf(a[i], b[i], a[i]);
  dout[i] = cuCdiv(cuComplexFloatToDouble(a[i]), cuComplexFloatToDouble(b[i]));
}
int main() {
  const int n = 5;
  cuFloatComplex a[n] = {{1, 2}, {-3, 0.5f}, {1e20f, 1e20f}, {0, 1}, {2.5f, -4}};
  cuFloatComplex b[n] = {{3, -1}, {0.25f, 2}, {1e20f, -1e20f}, {1e-20f, 1e-20f}, {-1, -1}};
  cuFloatComplex *da, *db, *dout, out[6 * n];
  cuDoubleComplex *ddout, dres[n];
  cudaMalloc(&da, sizeof a); cudaMalloc(&db, sizeof b);
  cudaMalloc(&dout, sizeof out); cudaMalloc(&ddout, sizeof dres);
  cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice);
  cudaMemcpy(db, b, sizeof b, cudaMemcpyHostToDevice);
  ops<<<1, 32>>>(da, db, dout, ddout, n);
  cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost);
  cudaMemcpy(dres, ddout, sizeof dres, cudaMemcpyDeviceToHost);
  for (int i = 0; i < n; ++i) {
    printf("%.9g %.9g %.9g %.9g", a[i].x, a[i].y, b[i].x, b[i].y);
    for (int k = 0; k < 6; ++k) printf(" %.9g %.9g", cuCrealf(out[6 * i + k]), cuCimagf(out[6 * i + k]));
    printf(" %.17g %.17g\n", cuCreal(dres[i]), cuCimag(dres[i]));
  }
  return 0;
}
