// Contraction order: exact dynamic programming over subsets (small networks)
// or greedy (large ones), and the cost of a given path. Labels are dense
// indices into the extents; label sets are bitsets.

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>

#include "einsum/common.hpp"
#include "tenferro/core/error.hpp"

namespace tenferro::einsum_detail {
namespace {

constexpr const char* kOp = "einsum_path";
constexpr std::size_t kMaxOptimal = 12;  // 3^12 splits: a few milliseconds

// A set of dense labels.
struct Set {
  std::vector<std::uint64_t> w;
  Set() = default;
  explicit Set(std::size_t labels) : w((labels + 63) / 64, 0) {}
  void add(std::int64_t l) { w[static_cast<std::size_t>(l) / 64] |= 1ULL << (l % 64); }
  bool has(std::int64_t l) const { return (w[static_cast<std::size_t>(l) / 64] >> (l % 64)) & 1; }
  Set operator|(const Set& o) const {
    Set r = *this;
    for (std::size_t i = 0; i < w.size(); ++i) r.w[i] |= o.w[i];
    return r;
  }
  Set operator&(const Set& o) const {
    Set r = *this;
    for (std::size_t i = 0; i < w.size(); ++i) r.w[i] &= o.w[i];
    return r;
  }
  bool intersects(const Set& o) const {
    for (std::size_t i = 0; i < w.size(); ++i) {
      if (w[i] & o.w[i]) return true;
    }
    return false;
  }
};

struct Costs {
  const std::vector<double>& extents;
  double size(const Set& s) const {
    double p = 1;
    for (std::size_t i = 0; i < s.w.size(); ++i) {
      for (std::uint64_t b = s.w[i]; b != 0; b &= b - 1) {
        p *= extents[i * 64 + static_cast<std::size_t>(std::countr_zero(b))];
      }
    }
    return p;
  }
};

// a better than b: fewer flops (relative tolerance), then a smaller largest
// intermediate.
bool better(double fa, double ba, double fb, double bb) {
  const double tol = 1e-12 * std::max(std::fabs(fa), std::fabs(fb));
  if (fa < fb - tol) return true;
  if (fa > fb + tol) return false;
  return ba < bb;
}

EinsumPlan cost_of(std::vector<Set> list, const Set& out, const Costs& c, const EinsumPath& path) {
  EinsumPlan plan;
  for (const auto& [i0, j0] : path) {
    const auto n = static_cast<std::int64_t>(list.size());
    if (i0 < 0 || j0 < 0 || i0 >= n || j0 >= n || i0 == j0) {
      fail(ErrorKind::InvalidArgument, kOp, "path step (", i0, ", ", j0,
           ") is invalid for a list of ", n, " operand(s); each step names two distinct operands");
    }
    const std::int64_t i = std::min(i0, j0), j = std::max(i0, j0);
    const Set& a = list[static_cast<std::size_t>(i)];
    const Set& b = list[static_cast<std::size_t>(j)];
    Set kept = out;
    for (std::int64_t k = 0; k < n; ++k) {
      if (k != i && k != j) kept = kept | list[static_cast<std::size_t>(k)];
    }
    const Set u = a | b, r = u & kept;
    plan.flops += c.size(u);
    plan.largest_intermediate = std::max(plan.largest_intermediate, c.size(r));
    list.erase(list.begin() + j);
    list.erase(list.begin() + i);
    list.push_back(r);
    plan.path.emplace_back(i, j);
  }
  if (list.size() != 1) {
    fail(ErrorKind::InvalidArgument, kOp, "the path leaves ", list.size(),
         " operands; it needs one step fewer than the operands");
  }
  return plan;
}

EinsumPath optimal(const std::vector<Set>& ops, const Set& out, const Costs& c) {
  const std::size_t n = ops.size();
  const std::uint32_t full = (1U << n) - 1;
  std::vector<Set> uni(full + 1, Set(ops[0].w.size() * 64)), lab(full + 1);
  for (std::uint32_t s = 1; s <= full; ++s) {
    const int low = std::countr_zero(s);
    uni[s] = uni[s & (s - 1)] | ops[static_cast<std::size_t>(low)];
  }
  std::vector<double> flops(full + 1, 0), big(full + 1, 0);
  std::vector<std::uint32_t> split(full + 1, 0);
  for (std::uint32_t s = 1; s <= full; ++s) lab[s] = uni[s] & (out | uni[full ^ s]);
  for (std::uint32_t s = 1; s <= full; ++s) {
    if (std::popcount(s) == 1) continue;
    const std::uint32_t low = s & (~s + 1), rest = s ^ low;
    const double size = c.size(lab[s]);
    double bf = std::numeric_limits<double>::infinity(), bb = bf;
    std::uint32_t bs = 0;
    // s1 holds the lowest bit, so each unordered split is seen once.
    for (std::uint32_t sub = rest;; sub = (sub - 1) & rest) {
      const std::uint32_t s1 = sub | low, s2 = s ^ s1;
      if (s2 != 0) {
        const double f = flops[s1] + flops[s2] + c.size(lab[s1] | lab[s2]);
        const double b = std::max({big[s1], big[s2], size});
        if (bs == 0 || better(f, b, bf, bb)) bf = f, bb = b, bs = s1;
      }
      if (sub == 0) break;
    }
    flops[s] = bf, big[s] = bb, split[s] = bs;
  }
  // Replay the tree in post order on the shrinking list.
  EinsumPath path;
  std::vector<std::uint32_t> list;
  for (std::size_t i = 0; i < n; ++i) list.push_back(1U << i);
  auto pos = [&](std::uint32_t m) {
    return static_cast<std::int64_t>(std::find(list.begin(), list.end(), m) - list.begin());
  };
  auto emit = [&](auto&& self, std::uint32_t s) -> void {
    if (std::popcount(s) == 1) return;
    const std::uint32_t s1 = split[s], s2 = s ^ s1;
    self(self, s1);
    self(self, s2);
    const std::int64_t i = std::min(pos(s1), pos(s2)), j = std::max(pos(s1), pos(s2));
    list.erase(list.begin() + j);
    list.erase(list.begin() + i);
    list.push_back(s);
    path.emplace_back(i, j);
  };
  emit(emit, full);
  return path;
}

// mode % 3 == 0: the result's size less its operands' (opt_einsum's
// greedy); 1: the step's flops; 2: the result's size. Candidates: pairs
// sharing a label first; with mode >= 3, pairs that sum a label away first.
EinsumPath greedy(std::vector<Set> list, const Set& out, const Costs& c, int mode) {
  EinsumPath path;
  const std::size_t words = out.w.size();
  while (list.size() > 1) {
    const std::size_t n = list.size();
    // Labels held by at least two / three operands (word-parallel counting).
    Set seen(words * 64), multi(words * 64), tri(words * 64);
    for (const Set& s : list) {
      for (std::size_t w = 0; w < words; ++w) {
        tri.w[w] |= multi.w[w] & s.w[w];
        multi.w[w] |= seen.w[w] & s.w[w];
        seen.w[w] |= s.w[w];
      }
    }
    // A label of the pair's union survives when the output or another
    // operand holds it.
    auto result = [&](const Set& a, const Set& b) {
      Set r = a | b;
      for (std::size_t w = 0; w < words; ++w) {
        r.w[w] &= out.w[w] | tri.w[w] | (multi.w[w] & ~(a.w[w] & b.w[w]));
      }
      return r;
    };
    std::vector<double> size(n);
    for (std::size_t i = 0; i < n; ++i) size[i] = c.size(list[i]);
    bool found = false;
    int best_shares = 0;
    double best_cost = 0, best_flops = 0;
    std::size_t bi = 0, bj = 1;
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = i + 1; j < n; ++j) {
        int shares = list[i].intersects(list[j]) ? 1 : 0;
        if (shares < best_shares) continue;
        if (shares && mode >= 3 && result(list[i], list[j]).w != (list[i] | list[j]).w) shares = 2;
        if (shares < best_shares) continue;
        const double rs = c.size(result(list[i], list[j]));
        const double f = c.size(list[i] | list[j]);
        const double cost = mode % 3 == 0 ? rs - size[i] - size[j] : mode % 3 == 1 ? f : rs;
        if (!found || shares > best_shares || better(cost, f, best_cost, best_flops)) {
          found = true, best_shares = shares, best_cost = cost, best_flops = f, bi = i, bj = j;
        }
      }
    }
    const Set r = result(list[bi], list[bj]);
    list.erase(list.begin() + static_cast<std::ptrdiff_t>(bj));
    list.erase(list.begin() + static_cast<std::ptrdiff_t>(bi));
    list.push_back(r);
    path.emplace_back(static_cast<std::int64_t>(bi), static_cast<std::int64_t>(bj));
  }
  return path;
}

}  // namespace

EinsumPlan plan_dense(const std::vector<std::vector<std::int64_t>>& operands,
                      const std::vector<std::int64_t>& output, const std::vector<double>& extents,
                      const EinsumOptions& options) {
  const std::size_t L = std::max<std::size_t>(extents.size(), 1);
  auto check = [&](std::int64_t l) {
    if (l < 0 || static_cast<std::size_t>(l) >= extents.size()) {
      fail(ErrorKind::InvalidArgument, kOp, "label ", l, " is out of range: there are ",
           extents.size(), " extents");
    }
  };
  std::vector<Set> ops;
  Set out(L);
  for (std::int64_t l : output) check(l), out.add(l);
  for (const auto& o : operands) {
    Set s(L);
    for (std::int64_t l : o) check(l), s.add(l);
    ops.push_back(s);
  }
  if (ops.empty()) fail(ErrorKind::InvalidArgument, kOp, "there are no operands to plan");
  // Labels in one operand only and not in the output are summed first (free).
  for (std::size_t k = 0; k < ops.size(); ++k) {
    Set others = out;
    for (std::size_t q = 0; q < ops.size(); ++q) {
      if (q != k) others = others | ops[q];
    }
    ops[k] = ops[k] & others;
  }
  const Costs c{extents};
  EinsumPath path;
  if (options.path) {
    path = *options.path;
  } else if (ops.size() > 1) {
    const bool exact = options.strategy == EinsumStrategy::Optimal ||
                       (options.strategy == EinsumStrategy::Auto && ops.size() <= kMaxOptimal);
    if (exact && ops.size() > 20) {
      fail(ErrorKind::InvalidArgument, kOp, "the optimal strategy is limited to 20 operands (got ",
           ops.size(), "); use EinsumStrategy::Greedy");
    }
    if (exact) {
      path = optimal(ops, out, c);
    } else {
      // The cheapest of the greedy variants under the cost model.
      EinsumPlan best;
      for (int mode = 0; mode < 6; ++mode) {
        EinsumPlan p = cost_of(ops, out, c, greedy(ops, out, c, mode));
        if (mode == 0 ||
            better(p.flops, p.largest_intermediate, best.flops, best.largest_intermediate)) {
          best = std::move(p);
        }
      }
      return best;
    }
  }
  return cost_of(std::move(ops), out, c, path);
}

}  // namespace tenferro::einsum_detail

namespace tenferro {

EinsumPlan plan_contraction(const std::vector<std::vector<std::int64_t>>& operands,
                            const std::vector<std::int64_t>& output,
                            const std::vector<double>& extents, const EinsumOptions& options) {
  return einsum_detail::plan_dense(operands, output, extents, options);
}

}  // namespace tenferro
