#pragma once
// LAPACK and BLAS through their Fortran interface (column-major, so no
// transposition copies). Debian's OpenBLAS/LAPACK use 32-bit integers and
// gfortran's hidden string-length arguments (one size_t per character
// argument, after all others). Overloads per element type keep the kernels
// written once as templates.

#include <complex>
#include <cstddef>

namespace tenferro::linalg::lapack {

using c64 = std::complex<float>;
using c128 = std::complex<double>;
using fint = int;
using flen = std::size_t;

extern "C" {
// Cholesky
void spotrf_(const char*, const fint*, float*, const fint*, fint*, flen);
void dpotrf_(const char*, const fint*, double*, const fint*, fint*, flen);
void cpotrf_(const char*, const fint*, c64*, const fint*, fint*, flen);
void zpotrf_(const char*, const fint*, c128*, const fint*, fint*, flen);
// Triangular solve with several right-hand sides (BLAS 3)
void strsm_(const char*, const char*, const char*, const char*, const fint*, const fint*,
            const float*, const float*, const fint*, float*, const fint*, flen, flen, flen, flen);
void dtrsm_(const char*, const char*, const char*, const char*, const fint*, const fint*,
            const double*, const double*, const fint*, double*, const fint*, flen, flen, flen,
            flen);
void ctrsm_(const char*, const char*, const char*, const char*, const fint*, const fint*,
            const c64*, const c64*, const fint*, c64*, const fint*, flen, flen, flen, flen);
void ztrsm_(const char*, const char*, const char*, const char*, const fint*, const fint*,
            const c128*, const c128*, const fint*, c128*, const fint*, flen, flen, flen, flen);
// SVD (divide and conquer)
void sgesdd_(const char*, const fint*, const fint*, float*, const fint*, float*, float*,
             const fint*, float*, const fint*, float*, const fint*, fint*, fint*, flen);
void dgesdd_(const char*, const fint*, const fint*, double*, const fint*, double*, double*,
             const fint*, double*, const fint*, double*, const fint*, fint*, fint*, flen);
void cgesdd_(const char*, const fint*, const fint*, c64*, const fint*, float*, c64*, const fint*,
             c64*, const fint*, c64*, const fint*, float*, fint*, fint*, flen);
void zgesdd_(const char*, const fint*, const fint*, c128*, const fint*, double*, c128*, const fint*,
             c128*, const fint*, c128*, const fint*, double*, fint*, fint*, flen);
// Hermitian eigensolver (divide and conquer)
void ssyevd_(const char*, const char*, const fint*, float*, const fint*, float*, float*,
             const fint*, fint*, const fint*, fint*, flen, flen);
void dsyevd_(const char*, const char*, const fint*, double*, const fint*, double*, double*,
             const fint*, fint*, const fint*, fint*, flen, flen);
void cheevd_(const char*, const char*, const fint*, c64*, const fint*, float*, c64*, const fint*,
             float*, const fint*, fint*, const fint*, fint*, flen, flen);
void zheevd_(const char*, const char*, const fint*, c128*, const fint*, double*, c128*, const fint*,
             double*, const fint*, fint*, const fint*, fint*, flen, flen);
// General eigensolver
void sgeev_(const char*, const char*, const fint*, float*, const fint*, float*, float*, float*,
            const fint*, float*, const fint*, float*, const fint*, fint*, flen, flen);
void dgeev_(const char*, const char*, const fint*, double*, const fint*, double*, double*, double*,
            const fint*, double*, const fint*, double*, const fint*, fint*, flen, flen);
void cgeev_(const char*, const char*, const fint*, c64*, const fint*, c64*, c64*, const fint*, c64*,
            const fint*, c64*, const fint*, float*, fint*, flen, flen);
void zgeev_(const char*, const char*, const fint*, c128*, const fint*, c128*, c128*, const fint*,
            c128*, const fint*, c128*, const fint*, double*, fint*, flen, flen);
// QR
void sgeqrf_(const fint*, const fint*, float*, const fint*, float*, float*, const fint*, fint*);
void dgeqrf_(const fint*, const fint*, double*, const fint*, double*, double*, const fint*, fint*);
void cgeqrf_(const fint*, const fint*, c64*, const fint*, c64*, c64*, const fint*, fint*);
void zgeqrf_(const fint*, const fint*, c128*, const fint*, c128*, c128*, const fint*, fint*);
void sorgqr_(const fint*, const fint*, const fint*, float*, const fint*, const float*, float*,
             const fint*, fint*);
void dorgqr_(const fint*, const fint*, const fint*, double*, const fint*, const double*, double*,
             const fint*, fint*);
void cungqr_(const fint*, const fint*, const fint*, c64*, const fint*, const c64*, c64*,
             const fint*, fint*);
void zungqr_(const fint*, const fint*, const fint*, c128*, const fint*, const c128*, c128*,
             const fint*, fint*);
// LU
void sgetrf_(const fint*, const fint*, float*, const fint*, fint*, fint*);
void dgetrf_(const fint*, const fint*, double*, const fint*, fint*, fint*);
void cgetrf_(const fint*, const fint*, c64*, const fint*, fint*, fint*);
void zgetrf_(const fint*, const fint*, c128*, const fint*, fint*, fint*);
void sgetrs_(const char*, const fint*, const fint*, const float*, const fint*, const fint*, float*,
             const fint*, fint*, flen);
void dgetrs_(const char*, const fint*, const fint*, const double*, const fint*, const fint*,
             double*, const fint*, fint*, flen);
void cgetrs_(const char*, const fint*, const fint*, const c64*, const fint*, const fint*, c64*,
             const fint*, fint*, flen);
void zgetrs_(const char*, const fint*, const fint*, const c128*, const fint*, const fint*, c128*,
             const fint*, fint*, flen);
// ---- composite part (matrix_exp): BLAS 3 matrix product ----
void sgemm_(const char*, const char*, const fint*, const fint*, const fint*, const float*,
            const float*, const fint*, const float*, const fint*, const float*, float*, const fint*,
            flen, flen);
void dgemm_(const char*, const char*, const fint*, const fint*, const fint*, const double*,
            const double*, const fint*, const double*, const fint*, const double*, double*,
            const fint*, flen, flen);
void cgemm_(const char*, const char*, const fint*, const fint*, const fint*, const c64*, const c64*,
            const fint*, const c64*, const fint*, const c64*, c64*, const fint*, flen, flen);
void zgemm_(const char*, const char*, const fint*, const fint*, const fint*, const c128*,
            const c128*, const fint*, const c128*, const fint*, const c128*, c128*, const fint*,
            flen, flen);
}

// ---- overloads ------------------------------------------------------------------------

// clang-format off
inline void potrf(char u, fint n, float* a, fint lda, fint* info) { spotrf_(&u, &n, a, &lda, info, 1); }
inline void potrf(char u, fint n, double* a, fint lda, fint* info) { dpotrf_(&u, &n, a, &lda, info, 1); }
inline void potrf(char u, fint n, c64* a, fint lda, fint* info) { cpotrf_(&u, &n, a, &lda, info, 1); }
inline void potrf(char u, fint n, c128* a, fint lda, fint* info) { zpotrf_(&u, &n, a, &lda, info, 1); }

#define TF_TRSM(T, f)                                                                          \
  inline void trsm(char side, char uplo, char trans, char diag, fint m, fint n, T alpha,       \
                   const T* a, fint lda, T* b, fint ldb) {                                     \
    f(&side, &uplo, &trans, &diag, &m, &n, &alpha, a, &lda, b, &ldb, 1, 1, 1, 1);              \
  }
TF_TRSM(float, strsm_)
TF_TRSM(double, dtrsm_)
TF_TRSM(c64, ctrsm_)
TF_TRSM(c128, ztrsm_)
#undef TF_TRSM

inline void geqrf(fint m, fint n, float* a, fint lda, float* tau, float* w, fint lw, fint* info) { sgeqrf_(&m, &n, a, &lda, tau, w, &lw, info); }
inline void geqrf(fint m, fint n, double* a, fint lda, double* tau, double* w, fint lw, fint* info) { dgeqrf_(&m, &n, a, &lda, tau, w, &lw, info); }
inline void geqrf(fint m, fint n, c64* a, fint lda, c64* tau, c64* w, fint lw, fint* info) { cgeqrf_(&m, &n, a, &lda, tau, w, &lw, info); }
inline void geqrf(fint m, fint n, c128* a, fint lda, c128* tau, c128* w, fint lw, fint* info) { zgeqrf_(&m, &n, a, &lda, tau, w, &lw, info); }
inline void orgqr(fint m, fint n, fint k, float* a, fint lda, const float* tau, float* w, fint lw, fint* info) { sorgqr_(&m, &n, &k, a, &lda, tau, w, &lw, info); }
inline void orgqr(fint m, fint n, fint k, double* a, fint lda, const double* tau, double* w, fint lw, fint* info) { dorgqr_(&m, &n, &k, a, &lda, tau, w, &lw, info); }
inline void orgqr(fint m, fint n, fint k, c64* a, fint lda, const c64* tau, c64* w, fint lw, fint* info) { cungqr_(&m, &n, &k, a, &lda, tau, w, &lw, info); }
inline void orgqr(fint m, fint n, fint k, c128* a, fint lda, const c128* tau, c128* w, fint lw, fint* info) { zungqr_(&m, &n, &k, a, &lda, tau, w, &lw, info); }

inline void getrf(fint m, fint n, float* a, fint lda, fint* ipiv, fint* info) { sgetrf_(&m, &n, a, &lda, ipiv, info); }
inline void getrf(fint m, fint n, double* a, fint lda, fint* ipiv, fint* info) { dgetrf_(&m, &n, a, &lda, ipiv, info); }
inline void getrf(fint m, fint n, c64* a, fint lda, fint* ipiv, fint* info) { cgetrf_(&m, &n, a, &lda, ipiv, info); }
inline void getrf(fint m, fint n, c128* a, fint lda, fint* ipiv, fint* info) { zgetrf_(&m, &n, a, &lda, ipiv, info); }
inline void getrs(char t, fint n, fint nrhs, const float* a, fint lda, const fint* ipiv, float* b, fint ldb, fint* info) { sgetrs_(&t, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1); }
inline void getrs(char t, fint n, fint nrhs, const double* a, fint lda, const fint* ipiv, double* b, fint ldb, fint* info) { dgetrs_(&t, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1); }
inline void getrs(char t, fint n, fint nrhs, const c64* a, fint lda, const fint* ipiv, c64* b, fint ldb, fint* info) { cgetrs_(&t, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1); }
inline void getrs(char t, fint n, fint nrhs, const c128* a, fint lda, const fint* ipiv, c128* b, fint ldb, fint* info) { zgetrs_(&t, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1); }
// clang-format on

// The SVD and eigensolver drivers differ in their argument lists between the
// real and complex variants (rwork): kernels call the extern "C" functions
// directly, with a workspace query (lwork = -1) first.

// ---- composite part (matrix_exp) ----
// clang-format off
#define TF_GEMM(T, f)                                                                          \
  inline void gemm(char ta, char tb, fint m, fint n, fint k, T alpha, const T* a, fint lda,    \
                   const T* b, fint ldb, T beta, T* c, fint ldc) {                             \
    f(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);                   \
  }
TF_GEMM(float, sgemm_)
TF_GEMM(double, dgemm_)
TF_GEMM(c64, cgemm_)
TF_GEMM(c128, zgemm_)
#undef TF_GEMM
// clang-format on

}  // namespace tenferro::linalg::lapack
