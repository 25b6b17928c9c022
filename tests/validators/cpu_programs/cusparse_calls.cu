// Calls of the cuSPARSE subset; prints every result for tests/validators/test_cpu_libraries.py,
// which recomputes them with NumPy from the same matrix (dense(): a known zero pattern).
#include <cusparse.h>
#include <cstdio>
#include <vector>

static float fill_value(long long i, int seed) { return (float)((int)((i * 37 + seed * 101) % 23) - 11) / 8.0f; }

// A column-major rows x cols matrix with leading dimension ld; zero where (3i + 5j) % 4 == 0.
static std::vector<float> dense(int rows, int cols, int ld) {
  std::vector<float> a((size_t)ld * cols, 9.0f);  // padding rows are nonzero: must not be counted
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i) a[i + j * ld] = (3 * i + 5 * j) % 4 == 0 ? 0.0f : fill_value(i + j * ld, 1);
  return a;
}

template <class T>
static T* dev(const std::vector<T>& h) {
  T* d;
  cudaMalloc(&d, h.size() * sizeof(T));
  cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice);
  return d;
}

template <class T>
static void show(const char* name, const T* d, long long n) {
  std::vector<T> h(n);
  cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost);
  printf("%s", name);
  for (long long i = 0; i < n; ++i) printf(" %.17g", (double)h[i]);
  printf("\n");
}

int main() {
  const int m = 5, n = 4, ld = 7;
  cusparseHandle_t h;
  cusparseMatDescr_t descr;
  if (cusparseCreate(&h) != CUSPARSE_STATUS_SUCCESS) return 1;
  cusparseCreateMatDescr(&descr);
  cusparseSetMatType(descr, CUSPARSE_MATRIX_TYPE_GENERAL);
  cusparseSetMatIndexBase(descr, CUSPARSE_INDEX_BASE_ONE);
  printf("base %d\n", (int)cusparseGetMatIndexBase(descr));
  cusparseSetMatIndexBase(descr, CUSPARSE_INDEX_BASE_ZERO);

  std::vector<float> a = dense(m, n, ld);
  float* da = dev(a);
  int *per, total = -1;
  cudaMalloc(&per, 8 * sizeof(int));
  cusparseSnnz(h, CUSPARSE_DIRECTION_ROW, m, n, descr, da, ld, per, &total);
  printf("nnz_total_row %d\n", total);
  show("nnz_row", per, m);
  cusparseSnnz(h, CUSPARSE_DIRECTION_COLUMN, m, n, descr, da, ld, per, &total);
  printf("nnz_total_col %d\n", total);
  show("nnz_col", per, n);
  std::vector<double> ad(a.begin(), a.end());
  double* dad = dev(ad);
  int* dtotal;  // the total through a device pointer, in device pointer mode
  cudaMalloc(&dtotal, sizeof(int));
  cusparseSetPointerMode(h, CUSPARSE_POINTER_MODE_DEVICE);
  cusparseDnnz(h, CUSPARSE_DIRECTION_ROW, m, n, descr, dad, ld, per, dtotal);
  cusparseSetPointerMode(h, CUSPARSE_POINTER_MODE_HOST);
  show("dnnz_total", dtotal, 1);
  printf("invalid %d %s\n", (int)cusparseSnnz(h, CUSPARSE_DIRECTION_ROW, m, n, descr, da, m - 1, per, &total),
         cusparseGetErrorName(cusparseSnnz(h, CUSPARSE_DIRECTION_ROW, -1, n, descr, da, ld, per, &total)));

  // CSR (int32 indices) built on the host from the dense matrix, as programs do
  std::vector<int> rowptr(m + 1, 0), cols;
  std::vector<float> vals;
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j)
      if (a[i + j * ld] != 0.0f) cols.push_back(j), vals.push_back(a[i + j * ld]);
    rowptr[i + 1] = (int)cols.size();
  }
  const int nnz = (int)vals.size();
  int *drow = dev(rowptr), *dcol = dev(cols);
  float* dval = dev(vals);
  std::vector<float> x(n), y(m), xt(m), yt(n);
  for (int i = 0; i < n; ++i) x[i] = fill_value(i, 2), yt[i] = fill_value(i, 5);
  for (int i = 0; i < m; ++i) y[i] = fill_value(i, 3), xt[i] = fill_value(i, 4);
  float *dx = dev(x), *dy = dev(y), *dxt = dev(xt), *dyt = dev(yt);
  cusparseSpMatDescr_t A;
  cusparseDnVecDescr_t X, Y, XT, YT;
  cusparseCreateCsr(&A, m, n, nnz, drow, dcol, dval, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F);
  cusparseCreateDnVec(&X, n, dx, CUDA_R_32F);
  cusparseCreateDnVec(&Y, m, dy, CUDA_R_32F);
  cusparseCreateDnVec(&XT, m, dxt, CUDA_R_32F);
  cusparseCreateDnVec(&YT, n, dyt, CUDA_R_32F);
  const float alpha = 2.0f, beta = 0.5f;
  size_t bytes = 1;
  cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, X, &beta, Y, CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, &bytes);
  void* buffer;
  cudaMalloc(&buffer, bytes);
  int s1 = cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, X, &beta, Y, CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, buffer);
  int s2 = cusparseSpMV(h, CUSPARSE_OPERATION_TRANSPOSE, &alpha, A, XT, &beta, YT, CUDA_R_32F, CUSPARSE_SPMV_CSR_ALG1, buffer);
  int s3 = cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, XT, &beta, Y, CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, buffer);
  printf("spmv_status %d %d %d\n", s1, s2, s3);  // the third has a wrong-sized x
  show("spmv", dy, m);
  show("spmv_t", dyt, n);
  int64_t rows, ncols, nz;
  cusparseSpMatGetSize(A, &rows, &ncols, &nz);
  printf("size %ld %ld %ld\n", (long)rows, (long)ncols, (long)nz);

  // COO, int64 indices, one-based, double values
  std::vector<int64_t> ci, cj;
  std::vector<double> cv;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      if (a[i + j * ld] != 0.0f) ci.push_back(i + 1), cj.push_back(j + 1), cv.push_back(a[i + j * ld]);
  int64_t *dci = dev(ci), *dcj = dev(cj);
  double* dcv = dev(cv);
  std::vector<double> xd(x.begin(), x.end()), yd(m, 0.0);
  double *dxd = dev(xd), *dyd = dev(yd);
  cusparseSpMatDescr_t B;
  cusparseDnVecDescr_t XD, YD;
  cusparseCreateCoo(&B, m, n, (int64_t)cv.size(), dci, dcj, dcv, CUSPARSE_INDEX_64I, CUSPARSE_INDEX_BASE_ONE, CUDA_R_64F);
  cusparseCreateDnVec(&XD, n, dxd, CUDA_R_64F);
  cusparseCreateDnVec(&YD, m, dyd, CUDA_R_64F);
  const double one = 1.0, zero = 0.0;
  cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, B, XD, &zero, YD, CUDA_R_64F, CUSPARSE_SPMV_COO_ALG1, nullptr);
  show("spmv_coo", dyd, m);

  // SpMM: CSR (m x n) times a column-major n x 3 (ld 6) into a row-major m x 3 (ld 3), beta 0 over NaN
  std::vector<float> bm(6 * 3), cm(m * 3, __builtin_nanf(""));
  for (int i = 0; i < 18; ++i) bm[i] = fill_value(i, 6);
  float *dbm = dev(bm), *dcm = dev(cm);
  cusparseDnMatDescr_t BM, CM;
  cusparseCreateDnMat(&BM, n, 3, 6, dbm, CUDA_R_32F, CUSPARSE_ORDER_COL);
  cusparseCreateDnMat(&CM, m, 3, 3, dcm, CUDA_R_32F, CUSPARSE_ORDER_ROW);
  const float fone = 1.0f, fzero = 0.0f;
  cusparseSpMM_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &fone, A, BM, &fzero, CM, CUDA_R_32F,
                          CUSPARSE_SPMM_ALG_DEFAULT, &bytes);
  cusparseSpMM(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &fone, A, BM, &fzero, CM, CUDA_R_32F,
               CUSPARSE_SPMM_ALG_DEFAULT, buffer);
  show("spmm", dcm, m * 3);

  cusparseDestroyDnMat(BM), cusparseDestroyDnMat(CM);
  cusparseDestroySpMat(A), cusparseDestroySpMat(B);
  cusparseDestroyDnVec(X), cusparseDestroyDnVec(Y), cusparseDestroyDnVec(XT), cusparseDestroyDnVec(YT);
  cusparseDestroyDnVec(XD), cusparseDestroyDnVec(YD);
  cusparseDestroyMatDescr(descr);
  cusparseDestroy(h);
  return 0;
}
