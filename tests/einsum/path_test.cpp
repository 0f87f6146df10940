// The planner: the dynamic programming is optimal (against a brute force over
// every shrinking-list path), greedy and user paths are valid and costed,
// einsum_path reports the plan einsum uses.

#include <algorithm>
#include <functional>
#include <limits>

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
  // [10 x 100] [100 x 5] [5 x 50]: (AB)C costs 10*100*5 + 10*5*50 = 7500,
  // A(BC) costs 100*5*50 + 10*100*50 = 75000.
  const EinsumPlan p = einsum_path("ij,jk,kl->il", {{10, 100}, {100, 5}, {5, 50}});
  EXPECT_EQ(p.path, (EinsumPath{{0, 1}, {0, 1}}));
  EXPECT_DOUBLE_EQ(p.flops, 7500.0);
  EXPECT_DOUBLE_EQ(p.largest_intermediate, 500.0);
  // Reversed chain: the optimum contracts the last two first.
  const EinsumPlan r = einsum_path("ij,jk,kl->il", {{50, 5}, {5, 100}, {100, 10}});
  EXPECT_EQ(r.path, (EinsumPath{{1, 2}, {0, 1}}));
  EXPECT_DOUBLE_EQ(r.flops, 7500.0);
  // A user path is costed as given.
  const EinsumPlan u = einsum_path("ij,jk,kl->il", {{10, 100}, {100, 5}, {5, 50}},
                                   {.path = EinsumPath{{1, 2}, {0, 1}}});
  EXPECT_DOUBLE_EQ(u.flops, 75000.0);
  // One operand: no steps.
  EXPECT_TRUE(einsum_path("ii->", {{3, 3}}).path.empty());
}

TEST(EinsumPath, GreedyScalesToLargeNetworks) {
  // A ring of 40 matrices (40 labels): Auto uses greedy beyond 12 operands.
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
