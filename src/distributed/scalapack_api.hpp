#pragma once
// BLACS, PBLAS and ScaLAPACK through their Fortran (and BLACS's C)
// interface, as Debian's libscalapack-openmpi (2.2, BLACS inside) exports
// them: 32-bit integers, every argument by address, gfortran's hidden
// string lengths after all others (one size_t per character argument; the
// PBLAS, written in C, ignore them). Overloads per element type keep the
// kernels written once as templates; the drivers whose argument lists
// differ between real and complex (rwork) are called directly. LAPACK's
// ?bdsdc comes from the BLAS/LAPACK the linalg layer links.

#include <mpi.h>

#include <complex>
#include <cstddef>

namespace tenferro::dist::scalapack {

using c64 = std::complex<float>;
using c128 = std::complex<double>;
using fint = int;
using flen = std::size_t;

extern "C" {
// ---- BLACS (C interface) ----
void Cblacs_pinfo(int* mypnum, int* nprocs);
int Csys2blacs_handle(MPI_Comm comm);
void Cblacs_gridinit(int* context, const char* order, int nprow, int npcol);
void Cblacs_gridmap(int* context, int* usermap, int ldumap, int nprow, int npcol);
void Cblacs_gridinfo(int context, int* nprow, int* npcol, int* myrow, int* mycol);

// ---- tools ----
fint numroc_(const fint* n, const fint* nb, const fint* iproc, const fint* isrcproc,
             const fint* nprocs);
void descinit_(fint* desc, const fint* m, const fint* n, const fint* mb, const fint* nb,
               const fint* irsrc, const fint* icsrc, const fint* ictxt, const fint* lld,
               fint* info);

// ---- PBLAS: C = alpha op(A) op(B) + beta C ----
#define TF_PGEMM(T, f)                                                                           \
  void f(const char*, const char*, const fint*, const fint*, const fint*, const T*, const T*,    \
         const fint*, const fint*, const fint*, const T*, const fint*, const fint*, const fint*, \
         const T*, T*, const fint*, const fint*, const fint*, flen, flen);
TF_PGEMM(float, psgemm_)
TF_PGEMM(double, pdgemm_)
TF_PGEMM(c64, pcgemm_)
TF_PGEMM(c128, pzgemm_)
#undef TF_PGEMM

// ---- PBLAS: B = alpha op(A)^{-1} B (side 'L') or B op(A)^{-1} ('R'), A
// triangular ----
#define TF_PTRSM(T, f)                                                                           \
  void f(const char*, const char*, const char*, const char*, const fint*, const fint*, const T*, \
         const T*, const fint*, const fint*, const fint*, T*, const fint*, const fint*,          \
         const fint*, flen, flen, flen, flen);
TF_PTRSM(float, pstrsm_)
TF_PTRSM(double, pdtrsm_)
TF_PTRSM(c64, pctrsm_)
TF_PTRSM(c128, pztrsm_)
#undef TF_PTRSM

// ---- PBLAS: C = beta C + alpha op(A), op transpose (p?tran, p?tranu) or
// conjugate transpose (p?tranc); C [m, n], A [n, m] ----
#define TF_PTRAN(T, f)                                                                        \
  void f(const fint*, const fint*, const T*, const T*, const fint*, const fint*, const fint*, \
         const T*, T*, const fint*, const fint*, const fint*);
TF_PTRAN(float, pstran_)
TF_PTRAN(double, pdtran_)
TF_PTRAN(c64, pctranu_)
TF_PTRAN(c128, pztranu_)
TF_PTRAN(c64, pctranc_)
TF_PTRAN(c128, pztranc_)
#undef TF_PTRAN

// ---- SVD (LAPACK gesdd's route, scalapack_kernels.cpp): reduction to
// bidiagonal form B = Q^H A P, then applying Q and P^H (p?ormbr / p?unmbr)
// to the singular vectors of B ----
#define TF_PGEBRD(T, R, f)                                                                        \
  void f(const fint*, const fint*, T*, const fint*, const fint*, const fint*, R*, R*, T*, T*, T*, \
         const fint*, fint*);
TF_PGEBRD(float, float, psgebrd_)
TF_PGEBRD(double, double, pdgebrd_)
TF_PGEBRD(c64, float, pcgebrd_)
TF_PGEBRD(c128, double, pzgebrd_)
#undef TF_PGEBRD
#define TF_PORMBR(T, f)                                                                          \
  void f(const char*, const char*, const char*, const fint*, const fint*, const fint*, const T*, \
         const fint*, const fint*, const fint*, const T*, T*, const fint*, const fint*,          \
         const fint*, T*, const fint*, fint*, flen, flen, flen);
TF_PORMBR(float, psormbr_)
TF_PORMBR(double, pdormbr_)
TF_PORMBR(c64, pcunmbr_)
TF_PORMBR(c128, pzunmbr_)
#undef TF_PORMBR

// ---- LAPACK (serial): the SVD of a bidiagonal matrix by divide and
// conquer, run redundantly on every rank ----
void sbdsdc_(const char*, const char*, const fint*, float*, float*, float*, const fint*, float*,
             const fint*, float*, fint*, float*, fint*, fint*, flen, flen);
void dbdsdc_(const char*, const char*, const fint*, double*, double*, double*, const fint*, double*,
             const fint*, double*, fint*, double*, fint*, fint*, flen, flen);

// ---- Hermitian eigensolver (divide and conquer) ----
void pssyevd_(const char*, const char*, const fint*, float*, const fint*, const fint*, const fint*,
              float*, float*, const fint*, const fint*, const fint*, float*, const fint*, fint*,
              const fint*, fint*, flen, flen);
void pdsyevd_(const char*, const char*, const fint*, double*, const fint*, const fint*, const fint*,
              double*, double*, const fint*, const fint*, const fint*, double*, const fint*, fint*,
              const fint*, fint*, flen, flen);
void pcheevd_(const char*, const char*, const fint*, c64*, const fint*, const fint*, const fint*,
              float*, c64*, const fint*, const fint*, const fint*, c64*, const fint*, float*,
              const fint*, fint*, const fint*, fint*, flen, flen);
void pzheevd_(const char*, const char*, const fint*, c128*, const fint*, const fint*, const fint*,
              double*, c128*, const fint*, const fint*, const fint*, c128*, const fint*, double*,
              const fint*, fint*, const fint*, fint*, flen, flen);

// ---- QR ----
#define TF_PGEQRF(T, f)                                                                            \
  void f(const fint*, const fint*, T*, const fint*, const fint*, const fint*, T*, T*, const fint*, \
         fint*);
TF_PGEQRF(float, psgeqrf_)
TF_PGEQRF(double, pdgeqrf_)
TF_PGEQRF(c64, pcgeqrf_)
TF_PGEQRF(c128, pzgeqrf_)
#undef TF_PGEQRF
#define TF_PORGQR(T, f)                                                                    \
  void f(const fint*, const fint*, const fint*, T*, const fint*, const fint*, const fint*, \
         const T*, T*, const fint*, fint*);
TF_PORGQR(float, psorgqr_)
TF_PORGQR(double, pdorgqr_)
TF_PORGQR(c64, pcungqr_)
TF_PORGQR(c128, pzungqr_)
#undef TF_PORGQR

// ---- Cholesky ----
#define TF_PPOTRF(T, f) \
  void f(const char*, const fint*, T*, const fint*, const fint*, const fint*, fint*, flen);
TF_PPOTRF(float, pspotrf_)
TF_PPOTRF(double, pdpotrf_)
TF_PPOTRF(c64, pcpotrf_)
TF_PPOTRF(c128, pzpotrf_)
#undef TF_PPOTRF

// ---- general solve (LU with partial pivoting) ----
#define TF_PGESV(T, f)                                                                   \
  void f(const fint*, const fint*, T*, const fint*, const fint*, const fint*, fint*, T*, \
         const fint*, const fint*, const fint*, fint*);
TF_PGESV(float, psgesv_)
TF_PGESV(double, pdgesv_)
TF_PGESV(c64, pcgesv_)
TF_PGESV(c128, pzgesv_)
#undef TF_PGESV
}

// ---- overloads (one-based global indices IA = JA = 1: whole matrices) ----
// clang-format off
#define TF_PGEMM(T, f)                                                                          \
  inline void pgemm(char ta, char tb, fint m, fint n, fint k, T alpha, const T* a,              \
                    const fint* desca, const T* b, const fint* descb, T beta, T* c,             \
                    const fint* descc) {                                                        \
    const fint one = 1;                                                                         \
    f(&ta, &tb, &m, &n, &k, &alpha, a, &one, &one, desca, b, &one, &one, descb, &beta, c, &one, \
      &one, descc, 1, 1);                                                                       \
  }
TF_PGEMM(float, psgemm_)
TF_PGEMM(double, pdgemm_)
TF_PGEMM(c64, pcgemm_)
TF_PGEMM(c128, pzgemm_)
#undef TF_PGEMM

#define TF_PTRSM(T, f)                                                                          \
  inline void ptrsm(char side, char uplo, char ta, fint m, fint n, const T* a, const fint* desca, \
                    T* b, const fint* descb) {                                                    \
    const fint one = 1;                                                                           \
    const char diag = 'N';                                                                        \
    const T alpha(1);                                                                             \
    f(&side, &uplo, &ta, &diag, &m, &n, &alpha, a, &one, &one, desca, b, &one, &one, descb, 1, 1, \
      1, 1);                                                                                      \
  }
TF_PTRSM(float, pstrsm_)
TF_PTRSM(double, pdtrsm_)
TF_PTRSM(c64, pctrsm_)
TF_PTRSM(c128, pztrsm_)
#undef TF_PTRSM

#define TF_PTRAN(T, f, g)                                                                      \
  inline void ptran(bool conjugate, fint m, fint n, const T* a, const fint* desca, T* c,        \
                    const fint* descc) {                                                         \
    const fint one = 1;                                                                          \
    const T alpha(1), beta(0);                                                                   \
    (conjugate ? g : f)(&m, &n, &alpha, a, &one, &one, desca, &beta, c, &one, &one, descc);      \
  }
TF_PTRAN(float, pstran_, pstran_)
TF_PTRAN(double, pdtran_, pdtran_)
TF_PTRAN(c64, pctranu_, pctranc_)
TF_PTRAN(c128, pztranu_, pztranc_)
#undef TF_PTRAN

#define TF_PGEQRF(T, f)                                                                        \
  inline void pgeqrf(fint m, fint n, T* a, const fint* desca, T* tau, T* work, fint lwork,     \
                     fint* info) {                                                             \
    const fint one = 1;                                                                        \
    f(&m, &n, a, &one, &one, desca, tau, work, &lwork, info);                                  \
  }
TF_PGEQRF(float, psgeqrf_)
TF_PGEQRF(double, pdgeqrf_)
TF_PGEQRF(c64, pcgeqrf_)
TF_PGEQRF(c128, pzgeqrf_)
#undef TF_PGEQRF

#define TF_PORGQR(T, f)                                                                        \
  inline void porgqr(fint m, fint n, fint k, T* a, const fint* desca, const T* tau, T* work,   \
                     fint lwork, fint* info) {                                                 \
    const fint one = 1;                                                                        \
    f(&m, &n, &k, a, &one, &one, desca, tau, work, &lwork, info);                              \
  }
TF_PORGQR(float, psorgqr_)
TF_PORGQR(double, pdorgqr_)
TF_PORGQR(c64, pcungqr_)
TF_PORGQR(c128, pzungqr_)
#undef TF_PORGQR

#define TF_PGEBRD(T, R, f)                                                                     \
  inline void pgebrd(fint m, fint n, T* a, const fint* desca, R* d, R* e, T* tauq, T* taup,    \
                     T* work, fint lwork, fint* info) {                                        \
    const fint one = 1;                                                                        \
    f(&m, &n, a, &one, &one, desca, d, e, tauq, taup, work, &lwork, info);                     \
  }
TF_PGEBRD(float, float, psgebrd_)
TF_PGEBRD(double, double, pdgebrd_)
TF_PGEBRD(c64, float, pcgebrd_)
TF_PGEBRD(c128, double, pzgebrd_)
#undef TF_PGEBRD

#define TF_PORMBR(T, f)                                                                        \
  inline void pormbr(char vect, char side, char trans, fint m, fint n, fint k, const T* a,     \
                     const fint* desca, const T* tau, T* c, const fint* descc, T* work,        \
                     fint lwork, fint* info) {                                                 \
    const fint one = 1;                                                                        \
    f(&vect, &side, &trans, &m, &n, &k, a, &one, &one, desca, tau, c, &one, &one, descc, work, \
      &lwork, info, 1, 1, 1);                                                                  \
  }
TF_PORMBR(float, psormbr_)
TF_PORMBR(double, pdormbr_)
TF_PORMBR(c64, pcunmbr_)
TF_PORMBR(c128, pzunmbr_)
#undef TF_PORMBR

#define TF_BDSDC(R, f)                                                                         \
  inline void bdsdc(char uplo, fint n, R* d, R* e, R* u, fint ldu, R* vt, fint ldvt, R* work,  \
                    fint* iwork, fint* info) {                                                 \
    const char compq = 'I';                                                                    \
    R q = 0;                                                                                   \
    fint iq = 0;                                                                               \
    f(&uplo, &compq, &n, d, e, u, &ldu, vt, &ldvt, &q, &iq, work, iwork, info, 1, 1);          \
  }
TF_BDSDC(float, sbdsdc_)
TF_BDSDC(double, dbdsdc_)
#undef TF_BDSDC

#define TF_PPOTRF(T, f)                                                                        \
  inline void ppotrf(char uplo, fint n, T* a, const fint* desca, fint* info) {                 \
    const fint one = 1;                                                                        \
    f(&uplo, &n, a, &one, &one, desca, info, 1);                                               \
  }
TF_PPOTRF(float, pspotrf_)
TF_PPOTRF(double, pdpotrf_)
TF_PPOTRF(c64, pcpotrf_)
TF_PPOTRF(c128, pzpotrf_)
#undef TF_PPOTRF

#define TF_PGESV(T, f)                                                                         \
  inline void pgesv(fint n, fint nrhs, T* a, const fint* desca, fint* ipiv, T* b,              \
                    const fint* descb, fint* info) {                                           \
    const fint one = 1;                                                                        \
    f(&n, &nrhs, a, &one, &one, desca, ipiv, b, &one, &one, descb, info);                      \
  }
TF_PGESV(float, psgesv_)
TF_PGESV(double, pdgesv_)
TF_PGESV(c64, pcgesv_)
TF_PGESV(c128, pzgesv_)
#undef TF_PGESV
// clang-format on

}  // namespace tenferro::dist::scalapack
