// The FFT family's AD and tiers: gradient checks (finite differences and
// jvp/vjp adjointness) of every transform, norm and length; eager, traced and
// direct agreement; self-installation; a Hessian-vector product.

#include <atomic>
#include <complex>
#include <thread>

#include "fft/fft_test_util.hpp"
#include "tenferro/ad/eager_ops.hpp"
#include "tenferro/ad/grad_check.hpp"
#include "tenferro/ad/program.hpp"
#include "tenferro/ad/transforms.hpp"
#include "tenferro/fft/fft.hpp"
#include "test_util.hpp"

using namespace tenferro;
using cd = std::complex<double>;

namespace {

using fft_test::real_signal;
using fft_test::signal;

using Fn1 = EagerTensor (*)(const EagerTensor&, std::optional<std::int64_t>, std::int64_t,
                            std::string_view);

}  // namespace

TEST(FftAutodiff, OneAxisTransformsPassGradientChecks) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  const EagerTensor C = rt->tensor(Tensor::from_col_major({5, 2}, signal(10)));
  const EagerTensor R = rt->tensor(Tensor::from_col_major({5, 2}, real_signal(10)));
  struct Case {
    const char* name;
    Fn1 f;
    bool real_input;
  };
  const Case cases[] = {
      {"fft", &fft::fft<EagerTensor>, false},      {"ifft", &fft::ifft<EagerTensor>, false},
      {"fft(real)", &fft::fft<EagerTensor>, true}, {"rfft", &fft::rfft<EagerTensor>, true},
      {"irfft", &fft::irfft<EagerTensor>, false},  {"hfft", &fft::hfft<EagerTensor>, false},
      {"ihfft", &fft::ihfft<EagerTensor>, true}};
  for (const auto& c : cases) {
    for (const char* norm : {"backward", "forward", "ortho"}) {
      for (const std::optional<std::int64_t> n :
           {std::optional<std::int64_t>{}, std::optional<std::int64_t>{4},
            std::optional<std::int64_t>{7}, std::optional<std::int64_t>{8}}) {
        auto r =
            check_gradients([&](std::span<const EagerTensor> x) { return c.f(x[0], n, 0, norm); },
                            {c.real_input ? R : C});
        EXPECT_TRUE(r.ok) << r.detail << " " << c.name << " norm=" << norm
                          << " n=" << (n ? *n : -1);
      }
    }
  }
}

TEST(FftAutodiff, MultiAxisTransformsPassGradientChecks) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  const EagerTensor C = rt->tensor(Tensor::from_col_major({4, 3, 2}, signal(24)));
  const EagerTensor R = rt->tensor(Tensor::from_col_major({4, 3, 2}, real_signal(24)));
  for (const Axes& axes : {Axes{0, 1}, Axes{1, 0}, Axes{2, 0, 1}}) {
    auto check = [&](const char* what, const EagerTensor& in, auto f) {
      auto r = check_gradients([&](std::span<const EagerTensor> x) { return f(x[0]); }, {in});
      EXPECT_TRUE(r.ok) << r.detail << " " << what << " axes[0]=" << axes[0];
    };
    check("fftn", C, [&](const EagerTensor& x) { return fft::fftn(x, {}, axes, "ortho"); });
    check("ifftn", C, [&](const EagerTensor& x) { return fft::ifftn(x, {}, axes); });
    check("rfftn", R, [&](const EagerTensor& x) { return fft::rfftn(x, {}, axes); });
    check("irfftn", C, [&](const EagerTensor& x) { return fft::irfftn(x, {}, axes, "forward"); });
  }
  auto r = check_gradients(
      [](std::span<const EagerTensor> x) {
        return fft::fftshift(fft::fft2(x[0], {3, 5}));
      },
      {C});
  EXPECT_TRUE(r.ok) << r.detail;
}

TEST(FftAutodiff, TracedDirectAndEagerAgreeAndTheFamilyInstallsItself) {
  auto runtime = Runtime::builder()
                     .backend(std::make_shared<CpuBackend>(CpuBackendOptions{.num_threads = 1}))
                     .build();
  auto a = placeholder(f64, {6, 2}, "a");
  auto y = fft::irfft(fft::rfft(a), 6);
  auto loss = sum(mul(real(fft::fft(a, 9, 0, "ortho")), real(fft::fft(a, 9, 0, "ortho"))));
  auto g = grad(loss, a);
  const Program p = compile({y, g}, {a});
  EXPECT_GE(p.count_ops("tenferro.fft_transform.v1"), 3u);
  const std::vector<Tensor> in = {Tensor::from_col_major({6, 2}, real_signal(12))};
  const PreparedProgram plan = prepare(*runtime, p, InputSignature::of(in));
  EXPECT_TRUE(runtime->snapshot()->has_module("tenferro.fft"));
  const auto out = run(*runtime, plan, in);
  const auto yr = out[0].to_vector<double>();
  const auto x = in[0].to_vector<double>();
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(yr[i], x[i], 1e-12);

  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  EXPECT_FALSE(rt->runtime()->snapshot()->has_module("tenferro.fft"));
  auto ax = rt->variable(in[0]);
  const EagerTensor f = fft::fft(ax, 9, 0, "ortho");
  EXPECT_TRUE(rt->runtime()->snapshot()->has_module("tenferro.fft"));
  sum(mul(real(f), real(f))).backward();
  const auto ge = ax.grad().value().to_vector<double>();
  const auto gt = out[1].to_vector<double>();
  for (std::size_t i = 0; i < ge.size(); ++i) EXPECT_NEAR(ge[i], gt[i], 1e-12);

  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  const auto d = fft::fft(in[0], 9, 0, "ortho", cpu).to_vector<cd>();
  const auto e = f.value().to_vector<cd>();
  for (std::size_t i = 0; i < d.size(); ++i) EXPECT_NEAR(std::abs(d[i] - e[i]), 0, 1e-12);
}

TEST(FftAutodiff, HessianVectorProductOfAQuarticLoss) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  const Tensor a0 = Tensor::from_col_major({5}, real_signal(5));
  const Tensor v0 = Tensor::from_col_major({5}, std::vector<double>{0.3, -0.1, 0.2, 0.5, -0.4});
  auto loss = [](const EagerTensor& a) {
    const EagerTensor s = abs(fft::rfft(a));
    return sum(mul(mul(s, s), mul(s, s)));
  };
  auto gradient = [&](const EagerTensor& a) { return grad(loss, a); };
  auto hv = jvp(gradient, rt->tensor(a0), rt->tensor(v0));
  ASSERT_TRUE(hv.tangent.has_value());
  const double h = 1e-6;
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  auto at = [&](double t) {
    return gradient(rt->tensor(add(a0, mul(v0, Tensor::scalar(t), cpu), cpu)))
        .value()
        .to_vector<double>();
  };
  const auto gp = at(h), gm = at(-h);
  const auto hvv = hv.tangent->value().to_vector<double>();
  for (std::size_t i = 0; i < hvv.size(); ++i)
    EXPECT_NEAR(hvv[i], (gp[i] - gm[i]) / (2 * h), 1e-4 * (1 + std::abs(hvv[i])));
}

TEST(FftAutodiff, SymbolicTransformExtentIsUnsupportedButSymbolicBatchIsNot) {
  const TracedTensor x = placeholder(DType::C128, {SymDim::var("n"), SymDim(3)});
  EXPECT_TF_ERROR(fft::fft(x), ErrorKind::Unsupported);
  const TracedTensor y = placeholder(DType::C128, {SymDim(4), SymDim::var("b")});
  const TracedTensor f = fft::fft(y);
  EXPECT_EQ(f.shape()[0].try_constant(), std::optional<std::int64_t>(4));
}

TEST(FftAutodiff, ConcurrentTransformsFromSeveralThreadsAgree) {
  // Planning is serialised, execution is not: every thread's results must
  // equal the single-threaded ones.
  std::vector<Tensor> inputs;
  for (std::int64_t n = 3; n < 11; ++n) {
    inputs.push_back(Tensor::from_col_major({n, 4}, signal(n * 4)));
  }
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  std::vector<std::vector<cd>> want;
  for (const auto& x : inputs) {
    want.push_back(fft::fft(x, std::nullopt, 0, "backward", cpu).to_vector<cd>());
  }
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      CpuBackend local(CpuBackendOptions{.num_threads = 1});
      for (int rep = 0; rep < 20; ++rep) {
        const std::size_t i = static_cast<std::size_t>((t + rep) % inputs.size());
        const auto got = fft::fft(inputs[i], std::nullopt, 0, "backward", local).to_vector<cd>();
        for (std::size_t k = 0; k < got.size(); ++k) {
          if (std::abs(got[k] - want[i][k]) > 1e-12) ++mismatches;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(FftAutodiff, PlansAreCachedInTheRuntimesExtensionCache) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  const auto selector = ExtensionCacheSelector::named("tenferro.fft_transform.v1", "fftw_plans");
  const EagerTensor x = rt->tensor(Tensor::from_col_major({7, 3}, signal(21)));
  (void)fft::fft(x);
  auto& caches = rt->runtime()->extension_caches();
  EXPECT_EQ(caches.stats(selector).entries, 1u);
  EXPECT_EQ(caches.stats(selector).misses, 1u);
  (void)fft::fft(x);  // same kind, lengths, strides and precision: a hit
  EXPECT_EQ(caches.stats(selector).entries, 1u);
  EXPECT_EQ(caches.stats(selector).hits, 1u);
  (void)fft::ifft(x);  // the opposite sign is another plan
  EXPECT_EQ(caches.stats(selector).entries, 2u);
  rt->runtime()->clear_caches();  // plans are destroyed, later calls re-plan
  EXPECT_EQ(caches.stats(selector).entries, 0u);
  const auto v = fft::fft(x).value().to_vector<cd>();
  EXPECT_NEAR(
      v[0].real(),
      [] {
        double s = 0;
        const auto sig = signal(21);
        for (int i = 0; i < 7; ++i) s += sig[i].real();
        return s;
      }(),
      1e-12);
}

TEST(FftAutodiff, InPlaceTransformWritesTheSameStorageAndRefusesUnsafeInputs) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  const Tensor x0 = Tensor::from_col_major({6, 2}, signal(12));
  const auto want = fft::fft(rt->tensor(x0), std::nullopt, 0, "ortho").value().to_vector<cd>();
  EagerTensor t = rt->tensor(Tensor::from_col_major({6, 2}, signal(12)));
  const void* storage = t.value().raw_data();
  EagerTensor y = fft::fft_inplace(std::move(t), 0, "ortho");
  EXPECT_EQ(y.value().raw_data(), storage);  // no copy
  const auto got = y.value().to_vector<cd>();
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(std::abs(got[i] - want[i]), 0, 1e-12);
  EagerTensor back = fft::fft_inplace(std::move(y), 0, "ortho", /*inverse=*/true);
  const auto orig = x0.to_vector<cd>(), b = back.value().to_vector<cd>();
  for (std::size_t i = 0; i < b.size(); ++i) EXPECT_NEAR(std::abs(b[i] - orig[i]), 0, 1e-12);

  EagerTensor tracked = rt->variable(x0);
  EXPECT_TF_ERROR((void)fft::fft_inplace(std::move(tracked)), ErrorKind::RuntimeState);
  EXPECT_TRUE(tracked.defined());  // handed back unchanged
  EagerTensor shared = rt->tensor(x0);
  const EagerTensor other = shared;
  EXPECT_TF_ERROR((void)fft::fft_inplace(std::move(shared)), ErrorKind::RuntimeState);
  EXPECT_EQ(other.value().to_vector<cd>(), x0.to_vector<cd>());
  EagerTensor real = rt->tensor(Tensor::from_col_major({3}, std::vector<double>{1, 2, 3}));
  EXPECT_TF_ERROR((void)fft::fft_inplace(std::move(real)), ErrorKind::DTypeMismatch);
}
