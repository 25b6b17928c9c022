// cudashim: cuBLAS's batched LU, inverse, QR and least-squares routines (getrfBatched,
// getrsBatched, getriBatched, matinvBatched, geqrfBatched, gelsBatched) in S, D, C and Z,
// computed on the host as LAPACK's unblocked routines compute them (dgetf2, dgetrs, dgeqr2 with
// dlarfg, dormqr), in the routine's own precision. Included by include/cublas_api.h.
//
// Pointer arrays and per-matrix info arrays are device memory, read and written when the work
// runs; an `info` argument of getrs, geqrf and gels is a host pointer, set at the call (0, or
// -i when argument i is invalid, the call then returning CUBLAS_STATUS_INVALID_VALUE).
#pragma once
#include <complex>

namespace cudashim::blas::solve {

template <class _Tp> struct _Real { typedef _Tp type; };
template <class _Tp> struct _Real<std::complex<_Tp>> { typedef _Tp type; };

template <class _Tp> inline typename _Real<_Tp>::type _abs1(_Tp __x) { return std::abs(__x); }
template <class _Tp> inline _Tp _abs1(std::complex<_Tp> __x) { return std::abs(__x.real()) + std::abs(__x.imag()); }
template <class _Tp> inline _Tp _conj(_Tp __x) { return __x; }
template <class _Tp> inline std::complex<_Tp> _conj(std::complex<_Tp> __x) { return std::conj(__x); }
template <class _Tp> inline _Tp _re(_Tp __x) { return __x; }
template <class _Tp> inline _Tp _re(std::complex<_Tp> __x) { return __x.real(); }
template <class _Tp> inline _Tp _im(_Tp) { return _Tp(0); }
template <class _Tp> inline _Tp _im(std::complex<_Tp> __x) { return __x.imag(); }

// LU with partial pivoting (pivots 1-based; none when `__piv` is null). Returns LAPACK's info:
// the first j (1-based) with U(j, j) exactly zero, else 0.
template <class _Tp>
int getrf(int __n, _Tp* __a, int __lda, int* __piv) {
  int __info = 0;
  auto __A = [&](int __i, int __j) -> _Tp& { return __a[__i + (long long)__j * __lda]; };
  for (int __j = 0; __j < __n; ++__j) {
    int __p = __j;
    if (__piv) {
      for (int __i = __j + 1; __i < __n; ++__i)
        if (_abs1(__A(__i, __j)) > _abs1(__A(__p, __j))) __p = __i;
      __piv[__j] = __p + 1;
    }
    if (__A(__p, __j) != _Tp(0)) {
      if (__p != __j)
        for (int __c = 0; __c < __n; ++__c) std::swap(__A(__p, __c), __A(__j, __c));
      const _Tp __d = __A(__j, __j);
      for (int __i = __j + 1; __i < __n; ++__i) __A(__i, __j) /= __d;
    } else if (__info == 0) {
      __info = __j + 1;
    }
    for (int __c = __j + 1; __c < __n; ++__c) {
      const _Tp __u = __A(__j, __c);
      if (__u == _Tp(0)) continue;
      for (int __i = __j + 1; __i < __n; ++__i) __A(__i, __c) -= __A(__i, __j) * __u;
    }
  }
  return __info;
}

// Solves op(A) X = B with A's LU factors, B n x nrhs.
template <class _Tp>
void getrs(cublasOperation_t __t, int __n, int __nrhs, const _Tp* __a, int __lda, const int* __piv, _Tp* __b, int __ldb) {
  auto __A = [&](int __i, int __j) { return __a[__i + (long long)__j * __lda]; };
  auto __op = [&](_Tp __x) { return __t == CUBLAS_OP_C ? _conj(__x) : __x; };
  for (int __r = 0; __r < __nrhs; ++__r) {
    _Tp* __x = __b + (long long)__r * __ldb;
    if (__t == CUBLAS_OP_N) {
      if (__piv)
        for (int __i = 0; __i < __n; ++__i)
          if (__piv[__i] - 1 != __i) std::swap(__x[__i], __x[__piv[__i] - 1]);
      for (int __i = 0; __i < __n; ++__i)  // L y = b, L unit lower
        for (int __k = 0; __k < __i; ++__k) __x[__i] -= __A(__i, __k) * __x[__k];
      for (int __i = __n - 1; __i >= 0; --__i) {  // U x = y
        for (int __k = __i + 1; __k < __n; ++__k) __x[__i] -= __A(__i, __k) * __x[__k];
        __x[__i] /= __A(__i, __i);
      }
    } else {
      for (int __i = 0; __i < __n; ++__i) {  // U^T y = b
        for (int __k = 0; __k < __i; ++__k) __x[__i] -= __op(__A(__k, __i)) * __x[__k];
        __x[__i] /= __op(__A(__i, __i));
      }
      for (int __i = __n - 1; __i >= 0; --__i)  // L^T x = y
        for (int __k = __i + 1; __k < __n; ++__k) __x[__i] -= __op(__A(__k, __i)) * __x[__k];
      if (__piv)
        for (int __i = __n - 1; __i >= 0; --__i)
          if (__piv[__i] - 1 != __i) std::swap(__x[__i], __x[__piv[__i] - 1]);
    }
  }
}

// The inverse from A's LU factors into C; LAPACK's info (a zero U(j, j) leaves C unset).
template <class _Tp>
int getri(int __n, const _Tp* __a, int __lda, const int* __piv, _Tp* __c, int __ldc) {
  for (int __j = 0; __j < __n; ++__j)
    if (__a[__j + (long long)__j * __lda] == _Tp(0)) return __j + 1;
  for (int __j = 0; __j < __n; ++__j)
    for (int __i = 0; __i < __n; ++__i) __c[__i + (long long)__j * __ldc] = __i == __j ? _Tp(1) : _Tp(0);
  getrs(CUBLAS_OP_N, __n, __n, __a, __lda, __piv, __c, __ldc);
  return 0;
}

// QR by Householder reflections H_j = I - tau_j v_j v_j^H (v_j(j) = 1 implicit, v_j below R's
// diagonal in A), as LAPACK's xgeqr2 with xlarfg; then Q^H applied to C (xunm2r) when given.
template <class _Tp>
void geqrf(int __m, int __n, _Tp* __a, int __lda, _Tp* __tau, _Tp* __c = nullptr, int __ldc = 0, int __nrhs = 0) {
  typedef typename _Real<_Tp>::type _Rp;
  auto __A = [&](int __i, int __j) -> _Tp& { return __a[__i + (long long)__j * __lda]; };
  const int __k = __m < __n ? __m : __n;
  // H^H applied from the left to columns [c0, c1) of a matrix whose element (i, c) is `__at`.
  auto __apply = [&](int __j, _Tp __tj, auto&& __at, int __c0, int __c1) {
    const _Tp __ct = _conj(__tj);
    if (__ct == _Tp(0)) return;
    for (int __c = __c0; __c < __c1; ++__c) {
      _Tp __w = __at(__j, __c);
      for (int __i = __j + 1; __i < __m; ++__i) __w += _conj(__A(__i, __j)) * __at(__i, __c);
      __w *= __ct;
      __at(__j, __c) -= __w;
      for (int __i = __j + 1; __i < __m; ++__i) __at(__i, __c) -= __A(__i, __j) * __w;
    }
  };
  for (int __j = 0; __j < __k; ++__j) {
    _Tp __tj = _Tp(0);
    _Rp __xnorm = 0;
    for (int __i = __j + 1; __i < __m; ++__i) __xnorm = std::hypot(__xnorm, std::abs(__A(__i, __j)));
    const _Tp __alpha = __A(__j, __j);
    if (__xnorm != 0 || _im(__alpha) != 0) {
      const _Rp __ar = _re(__alpha), __ai = _im(__alpha);
      _Rp __beta = std::hypot(std::hypot(__ar, __ai), __xnorm);
      if (__ar >= 0) __beta = -__beta;
      if constexpr (std::is_same_v<_Tp, _Rp>) __tj = (__beta - __ar) / __beta;
      else __tj = _Tp((__beta - __ar) / __beta, -__ai / __beta);
      const _Tp __scale = _Tp(1) / (__alpha - _Tp(__beta));
      for (int __i = __j + 1; __i < __m; ++__i) __A(__i, __j) *= __scale;
      __A(__j, __j) = _Tp(__beta);
    }
    if (__tau) __tau[__j] = __tj;
    const _Tp __keep = __A(__j, __j);
    __A(__j, __j) = _Tp(1);  // v_j(j)
    __apply(__j, __tj, __A, __j + 1, __n);
    if (__c) __apply(__j, __tj, [&](int __i, int __cc) -> _Tp& { return __c[__i + (long long)__cc * __ldc]; }, 0, __nrhs);
    __A(__j, __j) = __keep;
  }
}

// Least squares min ||A X - C|| (m >= n, A of full rank): QR, Q^H C, then R X = (Q^H C)(0:n).
// Returns the first j (1-based) with R(j, j) exactly zero, else 0.
template <class _Tp>
int gels(int __m, int __n, int __nrhs, _Tp* __a, int __lda, _Tp* __c, int __ldc) {
  std::vector<_Tp> __tau((size_t)(__n > 0 ? __n : 1));
  geqrf(__m, __n, __a, __lda, __tau.data(), __c, __ldc, __nrhs);
  for (int __j = 0; __j < __n; ++__j)
    if (__a[__j + (long long)__j * __lda] == _Tp(0)) return __j + 1;
  for (int __r = 0; __r < __nrhs; ++__r) {
    _Tp* __x = __c + (long long)__r * __ldc;
    for (int __i = __n - 1; __i >= 0; --__i) {
      for (int __k = __i + 1; __k < __n; ++__k) __x[__i] -= __a[__i + (long long)__k * __lda] * __x[__k];
      __x[__i] /= __a[__i + (long long)__i * __lda];
    }
  }
  return 0;
}

inline cublasStatus_t _invalid(int* __info, int __which) {
  if (__info) *__info = -__which;
  return CUBLAS_STATUS_INVALID_VALUE;
}

}  // namespace cudashim::blas::solve

// `_St` the storage type a program passes (float, cuComplex, ...), `_Tp` the one computed with.
#define CUDASHIM_BLAS_SOLVERS(_Sx, _St, _Tp)                                                                                    \
  inline cublasStatus_t cublas##_Sx##getrfBatched(cublasHandle_t __h, int __n, _St* const __a[], int __lda, int* __piv,           \
                                                  int* __info, int __batch) {                                                   \
    ::cudashim::_Library_access __cudashim_da("cublas");                                                                       \
    if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;                                                                             \
    if (__n < 0 || __lda < (__n > 1 ? __n : 1) || __batch < 0 || !__info) return CUBLAS_STATUS_INVALID_VALUE;                   \
    return cudashim::blas::_enqueue(__h, [=] {                                                                                  \
      for (int __b = 0; __b < __batch; ++__b)                                                                                   \
        __info[__b] = cudashim::blas::solve::getrf(__n, reinterpret_cast<_Tp*>(__a[__b]), __lda,                               \
                                                   __piv ? __piv + (long long)__b * __n : nullptr);                             \
    });                                                                                                                         \
  }                                                                                                                             \
  inline cublasStatus_t cublas##_Sx##getrsBatched(cublasHandle_t __h, cublasOperation_t __t, int __n, int __nrhs,                \
                                                  const _St* const __a[], int __lda, const int* __piv, _St* const __b[],        \
                                                  int __ldb, int* __info, int __batch) {                                        \
    ::cudashim::_Library_access __cudashim_da("cublas");                                                                       \
    using cudashim::blas::solve::_invalid;                                                                                      \
    if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;                                                                             \
    if (__t != CUBLAS_OP_N && __t != CUBLAS_OP_T && __t != CUBLAS_OP_C) return _invalid(__info, 2);                            \
    if (__n < 0) return _invalid(__info, 3);                                                                                    \
    if (__nrhs < 0) return _invalid(__info, 4);                                                                                 \
    if (__lda < (__n > 1 ? __n : 1)) return _invalid(__info, 6);                                                                \
    if (__ldb < (__n > 1 ? __n : 1)) return _invalid(__info, 9);                                                                \
    if (__batch < 0) return _invalid(__info, 11);                                                                               \
    if (__info) *__info = 0;                                                                                                    \
    return cudashim::blas::_enqueue(__h, [=] {                                                                                  \
      for (int __i = 0; __i < __batch; ++__i)                                                                                   \
        cudashim::blas::solve::getrs(__t, __n, __nrhs, reinterpret_cast<const _Tp*>(__a[__i]), __lda,                          \
                                     __piv ? __piv + (long long)__i * __n : nullptr, reinterpret_cast<_Tp*>(__b[__i]), __ldb);  \
    });                                                                                                                         \
  }                                                                                                                             \
  inline cublasStatus_t cublas##_Sx##getriBatched(cublasHandle_t __h, int __n, const _St* const __a[], int __lda,               \
                                                  const int* __piv, _St* const __c[], int __ldc, int* __info, int __batch) {    \
    ::cudashim::_Library_access __cudashim_da("cublas");                                                                       \
    if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;                                                                             \
    if (__n < 0 || __lda < (__n > 1 ? __n : 1) || __ldc < (__n > 1 ? __n : 1) || __batch < 0 || !__info)                      \
      return CUBLAS_STATUS_INVALID_VALUE;                                                                                       \
    return cudashim::blas::_enqueue(__h, [=] {                                                                                  \
      for (int __i = 0; __i < __batch; ++__i)                                                                                   \
        __info[__i] = cudashim::blas::solve::getri(__n, reinterpret_cast<const _Tp*>(__a[__i]), __lda,                          \
                                                   __piv ? __piv + (long long)__i * __n : nullptr,                               \
                                                   reinterpret_cast<_Tp*>(__c[__i]), __ldc);                                    \
    });                                                                                                                         \
  }                                                                                                                             \
  inline cublasStatus_t cublas##_Sx##matinvBatched(cublasHandle_t __h, int __n, const _St* const __a[], int __lda,              \
                                                   _St* const __ainv[], int __lda_inv, int* __info, int __batch) {              \
    ::cudashim::_Library_access __cudashim_da("cublas");                                                                       \
    if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;                                                                             \
    if (__n < 0 || __n > 32 || __lda < (__n > 1 ? __n : 1) || __lda_inv < (__n > 1 ? __n : 1) || __batch < 0 || !__info)     \
      return CUBLAS_STATUS_INVALID_VALUE;                                                                                       \
    return cudashim::blas::_enqueue(__h, [=] {                                                                                  \
      std::vector<_Tp> __lu((size_t)__n * __n);                                                                                 \
      std::vector<int> __p((size_t)__n);                                                                                        \
      for (int __i = 0; __i < __batch; ++__i) {                                                                                 \
        const _Tp* __src = reinterpret_cast<const _Tp*>(__a[__i]);                                                             \
        for (int __c = 0; __c < __n; ++__c)                                                                                     \
          for (int __r = 0; __r < __n; ++__r) __lu[__r + (size_t)__c * __n] = __src[__r + (long long)__c * __lda];              \
        int __f = cudashim::blas::solve::getrf(__n, __lu.data(), __n, __p.data());                                              \
        __info[__i] = __f ? __f                                                                                                 \
                          : cudashim::blas::solve::getri(__n, __lu.data(), __n, __p.data(),                                     \
                                                         reinterpret_cast<_Tp*>(__ainv[__i]), __lda_inv);                       \
      }                                                                                                                         \
    });                                                                                                                         \
  }                                                                                                                             \
  inline cublasStatus_t cublas##_Sx##geqrfBatched(cublasHandle_t __h, int __m, int __n, _St* const __a[], int __lda,            \
                                                  _St* const __tau[], int* __info, int __batch) {                               \
    ::cudashim::_Library_access __cudashim_da("cublas");                                                                       \
    using cudashim::blas::solve::_invalid;                                                                                      \
    if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;                                                                             \
    if (__m < 0) return _invalid(__info, 2);                                                                                    \
    if (__n < 0) return _invalid(__info, 3);                                                                                    \
    if (__lda < (__m > 1 ? __m : 1)) return _invalid(__info, 5);                                                                \
    if (__batch < 0) return _invalid(__info, 8);                                                                                \
    if (__info) *__info = 0;                                                                                                    \
    return cudashim::blas::_enqueue(__h, [=] {                                                                                  \
      for (int __i = 0; __i < __batch; ++__i)                                                                                   \
        cudashim::blas::solve::geqrf(__m, __n, reinterpret_cast<_Tp*>(__a[__i]), __lda, reinterpret_cast<_Tp*>(__tau[__i]));   \
    });                                                                                                                         \
  }                                                                                                                             \
  inline cublasStatus_t cublas##_Sx##gelsBatched(cublasHandle_t __h, cublasOperation_t __t, int __m, int __n, int __nrhs,      \
                                                 _St* const __a[], int __lda, _St* const __c[], int __ldc, int* __info,         \
                                                 int* __dev_info, int __batch) {                                                \
    ::cudashim::_Library_access __cudashim_da("cublas");                                                                       \
    using cudashim::blas::solve::_invalid;                                                                                      \
    if (!__h) return CUBLAS_STATUS_NOT_INITIALIZED;                                                                             \
    if (__t != CUBLAS_OP_N) return _invalid(__info, 2); /* cuBLAS solves the non-transposed problem only */                     \
    if (__m < 0) return _invalid(__info, 3);                                                                                    \
    if (__n < 0 || __n > __m) return _invalid(__info, 4);                                                                       \
    if (__nrhs < 0) return _invalid(__info, 5);                                                                                 \
    if (__lda < (__m > 1 ? __m : 1)) return _invalid(__info, 7);                                                                \
    if (__ldc < (__m > 1 ? __m : 1)) return _invalid(__info, 9);                                                                \
    if (__batch < 0) return _invalid(__info, 12);                                                                               \
    if (__info) *__info = 0;                                                                                                    \
    return cudashim::blas::_enqueue(__h, [=] {                                                                                  \
      for (int __i = 0; __i < __batch; ++__i) {                                                                                 \
        const int __f = cudashim::blas::solve::gels(__m, __n, __nrhs, reinterpret_cast<_Tp*>(__a[__i]), __lda,                 \
                                                    reinterpret_cast<_Tp*>(__c[__i]), __ldc);                                   \
        if (__dev_info) __dev_info[__i] = __f;                                                                                  \
      }                                                                                                                         \
    });                                                                                                                         \
  }
CUDASHIM_BLAS_SOLVERS(S, float, float)
CUDASHIM_BLAS_SOLVERS(D, double, double)
CUDASHIM_BLAS_SOLVERS(C, cuComplex, std::complex<float>)
CUDASHIM_BLAS_SOLVERS(Z, cuDoubleComplex, std::complex<double>)
#undef CUDASHIM_BLAS_SOLVERS
