// Groups 9 and 10 of the peer suite: linalg forward at 256 and batched 8x8,
// and reverse AD at 256 (f64). Our results are checked before timing against
// references that do not go through tenferro: naive loops (Cholesky,
// Gaussian elimination, Householder QR) or a different LAPACK driver than
// ours (dgesvd for our dgesdd, dsyev for our dsyevd). The floor column is
// the same LAPACK driver called directly on a prepared copy (impl "lapack").

#include "linalg_cases.hpp"

#include <cmath>
#include <complex>
#include <cstdio>
#include <vector>

#include "tenferro/ad/eager_ops.hpp"
#include "tenferro/ad/transforms.hpp"
#include "tenferro/linalg/linalg.hpp"
#include "tenferro/tenferro.hpp"

namespace bench_linalg {

using namespace tenferro;
namespace la = tenferro::linalg;

extern "C" {
void dpotrf_(const char*, const int*, double*, const int*, int*, std::size_t);
void dgesv_(const int*, const int*, double*, const int*, int*, double*, const int*, int*);
void dgesdd_(const char*, const int*, const int*, double*, const int*, double*, double*, const int*,
             double*, const int*, double*, const int*, int*, int*, std::size_t);
void dgesvd_(const char*, const char*, const int*, const int*, double*, const int*, double*,
             double*, const int*, double*, const int*, double*, const int*, int*, std::size_t,
             std::size_t);
void dsyevd_(const char*, const char*, const int*, double*, const int*, double*, double*,
             const int*, int*, const int*, int*, std::size_t, std::size_t);
void dsyev_(const char*, const char*, const int*, double*, const int*, double*, double*, const int*,
            int*, std::size_t, std::size_t);
void dgeqrf_(const int*, const int*, double*, const int*, double*, double*, const int*, int*);
void dorgqr_(const int*, const int*, const int*, double*, const int*, const double*, double*,
             const int*, int*);
using zd = std::complex<double>;
void zpotrf_(const char*, const int*, zd*, const int*, int*, std::size_t);
void zgesv_(const int*, const int*, zd*, const int*, int*, zd*, const int*, int*);
void zgesdd_(const char*, const int*, const int*, zd*, const int*, double*, zd*, const int*, zd*,
             const int*, zd*, const int*, double*, int*, int*, std::size_t);
void zgesvd_(const char*, const char*, const int*, const int*, zd*, const int*, double*, zd*,
             const int*, zd*, const int*, zd*, const int*, double*, int*, std::size_t, std::size_t);
void zheevd_(const char*, const char*, const int*, zd*, const int*, double*, zd*, const int*,
             double*, const int*, int*, const int*, int*, std::size_t, std::size_t);
void zheev_(const char*, const char*, const int*, zd*, const int*, double*, zd*, const int*,
            double*, int*, std::size_t, std::size_t);
void zgeqrf_(const int*, const int*, zd*, const int*, zd*, zd*, const int*, int*);
void zungqr_(const int*, const int*, const int*, zd*, const int*, const zd*, zd*, const int*, int*);
}

namespace {

using Mat = std::vector<double>;  // column-major n x n (or n x k)

// The inputs (also built by the peers, bench/python/peers.py):
//   general(n, off) = input(n x n, off) + n I   (well conditioned);
//   spd(n, off)     = M M^T + n I with M = input(n x n, off).
Mat general(std::int64_t n, std::int64_t off) {
  Mat a = bench::input_vector(n * n, off);
  for (std::int64_t i = 0; i < n; ++i) a[i + i * n] += static_cast<double>(n);
  return a;
}
Mat spd(std::int64_t n, std::int64_t off) {
  const Mat m = bench::input_vector(n * n, off);
  Mat s(n * n, 0.0);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t k = 0; k < n; ++k)
      for (std::int64_t i = 0; i < n; ++i) s[i + j * n] += m[i + k * n] * m[j + k * n];
  for (std::int64_t i = 0; i < n; ++i) s[i + i * n] += static_cast<double>(n);
  return s;
}

using CMat = std::vector<zd>;  // column-major complex

double conj_of(double v) {
  return v;
}
zd conj_of(zd v) {
  return std::conj(v);
}

// Lower L with A = L L^H (real or complex).
template <class T>
std::vector<T> naive_cholesky(const std::vector<T>& a, std::int64_t n) {
  std::vector<T> l(n * n, T(0));
  for (std::int64_t j = 0; j < n; ++j) {
    T d = a[j + j * n];
    for (std::int64_t k = 0; k < j; ++k) d -= l[j + k * n] * conj_of(l[j + k * n]);
    l[j + j * n] = T(std::sqrt(std::real(d)));
    for (std::int64_t i = j + 1; i < n; ++i) {
      T s = a[i + j * n];
      for (std::int64_t k = 0; k < j; ++k) s -= l[i + k * n] * conj_of(l[j + k * n]);
      l[i + j * n] = s / l[j + j * n];
    }
  }
  return l;
}

// Gaussian elimination with partial pivoting: A X = B (B is n x k).
template <class T>
std::vector<T> naive_solve(std::vector<T> a, std::vector<T> b, std::int64_t n, std::int64_t k) {
  for (std::int64_t c = 0; c < n; ++c) {
    std::int64_t p = c;
    for (std::int64_t r = c + 1; r < n; ++r)
      if (std::abs(a[r + c * n]) > std::abs(a[p + c * n])) p = r;
    for (std::int64_t j = 0; j < n; ++j) std::swap(a[c + j * n], a[p + j * n]);
    for (std::int64_t j = 0; j < k; ++j) std::swap(b[c + j * n], b[p + j * n]);
    for (std::int64_t r = c + 1; r < n; ++r) {
      const T f = a[r + c * n] / a[c + c * n];
      for (std::int64_t j = c; j < n; ++j) a[r + j * n] -= f * a[c + j * n];
      for (std::int64_t j = 0; j < k; ++j) b[r + j * n] -= f * b[c + j * n];
    }
  }
  for (std::int64_t j = 0; j < k; ++j)
    for (std::int64_t r = n - 1; r >= 0; --r) {
      T s = b[r + j * n];
      for (std::int64_t c = r + 1; c < n; ++c) s -= a[r + c * n] * b[c + j * n];
      b[r + j * n] = s / a[r + r * n];
    }
  return b;
}

// R of a Householder QR with LAPACK's conventions (dlarfg): no reflection
// when the part below the diagonal is zero, else beta = -sign(alpha) |x|.
Mat naive_qr_r(Mat a, std::int64_t n) {
  for (std::int64_t c = 0; c < n; ++c) {
    double below = 0;
    for (std::int64_t r = c + 1; r < n; ++r) below += a[r + c * n] * a[r + c * n];
    if (below == 0) continue;
    const double norm = std::sqrt(below + a[c + c * n] * a[c + c * n]);
    const double alpha = a[c + c * n];
    const double beta = alpha >= 0 ? -norm : norm;
    std::vector<double> v(n, 0.0);
    v[c] = alpha - beta;
    for (std::int64_t r = c + 1; r < n; ++r) v[r] = a[r + c * n];
    double vv = 0;
    for (std::int64_t r = c; r < n; ++r) vv += v[r] * v[r];
    if (vv == 0) continue;
    for (std::int64_t j = c; j < n; ++j) {
      double s = 0;
      for (std::int64_t r = c; r < n; ++r) s += v[r] * a[r + j * n];
      s = 2 * s / vv;
      for (std::int64_t r = c; r < n; ++r) a[r + j * n] -= s * v[r];
    }
  }
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = j + 1; i < n; ++i) a[i + j * n] = 0;
  return a;
}

// Singular values by dgesvd (QR iteration), eigenvalues by dsyev: other
// drivers than ours.
Mat ref_svdvals(Mat a, int n) {
  Mat s(n), work(1);
  int lwork = -1, info = 0;
  dgesvd_("N", "N", &n, &n, a.data(), &n, s.data(), nullptr, &n, nullptr, &n, work.data(), &lwork,
          &info, 1, 1);
  lwork = static_cast<int>(work[0]);
  work.resize(lwork);
  dgesvd_("N", "N", &n, &n, a.data(), &n, s.data(), nullptr, &n, nullptr, &n, work.data(), &lwork,
          &info, 1, 1);
  return s;
}
Mat ref_eigvalsh(Mat a, int n) {
  Mat w(n), work(1);
  int lwork = -1, info = 0;
  dsyev_("N", "L", &n, a.data(), &n, w.data(), work.data(), &lwork, &info, 1, 1);
  lwork = static_cast<int>(work[0]);
  work.resize(lwork);
  dsyev_("N", "L", &n, a.data(), &n, w.data(), work.data(), &lwork, &info, 1, 1);
  return w;
}

Tensor tensor_of(const Mat& m, Shape shape) {
  return Tensor::from_col_major(shape, m);
}

// Concatenates per-matrix column-major blocks into one [n, n, batch] vector.
Mat batch_of(const std::function<Mat(std::int64_t)>& f, std::int64_t batch) {
  Mat out;
  for (std::int64_t b = 0; b < batch; ++b) {
    Mat m = f(b);
    out.insert(out.end(), m.begin(), m.end());
  }
  return out;
}

// ---- c128 inputs and references -------------------------------------------------------

// Complex input number `off` of `count` elements: the interleaved real and
// imaginary parts are bench::input_vector(2 count, off) (the peers view the
// same doubles as complex128).
CMat complex_input(std::int64_t count, std::int64_t off) {
  const Mat v = bench::input_vector(2 * count, off);
  CMat c(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) c[i] = zd(v[2 * i], v[2 * i + 1]);
  return c;
}
// cgeneral(n, off) = complex input + n I; herm(n, off) = M M^H + n I.
CMat cgeneral(std::int64_t n, std::int64_t off) {
  CMat a = complex_input(n * n, off);
  for (std::int64_t i = 0; i < n; ++i) a[i + i * n] += static_cast<double>(n);
  return a;
}
CMat herm(std::int64_t n, std::int64_t off) {
  const CMat m = complex_input(n * n, off);
  CMat s(n * n, zd(0));
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t k = 0; k < n; ++k) {
      const zd mjk = std::conj(m[j + k * n]);
      for (std::int64_t i = 0; i < n; ++i) s[i + j * n] += m[i + k * n] * mjk;
    }
  for (std::int64_t i = 0; i < n; ++i) s[i + i * n] += static_cast<double>(n);
  return s;
}
// Part q % 2 of complex element q / 2 (the flat double memory of a result).
double part(const CMat& m, std::int64_t q) {
  return q % 2 == 0 ? m[q / 2].real() : m[q / 2].imag();
}

// R of a complex Householder QR with LAPACK's conventions (zlarfg: a real
// beta = -sign(Re alpha) |x|, tau = (beta - alpha) / beta, v = x / (alpha -
// beta) with v_0 = 1; zgeqr2 applies H^H = I - conj(tau) v v^H).
CMat naive_qr_r_c(CMat a, std::int64_t n) {
  for (std::int64_t c = 0; c < n; ++c) {
    double below = 0;
    for (std::int64_t r = c + 1; r < n; ++r) below += std::norm(a[r + c * n]);
    const zd alpha = a[c + c * n];
    if (below == 0 && alpha.imag() == 0) continue;
    const double norm = std::sqrt(below + std::norm(alpha));
    const double beta = alpha.real() >= 0 ? -norm : norm;
    const zd tau((beta - alpha.real()) / beta, -alpha.imag() / beta);
    CMat v(n, zd(0));
    v[c] = 1;
    for (std::int64_t r = c + 1; r < n; ++r) v[r] = a[r + c * n] / (alpha - beta);
    for (std::int64_t j = c + 1; j < n; ++j) {
      zd w = 0;
      for (std::int64_t r = c; r < n; ++r) w += std::conj(v[r]) * a[r + j * n];
      for (std::int64_t r = c; r < n; ++r) a[r + j * n] -= std::conj(tau) * v[r] * w;
    }
    a[c + c * n] = beta;
  }
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = j + 1; i < n; ++i) a[i + j * n] = 0;
  return a;
}

// Singular values by zgesvd, eigenvalues by zheev: other drivers than ours.
Mat ref_svdvals_c(CMat a, int n) {
  Mat s(n), rwork(5 * n);
  CMat work(1);
  int lwork = -1, info = 0;
  zgesvd_("N", "N", &n, &n, a.data(), &n, s.data(), nullptr, &n, nullptr, &n, work.data(), &lwork,
          rwork.data(), &info, 1, 1);
  lwork = static_cast<int>(work[0].real());
  work.resize(lwork);
  zgesvd_("N", "N", &n, &n, a.data(), &n, s.data(), nullptr, &n, nullptr, &n, work.data(), &lwork,
          rwork.data(), &info, 1, 1);
  return s;
}
Mat ref_eigvalsh_c(CMat a, int n) {
  Mat w(n), rwork(3 * n);
  CMat work(1);
  int lwork = -1, info = 0;
  zheev_("N", "L", &n, a.data(), &n, w.data(), work.data(), &lwork, rwork.data(), &info, 1, 1);
  lwork = static_cast<int>(work[0].real());
  work.resize(lwork);
  zheev_("N", "L", &n, a.data(), &n, w.data(), work.data(), &lwork, rwork.data(), &info, 1, 1);
  return w;
}

// ---- AD references (no tenferro, no AD) ----------------------------------------------

// c = a b (n x n, column-major).
Mat naive_matmul(const Mat& a, const Mat& b, std::int64_t n) {
  Mat c(n * n, 0.0);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t k = 0; k < n; ++k) {
      const double bkj = b[k + j * n];
      for (std::int64_t i = 0; i < n; ++i) c[i + j * n] += a[i + k * n] * bkj;
    }
  return c;
}
Mat transposed(const Mat& a, std::int64_t n) {
  Mat t(n * n);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) t[i + j * n] = a[j + i * n];
  return t;
}

// Q and R of square A by dgeqrf + dorgqr.
std::pair<Mat, Mat> lapack_qr(const Mat& a, int n) {
  Mat q = a, tau(n), work(std::size_t(64) * n);
  int lwork = 64 * n, info = 0;
  dgeqrf_(&n, &n, q.data(), &n, tau.data(), work.data(), &lwork, &info);
  Mat r = q;
  for (int j = 0; j < n; ++j)
    for (int i = j + 1; i < n; ++i) r[i + j * n] = 0;
  dorgqr_(&n, &n, &n, q.data(), &n, tau.data(), work.data(), &lwork, &info);
  return {q, r};
}

// The gradient of sum(Q) + sum(R) for square, invertible A = Q R, from
// dA = dQ R + Q dR: with X = Q^T dA R^{-1}, Q^T dQ = tril(X, -1) -
// tril(X, -1)^T and dR = (X - Q^T dQ) R, so for cotangents GQ, GR
//   gA = Q K R^{-T},  K = GR R^T + tril(B - B^T, -1),  B = Q^T GQ - GR R^T.
Mat qr_sum_grad(const Mat& q, const Mat& r, std::int64_t n) {
  const Mat ones(n * n, 1.0);
  Mat gr(n * n, 0.0);  // the cotangent of R restricted to its upper triangle
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i <= j; ++i) gr[i + j * n] = 1.0;
  const Mat grrt = naive_matmul(gr, transposed(r, n), n);
  const Mat qtg = naive_matmul(transposed(q, n), ones, n);
  Mat k = grrt;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = j + 1; i < n; ++i) {
      const double bij = qtg[i + j * n] - grrt[i + j * n];
      const double bji = qtg[j + i * n] - grrt[j + i * n];
      k[i + j * n] += bij - bji;
    }
  const Mat y = naive_matmul(q, k, n);  // gA R^T = Y: R gA^T = Y^T, back substitution
  Mat g(n * n);
  for (std::int64_t row = 0; row < n; ++row)  // column `row` of gA^T
    for (std::int64_t i = n - 1; i >= 0; --i) {
      double s = y[row + i * n];
      for (std::int64_t c = i + 1; c < n; ++c) s -= r[i + c * n] * g[row + c * n];
      g[row + i * n] = s / r[i + i * n];
    }
  return g;
}

// U V^T of the SVD by dgesvd (the gradient of sum(svdvals)).
Mat svd_uvt(Mat a, int n) {
  Mat s(n), u(n * n), vt(n * n), work(1);
  int lwork = -1, info = 0;
  dgesvd_("S", "S", &n, &n, a.data(), &n, s.data(), u.data(), &n, vt.data(), &n, work.data(),
          &lwork, &info, 1, 1);
  lwork = static_cast<int>(work[0]);
  work.resize(lwork);
  dgesvd_("S", "S", &n, &n, a.data(), &n, s.data(), u.data(), &n, vt.data(), &n, work.data(),
          &lwork, &info, 1, 1);
  return naive_matmul(u, vt, n);
}

double dot(const Mat& a, const Mat& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

}  // namespace

void run_cases(const bench::Options& o, CpuBackend& cpu, const Runner& run,
               const FloorRunner& floor) {
  const std::int64_t n = 256;
  const int ni = static_cast<int>(n);
  const std::string size = "256";

  // ---- group 9: forward at 256 -------------------------------------------------------
  {
    const Mat s = spd(n, 1);
    const Tensor S = tensor_of(s, {n, n});
    const Mat l = naive_cholesky(s, n);
    run(
        "cholesky", size, "", [&] { return la::cholesky(S, false, cpu); },
        [&](std::int64_t q) { return l[q]; });
    floor("cholesky", size, "", [&, s]() mutable {
      Mat c = s;
      int info = 0;
      dpotrf_("L", &ni, c.data(), &ni, &info, 1);
    });
  }
  for (std::int64_t k : {1, 16}) {
    const std::string variant = std::to_string(k) + "rhs";
    const Mat a = general(n, 1), b = bench::input_vector(n * k, 2);
    const Tensor A = tensor_of(a, {n, n}), B = tensor_of(b, {n, k});
    const Mat x = naive_solve(a, b, n, k);
    run(
        "solve", size, variant, [&] { return la::solve(A, B, true, cpu); },
        [&](std::int64_t q) { return x[q]; });
    floor("solve", size, variant, [&, a, b, k] {
      Mat ac = a, bc = b;
      std::vector<int> ipiv(n);
      int info = 0, ki = static_cast<int>(k);
      dgesv_(&ni, &ki, ac.data(), &ni, ipiv.data(), bc.data(), &ni, &info);
    });
  }
  {
    const Mat a = general(n, 3);
    const Tensor A = tensor_of(a, {n, n});
    const Mat sv = ref_svdvals(a, ni);
    run(
        "svd", size, "values", [&] { return la::svdvals(A, cpu); },
        [&](std::int64_t q) { return sv[q]; });
    run(
        "svd", size, "full", [&] { return la::svd(A, false, cpu).S; },
        [&](std::int64_t q) { return sv[q]; });
    for (const char* jobz : {"N", "S"}) {
      floor("svd", size, jobz[0] == 'N' ? "values" : "full", [&, a, jobz] {
        Mat ac = a, s(n), u(jobz[0] == 'N' ? 1 : n * n), vt(jobz[0] == 'N' ? 1 : n * n), work(1);
        std::vector<int> iwork(8 * n);
        int lwork = -1, info = 0;
        dgesdd_(jobz, &ni, &ni, ac.data(), &ni, s.data(), u.data(), &ni, vt.data(), &ni,
                work.data(), &lwork, iwork.data(), &info, 1);
        lwork = static_cast<int>(work[0]);
        work.resize(lwork);
        dgesdd_(jobz, &ni, &ni, ac.data(), &ni, s.data(), u.data(), &ni, vt.data(), &ni,
                work.data(), &lwork, iwork.data(), &info, 1);
      });
    }
    const Mat r = naive_qr_r(a, n);
    run(
        "qr", size, "", [&] { return la::qr(A, "reduced", cpu).second; },
        [&](std::int64_t q) { return r[q]; });
    floor("qr", size, "", [&, a] {
      Mat ac = a, tau(n), work(1);
      int lwork = -1, info = 0;
      dgeqrf_(&ni, &ni, ac.data(), &ni, tau.data(), work.data(), &lwork, &info);
      lwork = std::max(static_cast<int>(work[0]), ni * 64);
      work.resize(lwork);
      dgeqrf_(&ni, &ni, ac.data(), &ni, tau.data(), work.data(), &lwork, &info);
      dorgqr_(&ni, &ni, &ni, ac.data(), &ni, tau.data(), work.data(), &lwork, &info);
    });
  }
  {
    const Mat s = spd(n, 4);
    const Tensor S = tensor_of(s, {n, n});
    const Mat w = ref_eigvalsh(s, ni);
    run(
        "eigh", size, "values", [&] { return la::eigvalsh(S, 'L', cpu); },
        [&](std::int64_t q) { return w[q]; });
    run(
        "eigh", size, "full", [&] { return la::eigh(S, 'L', cpu).eigenvalues; },
        [&](std::int64_t q) { return w[q]; });
    for (const char* jobz : {"N", "V"}) {
      floor("eigh", size, jobz[0] == 'N' ? "values" : "full", [&, s, jobz] {
        Mat ac = s, wv(n), work(1);
        std::vector<int> iwork(1);
        int lwork = -1, liwork = -1, info = 0;
        dsyevd_(jobz, "L", &ni, ac.data(), &ni, wv.data(), work.data(), &lwork, iwork.data(),
                &liwork, &info, 1, 1);
        lwork = static_cast<int>(work[0]);
        liwork = iwork[0];
        work.resize(lwork);
        iwork.resize(liwork);
        dsyevd_(jobz, "L", &ni, ac.data(), &ni, wv.data(), work.data(), &lwork, iwork.data(),
                &liwork, &info, 1, 1);
      });
    }
  }

  // ---- group 9: c128 forward at 256 (variants "c128-...") -------------------------------
  {
    const CMat s = herm(n, 1);
    const Tensor S = Tensor::from_col_major(Shape{n, n}, s);
    const CMat l = naive_cholesky(s, n);
    run(
        "cholesky", size, "c128", [&] { return la::cholesky(S, false, cpu); },
        [&](std::int64_t q) { return part(l, q); });
    floor("cholesky", size, "c128", [&, s]() mutable {
      CMat c = s;
      int info = 0;
      zpotrf_("L", &ni, c.data(), &ni, &info, 1);
    });
  }
  for (std::int64_t k : {1, 16}) {
    const std::string variant = "c128-" + std::to_string(k) + "rhs";
    const CMat a = cgeneral(n, 1), b = complex_input(n * k, 2);
    const Tensor A = Tensor::from_col_major(Shape{n, n}, a);
    const Tensor B = Tensor::from_col_major(Shape{n, k}, b);
    const CMat x = naive_solve(a, b, n, k);
    run(
        "solve", size, variant, [&] { return la::solve(A, B, true, cpu); },
        [&](std::int64_t q) { return part(x, q); });
    floor("solve", size, variant, [&, a, b, k] {
      CMat ac = a, bc = b;
      std::vector<int> ipiv(n);
      int info = 0, ki = static_cast<int>(k);
      zgesv_(&ni, &ki, ac.data(), &ni, ipiv.data(), bc.data(), &ni, &info);
    });
  }
  {
    const CMat a = cgeneral(n, 3);
    const Tensor A = Tensor::from_col_major(Shape{n, n}, a);
    const Mat sv = ref_svdvals_c(a, ni);
    run(
        "svd", size, "c128-values", [&] { return la::svdvals(A, cpu); },
        [&](std::int64_t q) { return sv[q]; });
    run(
        "svd", size, "c128-full", [&] { return la::svd(A, false, cpu).S; },
        [&](std::int64_t q) { return sv[q]; });
    for (const char* jobz : {"N", "S"}) {
      const bool vec = jobz[0] != 'N';
      floor("svd", size, vec ? "c128-full" : "c128-values", [&, a, jobz, vec] {
        CMat ac = a, u(vec ? n * n : 1), vt(vec ? n * n : 1), work(1);
        Mat s(n), rwork(vec ? 5 * n * n + 7 * n : 7 * n);
        std::vector<int> iwork(8 * n);
        int lwork = -1, info = 0;
        zgesdd_(jobz, &ni, &ni, ac.data(), &ni, s.data(), u.data(), &ni, vt.data(), &ni,
                work.data(), &lwork, rwork.data(), iwork.data(), &info, 1);
        lwork = static_cast<int>(work[0].real());
        work.resize(lwork);
        zgesdd_(jobz, &ni, &ni, ac.data(), &ni, s.data(), u.data(), &ni, vt.data(), &ni,
                work.data(), &lwork, rwork.data(), iwork.data(), &info, 1);
      });
    }
    const CMat r = naive_qr_r_c(a, n);
    run(
        "qr", size, "c128", [&] { return la::qr(A, "reduced", cpu).second; },
        [&](std::int64_t q) { return part(r, q); });
    floor("qr", size, "c128", [&, a] {
      CMat ac = a, tau(n), work(1);
      int lwork = -1, info = 0;
      zgeqrf_(&ni, &ni, ac.data(), &ni, tau.data(), work.data(), &lwork, &info);
      lwork = std::max(static_cast<int>(work[0].real()), ni * 64);
      work.resize(lwork);
      zgeqrf_(&ni, &ni, ac.data(), &ni, tau.data(), work.data(), &lwork, &info);
      zungqr_(&ni, &ni, &ni, ac.data(), &ni, tau.data(), work.data(), &lwork, &info);
    });
  }
  {
    const CMat s = herm(n, 4);
    const Tensor S = Tensor::from_col_major(Shape{n, n}, s);
    const Mat w = ref_eigvalsh_c(s, ni);
    run(
        "eigh", size, "c128-values", [&] { return la::eigvalsh(S, 'L', cpu); },
        [&](std::int64_t q) { return w[q]; });
    run(
        "eigh", size, "c128-full", [&] { return la::eigh(S, 'L', cpu).eigenvalues; },
        [&](std::int64_t q) { return w[q]; });
    for (const char* jobz : {"N", "V"}) {
      const bool vec = jobz[0] != 'N';
      floor("eigh", size, vec ? "c128-full" : "c128-values", [&, s, jobz] {
        CMat ac = s, work(1);
        Mat wv(n), rwork(1);
        std::vector<int> iwork(1);
        int lwork = -1, lrwork = -1, liwork = -1, info = 0;
        zheevd_(jobz, "L", &ni, ac.data(), &ni, wv.data(), work.data(), &lwork, rwork.data(),
                &lrwork, iwork.data(), &liwork, &info, 1, 1);
        lwork = static_cast<int>(work[0].real());
        lrwork = static_cast<int>(rwork[0]);
        liwork = iwork[0];
        work.resize(lwork);
        rwork.resize(lrwork);
        iwork.resize(liwork);
        zheevd_(jobz, "L", &ni, ac.data(), &ni, wv.data(), work.data(), &lwork, rwork.data(),
                &lrwork, iwork.data(), &liwork, &info, 1, 1);
      });
    }
  }

  // ---- group 9: 4096 small matrices (per-call overhead) -------------------------------
  {
    const std::int64_t m = 8, batch = 4096;
    const int mi = static_cast<int>(m);
    const std::string bsize = "8x8x4096";
    const Mat g = batch_of([&](std::int64_t b) { return general(m, 10 + b); }, batch);
    const Mat p = batch_of([&](std::int64_t b) { return spd(m, 10 + b); }, batch);
    const Mat rhs = bench::input_vector(m * batch, 7);
    const Tensor G = tensor_of(g, {m, m, batch}), P = tensor_of(p, {m, m, batch});
    const Tensor R = tensor_of(rhs, {m, 1, batch});
    const auto block = [&](const Mat& all, std::int64_t b) {
      return Mat(all.begin() + b * m * m, all.begin() + (b + 1) * m * m);
    };
    const Mat sv = batch_of([&](std::int64_t b) { return ref_svdvals(block(g, b), mi); }, batch);
    const Mat ev = batch_of([&](std::int64_t b) { return ref_eigvalsh(block(p, b), mi); }, batch);
    const Mat rr = batch_of([&](std::int64_t b) { return naive_qr_r(block(g, b), m); }, batch);
    const Mat xs = batch_of(
        [&](std::int64_t b) {
          return naive_solve(block(g, b), Mat(rhs.begin() + b * m, rhs.begin() + (b + 1) * m), m,
                             1);
        },
        batch);
    run(
        "svd", bsize, "values", [&] { return la::svdvals(G, cpu); },
        [&](std::int64_t q) { return sv[q]; });
    run(
        "eigh", bsize, "values", [&] { return la::eigvalsh(P, 'L', cpu); },
        [&](std::int64_t q) { return ev[q]; });
    run(
        "qr", bsize, "", [&] { return la::qr(G, "reduced", cpu).second; },
        [&](std::int64_t q) { return rr[q]; });
    run(
        "solve", bsize, "1rhs", [&] { return la::solve(G, R, true, cpu); },
        [&](std::int64_t q) { return xs[q]; });
  }

  // ---- group 10: reverse AD at 256 ----------------------------------------------------
  {
    auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = o.threads});
    // grad sum(eigvalsh(S)) = I: the eigenvalues sum to the trace.
    const EagerTensor S = rt->tensor(tensor_of(spd(n, 4), {n, n}));
    run(
        "grad_eigvalsh_sum", size, "",
        [&] { return grad([](const EagerTensor& x) { return sum(la::eigvalsh(x)); }, S).value(); },
        [&](std::int64_t q) { return q % n == q / n ? 1.0 : 0.0; });
    // grad sum(solve(A, b)) w.r.t. b is A^{-T} 1 (a naive solve with A^T).
    const Mat a = general(n, 1);
    Mat at(n * n);
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < n; ++i) at[i + j * n] = a[j + i * n];
    const Mat gb = naive_solve(at, Mat(n, 1.0), n, 1);
    const EagerTensor A = rt->tensor(tensor_of(a, {n, n}));
    const EagerTensor b = rt->tensor(tensor_of(bench::input_vector(n, 2), {n, 1}));
    run(
        "grad_solve_sum", size, "",
        [&] { return grad([&](const EagerTensor& y) { return sum(la::solve(A, y)); }, b).value(); },
        [&](std::int64_t q) { return gb[q]; });
    // grad sum(svdvals(A)) = U V^T, checked against the SVD's own factors
    // through a naive product (no AD involved).
    const Tensor G = tensor_of(general(n, 3), {n, n});
    const auto f = la::svd(G, false, cpu);
    const auto u = f.U.contiguous().to_vector<double>(), vh = f.Vh.contiguous().to_vector<double>();
    const EagerTensor Ge = rt->tensor(G);
    run(
        "grad_svdvals_sum", size, "",
        [&] { return grad([](const EagerTensor& x) { return sum(la::svdvals(x)); }, Ge).value(); },
        [&](std::int64_t q) {
          const std::int64_t i = q % n, j = q / n;
          double s = 0;
          for (std::int64_t k = 0; k < n; ++k) s += u[i + k * n] * vh[k + j * n];
          return s;
        });
    // grad (sum(Q) + sum(R)) of qr(A): the closed form of qr_sum_grad on
    // dgeqrf + dorgqr's factors.
    const auto [q3, r3] = lapack_qr(general(n, 3), ni);
    const Mat gq = qr_sum_grad(q3, r3, n);
    run(
        "grad_qr_sum", size, "",
        [&] {
          return grad(
                     [](const EagerTensor& x) {
                       const auto [q, r] = la::qr(x);
                       return sum(q) + sum(r);
                     },
                     Ge)
              .value();
        },
        [&](std::int64_t q) { return gq[q]; });
  }
}

// Group 10, traced: jvp and vjp programs (tenferro::jvp / vjp of a compiled
// loss), prepared once before the clock; each timed call is one run().
// jvp: (A[, b], dA[, db]) -> (loss, tangent); vjp: (A[, b], 1) -> (loss,
// cotangents). References as in run_cases: LAPACK drivers other than ours
// and closed forms, no AD.
void run_traced_cases(const bench::Options& o, const ManyRunner& run_many) {
  const std::int64_t n = 256;
  const int ni = static_cast<int>(n);
  auto rt = Runtime::builder()
                .backend(std::make_shared<CpuBackend>(CpuBackendOptions{.num_threads = o.threads}))
                .build();
  const auto rows = [&](const std::string& loss, const Program& p,
                        const std::vector<Tensor>& primals, const std::vector<Tensor>& tangents,
                        const Mat& jvp_ref, const Mat& vjp_ref) {
    const std::string id = loss;
    std::vector<Tensor> jin = primals;
    jin.insert(jin.end(), tangents.begin(), tangents.end());
    std::vector<Tensor> vin = primals;
    vin.push_back(Tensor::scalar(1.0));
    const bool want_j = bench::selected(o, bench::case_id("jvp_traced", "256", id));
    const bool want_v = bench::selected(o, bench::case_id("vjp_traced", "256", id));
    if (want_j) {
      const PreparedProgram jplan = prepare(*rt, jvp(p), InputSignature::of(jin));
      run_many(
          "jvp_traced", "256", id, [&] { return tenferro::run(*rt, jplan, jin); },
          [&](std::int64_t q) { return jvp_ref[q]; });
    }
    if (want_v) {
      const PreparedProgram vplan = prepare(*rt, vjp(p), InputSignature::of(vin));
      run_many(
          "vjp_traced", "256", id, [&] { return tenferro::run(*rt, vplan, vin); },
          [&](std::int64_t q) { return vjp_ref[q]; });
    }
  };
  const Mat da = bench::input_vector(n * n, 5);
  const auto joined = [](double f, const Mat& g) {
    Mat v{f};
    v.insert(v.end(), g.begin(), g.end());
    return v;
  };
  {  // sum(svdvals(A)): gradient U V^T
    const Mat a = general(n, 3);
    const Mat sv = ref_svdvals(a, ni);
    double f = 0;
    for (double v : sv) f += v;
    const Mat g = svd_uvt(a, ni);
    auto x = placeholder(f64, {n, n}, "A");
    rows("svdvals_sum", compile({sum(la::svdvals(x))}, {x}), {tensor_of(a, {n, n})},
         {tensor_of(da, {n, n})}, {f, dot(g, da)}, joined(f, g));
  }
  {  // sum(eigvalsh(S)) = tr S: gradient I, tangent tr dS (dS symmetric)
    const Mat s = spd(n, 4);
    Mat ds(n * n), eye(n * n, 0.0);
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < n; ++i) ds[i + j * n] = da[i + j * n] + da[j + i * n];
    double f = 0, d = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      f += s[i + i * n];
      d += ds[i + i * n];
      eye[i + i * n] = 1;
    }
    auto x = placeholder(f64, {n, n}, "S");
    rows("eigvalsh_sum", compile({sum(la::eigvalsh(x))}, {x}), {tensor_of(s, {n, n})},
         {tensor_of(ds, {n, n})}, {f, d}, joined(f, eye));
  }
  {  // sum(Q) + sum(R)
    const Mat a = general(n, 3);
    const auto [q, r] = lapack_qr(a, ni);
    double f = 0;
    for (std::size_t i = 0; i < q.size(); ++i) f += q[i] + r[i];
    const Mat g = qr_sum_grad(q, r, n);
    auto x = placeholder(f64, {n, n}, "A");
    const auto [tq, tr] = la::qr(x);
    rows("qr_sum", compile({sum(tq) + sum(tr)}, {x}), {tensor_of(a, {n, n})},
         {tensor_of(da, {n, n})}, {f, dot(g, da)}, joined(f, g));
  }
  {  // sum(solve(A, b)), x = A^{-1} b: gb = A^{-T} 1, gA = -gb x^T, d = gb . (db - dA x)
    const Mat a = general(n, 1), b = bench::input_vector(n, 2), db = bench::input_vector(n, 6);
    const Mat x = naive_solve(a, b, n, 1);
    const Mat gb = naive_solve(transposed(a, n), Mat(n, 1.0), n, 1);
    double f = 0, d = 0;
    Mat g(n * n);
    for (std::int64_t i = 0; i < n; ++i) {
      f += x[i];
      double dax = 0;
      for (std::int64_t j = 0; j < n; ++j) {
        dax += da[i + j * n] * x[j];
        g[i + j * n] = -gb[i] * x[j];
      }
      d += gb[i] * (db[i] - dax);
    }
    Mat vref = joined(f, g);
    vref.insert(vref.end(), gb.begin(), gb.end());
    auto ta = placeholder(f64, {n, n}, "A");
    auto tb = placeholder(f64, {n, 1}, "b");
    rows("solve_sum", compile({sum(la::solve(ta, tb))}, {ta, tb}),
         {tensor_of(a, {n, n}), tensor_of(b, {n, 1})},
         {tensor_of(da, {n, n}), tensor_of(db, {n, 1})}, {f, d}, vref);
  }
}

}  // namespace bench_linalg
