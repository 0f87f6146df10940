// vector_norm, matrix_norm, norm and vecdot: values against naive loops
// (every ord kind, real and complex, several axis sets, keepdim), PyTorch's
// derivative conventions at the kinks, gradients through the public checker,
// traced == eager, and error kinds.

#include <algorithm>
#include <limits>
#include <numeric>

#include "composite_test_util.hpp"

using namespace comptest;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double naive_vnorm(const std::vector<double>& a, double ord) {  // a = |x|
  if (ord == 0)
    return static_cast<double>(std::count_if(a.begin(), a.end(), [](double v) { return v != 0; }));
  if (ord == kInf) return *std::max_element(a.begin(), a.end());
  if (ord == -kInf) return *std::min_element(a.begin(), a.end());
  double s = 0;
  for (double v : a) s += std::pow(v, ord);
  return std::pow(s, 1.0 / ord);
}

const std::vector<double> kOrds = {0, 1, 2, 3.5, 0.5, -1.5, kInf, -kInf};

}  // namespace

TEST(LinalgVectorNorm, MatchesNaiveLoopsForEveryOrdAndAxisSet) {
  const Shape shape{2, 3, 4};
  const auto xv = values(24);
  const auto zv = cvalues(24);
  const std::vector<std::vector<std::int64_t>> axis_sets = {{0}, {1}, {2}, {0, 2}, {2, 0, 1}};
  for (DType dt : {f64, f32, c128, c64}) {
    const bool cplx = is_complex(dt);
    const EagerTensor x =
        runtime()->tensor(cplx ? complex_tensor(shape, zv, dt) : real_tensor(shape, xv, dt));
    std::vector<double> absval;
    for (std::size_t i = 0; i < 24; ++i) absval.push_back(cplx ? std::abs(zv[i]) : std::abs(xv[i]));
    const double tol = (dt == f32 || dt == c64) ? 1e-5 : 1e-12;
    for (double ord : kOrds) {
      for (const auto& axes : axis_sets) {
        for (bool keepdim : {false, true}) {
          const EagerTensor n = la::vector_norm(x, ord, Axes(axes.begin(), axes.end()), keepdim);
          EXPECT_EQ(n.dtype(), (dt == f32 || dt == c64) ? f32 : f64);
          EXPECT_EQ(n.rank(), keepdim ? 3 : 3 - static_cast<std::int64_t>(axes.size()));
          const auto want = naive_reduce(shape, absval, axes,
                                         [ord](const auto& g) { return naive_vnorm(g, ord); });
          expect_near_all(host(n), want, tol, "ord " + std::to_string(ord));
        }
      }
      // Empty dims: every axis.
      const EagerTensor all = la::vector_norm(x, ord);
      EXPECT_EQ(all.rank(), 0);
      expect_near_all(host(all), {naive_vnorm(absval, ord)}, tol, "all axes");
    }
  }
}

TEST(LinalgVectorNorm, NegativeAxesAndZeroSizeInputs) {
  const EagerTensor x = runtime()->tensor(real_tensor({3, 2}, {3, -4, 0, 1, 2, -2}));
  expect_near_all(host(la::vector_norm(x, 2.0, {-1})), {std::sqrt(10.0), std::sqrt(20.0), 2.0},
                  1e-14);
  expect_near_all(host(la::vector_norm(x, 2.0, {-2})), {5.0, 3.0}, 1e-14);
  expect_near_all(host(la::vector_norm(x, 0.0, {0})), {2, 3}, 0);
  // Zero-size: sums are 0; the result keeps the other (possibly empty) axes.
  const EagerTensor e = runtime()->tensor(real_tensor({0, 3}, {}));
  expect_near_all(host(la::vector_norm(e, 2.0)), {0.0}, 0);
  expect_near_all(host(la::vector_norm(e, 1.0, {0})), {0, 0, 0}, 0);
  EXPECT_EQ(la::vector_norm(e, kInf, {1}).numel(), 0);
  EXPECT_EQ(la::vector_norm(e, 2.0, {0}, true).shape(), (Shape{1, 3}));
}

TEST(LinalgVectorNorm, DerivativesFollowPyTorchAtKinks) {
  // ord 2 and ord 3 at a zero vector: gradient 0 (not NaN).
  const EagerTensor z = runtime()->tensor(real_tensor({3}, {0, 0, 0}));
  for (double ord : {2.0, 3.0, 1.5, 0.5}) {
    const auto g = grad([ord](const EagerTensor& v) { return la::vector_norm(v, ord); }, z);
    expect_near_all(host(g), {0, 0, 0}, 0, "zero vector, ord " + std::to_string(ord));
  }
  // ord 0: a zero derivative, also at zero and infinite entries.
  const EagerTensor x = runtime()->tensor(real_tensor({3}, {1.5, 0, -2}));
  expect_near_all(host(grad([](const EagerTensor& v) { return la::vector_norm(v, 0.0); }, x)),
                  {0, 0, 0}, 0);
  const EagerTensor xi =
      runtime()->tensor(real_tensor({2}, {std::numeric_limits<double>::infinity(), 1.0}));
  expect_near_all(host(grad([](const EagerTensor& v) { return la::vector_norm(v, 0.0); }, xi)),
                  {0, 0}, 0);
  expect_near_all(host(la::vector_norm(xi, 0.0)), {2.0}, 0);
  // ord 1 and ord 0.5: sgn(0) = 0 and the masked entry.
  expect_near_all(host(grad([](const EagerTensor& v) { return la::vector_norm(v, 1.0); }, x)),
                  {1, 0, -1}, 0);
  const double n05 = std::pow(std::sqrt(1.5) + std::sqrt(2.0), 2.0);
  expect_near_all(host(grad([](const EagerTensor& v) { return la::vector_norm(v, 0.5); }, x)),
                  {std::pow(1.5, -0.5) * std::sqrt(n05), 0, -std::pow(2.0, -0.5) * std::sqrt(n05)},
                  1e-13);
  // inf / -inf with ties: the gradient is split evenly between the tied entries.
  const EagerTensor t = runtime()->tensor(real_tensor({4}, {2, -2, 1, 0.5}));
  expect_near_all(host(grad([](const EagerTensor& v) { return la::vector_norm(v, kInf); }, t)),
                  {0.5, -0.5, 0, 0}, 0);
  const EagerTensor u = runtime()->tensor(real_tensor({3}, {0.5, -0.5, 3}));
  expect_near_all(host(grad([](const EagerTensor& v) { return la::vector_norm(v, -kInf); }, u)),
                  {0.5, -0.5, 0}, 0);
  // A zero entry with a negative ord: the norm is 0 and so is the gradient.
  const EagerTensor w = runtime()->tensor(real_tensor({3}, {1, 0, 2}));
  EXPECT_EQ(host(la::vector_norm(w, -1.5))[0], 0.0);
  expect_near_all(host(grad([](const EagerTensor& v) { return la::vector_norm(v, -1.5); }, w)),
                  {0, 0, 0}, 0);
}

TEST(LinalgVectorNorm, GradientsMatchFiniteDifferences) {
  const Shape shape{3, 2};
  const EagerTensor x = runtime()->tensor(real_tensor(shape, values(6)));
  const EagerTensor z = runtime()->tensor(complex_tensor(shape, cvalues(6)));
  for (const EagerTensor& in : {x, z}) {
    for (double ord : {1.0, 2.0, 3.5, 0.5, -1.5, kInf, -kInf}) {
      for (Axes axes : {Axes{}, Axes{0}, Axes{1}}) {
        expect_gradients_ok(
            [ord, axes](std::span<const EagerTensor> v) {
              return la::vector_norm(v[0], ord, axes, true);
            },
            {in}, "ord " + std::to_string(ord));
      }
    }
  }
}

TEST(LinalgVectorNorm, TracedMatchesEager) {
  const Tensor x = real_tensor({3, 2}, values(6));
  const Tensor z = complex_tensor({3, 2}, cvalues(6));
  for (double ord : {0.0, 1.0, 2.0, 3.5, 0.5, -1.5, kInf, -kInf}) {
    for (const Tensor& in : {x, z}) {
      expect_traced_matches_eager([ord](auto v) { return la::vector_norm(v[0], ord, {0}); }, {in});
    }
  }
}

TEST(LinalgMatrixNorm, MatchesNaiveLoops) {
  // A batch of three 2 x 4 matrices [m, n, batch], and the same with the matrix
  // in axes {2, 0} (rows on axis 2, columns on axis 0).
  const Shape shape{2, 4, 3};
  const auto av = values(24);
  const auto cv = cvalues(24);
  for (DType dt : {f64, c128}) {
    const bool cplx = is_complex(dt);
    const EagerTensor a =
        runtime()->tensor(cplx ? complex_tensor(shape, cv) : real_tensor(shape, av));
    std::vector<double> absval;
    for (std::size_t i = 0; i < 24; ++i) absval.push_back(cplx ? std::abs(cv[i]) : std::abs(av[i]));
    auto at = [&](std::int64_t i, std::int64_t j, std::int64_t b) {
      return absval[static_cast<std::size_t>(i + 2 * j + 8 * b)];
    };
    for (std::int64_t b = 0; b < 3; ++b) {
      double fro = 0, c1 = -1, cm1 = 1e300, rinf = -1, rminf = 1e300;
      for (std::int64_t j = 0; j < 4; ++j) {
        double s = 0;
        for (std::int64_t i = 0; i < 2; ++i) {
          s += at(i, j, b);
          fro += at(i, j, b) * at(i, j, b);
        }
        c1 = std::max(c1, s);
        cm1 = std::min(cm1, s);
      }
      for (std::int64_t i = 0; i < 2; ++i) {
        double s = 0;
        for (std::int64_t j = 0; j < 4; ++j) s += at(i, j, b);
        rinf = std::max(rinf, s);
        rminf = std::min(rminf, s);
      }
      const std::vector<std::pair<double, double>> cases = {
          {1, c1}, {-1, cm1}, {kInf, rinf}, {-kInf, rminf}};
      for (auto [ord, want] : cases) {
        EXPECT_NEAR(host(la::matrix_norm(a, ord))[static_cast<std::size_t>(b)], want, 1e-12) << ord;
      }
      EXPECT_NEAR(host(la::matrix_norm(a))[static_cast<std::size_t>(b)], std::sqrt(fro), 1e-12);
      EXPECT_NEAR(host(la::norm(a, 1.0, Axes{0, 1}))[static_cast<std::size_t>(b)], c1, 1e-12);
    }
    // Swapped axes transpose the matrix: 1 <-> inf.
    expect_near_all(host(la::matrix_norm(a, 1.0, {1, 0})), host(la::matrix_norm(a, kInf)), 1e-14);
    // keepdim keeps both matrix axes with extent 1.
    EXPECT_EQ(la::matrix_norm(a, kInf, {0, 1}, true).shape(), (Shape{1, 1, 3}));
    EXPECT_EQ(la::matrix_norm(a, "fro", {2, 0}, true).shape(), (Shape{1, 4, 1}));
    EXPECT_EQ(la::matrix_norm(a, -1.0, {2, 0}, false).shape(), (Shape{4}));
  }
}

TEST(LinalgMatrixNorm, GradientsAndTracedAgreement) {
  const Shape shape{3, 2, 2};
  const EagerTensor a = runtime()->tensor(real_tensor(shape, values(12)));
  const EagerTensor z = runtime()->tensor(complex_tensor(shape, cvalues(12)));
  for (const EagerTensor& in : {a, z}) {
    for (double ord : {1.0, -1.0, kInf, -kInf}) {
      expect_gradients_ok(
          [ord](std::span<const EagerTensor> v) { return la::matrix_norm(v[0], ord); }, {in},
          "ord " + std::to_string(ord));
      expect_traced_matches_eager(
          [ord](auto v) {
            return la::matrix_norm(v[0], ord, {1, 0});
          },
          {in.value()});
    }
    expect_gradients_ok([](std::span<const EagerTensor> v) { return la::matrix_norm(v[0]); }, {in},
                        "fro");
    expect_traced_matches_eager([](auto v) { return la::matrix_norm(v[0], "fro"); }, {in.value()});
  }
}

TEST(LinalgMatrixNorm, SingularValueNorms) {
  // A diagonal matrix with entries 3, -1, 0.5 (singular values 3, 1, 0.5),
  // rotated by a permutation so the diagonal is not where the norm looks.
  const EagerTensor a = runtime()->tensor(real_tensor({3, 3}, {0, -1, 0, 3, 0, 0, 0, 0, 0.5}));
  expect_near_all(host(la::matrix_norm(a, "nuc")), {4.5}, 1e-13);
  expect_near_all(host(la::matrix_norm(a, 2.0)), {3.0}, 1e-13);
  expect_near_all(host(la::matrix_norm(a, -2.0)), {0.5}, 1e-13);
  // Batched, with the matrix in axes {2, 0} and keepdim.
  const Shape shape{3, 2, 4};
  const EagerTensor b = runtime()->tensor(real_tensor(shape, values(24)));
  const EagerTensor moved = permute(b, {2, 0, 1});  // [4, 3, 2]: matrices in axes {0, 1}
  const EagerTensor n = la::matrix_norm(b, "nuc", {2, 0}, true);
  EXPECT_EQ(n.shape(), (Shape{1, 2, 1}));
  expect_near_all(host(n), host(la::matrix_norm(moved, "nuc")), 1e-13);
  expect_near_all(host(la::matrix_norm(b, 2.0, {2, 0})), host(la::matrix_norm(moved, 2.0)), 1e-13);
  // The 2-norm bounds: ||A||_2 <= ||A||_F <= sqrt(rank) ||A||_2.
  const auto two = host(la::matrix_norm(moved, 2.0)), fro = host(la::matrix_norm(moved));
  for (std::size_t i = 0; i < two.size(); ++i) {
    EXPECT_LE(two[i], fro[i] + 1e-13);
    EXPECT_LE(fro[i], std::sqrt(3.0) * two[i] + 1e-13);
  }
  const EagerTensor z = runtime()->tensor(complex_tensor({3, 2}, cvalues(6)));
  for (const EagerTensor& in : {moved, z}) {
    expect_gradients_ok([](std::span<const EagerTensor> v) { return la::matrix_norm(v[0], "nuc"); },
                        {in}, "nuc");
    expect_gradients_ok([](std::span<const EagerTensor> v) { return la::matrix_norm(v[0], -2.0); },
                        {in}, "-2");
  }
  expect_traced_matches_eager(
      [](auto v) {
        return la::matrix_norm(v[0], 2.0, {1, 0});
      },
      {b.value()}, 1e-11);
  // Empty matrices: the nuclear norm is 0, the +-2 norms are undefined.
  const EagerTensor e = runtime()->tensor(real_tensor({0, 3}, {}));
  expect_near_all(host(la::matrix_norm(e, "nuc")), {0.0}, 0);
  EXPECT_TF_ERROR(la::matrix_norm(e, 2.0), ErrorKind::InvalidArgument);
}

TEST(LinalgNorm, DispatchesLikeTorchLinalgNorm) {
  const EagerTensor v = runtime()->tensor(real_tensor({4}, {3, -4, 1, 0}));
  const EagerTensor m = runtime()->tensor(real_tensor({2, 2, 2}, values(8)));
  const EagerTensor m2 = runtime()->tensor(real_tensor({2, 3}, values(6)));
  expect_near_all(host(la::norm(v)), {std::sqrt(26.0)}, 1e-14);
  expect_near_all(host(la::norm(v, kInf)), {4.0}, 0);
  expect_near_all(host(la::norm(m)), host(la::vector_norm(m)), 1e-14);  // flattened 2-norm
  expect_near_all(host(la::norm(m2, 1.0)), host(la::matrix_norm(m2, 1.0)), 0);
  expect_near_all(host(la::norm(m2, "fro")), host(la::vector_norm(m2)), 1e-14);
  expect_near_all(host(la::norm(m, 3.0, Axes{2})), host(la::vector_norm(m, 3.0, {2})), 0);
  expect_near_all(host(la::norm(m, std::nullopt, Axes{0, 2})),
                  host(la::matrix_norm(m, "fro", {0, 2})), 0);
  EXPECT_EQ(la::norm(m2, 1.0, std::nullopt, true).shape(), (Shape{1, 1}));
}

TEST(LinalgVecdot, ConjugatesTheFirstOperand) {
  const Shape shape{3, 2};
  const auto xa = cvalues(6), ya = cvalues(6, 0.9);
  const EagerTensor x = runtime()->tensor(complex_tensor(shape, xa));
  const EagerTensor y = runtime()->tensor(complex_tensor(shape, ya));
  for (std::int64_t dim : {0, 1, -1}) {
    const auto got = host_c(la::vecdot(x, y, dim));
    const std::int64_t d = dim < 0 ? dim + 2 : dim;
    const std::int64_t outer = d == 0 ? 2 : 3, inner = d == 0 ? 3 : 2;
    ASSERT_EQ(got.size(), static_cast<std::size_t>(outer));
    for (std::int64_t o = 0; o < outer; ++o) {
      cd s = 0;
      for (std::int64_t k = 0; k < inner; ++k) {
        const std::size_t idx = static_cast<std::size_t>(d == 0 ? k + 3 * o : o + 3 * k);
        s += std::conj(xa[idx]) * ya[idx];
      }
      EXPECT_NEAR(std::abs(got[static_cast<std::size_t>(o)] - s), 0, 1e-13);
    }
  }
  expect_gradients_ok([](std::span<const EagerTensor> v) { return la::vecdot(v[0], v[1], 0); },
                      {x, y}, "complex vecdot");
  const EagerTensor xr = runtime()->tensor(real_tensor(shape, values(6)));
  const EagerTensor yr = runtime()->tensor(real_tensor(shape, values(6, 0.4)));
  expect_gradients_ok([](std::span<const EagerTensor> v) { return la::vecdot(v[0], v[1], 1); },
                      {xr, yr}, "real vecdot");
  expect_traced_matches_eager([](auto v) { return la::vecdot(v[0], v[1], 1); },
                              {xr.value(), yr.value()});
  const EagerTensor e = runtime()->tensor(real_tensor({0, 2}, {}));
  expect_near_all(host(la::vecdot(e, e, 0)), {0, 0}, 0);
}

TEST(LinalgNorms, ErrorsAreTyped) {
  const EagerTensor x = runtime()->tensor(real_tensor({2, 3}, values(6)));
  const EagerTensor i =
      runtime()->tensor(Tensor::from_col_major({2}, std::vector<std::int64_t>{1, 2}));
  EXPECT_TF_ERROR(la::vector_norm(i), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(la::vector_norm(x, 2.0, {2}), ErrorKind::AxisOutOfBounds);
  EXPECT_TF_ERROR(la::vector_norm(x, 2.0, {0, -2}), ErrorKind::DuplicateAxis);
  EXPECT_TF_ERROR(la::vector_norm(x, std::nan("")), ErrorKind::InvalidArgument);
  const EagerTensor e = runtime()->tensor(real_tensor({0, 3}, {}));
  EXPECT_TF_ERROR(la::vector_norm(e, kInf), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(la::vector_norm(e, -1.0, {0}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(la::matrix_norm(x, 3.0), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(la::matrix_norm(x, "spectral"), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(la::matrix_norm(x, 1.0, {0}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(la::matrix_norm(x, 1.0, {1, 1}), ErrorKind::DuplicateAxis);
  EXPECT_TF_ERROR(la::matrix_norm(la::vector_norm(x, 2.0, {0}), 1.0), ErrorKind::RankMismatch);
  EXPECT_TF_ERROR(la::matrix_norm(e, kInf), ErrorKind::InvalidArgument);  // max over 0 rows
  expect_near_all(host(la::matrix_norm(e, -1.0)), {0.0}, 0);  // min over 3 empty columns
  EXPECT_TF_ERROR(la::norm(runtime()->tensor(real_tensor({2, 2, 2}, values(8))), 1.0),
                  ErrorKind::RankMismatch);
  EXPECT_TF_ERROR(la::norm(x, 2.0, Axes{0, 1, 0}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(la::norm(x, "fro", Axes{0}), ErrorKind::InvalidArgument);
  const EagerTensor z = runtime()->tensor(complex_tensor({2, 3}, cvalues(6)));
  EXPECT_TF_ERROR(la::vecdot(x, z, 0), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(la::vecdot(x, x, 3), ErrorKind::AxisOutOfBounds);
}

TEST(LinalgNorms, TracedWithSymbolicExtents) {
  // One program for every n: the norms need no constant extents.
  const TracedTensor x = placeholder(f64, {SymDim::var("n"), 3});
  const TracedTensor y = la::vector_norm(x, 3.5, {0}) + la::matrix_norm(x, 1.0, {0, 1}) +
                         la::vecdot(x, x, 0) + la::vector_norm(x, 0.5, {0});
  const Program p = compile({y}, {x});
  Runtime& rt = *runtime()->runtime();
  for (std::int64_t n : {2, 5}) {
    const Tensor v = real_tensor({n, 3}, values(3 * n));
    const EagerTensor e = runtime()->tensor(v);
    const EagerTensor want = la::vector_norm(e, 3.5, {0}) + la::matrix_norm(e, 1.0, {0, 1}) +
                             la::vecdot(e, e, 0) + la::vector_norm(e, 0.5, {0});
    expect_near_all(host(run_compiled(rt, p, {v})[0]), host(want), 1e-13,
                    "n = " + std::to_string(n));
  }
}
