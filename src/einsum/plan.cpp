// Contraction order: exact dynamic programming over subsets (small networks),
// greedy, or annealing (large ones, src/einsum/optimize.cpp), the cost of a
// given path, and slicing for a memory limit. Labels are dense indices into
// the extents; label sets are bitsets.

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>

#include "einsum/common.hpp"
#include "einsum/optimize.hpp"
#include "tenferro/core/error.hpp"

namespace tenferro::einsum_detail {
namespace {

constexpr std::size_t kMaxOptimal = 16;
// Exact over every contraction tree (outer products included) up to this
// many operands: 3^16 / 2 splits, most cut by a lower bound before their
// labels are read; at most 0.5 s measured (16 operands, 150 labels).
constexpr std::size_t kMaxOuterProducts = 16;
constexpr std::size_t kMaxQuadraticGreedy = 128;
// The search's default work budget in units of SearchBudget (optimize.cpp):
// deterministic, and enough for every instance of ../shared/einsum-instances
// to finish its schedule (the largest, 415 operands, spends 3.4e8); networks
// of about 400 operands and more may stop before it (1-2 s here).
constexpr double kDefaultSearchWork = 1e9;

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
  bool operator==(const Set& o) const = default;
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
  if (std::isinf(fa) != std::isinf(fb)) return fa < fb;  // the tolerance below is NaN then
  const double tol = 1e-12 * std::max(std::fabs(fa), std::fabs(fb));
  if (fa < fb - tol) return true;
  if (fa > fb + tol) return false;
  return ba < bb;
}

// Calls f(l) for every label l of s.
template <class F>
void for_each_label(const Set& s, F&& f) {
  for (std::size_t w = 0; w < s.w.size(); ++w) {
    for (std::uint64_t x = s.w[w]; x != 0; x &= x - 1) {
      f(static_cast<std::int64_t>(w * 64 + static_cast<std::size_t>(std::countr_zero(x))));
    }
  }
}

EinsumPlan cost_of(std::vector<Set> list, const Set& out, const Costs& c, const EinsumPath& path,
                   const char* op) {
  EinsumPlan plan;
  // How many items of the list hold each label: a label of a pair survives
  // when the output or a third item holds it (linear per step, not a union
  // over the list).
  std::vector<std::int32_t> holders(out.w.size() * 64, 0);
  const auto count = [&](const Set& s, std::int32_t d) {
    for_each_label(s, [&](std::int64_t l) { holders[static_cast<std::size_t>(l)] += d; });
  };
  for (const Set& s : list) count(s, 1);
  for (const auto& [i0, j0] : path) {
    const auto n = static_cast<std::int64_t>(list.size());
    if (i0 < 0 || j0 < 0 || i0 >= n || j0 >= n || i0 == j0) {
      fail(ErrorKind::InvalidArgument, op, "path step (", i0, ", ", j0,
           ") is invalid for a list of ", n, " operand(s); each step names two distinct operands");
    }
    const std::int64_t i = std::min(i0, j0), j = std::max(i0, j0);
    const Set& a = list[static_cast<std::size_t>(i)];
    const Set& b = list[static_cast<std::size_t>(j)];
    const Set u = a | b;
    Set r = u;
    for_each_label(u, [&](std::int64_t l) {
      const auto h = static_cast<std::size_t>(l);
      if (!out.has(l) && holders[h] - (a.has(l) ? 1 : 0) - (b.has(l) ? 1 : 0) == 0) {
        r.w[h / 64] &= ~(1ULL << (h % 64));
      }
    });
    plan.flops += c.size(u) * (r == u ? 1.0 : 2.0);
    plan.largest_intermediate = std::max(plan.largest_intermediate, c.size(r));
    count(a, -1);
    count(b, -1);
    count(r, 1);
    list.erase(list.begin() + j);
    list.erase(list.begin() + i);
    list.push_back(std::move(r));
    plan.path.emplace_back(i, j);
  }
  if (list.size() != 1) {
    fail(ErrorKind::InvalidArgument, op, "the path leaves ", list.size(),
         " operands; it needs one step fewer than the operands");
  }
  return plan;
}

EinsumPath optimal(const std::vector<Set>& ops, const Set& out, const Costs& c) {
  // Flat arrays, W words per subset, and no allocation in the inner loop.
  const std::size_t n = ops.size(), W = out.w.size();
  const std::uint32_t full = (1U << n) - 1;
  std::vector<std::uint64_t> uni((std::size_t{full} + 1) * W, 0), lab(uni.size(), 0);
  for (std::uint32_t s = 1; s <= full; ++s) {
    const auto low = static_cast<std::size_t>(std::countr_zero(s));
    for (std::size_t w = 0; w < W; ++w) uni[s * W + w] = uni[(s & (s - 1)) * W + w] | ops[low].w[w];
  }
  // Extents below 1 (zero-size tensors) count as 1: every path costs nothing
  // then, and the ratios below stay finite.
  auto ext = [&](std::size_t l) { return std::max(c.extents[l], 1.0); };
  std::vector<double> size(std::size_t{full} + 1, 1.0);
  for (std::uint32_t s = 1; s <= full; ++s) {
    double p = 1;
    for (std::size_t w = 0; w < W; ++w) {
      std::uint64_t b = uni[s * W + w] & (out.w[w] | uni[(full ^ s) * W + w]);
      lab[s * W + w] = b;
      for (; b != 0; b &= b - 1) p *= ext(w * 64 + static_cast<std::size_t>(std::countr_zero(b)));
    }
    size[s] = p;
  }
  // Beyond kMaxOuterProducts operands the search skips outer products, as
  // opt_einsum's dp does: only subsets that are connected (their operands
  // linked by shared labels) or unions of whole connected components of the
  // network are formed. Elsewhere it is exact over every contraction tree.
  std::vector<std::uint8_t> formed(std::size_t{full} + 1, 1);
  if (n > kMaxOuterProducts) {
    std::vector<std::uint32_t> nb(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        if (i != j && ops[i].intersects(ops[j])) nb[i] |= 1U << j;
      }
    }
    auto reach = [&](std::uint32_t s) {  // the operands of s reachable from its lowest
      std::uint32_t seen = s & (~s + 1), frontier = seen;
      while (frontier != 0) {
        std::uint32_t next = 0;
        for (std::uint32_t f = frontier; f != 0; f &= f - 1)
          next |= nb[static_cast<std::size_t>(std::countr_zero(f))];
        next &= s & ~seen;
        seen |= next, frontier = next;
      }
      return seen;
    };
    std::vector<std::uint32_t> components;
    for (std::uint32_t left = full; left != 0;) {
      components.push_back(reach(left));
      left &= ~components.back();
    }
    for (std::uint32_t s = 1; s <= full; ++s) {
      bool whole = true;
      for (std::uint32_t comp : components)
        whole = whole && ((s & comp) == 0 || (s & comp) == comp);
      formed[s] = static_cast<std::uint8_t>(whole || reach(s) == s);
    }
  }
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> flops(std::size_t{full} + 1, 0), big(std::size_t{full} + 1, 0);
  std::vector<std::uint32_t> split(std::size_t{full} + 1, 0);
  for (std::uint32_t s = 1; s <= full; ++s) {
    if (std::popcount(s) == 1) continue;
    if (formed[s] == 0) {
      flops[s] = inf;
      continue;
    }
    const std::uint32_t low = s & (~s + 1), rest = s ^ low;
    const std::uint64_t* ls = &lab[std::size_t{s} * W];
    double bf = std::numeric_limits<double>::infinity(), bb = bf;
    std::uint32_t bs = 0;
    // s1 holds the lowest bit, so each unordered split is seen once.
    for (std::uint32_t sub = rest;; sub = (sub - 1) & rest) {
      const std::uint32_t s1 = sub | low, s2 = s ^ s1;
      // The step costs at least |lab[s]| (the result): a lower bound that
      // skips most splits without looking at their labels.
      if (s2 != 0 && formed[s1] != 0 && formed[s2] != 0 &&
          flops[s1] + flops[s2] + size[s] <= bf * (1 + 1e-12)) {
        // The step's labels are lab[s] and those it sums away.
        const std::uint64_t* a = &lab[std::size_t{s1} * W];
        const std::uint64_t* b = &lab[std::size_t{s2} * W];
        double summed = 1;
        bool kept_all = true;
        for (std::size_t w = 0; w < W; ++w) {
          for (std::uint64_t x = (a[w] | b[w]) & ~ls[w]; x != 0; x &= x - 1) {
            summed *= ext(w * 64 + static_cast<std::size_t>(std::countr_zero(x)));
            kept_all = false;
          }
        }
        const double f = flops[s1] + flops[s2] + size[s] * summed * (kept_all ? 1.0 : 2.0);
        if (f <= bf * (1 + 1e-12)) {
          const double m = std::max({big[s1], big[s2], size[s]});
          if (bs == 0 || better(f, m, bf, bb)) bf = f, bb = m, bs = s1;
        }
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
                      const EinsumOptions& options, const char* op, bool soft_limit) {
  const std::size_t L = std::max<std::size_t>(extents.size(), 1);
  for (std::size_t l = 0; l < extents.size(); ++l) {
    if (!(extents[l] >= 0) || !std::isfinite(extents[l])) {
      fail(ErrorKind::InvalidArgument, op, "label ", l, " has the extent ", extents[l],
           "; extents are finite and 0 or more");
    }
  }
  auto check = [&](std::int64_t l) {
    if (l < 0 || static_cast<std::size_t>(l) >= extents.size()) {
      fail(ErrorKind::InvalidArgument, op, "label ", l, " is out of range: there are ",
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
  if (ops.empty()) fail(ErrorKind::InvalidArgument, op, "there are no operands to plan");
  // Labels in one operand only and not in the output are summed first (free).
  {
    std::vector<std::int32_t> holders(out.w.size() * 64, 0);
    for (const Set& s : ops) {
      for_each_label(s, [&](std::int64_t l) { ++holders[static_cast<std::size_t>(l)]; });
    }
    for (Set& s : ops) {
      for_each_label(Set(s), [&](std::int64_t l) {
        const auto h = static_cast<std::size_t>(l);
        if (holders[h] == 1 && !out.has(l)) s.w[h / 64] &= ~(1ULL << (h % 64));
      });
    }
  }
  const Costs c{extents};
  if (options.budget_ms && !(*options.budget_ms >= 0)) {
    fail(ErrorKind::InvalidArgument, op, "budget_ms is ", *options.budget_ms,
         "; give a time limit of 0 ms or more (or leave it unset for the default)");
  }
  if (options.search_work && !(*options.search_work > 0)) {
    fail(ErrorKind::InvalidArgument, op, "search_work is ", *options.search_work,
         "; give a positive work budget (or leave it unset for the default 1e9)");
  }
  if (options.element_bytes <= 0) {
    fail(ErrorKind::InvalidArgument, op, "element_bytes is ", options.element_bytes,
         "; give the bytes per element (8 for float64)");
  }
  std::optional<double> limit;  // elements
  if (options.memory_limit) {
    if (!(*options.memory_limit > 0)) {
      fail(ErrorKind::InvalidArgument, op, "memory_limit is ", *options.memory_limit,
           " bytes; give a positive limit (or leave it unset)");
    }
    limit = std::floor(*options.memory_limit / static_cast<double>(options.element_bytes));
    if (*limit < 1) {
      fail(ErrorKind::InvalidArgument, op, "memory_limit of ", *options.memory_limit,
           " bytes holds no element of ", options.element_bytes, " bytes");
    }
  }
  auto network = [&] {
    Network net;
    net.extents = extents;
    for (const Set& s : ops) {
      std::vector<std::int64_t> labels;
      for (std::size_t l = 0; l < extents.size(); ++l) {
        if (s.has(static_cast<std::int64_t>(l))) labels.push_back(static_cast<std::int64_t>(l));
      }
      net.operands.push_back(std::move(labels));
    }
    for (std::size_t l = 0; l < extents.size(); ++l) {
      if (out.has(static_cast<std::int64_t>(l))) net.output.push_back(static_cast<std::int64_t>(l));
    }
    return net;
  };
  const auto t0 = std::chrono::steady_clock::now();
  EinsumPath path;
  bool cut_short = false;
  double search_work = 0;
  const std::size_t n = ops.size();
  if (options.path) {
    path = *options.path;
  } else if (n > 1) {
    const bool exact = options.strategy == EinsumStrategy::Optimal ||
                       (options.strategy == EinsumStrategy::Auto && n <= kMaxOptimal);
    if (exact && n > 20) {
      fail(ErrorKind::InvalidArgument, op, "the optimal strategy is limited to 20 operands (got ",
           n, "); use EinsumStrategy::Anneal or Greedy");
    }
    if (exact) {
      path = optimal(ops, out, c);
    } else {
      // The cheapest of the greedy variants under the cost model (the
      // quadratic-per-step variants only where they stay cheap).
      const Network net = network();
      EinsumPlan best;
      bool any = false;
      auto consider = [&](const EinsumPath& p) {
        EinsumPlan q = cost_of(ops, out, c, p, op);
        if (!any ||
            better(q.flops, q.largest_intermediate, best.flops, best.largest_intermediate)) {
          best = std::move(q), any = true;
        }
      };
      if (n <= kMaxQuadraticGreedy) {
        for (int mode = 0; mode < 6; ++mode) consider(greedy(ops, out, c, mode));
      }
      for (double alpha : {1.0, 0.5, 0.0}) consider(fast_greedy(net, alpha));
      path = best.path;
      if (options.strategy != EinsumStrategy::Greedy) {
        SearchSettings settings;
        settings.work = options.search_work.value_or(kDefaultSearchWork);
        settings.budget_ms = options.budget_ms;
        settings.start = t0;
        settings.seed = options.seed;
        if (limit) settings.size_cap = std::log2(*limit);
        const SearchResult r = anneal_search(net, path, settings);
        path = r.path;
        cut_short = r.cut_short;
        search_work = r.work;
      }
    }
  }
  EinsumPlan plan = cost_of(ops, out, c, path, op);
  plan.search_cut_short = cut_short;
  plan.search_work = search_work;
  plan.sliced_flops = plan.flops;
  plan.sliced_largest_intermediate = plan.largest_intermediate;
  if (limit && plan.largest_intermediate > *limit) {
    const Network net = network();
    const SliceChoice sc = choose_slices(net, plan.path, *limit, op, soft_limit);
    plan.sliced_labels = sc.labels;
    plan.slices = sc.slices;
    plan.sliced_flops = sc.flops;
    plan.sliced_largest_intermediate = sc.largest;
  }
  plan.search_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return plan;
}

}  // namespace tenferro::einsum_detail

namespace tenferro {

EinsumPlan plan_contraction(const std::vector<std::vector<std::int64_t>>& operands,
                            const std::vector<std::int64_t>& output,
                            const std::vector<double>& extents, const EinsumOptions& options) {
  return einsum_detail::plan_dense(operands, output, extents, options, "plan_contraction");
}

}  // namespace tenferro
