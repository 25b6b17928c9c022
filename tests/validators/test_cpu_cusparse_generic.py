"""cuSPARSE's generic API on the CPU shim: sparse vectors, conversions, triangular solves,
SpGEMM, SDDMM, strided batches and the legacy routines real programs pair with them
(include/cusparse.h, include/cudashim/cusparse_generic.h).

One program written as real ones are (HeCBench's sddmm-batch, spmm, spsm, bicgstab, the
CUDALibrarySamples they come from) calls the library through the real CPU backend and prints every
result; NumPy recomputes each one here from the same inputs (`fill`: exact multiples of 1/8).
The same program compiles with the real nvcc against the real cuSPARSE headers when they are
installed (the toolkit's, a pip `nvidia-cusparse` wheel's, or $CUSPARSE_INCLUDE_DIR).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from schemas import Program, Status
from validators.backends.cpu import CpuBackend
from validators.build_cache import BuildCache
from validators.cpu import toolchain
from validators.engine import run_program

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")

PROGRAM = r"""// cuSPARSE's generic API as real programs call it; every result printed as "name v1 v2 ...".
#include <cuda_runtime.h>
#include <cusparse.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK_CUDA(call)                                                          \
  do {                                                                            \
    cudaError_t e_ = (call);                                                      \
    if (e_ != cudaSuccess) {                                                      \
      printf("CUDA error %s at line %d\n", cudaGetErrorString(e_), __LINE__);     \
      return 1;                                                                   \
    }                                                                             \
  } while (0)
#define CHECK_CUSPARSE(call)                                                      \
  do {                                                                            \
    cusparseStatus_t s_ = (call);                                                 \
    if (s_ != CUSPARSE_STATUS_SUCCESS) {                                          \
      printf("cuSPARSE error %s at line %d\n", cusparseGetErrorString(s_), __LINE__); \
      return 1;                                                                   \
    }                                                                             \
  } while (0)

static double fill(long long i, int seed) { return (double)((int)((i * 37 + seed * 101) % 23) - 11) / 8.0; }

// Row-major rows x cols: fill(i * cols + j, seed) where (3i + 5j + seed) % 4 != 0 (thin: < 2),
// else 0.
static std::vector<double> dense(int rows, int cols, int seed, bool thin = false) {
  std::vector<double> a((size_t)rows * cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      const int p = (3 * i + 5 * j + seed) % 4;
      a[(size_t)i * cols + j] = (thin ? p < 2 : p != 0) ? fill((long long)i * cols + j, seed) : 0.0;
    }
  return a;
}
// A square matrix with 4 + i on its diagonal (a triangle of it is well conditioned).
static std::vector<double> square(int n, int seed) {
  std::vector<double> a = dense(n, n, seed);
  for (int i = 0; i < n; ++i) a[(size_t)i * n + i] = 4.0 + i;
  return a;
}

template <class I, class T>
struct HostCsr {
  std::vector<I> off, col;
  std::vector<T> val;
};
template <class I, class T>
static HostCsr<I, T> to_csr(const std::vector<double>& a, int rows, int cols, int base) {
  HostCsr<I, T> m;
  m.off.push_back((I)base);
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j)
      if (a[(size_t)i * cols + j] != 0.0) {
        m.col.push_back((I)(j + base));
        m.val.push_back((T)a[(size_t)i * cols + j]);
      }
    m.off.push_back((I)(m.col.size() + base));
  }
  return m;
}

template <class T>
static T* dev(const std::vector<T>& h) {
  T* d = nullptr;
  if (!h.empty()) {
    cudaMalloc((void**)&d, h.size() * sizeof(T));
    cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice);
  }
  return d;
}
template <class T>
static std::vector<T> host(const T* d, size_t n) {
  std::vector<T> h(n);
  if (n) cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost);
  return h;
}
template <class T>
static void show(const char* name, const std::vector<T>& v) {
  printf("%s", name);
  for (const T& x : v) printf(" %.17g", (double)x);
  printf("\n");
}
template <class T>
static std::vector<T> seq(size_t n, int seed) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = (T)fill((long long)i, seed);
  return v;
}

static int sparse_vectors(cusparseHandle_t h) {
  const int n = 10, nnz = 4;
  int64_t* idx64 = dev(std::vector<int64_t>{7, 1, 4, 9});
  int32_t* idx32 = dev(std::vector<int32_t>{8, 2, 5, 10});  // the same positions, base one
  cusparseSpVecDescr_t vx;
  cusparseDnVecDescr_t vy;

  // Axpby, float: y = 2 x + 0.5 y
  float* xf = dev(seq<float>(nnz, 1));
  float* yf = dev(seq<float>(n, 2));
  CHECK_CUSPARSE(cusparseCreateSpVec(&vx, n, nnz, idx64, xf, CUSPARSE_INDEX_64I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  CHECK_CUSPARSE(cusparseCreateDnVec(&vy, n, yf, CUDA_R_32F));
  float alpha = 2.0f, beta = 0.5f;
  CHECK_CUSPARSE(cusparseAxpby(h, &alpha, vx, &beta, vy));
  show("axpby_f", host(yf, n));
  int64_t size = 0, count = 0;
  void *pi = nullptr, *pv = nullptr;
  cusparseIndexType_t it;
  cusparseIndexBase_t ib;
  cudaDataType vt;
  CHECK_CUSPARSE(cusparseSpVecGet(vx, &size, &count, &pi, &pv, &it, &ib, &vt));
  printf("spvec_get %lld %lld %d %d %d %d\n", (long long)size, (long long)count, (int)it, (int)ib, (int)vt,
         pi == (void*)idx64 && pv == (void*)xf);
  CHECK_CUSPARSE(cusparseDestroySpVec(vx));
  CHECK_CUSPARSE(cusparseDestroyDnVec(vy));

  // Axpby, double, beta == 0: y (NaN) is not read
  double* xd = dev(seq<double>(nnz, 1));
  double* yd = dev(std::vector<double>(n, NAN));
  CHECK_CUSPARSE(cusparseCreateSpVec(&vx, n, nnz, idx32, xd, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ONE, CUDA_R_64F));
  CHECK_CUSPARSE(cusparseCreateDnVec(&vy, n, yd, CUDA_R_64F));
  double alpha_d = -1.5, beta_d = 0.0;
  CHECK_CUSPARSE(cusparseAxpby(h, &alpha_d, vx, &beta_d, vy));
  show("axpby_d_beta0", host(yd, n));

  // Gather: x = y[idx]; SpVV: x . y
  CHECK_CUDA(cudaMemcpy(yd, seq<double>(n, 3).data(), n * sizeof(double), cudaMemcpyHostToDevice));
  CHECK_CUSPARSE(cusparseGather(h, vy, vx));
  show("gather", host(xd, nnz));
  CHECK_CUDA(cudaMemcpy(xd, seq<double>(nnz, 4).data(), nnz * sizeof(double), cudaMemcpyHostToDevice));
  size_t bytes = 0;
  double dot = 0.0;
  CHECK_CUSPARSE(cusparseSpVV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, vx, vy, &dot, CUDA_R_64F, &bytes));
  void* buffer = nullptr;
  CHECK_CUDA(cudaMalloc(&buffer, bytes));
  CHECK_CUSPARSE(cusparseSpVV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, vx, vy, &dot, CUDA_R_64F, buffer));
  printf("spvv_d %.17g\n", dot);
  CHECK_CUSPARSE(cusparseDestroySpVec(vx));
  CHECK_CUSPARSE(cusparseDestroyDnVec(vy));

  // Scatter, then Rot, float; SpVV with its result in device memory
  CHECK_CUDA(cudaMemcpy(yf, seq<float>(n, 4).data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(xf, seq<float>(nnz, 1).data(), nnz * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUSPARSE(cusparseCreateSpVec(&vx, n, nnz, idx64, xf, CUSPARSE_INDEX_64I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  CHECK_CUSPARSE(cusparseCreateDnVec(&vy, n, yf, CUDA_R_32F));
  CHECK_CUSPARSE(cusparseScatter(h, vx, vy));
  show("scatter", host(yf, n));
  CHECK_CUDA(cudaMemcpy(yf, seq<float>(n, 2).data(), n * sizeof(float), cudaMemcpyHostToDevice));
  float c = 0.6f, s = 0.8f;
  CHECK_CUSPARSE(cusparseRot(h, &c, &s, vx, vy));
  show("rot_x", host(xf, nnz));
  show("rot_y", host(yf, n));
  float* dres;
  CHECK_CUDA(cudaMalloc((void**)&dres, sizeof(float)));
  CHECK_CUSPARSE(cusparseSetPointerMode(h, CUSPARSE_POINTER_MODE_DEVICE));
  CHECK_CUSPARSE(cusparseSpVV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, vx, vy, dres, CUDA_R_32F, buffer));
  CHECK_CUSPARSE(cusparseSetPointerMode(h, CUSPARSE_POINTER_MODE_HOST));
  show("spvv_f_dev", host(dres, 1));
  CHECK_CUSPARSE(cusparseDestroySpVec(vx));
  CHECK_CUSPARSE(cusparseDestroyDnVec(vy));
  cudaFree(buffer);
  cudaFree(dres);
  cudaFree(idx64);
  cudaFree(idx32);
  cudaFree(xf);
  cudaFree(yf);
  cudaFree(xd);
  cudaFree(yd);
  return 0;
}

static int conversions(cusparseHandle_t h) {
  const int m = 5, n = 4;
  void* buffer = nullptr;
  size_t bytes = 0;
  // SparseToDense: CSR (64-bit, base 0, float) into a row-major ld 6 matrix (its padding kept)
  {
    HostCsr<int64_t, float> a = to_csr<int64_t, float>(dense(m, n, 1), m, n, 0);
    int64_t *off = dev(a.off), *col = dev(a.col);
    float* val = dev(a.val);
    float* d = dev(std::vector<float>(m * 6, 7.0f));
    cusparseSpMatDescr_t sa;
    cusparseDnMatDescr_t db;
    CHECK_CUSPARSE(cusparseCreateCsr(&sa, m, n, (int64_t)a.val.size(), off, col, val, CUSPARSE_INDEX_64I, CUSPARSE_INDEX_64I,
                                     CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    CHECK_CUSPARSE(cusparseCreateDnMat(&db, m, n, 6, d, CUDA_R_32F, CUSPARSE_ORDER_ROW));
    CHECK_CUSPARSE(cusparseSparseToDense_bufferSize(h, sa, db, CUSPARSE_SPARSETODENSE_ALG_DEFAULT, &bytes));
    CHECK_CUDA(cudaMalloc(&buffer, bytes));
    CHECK_CUSPARSE(cusparseSparseToDense(h, sa, db, CUSPARSE_SPARSETODENSE_ALG_DEFAULT, buffer));
    show("s2d_csr", host(d, m * 6));
    CHECK_CUSPARSE(cusparseDestroySpMat(sa));
    CHECK_CUSPARSE(cusparseDestroyDnMat(db));
    cudaFree(buffer);
    cudaFree(off);
    cudaFree(col);
    cudaFree(val);
    cudaFree(d);
  }
  // SparseToDense: COO (32-bit, base 1, double) into a column-major matrix
  {
    std::vector<double> a = dense(m, n, 2);
    std::vector<int> rows, cols;
    std::vector<double> vals;
    for (int j = 0; j < n; ++j)  // column order: COO need not be sorted by row for SparseToDense
      for (int i = 0; i < m; ++i)
        if (a[i * n + j] != 0.0) {
          rows.push_back(i + 1);
          cols.push_back(j + 1);
          vals.push_back(a[i * n + j]);
        }
    int *r = dev(rows), *c = dev(cols);
    double* v = dev(vals);
    double* d = dev(std::vector<double>(m * n, 7.0));
    cusparseSpMatDescr_t sa;
    cusparseDnMatDescr_t db;
    CHECK_CUSPARSE(cusparseCreateCoo(&sa, m, n, (int64_t)vals.size(), r, c, v, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ONE, CUDA_R_64F));
    CHECK_CUSPARSE(cusparseCreateDnMat(&db, m, n, m, d, CUDA_R_64F, CUSPARSE_ORDER_COL));
    CHECK_CUSPARSE(cusparseSparseToDense(h, sa, db, CUSPARSE_SPARSETODENSE_ALG_DEFAULT, nullptr));
    show("s2d_coo", host(d, m * n));
    CHECK_CUSPARSE(cusparseDestroySpMat(sa));
    CHECK_CUSPARSE(cusparseDestroyDnMat(db));
    cudaFree(r);
    cudaFree(c);
    cudaFree(v);
    cudaFree(d);
  }
  // DenseToSparse: row-major float into CSR (64-bit), nnz unknown until the analysis
  {
    std::vector<double> a = dense(m, n, 2);
    float* d = dev(std::vector<float>(a.begin(), a.end()));
    int64_t *off, *col;
    float* val;
    CHECK_CUDA(cudaMalloc((void**)&off, (m + 1) * sizeof(int64_t)));
    cusparseDnMatDescr_t da;
    cusparseSpMatDescr_t sb;
    CHECK_CUSPARSE(cusparseCreateDnMat(&da, m, n, n, d, CUDA_R_32F, CUSPARSE_ORDER_ROW));
    CHECK_CUSPARSE(cusparseCreateCsr(&sb, m, n, 0, off, nullptr, nullptr, CUSPARSE_INDEX_64I, CUSPARSE_INDEX_64I, CUSPARSE_INDEX_BASE_ZERO,
                                     CUDA_R_32F));
    CHECK_CUSPARSE(cusparseDenseToSparse_bufferSize(h, da, sb, CUSPARSE_DENSETOSPARSE_ALG_DEFAULT, &bytes));
    CHECK_CUDA(cudaMalloc(&buffer, bytes));
    CHECK_CUSPARSE(cusparseDenseToSparse_analysis(h, da, sb, CUSPARSE_DENSETOSPARSE_ALG_DEFAULT, buffer));
    int64_t rows, cols, nnz;
    CHECK_CUSPARSE(cusparseSpMatGetSize(sb, &rows, &cols, &nnz));
    printf("d2s_size %lld %lld %lld\n", (long long)rows, (long long)cols, (long long)nnz);
    CHECK_CUDA(cudaMalloc((void**)&col, nnz * sizeof(int64_t)));
    CHECK_CUDA(cudaMalloc((void**)&val, nnz * sizeof(float)));
    CHECK_CUSPARSE(cusparseCsrSetPointers(sb, off, col, val));
    CHECK_CUSPARSE(cusparseDenseToSparse_convert(h, da, sb, CUSPARSE_DENSETOSPARSE_ALG_DEFAULT, buffer));
    show("d2s_csr_off", host(off, m + 1));
    show("d2s_csr_col", host(col, nnz));
    show("d2s_csr_val", host(val, nnz));
    // CsrGet sees the pointers set
    int64_t r2, c2, z2;
    void *p1, *p2, *p3;
    cusparseIndexType_t t1, t2;
    cusparseIndexBase_t b2;
    cudaDataType v2;
    CHECK_CUSPARSE(cusparseCsrGet(sb, &r2, &c2, &z2, &p1, &p2, &p3, &t1, &t2, &b2, &v2));
    printf("csr_get %lld %lld %lld %d %d %d %d %d\n", (long long)r2, (long long)c2, (long long)z2, p1 == (void*)off && p2 == (void*)col && p3 == (void*)val,
           (int)t1, (int)t2, (int)b2, (int)v2);
    CHECK_CUSPARSE(cusparseDestroySpMat(sb));
    CHECK_CUSPARSE(cusparseDestroyDnMat(da));
    cudaFree(buffer);
    cudaFree(off);
    cudaFree(col);
    cudaFree(val);
    cudaFree(d);
  }
  // DenseToSparse: column-major double (ld 7) into CSC (32-bit, base 1) and into COO
  {
    std::vector<double> a = dense(m, n, 3), cm(7 * n, 5.0);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) cm[i + j * 7] = a[i * n + j];
    double* d = dev(cm);
    cusparseDnMatDescr_t da;
    CHECK_CUSPARSE(cusparseCreateDnMat(&da, m, n, 7, d, CUDA_R_64F, CUSPARSE_ORDER_COL));
    int* off;
    CHECK_CUDA(cudaMalloc((void**)&off, (n + 1) * sizeof(int)));
    cusparseSpMatDescr_t sb;
    CHECK_CUSPARSE(cusparseCreateCsc(&sb, m, n, 0, off, nullptr, nullptr, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ONE,
                                     CUDA_R_64F));
    CHECK_CUSPARSE(cusparseDenseToSparse_analysis(h, da, sb, CUSPARSE_DENSETOSPARSE_ALG_DEFAULT, nullptr));
    int64_t rows, cols, nnz;
    CHECK_CUSPARSE(cusparseSpMatGetSize(sb, &rows, &cols, &nnz));
    int* ind;
    double* val;
    CHECK_CUDA(cudaMalloc((void**)&ind, nnz * sizeof(int)));
    CHECK_CUDA(cudaMalloc((void**)&val, nnz * sizeof(double)));
    CHECK_CUSPARSE(cusparseCscSetPointers(sb, off, ind, val));
    CHECK_CUSPARSE(cusparseDenseToSparse_convert(h, da, sb, CUSPARSE_DENSETOSPARSE_ALG_DEFAULT, nullptr));
    show("d2s_csc_off", host(off, n + 1));
    show("d2s_csc_row", host(ind, nnz));
    show("d2s_csc_val", host(val, nnz));
    CHECK_CUSPARSE(cusparseDestroySpMat(sb));
    int *r, *c;
    CHECK_CUDA(cudaMalloc((void**)&r, nnz * sizeof(int)));
    CHECK_CUDA(cudaMalloc((void**)&c, nnz * sizeof(int)));
    CHECK_CUSPARSE(cusparseCreateCoo(&sb, m, n, nnz, r, c, val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    CHECK_CUSPARSE(cusparseDenseToSparse_convert(h, da, sb, CUSPARSE_DENSETOSPARSE_ALG_DEFAULT, nullptr));
    show("d2s_coo_row", host(r, nnz));
    show("d2s_coo_col", host(c, nnz));
    show("d2s_coo_val", host(val, nnz));
    CHECK_CUSPARSE(cusparseDestroySpMat(sb));
    CHECK_CUSPARSE(cusparseDestroyDnMat(da));
    cudaFree(off);
    cudaFree(ind);
    cudaFree(val);
    cudaFree(r);
    cudaFree(c);
    cudaFree(d);
  }
  return 0;
}

// One SpSV solve of `a` (its attributes set) for x = fill(i, 5).
template <class T>
static int spsv(cusparseHandle_t h, const char* name, cusparseSpMatDescr_t a, int n, cusparseFillMode_t fill_mode,
                cusparseDiagType_t diag, cusparseOperation_t op, T alpha, cudaDataType type, const T* new_diag = nullptr) {
  CHECK_CUSPARSE(cusparseSpMatSetAttribute(a, CUSPARSE_SPMAT_FILL_MODE, &fill_mode, sizeof(fill_mode)));
  CHECK_CUSPARSE(cusparseSpMatSetAttribute(a, CUSPARSE_SPMAT_DIAG_TYPE, &diag, sizeof(diag)));
  T* x = dev(seq<T>(n, 5));
  T* y = dev(std::vector<T>(n, (T)0));
  cusparseDnVecDescr_t vx, vy;
  CHECK_CUSPARSE(cusparseCreateDnVec(&vx, n, x, type));
  CHECK_CUSPARSE(cusparseCreateDnVec(&vy, n, y, type));
  cusparseSpSVDescr_t descr;
  CHECK_CUSPARSE(cusparseSpSV_createDescr(&descr));
  size_t bytes = 0;
  CHECK_CUSPARSE(cusparseSpSV_bufferSize(h, op, &alpha, a, vx, vy, type, CUSPARSE_SPSV_ALG_DEFAULT, descr, &bytes));
  void* buffer = nullptr;
  CHECK_CUDA(cudaMalloc(&buffer, bytes));
  CHECK_CUSPARSE(cusparseSpSV_analysis(h, op, &alpha, a, vx, vy, type, CUSPARSE_SPSV_ALG_DEFAULT, descr, buffer));
  T* d = nullptr;
  if (new_diag) {
    d = dev(std::vector<T>(new_diag, new_diag + n));
    CHECK_CUSPARSE(cusparseSpSV_updateMatrix(h, descr, d, CUSPARSE_SPSV_UPDATE_DIAGONAL));
  }
  CHECK_CUSPARSE(cusparseSpSV_solve(h, op, &alpha, a, vx, vy, type, CUSPARSE_SPSV_ALG_DEFAULT, descr));
  show(name, host(y, n));
  CHECK_CUSPARSE(cusparseSpSV_destroyDescr(descr));
  CHECK_CUSPARSE(cusparseDestroyDnVec(vx));
  CHECK_CUSPARSE(cusparseDestroyDnVec(vy));
  cudaFree(buffer);
  cudaFree(x);
  cudaFree(y);
  cudaFree(d);
  return 0;
}

static int triangular(cusparseHandle_t h) {
  const int n = 6;
  std::vector<double> t = square(n, 3);
  HostCsr<int, double> a = to_csr<int, double>(t, n, n, 0);
  int *off = dev(a.off), *col = dev(a.col);
  double* val = dev(a.val);
  cusparseSpMatDescr_t sa;
  CHECK_CUSPARSE(cusparseCreateCsr(&sa, n, n, (int64_t)a.val.size(), off, col, val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                   CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  if (spsv<double>(h, "spsv_lower", sa, n, CUSPARSE_FILL_MODE_LOWER, CUSPARSE_DIAG_TYPE_NON_UNIT, CUSPARSE_OPERATION_NON_TRANSPOSE, 1.5,
                   CUDA_R_64F))
    return 1;
  if (spsv<double>(h, "spsv_upper_unit", sa, n, CUSPARSE_FILL_MODE_UPPER, CUSPARSE_DIAG_TYPE_UNIT, CUSPARSE_OPERATION_NON_TRANSPOSE, 1.0,
                   CUDA_R_64F))
    return 1;
  if (spsv<double>(h, "spsv_lower_t", sa, n, CUSPARSE_FILL_MODE_LOWER, CUSPARSE_DIAG_TYPE_NON_UNIT, CUSPARSE_OPERATION_TRANSPOSE, 1.0,
                   CUDA_R_64F))
    return 1;
  const double new_diag[n] = {2, 3, 4, 5, 6, 7};
  if (spsv<double>(h, "spsv_diag_update", sa, n, CUSPARSE_FILL_MODE_LOWER, CUSPARSE_DIAG_TYPE_NON_UNIT, CUSPARSE_OPERATION_NON_TRANSPOSE,
                   1.0, CUDA_R_64F, new_diag))
    return 1;
  cusparseFillMode_t f;
  cusparseDiagType_t g;
  CHECK_CUSPARSE(cusparseSpMatGetAttribute(sa, CUSPARSE_SPMAT_FILL_MODE, &f, sizeof(f)));
  CHECK_CUSPARSE(cusparseSpMatGetAttribute(sa, CUSPARSE_SPMAT_DIAG_TYPE, &g, sizeof(g)));
  printf("attributes %d %d\n", (int)f, (int)g);
  CHECK_CUSPARSE(cusparseDestroySpMat(sa));

  // float, COO with base 1: the upper triangle
  std::vector<int> rows, cols;
  std::vector<float> vals;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (t[i * n + j] != 0.0) {
        rows.push_back(i + 1);
        cols.push_back(j + 1);
        vals.push_back((float)t[i * n + j]);
      }
  int *r = dev(rows), *c = dev(cols);
  float* v = dev(vals);
  CHECK_CUSPARSE(cusparseCreateCoo(&sa, n, n, (int64_t)vals.size(), r, c, v, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ONE, CUDA_R_32F));
  if (spsv<float>(h, "spsv_coo_f", sa, n, CUSPARSE_FILL_MODE_UPPER, CUSPARSE_DIAG_TYPE_NON_UNIT, CUSPARSE_OPERATION_NON_TRANSPOSE, 2.0f,
                  CUDA_R_32F))
    return 1;
  CHECK_CUSPARSE(cusparseDestroySpMat(sa));

  // SpSM, float CSR: C = 2 L^-1 B (B and C row-major), then C = U^-1 B^T (B 3 x 6, column-major)
  HostCsr<int, float> af = to_csr<int, float>(t, n, n, 0);
  int *offf = dev(af.off), *colf = dev(af.col);
  float* valf = dev(af.val);
  CHECK_CUSPARSE(cusparseCreateCsr(&sa, n, n, (int64_t)af.val.size(), offf, colf, valf, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                   CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  const int nrhs = 3;
  float* b = dev(seq<float>(n * nrhs, 6));
  float* cm = dev(std::vector<float>(n * nrhs, 0.0f));
  for (int pass = 0; pass < 2; ++pass) {
    const bool trans_b = pass == 1;
    cusparseFillMode_t fm = trans_b ? CUSPARSE_FILL_MODE_UPPER : CUSPARSE_FILL_MODE_LOWER;
    cusparseDiagType_t dt = CUSPARSE_DIAG_TYPE_NON_UNIT;
    CHECK_CUSPARSE(cusparseSpMatSetAttribute(sa, CUSPARSE_SPMAT_FILL_MODE, &fm, sizeof(fm)));
    CHECK_CUSPARSE(cusparseSpMatSetAttribute(sa, CUSPARSE_SPMAT_DIAG_TYPE, &dt, sizeof(dt)));
    cusparseDnMatDescr_t mb, mc;
    if (trans_b) {
      CHECK_CUSPARSE(cusparseCreateDnMat(&mb, nrhs, n, nrhs, b, CUDA_R_32F, CUSPARSE_ORDER_COL));
      CHECK_CUSPARSE(cusparseCreateDnMat(&mc, n, nrhs, n, cm, CUDA_R_32F, CUSPARSE_ORDER_COL));
    } else {
      CHECK_CUSPARSE(cusparseCreateDnMat(&mb, n, nrhs, nrhs, b, CUDA_R_32F, CUSPARSE_ORDER_ROW));
      CHECK_CUSPARSE(cusparseCreateDnMat(&mc, n, nrhs, nrhs, cm, CUDA_R_32F, CUSPARSE_ORDER_ROW));
    }
    const cusparseOperation_t opb = trans_b ? CUSPARSE_OPERATION_TRANSPOSE : CUSPARSE_OPERATION_NON_TRANSPOSE;
    float alpha = trans_b ? 1.0f : 2.0f;
    cusparseSpSMDescr_t descr;
    CHECK_CUSPARSE(cusparseSpSM_createDescr(&descr));
    size_t bytes = 0;
    CHECK_CUSPARSE(cusparseSpSM_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, opb, &alpha, sa, mb, mc, CUDA_R_32F,
                                           CUSPARSE_SPSM_ALG_DEFAULT, descr, &bytes));
    void* buffer = nullptr;
    CHECK_CUDA(cudaMalloc(&buffer, bytes));
    CHECK_CUSPARSE(cusparseSpSM_analysis(h, CUSPARSE_OPERATION_NON_TRANSPOSE, opb, &alpha, sa, mb, mc, CUDA_R_32F,
                                         CUSPARSE_SPSM_ALG_DEFAULT, descr, buffer));
    CHECK_CUSPARSE(cusparseSpSM_solve(h, CUSPARSE_OPERATION_NON_TRANSPOSE, opb, &alpha, sa, mb, mc, CUDA_R_32F, CUSPARSE_SPSM_ALG_DEFAULT,
                                      descr));
    show(trans_b ? "spsm_bt" : "spsm", host(cm, n * nrhs));
    CHECK_CUSPARSE(cusparseSpSM_destroyDescr(descr));
    CHECK_CUSPARSE(cusparseDestroyDnMat(mb));
    CHECK_CUSPARSE(cusparseDestroyDnMat(mc));
    cudaFree(buffer);
  }
  CHECK_CUSPARSE(cusparseDestroySpMat(sa));
  cudaFree(off);
  cudaFree(col);
  cudaFree(val);
  cudaFree(offf);
  cudaFree(colf);
  cudaFree(valf);
  cudaFree(r);
  cudaFree(c);
  cudaFree(v);
  cudaFree(b);
  cudaFree(cm);
  return 0;
}

// C = alpha A B through workEstimation, compute, copy (the sample's two-call pattern).
template <class I, class T>
static int spgemm(cusparseHandle_t h, const char* name, cusparseIndexType_t itype, int base, T alpha, cudaDataType type) {
  const int m = 5, k = 4, n = 6;
  HostCsr<I, T> a = to_csr<I, T>(dense(m, k, 1, true), m, k, base), b = to_csr<I, T>(dense(k, n, 2, true), k, n, base);
  I *aoff = dev(a.off), *acol = dev(a.col), *boff = dev(b.off), *bcol = dev(b.col), *coff, *ccol;
  T *aval = dev(a.val), *bval = dev(b.val), *cval;
  CHECK_CUDA(cudaMalloc((void**)&coff, (m + 1) * sizeof(I)));
  const cusparseIndexBase_t ib = base ? CUSPARSE_INDEX_BASE_ONE : CUSPARSE_INDEX_BASE_ZERO;
  cusparseSpMatDescr_t ma, mb, mc;
  CHECK_CUSPARSE(cusparseCreateCsr(&ma, m, k, (int64_t)a.val.size(), aoff, acol, aval, itype, itype, ib, type));
  CHECK_CUSPARSE(cusparseCreateCsr(&mb, k, n, (int64_t)b.val.size(), boff, bcol, bval, itype, itype, ib, type));
  CHECK_CUSPARSE(cusparseCreateCsr(&mc, m, n, 0, nullptr, nullptr, nullptr, itype, itype, ib, type));
  const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
  T beta = 0;
  cusparseSpGEMMDescr_t descr;
  CHECK_CUSPARSE(cusparseSpGEMM_createDescr(&descr));
  size_t bytes1 = 0, bytes2 = 0;
  void *buffer1 = nullptr, *buffer2 = nullptr;
  CHECK_CUSPARSE(cusparseSpGEMM_workEstimation(h, op, op, &alpha, ma, mb, &beta, mc, type, CUSPARSE_SPGEMM_DEFAULT, descr, &bytes1, nullptr));
  CHECK_CUDA(cudaMalloc(&buffer1, bytes1));
  CHECK_CUSPARSE(cusparseSpGEMM_workEstimation(h, op, op, &alpha, ma, mb, &beta, mc, type, CUSPARSE_SPGEMM_DEFAULT, descr, &bytes1, buffer1));
  int64_t products = 0;
  CHECK_CUSPARSE(cusparseSpGEMM_getNumProducts(descr, &products));
  CHECK_CUSPARSE(cusparseSpGEMM_compute(h, op, op, &alpha, ma, mb, &beta, mc, type, CUSPARSE_SPGEMM_DEFAULT, descr, &bytes2, nullptr));
  CHECK_CUDA(cudaMalloc(&buffer2, bytes2));
  CHECK_CUSPARSE(cusparseSpGEMM_compute(h, op, op, &alpha, ma, mb, &beta, mc, type, CUSPARSE_SPGEMM_DEFAULT, descr, &bytes2, buffer2));
  int64_t rows, cols, nnz;
  CHECK_CUSPARSE(cusparseSpMatGetSize(mc, &rows, &cols, &nnz));
  CHECK_CUDA(cudaMalloc((void**)&ccol, nnz * sizeof(I)));
  CHECK_CUDA(cudaMalloc((void**)&cval, nnz * sizeof(T)));
  CHECK_CUSPARSE(cusparseCsrSetPointers(mc, coff, ccol, cval));
  CHECK_CUSPARSE(cusparseSpGEMM_copy(h, op, op, &alpha, ma, mb, &beta, mc, type, CUSPARSE_SPGEMM_DEFAULT, descr));
  printf("%s_size %lld %lld %lld %lld\n", name, (long long)rows, (long long)cols, (long long)nnz, (long long)products);
  char label[64];
  snprintf(label, sizeof label, "%s_off", name);
  show(label, host(coff, m + 1));
  snprintf(label, sizeof label, "%s_col", name);
  show(label, host(ccol, nnz));
  snprintf(label, sizeof label, "%s_val", name);
  show(label, host(cval, nnz));
  CHECK_CUSPARSE(cusparseSpGEMM_destroyDescr(descr));
  CHECK_CUSPARSE(cusparseDestroySpMat(ma));
  CHECK_CUSPARSE(cusparseDestroySpMat(mb));
  CHECK_CUSPARSE(cusparseDestroySpMat(mc));
  cudaFree(buffer1);
  cudaFree(buffer2);
  cudaFree(aoff);
  cudaFree(acol);
  cudaFree(aval);
  cudaFree(boff);
  cudaFree(bcol);
  cudaFree(bval);
  cudaFree(coff);
  cudaFree(ccol);
  cudaFree(cval);
  return 0;
}

// The structure-reuse API: C's pattern once, its values for A, then for 2 A with beta = 0.5.
static int spgemm_reuse(cusparseHandle_t h) {
  const int m = 5, k = 4, n = 6;
  HostCsr<int, double> a = to_csr<int, double>(dense(m, k, 1, true), m, k, 0), b = to_csr<int, double>(dense(k, n, 2, true), k, n, 0);
  int *aoff = dev(a.off), *acol = dev(a.col), *boff = dev(b.off), *bcol = dev(b.col), *coff, *ccol;
  double *aval = dev(a.val), *bval = dev(b.val), *cval;
  CHECK_CUDA(cudaMalloc((void**)&coff, (m + 1) * sizeof(int)));
  cusparseSpMatDescr_t ma, mb, mc;
  CHECK_CUSPARSE(cusparseCreateCsr(&ma, m, k, (int64_t)a.val.size(), aoff, acol, aval, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                   CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  CHECK_CUSPARSE(cusparseCreateCsr(&mb, k, n, (int64_t)b.val.size(), boff, bcol, bval, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                   CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  CHECK_CUSPARSE(cusparseCreateCsr(&mc, m, n, 0, coff, nullptr, nullptr, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                   CUDA_R_64F));
  const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
  const cusparseSpGEMMAlg_t alg = CUSPARSE_SPGEMM_DEFAULT;
  cusparseSpGEMMDescr_t descr;
  CHECK_CUSPARSE(cusparseSpGEMM_createDescr(&descr));
  size_t s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0;
  void *b1 = nullptr, *b2 = nullptr, *b3 = nullptr, *b4 = nullptr, *b5 = nullptr;
  CHECK_CUSPARSE(cusparseSpGEMMreuse_workEstimation(h, op, op, ma, mb, mc, alg, descr, &s1, nullptr));
  CHECK_CUDA(cudaMalloc(&b1, s1));
  CHECK_CUSPARSE(cusparseSpGEMMreuse_workEstimation(h, op, op, ma, mb, mc, alg, descr, &s1, b1));
  CHECK_CUSPARSE(cusparseSpGEMMreuse_nnz(h, op, op, ma, mb, mc, alg, descr, &s2, nullptr, &s3, nullptr, &s4, nullptr));
  CHECK_CUDA(cudaMalloc(&b2, s2));
  CHECK_CUDA(cudaMalloc(&b3, s3));
  CHECK_CUDA(cudaMalloc(&b4, s4));
  CHECK_CUSPARSE(cusparseSpGEMMreuse_nnz(h, op, op, ma, mb, mc, alg, descr, &s2, b2, &s3, b3, &s4, b4));
  int64_t rows, cols, nnz;
  CHECK_CUSPARSE(cusparseSpMatGetSize(mc, &rows, &cols, &nnz));
  CHECK_CUDA(cudaMalloc((void**)&ccol, nnz * sizeof(int)));
  CHECK_CUDA(cudaMalloc((void**)&cval, nnz * sizeof(double)));
  CHECK_CUSPARSE(cusparseCsrSetPointers(mc, coff, ccol, cval));
  CHECK_CUSPARSE(cusparseSpGEMMreuse_copy(h, op, op, ma, mb, mc, alg, descr, &s5, nullptr));
  CHECK_CUDA(cudaMalloc(&b5, s5));
  CHECK_CUSPARSE(cusparseSpGEMMreuse_copy(h, op, op, ma, mb, mc, alg, descr, &s5, b5));
  double alpha = 1.0, beta = 0.0;
  CHECK_CUSPARSE(cusparseSpGEMMreuse_compute(h, op, op, &alpha, ma, mb, &beta, mc, CUDA_R_64F, alg, descr));
  show("reuse_off", host(coff, m + 1));
  show("reuse_col", host(ccol, nnz));
  show("reuse_val1", host(cval, nnz));
  std::vector<double> twice(a.val);
  for (double& x : twice) x *= 2;
  CHECK_CUDA(cudaMemcpy(aval, twice.data(), twice.size() * sizeof(double), cudaMemcpyHostToDevice));
  beta = 0.5;
  CHECK_CUSPARSE(cusparseSpGEMMreuse_compute(h, op, op, &alpha, ma, mb, &beta, mc, CUDA_R_64F, alg, descr));
  show("reuse_val2", host(cval, nnz));
  CHECK_CUSPARSE(cusparseSpGEMM_destroyDescr(descr));
  CHECK_CUSPARSE(cusparseDestroySpMat(ma));
  CHECK_CUSPARSE(cusparseDestroySpMat(mb));
  CHECK_CUSPARSE(cusparseDestroySpMat(mc));
  for (void* p : {b1, b2, b3, b4, b5}) cudaFree(p);
  cudaFree(aoff);
  cudaFree(acol);
  cudaFree(aval);
  cudaFree(boff);
  cudaFree(bcol);
  cudaFree(bval);
  cudaFree(coff);
  cudaFree(ccol);
  cudaFree(cval);
  return 0;
}

// SDDMM over a strided batch of 2 (A and B row-major, C's pattern shared), then with op(A) = A^T.
static int sddmm(cusparseHandle_t h) {
  const int batches = 2, m = 4, k = 3, n = 5;
  HostCsr<int, float> pat = to_csr<int, float>(dense(m, n, 4), m, n, 0);
  const int nnz = (int)pat.val.size();
  std::vector<int> off, col;
  for (int i = 0; i < batches; ++i) {
    off.insert(off.end(), pat.off.begin(), pat.off.end());
    col.insert(col.end(), pat.col.begin(), pat.col.end());
  }
  int *doff = dev(off), *dcol = dev(col);
  float* dval = dev(seq<float>(batches * nnz, 9));
  float* da = dev(seq<float>(batches * m * k, 7));
  float* db = dev(seq<float>(batches * k * n, 8));
  cusparseDnMatDescr_t ma, mb;
  cusparseSpMatDescr_t mc;
  CHECK_CUSPARSE(cusparseCreateDnMat(&ma, m, k, k, da, CUDA_R_32F, CUSPARSE_ORDER_ROW));
  CHECK_CUSPARSE(cusparseDnMatSetStridedBatch(ma, batches, m * k));
  CHECK_CUSPARSE(cusparseCreateDnMat(&mb, k, n, n, db, CUDA_R_32F, CUSPARSE_ORDER_ROW));
  CHECK_CUSPARSE(cusparseDnMatSetStridedBatch(mb, batches, k * n));
  CHECK_CUSPARSE(cusparseCreateCsr(&mc, m, n, nnz, doff, dcol, dval, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                   CUDA_R_32F));
  CHECK_CUSPARSE(cusparseCsrSetStridedBatch(mc, batches, m + 1, nnz));
  int count = 0;
  int64_t stride = 0;
  CHECK_CUSPARSE(cusparseDnMatGetStridedBatch(mb, &count, &stride));
  int sp_count = 0;
  CHECK_CUSPARSE(cusparseSpMatGetStridedBatch(mc, &sp_count));
  printf("batches %d %lld %d\n", count, (long long)stride, sp_count);
  float alpha = 2.0f, beta = 0.5f;
  const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
  size_t bytes = 0;
  CHECK_CUSPARSE(cusparseSDDMM_bufferSize(h, op, op, &alpha, ma, mb, &beta, mc, CUDA_R_32F, CUSPARSE_SDDMM_ALG_DEFAULT, &bytes));
  void* buffer = nullptr;
  CHECK_CUDA(cudaMalloc(&buffer, bytes));
  CHECK_CUSPARSE(cusparseSDDMM_preprocess(h, op, op, &alpha, ma, mb, &beta, mc, CUDA_R_32F, CUSPARSE_SDDMM_ALG_DEFAULT, buffer));
  CHECK_CUSPARSE(cusparseSDDMM(h, op, op, &alpha, ma, mb, &beta, mc, CUDA_R_32F, CUSPARSE_SDDMM_ALG_DEFAULT, buffer));
  show("sddmm", host(dval, batches * nnz));
  CHECK_CUSPARSE(cusparseDestroyDnMat(ma));
  CHECK_CUSPARSE(cusparseDestroyDnMat(mb));
  CHECK_CUSPARSE(cusparseDestroySpMat(mc));

  // double: A stored k x m column-major, op(A) = A^T; B column-major; beta = 0
  double* ad = dev(seq<double>(k * m, 7));
  double* bd = dev(seq<double>(k * n, 8));
  double* cd = dev(std::vector<double>(nnz, NAN));
  CHECK_CUSPARSE(cusparseCreateDnMat(&ma, k, m, k, ad, CUDA_R_64F, CUSPARSE_ORDER_COL));
  CHECK_CUSPARSE(cusparseCreateDnMat(&mb, k, n, k, bd, CUDA_R_64F, CUSPARSE_ORDER_COL));
  CHECK_CUSPARSE(cusparseCreateCsr(&mc, m, n, nnz, doff, dcol, cd, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                   CUDA_R_64F));
  double alpha_d = 1.0, beta_d = 0.0;
  CHECK_CUSPARSE(cusparseSDDMM(h, CUSPARSE_OPERATION_TRANSPOSE, op, &alpha_d, ma, mb, &beta_d, mc, CUDA_R_64F, CUSPARSE_SDDMM_ALG_DEFAULT,
                               buffer));
  show("sddmm_t", host(cd, nnz));
  CHECK_CUSPARSE(cusparseDestroyDnMat(ma));
  CHECK_CUSPARSE(cusparseDestroyDnMat(mb));
  CHECK_CUSPARSE(cusparseDestroySpMat(mc));
  cudaFree(buffer);
  cudaFree(doff);
  cudaFree(dcol);
  cudaFree(dval);
  cudaFree(da);
  cudaFree(db);
  cudaFree(ad);
  cudaFree(bd);
  cudaFree(cd);
  return 0;
}

// SpMM with A shared by a strided batch of 2 column-major B and C: C = A B + 2 C.
static int spmm_batched(cusparseHandle_t h) {
  const int batches = 2, m = 5, k = 4, n = 3;
  HostCsr<int, float> a = to_csr<int, float>(dense(m, k, 1), m, k, 0);
  int *off = dev(a.off), *col = dev(a.col);
  float* val = dev(a.val);
  float* b = dev(seq<float>(batches * k * n, 10));
  float* c = dev(seq<float>(batches * m * n, 11));
  cusparseSpMatDescr_t ma;
  cusparseDnMatDescr_t mb, mc;
  CHECK_CUSPARSE(cusparseCreateCsr(&ma, m, k, (int64_t)a.val.size(), off, col, val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                   CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  CHECK_CUSPARSE(cusparseCreateDnMat(&mb, k, n, k, b, CUDA_R_32F, CUSPARSE_ORDER_COL));
  CHECK_CUSPARSE(cusparseDnMatSetStridedBatch(mb, batches, k * n));
  CHECK_CUSPARSE(cusparseCreateDnMat(&mc, m, n, m, c, CUDA_R_32F, CUSPARSE_ORDER_COL));
  CHECK_CUSPARSE(cusparseDnMatSetStridedBatch(mc, batches, m * n));
  float alpha = 1.0f, beta = 2.0f;
  size_t bytes = 0;
  CHECK_CUSPARSE(cusparseSpMM_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, ma, mb, &beta, mc,
                                         CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, &bytes));
  void* buffer = nullptr;
  CHECK_CUDA(cudaMalloc(&buffer, bytes));
  CHECK_CUSPARSE(cusparseSpMM(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, ma, mb, &beta, mc, CUDA_R_32F,
                              CUSPARSE_SPMM_ALG_DEFAULT, buffer));
  show("spmm_batched", host(c, batches * m * n));
  int64_t r, cc, ld;
  void* p;
  cudaDataType t;
  cusparseOrder_t o;
  CHECK_CUSPARSE(cusparseDnMatGet(mc, &r, &cc, &ld, &p, &t, &o));
  printf("dnmat_get %lld %lld %lld %d %d %d\n", (long long)r, (long long)cc, (long long)ld, p == (void*)c, (int)t, (int)o);
  CHECK_CUSPARSE(cusparseDestroySpMat(ma));
  CHECK_CUSPARSE(cusparseDestroyDnMat(mb));
  CHECK_CUSPARSE(cusparseDestroyDnMat(mc));
  cudaFree(buffer);
  cudaFree(off);
  cudaFree(col);
  cudaFree(val);
  cudaFree(b);
  cudaFree(c);
  return 0;
}

// ILU(0) of the square matrix (as the BiCGStab sample), and the zero pivot of one missing a diagonal.
static int ilu(cusparseHandle_t h) {
  const int n = 6;
  HostCsr<int, double> a = to_csr<int, double>(square(n, 3), n, n, 0);
  const int nnz = (int)a.val.size();
  int *off = dev(a.off), *col = dev(a.col);
  double* val = dev(a.val);
  cusparseMatDescr_t descr;
  CHECK_CUSPARSE(cusparseCreateMatDescr(&descr));
  CHECK_CUSPARSE(cusparseSetMatType(descr, CUSPARSE_MATRIX_TYPE_GENERAL));
  CHECK_CUSPARSE(cusparseSetMatIndexBase(descr, CUSPARSE_INDEX_BASE_ZERO));
  csrilu02Info_t info;
  CHECK_CUSPARSE(cusparseCreateCsrilu02Info(&info));
  int bytes = 0;
  CHECK_CUSPARSE(cusparseDcsrilu02_bufferSize(h, n, nnz, descr, val, off, col, info, &bytes));
  void* buffer = nullptr;
  CHECK_CUDA(cudaMalloc(&buffer, bytes));
  CHECK_CUSPARSE(cusparseDcsrilu02_analysis(h, n, nnz, descr, val, off, col, info, CUSPARSE_SOLVE_POLICY_USE_LEVEL, buffer));
  int structural = 0, numerical = 0;
  const cusparseStatus_t s1 = cusparseXcsrilu02_zeroPivot(h, info, &structural);
  CHECK_CUSPARSE(cusparseDcsrilu02(h, n, nnz, descr, val, off, col, info, CUSPARSE_SOLVE_POLICY_USE_LEVEL, buffer));
  const cusparseStatus_t s2 = cusparseXcsrilu02_zeroPivot(h, info, &numerical);
  printf("ilu_pivots %d %d %d %d\n", (int)s1, structural, (int)s2, numerical);
  show("ilu", host(val, nnz));
  CHECK_CUSPARSE(cusparseDestroyCsrilu02Info(info));
  cudaFree(off);
  cudaFree(col);
  cudaFree(val);

  // row 3 stores no diagonal; base 1: the position is 4
  std::vector<double> t = square(n, 3);
  t[3 * n + 3] = 0.0;
  HostCsr<int, float> b = to_csr<int, float>(t, n, n, 1);
  off = dev(b.off);
  col = dev(b.col);
  float* valf = dev(b.val);
  CHECK_CUSPARSE(cusparseSetMatIndexBase(descr, CUSPARSE_INDEX_BASE_ONE));
  CHECK_CUSPARSE(cusparseCreateCsrilu02Info(&info));
  CHECK_CUSPARSE(cusparseScsrilu02_analysis(h, n, (int)b.val.size(), descr, valf, off, col, info, CUSPARSE_SOLVE_POLICY_NO_LEVEL, buffer));
  int position = 0;
  const cusparseStatus_t s3 = cusparseXcsrilu02_zeroPivot(h, info, &position);
  printf("ilu_missing %d %d\n", (int)s3, position);
  CHECK_CUSPARSE(cusparseDestroyCsrilu02Info(info));
  CHECK_CUSPARSE(cusparseDestroyMatDescr(descr));
  cudaFree(buffer);
  cudaFree(off);
  cudaFree(col);
  cudaFree(valf);
  return 0;
}

// csrsort with a permutation then Gather (the spsort sample), coosortByRow, Csr2cscEx2.
static int sorts(cusparseHandle_t h) {
  const int m = 5, n = 4;
  HostCsr<int, float> a = to_csr<int, float>(dense(m, n, 1), m, n, 0);
  const int nnz = (int)a.val.size();
  HostCsr<int, float> rev = a;  // each row's entries reversed
  for (int i = 0; i < m; ++i)
    for (int e = a.off[i], f = a.off[i + 1] - 1; e <= f; ++e, --f) {
      std::swap(rev.col[e], rev.col[f]);
      std::swap(rev.val[e], rev.val[f]);
    }
  int *off = dev(rev.off), *col = dev(rev.col), *perm;
  float* val = dev(rev.val);
  float* sorted;
  CHECK_CUDA(cudaMalloc((void**)&perm, nnz * sizeof(int)));
  CHECK_CUDA(cudaMalloc((void**)&sorted, nnz * sizeof(float)));
  cusparseMatDescr_t descr;
  CHECK_CUSPARSE(cusparseCreateMatDescr(&descr));
  size_t bytes = 0;
  CHECK_CUSPARSE(cusparseXcsrsort_bufferSizeExt(h, m, n, nnz, off, col, &bytes));
  void* buffer = nullptr;
  CHECK_CUDA(cudaMalloc(&buffer, bytes));
  CHECK_CUSPARSE(cusparseCreateIdentityPermutation(h, nnz, perm));
  CHECK_CUSPARSE(cusparseXcsrsort(h, m, n, nnz, descr, off, col, perm, buffer));
  cusparseSpVecDescr_t vp;
  cusparseDnVecDescr_t vv;
  CHECK_CUSPARSE(cusparseCreateSpVec(&vp, nnz, nnz, perm, sorted, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  CHECK_CUSPARSE(cusparseCreateDnVec(&vv, nnz, val, CUDA_R_32F));
  CHECK_CUSPARSE(cusparseGather(h, vv, vp));
  show("csrsort_col", host(col, nnz));
  show("csrsort_val", host(sorted, nnz));
  CHECK_CUSPARSE(cusparseDestroySpVec(vp));
  CHECK_CUSPARSE(cusparseDestroyDnVec(vv));

  // COO in reverse order, sorted by row
  std::vector<int> rows, cols;
  for (int i = m - 1; i >= 0; --i)
    for (int e = a.off[i + 1] - 1; e >= a.off[i]; --e) {
      rows.push_back(i);
      cols.push_back(a.col[e]);
    }
  int *r = dev(rows), *c = dev(cols);
  CHECK_CUSPARSE(cusparseXcoosort_bufferSizeExt(h, m, n, nnz, r, c, &bytes));
  CHECK_CUSPARSE(cusparseCreateIdentityPermutation(h, nnz, perm));
  CHECK_CUSPARSE(cusparseXcoosortByRow(h, m, n, nnz, r, c, perm, buffer));
  show("coosort_row", host(r, nnz));
  show("coosort_col", host(c, nnz));
  show("coosort_perm", host(perm, nnz));

  // CSR -> CSC of the sorted matrix
  int *aoff = dev(a.off), *acol = dev(a.col), *coff, *crow;
  float *aval = dev(a.val), *cval;
  CHECK_CUDA(cudaMalloc((void**)&coff, (n + 1) * sizeof(int)));
  CHECK_CUDA(cudaMalloc((void**)&crow, nnz * sizeof(int)));
  CHECK_CUDA(cudaMalloc((void**)&cval, nnz * sizeof(float)));
  CHECK_CUSPARSE(cusparseCsr2cscEx2_bufferSize(h, m, n, nnz, aval, aoff, acol, cval, coff, crow, CUDA_R_32F, CUSPARSE_ACTION_NUMERIC,
                                               CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, &bytes));
  CHECK_CUSPARSE(cusparseCsr2cscEx2(h, m, n, nnz, aval, aoff, acol, cval, coff, crow, CUDA_R_32F, CUSPARSE_ACTION_NUMERIC,
                                    CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, buffer));
  show("csc_off", host(coff, n + 1));
  show("csc_row", host(crow, nnz));
  show("csc_val", host(cval, nnz));
  CHECK_CUSPARSE(cusparseDestroyMatDescr(descr));
  for (void* p : {(void*)off, (void*)col, (void*)perm, (void*)val, (void*)sorted, buffer, (void*)r, (void*)c, (void*)aoff, (void*)acol,
                  (void*)coff, (void*)crow, (void*)aval, (void*)cval})
    cudaFree(p);
  return 0;
}

// What the subset does not compute, and invalid arguments: printed as status codes.
static int statuses(cusparseHandle_t h) {
  const int m = 5, n = 4;
  HostCsr<int, float> a = to_csr<int, float>(dense(m, n, 1), m, n, 0);
  int *off = dev(a.off), *col = dev(a.col);
  float* val = dev(a.val);
  float* dn = dev(seq<float>(m * n, 2));
  const int nnz = (int)a.val.size();
  cusparseSpMatDescr_t csr, sq, coo;
  CHECK_CUSPARSE(cusparseCreateCsr(&csr, m, n, nnz, off, col, val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                   CUDA_R_32F));
  CHECK_CUSPARSE(cusparseCreateCsr(&sq, n, m, nnz, off, col, val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                   CUDA_R_32F));
  CHECK_CUSPARSE(cusparseCreateCoo(&coo, m, n, nnz, col, col, val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  cusparseDnMatDescr_t da, db, dc;
  CHECK_CUSPARSE(cusparseCreateDnMat(&da, m, 2, 2, dn, CUDA_R_32F, CUSPARSE_ORDER_ROW));
  CHECK_CUSPARSE(cusparseCreateDnMat(&db, 2, n, n, dn, CUDA_R_32F, CUSPARSE_ORDER_ROW));
  CHECK_CUSPARSE(cusparseCreateDnMat(&dc, m, n, n, dn, CUDA_R_32F, CUSPARSE_ORDER_ROW));
  cusparseDnVecDescr_t vx, vy;
  CHECK_CUSPARSE(cusparseCreateDnVec(&vx, n, dn, CUDA_R_32F));
  CHECK_CUSPARSE(cusparseCreateDnVec(&vy, m, dn, CUDA_R_32F));
  float one = 1.0f, zero = 0.0f;
  size_t bytes = 0;
  cusparseSpGEMMDescr_t gd;
  CHECK_CUSPARSE(cusparseSpGEMM_createDescr(&gd));
  cusparseSpSVDescr_t sd;
  CHECK_CUSPARSE(cusparseSpSV_createDescr(&sd));
  printf("status");
  // SpGEMM with a transposed operand
  printf(" %d", (int)cusparseSpGEMM_workEstimation(h, CUSPARSE_OPERATION_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, sq, csr, &zero,
                                                   csr, CUDA_R_32F, CUSPARSE_SPGEMM_DEFAULT, gd, &bytes, nullptr));
  // SDDMM into COO
  printf(" %d", (int)cusparseSDDMM(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, da, db, &zero, coo,
                                   CUDA_R_32F, CUSPARSE_SDDMM_ALG_DEFAULT, nullptr));
  // SpMV on a batch
  CHECK_CUSPARSE(cusparseCsrSetStridedBatch(sq, 2, 0, 0));
  printf(" %d", (int)cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, sq, vy, &zero, vx, CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT,
                                  nullptr));
  // SpSV of a matrix that is not square
  printf(" %d", (int)cusparseSpSV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, csr, vx, vy, CUDA_R_32F, CUSPARSE_SPSV_ALG_DEFAULT,
                                             sd, &bytes));
  // an attribute of the wrong size
  cusparseFillMode_t fm = CUSPARSE_FILL_MODE_UPPER;
  printf(" %d", (int)cusparseSpMatSetAttribute(csr, CUSPARSE_SPMAT_FILL_MODE, &fm, 1));
  // DenseToSparse into a matrix whose nnz is not the count
  printf(" %d", (int)cusparseDenseToSparse_convert(h, dc, csr, CUSPARSE_DENSETOSPARSE_ALG_DEFAULT, nullptr));
  // a solve without its analysis
  cusparseSpMatDescr_t sq2;
  CHECK_CUSPARSE(cusparseCreateCsr(&sq2, n, n, 0, off, col, val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                   CUDA_R_32F));
  printf(" %d", (int)cusparseSpSV_solve(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, sq2, vx, vx, CUDA_R_32F, CUSPARSE_SPSV_ALG_DEFAULT, sd));
  printf("\n");
  show("untouched", host(dn, m * n));
  CHECK_CUSPARSE(cusparseSpGEMM_destroyDescr(gd));
  CHECK_CUSPARSE(cusparseSpSV_destroyDescr(sd));
  for (cusparseSpMatDescr_t d : {csr, sq, coo, sq2}) CHECK_CUSPARSE(cusparseDestroySpMat(d));
  for (cusparseDnMatDescr_t d : {da, db, dc}) CHECK_CUSPARSE(cusparseDestroyDnMat(d));
  CHECK_CUSPARSE(cusparseDestroyDnVec(vx));
  CHECK_CUSPARSE(cusparseDestroyDnVec(vy));
  cudaFree(off);
  cudaFree(col);
  cudaFree(val);
  cudaFree(dn);
  return 0;
}

int main() {
  cusparseHandle_t h = nullptr;
  CHECK_CUSPARSE(cusparseCreate(&h));
  if (sparse_vectors(h) || conversions(h) || triangular(h)) return 1;
  if (spgemm<int, float>(h, "spgemm_f", CUSPARSE_INDEX_32I, 0, 2.0f, CUDA_R_32F)) return 1;
  if (spgemm<int64_t, double>(h, "spgemm_d", CUSPARSE_INDEX_64I, 1, 1.0, CUDA_R_64F)) return 1;
  if (spgemm_reuse(h) || sddmm(h) || spmm_batched(h) || ilu(h) || sorts(h) || statuses(h)) return 1;
  CHECK_CUSPARSE(cusparseDestroy(h));
  printf("done\n");
  return 0;
}
"""


@pytest.fixture(scope="module")
def backend(tmp_path_factory) -> CpuBackend:
    return CpuBackend(cache=BuildCache(tmp_path_factory.mktemp("builds")))


@pytest.fixture(scope="module")
def out(backend) -> dict[str, list[str]]:
    res = run_program(Program(source=PROGRAM), backend)
    assert res.status == Status.PASSED, (res.reason, res.compile.diagnostics[-3000:])
    assert res.outcome.stdout.rstrip().endswith("done"), res.outcome.stdout[-2000:]
    parsed = {}
    for line in res.outcome.stdout.splitlines():
        name, *values = line.split()
        parsed[name] = values
    return parsed


# --- the program's inputs -------------------------------------------------------------------


def fill(n: int, seed: int) -> np.ndarray:
    i = np.arange(n, dtype=np.int64)
    return (((i * 37 + seed * 101) % 23) - 11) / 8.0


def dense(rows: int, cols: int, seed: int, thin: bool = False) -> np.ndarray:
    i, j = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    p = (3 * i + 5 * j + seed) % 4
    return np.where(p < 2 if thin else p != 0, fill(rows * cols, seed).reshape(rows, cols), 0.0)


def square(n: int, seed: int) -> np.ndarray:
    a = dense(n, n, seed)
    np.fill_diagonal(a, 4.0 + np.arange(n))
    return a


def csr(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Offsets, columns (sorted in each row) and values of a's nonzeros."""
    rows, cols = np.nonzero(a)
    off = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=a.shape[0]))])
    return off, cols, a[rows, cols]


def values(out: dict[str, list[str]], name: str) -> np.ndarray:
    return np.array([float(v) for v in out[name]])


def close(out, name, expected, rtol=1e-12, atol=1e-12):
    got = values(out, name)
    want = np.asarray(expected, dtype=np.float64).ravel()
    assert got.shape == want.shape, (name, got, want)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=name)


def exact(out, name, expected):
    close(out, name, expected, rtol=0, atol=0)


F32 = {"rtol": 1e-6, "atol": 1e-6}  # float results: computed in double, rounded once


# --- sparse vectors -------------------------------------------------------------------------

IDX = np.array([7, 1, 4, 9])


def test_axpby_gather_scatter_rot_and_spvv(out):
    x, y = fill(4, 1), fill(10, 2)
    want = 0.5 * y
    want[IDX] += 2 * x
    close(out, "axpby_f", want, **F32)
    assert out["spvec_get"] == ["10", "4", "3", "0", "0", "1"]  # 64I, base 0, CUDA_R_32F, same pointers
    want = np.zeros(10)  # beta == 0: y (NaN) is not read; base-1 32-bit indices
    want[IDX] = -1.5 * x
    exact(out, "axpby_d_beta0", want)
    exact(out, "gather", fill(10, 3)[IDX])
    close(out, "spvv_d", [fill(4, 4) @ fill(10, 3)[IDX]])
    want = fill(10, 4)
    want[IDX] = x
    exact(out, "scatter", want)
    c, s = float(np.float32(0.6)), float(np.float32(0.8))
    close(out, "rot_x", c * x + s * y[IDX], **F32)
    want = y.copy()
    want[IDX] = c * y[IDX] - s * x
    close(out, "rot_y", want, **F32)
    # device pointer mode: the result written to device memory
    close(out, "spvv_f_dev", [values(out, "rot_x") @ values(out, "rot_y")[IDX]], **F32)


# --- conversions ----------------------------------------------------------------------------


def test_sparse_to_dense_writes_every_element_of_either_order(out):
    want = np.full((5, 6), 7.0)  # row-major, ld 6: the padding columns untouched
    want[:, :4] = dense(5, 4, 1)
    exact(out, "s2d_csr", want)
    exact(out, "s2d_coo", dense(5, 4, 2).ravel(order="F"))  # COO base 1 into column-major


def test_dense_to_sparse_csr_csc_and_coo(out):
    a = dense(5, 4, 2)
    off, col, val = csr(a)
    assert out["d2s_size"] == ["5", "4", str(len(val))]
    exact(out, "d2s_csr_off", off)
    exact(out, "d2s_csr_col", col)
    exact(out, "d2s_csr_val", val)
    assert out["csr_get"] == ["5", "4", str(len(val)), "1", "3", "3", "0", "0"]
    b = dense(5, 4, 3)  # column-major with ld 7 (padding 5.0 not counted); CSC base 1
    coff, crow, cval = csr(b.T)
    exact(out, "d2s_csc_off", coff + 1)
    exact(out, "d2s_csc_row", crow + 1)
    exact(out, "d2s_csc_val", cval)
    rows, cols = np.nonzero(b)
    exact(out, "d2s_coo_row", rows)
    exact(out, "d2s_coo_col", cols)
    exact(out, "d2s_coo_val", b[rows, cols])


# --- triangular solves ----------------------------------------------------------------------


def test_spsv_reads_the_triangle_its_attributes_name(out):
    t, x = square(6, 3), fill(6, 5)
    close(out, "spsv_lower", np.linalg.solve(np.tril(t), 1.5 * x))
    close(out, "spsv_upper_unit", np.linalg.solve(np.triu(t, 1) + np.eye(6), x))
    close(out, "spsv_lower_t", np.linalg.solve(np.tril(t).T, x))
    close(out, "spsv_diag_update", np.linalg.solve(np.tril(t, -1) + np.diag(2.0 + np.arange(6)), x))
    assert out["attributes"] == ["0", "0"]  # lower, non-unit: the last set
    close(out, "spsv_coo_f", np.linalg.solve(np.triu(t), 2 * x), **F32)


def test_spsm_solves_each_column_with_op_b(out):
    t, b = square(6, 3), fill(18, 6).reshape(6, 3)
    close(out, "spsm", np.linalg.solve(np.tril(t), 2 * b), **F32)  # row-major B and C
    # B is 3 x 6 column-major (ld 3): op(B) = B^T is the same buffer read as 6 x 3 row-major
    close(out, "spsm_bt", np.linalg.solve(np.triu(t), b).ravel(order="F"), **F32)


# --- SpGEMM ---------------------------------------------------------------------------------


def _product():
    a, b = dense(5, 4, 1, thin=True), dense(4, 6, 2, thin=True)
    pattern = (a != 0).astype(int) @ (b != 0).astype(int) > 0
    rows, cols = np.nonzero(pattern)
    off = np.concatenate([[0], np.cumsum(pattern.sum(axis=1))])
    products = int((a != 0).sum(axis=0) @ (b != 0).sum(axis=1))
    return a @ b, rows, cols, off, products


def test_spgemm_gives_every_structural_product_with_sorted_columns(out):
    c, rows, cols, off, products = _product()
    assert out["spgemm_f_size"] == ["5", "6", str(len(rows)), str(products)]
    exact(out, "spgemm_f_off", off)
    exact(out, "spgemm_f_col", cols)
    close(out, "spgemm_f_val", 2 * c[rows, cols], **F32)
    # 64-bit indices, base 1, double
    assert out["spgemm_d_size"] == out["spgemm_f_size"]
    exact(out, "spgemm_d_off", off + 1)
    exact(out, "spgemm_d_col", cols + 1)
    close(out, "spgemm_d_val", c[rows, cols])


def test_spgemm_reuse_computes_values_again_on_the_structure(out):
    c, rows, cols, off, _ = _product()
    exact(out, "reuse_off", off)
    exact(out, "reuse_col", cols)
    close(out, "reuse_val1", c[rows, cols])
    close(out, "reuse_val2", 2 * c[rows, cols] + 0.5 * c[rows, cols])  # A doubled, beta = 0.5


# --- SDDMM and batched SpMM -----------------------------------------------------------------


def test_sddmm_over_a_strided_batch_and_with_a_transposed_operand(out):
    assert out["batches"] == ["2", "15", "2"]
    rows, cols = np.nonzero(dense(4, 5, 4))
    nnz = len(rows)
    a, b, c = fill(24, 7).reshape(2, 4, 3), fill(30, 8).reshape(2, 3, 5), fill(2 * nnz, 9).reshape(2, nnz)
    want = [2 * (a[i] @ b[i])[rows, cols] + 0.5 * c[i] for i in range(2)]
    close(out, "sddmm", np.concatenate(want), **F32)
    # op(A) = A^T with A 3 x 4 column-major: the buffer read as 4 x 3 row-major; beta = 0 (C NaN)
    at, bc = fill(12, 7).reshape(4, 3), fill(15, 8).reshape(5, 3).T
    close(out, "sddmm_t", (at @ bc)[rows, cols])


def test_spmm_with_a_shared_sparse_matrix_and_batched_dense_ones(out):
    a = dense(5, 4, 1)
    b = fill(24, 10).reshape(2, 3, 4).transpose(0, 2, 1)  # column-major 4 x 3, stride 12
    c = fill(30, 11).reshape(2, 3, 5).transpose(0, 2, 1)  # column-major 5 x 3, stride 15
    want = [(a @ b[i] + 2 * c[i]).ravel(order="F") for i in range(2)]
    close(out, "spmm_batched", np.concatenate(want), **F32)
    assert out["dnmat_get"] == ["5", "3", "5", "1", "0", "1"]  # CUDA_R_32F, CUSPARSE_ORDER_COL


# --- legacy routines ------------------------------------------------------------------------


def ilu0(a: np.ndarray) -> np.ndarray:
    """Textbook ILU(0): L (unit, below) and U in one matrix, on a's pattern."""
    m, mask, n = a.copy(), a != 0, a.shape[0]
    for i in range(n):
        for k in range(i):
            if not mask[i, k]:
                continue
            m[i, k] /= m[k, k]
            for j in range(k + 1, n):
                if mask[i, j] and mask[k, j]:
                    m[i, j] -= m[i, k] * m[k, j]
    return m


def test_csrilu02_factors_on_the_pattern_and_reports_zero_pivots(out):
    a = square(6, 3)
    rows, cols = np.nonzero(a)
    close(out, "ilu", ilu0(a)[rows, cols])
    assert out["ilu_pivots"] == ["0", "-1", "0", "-1"]
    assert out["ilu_missing"] == ["9", "4"]  # CUSPARSE_STATUS_ZERO_PIVOT, row 3 in base 1


def test_csrsort_with_gather_coosort_and_csr2csc(out):
    a = dense(5, 4, 1)
    off, col, val = csr(a)
    exact(out, "csrsort_col", col)
    exact(out, "csrsort_val", val)
    rows, cols = np.nonzero(a)
    exact(out, "coosort_row", rows)
    exact(out, "coosort_col", cols)
    exact(out, "coosort_perm", np.arange(len(rows))[::-1])  # entries were given in reverse
    coff, crow, cval = csr(a.T)
    exact(out, "csc_off", coff)
    exact(out, "csc_row", crow)
    exact(out, "csc_val", cval)


def test_unsupported_combinations_and_invalid_arguments_touch_nothing(out):
    # SpGEMM with op(A) = A^T, SDDMM into COO, SpMV of a batch: NOT_SUPPORTED (10); SpSV of a
    # non-square matrix, an attribute of the wrong size, DenseToSparse into a matrix whose nnz is
    # not the count, a solve without its analysis: INVALID_VALUE (3)
    assert np.count_nonzero(fill(20, 2)) != np.count_nonzero(dense(5, 4, 1))
    assert out["status"] == ["10", "10", "10", "3", "3", "3", "3"]
    exact(out, "untouched", fill(20, 2))


# --- library work, names outside the subset, the real toolkit -------------------------------

_NOTED = r"""#include <cusparse.h>
#include <cstdio>
int main() {
  cusparseHandle_t h; cusparseCreate(&h);
  int *off, *col; float* val;
  cudaMalloc((void**)&off, 3 * sizeof(int)); cudaMalloc((void**)&col, 2 * sizeof(int)); cudaMalloc((void**)&val, 2 * sizeof(float));
  int ho[3] = {0, 1, 2}, hc[2] = {0, 1}; float hv[2] = {2, 3};
  cudaMemcpy(off, ho, sizeof ho, cudaMemcpyHostToDevice); cudaMemcpy(col, hc, sizeof hc, cudaMemcpyHostToDevice);
  cudaMemcpy(val, hv, sizeof hv, cudaMemcpyHostToDevice);
  cusparseSpMatDescr_t a, c;
  cusparseCreateCsr(&a, 2, 2, 2, off, col, val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F);
  cusparseCreateCsr(&c, 2, 2, 0, nullptr, nullptr, nullptr, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F);
  cusparseSpGEMMDescr_t d; cusparseSpGEMM_createDescr(&d);
  float one = 1, zero = 0; size_t bytes = 0; void* buffer = nullptr;
  cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
  cusparseSpGEMM_workEstimation(h, op, op, &one, a, a, &zero, c, CUDA_R_32F, CUSPARSE_SPGEMM_DEFAULT, d, &bytes, nullptr);
#ifdef WORK
  cudaMalloc(&buffer, bytes);
  if (cusparseSpGEMM_workEstimation(h, op, op, &one, a, a, &zero, c, CUDA_R_32F, CUSPARSE_SPGEMM_DEFAULT, d, &bytes, buffer)) return 1;
#endif
  printf("%zu\n", bytes);
  return 0;
}
"""


def test_computing_calls_are_noted_as_library_work_and_size_queries_are_not(tmp_path):
    def noted(work: bool) -> list[str]:
        build = tmp_path / f"w{int(work)}"
        built = toolchain.compile_program(_NOTED, build, defines={"WORK": 1} if work else None)
        assert built.ok, built.diagnostics[-2000:]
        log = build / "uploads.log"
        proc = subprocess.run([str(built.exe)], cwd=build, capture_output=True, text=True,
                              env={**os.environ, "CUDASHIM_UPLOAD_LOG": str(log)})
        assert proc.returncode == 0 and int(proc.stdout) > 0, proc.stderr[-2000:]
        text = log.read_text() if log.exists() else ""
        return [ln for ln in text.splitlines() if ln.startswith("library ")]

    assert noted(False) == []
    assert noted(True) == ["library cusparse cusparseSpGEMM_workEstimation"]


_OUTSIDE = r"""#include <cusparse.h>
int main() {
  cusparseSpMatDescr_t m;
  cusparseCreateBlockedEll(&m, 4, 4, 2, 2, nullptr, nullptr, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F);
  return 0;
}
"""
_COMPLEX = r"""#include <cusparse.h>
#include <cstdio>
int main() {
  cusparseHandle_t h; cusparseCreate(&h);
  int* idx; float2 *x, *y; cudaMalloc((void**)&idx, 4); cudaMalloc((void**)&x, 8); cudaMalloc((void**)&y, 32);
  cusparseSpVecDescr_t vx; cusparseDnVecDescr_t vy;
  cusparseCreateSpVec(&vx, 4, 1, idx, x, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_C_32F);
  cusparseCreateDnVec(&vy, 4, y, CUDA_C_32F);
  printf("before\n");
  float2 one = {1, 0};
  cusparseAxpby(h, &one, vx, &one, vy);
  printf("after\n");
  return 0;
}
"""


def test_a_name_outside_the_subset_and_a_complex_type_need_a_gpu(backend):
    res = run_program(Program(source=_OUTSIDE), backend)
    assert res.status == Status.NEEDS_GPU, res.reason
    assert "cusparseCreateBlockedEll" in res.reason and "subset" in res.reason
    res = run_program(Program(source=_COMPLEX), backend)
    assert res.status == Status.NEEDS_GPU, res.reason
    assert "cusparseAxpby" in res.reason and "CUDA_C_32F" in res.reason
    assert "before" in res.outcome.stdout and "after" not in res.outcome.stdout


def _cusparse_include_flags() -> list[str]:
    """-I for cuSPARSE's headers where nvcc's toolkit lacks them: $CUSPARSE_INCLUDE_DIR, or the
    include folder of a pip `nvidia-cusparse` wheel."""
    dirs = [Path(d) for d in [os.environ.get("CUSPARSE_INCLUDE_DIR", "")] if d]
    spec = importlib.util.find_spec("nvidia")
    for root in (spec.submodule_search_locations or []) if spec else []:
        dirs += [p.parent for p in Path(root).glob("*/include/cusparse.h")]
    return [f"-I{d}" for d in dirs if (d / "cusparse.h").is_file()]


@pytest.mark.parametrize("name, source", [("generic", PROGRAM), ("noted", _NOTED)])
def test_the_programs_compile_with_the_real_nvcc(tmp_path, name, source):
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not installed")
    (tmp_path / "main.cu").write_text(source)
    proc = subprocess.run([nvcc, "-arch=sm_90", "-c", *_cusparse_include_flags(), "-Wno-deprecated-declarations",
                           "main.cu", "-o", "main.o"], cwd=tmp_path, capture_output=True, text=True)
    if "cusparse.h: No such file" in proc.stderr:
        pytest.skip("cuSPARSE's headers are not installed (set CUSPARSE_INCLUDE_DIR)")
    assert proc.returncode == 0, proc.stderr[-3000:]
