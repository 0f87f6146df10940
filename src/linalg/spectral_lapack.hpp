#pragma once
// Uniform wrappers over the SVD and eigensolver drivers (whose real and
// complex argument lists differ): gesdd and heevd query the workspace once
// per shape and LapackWorkspace (leased from the runtime-owned pool of
// workspace.hpp) and return LAPACK's info. Private to src/linalg/.

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "linalg/lapack.hpp"
#include "linalg/workspace.hpp"

namespace tenferro::linalg::lapack {

template <class T>
struct real_type {
  using type = T;
};
template <class R>
struct real_type<std::complex<R>> {
  using type = R;
};
template <class T>
using real_t = typename real_type<T>::type;
template <class T>
inline constexpr bool is_complex_v = !std::is_same_v<T, real_t<T>>;

template <class T>
fint work_size(const T& w) {
  return std::max<fint>(1, static_cast<fint>(std::real(w)));
}

// All elements of a compact m x n matrix finite.
template <class T>
bool all_finite(const T* a, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) {
    if (!std::isfinite(std::real(a[i])) || !std::isfinite(std::imag(a[i]))) return false;
  }
  return true;
}

// Reusable workspace of the SVD and eigensolver drivers: a batch of small
// matrices runs one workspace query per (driver, shape) and workspace, not
// per matrix, and no allocation per matrix.
template <class T>
struct LapackWorkspace {
  struct Key {
    char job = 0, uplo = 0;
    fint m = -1, n = -1;
    bool operator==(const Key&) const = default;
  };
  Key key;  // the shape whose sizes below are known
  fint lwork = 0, lrwork = 0, liwork = 0;
  std::vector<T> work;
  std::vector<real_t<T>> rwork;
  std::vector<fint> iwork;

  void reserve() {
    if (work.size() < static_cast<std::size_t>(lwork)) work.resize(static_cast<std::size_t>(lwork));
    if (rwork.size() < static_cast<std::size_t>(lrwork)) {
      rwork.resize(static_cast<std::size_t>(lrwork));
    }
    if (iwork.size() < static_cast<std::size_t>(liwork)) {
      iwork.resize(static_cast<std::size_t>(liwork));
    }
  }
  void trim() {
    const std::size_t bytes = work.capacity() * sizeof(T) + rwork.capacity() * sizeof(real_t<T>) +
                              iwork.capacity() * sizeof(fint);
    if (bytes > detail::kKeepBytes) {
      work = {};
      rwork = {};
      iwork = {};
    }
  }
};

// clang-format off
inline void gesdd_raw(const char* j, const fint* m, const fint* n, float* a, const fint* lda, float* s, float* u, const fint* ldu, float* vt, const fint* ldvt, float* w, const fint* lw, float*, fint* iw, fint* info) { sgesdd_(j, m, n, a, lda, s, u, ldu, vt, ldvt, w, lw, iw, info, 1); }
inline void gesdd_raw(const char* j, const fint* m, const fint* n, double* a, const fint* lda, double* s, double* u, const fint* ldu, double* vt, const fint* ldvt, double* w, const fint* lw, double*, fint* iw, fint* info) { dgesdd_(j, m, n, a, lda, s, u, ldu, vt, ldvt, w, lw, iw, info, 1); }
inline void gesdd_raw(const char* j, const fint* m, const fint* n, c64* a, const fint* lda, float* s, c64* u, const fint* ldu, c64* vt, const fint* ldvt, c64* w, const fint* lw, float* rw, fint* iw, fint* info) { cgesdd_(j, m, n, a, lda, s, u, ldu, vt, ldvt, w, lw, rw, iw, info, 1); }
inline void gesdd_raw(const char* j, const fint* m, const fint* n, c128* a, const fint* lda, double* s, c128* u, const fint* ldu, c128* vt, const fint* ldvt, c128* w, const fint* lw, double* rw, fint* iw, fint* info) { zgesdd_(j, m, n, a, lda, s, u, ldu, vt, ldvt, w, lw, rw, iw, info, 1); }
// clang-format on

/// SVD of the compact m x n matrix a (destroyed): s (min(m, n)), u and vt as
/// for jobz ('N', 'S' or 'A'). m, n > 0.
template <class T>
fint gesdd(LapackWorkspace<T>& ws, char jobz, fint m, fint n, T* a, real_t<T>* s, T* u, fint ldu,
           T* vt, fint ldvt) {
  const fint mn = std::min(m, n), mx = std::max(m, n);
  fint info = 0;
  const typename LapackWorkspace<T>::Key key{jobz, 0, m, n};
  if (!(ws.key == key)) {
    ws.key = {};
    ws.liwork = 8 * mn;
    ws.lrwork = 1;
    if constexpr (is_complex_v<T>) {
      const std::int64_t lr =
          jobz == 'N'
              ? 7 * std::int64_t{mn}
              : std::max<std::int64_t>(5 * std::int64_t{mn} * mn + 5 * mn,
                                       2 * std::int64_t{mx} * mn + 2 * std::int64_t{mn} * mn + mn);
      ws.lrwork = static_cast<fint>(std::max<std::int64_t>(1, lr));
    }
    ws.lwork = 0;
    ws.reserve();
    fint lwork = -1;
    T q{};
    gesdd_raw(&jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, &q, &lwork, ws.rwork.data(),
              ws.iwork.data(), &info);
    if (info != 0) return info;
    ws.lwork = work_size(q);
    ws.key = key;
  }
  ws.reserve();
  fint lwork = ws.lwork;
  gesdd_raw(&jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, ws.work.data(), &lwork, ws.rwork.data(),
            ws.iwork.data(), &info);
  return info;
}

/// Eigenvalues (ascending) and, for jobz 'V', eigenvectors (in a) of the
/// Hermitian n x n matrix a, reading the `uplo` triangle. n > 0.
template <class T>
fint heevd(LapackWorkspace<T>& ws, char jobz, char uplo, fint n, T* a, real_t<T>* w) {
  using R = real_t<T>;
  fint info = 0, lwork = -1, liwork = -1, lrwork = -1;
  const auto call = [&](T* work, R* rwork, fint* iwork) {
    if constexpr (std::is_same_v<T, float>) {
      ssyevd_(&jobz, &uplo, &n, a, &n, w, work, &lwork, iwork, &liwork, &info, 1, 1);
    } else if constexpr (std::is_same_v<T, double>) {
      dsyevd_(&jobz, &uplo, &n, a, &n, w, work, &lwork, iwork, &liwork, &info, 1, 1);
    } else if constexpr (std::is_same_v<T, c64>) {
      cheevd_(&jobz, &uplo, &n, a, &n, w, work, &lwork, rwork, &lrwork, iwork, &liwork, &info, 1,
              1);
    } else {
      zheevd_(&jobz, &uplo, &n, a, &n, w, work, &lwork, rwork, &lrwork, iwork, &liwork, &info, 1,
              1);
    }
  };
  const typename LapackWorkspace<T>::Key key{jobz, uplo, n, n};
  if (!(ws.key == key)) {
    ws.key = {};
    T q{};
    fint iq = 0;
    R rq{};
    call(&q, &rq, &iq);
    if (info != 0) return info;
    ws.lwork = work_size(q);
    ws.liwork = std::max<fint>(1, iq);
    ws.lrwork = std::max<fint>(1, static_cast<fint>(rq));
    ws.key = key;
  }
  ws.reserve();
  lwork = ws.lwork;
  liwork = ws.liwork;
  lrwork = ws.lrwork;
  call(ws.work.data(), ws.rwork.data(), ws.iwork.data());
  return info;
}

/// Eigenvalues w (complex, n) and, when `vectors`, right eigenvectors v
/// (complex n x n, unit 2-norm, largest component real) of the general n x n
/// matrix a (destroyed). n > 0. The real drivers' wr, wi and packed vectors
/// live in ws.rwork.
template <class T>
fint geev(LapackWorkspace<T>& ws, bool vectors, fint n, T* a, std::complex<real_t<T>>* w,
          std::complex<real_t<T>>* v) {
  using R = real_t<T>;
  using C = std::complex<R>;
  const char jl = 'N', jr = vectors ? 'V' : 'N';
  fint info = 0, lwork = -1, one = 1;
  const fint ldvr = vectors ? n : 1;
  T dummy{};
  R* wr = nullptr;
  R* wi = nullptr;
  R* vr = nullptr;
  const auto call = [&](T* work) {
    if constexpr (std::is_same_v<T, c64>) {
      cgeev_(&jl, &jr, &n, a, &n, w, &dummy, &one, vectors ? v : &dummy, &ldvr, work, &lwork,
             ws.rwork.data(), &info, 1, 1);
    } else if constexpr (std::is_same_v<T, c128>) {
      zgeev_(&jl, &jr, &n, a, &n, w, &dummy, &one, vectors ? v : &dummy, &ldvr, work, &lwork,
             ws.rwork.data(), &info, 1, 1);
    } else if constexpr (std::is_same_v<T, float>) {
      sgeev_(&jl, &jr, &n, a, &n, wr, wi, &dummy, &one, vr, &ldvr, work, &lwork, &info, 1, 1);
    } else {
      dgeev_(&jl, &jr, &n, a, &n, wr, wi, &dummy, &one, vr, &ldvr, work, &lwork, &info, 1, 1);
    }
  };
  const typename LapackWorkspace<T>::Key key{jr, 'E', n, n};
  if (!(ws.key == key)) {
    ws.key = {};
    ws.lwork = 0;
    ws.liwork = 0;
    ws.lrwork = is_complex_v<T> ? 2 * n : 2 * n + (vectors ? n * n : 1);
    ws.reserve();
    if constexpr (!is_complex_v<T>) {
      wr = ws.rwork.data(), wi = wr + n, vr = wi + n;
    }
    T q{};
    call(&q);
    if (info != 0) return info;
    ws.lwork = work_size(q);
    ws.key = key;
  }
  ws.reserve();
  if constexpr (!is_complex_v<T>) {
    wr = ws.rwork.data(), wi = wr + n, vr = wi + n;
  }
  lwork = ws.lwork;
  call(ws.work.data());
  if constexpr (!is_complex_v<T>) {
    if (info != 0) return info;
    for (fint j = 0; j < n; ++j) w[j] = C(wr[j], wi[j]);
    if (vectors) {
      // Real geev packs a complex pair (wi(j) > 0) as columns j (real) and j+1 (imaginary).
      for (fint j = 0; j < n; ++j) {
        const R* c = vr + static_cast<std::size_t>(j) * n;
        C* o = v + static_cast<std::size_t>(j) * n;
        if (wi[j] == R(0) || j + 1 == n) {
          for (fint i = 0; i < n; ++i) o[i] = C(c[i], 0);
        } else {
          const R* d = c + n;
          C* o2 = o + n;
          for (fint i = 0; i < n; ++i) {
            o[i] = C(c[i], d[i]);
            o2[i] = C(c[i], -d[i]);
          }
          ++j;
        }
      }
    }
  }
  return info;
}

}  // namespace tenferro::linalg::lapack
