// Calls of the cuBLAS subset; prints every result for tests/validators/test_cpu_libraries.py,
// which recomputes them with NumPy from the same inputs (fill(): exact multiples of 1/8).
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdio>
#include <string>
#include <vector>

static float fill_value(long long i, int seed) { return (float)((int)((i * 37 + seed * 101) % 23) - 11) / 8.0f; }

template <class T>
static T* dev(long long n, int seed) {
  std::vector<T> h(n);
  for (long long i = 0; i < n; ++i) h[i] = T(fill_value(i, seed));
  T* d;
  cudaMalloc(&d, n * sizeof(T));
  cudaMemcpy(d, h.data(), n * sizeof(T), cudaMemcpyHostToDevice);
  return d;
}

template <class T>
static void show(const char* name, const T* d, long long n) {
  std::vector<T> h(n);
  cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost);
  printf("%s", name);
  for (long long i = 0; i < n; ++i) printf(" %.17g", (double)(float)h[i]);
  printf("\n");
}
static void show(const char* name, const double* d, long long n) {
  std::vector<double> h(n);
  cudaMemcpy(h.data(), d, n * sizeof(double), cudaMemcpyDeviceToHost);
  printf("%s", name);
  for (long long i = 0; i < n; ++i) printf(" %.17g", h[i]);
  printf("\n");
}

template <class T, class Gemm>
static void batched(cublasHandle_t h, Gemm gemm, const char* name, T alpha, T beta) {
  T* As[2] = {dev<T>(3 * 2, 7), dev<T>(3 * 2, 8)};
  T* Bs[2] = {dev<T>(4 * 2, 9), dev<T>(4 * 2, 10)};
  T* Cs[2] = {dev<T>(3 * 4, 11), dev<T>(3 * 4, 12)};
  T **dA, **dB, **dC;
  cudaMalloc(&dA, sizeof As), cudaMalloc(&dB, sizeof Bs), cudaMalloc(&dC, sizeof Cs);
  cudaMemcpy(dA, As, sizeof As, cudaMemcpyHostToDevice);
  cudaMemcpy(dB, Bs, sizeof Bs, cudaMemcpyHostToDevice);
  cudaMemcpy(dC, Cs, sizeof Cs, cudaMemcpyHostToDevice);
  gemm(h, CUBLAS_OP_N, CUBLAS_OP_T, 3, 4, 2, &alpha, dA, 3, dB, 4, &beta, dC, 3, 2);
  for (int i = 0; i < 2; ++i) show((std::string(name) + char('0' + i)).c_str(), Cs[i], 12);
}

int main() {
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return 1;
  int version = 0;
  cublasGetVersion(h, &version);
  printf("version %d\n", version);
  const float alpha = 1.5f, beta = -0.5f;

  // gemm, all four transpose pairs, padded leading dimensions
  const int m = 7, n = 5, k = 6;
  const cublasOperation_t ops[2] = {CUBLAS_OP_N, CUBLAS_OP_T};
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      int lda = (ta ? k : m) + 3, ldb = (tb ? n : k) + 2, ldc = m + 1;
      float* A = dev<float>((long long)lda * (ta ? m : k), 1);
      float* B = dev<float>((long long)ldb * (tb ? k : n), 2);
      float* C = dev<float>((long long)ldc * n, 3);
      cublasStatus_t s = cublasSgemm(h, ops[ta], ops[tb], m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc);
      char name[32];
      snprintf(name, sizeof name, "sgemm_%c%c", ta ? 'T' : 'N', tb ? 'T' : 'N');
      if (s != CUBLAS_STATUS_SUCCESS) printf("%s failed %d\n", name, s);
      show(name, C, (long long)ldc * n);
      cudaFree(A), cudaFree(B), cudaFree(C);
    }
  {  // dgemm T,T
    const double da = 0.25, db = 2.0;
    double *A = dev<double>(6 * 7, 1), *B = dev<double>(5 * 6, 2), *C = dev<double>(7 * 5, 3);
    cublasDgemm(h, CUBLAS_OP_T, CUBLAS_OP_T, 7, 5, 6, &da, A, 6, B, 5, &db, C, 7);
    show("dgemm_TT", C, 7 * 5);
    cudaFree(A), cudaFree(B), cudaFree(C);
  }
  {  // strided batched: 3 problems (T, N), gaps between the matrices
    const int bm = 4, bn = 3, bk = 5, lda = 6, ldb = 5, ldc = 4;
    const long long sa = lda * bm + 7, sb = ldb * bn + 1, sc = ldc * bn + 2;
    float *A = dev<float>(sa * 3, 4), *B = dev<float>(sb * 3, 5), *C = dev<float>(sc * 3, 6);
    cublasSgemmStridedBatched(h, CUBLAS_OP_T, CUBLAS_OP_N, bm, bn, bk, &alpha, A, lda, sa, B, ldb, sb, &beta, C, ldc, sc, 3);
    show("sgemm_strided", C, sc * 3);
    cudaFree(A), cudaFree(B), cudaFree(C);
  }
  // batched through device arrays of pointers (N, T): 2 problems of 3x4x2, in float and in half
  // precision (HeCBench's blas-gemmBatched)
  batched<float>(h, cublasSgemmBatched, "sgemm_batched", alpha, beta);
  batched<__half>(h, cublasHgemmBatched, "hgemm_batched", __float2half(1.5f), __float2half(-0.5f));
  {  // GemmEx: half in, half out, fp32 compute; bfloat16 in, float out; the legacy cudaDataType overload
    const float one = 1.0f, zero = 0.0f;
    __half *A = dev<__half>(4 * 6, 1), *B = dev<__half>(6 * 3, 2), *C = dev<__half>(4 * 3, 3);
    cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 3, 6, &one, A, CUDA_R_16F, 4, B, CUDA_R_16F, 6, &zero, C, CUDA_R_16F, 4,
                 CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    show("gemmex_half", C, 12);
    __nv_bfloat16 *P = dev<__nv_bfloat16>(6 * 4, 1), *Q = dev<__nv_bfloat16>(6 * 3, 2);
    float* R = dev<float>(4 * 3, 3);
    cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, 4, 3, 6, &alpha, P, CUDA_R_16BF, 6, Q, CUDA_R_16BF, 6, &beta, R, CUDA_R_32F, 4,
                 CUBLAS_COMPUTE_32F_FAST_16BF, CUBLAS_GEMM_DEFAULT_TENSOR_OP);
    show("gemmex_bf16", R, 12);
    float *X = dev<float>(4 * 6, 1), *Y = dev<float>(6 * 3, 2), *Z = dev<float>(4 * 3, 3);
    cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 3, 6, &alpha, X, CUDA_R_32F, 4, Y, CUDA_R_32F, 6, &beta, Z, CUDA_R_32F, 4, CUDA_R_32F,
                 CUBLAS_GEMM_DEFAULT);
    show("gemmex_legacy", Z, 12);
  }
  {  // beta == 0: C is not read (NaN stays out of the result)
    float *A = dev<float>(3 * 2, 1), *B = dev<float>(2 * 2, 2), *C;
    cudaMalloc(&C, 6 * sizeof(float));
    std::vector<float> nan(6, __builtin_nanf(""));
    cudaMemcpy(C, nan.data(), 6 * sizeof(float), cudaMemcpyHostToDevice);
    const float zero = 0.0f;
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 3, 2, 2, &alpha, A, 3, B, 2, &zero, C, 3);
    show("sgemm_beta0", C, 6);
  }
  {  // gemv N (incx 2, incy -1) and T (incy 3)
    const float ga = 2.0f, gb = 0.5f;
    float *A = dev<float>(8 * 4, 1), *x = dev<float>(1 + 3 * 2, 2), *y = dev<float>(6, 3);
    cublasSgemv(h, CUBLAS_OP_N, 6, 4, &ga, A, 8, x, 2, &gb, y, -1);
    show("sgemv_N", y, 6);
    float *xt = dev<float>(6, 4), *yt = dev<float>(1 + 3 * 3, 5);
    cublasSgemv(h, CUBLAS_OP_T, 6, 4, &ga, A, 8, xt, 1, &gb, yt, 3);
    show("sgemv_T", yt, 10);
  }
  {  // geam: C = alpha A^T + beta B
    float *A = dev<float>(4 * 3, 1), *B = dev<float>(3 * 4, 2), *C = dev<float>(3 * 4, 3);
    cublasSgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, 3, 4, &alpha, A, 4, &beta, B, 3, C, 3);
    show("sgeam", C, 12);
  }
  // level 1 with strides, host pointer mode
  float *x = dev<float>(64, 1), *y = dev<float>(64, 2);
  float r = 0;
  cublasSdot(h, 10, x, 2, y, -3, &r);
  printf("sdot %.17g\n", r);
  double *xd = dev<double>(50, 3), *yd = dev<double>(50, 4), rd = 0;
  cublasDdot(h, 50, xd, 1, yd, 1, &rd);
  printf("ddot %.17g\n", rd);
  cublasSnrm2(h, 9, x, 3, &r);
  printf("snrm2 %.17g\n", r);
  cublasDnrm2(h, 50, xd, 1, &rd);
  printf("dnrm2 %.17g\n", rd);
  cublasSasum(h, 11, x, 2, &r);
  printf("sasum %.17g\n", r);
  int idx = -1;
  cublasIsamax(h, 11, x, 2, &idx);
  printf("isamax %d\n", idx);
  cublasIsamin(h, 11, x, 2, &idx);
  printf("isamin %d\n", idx);
  cublasIdamax(h, 50, xd, 1, &idx);
  printf("idamax %d\n", idx);
  {
    float* ya = dev<float>(8, 5);
    const float a = 0.75f;
    cublasSaxpy(h, 8, &a, x, 2, ya, -1);
    show("saxpy", ya, 8);
    float* xs = dev<float>(13, 6);
    const float s = -2.0f;
    cublasSscal(h, 5, &s, xs, 3);
    show("sscal", xs, 13);
    float* yc = dev<float>(11, 7);
    cublasScopy(h, 6, x, 1, yc, 2);
    show("scopy", yc, 11);
    float *p = dev<float>(4, 8), *q = dev<float>(7, 9);
    cublasSswap(h, 4, p, 1, q, -2);
    show("sswap_x", p, 4);
    show("sswap_y", q, 7);
  }
  // device pointer mode: results written through device pointers
  {
    cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE);
    cublasPointerMode_t mode;
    cublasGetPointerMode(h, &mode);
    float* dres;
    int* didx;
    cudaMalloc(&dres, 2 * sizeof(float));
    cudaMalloc(&didx, sizeof(int));
    cublasSnrm2(h, 40, x, 1, dres);
    cublasSdot(h, 40, x, 1, y, 1, dres + 1);
    cublasIsamax(h, 40, y, 1, didx);
    float hres[2];
    int hidx;
    cudaMemcpy(hres, dres, sizeof hres, cudaMemcpyDeviceToHost);
    cudaMemcpy(&hidx, didx, sizeof hidx, cudaMemcpyDeviceToHost);
    printf("device_mode %d %.17g %.17g %d\n", (int)mode, hres[0], hres[1], hidx);
    cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST);
  }
  {  // the *Ex level-1 calls with half and bfloat16 data
    __half *hx = dev<__half>(100, 1), *hy = dev<__half>(100, 2), hr;
    cublasDotEx(h, 100, hx, CUDA_R_16F, 1, hy, CUDA_R_16F, 1, &hr, CUDA_R_16F, CUDA_R_32F);
    printf("dotex_half %.17g\n", (double)(float)hr);
    __nv_bfloat16 *bx = dev<__nv_bfloat16>(100, 3), *by = dev<__nv_bfloat16>(100, 4);
    float fr;
    cublasDotEx(h, 50, bx, CUDA_R_16BF, 2, by, CUDA_R_16BF, 2, &fr, CUDA_R_32F, CUDA_R_32F);
    printf("dotex_bf16 %.17g\n", fr);
    cublasNrm2Ex(h, 100, hx, CUDA_R_16F, 1, &fr, CUDA_R_32F, CUDA_R_32F);
    printf("nrm2ex_half %.17g\n", fr);
    const float a = 0.5f;
    cublasAxpyEx(h, 100, &a, CUDA_R_32F, hx, CUDA_R_16F, 1, hy, CUDA_R_16F, 1, CUDA_R_32F);
    show("axpyex_half", hy, 100);
  }
  {  // SetMatrix / GetMatrix: strided copies
    std::vector<float> hA(5 * 2);
    for (int i = 0; i < 10; ++i) hA[i] = (float)i;
    float* dB = dev<float>(4 * 2, 0);
    cublasSetMatrix(3, 2, sizeof(float), hA.data(), 5, dB, 4);
    show("setmatrix", dB, 8);
    std::vector<float> back(6, -1.0f);
    cublasGetMatrix(3, 2, sizeof(float), dB, 4, back.data(), 3);
    printf("getmatrix");
    for (float v : back) printf(" %.17g", v);
    printf("\n");
    std::vector<float> hv(2, 0.0f);
    cublasGetVector(2, sizeof(float), dB, 4, hv.data(), 1);
    printf("getvector %.17g %.17g\n", hv[0], hv[1]);
  }
  {  // invalid arguments: CUBLAS_STATUS_INVALID_VALUE (7), memory untouched; no handle: NOT_INITIALIZED (1)
    float *A = dev<float>(64, 1), *B = dev<float>(64, 2), *C = dev<float>(64, 3);
    int st[7];
    st[0] = cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &alpha, A, 3, B, 4, &beta, C, 4);   // lda < m
    st[1] = cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, -1, 4, 4, &alpha, A, 4, B, 4, &beta, C, 4);  // m < 0
    st[2] = cublasSgemm(h, (cublasOperation_t)7, CUBLAS_OP_N, 4, 4, 4, &alpha, A, 4, B, 4, &beta, C, 4);
    st[3] = cublasSgemv(h, CUBLAS_OP_N, 4, 4, &alpha, A, 4, B, 0, &beta, C, 1);  // incx == 0
    st[4] = cublasSetMatrix(3, 2, 4, A, 0, B, 3);                                   // lda == 0
    st[5] = cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, 4, 4, 8, &alpha, A, 4, B, 8, &beta, C, 4);  // T: lda < k
    float rr;
    st[6] = cublasSdot(nullptr, 4, A, 1, B, 1, &rr);
    printf("invalid %d %d %d %d %d %d %d %s\n", st[0], st[1], st[2], st[3], st[4], st[5], st[6],
           cublasGetStatusName((cublasStatus_t)st[0]));
    show("untouched", C, 64);
  }
  cublasDestroy(h);
  return 0;
}
