// pinv, lstsq, cond, tensorinv and tensorsolve: the Moore-Penrose
// identities, normal equations and naive references, gradients through the
// public checker, direct == eager == traced, and error kinds.

#include "composite_test_util.hpp"

using namespace comptest;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// max |x - y| / (1 + max |y|) over complex values.
double max_diff(const std::vector<cd>& x, const std::vector<cd>& y) {
  EXPECT_EQ(x.size(), y.size());
  double d = 0, scale = 1;
  for (std::size_t i = 0; i < std::min(x.size(), y.size()); ++i) {
    d = std::max(d, std::abs(x[i] - y[i]));
    scale = std::max(scale, 1 + std::abs(y[i]));
  }
  return d / scale;
}

// The four Moore-Penrose conditions: A P A = A, P A P = P, (A P)^H = A P, (P A)^H = P A.
void expect_moore_penrose(const EagerTensor& a, const EagerTensor& p, double tol) {
  auto H = [](const EagerTensor& x) {
    const EagerTensor t = transpose(x, 0, 1);
    return is_complex(x.dtype()) ? conj(t) : t;
  };
  const EagerTensor ap = matmul(a, p), pa = matmul(p, a);
  EXPECT_LT(max_diff(host_c(matmul(ap, a)), host_c(a)), tol);
  EXPECT_LT(max_diff(host_c(matmul(pa, p)), host_c(p)), tol);
  EXPECT_LT(max_diff(host_c(H(ap)), host_c(ap)), tol);
  EXPECT_LT(max_diff(host_c(H(pa)), host_c(pa)), tol);
}

}  // namespace

TEST(LinalgPinv, MoorePenroseConditionsForEveryShapeAndDtype) {
  for (const Shape& shape : {Shape{3, 5}, Shape{5, 3}, Shape{4, 4, 2}}) {
    const std::int64_t n = numel(shape);
    const EagerTensor a = runtime()->tensor(real_tensor(shape, values(n)));
    const EagerTensor z = runtime()->tensor(complex_tensor(shape, cvalues(n)));
    for (const EagerTensor& in : {a, z}) {
      const EagerTensor p = la::pinv(in);
      EXPECT_EQ(p.shape()[0], shape[1]);
      EXPECT_EQ(p.shape()[1], shape[0]);
      expect_moore_penrose(in, p, 1e-12);
    }
  }
  // A rank-1 matrix: the pseudo-inverse is u v^T / (|u|^2 |v|^2) for A = v u^T... checked by MP.
  const EagerTensor r1 = runtime()->tensor(real_tensor({2, 2}, {1, 2, 2, 4}));
  expect_moore_penrose(r1, la::pinv(r1), 1e-12);
  expect_near_all(host(la::pinv(r1)), {1.0 / 25, 2.0 / 25, 2.0 / 25, 4.0 / 25}, 1e-14);
  // f32 and the direct tier.
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  const Tensor af = real_tensor({3, 2}, values(6), f32);
  const Tensor pf = la::pinv(af, std::nullopt, std::nullopt, false, cpu);
  EXPECT_EQ(pf.dtype(), f32);
  expect_near_all(host(pf), host(la::pinv(runtime()->tensor(af))), 1e-6);
}

TEST(LinalgPinv, TolerancesAndHermitianAndZeroSize) {
  // diag(4, 1e-3): rtol = 1e-2 drops the small value, atol = 1e-4 keeps it.
  const EagerTensor d = runtime()->tensor(real_tensor({2, 2}, {4, 0, 0, 1e-3}));
  expect_near_all(host(la::pinv(d, std::nullopt, 1e-2)), {0.25, 0, 0, 0}, 1e-15);
  expect_near_all(host(la::pinv(d, 1e-4)), {0.25, 0, 0, 1e3}, 1e-12);
  expect_near_all(host(la::pinv(d, 1e-2)), {0.25, 0, 0, 0}, 1e-15);
  // Hermitian: the lower triangle is read; an indefinite matrix.
  const EagerTensor h = runtime()->tensor(real_tensor({2, 2}, {2, 1, 99, -3}));
  const EagerTensor hs = runtime()->tensor(real_tensor({2, 2}, {2, 1, 1, -3}));
  expect_near_all(host(la::pinv(h, std::nullopt, std::nullopt, true)), host(la::pinv(hs)), 1e-13);
  const EagerTensor hz =
      runtime()->tensor(complex_tensor({2, 2}, {cd(2, 0), cd(1, 1), cd(1, -1), cd(-1, 0)}));
  expect_moore_penrose(hz, la::pinv(hz, std::nullopt, std::nullopt, true), 1e-12);
  // Zero sizes.
  EXPECT_EQ(la::pinv(runtime()->tensor(real_tensor({0, 3}, {}))).shape(), (Shape{3, 0}));
  expect_near_all(host(la::pinv(runtime()->tensor(real_tensor({3, 0}, {})))), {}, 0);
  EXPECT_EQ(la::pinv(runtime()->tensor(real_tensor({2, 2, 0}, {}))).shape(), (Shape{2, 2, 0}));
  EXPECT_TF_ERROR(la::pinv(d, -1.0), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(
      la::pinv(runtime()->tensor(real_tensor({2, 3}, values(6))), std::nullopt, std::nullopt, true),
      ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(la::pinv(runtime()->tensor(real_tensor({2}, values(2)))),
                  ErrorKind::RankMismatch);
  const EagerTensor bad = runtime()->tensor(real_tensor({2, 2}, {1, kInf, 0, 1}));
  EXPECT_TF_ERROR(la::pinv(bad), ErrorKind::NoConvergence);
}

TEST(LinalgPinv, GradientsAndTracedAgreement) {
  for (const Shape& shape : {Shape{2, 3}, Shape{3, 2}}) {
    const std::int64_t n = numel(shape);
    const EagerTensor a = runtime()->tensor(real_tensor(shape, values(n)));
    const EagerTensor z = runtime()->tensor(complex_tensor(shape, cvalues(n)));
    for (const EagerTensor& in : {a, z}) {
      expect_gradients_ok([](std::span<const EagerTensor> v) { return la::pinv(v[0]); }, {in},
                          "pinv");
      expect_traced_matches_eager([](auto v) { return la::pinv(v[0]); }, {in.value()}, 1e-11);
    }
  }
  // Hermitian, through X + X^T so every direction stays symmetric.
  const EagerTensor x = runtime()->tensor(real_tensor({3, 3}, values(9)));
  expect_gradients_ok(
      [](std::span<const EagerTensor> v) {
        return la::pinv(v[0] + transpose(v[0], 0, 1), std::nullopt, std::nullopt, true);
      },
      {x}, "hermitian pinv");
}

TEST(LinalgLstsq, SolvesTheNormalEquations) {
  // Tall: A^T (A X - B) = 0 and the residuals are the squared column norms.
  const EagerTensor a = runtime()->tensor(real_tensor({5, 3}, values(15)));
  const EagerTensor b = runtime()->tensor(real_tensor({5, 2}, values(10, 0.7)));
  const auto [x, res] = la::lstsq(a, b, std::nullopt, "gelsd");
  EXPECT_EQ(x.shape(), (Shape{3, 2}));
  const EagerTensor r = matmul(a, x) - b;
  for (double v : host(matmul(transpose(a, 0, 1), r))) EXPECT_NEAR(v, 0, 1e-12);
  expect_near_all(host(res), host(sum(r * r, {0})), 1e-12);
  EXPECT_EQ(la::lstsq(a, b, std::nullopt, "gelsy").second.shape(), (Shape{0}));
  // Wide: the minimum-norm solution pinv(A) B, exact fit, empty residuals.
  const EagerTensor w = runtime()->tensor(complex_tensor({2, 4, 3}, cvalues(24)));
  const EagerTensor wb = runtime()->tensor(complex_tensor({2, 1, 3}, cvalues(6, 0.2)));
  const auto [wx, wres] = la::lstsq(w, wb, std::nullopt, "gelsd");
  EXPECT_EQ(wres.numel(), 0);
  EXPECT_LT(max_diff(host_c(matmul(w, wx)), host_c(wb)), 1e-12);
  EXPECT_LT(max_diff(host_c(wx), host_c(matmul(la::pinv(w), wb))), 1e-13);
  expect_gradients_ok([](std::span<const EagerTensor> v) { return la::lstsq(v[0], v[1]).first; },
                      {a, b}, "lstsq solution");
  expect_gradients_ok(
      [](std::span<const EagerTensor> v) {
        return la::lstsq(v[0], v[1], std::nullopt, "gels").second;
      },
      {a, b}, "lstsq residuals");
  expect_traced_matches_eager([](auto v) { return la::lstsq(v[0], v[1]).first; },
                              {a.value(), b.value()}, 1e-11);
  EXPECT_TF_ERROR(la::lstsq(a, b, std::nullopt, "gelsx"), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(la::lstsq(a, wb), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(la::lstsq(a, runtime()->tensor(real_tensor({4, 2}, values(8)))),
                  ErrorKind::ShapeMismatch);
}

TEST(LinalgLstsq, RankSingularValuesAndEmptyOutputsPerDriverAsPyTorch) {
  // torch.linalg.lstsq on a tall 5x3: default (gelsy): residuals [0], rank,
  // singular_values [0]; gels: residuals [k], rank [0]; gelsd/gelss: all.
  const EagerTensor a = runtime()->tensor(real_tensor({5, 3}, values(15)));
  const EagerTensor b = runtime()->tensor(real_tensor({5, 2}, values(10, 0.7)));
  const std::vector<double> sv = host(la::svdvals(a));
  struct Want {
    const char* driver;
    std::int64_t res, rank, sv;
  };
  for (const Want& w : {Want{"", 0, 1, 0}, Want{"gelsy", 0, 1, 0}, Want{"gels", 2, 0, 0},
                        Want{"gelsd", 2, 1, 3}, Want{"gelss", 2, 1, 3}}) {
    const auto r = la::lstsq_full(a, b, std::nullopt, w.driver);
    EXPECT_EQ(r.residuals.numel(), w.res) << w.driver;
    EXPECT_EQ(r.rank.numel(), w.rank) << w.driver;
    EXPECT_EQ(r.singular_values.numel(), w.sv) << w.driver;
    EXPECT_EQ(r.rank.dtype(), DType::I64) << w.driver;
    if (w.rank == 1) {
      EXPECT_EQ(r.rank.shape(), Shape{});
      EXPECT_EQ(r.rank.value().to_vector<std::int64_t>(), (std::vector<std::int64_t>{3}));
    }
    if (w.sv == 3) expect_near_all(host(r.singular_values), sv, 1e-14, w.driver);
    expect_near_all(host(r.solution), host(la::lstsq(a, b, std::nullopt, "gels").first), 1e-12,
                    w.driver);
  }
  // A rank-deficient batch entry (column 2 = column 0) and rcond: ranks
  // [3, 2] as torch; rcond = 0.99 keeps only the largest value.
  std::vector<double> v = values(30);
  for (std::int64_t i = 0; i < 5; ++i) v[15 + 10 + i] = v[15 + i];
  const EagerTensor ab = runtime()->tensor(real_tensor({5, 3, 2}, v));
  const EagerTensor bb = runtime()->tensor(real_tensor({5, 2, 2}, values(20, 0.3)));
  const auto rb = la::lstsq_full(ab, bb, std::nullopt, "gelsd");
  EXPECT_EQ(rb.rank.value().to_vector<std::int64_t>(), (std::vector<std::int64_t>{3, 2}));
  EXPECT_EQ(rb.singular_values.shape(), (Shape{3, 2}));
  EXPECT_EQ(la::lstsq_full(ab, bb, 0.99, "gelss").rank.value().to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{1, 1}));
  // Wide, complex: minimum-norm, no residuals, rank min(m, n), traced tier.
  const EagerTensor w = runtime()->tensor(complex_tensor({2, 4}, cvalues(8)));
  const EagerTensor wb = runtime()->tensor(complex_tensor({2, 1}, cvalues(2, 0.2)));
  const auto rw = la::lstsq_full(w, wb, std::nullopt, "gelsd");
  EXPECT_EQ(rw.residuals.numel(), 0);
  EXPECT_EQ(rw.rank.value().to_vector<std::int64_t>(), (std::vector<std::int64_t>{2}));
  EXPECT_EQ(rw.singular_values.dtype(), f64);
  const TracedTensor ta = placeholder(f64, {5, 3, 2}), tb = placeholder(f64, {5, 2, 2});
  const TracedTensor trank = la::lstsq_full(ta, tb, std::nullopt, "gelsy").rank;
  const Program prog = compile(std::span<const TracedTensor>(&trank, 1), {ta, tb});
  EXPECT_EQ(run_compiled(*runtime()->runtime(), prog, {ab.value(), bb.value()})[0]
                .to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{3, 2}));
  EXPECT_TF_ERROR(la::lstsq_full(a, b, -1.0), ErrorKind::InvalidArgument);
}

TEST(LinalgCond, RatiosOfSingularValuesAndNormProducts) {
  const EagerTensor d = runtime()->tensor(real_tensor({3, 3}, {4, 0, 0, 0, -2, 0, 0, 0, 0.5}));
  expect_near_all(host(la::cond(d)), {8.0}, 1e-13);
  expect_near_all(host(la::cond(d, -2.0)), {0.125}, 1e-13);
  expect_near_all(host(la::cond(d, 1.0)), {8.0}, 1e-13);
  expect_near_all(host(la::cond(d, kInf)), {8.0}, 1e-13);
  expect_near_all(host(la::cond(d, "fro")), {std::sqrt(20.25) * std::sqrt(4.3125)}, 1e-13);
  const EagerTensor z = runtime()->tensor(complex_tensor({3, 3, 2}, cvalues(18)));
  const EagerTensor c = la::cond(z);
  EXPECT_EQ(c.dtype(), f64);
  EXPECT_EQ(c.shape(), (Shape{2}));
  expect_near_all(host(c), host(la::matrix_norm(z, 2.0) * la::matrix_norm(la::pinv(z), 2.0)),
                  1e-11);
  expect_gradients_ok([](std::span<const EagerTensor> v) { return la::cond(v[0]); }, {z}, "cond");
  expect_gradients_ok([](std::span<const EagerTensor> v) { return la::cond(v[0], "nuc"); }, {z},
                      "cond nuc");
  expect_traced_matches_eager([](auto v) { return la::cond(v[0]); }, {z.value()}, 1e-10);
  EXPECT_TF_ERROR(la::cond(runtime()->tensor(real_tensor({2, 3}, values(6))), 1.0),
                  ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(la::cond(d, "spectral"), ErrorKind::InvalidArgument);
}

TEST(LinalgCond, SingularMatricesGiveInfinityAsPyTorch) {
  // A batch of two: [[1, 0], [0, 0]] (exactly singular) and [[2, 1], [1, 3]];
  // the expected values are torch.linalg.cond's for every p.
  const Tensor a = real_tensor({2, 2, 2}, {1, 0, 0, 0, 2, 1, 1, 3});
  const EagerTensor e = runtime()->tensor(a);
  const double r5 = std::sqrt(5.0), hi = (5 + r5) / 2, lo = (5 - r5) / 2;
  expect_near_all(host(la::cond(e)), {kInf, hi / lo}, 1e-13, "p = None");
  expect_near_all(host(la::cond(e, 2.0)), {kInf, hi / lo}, 1e-13, "p = 2");
  expect_near_all(host(la::cond(e, -2.0)), {0.0, lo / hi}, 1e-13, "p = -2");
  expect_near_all(host(la::cond(e, "fro")), {kInf, 3.0}, 1e-13, "fro");
  expect_near_all(host(la::cond(e, "nuc")), {kInf, 5.0}, 1e-13, "nuc");
  expect_near_all(host(la::cond(e, kInf)), {kInf, 3.2}, 1e-13, "inf");
  expect_near_all(host(la::cond(e, -kInf)), {kInf, 1.8}, 1e-13, "-inf");
  expect_near_all(host(la::cond(e, 1.0)), {kInf, 3.2}, 1e-13, "1");
  expect_near_all(host(la::cond(e, -1.0)), {kInf, 1.8}, 1e-13, "-1");
  // Complex singular input, and the traced tier.
  const EagerTensor z =
      runtime()->tensor(complex_tensor({2, 2}, {cd(1, 1), cd(2, 2), cd(1, -1), cd(2, -2)}));
  expect_near_all(host(la::cond(z, "fro")), {kInf}, 0, "complex fro");
  const TracedTensor x = placeholder(f64, {2, 2, 2});
  const TracedTensor c = la::cond(x, 1.0);
  const Program prog = compile(std::span<const TracedTensor>(&c, 1), {x});
  expect_near_all(host(run_compiled(*runtime()->runtime(), prog, {a})[0]), {kInf, 3.2}, 1e-13,
                  "traced p = 1");
  // The regular entry's gradient is not disturbed by the singular one.
  const EagerTensor reg = runtime()->tensor(real_tensor({2, 2}, {2, 1, 1, 3}));
  const auto g_alone =
      host(grad([](const EagerTensor& v) { return la::cond(v, 1.0); }, reg).value());
  const auto g_batch =
      host(grad(
               [](const EagerTensor& v) {
                 return sum(la::cond(v, 1.0) * runtime()->tensor(real_tensor({2}, {0, 1})));
               },
               e)
               .value());
  expect_near_all(std::vector<double>(g_batch.begin() + 4, g_batch.end()), g_alone, 1e-13,
                  "gradient of the regular entry");
}

TEST(LinalgTensorInvSolve, InverseAndSolveOfReshapedTensors) {
  // A [2, 3, 6]: rows = the first 2 axes (6 entries), columns the last.
  const auto av = values(36);
  const EagerTensor a = runtime()->tensor(real_tensor({2, 3, 6}, av));
  const EagerTensor ai = la::tensorinv(a, 2);
  EXPECT_EQ(ai.shape(), (Shape{6, 2, 3}));
  // As matrices: inv(reshape(A, 6 x 6)).
  const EagerTensor m = reshape(a, {6, 6});
  const auto prod = host(matmul(m, reshape(ai, {6, 6})));
  for (std::int64_t i = 0; i < 6; ++i)
    for (std::int64_t j = 0; j < 6; ++j)
      EXPECT_NEAR(prod[static_cast<std::size_t>(i + 6 * j)], i == j ? 1.0 : 0.0, 1e-12);
  // tensorsolve: A [6, 2, 3] (X's axis first), B [2, 3].
  const EagerTensor s = runtime()->tensor(real_tensor({6, 2, 3}, av));
  const EagerTensor b = runtime()->tensor(real_tensor({2, 3}, values(6, 0.5)));
  const EagerTensor x = la::tensorsolve(s, b);
  EXPECT_EQ(x.shape(), (Shape{6}));
  // sum_x A[x, y] X[x] = B[y].
  const auto xv = host(x), bv = host(b);
  for (std::int64_t y = 0; y < 6; ++y) {
    double acc = 0;
    for (std::int64_t k = 0; k < 6; ++k)
      acc += av[static_cast<std::size_t>(k + 6 * y)] * xv[static_cast<std::size_t>(k)];
    EXPECT_NEAR(acc, bv[static_cast<std::size_t>(y)], 1e-12);
  }
  expect_gradients_ok([](std::span<const EagerTensor> v) { return la::tensorinv(v[0], 1); },
                      {runtime()->tensor(real_tensor({4, 2, 2}, values(16)))}, "tensorinv");
  expect_gradients_ok([](std::span<const EagerTensor> v) { return la::tensorsolve(v[0], v[1]); },
                      {s, b}, "tensorsolve");
  expect_traced_matches_eager([](auto v) { return la::tensorsolve(v[0], v[1]); },
                              {s.value(), b.value()}, 1e-10);
  // dims: A [2, 3, 6] with axis 2 moved to the front is permute(A, {2, 0, 1})
  // [6, 2, 3] (torch.linalg.tensorsolve(a, b, dims=(0,)) on the reversed array).
  const EagerTensor moved = la::tensorsolve(a, b, {2});
  const EagerTensor xm = la::tensorsolve(permute(a, {2, 0, 1}), b);
  expect_near_all(host(moved), host(xm), 1e-13, "dims {2}");
  expect_near_all(host(la::tensorsolve(a, b, {-1})), host(xm), 1e-13, "dims {-1}");
  {  // sum_x A[y0, y1, x] X[x] = B[y0, y1]
    const auto xv2 = host(moved);
    for (std::int64_t y = 0; y < 6; ++y) {
      double acc = 0;
      for (std::int64_t k = 0; k < 6; ++k)
        acc += av[static_cast<std::size_t>(y + 6 * k)] * xv2[static_cast<std::size_t>(k)];
      EXPECT_NEAR(acc, bv[static_cast<std::size_t>(y)], 1e-12);
    }
  }
  // Two axes: A [3, 2, 6, 1] with dims {2, 3} -> [6, 1, 3, 2], X [6, 1].
  const EagerTensor a4 = reshape(a, {3, 2, 6, 1});
  const EagerTensor b4 = runtime()->tensor(real_tensor({3, 2}, values(6, 0.5)));
  const EagerTensor x4 = la::tensorsolve(a4, b4, {2, 3});
  EXPECT_EQ(x4.shape(), (Shape{6, 1}));
  expect_near_all(host(x4), host(la::tensorsolve(permute(a4, {2, 3, 0, 1}), b4)), 1e-13,
                  "dims {2, 3}");
  expect_gradients_ok(
      [](std::span<const EagerTensor> v) { return la::tensorsolve(v[0], v[1], {2}); }, {a, b},
      "tensorsolve dims");
  expect_traced_matches_eager([](auto v) { return la::tensorsolve(v[0], v[1], {2}); },
                              {a.value(), b.value()}, 1e-10);
  EXPECT_TF_ERROR(la::tensorsolve(a, b, {3}), ErrorKind::AxisOutOfBounds);
  EXPECT_TF_ERROR(la::tensorsolve(a, b, {2, -1}), ErrorKind::DuplicateAxis);
  EXPECT_TF_ERROR(la::tensorinv(a, 1), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(la::tensorinv(a, 3), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(la::tensorsolve(s, runtime()->tensor(real_tensor({3, 2}, values(6)))),
                  ErrorKind::ShapeMismatch);
}

TEST(LinalgPinv, SecondOrderIsSymmetricAndMatchesFiniteDifferences) {
  // H of phi(A) = sum(pinv(A) * C): <u, H w> == <w, H u>, and H w is the
  // central difference of the gradient along w.
  const EagerTensor a = runtime()->tensor(real_tensor({3, 2}, values(6)));
  const EagerTensor c = runtime()->tensor(real_tensor({2, 3}, values(6, 3.0)));
  const EagerTensor u = runtime()->tensor(real_tensor({3, 2}, values(6, 1.0)));
  const EagerTensor w = runtime()->tensor(real_tensor({3, 2}, values(6, 2.0)));
  auto g = [&c](const EagerTensor& x) {
    return grad([&c](const EagerTensor& y) { return sum(la::pinv(y) * c); }, x);
  };
  const EagerTensor hu = *jvp(g, a, u).tangent, hw = *jvp(g, a, w).tangent;
  EXPECT_NEAR(host(sum(hu * w))[0], host(sum(hw * u))[0], 1e-9);
  const double h = 1e-5;
  const auto gp = host(g(a + w * h)), gm = host(g(a - w * h)), hv = host(hw);
  for (std::size_t i = 0; i < hv.size(); ++i) {
    EXPECT_NEAR(hv[i], (gp[i] - gm[i]) / (2 * h), 1e-5 * (1 + std::abs(hv[i])));
  }
}
