// A guard around the complex matrix-vector products ScaLAPACK calls.
//
// OpenBLAS 0.3.21 (Debian 12) reads past the end of x in cgemv_ / zgemv_
// (trans 'N', e.g. m = 2, n = 1, lda > m: one element after the last):
// OpenBLAS issue #4013, fixed upstream in later releases. ScaLAPACK's
// p?gemv hands the BLAS a copy of x in a buffer of exactly the vector's
// size (PB_CInV), so p?gebrd (the SVD), p?hetrd (eigh) and the other
// routines that reduce by Householder vectors read memory they do not own.
// Mostly that memory belongs to the next heap block and the values are not
// used; when the buffer ends a mapping the process dies with SIGSEGV, as
// the sanitizer build's allocator made it do in CI (dist::linalg::svd in
// c128, zgemv_n_COOPERLAKE).
//
// These definitions take the symbols' place for every caller in the
// process that resolves them through the dynamic linker (libscalapack,
// ELPA; the executable exports them because those libraries reference
// them): they copy x into a buffer with spare elements after it and call
// the BLAS's own routine (the next definition, dlsym RTLD_NEXT) on the
// copy with unit stride. The result is the same product: the copy is
// O(len(x)) against the product's O(m n). tests/distributed/
// gemv_guard_mpitest.cpp puts x against an unmapped page to show it.

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "distributed/scalapack.hpp"
#include "distributed/scalapack_api.hpp"

namespace tenferro::dist::detail {

void link_gemv_guard() {}

namespace {

using scalapack::fint;

/// Elements after the copy of x: more than a vector register's width of
/// the widest kernel reads.
constexpr std::size_t kSlack = 16;

template <class T>
using Gemv = void (*)(const char*, const fint*, const fint*, const T*, const T*, const fint*,
                      const T*, const fint*, const T*, T*, const fint*);

template <class T>
Gemv<T> next_gemv(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (f == nullptr) {
    // Only a BLAS linked statically into the same object could hide it, and
    // that does not link (two definitions).
    std::fprintf(stderr, "tenferro: no BLAS %s after tenferro's guard (dlsym: %s)\n", name,
                 dlerror());
    std::abort();
  }
  return reinterpret_cast<Gemv<T>>(f);
}

template <class T>
void guarded_gemv(Gemv<T> next, const char* trans, const fint* m, const fint* n, const T* alpha,
                  const T* a, const fint* lda, const T* x, const fint* incx, const T* beta, T* y,
                  const fint* incy) {
  const bool plain = *trans == 'N' || *trans == 'n';
  const fint len = plain ? *n : *m;
  if (*m <= 0 || *n <= 0 || *incx == 0) {
    next(trans, m, n, alpha, a, lda, x, incx, beta, y, incy);  // the BLAS's own checks
    return;
  }
  thread_local std::vector<T> copy;
  copy.assign(static_cast<std::size_t>(len) + kSlack, T(0));
  // BLAS order: element i at x[i * incx], or x[(len - 1 - i) * |incx|]
  // for a negative stride.
  const std::ptrdiff_t step = *incx;
  const T* first = step > 0 ? x : x + (static_cast<std::ptrdiff_t>(len) - 1) * -step;
  for (fint i = 0; i < len; ++i) copy[static_cast<std::size_t>(i)] = first[i * step];
  const fint one = 1;
  next(trans, m, n, alpha, a, lda, copy.data(), &one, beta, y, incy);
}

}  // namespace
}  // namespace tenferro::dist::detail

// The Fortran entry points ScaLAPACK and ELPA call, one per complex type.
#define TF_GUARDED_GEMV(T, f)                                                                  \
  extern "C" void f(const char* trans, const int* m, const int* n, const T* alpha, const T* a, \
                    const int* lda, const T* x, const int* incx, const T* beta, T* y,          \
                    const int* incy) {                                                         \
    using namespace tenferro::dist::detail;                                                    \
    static const Gemv<T> next = next_gemv<T>(#f);                                              \
    guarded_gemv(next, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);                    \
  }
TF_GUARDED_GEMV(tenferro::dist::scalapack::c64, cgemv_)
TF_GUARDED_GEMV(tenferro::dist::scalapack::c128, zgemv_)
#undef TF_GUARDED_GEMV
