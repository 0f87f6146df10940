// The linalg family as an extension: it installs itself on a runtime's first
// call in every tier (eager install-ensure, Runtime::apply, program
// preparation), and its ops carry their AD rules, so the default AD context
// differentiates traced programs without registration.

#include <thread>

#include "tenferro/ad/eager_ops.hpp"
#include "tenferro/ad/program.hpp"
#include "tenferro/ad/transforms.hpp"
#include "tenferro/linalg/linalg.hpp"
#include "test_util.hpp"

using namespace tenferro;
namespace la = tenferro::linalg;

namespace {
Tensor spd2() {
  return Tensor::from_col_major({2, 2}, std::vector<double>{4, 2, 2, 3});
}
}  // namespace

TEST(LinalgFamily, EagerFirstCallInstallsOnceAndRecords) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  EXPECT_FALSE(rt->runtime()->snapshot()->has_module("tenferro.linalg"));
  const std::uint64_t epoch = rt->runtime()->epoch();
  auto x = rt->variable(spd2());
  auto l = la::cholesky(x);
  EXPECT_TRUE(rt->runtime()->snapshot()->has_module("tenferro.linalg"));
  EXPECT_EQ(rt->runtime()->epoch(), epoch + 1);
  (void)la::cholesky(x);
  EXPECT_EQ(rt->runtime()->epoch(), epoch + 1);  // warm: no second install
  sum(l).backward();
  ASSERT_TRUE(x.has_grad());
  // d sum(L) / dA for A = [[4, 2], [2, 3]], L = [[2, 0], [1, sqrt 2]] (PyTorch's
  // symmetric gradient): checked against the direct-tier identity below.
  const auto g = x.grad().value().to_vector<double>();
  EXPECT_NEAR(g[1], g[2], 1e-12);  // Hermitian
}

TEST(LinalgFamily, ConcurrentFirstCallsInstallOnce) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  const std::uint64_t epoch = rt->runtime()->epoch();
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      auto l = la::cholesky(rt->tensor(spd2()));
      if (l.value().to_vector<double>()[0] == 2.0) ++ok;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 8);
  EXPECT_EQ(rt->runtime()->epoch(), epoch + 1);
}

TEST(LinalgFamily, TracedProgramPreparesOnAFreshRuntimeAndStaysValid) {
  auto runtime = Runtime::builder()
                     .backend(std::make_shared<CpuBackend>(CpuBackendOptions{.num_threads = 1}))
                     .build();
  auto a = placeholder(f64, {2, 2}, "a");
  auto b = placeholder(f64, {2, 1}, "b");
  auto y = la::solve_triangular(la::cholesky(a), b, /*upper=*/false);
  // The gradient with the default AD context: the ops carry their rules.
  auto g = grad(sum(y), a);
  const Program p = compile({y, g}, {a, b});
  EXPECT_EQ(p.count_ops("tenferro.linalg_cholesky.v1"), 1u);
  const std::vector<Tensor> in = {spd2(),
                                  Tensor::from_col_major({2, 1}, std::vector<double>{2, 4})};
  const PreparedProgram plan = prepare(*runtime, p, InputSignature::of(in));
  EXPECT_TRUE(runtime->snapshot()->has_module("tenferro.linalg"));
  const auto out1 = run(*runtime, plan, in);
  const auto out2 = run(*runtime, plan, in);  // the plan is not stale
  // L = [[2, 0], [1, sqrt 2]]: y = L^{-1} b = [1, 3 / sqrt 2].
  EXPECT_NEAR(out1[0].to_vector<double>()[0], 1.0, 1e-12);
  EXPECT_NEAR(out1[0].to_vector<double>()[1], 3.0 / std::sqrt(2.0), 1e-12);
  EXPECT_EQ(out1[1].to_vector<double>(), out2[1].to_vector<double>());

  // The same gradient in the eager tier.
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  auto ax = rt->variable(in[0]);
  sum(la::solve_triangular(la::cholesky(ax), rt->tensor(in[1]), false)).backward();
  const auto ge = ax.grad().value().to_vector<double>();
  const auto gt = out1[1].to_vector<double>();
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(ge[i], gt[i], 1e-12);
}

TEST(LinalgFamily, HessianVectorProductMatchesFiniteDifferenceOfGradient) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  const Tensor a0 = spd2();
  const Tensor v0 = Tensor::from_col_major({2, 2}, std::vector<double>{0.3, -0.1, -0.1, 0.2});
  auto loss = [](const EagerTensor& a) { return sum(mul(la::cholesky(a), la::cholesky(a))); };
  auto gradient = [&](const EagerTensor& a) { return grad(loss, a); };
  auto hv = jvp(gradient, rt->tensor(a0), rt->tensor(v0));
  ASSERT_TRUE(hv.tangent.has_value());
  const double h = 1e-6;
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  const auto gp = gradient(rt->tensor(add(a0, mul(v0, Tensor::scalar(h), cpu), cpu)))
                      .value()
                      .to_vector<double>();
  const auto gm = gradient(rt->tensor(sub(a0, mul(v0, Tensor::scalar(h), cpu), cpu)))
                      .value()
                      .to_vector<double>();
  const auto got = hv.tangent->value().to_vector<double>();
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(got[i], (gp[i] - gm[i]) / (2 * h), 1e-6);
}

TEST(LinalgFamily, DirectTierChecksBeforeWork) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  EXPECT_TF_ERROR(la::cholesky(Tensor(), false, cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(
      la::cholesky(Tensor::from_col_major({2, 2}, std::vector<std::int64_t>{1, 0, 0, 1}), false,
                   cpu),
      ErrorKind::DTypeMismatch);
  // Zero-size matrices and batches.
  EXPECT_EQ(la::cholesky(zeros({0, 0}, f64), false, cpu).shape(), (Shape{0, 0}));
  EXPECT_EQ(la::cholesky(zeros({3, 3, 0}, f64), false, cpu).shape(), (Shape{3, 3, 0}));
}

TEST(LinalgFamily, AHugeBatchOfEmptyMatricesDoesNoPerMatrixWork) {
  // Found by the op-sequence fuzzer: the batch loop used to count to 2^40.
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  const std::int64_t huge = std::int64_t{1} << 40;
  const Tensor empty = zeros({0, 0, huge}, f64);
  EXPECT_EQ(la::svdvals(empty, cpu).shape(), (Shape{0, huge}));
  EXPECT_EQ(la::eigvalsh(empty, 'L', cpu).shape(), (Shape{0, huge}));
  // cholesky also makes an info entry per matrix: 2^40 of them do not fit.
  EXPECT_TF_ERROR(la::cholesky(empty, false, cpu), ErrorKind::OutOfMemory);
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  EXPECT_EQ(la::svdvals(rt->tensor(empty)).shape(), (Shape{0, huge}));
  const TracedTensor t = placeholder(f64, {0, 0, huge});
  const auto out = run_compiled(*rt->runtime(), compile({la::svdvals(t)}, {t}), {empty});
  EXPECT_EQ(out[0].shape(), (Shape{0, huge}));
  // A batch of 0x0 determinants is a batch of ones: the kernel still runs.
  EXPECT_EQ(la::det(zeros({0, 0, 3}, f64), cpu).to_vector<double>(),
            (std::vector<double>{1, 1, 1}));
}

TEST(LinalgFamily, LapackWorkspacesLiveInTheRuntimeCaches) {
  // A batch of 16 matrices on two threads: every matrix leases a workspace
  // from one pool per (family, dtype) in the runtime's extension cache;
  // nothing stays behind in the backend's threads.
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 2});
  std::vector<double> v(6 * 5 * 16);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.37 * static_cast<double>(i) + 1.0);
  const Tensor x = Tensor::from_col_major({6, 5, 16}, v);
  auto pools = [&](const char* family) {
    return rt->runtime()->extension_caches().stats(
        ExtensionCacheSelector::named(family, "workspaces"));
  };
  const auto first = la::svdvals(rt->tensor(x)).value().to_vector<double>();
  EXPECT_EQ(pools("tenferro.linalg_svdvals.v1").entries, 1u);
  (void)la::qr(rt->tensor(x));
  EXPECT_EQ(pools("tenferro.linalg_qr.v1").entries, 1u);
  // General eigenvalues of the leading 5 x 5 blocks, twice: equal bits.
  const Tensor sq = x.slice(0, 0, 5);
  const auto ev = la::eigvals(rt->tensor(sq)).value();
  EXPECT_EQ(pools("tenferro.linalg_eigvals.v1").entries, 1u);
  EXPECT_EQ(la::eigvals(rt->tensor(sq)).value().to_vector<std::complex<double>>(),
            ev.to_vector<std::complex<double>>());
  EXPECT_EQ(ev.numel(), 5 * 16);
  // The same values from a reused (and later a fresh) workspace.
  EXPECT_EQ(la::svdvals(rt->tensor(x)).value().to_vector<double>(), first);
  EXPECT_EQ(pools("tenferro.linalg_svdvals.v1").entries, 1u);
  rt->runtime()->clear_caches(
      ExtensionCacheSelector::named("tenferro.linalg_svdvals.v1", "workspaces"));
  EXPECT_EQ(pools("tenferro.linalg_svdvals.v1").entries, 0u);
  EXPECT_EQ(pools("tenferro.linalg_qr.v1").entries, 1u);
  EXPECT_EQ(la::svdvals(rt->tensor(x)).value().to_vector<double>(), first);
  // The direct tier keeps its pools in the backend's attached runtime.
  CpuBackend cpu(CpuBackendOptions{.num_threads = 2});
  EXPECT_EQ(la::svdvals(x, cpu).to_vector<double>(), first);
  EXPECT_EQ(EagerRuntime::attached(cpu)
                ->runtime()
                ->extension_caches()
                .stats(ExtensionCacheSelector::named("tenferro.linalg_svdvals.v1", "workspaces"))
                .entries,
            1u);
}
