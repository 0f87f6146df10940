// The planner: the dynamic programming is optimal (against a brute force over
// every shrinking-list path), greedy and user paths are valid and costed,
// einsum_path reports the plan einsum uses.

#include <algorithm>
#include <cmath>
#include <functional>
#include <iostream>
#include <limits>
#include <map>

#include "einsum_test_util.hpp"

using namespace etest;

namespace {

using Net = std::vector<std::vector<std::int64_t>>;

// The minimum flops over every path (shrinking-list steps, all pairs).
double brute_force(const Net& ops, const std::vector<std::int64_t>& out,
                   const std::vector<double>& ext) {
  double best = std::numeric_limits<double>::infinity();
  std::function<void(EinsumPath&, std::size_t)> rec = [&](EinsumPath& path, std::size_t n) {
    if (n == 1) {
      best = std::min(best, plan_contraction(ops, out, ext, {.path = path}).flops);
      return;
    }
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = i + 1; j < n; ++j) {
        path.emplace_back(i, j);
        rec(path, n - 1);
        path.pop_back();
      }
    }
  };
  EinsumPath p;
  rec(p, ops.size());
  return best;
}

// Deterministic small random networks: n operands over `labels` labels.
Net random_net(std::size_t n, std::int64_t labels, std::uint64_t seed) {
  const auto v = values(static_cast<std::int64_t>(n * 8), seed);
  Net net(n);
  std::size_t q = 0;
  for (std::size_t k = 0; k < n; ++k) {
    for (std::int64_t l = 0; l < labels; ++l) {
      if (v[q++ % v.size()].real() > 0.2 ||
          l % static_cast<std::int64_t>(n) == static_cast<std::int64_t>(k)) {
        net[k].push_back(l);
      }
    }
  }
  return net;
}

}  // namespace

TEST(EinsumPath, DynamicProgrammingIsOptimalOnSmallNetworks) {
  int compared = 0;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    const std::size_t n = 3 + seed % 3;  // 3..5 operands
    const std::int64_t labels = 6;
    const Net net = random_net(n, labels, seed);
    std::vector<double> ext;
    for (std::int64_t l = 0; l < labels; ++l)
      ext.push_back(static_cast<double>(2 + (l * 7 + seed) % 5));
    const std::vector<std::int64_t> out = {static_cast<std::int64_t>(seed % 2)};
    const EinsumPlan dp = plan_contraction(net, out, ext, {.strategy = EinsumStrategy::Optimal});
    const double best = brute_force(net, out, ext);
    EXPECT_NEAR(dp.flops, best, 1e-9 * best) << "seed " << seed;
    EXPECT_EQ(dp.path.size(), n - 1);
    // The reported cost is that of the returned path.
    EXPECT_DOUBLE_EQ(plan_contraction(net, out, ext, {.path = dp.path}).flops, dp.flops);
    // Greedy is valid and never better than the optimum.
    const EinsumPlan g = plan_contraction(net, out, ext, {.strategy = EinsumStrategy::Greedy});
    EXPECT_EQ(g.path.size(), n - 1);
    EXPECT_GE(g.flops, dp.flops * (1 - 1e-12));
    ++compared;
  }
  EXPECT_EQ(compared, 12);
}

TEST(EinsumPath, MatrixChainPicksTheCheapOrder) {
  // [10 x 100] [100 x 5] [5 x 50]: (AB)C costs 2 * (10*100*5 + 10*5*50) =
  // 15000 flops (a multiply and an add each), A(BC) 2 * (100*5*50 + 10*100*50) = 150000.
  const EinsumPlan p = einsum_path("ij,jk,kl->il", {{10, 100}, {100, 5}, {5, 50}});
  EXPECT_EQ(p.path, (EinsumPath{{0, 1}, {0, 1}}));
  EXPECT_DOUBLE_EQ(p.flops, 15000.0);
  EXPECT_DOUBLE_EQ(p.largest_intermediate, 500.0);
  // Reversed chain: the optimum contracts the last two first.
  const EinsumPlan r = einsum_path("ij,jk,kl->il", {{50, 5}, {5, 100}, {100, 10}});
  EXPECT_EQ(r.path, (EinsumPath{{1, 2}, {0, 1}}));
  EXPECT_DOUBLE_EQ(r.flops, 15000.0);
  // A user path is costed as given.
  const EinsumPlan u = einsum_path("ij,jk,kl->il", {{10, 100}, {100, 5}, {5, 50}},
                                   {.path = EinsumPath{{1, 2}, {0, 1}}});
  EXPECT_DOUBLE_EQ(u.flops, 150000.0);
  // One operand: no steps.
  EXPECT_TRUE(einsum_path("ii->", {{3, 3}}).path.empty());
}

TEST(EinsumPath, GreedyScalesToLargeNetworks) {
  // A ring of 40 matrices (40 labels): Auto anneals beyond 16 operands.
  const std::int64_t n = 40;
  Net net;
  for (std::int64_t k = 0; k < n; ++k) net.push_back({k, (k + 1) % n});
  const std::vector<double> ext(static_cast<std::size_t>(n), 3.0);
  const EinsumPlan p = plan_contraction(net, {}, ext);
  EXPECT_EQ(p.path.size(), static_cast<std::size_t>(n - 1));
  EXPECT_LE(p.largest_intermediate, 9.0);  // contracting along the ring
  EXPECT_TF_ERROR(plan_contraction(net, {}, ext, {.strategy = EinsumStrategy::Optimal}),
                  ErrorKind::InvalidArgument);
}

TEST(EinsumPath, InvalidPathsAreTypedErrors) {
  const std::vector<Shape> shapes = {{2, 3}, {3, 4}, {4, 2}};
  const std::string eq = "ij,jk,kl->il";
  EXPECT_TF_ERROR(einsum_path(eq, shapes, {.path = EinsumPath{{0, 0}, {0, 1}}}),
                  ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(einsum_path(eq, shapes, {.path = EinsumPath{{0, 3}, {0, 1}}}),
                  ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(einsum_path(eq, shapes, {.path = EinsumPath{{0, 1}}}),
                  ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(einsum_path(eq, shapes, {.path = EinsumPath{{0, 1}, {0, 1}, {0, 1}}}),
                  ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(plan_contraction({{0, 5}}, {}, {2.0, 2.0}), ErrorKind::InvalidArgument);
  // Reversed pairs are accepted and normalised.
  const EinsumPlan p = einsum_path(eq, shapes, {.path = EinsumPath{{1, 0}, {1, 0}}});
  EXPECT_EQ(p.path, (EinsumPath{{0, 1}, {0, 1}}));
}

namespace {

// A 2D grid of w x h tensors (bond extent d; a hyperedge over each row's
// first column to exercise labels held by three or more operands).
struct Grid {
  Net net;
  std::vector<double> ext;
};
Grid grid(std::int64_t w, std::int64_t h, double d) {
  Grid g;
  auto horizontal = [&](std::int64_t x, std::int64_t y) { return y * (w - 1) + x; };
  const std::int64_t nh = (w - 1) * h;
  auto vertical = [&](std::int64_t x, std::int64_t y) { return nh + y * w + x; };
  const std::int64_t labels = nh + w * (h - 1) + 1;
  const std::int64_t hyper = labels - 1;
  for (std::int64_t y = 0; y < h; ++y) {
    for (std::int64_t x = 0; x < w; ++x) {
      std::vector<std::int64_t> t;
      if (x > 0) t.push_back(horizontal(x - 1, y));
      if (x + 1 < w) t.push_back(horizontal(x, y));
      if (y > 0) t.push_back(vertical(x, y - 1));
      if (y + 1 < h) t.push_back(vertical(x, y));
      if (x == 0) t.push_back(hyper);
      g.net.push_back(t);
    }
  }
  g.ext.assign(static_cast<std::size_t>(labels), d);
  return g;
}

}  // namespace

TEST(EinsumPlanner, AnnealingIsDeterministicWithASeed) {
  const Grid g = grid(6, 5, 3);
  EinsumOptions o{.strategy = EinsumStrategy::Anneal};
  o.seed = 7;  // no wall-clock cap: the schedule's end stops it
  const EinsumPlan a = plan_contraction(g.net, {}, g.ext, o);
  const EinsumPlan b = plan_contraction(g.net, {}, g.ext, o);
  ASSERT_FALSE(a.search_cut_short);
  EXPECT_EQ(a.path, b.path);
  EXPECT_EQ(a.flops, b.flops);
  EXPECT_EQ(a.search_work, b.search_work);
  EXPECT_GT(a.search_work, 0);
  EXPECT_EQ(a.path.size(), g.net.size() - 1);
  // The reported cost is that of the returned path.
  EXPECT_DOUBLE_EQ(plan_contraction(g.net, {}, g.ext, {.path = a.path}).flops, a.flops);
}

TEST(EinsumPlanner, AnnealingIsNeverWorseThanGreedy) {
  int compared = 0;
  for (std::int64_t w : {4, 5, 7}) {
    for (double d : {2.0, 5.0}) {
      const Grid g = grid(w, 4, d);
      const EinsumPlan greedy =
          plan_contraction(g.net, {}, g.ext, {.strategy = EinsumStrategy::Greedy});
      EinsumOptions o{.strategy = EinsumStrategy::Anneal};
      o.budget_ms = 200;
      const EinsumPlan sa = plan_contraction(g.net, {}, g.ext, o);
      EXPECT_LE(sa.flops, greedy.flops * (1 + 1e-12)) << w << " " << d;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 6);
}

TEST(EinsumPlanner, AWorkBudgetStopsTheSearchAtTheSameTreeEveryTime) {
  // The work budget counts tree scorings, candidate pairs and annealing
  // moves: a budget too small for the schedule stops it at the same point
  // on every run and machine, wherever the clock stands.
  const Grid g = grid(10, 10, 2);
  EinsumOptions o{.strategy = EinsumStrategy::Anneal};
  const EinsumPlan full = plan_contraction(g.net, {}, g.ext, o);
  ASSERT_FALSE(full.search_cut_short);
  for (const double work : {1e5, 1e6, 0.3 * full.search_work}) {
    o.search_work = work;
    const EinsumPlan a = plan_contraction(g.net, {}, g.ext, o);
    const EinsumPlan b = plan_contraction(g.net, {}, g.ext, o);
    EXPECT_TRUE(a.search_cut_short) << work;
    EXPECT_EQ(a.path, b.path) << work;
    EXPECT_EQ(a.search_work, b.search_work) << work;
    // It stops at the first check past the budget: by one phase step at most
    // (a phase's share may also end it earlier).
    EXPECT_LT(a.search_work, work + 0.05 * full.search_work) << work;
    EXPECT_EQ(a.path.size(), g.net.size() - 1) << work;
  }
  // An infinite budget is no limit: the schedule ends the search.
  o.search_work = std::numeric_limits<double>::infinity();
  const EinsumPlan unlimited = plan_contraction(g.net, {}, g.ext, o);
  EXPECT_FALSE(unlimited.search_cut_short);
  EXPECT_EQ(unlimited.path, full.path);
  EXPECT_EQ(unlimited.search_work, full.search_work);
  // More work never finds a worse tree on this grid than much less.
  o.search_work = 1e5;
  EXPECT_LE(full.flops, plan_contraction(g.net, {}, g.ext, o).flops * (1 + 1e-12));
}

TEST(EinsumPlanner, AWallClockCapIsHonouredWithinTenPercent) {
  // A 20 x 20 grid (400 operands) searches about 1.5 s under the default
  // work budget: caps well below that end it. The clock is read inside
  // every phase (every 256 annealing moves, every 32 steps of a greedy
  // run), so the search stops within 10% of the cap; the 40 ms of slack
  // cover the deterministic greedy paths that run before the cap can act
  // (4-5 ms here) and a scheduling delay on a loaded machine.
  const Grid g = grid(20, 20, 2);
  int capped = 0;
  for (const double cap : {100.0, 300.0}) {
    EinsumOptions o{.strategy = EinsumStrategy::Anneal};
    o.budget_ms = cap;
    const EinsumPlan p = plan_contraction(g.net, {}, g.ext, o);
    EXPECT_TRUE(p.search_cut_short) << cap;
    EXPECT_EQ(p.path.size(), g.net.size() - 1) << cap;
    EXPECT_LE(p.search_ms, cap * 1.1 + 40) << cap;
    std::cout << "cap " << cap << " ms: search " << p.search_ms << " ms\n";
    ++capped;
  }
  EXPECT_EQ(capped, 2);
  // A cap of 0 still returns a valid path: the first greedy one.
  EinsumOptions o{.strategy = EinsumStrategy::Anneal};
  o.budget_ms = 0;
  const EinsumPlan zero = plan_contraction(g.net, {}, g.ext, o);
  EXPECT_TRUE(zero.search_cut_short);
  EXPECT_EQ(zero.path.size(), g.net.size() - 1);
  EXPECT_DOUBLE_EQ(plan_contraction(g.net, {}, g.ext, {.path = zero.path}).flops, zero.flops);
  // (The deterministic greedy paths run before the cap can act.)
  std::cout << "cap 0 ms: search " << zero.search_ms << " ms\n";
}

TEST(EinsumPlanner, SlicingFitsTheMemoryLimit) {
  const Grid g = grid(6, 6, 4);
  const EinsumPlan whole = plan_contraction(g.net, {}, g.ext);
  ASSERT_GT(whole.largest_intermediate, 64.0);
  EXPECT_TRUE(whole.sliced_labels.empty());
  EXPECT_EQ(whole.slices, 1.0);
  EXPECT_EQ(whole.sliced_flops, whole.flops);
  for (double limit : {4096.0, 256.0, 64.0}) {
    EinsumOptions o;
    o.memory_limit = limit * 8;  // bytes of float64
    const EinsumPlan p = plan_contraction(g.net, {}, g.ext, o);
    EXPECT_LE(p.sliced_largest_intermediate, limit) << limit;
    EXPECT_EQ(p.largest_intermediate <= limit, p.sliced_labels.empty()) << limit;
    double slices = 1;
    for (std::int64_t l : p.sliced_labels) slices *= g.ext[static_cast<std::size_t>(l)];
    EXPECT_DOUBLE_EQ(p.slices, slices);
    EXPECT_GE(p.sliced_flops, p.flops * (1 - 1e-12));
  }
  // element_bytes scales the limit.
  EinsumOptions o;
  o.memory_limit = 64.0 * 4;
  o.element_bytes = 4;
  EXPECT_LE(plan_contraction(g.net, {}, g.ext, o).sliced_largest_intermediate, 64.0);
}

TEST(EinsumPlanner, BadOptionsAreTypedErrors) {
  const Grid g = grid(4, 4, 2);
  EinsumOptions o;
  o.budget_ms = -1;
  EXPECT_TF_ERROR(plan_contraction(g.net, {}, g.ext, o), ErrorKind::InvalidArgument);
  o.budget_ms = std::nan("");
  EXPECT_TF_ERROR(plan_contraction(g.net, {}, g.ext, o), ErrorKind::InvalidArgument);
  o = {};
  for (const double work : {0.0, -1.0, std::nan("")}) {
    o.search_work = work;
    EXPECT_TF_ERROR(plan_contraction(g.net, {}, g.ext, o), ErrorKind::InvalidArgument);
  }
  o = {};
  o.memory_limit = 0;
  EXPECT_TF_ERROR(plan_contraction(g.net, {}, g.ext, o), ErrorKind::InvalidArgument);
  o.memory_limit = 4;  // less than one float64
  EXPECT_TF_ERROR(plan_contraction(g.net, {}, g.ext, o), ErrorKind::InvalidArgument);
  o = {};
  o.element_bytes = 0;
  EXPECT_TF_ERROR(plan_contraction(g.net, {}, g.ext, o), ErrorKind::InvalidArgument);
  // A limit below the output itself cannot be met by slicing summed labels.
  o = {};
  o.memory_limit = 8.0 * 8;
  EXPECT_TF_ERROR(einsum_path("ij,jk->ik", {{4, 3}, {3, 4}}, o), ErrorKind::InvalidArgument);
}

TEST(EinsumPath, DynamicProgrammingReachesSixteenOperands) {
  // Auto plans up to 16 operands exactly: never worse than the annealer's
  // path, and the reported cost is that of the returned path.
  for (std::size_t n : {13U, 14U, 15U, 16U}) {
    const Net net = random_net(n, 20, 7 + n);
    std::vector<double> ext;
    for (std::int64_t l = 0; l < 20; ++l) ext.push_back(static_cast<double>(2 + l % 4));
    const std::vector<std::int64_t> out = {0, 3};
    const EinsumPlan dp = plan_contraction(net, out, ext);
    const EinsumPlan opt = plan_contraction(net, out, ext, {.strategy = EinsumStrategy::Optimal});
    const EinsumPlan sa = plan_contraction(net, out, ext, {.strategy = EinsumStrategy::Anneal});
    EXPECT_EQ(dp.path, opt.path) << n << " operands: Auto is the exact search";
    EXPECT_EQ(dp.path.size(), n - 1);
    EXPECT_LE(dp.flops, sa.flops * (1 + 1e-12)) << n << " operands";
    EXPECT_DOUBLE_EQ(plan_contraction(net, out, ext, {.path = dp.path}).flops, dp.flops);
    std::cout << n << " operands: exact search " << dp.search_ms << " ms, log10 flops "
              << std::log10(dp.flops) << " (anneal " << std::log10(sa.flops) << ")\n";
  }
}

TEST(EinsumPath, DynamicProgrammingFormsOuterProductsUpToSixteenOperands) {
  // x(i) y(j) M(i, j, k) -> k beside a ring of 11 matrices (14 operands):
  // the cheapest tree forms the outer product x y first (4 flops, then
  // 2 * 4 * 1000 with M), which a search over connected subsets only cannot
  // see (x M then y: 8000 + 4000). The exact search finds it.
  Net net = {{0}, {1}, {0, 1, 2}};
  std::vector<double> ext = {2, 2, 1000};
  Net ring;
  for (std::int64_t t = 0; t < 11; ++t) {
    net.push_back({3 + t, 3 + (t + 1) % 11});
    ring.push_back({t, (t + 1) % 11});
    ext.push_back(3);
  }
  const EinsumPlan whole = plan_contraction(net, {2}, ext);
  const EinsumPlan ring_alone = plan_contraction(ring, {}, std::vector<double>(11, 3.0));
  // The ring's scalar times x (2 flops), that outer y (4), then M (8000);
  // over connected subsets only: x M (8000), y (4000), the ring's scalar
  // times the 1000-vector (1000).
  EXPECT_DOUBLE_EQ(whole.flops, ring_alone.flops + 2 + 4 + 8000);
}

TEST(EinsumPath, DynamicProgrammingOnAPartialGrid) {
  // 13 operands of a 4-wide grid (the last row holds one): the exact search
  // once recursed without end here, when a split through a subset it does
  // not form was the first it scored. Check the path against the annealer's.
  const std::int64_t w = 4, cells = 13;
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> bond;
  auto label = [&](std::int64_t a, std::int64_t b) {
    const auto key = std::minmax(a, b);
    return bond.try_emplace({key.first, key.second}, static_cast<std::int64_t>(bond.size()))
        .first->second;
  };
  Net net(static_cast<std::size_t>(cells));
  for (std::int64_t c = 0; c < cells; ++c) {
    for (const std::int64_t d : {c - 1, c + 1, c - w, c + w}) {
      if (d < 0 || d >= cells || ((d == c - 1 || d == c + 1) && d / w != c / w)) continue;
      net[static_cast<std::size_t>(c)].push_back(label(c, d));
    }
  }
  const std::vector<double> ext(bond.size(), 3.0);
  const EinsumPlan dp = plan_contraction(net, {}, ext);
  const EinsumPlan sa = plan_contraction(net, {}, ext, {.strategy = EinsumStrategy::Anneal});
  ASSERT_EQ(dp.path.size(), static_cast<std::size_t>(cells - 1));
  EXPECT_LE(dp.flops, sa.flops * (1 + 1e-12));
  EXPECT_DOUBLE_EQ(plan_contraction(net, {}, ext, {.path = dp.path}).flops, dp.flops);
}
