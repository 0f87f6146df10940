// Groups 9 and 10 of the peer suite: linalg forward at 256 and batched 8x8,
// and reverse AD at 256 (f64). Our results are checked before timing against
// references that do not go through tenferro: naive loops (Cholesky,
// Gaussian elimination, Householder QR) or a different LAPACK driver than
// ours (dgesvd for our dgesdd, dsyev for our dsyevd). The floor column is
// the same LAPACK driver called directly on a prepared copy (impl "lapack").

#include "linalg_cases.hpp"

#include <cmath>
#include <cstdio>
#include <vector>

#include "tenferro/ad/eager_ops.hpp"
#include "tenferro/linalg/linalg.hpp"

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

Mat naive_cholesky(const Mat& a, std::int64_t n) {
  Mat l(n * n, 0.0);
  for (std::int64_t j = 0; j < n; ++j) {
    double d = a[j + j * n];
    for (std::int64_t k = 0; k < j; ++k) d -= l[j + k * n] * l[j + k * n];
    l[j + j * n] = std::sqrt(d);
    for (std::int64_t i = j + 1; i < n; ++i) {
      double s = a[i + j * n];
      for (std::int64_t k = 0; k < j; ++k) s -= l[i + k * n] * l[j + k * n];
      l[i + j * n] = s / l[j + j * n];
    }
  }
  return l;
}

// Gaussian elimination with partial pivoting: A X = B (B is n x k).
Mat naive_solve(Mat a, Mat b, std::int64_t n, std::int64_t k) {
  for (std::int64_t c = 0; c < n; ++c) {
    std::int64_t p = c;
    for (std::int64_t r = c + 1; r < n; ++r)
      if (std::abs(a[r + c * n]) > std::abs(a[p + c * n])) p = r;
    for (std::int64_t j = 0; j < n; ++j) std::swap(a[c + j * n], a[p + j * n]);
    for (std::int64_t j = 0; j < k; ++j) std::swap(b[c + j * n], b[p + j * n]);
    for (std::int64_t r = c + 1; r < n; ++r) {
      const double f = a[r + c * n] / a[c + c * n];
      for (std::int64_t j = c; j < n; ++j) a[r + j * n] -= f * a[c + j * n];
      for (std::int64_t j = 0; j < k; ++j) b[r + j * n] -= f * b[c + j * n];
    }
  }
  for (std::int64_t j = 0; j < k; ++j)
    for (std::int64_t r = n - 1; r >= 0; --r) {
      double s = b[r + j * n];
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
    auto rt = EagerRuntime::make_cpu(CpuBackendOptions{o.threads, std::size_t{512} << 20, 1 << 16});
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
  }
}

}  // namespace bench_linalg
