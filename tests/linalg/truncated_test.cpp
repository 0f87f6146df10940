#include "tenferro/linalg/truncated.hpp"

#include <cmath>

#include "tenferro/ad/eager_ops.hpp"
#include "tenferro/ad/grad_check.hpp"
#include "tenferro/ad/program.hpp"
#include "test_util.hpp"

using namespace tenferro;
namespace la = tenferro::linalg;

namespace {
// A 4 x 3 matrix with singular values 4, 2, 1e-3: U diag(s) V^T for fixed
// orthogonal U (first columns of a Householder reflector) and V = I.
Tensor graded() {
  const double s[3] = {4, 2, 1e-3};
  const double u[4] = {0.5, 0.5, 0.5, 0.5};  // H = I - 2 u u^T
  std::vector<double> a(12);
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 4; ++i) a[i + 4 * j] = ((i == j) - 2 * u[i] * u[j]) * s[j];
  return Tensor::from_col_major({4, 3}, a);
}
}  // namespace

TEST(LinalgTruncation, RankRules) {
  const std::vector<double> m = {10, 5, 1, 0.1, 0.01};
  EXPECT_EQ(la::truncation_rank(m, {}), 5);
  EXPECT_EQ(la::truncation_rank(m, {.max_rank = 2}), 2);
  EXPECT_EQ(la::truncation_rank(m, {.cutoff = 0.05}), 3);  // > 0.5
  EXPECT_EQ(la::truncation_rank(m, {.cutoff = 0.05, .relative_cutoff = false}), 4);
  // weights: total 126.0101; dropping 0.01, 0.1 and 1 discards 1.0101 / 126.0101 = 0.008.
  EXPECT_EQ(la::truncation_rank(m, {.max_discarded_weight = 0.01}), 2);
  EXPECT_EQ(la::truncation_rank(m, {.max_rank = 4, .max_discarded_weight = 1e-6}), 4);
  EXPECT_EQ(la::truncation_rank(m, {.cutoff = 100}), 1);  // never empty
  EXPECT_EQ(la::truncation_rank(std::vector<double>{}, {}), 0);
  EXPECT_TF_ERROR(la::truncation_rank(m, {.max_rank = 0}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(la::truncation_rank(m, {.cutoff = -1}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(la::truncation_rank(m, {.max_discarded_weight = 1}), ErrorKind::InvalidArgument);
}

TEST(LinalgTruncation, SvdKeepsLeadingTripletsAndReportsWeight) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  auto t = la::svd_truncated(graded(), {.cutoff = 1e-2}, cpu);
  EXPECT_EQ(t.rank, 2);
  EXPECT_EQ(t.U.shape(), (Shape{4, 2}));
  EXPECT_EQ(t.Vh.shape(), (Shape{2, 3}));
  const auto s = t.S.to_vector<double>();
  EXPECT_NEAR(s[0], 4, 1e-12);
  EXPECT_NEAR(s[1], 2, 1e-12);
  EXPECT_NEAR(t.discarded_weight.item<double>(), 1e-6 / (16 + 4 + 1e-6), 1e-15);
  // The kept product is the best rank-2 approximation: error = 1e-3 in norm.
  const Tensor approx = matmul(mul(t.U, t.S.reshape({1, 2}), cpu), t.Vh, cpu);
  const auto ap = approx.to_vector<double>(), a = graded().to_vector<double>();
  double err = 0;
  for (std::size_t i = 0; i < ap.size(); ++i) err += (ap[i] - a[i]) * (ap[i] - a[i]);
  EXPECT_NEAR(std::sqrt(err), 1e-3, 1e-12);
}

TEST(LinalgTruncation, EagerGradientIsThatOfTheKeptFactors) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  const EagerTensor x = rt->tensor(graded());
  // sum of kept singular values: gradient U_k V_k^T, a gauge-invariant loss.
  auto r = check_gradients(
      [](std::span<const EagerTensor> v) {
        return sum(la::svd_truncated(v[0], {.max_rank = 2}).S);
      },
      {x});
  EXPECT_TRUE(r.ok) << r.detail;
  auto w = check_gradients(
      [](std::span<const EagerTensor> v) {
        return la::svd_truncated(v[0], {.max_rank = 1}).discarded_weight;
      },
      {x});
  EXPECT_TRUE(w.ok) << w.detail;
}

TEST(LinalgTruncation, TracedTakesAFixedRankOnly) {
  auto a = placeholder(f64, {4, 3}, "a");
  auto t = la::svd_truncated(a, {.max_rank = 2});
  EXPECT_EQ(t.rank, 2);
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  const auto out =
      run_compiled(*rt->runtime(), compile({t.S, t.discarded_weight}, {a}), {graded()});
  EXPECT_NEAR(out[0].to_vector<double>()[1], 2, 1e-12);
  EXPECT_NEAR(out[1].item<double>(), 1e-6 / (16 + 4 + 1e-6), 1e-15);
  EXPECT_TF_ERROR(la::svd_truncated(a, {.cutoff = 0.1}), ErrorKind::Unsupported);
}

TEST(LinalgTruncation, EighKeepsLargestMagnitudes) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  // diag(1, -5, 0.1) in a batch with diag(3, 2, 1).
  std::vector<double> a(18, 0.0);
  const double d[6] = {1, -5, 0.1, 3, 2, 1};
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 3; ++i) a[b * 9 + i * 4] = d[b * 3 + i];
  auto t = la::eigh_truncated(Tensor::from_col_major({3, 3, 2}, a), {.max_rank = 2}, 'L', cpu);
  EXPECT_EQ(t.rank, 2);
  EXPECT_EQ(t.eigenvalues.to_vector<double>(), (std::vector<double>{-5, 1, 3, 2}));
  EXPECT_EQ(t.eigenvectors.shape(), (Shape{3, 2, 2}));
  const auto v = t.eigenvectors.to_vector<double>();
  EXPECT_NEAR(std::abs(v[1]), 1.0, 1e-12);  // first kept vector is e_1 (value -5)
  const auto dw = t.discarded_weight.to_vector<double>();
  EXPECT_NEAR(dw[0], 0.01 / 26.01, 1e-14);
  EXPECT_NEAR(dw[1], 1.0 / 14.0, 1e-14);
}

TEST(LinalgTruncation, TracedEighMatchesEagerWithAFixedRank) {
  // Two symmetric 4 x 4 matrices with eigenvalues of mixed signs: the kept
  // pairs (largest |w|) follow the values inside the graph.
  std::vector<double> a(32);
  for (int b = 0; b < 2; ++b)
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 4; ++i)
        a[b * 16 + i + 4 * j] =
            std::sin(1.0 + i + j + 3.0 * b) + (i == j ? (b ? -2.0 : 1.5) * j : 0);
  const Tensor x = Tensor::from_col_major({4, 4, 2}, a);
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  const auto want = la::eigh_truncated(rt->tensor(x), {.max_rank = 2});
  auto ph = placeholder(f64, {4, 4, 2}, "a");
  const auto t = la::eigh_truncated(ph, {.max_rank = 2});
  EXPECT_EQ(t.rank, 2);
  // A gauge-invariant loss: sum of w_k^2 + the projector onto the kept vectors.
  auto loss = [](const auto& e) {
    return add(sum(mul(e.eigenvalues, e.eigenvalues)),
               sum(matmul(e.eigenvectors, transpose(e.eigenvectors, 0, 1))));
  };
  const TracedTensor l = loss(t);
  const Program p = compile({t.eigenvalues, t.discarded_weight, l, grad(l, ph)}, {ph});
  const auto out = run_compiled(*rt->runtime(), p, {x});
  const auto wv = out[0].to_vector<double>(), ww = want.eigenvalues.value().to_vector<double>();
  ASSERT_EQ(wv.size(), 4u);
  for (std::size_t i = 0; i < wv.size(); ++i) EXPECT_NEAR(wv[i], ww[i], 1e-12) << i;
  const auto dv = out[1].to_vector<double>(),
             dw = want.discarded_weight.value().to_vector<double>();
  for (std::size_t i = 0; i < dv.size(); ++i) EXPECT_NEAR(dv[i], dw[i], 1e-12) << i;
  const EagerTensor xv = rt->variable(x);
  const EagerTensor el = loss(la::eigh_truncated(xv, {.max_rank = 2}));
  EXPECT_NEAR(out[2].item<double>(), el.value().item<double>(), 1e-12);
  el.backward();
  const auto gt = out[3].to_vector<double>(), ge = xv.grad().value().to_vector<double>();
  ASSERT_EQ(gt.size(), ge.size());
  for (std::size_t i = 0; i < gt.size(); ++i) EXPECT_NEAR(gt[i], ge[i], 1e-10) << i;
  EXPECT_TF_ERROR(la::eigh_truncated(ph, {.cutoff = 0.1}), ErrorKind::Unsupported);
}
