// cuBLASLt matmuls through the CPU shim's subset (include/cublasLt.h), each checked here against
// a double-precision loop over the same inputs. Prints "<case> <worst error> <PASS|FAIL>", and
// "status <case> <code>" for the argument checks. Built with nvcc as it stands:
//   nvcc -o cublaslt_calls cublaslt_calls.cu -lcublasLt
#include <cublasLt.h>
#include <cuda_fp16.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#define CHECK(x)                                                    \
  do {                                                              \
    cublasStatus_t s_ = (x);                                        \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                              \
      printf("call %s failed: %s\n", #x, cublasLtGetStatusName(s_)); \
      return 1;                                                     \
    }                                                               \
  } while (0)

static double gelu(double x) { return 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }
static float value(int i, int salt) { return (float)(((i * 7 + salt * 13) % 17) - 8) / 8.0f; }

struct Mat {  // a stored matrix: rows x cols in column or row order, `batch` of them `stride` apart
  int rows, cols, ld, batch;
  long long stride;
  bool row_order;
  long long at(int b, int r, int c) const { return b * stride + (row_order ? (long long)r * ld + c : r + (long long)c * ld); }
  long long size() const { return (batch - 1) * stride + (long long)(row_order ? rows : cols) * ld; }
};

static cublasLtMatrixLayout_t layout(const Mat& m, cudaDataType t) {
  cublasLtMatrixLayout_t l;
  cublasLtMatrixLayoutCreate(&l, t, m.rows, m.cols, m.ld);
  int32_t order = m.row_order ? CUBLASLT_ORDER_ROW : CUBLASLT_ORDER_COL;
  cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_ORDER, &order, sizeof order);
  if (m.batch > 1) {
    cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &m.batch, sizeof m.batch);
    cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &m.stride, sizeof m.stride);
  }
  return l;
}

// D = epilogue(alpha op(A) op(B) + beta C + bias) in float, against the loop.
static int float_case(const char* name, cublasLtHandle_t h, bool ta, bool tb, Mat A, Mat B, Mat C, cublasLtEpilogue_t ep,
                      float alpha, float beta, bool device_scalars) {
  const int m = C.rows, n = C.cols, k = ta ? A.rows : A.cols, batch = C.batch;
  std::vector<float> a(A.size()), b(B.size()), c(C.size()), d(C.size()), bias(m * batch), aux(m * n * batch);
  for (size_t i = 0; i < a.size(); ++i) a[i] = value(i, 1);
  for (size_t i = 0; i < b.size(); ++i) b[i] = value(i, 2);
  for (size_t i = 0; i < c.size(); ++i) c[i] = value(i, 3);
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = value(i, 4);
  float *da, *db, *dc, *dd, *dbias, *daux, *dscal;
  cudaMalloc(&da, a.size() * 4); cudaMalloc(&db, b.size() * 4); cudaMalloc(&dc, c.size() * 4);
  cudaMalloc(&dd, d.size() * 4); cudaMalloc(&dbias, bias.size() * 4); cudaMalloc(&daux, aux.size() * 4);
  cudaMalloc(&dscal, 8);
  cudaMemcpy(da, a.data(), a.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), b.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(dc, c.data(), c.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(dbias, bias.data(), bias.size() * 4, cudaMemcpyHostToDevice);
  float scal[2] = {alpha, beta};
  cudaMemcpy(dscal, scal, 8, cudaMemcpyHostToDevice);
  cublasLtMatmulDescOpaque_t storage;  // a descriptor in the program's own storage
  cublasLtMatmulDesc_t op = &storage;
  CHECK(cublasLtMatmulDescInit(op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa));
  CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb));
  CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof ep));
  CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &dbias, sizeof dbias));
  int64_t bias_stride = m, aux_ld = m, aux_stride = (int64_t)m * n;
  CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &bias_stride, sizeof bias_stride));
  CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &daux, sizeof daux));
  CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &aux_ld, sizeof aux_ld));
  CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, &aux_stride, sizeof aux_stride));
  if (device_scalars) {
    cublasLtPointerMode_t pm = CUBLASLT_POINTER_MODE_DEVICE;
    CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_POINTER_MODE, &pm, sizeof pm));
  }
  cublasLtMatrixLayout_t la = layout(A, CUDA_R_32F), lb = layout(B, CUDA_R_32F), lc = layout(C, CUDA_R_32F);
  cublasLtMatmulPreference_t pref;
  CHECK(cublasLtMatmulPreferenceCreate(&pref));
  size_t ws = 4 << 20;
  CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
  cublasLtMatmulHeuristicResult_t heur;
  int found = 0;
  CHECK(cublasLtMatmulAlgoGetHeuristic(h, op, la, lb, lc, lc, pref, 1, &heur, &found));
  const void* pa = device_scalars ? (const void*)dscal : (const void*)&alpha;
  const void* pb = device_scalars ? (const void*)(dscal + 1) : (const void*)&beta;
  CHECK(cublasLtMatmul(h, op, pa, da, la, db, lb, pb, dc, lc, dd, lc, &heur.algo, nullptr, heur.workspaceSize, 0));
  cudaStreamSynchronize(0);
  cudaMemcpy(d.data(), dd, d.size() * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(aux.data(), daux, aux.size() * 4, cudaMemcpyDeviceToHost);
  double worst = 0;
  for (int bi = 0; bi < batch; ++bi)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        double s = 0;
        for (int l = 0; l < k; ++l)
          s += (double)a[ta ? A.at(bi, l, i) : A.at(bi, i, l)] * b[tb ? B.at(bi, j, l) : B.at(bi, l, j)];
        double v = alpha * s + beta * c[C.at(bi, i, j)];
        if (ep & 4) v += bias[bi * m + i];
        if (ep & 128) worst = fmax(worst, fabs(aux[bi * m * n + i + j * m] - v));
        if (ep & 2) v = v > 0 ? v : 0;
        if (ep & 32) v = gelu(v);
        worst = fmax(worst, fabs(d[C.at(bi, i, j)] - v));
      }
  printf("%s %.3g %s (algos %d)\n", name, worst, worst < 1e-4 ? "PASS" : "FAIL", found);
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la); cublasLtMatrixLayoutDestroy(lb); cublasLtMatrixLayoutDestroy(lc);
  cudaFree(da); cudaFree(db); cudaFree(dc); cudaFree(dd); cudaFree(dbias); cudaFree(daux); cudaFree(dscal);
  return 0;
}

// Half A, B and D with float compute and scale; C = D in place.
static int half_case(cublasLtHandle_t h) {
  const int m = 9, n = 6, k = 20;
  std::vector<__half> a(m * k), b(k * n), d(m * n);
  for (int i = 0; i < m * k; ++i) a[i] = __float2half(value(i, 5));
  for (int i = 0; i < k * n; ++i) b[i] = __float2half(value(i, 6));
  for (int i = 0; i < m * n; ++i) d[i] = __float2half(value(i, 7));
  std::vector<__half> d0 = d;
  __half *da, *db, *dd;
  cudaMalloc(&da, a.size() * 2); cudaMalloc(&db, b.size() * 2); cudaMalloc(&dd, d.size() * 2);
  cudaMemcpy(da, a.data(), a.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), b.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(dd, d.data(), d.size() * 2, cudaMemcpyHostToDevice);
  cublasLtMatmulDesc_t op;
  CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasLtMatrixLayout_t la, lb, ld;
  CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_16F, m, k, m));
  CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16F, k, n, k));
  CHECK(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16F, m, n, m));
  float alpha = 0.5f, beta = 2.0f;
  CHECK(cublasLtMatmul(h, op, &alpha, da, la, db, lb, &beta, dd, ld, dd, ld, nullptr, nullptr, 0, 0));
  cudaMemcpy(d.data(), dd, d.size() * 2, cudaMemcpyDeviceToHost);
  double worst = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double s = 0;
      for (int l = 0; l < k; ++l) s += (double)__half2float(a[i + l * m]) * __half2float(b[l + j * k]);
      const double v = alpha * s + beta * __half2float(d0[i + j * m]);
      worst = fmax(worst, fabs(__half2float(d[i + j * m]) - v) / fmax(1.0, fabs(v)));
    }
  printf("half_in_place %.3g %s\n", worst, worst < 2e-3 ? "PASS" : "FAIL");
  cublasLtMatrixLayoutDestroy(la); cublasLtMatrixLayoutDestroy(lb); cublasLtMatrixLayoutDestroy(ld);
  cublasLtMatmulDescDestroy(op);
  return 0;
}

// int8 A (transposed, as IMMA kernels take it) and B into int32 D: exact.
static int int8_case(cublasLtHandle_t h) {
  const int m = 8, n = 5, k = 33;
  std::vector<int8_t> a(k * m), b(k * n);
  std::vector<int32_t> d(m * n);
  for (int i = 0; i < k * m; ++i) a[i] = (int8_t)((i * 37) % 255 - 127);
  for (int i = 0; i < k * n; ++i) b[i] = (int8_t)((i * 53) % 255 - 127);
  int8_t *da, *db;
  int32_t* dd;
  cudaMalloc(&da, a.size()); cudaMalloc(&db, b.size()); cudaMalloc(&dd, d.size() * 4);
  cudaMemcpy(da, a.data(), a.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), b.size(), cudaMemcpyHostToDevice);
  cublasLtMatmulDesc_t op;
  CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32I, CUDA_R_32I));
  cublasOperation_t t = CUBLAS_OP_T;
  CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
  cublasLtMatrixLayout_t la, lb, ld;
  CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_8I, k, m, k));
  CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8I, k, n, k));
  CHECK(cublasLtMatrixLayoutCreate(&ld, CUDA_R_32I, m, n, m));
  int32_t alpha = 1, beta = 0;
  CHECK(cublasLtMatmul(h, op, &alpha, da, la, db, lb, &beta, dd, ld, dd, ld, nullptr, nullptr, 0, 0));
  cudaMemcpy(d.data(), dd, d.size() * 4, cudaMemcpyDeviceToHost);
  long long wrong = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      int32_t s = 0;
      for (int l = 0; l < k; ++l) s += (int32_t)a[l + i * k] * b[l + j * k];
      wrong += d[i + j * m] != s;
    }
  printf("int8 %lld %s\n", wrong, wrong == 0 ? "PASS" : "FAIL");
  cublasLtMatrixLayoutDestroy(la); cublasLtMatrixLayoutDestroy(lb); cublasLtMatrixLayoutDestroy(ld);
  cublasLtMatmulDescDestroy(op);
  return 0;
}

// Shapes that do not agree, and attribute buffers of the wrong size: refused, nothing written.
static int statuses(cublasLtHandle_t h) {
  cublasLtMatmulDesc_t op;
  CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  int8_t small = 1;
  printf("status attribute_size %d\n", (int)cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &small, 1));
  size_t written = 0;
  cublasLtMatmulDescGetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, nullptr, 0, &written);
  printf("status attribute_query %zu\n", written);
  cublasLtMatrixLayout_t la, lb, ld;
  CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, 4, 3, 4));
  CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, 5, 2, 5));  // k 5 against A's 3
  CHECK(cublasLtMatrixLayoutCreate(&ld, CUDA_R_32F, 4, 2, 4));
  float *x, alpha = 1, beta = 0;
  cudaMalloc(&x, 64 * 4);
  cudaMemset(x, 0, 64 * 4);
  printf("status shapes %d\n", (int)cublasLtMatmul(h, op, &alpha, x, la, x, lb, &beta, x, ld, x + 32, ld, nullptr, nullptr, 0, 0));
  cublasLtMatrixLayout_t bad;
  CHECK(cublasLtMatrixLayoutCreate(&bad, CUDA_R_32F, 4, 3, 2));  // ld below the rows
  printf("status leading_dimension %d\n",
         (int)cublasLtMatmul(h, op, &alpha, x, bad, x, lb, &beta, x, ld, x + 32, ld, nullptr, nullptr, 0, 0));
  float h32[32];
  cudaMemcpy(h32, x + 32, sizeof h32, cudaMemcpyDeviceToHost);
  int touched = 0;
  for (float v : h32) touched += v != 0;
  printf("status touched %d\n", touched);
  return 0;
}

int main(int argc, char** argv) {
  cublasLtHandle_t h;
  CHECK(cublasLtCreate(&h));
  const cublasLtEpilogue_t plain = CUBLASLT_EPILOGUE_DEFAULT;
  for (int i = 1; i < argc; ++i) {
    const char* c = argv[i];
    int r = 0;
    if (!strcmp(c, "col_nn"))
      r = float_case(c, h, false, false, {7, 5, 9, 1, 0, false}, {5, 6, 5, 1, 0, false}, {7, 6, 8, 1, 0, false}, plain, 1.25f, 0.5f, false);
    else if (!strcmp(c, "row_tn"))  // llm.c's forward: weight (OC x C) row order, transposed
      r = float_case(c, h, true, false, {5, 7, 7, 1, 0, true}, {5, 6, 6, 1, 0, true}, {7, 6, 6, 1, 0, true}, plain, 1.0f, 0.0f, false);
    else if (!strcmp(c, "mixed_nt"))
      r = float_case(c, h, false, true, {7, 5, 5, 1, 0, true}, {6, 5, 6, 1, 0, false}, {7, 6, 7, 1, 0, false}, plain, -0.75f, 1.0f, true);
    else if (!strcmp(c, "gelu_aux_bias"))
      r = float_case(c, h, true, false, {16, 12, 16, 1, 0, false}, {16, 10, 16, 1, 0, false}, {12, 10, 12, 1, 0, false},
                     CUBLASLT_EPILOGUE_GELU_AUX_BIAS, 0.5f, 0.0f, false);
    else if (!strcmp(c, "relu_bias_batched"))
      r = float_case(c, h, false, false, {6, 4, 6, 3, 30, false}, {4, 5, 4, 3, 24, false}, {6, 5, 6, 3, 40, false},
                     CUBLASLT_EPILOGUE_RELU_BIAS, 1.0f, 0.25f, false);
    else if (!strcmp(c, "half_in_place"))
      r = half_case(h);
    else if (!strcmp(c, "int8"))
      r = int8_case(h);
    else if (!strcmp(c, "statuses"))
      r = statuses(h);
    if (r) return r;
  }
  CHECK(cublasLtDestroy(h));
  return 0;
}
