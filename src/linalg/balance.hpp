#pragma once
// Power-of-two balancing around LAPACK's LU routines. OpenBLAS's getrf and
// its triangular solves multiply by the reciprocal of a pivot, which
// overflows for a subnormal pivot (A = diag(1e-310, 1e-310) factored into
// NaNs), and a matrix near the overflow threshold can overflow inside the
// elimination. A matrix whose largest entry lies outside [2^(emin/2),
// 2^(emax/2)] is therefore scaled by 2^e (exact: only exponents change) so
// that its largest entry is in [0.5, 1), factored or solved, and scaled back:
// LU(2^e A) = P L (2^e U), and A X = B gives X = 2^e (2^e A)^-1 B. Pivoting
// is scale-invariant, so the factors equal getrf's wherever getrf's are
// finite. Matrices in the ordinary range are not touched.

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <vector>

#include "linalg/lapack.hpp"
#include "linalg/spectral_lapack.hpp"

namespace tenferro::linalg::balance {

// The real type of T: lapack::real_t (spectral_lapack.hpp).
using lapack::real_t;

template <class T>
real_t<T> magnitude(const T& v) {
  if constexpr (std::is_same_v<T, real_t<T>>) {
    return std::abs(v);
  } else {
    return std::max(std::abs(v.real()), std::abs(v.imag()));
  }
}

template <class T>
T scaled(const T& v, int e) {
  if constexpr (std::is_same_v<T, real_t<T>>) {
    return std::ldexp(v, e);
  } else {
    return T(std::ldexp(v.real(), e), std::ldexp(v.imag(), e));
  }
}

/// The exponent e that brings the largest entry of the m x n matrix A
/// (leading dimension lda; its upper triangle only when `upper`) into [0.5, 1)
/// when that entry lies outside the safe range, else 0. Zero, infinite and
/// NaN matrices are not balanced.
template <class T>
int exponent(const T* a, std::int64_t m, std::int64_t n, std::int64_t lda, bool upper = false) {
  using R = real_t<T>;
  R amax(0);
  for (std::int64_t j = 0; j < n; ++j) {
    const std::int64_t rows = upper ? std::min(j + 1, m) : m;
    for (std::int64_t i = 0; i < rows; ++i) amax = std::max(amax, magnitude(a[i + j * lda]));
  }
  if (!(amax > R(0)) || !std::isfinite(amax)) return 0;
  constexpr int lo = std::numeric_limits<R>::min_exponent / 2;
  constexpr int hi = std::numeric_limits<R>::max_exponent / 2;
  const int ex = std::ilogb(amax) + 1;  // amax in [2^(ex-1), 2^ex)
  return ex < lo || ex > hi ? -ex : 0;
}

/// A *= 2^e over the m x n matrix (its upper triangle only when `upper`).
template <class T>
void scale(T* a, std::int64_t m, std::int64_t n, std::int64_t lda, int e, bool upper = false) {
  for (std::int64_t j = 0; j < n; ++j) {
    const std::int64_t rows = upper ? std::min(j + 1, m) : m;
    for (std::int64_t i = 0; i < rows; ++i) a[i + j * lda] = scaled(a[i + j * lda], e);
  }
}

/// getrf on the m x n matrix A, balanced as above; the factors are those of A.
/// Returns the exponent e used (0: A was factored as given).
template <class T>
int getrf(std::int64_t m, std::int64_t n, T* a, std::int64_t lda, lapack::fint* piv,
          lapack::fint* info) {
  const int e = exponent(a, m, n, lda);
  if (e != 0) scale(a, m, n, lda, e);
  lapack::getrf(static_cast<lapack::fint>(m), static_cast<lapack::fint>(n), a,
                static_cast<lapack::fint>(lda), piv, info);
  if (e != 0) scale(a, std::min(m, n), n, lda, -e, /*upper=*/true);  // U back; L is scale-free
  return e;
}

/// getrs with the packed factors of an n x n A (trans 'N', 'T' or 'C') on the
/// n x k right-hand sides B, balanced as above when U is out of range (a copy
/// of the factors is scaled; B is scaled back in place).
template <class T>
void getrs(char trans, std::int64_t n, std::int64_t k, const T* a, std::int64_t lda,
           const lapack::fint* piv, T* b, std::int64_t ldb, lapack::fint* info) {
  const int e = exponent(a, n, n, lda, /*upper=*/true);
  if (e == 0) {
    lapack::getrs(trans, static_cast<lapack::fint>(n), static_cast<lapack::fint>(k), a,
                  static_cast<lapack::fint>(lda), piv, b, static_cast<lapack::fint>(ldb), info);
    return;
  }
  std::vector<T> f(static_cast<std::size_t>(n * n));
  for (std::int64_t j = 0; j < n; ++j) std::copy(a + j * lda, a + j * lda + n, f.data() + j * n);
  scale(f.data(), n, n, n, e, /*upper=*/true);
  lapack::getrs(trans, static_cast<lapack::fint>(n), static_cast<lapack::fint>(k), f.data(),
                static_cast<lapack::fint>(n), piv, b, static_cast<lapack::fint>(ldb), info);
  scale(b, n, k, ldb, e);
}

}  // namespace tenferro::linalg::balance
