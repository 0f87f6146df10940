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

// The discarded weight is scale-invariant (issue 52 item 11): diag(1e200,
// 1e190, 1e100) keeps rank 1 under max_discarded_weight = 1e-3 (the tail
// weights are 1e-20 and 1e-200), and so does the same matrix times 1e-200;
// the reported weight is finite in every tier.
TEST(LinalgTruncation, DiscardedWeightIsScaleInvariant) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  EXPECT_EQ(
      la::truncation_rank(std::vector<double>{1e200, 1e190, 1e100}, {.max_discarded_weight = 1e-3}),
      1);
  EXPECT_EQ(
      la::truncation_rank(std::vector<double>{1, 1e-10, 1e-100}, {.max_discarded_weight = 1e-3}),
      1);
  for (const double scale : {1.0, 1e-200}) {
    const Tensor a = Tensor::from_col_major(
        {3, 3}, std::vector<double>{1e200 * scale, 0, 0, 0, 1e190 * scale, 0, 0, 0, 1e100 * scale});
    const auto t = la::svd_truncated(a, {.max_discarded_weight = 1e-3}, cpu);
    EXPECT_EQ(t.rank, 1) << scale;
    EXPECT_NEAR(t.discarded_weight.item<double>(), 1e-20, 1e-30) << scale;
    const auto e = la::svd_truncated(rt->tensor(a), {.max_discarded_weight = 1e-3});
    EXPECT_EQ(e.rank, 1) << scale;
    EXPECT_NEAR(e.discarded_weight.value().item<double>(), 1e-20, 1e-30) << scale;
    const auto w = la::svd_truncated(a, {.max_rank = 2}, cpu);  // weight of the last value
    EXPECT_NEAR(w.discarded_weight.item<double>(), 1e-200, 1e-210) << scale;
  }
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

TEST(LinalgTruncation, TracedFixedRankIsAConstant) {
  auto a = placeholder(f64, {4, 3}, "a");
  auto t = la::svd_truncated(a, {.max_rank = 2});
  EXPECT_EQ(t.rank, 2);
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  const auto out =
      run_compiled(*rt->runtime(), compile({t.S, t.discarded_weight}, {a}), {graded()});
  EXPECT_NEAR(out[0].to_vector<double>()[1], 2, 1e-12);
  EXPECT_NEAR(out[1].item<double>(), 1e-6 / (16 + 4 + 1e-6), 1e-15);
  EXPECT_TRUE(t.S.shape()[0].is_constant());
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
}

namespace {
// U diag(s) V^T of size 5 x 4 with fixed orthogonal factors (Householder
// reflectors), so the singular values are exactly `s` (descending).
Tensor with_singular_values(const std::vector<double>& s) {
  const double u[5] = {0.1, 0.7, -0.3, 0.5, 0.2}, v[4] = {0.4, -0.2, 0.6, 0.3};
  double nu = 0, nv = 0;
  for (double x : u) nu += x * x;
  for (double x : v) nv += x * x;
  std::vector<double> a(20, 0.0);
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 5; ++i)
      for (int k = 0; k < 4; ++k)
        a[i + 5 * j] +=
            ((i == k) - 2 * u[i] * u[k] / nu) * s[k] * ((j == k) - 2 * v[j] * v[k] / nv);
  return Tensor::from_col_major({5, 4}, a);
}
}  // namespace

TEST(LinalgTruncation, TracedCutoffRankIsDynamicAndPreparedOnce) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  Runtime& runtime = *rt->runtime();
  auto a = placeholder(f64, {5, 4}, "a");
  const la::Truncation trunc{.cutoff = 1e-2, .rank_name = "chi"};
  const auto t = la::svd_truncated(a, trunc);
  EXPECT_EQ(t.rank, -1);
  const SymDim chi = t.S.shape()[0];
  ASSERT_TRUE(chi.is_dynamic());
  EXPECT_EQ(chi.name(), "chi");
  EXPECT_EQ(chi.upper_bound(), SymDim(4));
  EXPECT_EQ(t.U.shape()[1], chi);
  EXPECT_EQ(t.Vh.shape()[0], chi);
  // A gauge-invariant loss of the kept factors: sum(S) + sum(W .* U S Vh).
  const Tensor wt = with_singular_values({1.5, 1.2, 0.9, 0.4});
  auto loss = [&](const auto& f, const auto& w) {
    return add(sum(f.S),
               sum(mul(w, matmul(mul(f.U, reshape(f.S, {SymDim(1), f.S.shape()[0]})), f.Vh))));
  };
  const TracedTensor w = constant(wt);
  const TracedTensor l = loss(t, w);
  const Program p = compile({t.U, t.S, t.Vh, t.discarded_weight, l, grad(l, a)}, {a});
  const Tensor first[1] = {with_singular_values({4, 2, 1e-3, 1e-4})};
  PreparedProgram plan = prepare(runtime, p, InputSignature::of(first));
  const ProgramCounters before = runtime.program_counters();
  // Ranks 2, 4, 1 from one plan.
  const std::vector<std::vector<double>> spectra = {
      {4, 2, 1e-3, 1e-4}, {4, 3, 2, 1}, {4, 1e-3, 1e-4, 1e-5}};
  for (const auto& s : spectra) {
    const Tensor x = with_singular_values(s);
    RunStats stats;
    const auto out = run(runtime, plan, {x}, &stats);
    const EagerTensor xv = rt->variable(x);
    const auto want = la::svd_truncated(xv, trunc);
    EXPECT_EQ(stats.bindings.at("chi"), want.rank);
    ASSERT_EQ(out[1].shape(), (Shape{want.rank}));
    EXPECT_EQ(out[0].shape(), (Shape{5, want.rank}));
    EXPECT_EQ(out[2].shape(), (Shape{want.rank, 4}));
    EXPECT_TRUE(allclose(out[1], want.S.value(), 1e-12, 1e-12));
    EXPECT_NEAR(out[3].item<double>(), want.discarded_weight.value().item<double>(), 1e-15);
    const EagerTensor el = loss(want, rt->tensor(wt));
    EXPECT_NEAR(out[4].item<double>(), el.value().item<double>(), 1e-11);
    el.backward();
    EXPECT_TRUE(allclose(out[5], xv.grad().value(), 1e-9, 1e-9));
  }
  EXPECT_EQ(runtime.program_counters().preparations, before.preparations);
}

TEST(LinalgTruncation, TracedDynamicRankGradientMatchesFiniteDifferences) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  Runtime& runtime = *rt->runtime();
  auto a = placeholder(f64, {5, 4}, "a");
  const auto t = la::svd_truncated(a, {.max_discarded_weight = 1e-3});
  const TracedTensor l = sum(t.S * t.S) + t.discarded_weight * 100.0;
  const Program p = compile({l, grad(l, a)}, {a});
  const Program value = compile({l}, {a});
  const Tensor x = with_singular_values({3, 1, 0.05, 0.01});  // keeps 2 (weight 2.6e-4)
  const auto out = run_compiled(runtime, p, {x});
  const double h = 1e-6;
  auto xv = x.to_vector<double>();
  const auto g = out[1].to_vector<double>();
  for (std::size_t i = 0; i < xv.size(); ++i) {
    auto up = xv, down = xv;
    up[i] += h;
    down[i] -= h;
    const double fu =
        run_compiled(runtime, value, {Tensor::from_col_major({5, 4}, up)})[0].item<double>();
    const double fd =
        run_compiled(runtime, value, {Tensor::from_col_major({5, 4}, down)})[0].item<double>();
    EXPECT_NEAR(g[i], (fu - fd) / (2 * h), 1e-6) << i;
  }
  // Second order through the dynamic rank: the HVP against differences of
  // the gradient along v.
  auto v = placeholder(f64, {5, 4}, "v");
  const Program hp = compile({hvp(l, a, v)}, {a, v});
  const Program gp = compile({grad(l, a)}, {a});
  std::vector<double> dir(20);
  for (std::size_t i = 0; i < dir.size(); ++i) dir[i] = std::cos(1.0 + 0.7 * i);
  const Tensor vt = Tensor::from_col_major({5, 4}, dir);
  const auto hv = run_compiled(runtime, hp, {x, vt})[0].to_vector<double>();
  auto up = xv, down = xv;
  for (std::size_t i = 0; i < xv.size(); ++i) up[i] += 1e-5 * dir[i], down[i] -= 1e-5 * dir[i];
  const auto gu = run_compiled(runtime, gp, {Tensor::from_col_major({5, 4}, up)})[0];
  const auto gd = run_compiled(runtime, gp, {Tensor::from_col_major({5, 4}, down)})[0];
  const auto gut = gu.to_vector<double>(), gdt = gd.to_vector<double>();
  for (std::size_t i = 0; i < hv.size(); ++i)
    EXPECT_NEAR(hv[i], (gut[i] - gdt[i]) / 2e-5, 1e-5) << i;
}

TEST(LinalgTruncation, TracedEighCutoffAndSymbolicExtents) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  Runtime& runtime = *rt->runtime();
  // A symbolic n: even a fixed max_rank is a dynamic size, bounded by min(n, 2).
  const SymDim n = SymDim::var("n");
  auto a = placeholder(f64, {n, n}, "a");
  const auto fixed = la::eigh_truncated(a, {.max_rank = 2, .rank_name = "k"});
  EXPECT_EQ(fixed.eigenvalues.shape()[0].upper_bound(), min(n, SymDim(2)));
  const auto cut = la::eigh_truncated(a, {.cutoff = 0.3});
  const Program p = compile({fixed.eigenvalues, cut.eigenvalues, cut.eigenvectors}, {a});
  for (std::int64_t size : {1, 3, 4}) {
    std::vector<double> d(static_cast<std::size_t>(size * size), 0.0);
    const double diag[4] = {1, -5, 0.1, 3};
    for (std::int64_t i = 0; i < size; ++i) d[i * (size + 1)] = diag[i];
    const Tensor x = Tensor::from_col_major({size, size}, d);
    const auto out = run_compiled(runtime, p, {x});
    const auto want_fixed = la::eigh_truncated(rt->tensor(x), {.max_rank = 2});
    const auto want_cut = la::eigh_truncated(rt->tensor(x), {.cutoff = 0.3});
    EXPECT_EQ(out[0].to_vector<double>(), want_fixed.eigenvalues.value().to_vector<double>());
    EXPECT_EQ(out[1].to_vector<double>(), want_cut.eigenvalues.value().to_vector<double>());
    EXPECT_EQ(out[2].shape(), want_cut.eigenvectors.value().shape());
  }
}
