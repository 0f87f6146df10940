#include "tenferro/linalg/linalg.hpp"

#include <cmath>
#include <complex>
#include <limits>

#include "tenferro/ad/eager_ops.hpp"
#include "tenferro/ad/grad_check.hpp"
#include "tenferro/ad/program.hpp"
#include "tenferro/ad/transforms.hpp"
#include "test_util.hpp"

using namespace tenferro;
namespace la = tenferro::linalg;

namespace {

// A symmetric positive-definite n x n matrix (column-major values).
std::vector<double> spd(std::int64_t n) {
  std::vector<double> a(n * n);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i)
      a[i + j * n] = (i == j ? n + 1.0 : 0.0) + 1.0 / (1.0 + i + j) + 0.1 * std::sin(i * j + 1.0);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < j; ++i) a[i + j * n] = a[j + i * n];
  return a;
}

double at(const std::vector<double>& v, std::int64_t n, std::int64_t i, std::int64_t j) {
  return v[i + j * n];
}

}  // namespace

TEST(LinalgCholesky, FactorsLowerAndUpper) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  const std::int64_t n = 4;
  const auto a = spd(n);
  const Tensor A = Tensor::from_col_major({n, n}, a);
  const auto l = la::cholesky(A, false, cpu).to_vector<double>();
  const auto u = la::cholesky(A, true, cpu).to_vector<double>();
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      double llt = 0, utu = 0;
      for (std::int64_t k = 0; k < n; ++k) {
        llt += at(l, n, i, k) * at(l, n, j, k);
        utu += at(u, n, k, i) * at(u, n, k, j);
      }
      EXPECT_NEAR(llt, at(a, n, i, j), 1e-12);
      EXPECT_NEAR(utu, at(a, n, i, j), 1e-12);
      if (i < j) {
        EXPECT_EQ(at(l, n, i, j), 0.0);
      }
      if (i > j) {
        EXPECT_EQ(at(u, n, i, j), 0.0);
      }
      EXPECT_NEAR(at(u, n, j, i), at(l, n, i, j), 1e-12);
    }
  }
}

TEST(LinalgCholesky, NotPositiveDefiniteIsSingularOrInfo) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  const Tensor A = Tensor::from_col_major({2, 2, 2}, std::vector<double>{4, 0, 0, 1, 1, 2, 2, 1});
  EXPECT_TF_ERROR(la::cholesky(A, false, cpu), ErrorKind::Singular);
  auto [L, info] = la::cholesky_ex(A, false, cpu);
  EXPECT_EQ(info.to_vector<std::int32_t>(), (std::vector<std::int32_t>{0, 2}));
  EXPECT_TF_ERROR(
      la::cholesky(Tensor::from_col_major({2, 3}, std::vector<double>(6, 1.0)), false, cpu),
      ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(
      la::cholesky(Tensor::from_col_major({4}, std::vector<double>(4, 1.0)), false, cpu),
      ErrorKind::RankMismatch);
}

TEST(LinalgSolveTriangular, EveryFormSolves) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  const std::int64_t n = 3, k = 2;
  const std::vector<double> a = {2, 0.5, -1, 7, 3, 0.25, 9, 8, -4};
  const Tensor A = Tensor::from_col_major({n, n}, a);
  const Tensor Bl = Tensor::from_col_major({n, k}, std::vector<double>{1, 2, 3, 4, 5, 6});
  const Tensor Br = Tensor::from_col_major({k, n}, std::vector<double>{1, 2, 3, 4, 5, 6});
  for (bool upper : {false, true}) {
    for (bool unit : {false, true}) {
      auto tri = [&](std::int64_t i, std::int64_t j) {
        if (i == j) return unit ? 1.0 : a[i + j * n];
        return (upper ? i < j : i > j) ? a[i + j * n] : 0.0;
      };
      const auto x = la::solve_triangular(A, Bl, upper, true, unit, cpu).to_vector<double>();
      const auto b = Bl.to_vector<double>();
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < k; ++j) {
          double s = 0;
          for (std::int64_t p = 0; p < n; ++p) s += tri(i, p) * x[p + j * n];
          EXPECT_NEAR(s, b[i + j * n], 1e-12) << upper << unit;
        }
      const auto xr = la::solve_triangular(A, Br, upper, false, unit, cpu).to_vector<double>();
      const auto br = Br.to_vector<double>();
      for (std::int64_t i = 0; i < k; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
          double s = 0;
          for (std::int64_t p = 0; p < n; ++p) s += xr[i + p * k] * tri(p, j);
          EXPECT_NEAR(s, br[i + j * k], 1e-12) << upper << unit;
        }
    }
  }
  const Tensor Z = Tensor::from_col_major({2, 2}, std::vector<double>{1, 1, 0, 0});
  EXPECT_TF_ERROR(la::solve_triangular(Z, Tensor::from_col_major({2, 1}, std::vector<double>{1, 1}),
                                       false, true, false, cpu),
                  ErrorKind::Singular);
  EXPECT_TF_ERROR(la::solve_triangular(A, Tensor::from_col_major({2, 1}, std::vector<double>{1, 1}),
                                       false, true, false, cpu),
                  ErrorKind::ShapeMismatch);
}

TEST(LinalgSolveTriangular, GradientsMatchFiniteDifferences) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  const std::int64_t n = 3;
  auto a = spd(n);
  const EagerTensor A = rt->tensor(Tensor::from_col_major({n, n}, a));
  const EagerTensor B =
      rt->tensor(Tensor::from_col_major({n, 2}, std::vector<double>{1, -2, 3, 0.5, 5, -1}));
  for (bool upper : {false, true}) {
    for (bool left : {false, true}) {
      for (bool unit : {false, true}) {
        const EagerTensor Bx = left ? B : transpose(B);
        auto r = check_gradients(
            [&](std::span<const EagerTensor> x) {
              return la::solve_triangular(x[0], x[1], upper, left, unit);
            },
            {A, Bx});
        EXPECT_TRUE(r.ok) << r.detail << " upper=" << upper << " left=" << left << " unit=" << unit;
      }
    }
  }
}

TEST(LinalgCholesky, GradientsMatchFiniteDifferences) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  const std::int64_t n = 3;
  const EagerTensor X = rt->tensor(Tensor::from_col_major({n, n}, spd(n)));
  for (bool upper : {false, true}) {
    // Through X X^T + I so every direction stays symmetric.
    auto r = check_gradients(
        [&](std::span<const EagerTensor> x) {
          const EagerTensor s = matmul(x[0], transpose(x[0]));
          return la::cholesky(s, upper);
        },
        {X});
    EXPECT_TRUE(r.ok) << r.detail << " upper=" << upper;
  }
}

TEST(LinalgCholesky, NonFiniteEntriesOfTheReadTriangleOnly) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // [[4, x], [y, 9]]: lower reads y (entry 1), upper reads x (entry 2).
  auto mat = [](double below, double above) {
    return Tensor::from_col_major({2, 2}, std::vector<double>{4, below, above, 9});
  };
  EXPECT_EQ(la::cholesky(mat(1, nan), false, cpu).to_vector<double>(),
            (std::vector<double>{2, 0.5, 0, std::sqrt(9 - 0.25)}));
  EXPECT_TF_ERROR(la::cholesky(mat(inf, 1), false, cpu), ErrorKind::Singular);
  EXPECT_TF_ERROR(la::cholesky(mat(1, -inf), true, cpu), ErrorKind::Singular);
  EXPECT_EQ(la::cholesky(mat(nan, 1), true, cpu).to_vector<double>()[2], 0.5);
  // f32 and complex parts (the imaginary part of an off-diagonal entry).
  EXPECT_TF_ERROR(
      la::cholesky(Tensor::from_col_major({2, 2}, std::vector<float>{4, NAN, 0, 9}), false, cpu),
      ErrorKind::Singular);
  const std::vector<c128_t> z = {{4, 0}, {1, inf}, {1, 0}, {9, 0}};
  EXPECT_TF_ERROR(la::cholesky(Tensor::from_col_major({2, 2}, z), false, cpu), ErrorKind::Singular);
  EXPECT_NO_THROW(la::cholesky(Tensor::from_col_major({2, 2}, z), true, cpu));
}
