// Prepared plans (EinsumPlan::prepare / run) and the eager plan cache: a plan
// reused with new values gives what a fresh einsum gives, in the direct and
// eager tiers (AD included); the plan reports its path and peak memory; it
// refuses operands other than the prepared ones with typed errors; eager
// calls hit the runtime's bounded, counted extension cache.

#include <atomic>
#include <thread>

#include "einsum_test_util.hpp"

using namespace etest;

namespace {

struct PlanCase {
  std::string eq;
  std::string terms;  // the naive reference's labels, comma-separated
  std::string out;
  std::vector<Shape> shapes;
};

const std::vector<PlanCase> kCases = {
    {"ij,jk->ik", "ij,jk", "ik", {{2, 3}, {3, 4}}},
    {"ij,jk->ki", "ij,jk", "ki", {{2, 3}, {3, 4}}},
    {"ijb,jkb->ikb", "ijb,jkb", "ikb", {{2, 3, 2}, {3, 4, 2}}},
    {"ij,jk,kl->il", "ij,jk,kl", "il", {{2, 3}, {3, 4}, {4, 2}}},
    {"abcd,dbef->acef", "abcd,dbef", "acef", {{2, 3, 2, 2}, {2, 3, 2, 3}}},
    {"iij,jk->ik", "iij,jk", "ik", {{3, 3, 2}, {2, 4}}},  // a diagonal
    {"ijx,jk->ik", "ijx,jk", "ik", {{2, 3, 5}, {3, 4}}},  // x summed first
    {"ij,jk->kiik", "ij,jk", "kiik", {{2, 3}, {3, 2}}},   // diagonal embedding
    {"ii->ii", "ii", "ii", {{3, 3}}},
    {"ij->ij", "ij", "ij", {{2, 3}}},  // no op: still a fresh result
};

std::vector<std::vector<std::int64_t>> split(const std::string& terms) {
  std::vector<std::vector<std::int64_t>> out(1);
  for (char c : terms) {
    if (c == ',') {
      out.emplace_back();
    } else {
      out.back().push_back(c);
    }
  }
  return out;
}

CpuBackend& cpu() {
  return dynamic_cast<CpuBackend&>(runtime()->backend());
}

}  // namespace

TEST(EinsumPlan, ReuseWithNewValuesMatchesFreshEinsum) {
  int runs = 0;
  for (const PlanCase& c : kCases) {
    const EinsumPlan plan = EinsumPlan::prepare(c.eq, f64, c.shapes);
    ASSERT_TRUE(plan.prepared()) << c.eq;
    EXPECT_EQ(plan.path, einsum_path(c.eq, c.shapes).path) << c.eq;
    EXPECT_EQ(plan.dtype(), f64);
    EXPECT_EQ(plan.shapes(), c.shapes);
    for (std::uint64_t seed : {1u, 20u, 300u}) {  // the same plan, new values
      std::vector<Tensor> ops;
      std::vector<EagerTensor> eops;
      for (std::size_t k = 0; k < c.shapes.size(); ++k) {
        ops.push_back(make(c.shapes[k], f64, seed + k));
        eops.push_back(runtime()->tensor(ops.back()));
      }
      const auto want = naive(split(c.terms), ops, letters(c.out));
      const Tensor direct = plan.run(ops, cpu());
      expect_close(host(direct), want, 1e-12, c.eq + " plan direct");
      expect_close(host(direct), host(einsum(c.eq, ops, cpu())), 0, c.eq + " fresh direct");
      expect_close(host(plan.run(eops)), host(einsum(c.eq, eops)), 0, c.eq + " fresh eager");
      for (const Tensor& x : ops) EXPECT_NE(direct.storage(), x.storage()) << c.eq;
      ++runs;
    }
  }
  EXPECT_EQ(runs, static_cast<int>(3 * kCases.size()));
}

TEST(EinsumPlan, TrackedOperandsGetGradientsThroughThePlan) {
  const EinsumPlan plan = EinsumPlan::prepare("ij,jk->ik", f64, {{2, 3}, {3, 4}});
  const EagerTensor a = runtime()->variable(make({2, 3}, f64, 1));
  const EagerTensor b = runtime()->tensor(make({3, 4}, f64, 2));
  // d/da sum(a b) = 1 b^T: row sums of b.
  const EagerTensor g = grad([&](const EagerTensor& x) { return sum(plan.run({x, b})); }, a);
  const auto bv = host(b);
  std::vector<cd> want;
  for (int j = 0; j < 3; ++j) {
    for (int i = 0; i < 2; ++i) {
      cd s = 0;
      for (int k = 0; k < 4; ++k) s += bv[static_cast<std::size_t>(j + 3 * k)];
      want.push_back(s);
    }
  }
  // want is laid out [j][i]; g is column-major [i, j].
  std::vector<cd> col(6);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) col[static_cast<std::size_t>(i + 2 * j)] = want[j * 2 + i];
  }
  expect_close(host(g), col, 1e-12, "grad through plan.run");
}

TEST(EinsumPlan, PeakBytesCountTheLiveIntermediates) {
  // ij,jk,kl->il on 10x100, 100x5, 5x50: (0,1) first gives 10x5 (50
  // elements); then 10x5 with 5x50 gives 10x50 (500) while the 10x5 is
  // alive: 550 f64 elements at the peak.
  const EinsumPlan p = EinsumPlan::prepare("ij,jk,kl->il", f64, {{10, 100}, {100, 5}, {5, 50}});
  EXPECT_EQ(p.path, (EinsumPath{{0, 1}, {0, 1}}));
  EXPECT_EQ(p.peak_bytes, 550 * 8);
  const EinsumPlan c = EinsumPlan::prepare("ij,jk,kl->il", c128, {{10, 100}, {100, 5}, {5, 50}});
  EXPECT_EQ(c.peak_bytes, 550 * 16);
  // A transposed output adds the permuted copy: 2x3 result, then 3x2.
  const EinsumPlan t = EinsumPlan::prepare("ij->ji", f64, {{2, 3}});
  EXPECT_EQ(t.peak_bytes, 6 * 8);
  // einsum_path only describes an order.
  EXPECT_EQ(einsum_path("ij,jk->ik", {{2, 3}, {3, 4}}).peak_bytes, 0);
}

TEST(EinsumPlan, RefusesOperandsOtherThanThePreparedOnes) {
  const EinsumPlan plan = EinsumPlan::prepare("ij,jk->ik", f64, {{2, 3}, {3, 4}});
  const Tensor a = make({2, 3}, f64, 1), b = make({3, 4}, f64, 2);
  auto kind_of = [&](const std::vector<Tensor>& ops) {
    try {
      (void)plan.run(ops, cpu());
    } catch (const Error& e) {
      return e.kind();
    }
    return ErrorKind::Internal;  // no error: fails every expectation below
  };
  EXPECT_EQ(kind_of({a, make({3, 4}, f32, 2)}), ErrorKind::DTypeMismatch);  // mixed
  EXPECT_EQ(kind_of({make({2, 3}, f32, 1), make({3, 4}, f32, 2)}), ErrorKind::DTypeMismatch);
  EXPECT_EQ(kind_of({a, make({3, 5}, f64, 2)}), ErrorKind::ShapeMismatch);
  EXPECT_EQ(kind_of({a, make({3, 4, 1}, f64, 2)}), ErrorKind::RankMismatch);
  EXPECT_EQ(kind_of({a}), ErrorKind::InvalidArgument);
  EXPECT_EQ(kind_of({a, Tensor()}), ErrorKind::InvalidArgument);
  const EagerTensor ea = runtime()->tensor(a);
  EXPECT_TF_ERROR((void)plan.run({ea, runtime()->tensor(make({4, 4}, f64, 2))}),
                  ErrorKind::ShapeMismatch);
  // Not prepared: an order only.
  const EinsumPlan order = einsum_path("ij,jk->ik", {{2, 3}, {3, 4}});
  EXPECT_FALSE(order.prepared());
  EXPECT_TF_ERROR((void)order.run({a, b}, cpu()), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR((void)order.dtype(), ErrorKind::InvalidArgument);
  // prepare() checks like einsum().
  EXPECT_TF_ERROR((void)EinsumPlan::prepare("ij,jk->ik", f64, {{2, 3}, {4, 4}}),
                  ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR((void)EinsumPlan::prepare("ij,jk->i#", f64, {{2, 3}, {3, 4}}),
                  ErrorKind::InvalidArgument);
}

TEST(EinsumPlan, EagerCallsUseTheRuntimesBoundedCountedCache) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  auto& caches = rt->runtime()->extension_caches();
  const auto selector = ExtensionCacheSelector::named("tenferro.einsum", "plans");
  const EagerTensor a = rt->tensor(make({2, 3}, f64, 1)), b = rt->tensor(make({3, 4}, f64, 2));
  const auto first = host(einsum("ij,jk->ik", {a, b}));
  EXPECT_EQ(caches.stats(selector).misses, 1u);
  EXPECT_EQ(caches.stats(selector).hits, 0u);
  EXPECT_EQ(caches.stats(selector).entries, 1u);
  const auto second = host(einsum("ij,jk->ik", {a, b}));  // warm: no parse, no plan
  EXPECT_EQ(caches.stats(selector).hits, 1u);
  EXPECT_EQ(caches.stats(selector).entries, 1u);
  expect_close(second, first, 0, "warm call");
  // Another shape, dtype, equation or option is another entry.
  (void)einsum("ij,jk->ik", {rt->tensor(make({2, 3}, f64, 1)), rt->tensor(make({3, 5}, f64, 2))});
  (void)einsum("ij,jk->ik", {rt->tensor(make({2, 3}, f32, 1)), rt->tensor(make({3, 4}, f32, 2))});
  (void)einsum("ij,jk->ki", {a, b});
  (void)einsum("ij,jk->ik", {a, b}, {.strategy = EinsumStrategy::Greedy});
  (void)einsum(EinsumLabels{{{0, 1}, {1, 2}}, std::vector<std::int64_t>{0, 2}},
               std::vector<EagerTensor>{a, b});
  EXPECT_EQ(caches.stats(selector).entries, 6u);
  EXPECT_EQ(caches.stats(selector).misses, 6u);
  // The runtime's totals include them, and a failed call caches nothing.
  EXPECT_GE(rt->runtime()->cache_stats().extensions.entries, 6u);
  EXPECT_TF_ERROR((void)einsum("ij,jk->ik", {a, a}), ErrorKind::ShapeMismatch);
  EXPECT_EQ(caches.stats(selector).entries, 6u);
  // Bounded: at most max_entries plans, least recently used evicted first.
  caches.set_limits("tenferro.einsum", "plans", {.max_entries = 2});
  EXPECT_EQ(caches.stats(selector).entries, 2u);
  EXPECT_GE(caches.stats(selector).evictions, 4u);
  for (std::int64_t n = 1; n <= 5; ++n) {
    (void)einsum("ij,jk->ik", {rt->tensor(make({2, n}, f64, 1)), rt->tensor(make({n, 2}, f64, 2))});
  }
  EXPECT_EQ(caches.stats(selector).entries, 2u);
  rt->runtime()->clear_caches(ExtensionCacheSelector::family("tenferro.einsum"));
  EXPECT_EQ(caches.stats(selector).entries, 0u);
  expect_close(host(einsum("ij,jk->ik", {a, b})), first, 0, "after clear");
}

TEST(EinsumPlan, TrackedEagerCallsRecordThroughTheCachedPlan) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  const auto selector = ExtensionCacheSelector::named("tenferro.einsum", "plans");
  const EagerTensor a = rt->variable(make({2, 3}, f64, 1));
  const EagerTensor b = rt->tensor(make({3, 4}, f64, 2));
  const auto f = [&](const EagerTensor& x) { return sum(einsum("ij,jk->ik", {x, b})); };
  const EagerTensor g1 = grad(f, a), g2 = grad(f, a);
  EXPECT_EQ(rt->runtime()->extension_caches().stats(selector).hits, 1u);
  expect_close(host(g1), host(g2), 0, "cached tracked call");
  // Untracked result from tracked operands inside NoGradGuard.
  NoGradGuard guard;
  EXPECT_FALSE(einsum("ij,jk->ik", {a, b}).requires_grad());
}

TEST(EinsumPlan, ConcurrentEagerCallsShareTheCache) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  const auto selector = ExtensionCacheSelector::named("tenferro.einsum", "plans");
  std::vector<std::vector<Tensor>> ops;
  std::vector<std::vector<cd>> want;
  for (std::int64_t n = 2; n <= 4; ++n) {
    ops.push_back({make({n, 3}, f64, 1), make({3, n}, f64, 2)});
    want.push_back(naive({letters("ij"), letters("jk")}, ops.back(), letters("ik")));
  }
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < 30; ++r) {
        const auto k = static_cast<std::size_t>((t + r) % 3);
        const EagerTensor c = einsum("ij,jk->ik", {rt->tensor(ops[k][0]), rt->tensor(ops[k][1])});
        const auto got = host(c);
        for (std::size_t q = 0; q < got.size(); ++q) {
          if (std::abs(got[q] - want[k][q]) > 1e-12) ++mismatches;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
  const CacheStats st = rt->runtime()->extension_caches().stats(selector);
  EXPECT_EQ(st.entries, 3u);
  EXPECT_EQ(st.hits + st.misses, 120u);
  EXPECT_GE(st.hits, 120u - 12u);  // at most one miss per thread and shape
}

TEST(EinsumPlan, DirectCallsUseTheBackendsAttachedRuntimeCache) {
  CpuBackend backend(CpuBackendOptions{.num_threads = 1});
  const auto selector = ExtensionCacheSelector::named("tenferro.einsum", "plans");
  const Tensor a = make({2, 3}, f64, 1), b = make({3, 4}, f64, 2);
  const auto first = host(einsum("ij,jk->ik", {a, b}, backend));
  auto& caches = EagerRuntime::attached(backend)->runtime()->extension_caches();
  EXPECT_EQ(caches.stats(selector).misses, 1u);
  const auto second = host(einsum("ij,jk->ik", {a, b}, backend));  // warm: no parse, no plan
  EXPECT_EQ(caches.stats(selector).hits, 1u);
  EXPECT_EQ(caches.stats(selector).entries, 1u);
  expect_close(second, first, 0, "warm direct call");
  // Errors are the same as before the cache.
  EXPECT_TF_ERROR((void)einsum("ij,jk->ik", {a, a}, backend), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR((void)einsum("ij,jk->i#", {a, b}, backend), ErrorKind::InvalidArgument);
}
