// cuBLAS's batched LU, inverse, QR and least squares in S, D, C and Z through the CPU shim
// (include/cudashim/cublas_solvers.h), each checked by what it must satisfy: P A = L U, A X = B,
// A inv(A) = I, A = Q R, A^H (A x - b) = 0. Prints "<routine> <type> <worst residual> <PASS|FAIL>"
// and "status <what> <status> <info>" for the argument checks and a singular matrix.
// Built with nvcc as it stands:  nvcc -o cublas_solvers cublas_solvers.cu -lcublas
#include <cublas_v2.h>
#include <cmath>
#include <complex>
#include <cstdio>
#include <type_traits>
#include <vector>

template <class T> struct Api;
#define API(T, S, X)                                                                                      \
  template <> struct Api<T> {                                                                             \
    typedef S St;                                                                                         \
    static constexpr const char* name = #X;                                                               \
    static cublasStatus_t getrf(cublasHandle_t h, int n, St* const a[], int lda, int* p, int* i, int b) { \
      return cublas##X##getrfBatched(h, n, a, lda, p, i, b);                                              \
    }                                                                                                     \
    static cublasStatus_t getrs(cublasHandle_t h, cublasOperation_t t, int n, int r, const St* const a[], \
                                int lda, const int* p, St* const b[], int ldb, int* i, int bc) {         \
      return cublas##X##getrsBatched(h, t, n, r, a, lda, p, b, ldb, i, bc);                               \
    }                                                                                                     \
    static cublasStatus_t getri(cublasHandle_t h, int n, const St* const a[], int lda, const int* p,      \
                                St* const c[], int ldc, int* i, int b) {                                  \
      return cublas##X##getriBatched(h, n, a, lda, p, c, ldc, i, b);                                      \
    }                                                                                                     \
    static cublasStatus_t matinv(cublasHandle_t h, int n, const St* const a[], int lda, St* const c[],    \
                                 int ldc, int* i, int b) {                                                \
      return cublas##X##matinvBatched(h, n, a, lda, c, ldc, i, b);                                        \
    }                                                                                                     \
    static cublasStatus_t geqrf(cublasHandle_t h, int m, int n, St* const a[], int lda, St* const t[],    \
                                int* i, int b) {                                                          \
      return cublas##X##geqrfBatched(h, m, n, a, lda, t, i, b);                                           \
    }                                                                                                     \
    static cublasStatus_t gels(cublasHandle_t h, cublasOperation_t t, int m, int n, int r, St* const a[], \
                               int lda, St* const c[], int ldc, int* i, int* di, int b) {                 \
      return cublas##X##gelsBatched(h, t, m, n, r, a, lda, c, ldc, i, di, b);                             \
    }                                                                                                     \
  };
API(float, float, S)
API(double, double, D)
API(std::complex<float>, cuComplex, C)
API(std::complex<double>, cuDoubleComplex, Z)

template <class T> T make(int i, int salt) {
  const double re = ((i * 37 + salt * 11) % 23 - 11) / 7.0, im = ((i * 53 + salt * 5) % 19 - 9) / 9.0;
  if constexpr (std::is_floating_point_v<T>) return (T)re;
  else return T((typename T::value_type)re, (typename T::value_type)im);
}
template <class T> T conj_(T x) {
  if constexpr (std::is_floating_point_v<T>) return x;
  else return std::conj(x);
}

// `count` device matrices of `elems` elements and a device array of pointers to them.
template <class T> struct Batch {
  std::vector<T*> ptrs;
  T** dptrs = nullptr;
  T* base = nullptr;
  Batch(int count, int elems, const std::vector<T>& host) {
    cudaMalloc(&base, sizeof(T) * count * elems);
    cudaMemcpy(base, host.data(), sizeof(T) * count * elems, cudaMemcpyHostToDevice);
    for (int i = 0; i < count; ++i) ptrs.push_back(base + (size_t)i * elems);
    cudaMalloc(&dptrs, sizeof(T*) * count);
    cudaMemcpy(dptrs, ptrs.data(), sizeof(T*) * count, cudaMemcpyHostToDevice);
  }
  std::vector<T> get(int count, int elems) const {
    std::vector<T> out((size_t)count * elems);
    cudaMemcpy(out.data(), base, sizeof(T) * out.size(), cudaMemcpyDeviceToHost);
    return out;
  }
  typename Api<T>::St* const* arg() const { return reinterpret_cast<typename Api<T>::St* const*>(dptrs); }
};

template <class T> void report(const char* what, double worst, double bound) {
  printf("%s %s %.3g %s\n", what, Api<T>::name, worst, worst < bound ? "PASS" : "FAIL");
}

template <class T> int run(cublasHandle_t h) {
  typedef typename Api<T>::St St;
  const double bound = std::is_same_v<T, float> || std::is_same_v<T, std::complex<float>> ? 1e-3 : 1e-9;
  const int n = 6, batch = 3, nn = n * n, lda = n;
  std::vector<T> a(batch * nn), b(batch * n * 2);
  for (int i = 0; i < batch * nn; ++i) a[i] = make<T>(i, 1) + ((i % nn) % (n + 1) == 0 ? T(3) : T(0));
  for (size_t i = 0; i < b.size(); ++i) b[i] = make<T>(i, 2);
  // getrf, then getrs under each operation: op(A) x = b.
  for (cublasOperation_t t : {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C}) {
    Batch<T> A(batch, nn, a), B(batch, n * 2, b);
    int *piv, *info, hinfo = -1;
    cudaMalloc(&piv, sizeof(int) * n * batch);
    cudaMalloc(&info, sizeof(int) * batch);
    if (Api<T>::getrf(h, n, A.arg(), lda, piv, info, batch) != CUBLAS_STATUS_SUCCESS) return 1;
    if (Api<T>::getrs(h, t, n, 2, (const St* const*)A.arg(), lda, piv, B.arg(), n, &hinfo, batch) != CUBLAS_STATUS_SUCCESS)
      return 1;
    std::vector<T> x = B.get(batch, n * 2);
    double worst = hinfo == 0 ? 0 : 1e9;
    for (int k = 0; k < batch; ++k)
      for (int r = 0; r < 2; ++r)
        for (int i = 0; i < n; ++i) {
          T s = 0;
          for (int j = 0; j < n; ++j) {
            const T aij = t == CUBLAS_OP_N ? a[k * nn + i + j * n] : a[k * nn + j + i * n];
            s += (t == CUBLAS_OP_C ? conj_(aij) : aij) * x[k * 2 * n + r * n + j];
          }
          worst = std::max(worst, (double)std::abs(s - b[k * 2 * n + r * n + i]));
        }
    report<T>(t == CUBLAS_OP_N ? "getrs_n" : t == CUBLAS_OP_T ? "getrs_t" : "getrs_c", worst, bound);
    // getri from the same factors: A inv(A) = I.
    if (t == CUBLAS_OP_N) {
      std::vector<T> zero(batch * nn, T(0));
      Batch<T> C(batch, nn, zero), M(batch, nn, zero);
      Batch<T> A0(batch, nn, a);
      if (Api<T>::getri(h, n, (const St* const*)A.arg(), lda, piv, C.arg(), n, info, batch) != CUBLAS_STATUS_SUCCESS) return 1;
      if (Api<T>::matinv(h, n, (const St* const*)A0.arg(), lda, M.arg(), n, info, batch) != CUBLAS_STATUS_SUCCESS) return 1;
      for (int which = 0; which < 2; ++which) {
        std::vector<T> inv = (which ? M : C).get(batch, nn);
        double w = 0;
        for (int k = 0; k < batch; ++k)
          for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
              T s = 0;
              for (int l = 0; l < n; ++l) s += a[k * nn + i + l * n] * inv[k * nn + l + j * n];
              w = std::max(w, (double)std::abs(s - (i == j ? T(1) : T(0))));
            }
        report<T>(which ? "matinv" : "getri", w, bound);
      }
    }
  }
  // geqrf: A = Q R, Q = H_1 ... H_k, H_j = I - tau_j v_j v_j^H.
  {
    const int m = 7, k = 4, elems = m * k;
    std::vector<T> q(batch * elems), tau0(batch * k, T(0));
    for (int i = 0; i < batch * elems; ++i) q[i] = make<T>(i, 3);
    Batch<T> A(batch, elems, q), Tau(batch, k, tau0);
    int hinfo = -1;
    if (Api<T>::geqrf(h, m, k, A.arg(), m, Tau.arg(), &hinfo, batch) != CUBLAS_STATUS_SUCCESS) return 1;
    std::vector<T> f = A.get(batch, elems), tau = Tau.get(batch, k);
    double worst = hinfo == 0 ? 0 : 1e9;
    for (int bi = 0; bi < batch; ++bi) {
      std::vector<T> r(elems, T(0));  // R, then Q R column by column
      for (int j = 0; j < k; ++j)
        for (int i = 0; i <= j; ++i) r[i + j * m] = f[bi * elems + i + j * m];
      for (int hj = k - 1; hj >= 0; --hj)
        for (int c = 0; c < k; ++c) {
          T w = r[hj + c * m];
          for (int i = hj + 1; i < m; ++i) w += conj_(f[bi * elems + i + hj * m]) * r[i + c * m];
          w *= tau[bi * k + hj];
          r[hj + c * m] -= w;
          for (int i = hj + 1; i < m; ++i) r[i + c * m] -= f[bi * elems + i + hj * m] * w;
        }
      for (int i = 0; i < elems; ++i) worst = std::max(worst, (double)std::abs(r[i] - q[bi * elems + i]));
    }
    report<T>("geqrf", worst, bound);
  }
  // gels: the normal equations A^H (A x - b) = 0 of an overdetermined system.
  {
    const int m = 9, k = 4, elems = m * k;
    std::vector<T> g(batch * elems), rhs(batch * m);
    for (int i = 0; i < batch * elems; ++i) g[i] = make<T>(i, 4) + ((i % elems) % (m + 1) == 0 ? T(3) : T(0));  // full rank
    for (int i = 0; i < batch * m; ++i) rhs[i] = make<T>(i, 5);
    Batch<T> A(batch, elems, g), C(batch, m, rhs);
    int hinfo = -1, *dinfo;
    cudaMalloc(&dinfo, sizeof(int) * batch);
    if (Api<T>::gels(h, CUBLAS_OP_N, m, k, 1, A.arg(), m, C.arg(), m, &hinfo, dinfo, batch) != CUBLAS_STATUS_SUCCESS) return 1;
    std::vector<T> x = C.get(batch, m);
    std::vector<int> di(batch);
    cudaMemcpy(di.data(), dinfo, sizeof(int) * batch, cudaMemcpyDeviceToHost);
    double worst = hinfo == 0 ? 0 : 1e9;
    for (int bi = 0; bi < batch; ++bi) {
      if (di[bi] != 0) worst = 1e9;
      std::vector<T> res(m);
      for (int i = 0; i < m; ++i) {
        T s = -rhs[bi * m + i];
        for (int j = 0; j < k; ++j) s += g[bi * elems + i + j * m] * x[bi * m + j];
        res[i] = s;
      }
      for (int j = 0; j < k; ++j) {
        T s = 0;
        for (int i = 0; i < m; ++i) s += conj_(g[bi * elems + i + j * m]) * res[i];
        worst = std::max(worst, (double)std::abs(s));
      }
    }
    report<T>("gels", worst, bound);
  }
  return 0;
}

int main() {
  cublasHandle_t h;
  cublasCreate(&h);
  if (run<float>(h) || run<double>(h) || run<std::complex<float>>(h) || run<std::complex<double>>(h)) {
    printf("a call failed\n");
    return 1;
  }
  // A singular matrix: info names the first zero pivot (1-based); pivots are 1-based.
  double s[9] = {1, 2, 4, 2, 4, 8, 0, 1, 1}, *ds, **dp;  // column 2 = 2 x column 1, exactly
  cudaMalloc(&ds, sizeof s);
  cudaMemcpy(ds, s, sizeof s, cudaMemcpyHostToDevice);
  cudaMalloc(&dp, sizeof(double*));
  cudaMemcpy(dp, &ds, sizeof(double*), cudaMemcpyHostToDevice);
  int *piv, *info, hp[3], hi = -1;
  cudaMalloc(&piv, sizeof hp);
  cudaMalloc(&info, sizeof(int));
  cublasStatus_t st = cublasDgetrfBatched(h, 3, dp, 3, piv, info, 1);
  cudaMemcpy(hp, piv, sizeof hp, cudaMemcpyDeviceToHost);
  cudaMemcpy(&hi, info, sizeof hi, cudaMemcpyDeviceToHost);
  printf("status singular %d %d pivots %d %d %d\n", (int)st, hi, hp[0], hp[1], hp[2]);
  int hinfo = 0;
  st = cublasDgetrsBatched(h, CUBLAS_OP_N, 3, 1, (const double* const*)dp, 2, piv, dp, 3, &hinfo, 1);
  printf("status getrs_lda %d %d\n", (int)st, hinfo);
  st = cublasDgelsBatched(h, CUBLAS_OP_T, 3, 3, 1, dp, 3, dp, 3, &hinfo, nullptr, 1);
  printf("status gels_trans %d %d\n", (int)st, hinfo);
  st = cublasDmatinvBatched(h, 33, (const double* const*)dp, 33, dp, 33, info, 1);
  printf("status matinv_33 %d\n", (int)st);
  cublasDestroy(h);
  return 0;
}
