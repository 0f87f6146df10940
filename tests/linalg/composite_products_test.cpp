// vander, multi_dot, cross and matrix_power: values against naive loops,
// gradients through the public checker, traced == eager, and error kinds.

#include "composite_test_util.hpp"

using namespace comptest;

namespace {

// Naive column-major matrix product of [m, k] and [k, n].
std::vector<double> naive_mm(const std::vector<double>& a, const std::vector<double>& b,
                             std::int64_t m, std::int64_t k, std::int64_t n) {
  std::vector<double> c(static_cast<std::size_t>(m * n), 0.0);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t p = 0; p < k; ++p)
        c[static_cast<std::size_t>(i + j * m)] +=
            a[static_cast<std::size_t>(i + p * m)] * b[static_cast<std::size_t>(p + j * k)];
  return c;
}

}  // namespace

TEST(LinalgVander, IncreasingPowersInColumns) {
  const auto xv = values(6);  // [3, 2]: two vectors of 3
  const EagerTensor x = runtime()->tensor(real_tensor({3, 2}, xv));
  const EagerTensor v = la::vander(x, 4);
  ASSERT_EQ(v.shape(), (Shape{3, 4, 2}));
  const auto got = host(v);
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t j = 0; j < 4; ++j)
      for (std::int64_t i = 0; i < 3; ++i)
        EXPECT_NEAR(got[static_cast<std::size_t>(i + 3 * j + 12 * b)],
                    std::pow(xv[static_cast<std::size_t>(i + 3 * b)], static_cast<double>(j)),
                    1e-14);
  EXPECT_EQ(la::vander(x).shape(), (Shape{3, 3, 2}));  // N defaults to n
  const EagerTensor s = runtime()->tensor(real_tensor({}, {2.0}));
  EXPECT_EQ(la::vander(s, 3).shape(), (Shape{1, 3}));
  expect_near_all(host(la::vander(s, 3)), {1, 2, 4}, 0);
  const EagerTensor e = runtime()->tensor(real_tensor({0}, {}));
  EXPECT_EQ(la::vander(e, 3).shape(), (Shape{0, 3}));
  const EagerTensor z = runtime()->tensor(complex_tensor({3}, cvalues(3)));
  expect_gradients_ok([](std::span<const EagerTensor> in) { return la::vander(in[0], 4); }, {x},
                      "real vander");
  expect_gradients_ok([](std::span<const EagerTensor> in) { return la::vander(in[0], 3); }, {z},
                      "complex vander");
  expect_traced_matches_eager([](auto in) { return la::vander(in[0], 4); }, {x.value()});
  EXPECT_TF_ERROR(la::vander(x, 1), ErrorKind::InvalidArgument);
  const EagerTensor flags = ne(x, x);  // bool
  EXPECT_TF_ERROR(la::vander(flags), ErrorKind::DTypeMismatch);
}

TEST(LinalgMultiDot, MatchesNaiveProductsAndVectorEnds) {
  // 2x30, 30x3, 3x40, 40x2: any order gives the same value.
  const auto a = values(60), b = values(90, 1), c = values(120, 2), d = values(80, 3);
  const EagerTensor A = runtime()->tensor(real_tensor({2, 30}, a));
  const EagerTensor B = runtime()->tensor(real_tensor({30, 3}, b));
  const EagerTensor C = runtime()->tensor(real_tensor({3, 40}, c));
  const EagerTensor D = runtime()->tensor(real_tensor({40, 2}, d));
  const auto want = naive_mm(naive_mm(naive_mm(a, b, 2, 30, 3), c, 2, 3, 40), d, 2, 40, 2);
  const EagerTensor P = la::multi_dot(std::vector<EagerTensor>{A, B, C, D});
  EXPECT_EQ(P.shape(), (Shape{2, 2}));
  expect_near_all(host(P), want, 1e-12);
  // Vector ends: a row vector first, a column vector last.
  const auto u = values(2, 5), w = values(2, 6);
  const EagerTensor U = runtime()->tensor(real_tensor({2}, u));
  const EagerTensor W = runtime()->tensor(real_tensor({2}, w));
  const auto uP = naive_mm(u, want, 1, 2, 2);
  const EagerTensor r = la::multi_dot(std::vector<EagerTensor>{U, A, B, C, D});
  EXPECT_EQ(r.shape(), (Shape{2}));
  expect_near_all(host(r), uP, 1e-12);
  const EagerTensor s = la::multi_dot(std::vector<EagerTensor>{U, A, B, C, D, W});
  EXPECT_EQ(s.rank(), 0);
  expect_near_all(host(s), naive_mm(uP, w, 1, 2, 1), 1e-12);
  EXPECT_EQ(la::multi_dot(std::vector<EagerTensor>{A, B, C, D, W}).shape(), (Shape{2}));
  // Zero-size inner extent: zeros.
  const EagerTensor E0 = runtime()->tensor(real_tensor({2, 0}, {}));
  const EagerTensor E1 = runtime()->tensor(real_tensor({0, 3}, {}));
  expect_near_all(host(la::multi_dot(std::vector<EagerTensor>{E0, E1})), std::vector<double>(6, 0),
                  0);
  expect_gradients_ok(
      [](std::span<const EagerTensor> in) {
        return la::multi_dot(std::vector<EagerTensor>(in.begin(), in.end()));
      },
      {A, B, C, D}, "multi_dot");
  expect_traced_matches_eager(
      [](auto in) {
        using T = typename decltype(in)::value_type;
        return la::multi_dot(std::vector<T>(in.begin(), in.end()));
      },
      {A.value(), B.value(), C.value(), D.value()}, 1e-11);
  EXPECT_TF_ERROR(la::multi_dot(std::vector<EagerTensor>{A}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(la::multi_dot(std::vector<EagerTensor>{A, C}), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(la::multi_dot(std::vector<EagerTensor>{A, U, B}), ErrorKind::RankMismatch);
  const EagerTensor Z = runtime()->tensor(complex_tensor({30, 3}, cvalues(90)));
  EXPECT_TF_ERROR(la::multi_dot(std::vector<EagerTensor>{A, Z}), ErrorKind::DTypeMismatch);
}

TEST(LinalgCross, RightHandedAndBroadcasting) {
  // Unit vectors: e0 x e1 = e2 along axis 0, for a batch of two.
  const EagerTensor a = runtime()->tensor(real_tensor({3, 2}, {1, 0, 0, 0, 1, 0}));
  const EagerTensor b = runtime()->tensor(real_tensor({3, 2}, {0, 1, 0, 0, 0, 1}));
  expect_near_all(host(la::cross(a, b)), {0, 0, 1, 1, 0, 0}, 0);
  // Along axis 1 of [2, 3] with complex values (no conjugation).
  const auto av = cvalues(6), bv = cvalues(6, 0.3);
  const EagerTensor A = runtime()->tensor(complex_tensor({2, 3}, av));
  const EagerTensor B = runtime()->tensor(complex_tensor({2, 3}, bv));
  const auto got = host_c(la::cross(A, B, -1));
  for (std::int64_t r = 0; r < 2; ++r) {
    auto x = [&](std::int64_t k) { return av[static_cast<std::size_t>(r + 2 * k)]; };
    auto y = [&](std::int64_t k) { return bv[static_cast<std::size_t>(r + 2 * k)]; };
    const cd want[3] = {x(1) * y(2) - x(2) * y(1), x(2) * y(0) - x(0) * y(2),
                        x(0) * y(1) - x(1) * y(0)};
    for (std::int64_t k = 0; k < 3; ++k)
      EXPECT_NEAR(std::abs(got[static_cast<std::size_t>(r + 2 * k)] - want[k]), 0, 1e-13);
  }
  // A single vector against a batch.
  const EagerTensor one = runtime()->tensor(real_tensor({3, 1}, {0, 0, 1}));
  expect_near_all(host(la::cross(a, one)), {0, -1, 0, 1, 0, 0}, 0);
  expect_gradients_ok([](std::span<const EagerTensor> in) { return la::cross(in[0], in[1], 1); },
                      {A, B}, "complex cross");
  expect_traced_matches_eager([](auto in) { return la::cross(in[0], in[1]); },
                              {a.value(), b.value()});
  EXPECT_TF_ERROR(la::cross(A, B, 0), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(la::cross(a, A), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(la::cross(a, runtime()->tensor(real_tensor({3}, {1, 2, 3}))),
                  ErrorKind::RankMismatch);
  EXPECT_TF_ERROR(la::cross(a, b, 2), ErrorKind::AxisOutOfBounds);
}

TEST(LinalgMatrixPower, RepeatedProducts) {
  const auto av = values(18);
  const EagerTensor A = runtime()->tensor(real_tensor({3, 3, 2}, av));
  for (std::int64_t n : {0, 1, 2, 5, 6}) {
    const auto got = host(la::matrix_power(A, n));
    for (std::int64_t b = 0; b < 2; ++b) {
      const std::vector<double> ab(av.begin() + 9 * b, av.begin() + 9 * (b + 1));
      std::vector<double> want = {1, 0, 0, 0, 1, 0, 0, 0, 1};
      for (std::int64_t k = 0; k < n; ++k) want = naive_mm(want, ab, 3, 3, 3);
      const std::vector<double> g(got.begin() + 9 * b, got.begin() + 9 * (b + 1));
      expect_near_all(g, want, 1e-12, "n = " + std::to_string(n));
    }
  }
  const EagerTensor E = runtime()->tensor(real_tensor({2, 2, 0}, {}));
  EXPECT_EQ(la::matrix_power(E, 3).shape(), (Shape{2, 2, 0}));
  const EagerTensor Z = runtime()->tensor(complex_tensor({2, 2}, cvalues(4)));
  expect_gradients_ok([](std::span<const EagerTensor> in) { return la::matrix_power(in[0], 5); },
                      {Z}, "complex matrix_power");
  expect_traced_matches_eager([](auto in) { return la::matrix_power(in[0], 3); }, {A.value()},
                              1e-11);
  EXPECT_TF_ERROR(la::matrix_power(runtime()->tensor(real_tensor({2, 3}, values(6))), 2),
                  ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(la::matrix_power(runtime()->tensor(real_tensor({2}, values(2))), 2),
                  ErrorKind::RankMismatch);
}

TEST(LinalgMatrixPower, NegativePowersUseTheInverse) {
  const EagerTensor A = runtime()->tensor(real_tensor({2, 2, 2}, {4, 1, 2, 3, 2, 0.5, -1, 5}));
  const EagerTensor P = la::matrix_power(A, -2);
  // A^-2 A^2 = I for every matrix of the batch.
  const auto prod = host(matmul(P, la::matrix_power(A, 2)));
  expect_near_all(prod, {1, 0, 0, 1, 1, 0, 0, 1}, 1e-13);
  expect_gradients_ok([](std::span<const EagerTensor> in) { return la::matrix_power(in[0], -3); },
                      {A}, "matrix_power(-3)");
  const EagerTensor S = runtime()->tensor(real_tensor({2, 2}, {1, 2, 2, 4}));
  EXPECT_TF_ERROR(la::matrix_power(S, -1), ErrorKind::Singular);
}

TEST(LinalgMatrixExp, MatchesTaylorSeriesAndIdentities) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  // Several norms, so the scaling-and-squaring path runs with s = 0 and s > 0.
  for (double scale : {0.1, 1.0, 9.0}) {
    std::vector<double> a = values(9);
    for (double& v : a) v *= scale;
    // exp(A) by a long Taylor series on A / 2^8, squared 8 times.
    std::vector<double> x(9), term(9), sum(9);
    for (std::size_t i = 0; i < 9; ++i) x[i] = a[i] / 256.0;
    for (std::int64_t i = 0; i < 3; ++i) sum[static_cast<std::size_t>(i * 4)] = 1.0;
    term = sum;
    for (int k = 1; k < 30; ++k) {
      term = naive_mm(term, x, 3, 3, 3);
      for (double& t : term) t /= k;
      for (std::size_t i = 0; i < 9; ++i) sum[i] += term[i];
    }
    for (int k = 0; k < 8; ++k) sum = naive_mm(sum, sum, 3, 3, 3);
    const Tensor E = la::matrix_exp(real_tensor({3, 3}, a), cpu);
    expect_near_all(host(E), sum, 1e-11, "scale " + std::to_string(scale));
  }
  // exp(A) exp(-A) = I for complex batches; exp(diag(d)) = diag(exp(d)).
  const EagerTensor Z = runtime()->tensor(complex_tensor({3, 3, 2}, cvalues(18)));
  const auto I = host_c(matmul(la::matrix_exp(Z), la::matrix_exp(neg(Z))));
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t i = 0; i < 3; ++i)
      for (std::int64_t j = 0; j < 3; ++j)
        EXPECT_NEAR(std::abs(I[static_cast<std::size_t>(i + 3 * j + 9 * b)] - (i == j ? 1.0 : 0.0)),
                    0, 1e-12);
  const EagerTensor D = runtime()->tensor(real_tensor({2, 2}, {0.5, 0, 0, -2}));
  expect_near_all(host(la::matrix_exp(D)), {std::exp(0.5), 0, 0, std::exp(-2.0)}, 1e-14);
  const EagerTensor F = runtime()->tensor(real_tensor({2, 2}, {1, 0, 0, 1}, f32));
  EXPECT_EQ(la::matrix_exp(F).dtype(), f32);
  EXPECT_EQ(la::matrix_exp(runtime()->tensor(real_tensor({0, 0, 3}, {}))).shape(),
            (Shape{0, 0, 3}));
  EXPECT_TF_ERROR(la::matrix_exp(runtime()->tensor(real_tensor({2, 3}, values(6)))),
                  ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(la::matrix_exp(runtime()->tensor(real_tensor({3}, values(3)))),
                  ErrorKind::RankMismatch);
}

TEST(LinalgMatrixExp, GradientsAndTracedAgreement) {
  const EagerTensor A = runtime()->tensor(real_tensor({3, 3}, values(9)));
  const EagerTensor Z = runtime()->tensor(complex_tensor({2, 2, 2}, cvalues(8)));
  for (const EagerTensor& in : {A, Z}) {
    expect_gradients_ok([](std::span<const EagerTensor> v) { return la::matrix_exp(v[0]); }, {in},
                        "matrix_exp");
    expect_traced_matches_eager([](auto v) { return la::matrix_exp(v[0]); }, {in.value()}, 1e-11);
  }
  // Second order: the Hessian-vector product of sum(exp(A)) is symmetric
  // (<u, H v> == <v, H u>).
  const EagerTensor u = runtime()->tensor(real_tensor({3, 3}, values(9, 1.0)));
  const EagerTensor w = runtime()->tensor(real_tensor({3, 3}, values(9, 2.0)));
  auto g = [](const EagerTensor& x) {
    return grad([](const EagerTensor& y) { return sum(la::matrix_exp(y)); }, x);
  };
  const EagerTensor hu = *jvp(g, A, u).tangent, hw = *jvp(g, A, w).tangent;
  EXPECT_NEAR(host(sum(hu * w))[0], host(sum(hw * u))[0], 1e-10);
}
