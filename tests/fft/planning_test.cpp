// Planning: the effort scope (same values, own cache entries, inputs left
// alone by measuring), wisdom export / import (strings and files, typed
// errors), threaded plans, and concurrent planning and execution.

#include <algorithm>
#include <atomic>
#include <complex>
#include <filesystem>
#include <fstream>
#include <thread>

#include "fft/fft_test_util.hpp"
#include "tenferro/fft/fft.hpp"
#include "test_util.hpp"

using namespace tenferro;
using cd = std::complex<double>;

namespace {

std::vector<cd> signal(std::int64_t count, double seed = 0.3) {
  std::vector<cd> v(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i)
    v[i] = cd(std::sin(1.7 * i + seed), std::cos(0.9 * i - seed));
  return v;
}
using fft_test::real_signal;
double max_diff(const std::vector<cd>& a, const std::vector<cd>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

// The lines of a wisdom text, sorted (FFTW writes its table in hash order).
std::vector<std::string> sorted_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

const ExtensionCacheSelector kPlans =
    ExtensionCacheSelector::named("tenferro.fft_transform.v1", "fftw_plans");

}  // namespace

TEST(FftPlanning, MeasureAndPatientGiveTheValuesOfEstimateAndHaveTheirOwnPlans) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  auto& caches = rt->runtime()->extension_caches();
  const auto xs = signal(64 * 3);
  const EagerTensor x = rt->tensor(Tensor::from_col_major({64, 3}, xs));
  const EagerTensor r = rt->tensor(Tensor::from_col_major({60, 2}, real_signal(120)));
  EXPECT_EQ(fft::planning_effort(), fft::PlanningEffort::Estimate);
  const auto est = fft::fft(x).value().to_vector<cd>();
  const auto est_r = fft::rfft(r).value().to_vector<cd>();
  EXPECT_EQ(caches.stats(kPlans).entries, 2u);
  {
    fft::PlanningEffortScope measure(fft::PlanningEffort::Measure);
    EXPECT_EQ(fft::planning_effort(), fft::PlanningEffort::Measure);
    const auto got = fft::fft(x).value().to_vector<cd>();
    EXPECT_LT(max_diff(got, est), 1e-12);
    EXPECT_LT(max_diff(fft::rfft(r).value().to_vector<cd>(), est_r), 1e-12);
    // Measuring runs trial transforms on scratch arrays, never on the input.
    EXPECT_EQ(x.value().to_vector<cd>(), xs);
    EXPECT_EQ(caches.stats(kPlans).entries, 4u);  // the effort is part of the key
    {
      fft::PlanningEffortScope patient(fft::PlanningEffort::Patient);
      EXPECT_LT(max_diff(fft::ifft(fft::fft(x)).value().to_vector<cd>(), xs), 1e-12);
    }
    EXPECT_EQ(fft::planning_effort(), fft::PlanningEffort::Measure);  // restored
    (void)fft::fft(x);
    EXPECT_EQ(caches.stats(kPlans).entries, 6u);  // patient fft + ifft; measure fft again hit
  }
  EXPECT_EQ(fft::planning_effort(), fft::PlanningEffort::Estimate);
  // Measured in-place and strided plans are also made on scratch.
  const Tensor s = tftest::strided_copy(Tensor::from_col_major({64, 3}, xs));
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  fft::PlanningEffortScope measure(fft::PlanningEffort::Measure);
  EXPECT_LT(max_diff(fft::fft(s, std::nullopt, 0, "backward", cpu).to_vector<cd>(), est), 1e-12);
  EXPECT_EQ(s.to_vector<cd>(), xs);
  EagerTensor t = rt->tensor(Tensor::from_col_major({64, 3}, xs));
  EXPECT_LT(max_diff(fft::fft_inplace(std::move(t)).value().to_vector<cd>(), est), 1e-12);
  EXPECT_TF_ERROR(fft::PlanningEffortScope(static_cast<fft::PlanningEffort>(9)),
                  ErrorKind::InvalidArgument);
}

TEST(FftPlanning, WisdomRoundTripsThroughStringsAndFiles) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  {
    fft::PlanningEffortScope measure(fft::PlanningEffort::Measure);
    (void)fft::fft(Tensor::from_col_major({48}, signal(48)), std::nullopt, 0, "backward", cpu);
    (void)fft::fft(Tensor::from_col_major({48}, std::vector<std::complex<float>>(48, {1, 2})),
                   std::nullopt, 0, "backward", cpu);
  }
  const std::string w = fft::export_wisdom();
  ASSERT_FALSE(w.empty());
  EXPECT_NE(w.find("fftw_wisdom"), std::string::npos);
  EXPECT_NE(w.find("fftwf_wisdom"), std::string::npos);
  EXPECT_NO_THROW(fft::import_wisdom(w));
  fft::forget_wisdom();
  EXPECT_NO_THROW(fft::import_wisdom(w));
  // The imported wisdom is all there is again.
  EXPECT_EQ(sorted_lines(fft::export_wisdom()), sorted_lines(w));

  const auto path = std::filesystem::temp_directory_path() /
                    ("tenferro-fft-wisdom-" +
                     std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id())));
  fft::export_wisdom_to_file(path.string());
  std::ifstream in(path);
  const std::string on_disk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(sorted_lines(on_disk), sorted_lines(w));
  EXPECT_NO_THROW(fft::import_wisdom_from_file(path.string()));
  std::filesystem::remove(path);
}

TEST(FftPlanning, BadWisdomIsATypedError) {
  EXPECT_TF_ERROR(fft::import_wisdom(""), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(fft::import_wisdom("not wisdom"), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(fft::import_wisdom("(fftw-3.3.10 fftw_wisdom"), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(fft::import_wisdom("(fftw-0.0 fftw_wisdom #x1 #x2 #x3 #x4 (bogus))"),
                  ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(fft::import_wisdom_from_file("/nonexistent-dir/tenferro.wisdom"),
                  ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(fft::export_wisdom_to_file("/nonexistent-dir/tenferro.wisdom"),
                  ErrorKind::InvalidArgument);
}

TEST(FftPlanning, ThreadedPlansFollowTheBackendAndGiveTheSameValues) {
  // 256 x 256 = 2^16 elements: planned with the backend's two threads.
  const Tensor x = Tensor::from_col_major({256, 256}, signal(256 * 256));
  CpuBackend one(CpuBackendOptions{.num_threads = 1}), two(CpuBackendOptions{.num_threads = 2});
  const auto a = fft::fftn(x, {}, {}, "backward", one).to_vector<cd>();
  const auto b = fft::fftn(x, {}, {}, "backward", two).to_vector<cd>();
  EXPECT_LT(max_diff(a, b), 1e-9);
  auto rt1 = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  auto rt2 = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 2});
  (void)fft::fft(rt1->tensor(x));
  (void)fft::fft(rt2->tensor(x));
  // Distinct keys (the thread count is in them): one plan in each runtime.
  EXPECT_EQ(rt1->runtime()->extension_caches().stats(kPlans).entries, 1u);
  EXPECT_EQ(rt2->runtime()->extension_caches().stats(kPlans).entries, 1u);
  EXPECT_LT(max_diff(fft::fft(rt2->tensor(x)).value().to_vector<cd>(),
                     fft::fft(rt1->tensor(x)).value().to_vector<cd>()),
            1e-9);
}

TEST(FftPlanning, ThreadsPlanDifferentShapesAndExecuteConcurrently) {
  // Each thread has its own runtime (so every call plans into its own cache),
  // half of them measuring; all plan and execute at once.
  std::vector<Tensor> inputs;
  std::vector<std::vector<cd>> want;
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  for (std::int64_t n = 5; n < 17; ++n) {
    inputs.push_back(Tensor::from_col_major({n, 3}, signal(n * 3, 0.1 * n)));
    want.push_back(fft::fft(inputs.back(), std::nullopt, 0, "ortho", cpu).to_vector<cd>());
  }
  std::atomic<int> mismatches{0}, calls{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
      fft::PlanningEffortScope effort(t % 2 == 0 ? fft::PlanningEffort::Estimate
                                                 : fft::PlanningEffort::Measure);
      for (int rep = 0; rep < 24; ++rep) {
        const std::size_t i = static_cast<std::size_t>((t * 5 + rep) % inputs.size());
        const auto got = fft::fft(rt->tensor(inputs[i]), std::nullopt, 0, "ortho").value();
        if (max_diff(got.to_vector<cd>(), want[i]) > 1e-12) ++mismatches;
        ++calls;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(calls.load(), 6 * 24);
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(FftPlanning, DirectCallsKeepTheirPlansInTheBackendsAttachedRuntime) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  const Tensor x = Tensor::from_col_major({64, 3}, signal(64 * 3));
  const auto first = fft::fft(x, std::nullopt, 0, "backward", cpu).to_vector<cd>();
  std::weak_ptr<EagerRuntime> attached = EagerRuntime::attached(cpu);
  auto& caches = attached.lock()->runtime()->extension_caches();
  EXPECT_EQ(caches.stats(kPlans).entries, 1u);
  EXPECT_EQ(caches.stats(kPlans).misses, 1u);
  const auto second = fft::fft(x, std::nullopt, 0, "backward", cpu).to_vector<cd>();
  EXPECT_EQ(caches.stats(kPlans).hits, 1u);  // planned once
  EXPECT_EQ(caches.stats(kPlans).entries, 1u);
  EXPECT_EQ(first, second);
  // The runtime lives as long as the backend, no longer.
  {
    CpuBackend other(CpuBackendOptions{.num_threads = 1});
    (void)fft::fft(x, std::nullopt, 0, "backward", other);
    attached = EagerRuntime::attached(other);
    EXPECT_FALSE(attached.expired());
  }
  EXPECT_TRUE(attached.expired());
}
