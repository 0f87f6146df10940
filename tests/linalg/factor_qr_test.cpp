// QR, Householder products and determinants.

#include "factor_test_util.hpp"

namespace {

// Q^H Q = I (k columns) and A = Q R; R upper with a real diagonal.
void expect_qr(const Tensor& A, const Tensor& Q, const Tensor& R, DType dt) {
  const std::int64_t m = A.shape()[0], n = A.shape()[1];
  EXPECT_LT(product_error(Q, R, A), 10 * tol(dt));
  const std::int64_t qc = Q.shape()[1], rr = R.shape()[0];
  const auto Qv = vals(Q), Rv = vals(R);
  for (std::int64_t b = 0; b < batches(A.shape()); ++b) {
    for (std::int64_t i = 0; i < qc; ++i)
      for (std::int64_t j = 0; j < qc; ++j) {
        cd s = 0;
        for (std::int64_t p = 0; p < m; ++p)
          s += std::conj(at(Qv, m, qc, b, p, i)) * at(Qv, m, qc, b, p, j);
        EXPECT_NEAR(std::abs(s - cd(i == j ? 1 : 0)), 0, 10 * tol(dt));
      }
    for (std::int64_t i = 0; i < rr; ++i) {
      for (std::int64_t j = 0; j < std::min(i, n); ++j) {
        EXPECT_EQ(at(Rv, rr, n, b, i, j), cd(0));
      }
      if (i < n) {
        EXPECT_EQ(at(Rv, rr, n, b, i, i).imag(), 0.0);
      }
    }
  }
}

}  // namespace

TEST(LinalgQr, EveryModeShapeAndDtype) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 2});
  for (DType dt : kAll) {
    for (Shape s : {Shape{5, 3, 2}, Shape{3, 5, 2}, Shape{4, 4}, Shape{1, 1}}) {
      const Tensor A = make(s, dt, 0.5);
      const std::int64_t m = s[0], n = s[1], k = std::min(m, n);
      auto [Q, R] = la::qr(A, "reduced", cpu);
      EXPECT_EQ(Q.shape()[1], k);
      EXPECT_EQ(R.shape()[0], k);
      expect_qr(A, Q, R, dt);
      auto [Qc, Rc] = la::qr(A, "complete", cpu);
      EXPECT_EQ(Qc.shape()[1], m);
      EXPECT_EQ(Rc.shape()[0], m);
      expect_qr(A, Qc, Rc, dt);
      auto [Qr, Rr] = la::qr(A, "r", cpu);
      EXPECT_EQ(Qr.numel(), 0);
      EXPECT_EQ(max_diff(Rr, R), 0.0);
      auto [Qs, Rs] = la::qr(tftest::strided_copy(A), "reduced", cpu);
      EXPECT_EQ(max_diff(Qs, Q), 0.0);
      EXPECT_EQ(max_diff(Rs, R), 0.0);
    }
  }
}

TEST(LinalgQr, ZeroSizeAndErrors) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  for (Shape s : {Shape{0, 3}, Shape{3, 0}, Shape{0, 0, 2}, Shape{3, 2, 0}}) {
    auto [Q, R] = la::qr(make(s, DType::F64, 1), "reduced", cpu);
    EXPECT_EQ(Q.shape()[0], s[0]);
    EXPECT_EQ(R.shape()[1], s[1]);
    auto [Qc, Rc] = la::qr(make(s, DType::F64, 1), "complete", cpu);
    EXPECT_EQ(Qc.shape()[1], s[0]);
    EXPECT_EQ(Rc.shape()[0], s[0]);
  }
  // complete Q of a matrix with no columns is the identity.
  auto [Qc, Rc] = la::qr(make({3, 0}, DType::F64, 1), "complete", cpu);
  EXPECT_EQ(Qc.to_vector<double>(), (std::vector<double>{1, 0, 0, 0, 1, 0, 0, 0, 1}));
  EXPECT_TF_ERROR(la::qr(make({3, 3}, DType::F64, 1), "full", cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(la::qr(make({3}, DType::F64, 1), "reduced", cpu), ErrorKind::RankMismatch);
  EXPECT_TF_ERROR(la::qr(zeros({2, 2}, DType::I32), "reduced", cpu), ErrorKind::DTypeMismatch);
  const EagerTensor A = rt()->tensor(make({4, 2}, DType::F64, 1));
  EXPECT_TF_ERROR(grad([](const EagerTensor& x) { return sum(la::qr(x, "r").second); }, A),
                  ErrorKind::UnsupportedAdRule);
  EXPECT_TF_ERROR(grad([](const EagerTensor& x) { return sum(la::qr(x, "complete").first); }, A),
                  ErrorKind::UnsupportedAdRule);
}

TEST(LinalgQr, GradientsMatchFiniteDifferences) {
  for (DType dt : {DType::F64, DType::C128}) {
    for (Shape s : {Shape{4, 2}, Shape{3, 3}, Shape{2, 4}, Shape{3, 2, 2}}) {
      const EagerTensor A = rt()->tensor(make(s, dt, 0.9));
      for (int out : {0, 1}) {
        auto r = check_gradients(
            [out](std::span<const EagerTensor> x) {
              auto [Q, R] = la::qr(x[0]);
              return out == 0 ? Q : R;
            },
            {A});
        EXPECT_TRUE(r.ok) << r.detail << " " << name(dt) << " " << s[0] << "x" << s[1] << " output "
                          << out;
      }
    }
  }
  // complete mode is differentiable when m <= n (Q is then the reduced one).
  auto r =
      check_gradients([](std::span<const EagerTensor> x) { return la::qr(x[0], "complete").first; },
                      {rt()->tensor(make({2, 3}, DType::F64, 0.2))});
  EXPECT_TRUE(r.ok) << r.detail;
}

// The reference product: H_1 ... H_k applied to the first n columns of I_m.
std::vector<cd> householder_reference(const Tensor& v, const Tensor& tau) {
  const std::int64_t m = v.shape()[0], n = v.shape()[1], k = tau.shape()[0];
  const auto V = vals(v), T = vals(tau);
  std::vector<cd> out;
  for (std::int64_t b = 0; b < batches(v.shape()); ++b) {
    std::vector<cd> Q(m * m);
    for (std::int64_t i = 0; i < m; ++i) Q[i + i * m] = 1;
    for (std::int64_t r = 0; r < k; ++r) {  // Q <- Q H_r
      std::vector<cd> h(m);
      for (std::int64_t i = 0; i < m; ++i) h[i] = i < r ? 0 : (i == r ? 1 : at(V, m, n, b, i, r));
      for (std::int64_t i = 0; i < m; ++i) {
        cd s = 0;
        for (std::int64_t p = 0; p < m; ++p) s += Q[i + p * m] * h[p];
        for (std::int64_t j = 0; j < m; ++j) Q[i + j * m] -= T[b * k + r] * s * std::conj(h[j]);
      }
    }
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i) out.push_back(Q[i + j * m]);
  }
  return out;
}

TEST(LinalgHouseholder, MatchesReferenceInEveryTier) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  for (DType dt : kAll) {
    for (auto [vs, ts] : {std::pair<Shape, Shape>{{5, 3, 2}, {3, 2}},
                          {{4, 4}, {2}},
                          {{3, 3}, {3}},
                          {{0, 0}, {0}},
                          {{3, 2, 0}, {2, 0}}}) {
      const Tensor V = make(vs, dt, 0.3), tau = make(ts, dt, 0.7);
      const auto ref = householder_reference(V, tau);
      const auto d = vals(la::householder_product(V, tau, cpu));
      const auto e = vals(la::householder_product(rt()->tensor(V), rt()->tensor(tau)).value());
      ASSERT_EQ(d.size(), ref.size());
      ASSERT_EQ(e.size(), ref.size());
      for (std::size_t i = 0; i < ref.size(); ++i) {
        EXPECT_NEAR(std::abs(d[i] - ref[i]), 0, tol(dt));
        EXPECT_NEAR(std::abs(e[i] - ref[i]), 0, tol(dt));
      }
    }
  }
  EXPECT_TF_ERROR(
      la::householder_product(make({2, 3}, DType::F64, 1), make({2}, DType::F64, 1), cpu),
      ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(la::householder_product(rt()->tensor(make({3, 2}, DType::F64, 1)),
                                          rt()->tensor(make({3}, DType::F64, 1))),
                  ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(
      la::householder_product(make({3, 2}, DType::F64, 1), make({2}, DType::F32, 1), cpu),
      ErrorKind::DTypeMismatch);
  for (DType dt : {DType::F64, DType::C128}) {
    auto r = check_gradients(
        [](std::span<const EagerTensor> x) { return la::householder_product(x[0], x[1]); },
        {rt()->tensor(make({4, 3, 2}, dt, 0.1)), rt()->tensor(make({2, 2}, dt, 0.4))});
    EXPECT_TRUE(r.ok) << r.detail << " " << name(dt);
  }
}

TEST(LinalgDet, ValuesSignsAndSingular) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 2});
  for (DType dt : kAll) {
    const Tensor A = make({4, 4, 3}, dt, 0.25);
    const auto d = vals(la::det(A, cpu));
    auto [sign, logabs] = la::slogdet(A, cpu);
    EXPECT_EQ(logabs.dtype(), is_complex(dt) ? (dt == DType::C64 ? DType::F32 : DType::F64) : dt);
    const auto s = vals(sign), l = vals(logabs);
    // det = (+-1) prod diag(U) with U from lu, and det = sign exp(logabsdet).
    auto [P, L, U] = la::lu(A, true, cpu);
    const auto Uv = vals(U), Pdet = vals(la::det(P, cpu));
    for (std::int64_t b = 0; b < 3; ++b) {
      cd p = Pdet[b];
      EXPECT_NEAR(std::abs(std::abs(p) - 1.0), 0, tol(dt));
      for (std::int64_t i = 0; i < 4; ++i) p *= at(Uv, 4, 4, b, i, i);
      EXPECT_NEAR(std::abs(p - d[b]), 0, 10 * tol(dt) * std::max(1.0, std::abs(p)));
      EXPECT_NEAR(std::abs(s[b]), 1.0, tol(dt));
      EXPECT_NEAR(std::abs(s[b] * std::exp(l[b].real()) - d[b]), 0, 10 * tol(dt));
    }
  }
  // A negative determinant; a complex unit sign; singular and empty matrices.
  const Tensor neg = Tensor::from_col_major({2, 2}, std::vector<double>{0, 1, 1, 0});
  EXPECT_EQ(la::det(neg, cpu).to_vector<double>(), (std::vector<double>{-1}));
  EXPECT_EQ(la::slogdet(neg, cpu).first.to_vector<double>(), (std::vector<double>{-1}));
  EXPECT_EQ(la::slogdet(neg, cpu).second.to_vector<double>(), (std::vector<double>{0}));
  const Tensor ci = Tensor::from_col_major({1, 1}, std::vector<cd>{cd(0, 2)});
  EXPECT_EQ(la::slogdet(ci, cpu).first.to_vector<cd>(), (std::vector<cd>{cd(0, 1)}));
  EXPECT_NEAR(la::slogdet(ci, cpu).second.to_vector<double>()[0], std::log(2.0), 1e-15);
  const Tensor sing = Tensor::from_col_major({2, 2}, std::vector<double>{1, 2, 2, 4});
  EXPECT_EQ(la::det(sing, cpu).to_vector<double>(), (std::vector<double>{0}));
  EXPECT_EQ(la::slogdet(sing, cpu).first.to_vector<double>(), (std::vector<double>{0}));
  EXPECT_EQ(la::slogdet(sing, cpu).second.to_vector<double>()[0], -INFINITY);
  EXPECT_EQ(la::det(make({0, 0, 2}, DType::F64, 1), cpu).to_vector<double>(),
            (std::vector<double>{1, 1}));
  EXPECT_EQ(la::det(make({3, 3, 0}, DType::F64, 1), cpu).shape(), (Shape{0}));
  EXPECT_TF_ERROR(la::det(make({2, 3}, DType::F64, 1), cpu), ErrorKind::ShapeMismatch);
  // The derivative at a singular matrix is the adjugate's (transposed): for
  // [[1, 2], [2, 4]] (column-major {1, 2, 2, 4}) the cofactor matrix.
  const auto gs = grad([](const EagerTensor& x) { return la::det(x); }, rt()->tensor(sing))
                      .value()
                      .to_vector<double>();
  const std::vector<double> cof{4, -2, -2, 1};
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(gs[i], cof[i], 1e-14) << i;
}

namespace {

// det by Gaussian elimination with partial pivoting (complex, n small).
cd naive_det(std::vector<cd> a, std::int64_t n) {
  cd d = 1;
  for (std::int64_t c = 0; c < n; ++c) {
    std::int64_t p = c;
    for (std::int64_t r = c + 1; r < n; ++r)
      if (std::abs(a[r + c * n]) > std::abs(a[p + c * n])) p = r;
    if (a[p + c * n] == cd(0)) return 0;
    if (p != c) {
      for (std::int64_t j = 0; j < n; ++j) std::swap(a[c + j * n], a[p + j * n]);
      d = -d;
    }
    d *= a[c + c * n];
    for (std::int64_t r = c + 1; r < n; ++r) {
      const cd f = a[r + c * n] / a[c + c * n];
      for (std::int64_t j = c; j < n; ++j) a[r + j * n] -= f * a[c + j * n];
    }
  }
  return d;
}

// tr(adj(A) dA) = sum_ij C_ij dA_ij with the cofactors C_ij = (-1)^(i+j) M_ij.
cd naive_det_jvp(const std::vector<cd>& a, const std::vector<cd>& da, std::int64_t n) {
  cd s = 0;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      std::vector<cd> minor;
      for (std::int64_t c = 0; c < n; ++c)
        for (std::int64_t r = 0; r < n; ++r)
          if (r != i && c != j) minor.push_back(a[r + c * n]);
      const double sign = (i + j) % 2 == 0 ? 1.0 : -1.0;
      s += sign * naive_det(minor, n - 1) * da[i + j * n];
    }
  return s;
}

}  // namespace

TEST(LinalgDet, DerivativeAtSingularMatricesIsTheAdjugate) {
  // A batch of 4x4 matrices: rank 3 (a zero column: an exactly zero pivot),
  // rank 2 (two zero rows: the adjugate is 0), rank 3 through a zero row in
  // the middle, and an invertible one; real and complex.
  for (DType dt : {DType::F64, DType::C128}) {
    const std::int64_t n = 4, nb = 4;
    std::vector<cd> a = vals(make({n, n, nb}, dt, 0.37));
    for (std::int64_t i = 0; i < n; ++i) {
      a[i + 3 * n] = 0;          // batch 0: column 3
      a[n * n + 1 + i * n] = 0;  // batch 1: rows 1 and 2
      a[n * n + 2 + i * n] = 0;
      a[2 * n * n + 1 + i * n] = 0;  // batch 2: row 1
    }
    const std::vector<cd> da = vals(make({n, n, nb}, dt, 0.81));
    Tensor A = zeros({n, n, nb}, dt), dA = zeros({n, n, nb}, dt);
    Tensor::copy_into(Tensor::from_col_major({n, n, nb}, a), A);
    Tensor::copy_into(Tensor::from_col_major({n, n, nb}, da), dA);
    const auto res =
        jvp([](const EagerTensor& x) { return la::det(x); }, rt()->tensor(A), rt()->tensor(dA));
    ASSERT_TRUE(res.tangent.has_value());
    const auto got = vals(res.tangent->value());
    for (std::int64_t b = 0; b < nb; ++b) {
      const std::vector<cd> ab(a.begin() + b * n * n, a.begin() + (b + 1) * n * n);
      const std::vector<cd> db(da.begin() + b * n * n, da.begin() + (b + 1) * n * n);
      const cd want = naive_det_jvp(ab, db, n);
      EXPECT_LT(std::abs(got[b] - want), 1e-12 * (1 + std::abs(want)))
          << name(dt) << " batch " << b << ": " << got[b] << " vs " << want;
      if (b == 1) {
        EXPECT_LT(std::abs(got[b]), 1e-15);  // rank 2: the adjugate is 0 (up to the SVD's rounding)
      }
      // A central difference (det is a polynomial: the error is O(h^2)).
      const double h = 1e-5;
      std::vector<cd> ap = ab, am = ab;
      for (std::size_t k = 0; k < ab.size(); ++k) {
        ap[k] += h * db[k];
        am[k] -= h * db[k];
      }
      const cd fd = (naive_det(ap, n) - naive_det(am, n)) / (2 * h);
      EXPECT_LT(std::abs(got[b] - fd), 1e-7 * (1 + std::abs(fd))) << name(dt) << " batch " << b;
    }
    // The traced tier agrees (vjp and jvp programs) on the same singular batch.
    const TracedTensor x = placeholder(dt, {n, n, nb});
    const TracedTensor loss = is_complex(dt) ? sum(real(la::det(x))) : sum(la::det(x));
    const TracedTensor g = grad(loss, x);
    const Program p = compile(std::span<const TracedTensor>(&g, 1), {x});
    const Tensor traced = run_compiled(*rt()->runtime(), p, {A})[0];
    const Tensor eager = grad(
                             [&](const EagerTensor& v) {
                               return is_complex(dt) ? sum(real(la::det(v))) : sum(la::det(v));
                             },
                             rt()->tensor(A))
                             .value();
    EXPECT_LT(max_diff(traced, eager), 1e-12) << name(dt);
    const auto gv = vals(eager);
    for (cd v : gv) EXPECT_TRUE(std::isfinite(v.real()) && std::isfinite(v.imag()));
  }
  // Second order where A is invertible: the adjugate's own rule (the gradient
  // of det's gradient) against finite differences.
  const EagerTensor A = rt()->tensor(make({3, 3}, DType::F64, 0.52, true));
  auto r = check_gradients(
      [](std::span<const EagerTensor> x) {
        return grad([](const EagerTensor& v) { return la::det(v); }, x[0]);
      },
      {A});
  EXPECT_TRUE(r.ok) << r.detail << " second order";
}

TEST(LinalgDet, GradientsMatchFiniteDifferences) {
  for (DType dt : {DType::F64, DType::C128}) {
    const EagerTensor A = rt()->tensor(make({3, 3, 2}, dt, 0.45));
    auto r = check_gradients([](std::span<const EagerTensor> x) { return la::det(x[0]); }, {A});
    EXPECT_TRUE(r.ok) << r.detail << " det " << name(dt);
    auto rl = check_gradients(
        [](std::span<const EagerTensor> x) { return la::slogdet(x[0]).second; }, {A});
    EXPECT_TRUE(rl.ok) << rl.detail << " logabsdet " << name(dt);
    if (is_complex(dt)) {
      auto rs = check_gradients(
          [](std::span<const EagerTensor> x) { return la::slogdet(x[0]).first; }, {A});
      EXPECT_TRUE(rs.ok) << rs.detail << " sign";
    }
  }
}

TEST(LinalgFactor, DirectEagerAndTracedAgree) {
  expect_tiers_agree(
      [](auto x) { return la::qr(x[0]).first; },
      [](const std::vector<Tensor>& x, Backend& be) { return la::qr(x[0], "reduced", be).first; },
      {make({4, 3, 2}, DType::F64, 0.3)});
  expect_tiers_agree(
      [](auto x) { return la::qr(x[0]).second; },
      [](const std::vector<Tensor>& x, Backend& be) { return la::qr(x[0], "reduced", be).second; },
      {make({2, 4}, DType::C128, 0.3)});
  expect_tiers_agree([](auto x) { return la::det(x[0]); },
                     [](const std::vector<Tensor>& x, Backend& be) { return la::det(x[0], be); },
                     {make({3, 3, 2}, DType::F64, 0.6)});
  expect_tiers_agree(
      [](auto x) { return la::slogdet(x[0]).second; },
      [](const std::vector<Tensor>& x, Backend& be) { return la::slogdet(x[0], be).second; },
      {make({3, 3}, DType::C128, 0.6)});
  expect_tiers_agree([](auto x) { return la::householder_product(x[0], x[1]); },
                     [](const std::vector<Tensor>& x, Backend& be) {
                       return la::householder_product(x[0], x[1], be);
                     },
                     {make({4, 3}, DType::F64, 0.2), make({3}, DType::F64, 0.9)});
}

TEST(LinalgFactor, SymbolicMatrixExtentsAreUnsupportedInTheTracedTier) {
  const TracedTensor a = placeholder(DType::F64, {SymDim::var("n"), SymDim(3)});
  EXPECT_TF_ERROR(la::qr(a), ErrorKind::Unsupported);
  EXPECT_TF_ERROR(la::lu_factor(a), ErrorKind::Unsupported);
  EXPECT_TF_ERROR(la::solve(a, a), ErrorKind::Unsupported);
}
