// Contraction-tree search for large networks: a randomised greedy (pairs that
// share a label, scored by the result's size less alpha times the operands')
// and simulated annealing over binary contraction trees with local rotations
// (the moves of TreeSA, Kalachev et al. 2021): a rotation changes one inner
// node's leaf set, so its cost change is local. Costs follow the planner's
// model: per step the product of the extents of its labels, times 2 when it
// sums a label away.

#include "einsum/optimize.hpp"
#include <optional>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <tuple>

namespace tenferro::einsum_detail {
namespace {

using Word = std::uint64_t;

// Uniform draws that are the same on every standard library.
struct Rng {
  std::mt19937_64 engine;
  explicit Rng(std::uint64_t seed) : engine(seed) {}
  double uniform() { return static_cast<double>(engine() >> 11) * 0x1.0p-53; }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(engine() % n); }
};

// Label-set arithmetic of one network. A label held by three or more
// operands and not in the output (a hyperedge) is summed once every holder
// is inside a subtree, so subtrees carry counts of those; any other label is
// summed when both of its holders meet.
struct Algebra {
  std::size_t n = 0, words = 0, hypers = 0;
  std::vector<Word> out, hyper;
  std::vector<std::int32_t> hyper_index;  // per label, -1 if none
  std::vector<std::uint16_t> hyper_total;
  std::vector<double> lg;  // log2 extents
  std::vector<Word> leaf;  // n * words
  std::vector<std::uint16_t> leaf_count;

  explicit Algebra(const Network& net)
      : n(net.operands.size()), words((net.extents.size() + 63) / 64 + 1) {
    const std::size_t labels = net.extents.size();
    out.assign(words, 0);
    hyper.assign(words, 0);
    for (std::int64_t l : net.output) out[static_cast<std::size_t>(l) / 64] |= bit(l);
    std::vector<int> holders(labels, 0);
    for (const auto& o : net.operands) {
      for (std::int64_t l : o) ++holders[static_cast<std::size_t>(l)];
    }
    hyper_index.assign(labels, -1);
    for (std::size_t l = 0; l < labels; ++l) {
      if (holders[l] >= 3 && !has(out.data(), static_cast<std::int64_t>(l))) {
        hyper_index[l] = static_cast<std::int32_t>(hypers++);
        hyper_total.push_back(static_cast<std::uint16_t>(holders[l]));
        hyper[l / 64] |= bit(static_cast<std::int64_t>(l));
      }
    }
    for (double e : net.extents) lg.push_back(std::log2(std::max(e, 1.0)));
    leaf.assign(n * words, 0);
    leaf_count.assign(n * hypers, 0);
    for (std::size_t k = 0; k < n; ++k) {
      for (std::int64_t l : net.operands[k]) {
        leaf[k * words + static_cast<std::size_t>(l) / 64] |= bit(l);
        const std::int32_t h = hyper_index[static_cast<std::size_t>(l)];
        if (h >= 0) leaf_count[k * hypers + static_cast<std::size_t>(h)] = 1;
      }
    }
  }
  static Word bit(std::int64_t l) { return Word{1} << (l % 64); }
  static bool has(const Word* s, std::int64_t l) {
    return (s[static_cast<std::size_t>(l) / 64] >> (l % 64)) & 1;
  }
  double log_size(const Word* s) const {
    double x = 0;
    for (std::size_t w = 0; w < words; ++w) {
      for (Word b = s[w]; b != 0; b &= b - 1) {
        x += lg[w * 64 + static_cast<std::size_t>(std::countr_zero(b))];
      }
    }
    return x;
  }
  // The result r of contracting subtrees a and b; returns the step's flops
  // and sets the log2 size of r.
  double combine(const Word* a, const Word* b, const std::uint16_t* ca, const std::uint16_t* cb,
                 Word* r, std::uint16_t* cr, double& log_r) const {
    double log_u = 0;
    bool sums = false;
    log_r = 0;
    for (std::size_t h = 0; h < hypers; ++h) cr[h] = static_cast<std::uint16_t>(ca[h] + cb[h]);
    for (std::size_t w = 0; w < words; ++w) {
      const Word u = a[w] | b[w];
      Word keep = ((a[w] ^ b[w]) & ~hyper[w]) | (u & out[w]);
      for (Word hb = u & hyper[w]; hb != 0; hb &= hb - 1) {
        const std::size_t l = w * 64 + static_cast<std::size_t>(std::countr_zero(hb));
        const auto h = static_cast<std::size_t>(hyper_index[l]);
        if (cr[h] < hyper_total[h]) keep |= hb & (~hb + 1);
      }
      r[w] = keep;
      sums = sums || keep != u;
      for (Word x = u; x != 0; x &= x - 1) {
        const double e = lg[w * 64 + static_cast<std::size_t>(std::countr_zero(x))];
        log_u += e;
        if ((keep >> std::countr_zero(x)) & 1) log_r += e;
      }
    }
    return std::exp2(log_u) * (sums ? 2.0 : 1.0);
  }
};

// The annealing state: parent/child links and per node its result labels,
// hyperedge counts, log2 size and step flops.
struct Tree {
  const Algebra* alg = nullptr;
  std::int32_t root = -1;
  std::vector<std::int32_t> left, right, parent;
  std::vector<Word> lab;
  std::vector<std::uint16_t> cnt;
  std::vector<double> log_size, flops;

  Tree(const Algebra& a, const ContractionTree& t) : alg(&a) {
    const std::size_t n = a.n, nodes = 2 * n - 1;
    left.assign(nodes, -1), right.assign(nodes, -1), parent.assign(nodes, -1);
    lab.assign(nodes * a.words, 0), cnt.assign(nodes * a.hypers, 0);
    log_size.assign(nodes, 0), flops.assign(nodes, 0);
    std::copy(a.leaf.begin(), a.leaf.end(), lab.begin());
    std::copy(a.leaf_count.begin(), a.leaf_count.end(), cnt.begin());
    for (std::size_t k = 0; k < n; ++k) log_size[k] = a.log_size(&lab[k * a.words]);
    for (std::size_t s = 0; s + 1 < n; ++s) {
      const auto p = static_cast<std::int32_t>(n + s);
      left[n + s] = static_cast<std::int32_t>(t.children[s].first);
      right[n + s] = static_cast<std::int32_t>(t.children[s].second);
      parent[static_cast<std::size_t>(left[n + s])] = p;
      parent[static_cast<std::size_t>(right[n + s])] = p;
    }
    root = static_cast<std::int32_t>(t.root);
    // Children before parents: a post order.
    std::vector<std::int32_t> order;
    post_order(root, order);
    for (std::int32_t p : order) update(p);
  }
  void post_order(std::int32_t v, std::vector<std::int32_t>& order) const {
    if (left[static_cast<std::size_t>(v)] < 0) return;
    post_order(left[static_cast<std::size_t>(v)], order);
    post_order(right[static_cast<std::size_t>(v)], order);
    order.push_back(v);
  }
  void update(std::int32_t p) {
    const auto P = static_cast<std::size_t>(p);
    const auto a = static_cast<std::size_t>(left[P]), b = static_cast<std::size_t>(right[P]);
    const std::size_t W = alg->words, H = alg->hypers;
    flops[P] = alg->combine(&lab[a * W], &lab[b * W], cnt.data() + a * H, cnt.data() + b * H,
                            &lab[P * W], cnt.data() + P * H, log_size[P]);
  }
  double total() const {
    double t = 0;
    for (std::size_t v = alg->n; v < flops.size(); ++v) t += flops[v];
    return t;
  }
  double largest() const {
    double m = 0;
    for (std::size_t v = alg->n; v < flops.size(); ++v) m = std::max(m, log_size[v]);
    return m;
  }
  ContractionTree shape() const {
    ContractionTree t;
    t.leaves = alg->n;
    t.root = static_cast<std::size_t>(root);
    for (std::size_t v = alg->n; v < left.size(); ++v) t.children.emplace_back(left[v], right[v]);
    return t;
  }
};

// What the search may spend: work units, counted the same way on every
// machine under any load (so the same inputs and seed give the same tree),
// and optionally a wall-clock cap. Units follow the search's inner loops:
// combining two label sets costs c = 8 + words + hyperedges / 16 units (a
// fixed part, the words of the sets, the hyperedge counters it may touch),
// an annealing move 2.5 c, a greedy candidate pair 4 (c + 2) (scoring it
// and the heap), scoring a tree n c, a subtree reconfiguration over an
// m-subtree frontier (3^m + 1) / 2 c, and a variable-elimination round one
// unit per label, per holder and per word of each live holder. Measured on
// this machine a unit takes 1-3 ns (docs/einsum.md, "Search budget").
class SearchBudget {
 public:
  SearchBudget(double work, std::optional<double> wall_ms, std::chrono::steady_clock::time_point t0,
               double combine)
      : combine(combine), work_(work) {
    // An infinite or huge cap (past 1e12 ms, about 31 years) is no cap;
    // converting it to microseconds would overflow.
    if (wall_ms && *wall_ms < 1e12) {
      deadline_ = t0 + std::chrono::microseconds(static_cast<std::int64_t>(*wall_ms * 1e3));
      timed_ = true;
    }
  }
  /// Spends `units`; false once the work or the time is used up (and from
  /// then on).
  bool spend(double units) {
    used_ += units;
    return ok();
  }
  bool ok() {
    if (exhausted_) return false;
    if (used_ > work_ || (timed_ && std::chrono::steady_clock::now() > deadline_))
      exhausted_ = true;
    return !exhausted_;
  }
  /// Whether the time is not up and at most `fraction` of the work is
  /// spent: a phase's share of the budget.
  bool within(double fraction) { return ok() && used_ <= fraction * work_; }
  /// Units left before `fraction` of the work is spent (0 when past it).
  double left_until(double fraction) const { return std::max(0.0, fraction * work_ - used_); }
  /// Whether a wall-clock cap has passed (never without one): read inside
  /// long loops whose work was spent up front, so a cap ends them promptly.
  bool time_up() {
    if (timed_ && !exhausted_ && std::chrono::steady_clock::now() > deadline_) exhausted_ = true;
    return timed_ && exhausted_;
  }
  bool exhausted() const { return exhausted_; }
  double used() const { return used_; }
  /// Units of one combine of two label sets.
  const double combine;

 private:
  double work_;
  double used_ = 0;
  std::chrono::steady_clock::time_point deadline_{};
  bool timed_ = false;
  bool exhausted_ = false;
};

// Subtree reconfiguration: below each inner node, the frontier of up to k
// subtrees (expanding the largest first) is re-contracted by exact dynamic
// programming over its subsets when that is cheaper. Returns whether the
// tree improved; stops when the budget is spent.
bool reconfigure(Tree& t, std::size_t k, SearchBudget& budget, double share, Rng* rng) {
  const Algebra& alg = *t.alg;
  const std::size_t n = alg.n, W = alg.words, H = alg.hypers;
  const auto inner_node = [&](std::int32_t v) { return v >= static_cast<std::int32_t>(n); };
  std::vector<std::int32_t> order;
  t.post_order(t.root, order);
  std::vector<Word> lab((std::size_t{1} << k) * W), scratch(W);
  std::vector<std::uint16_t> cnt((std::size_t{1} << k) * H), scratch_cnt(H);
  std::vector<double> best(std::size_t{1} << k);
  std::vector<std::uint32_t> split(std::size_t{1} << k);
  bool improved = false;
  for (std::int32_t v : order) {
    if (!budget.within(share)) break;
    const auto V = static_cast<std::size_t>(v);
    std::vector<std::int32_t> frontier{t.left[V], t.right[V]}, inner{v};
    while (frontier.size() < k) {
      // The largest inner subtree, or (rng set) a random one.
      std::size_t pick = frontier.size(), seen = 0;
      for (std::size_t i = 0; i < frontier.size(); ++i) {
        if (!inner_node(frontier[i])) continue;
        ++seen;
        const auto F = static_cast<std::size_t>(frontier[i]);
        const bool take =
            rng != nullptr
                ? rng->below(seen) == 0
                : pick == frontier.size() ||
                      t.log_size[F] > t.log_size[static_cast<std::size_t>(frontier[pick])];
        if (take) pick = i;
      }
      if (pick == frontier.size()) break;
      const std::int32_t x = frontier[pick];
      frontier.erase(frontier.begin() + static_cast<std::ptrdiff_t>(pick));
      frontier.push_back(t.left[static_cast<std::size_t>(x)]);
      frontier.push_back(t.right[static_cast<std::size_t>(x)]);
      inner.push_back(x);
    }
    const std::size_t m = frontier.size();
    if (m < 3) continue;
    budget.spend((std::pow(3.0, static_cast<double>(m)) + 1) / 2 * budget.combine);
    double current = 0;
    for (std::int32_t x : inner) current += t.flops[static_cast<std::size_t>(x)];
    const std::uint32_t full = (std::uint32_t{1} << m) - 1;
    for (std::size_t i = 0; i < m; ++i) {
      const auto F = static_cast<std::size_t>(frontier[i]);
      std::copy_n(&t.lab[F * W], W, &lab[(std::size_t{1} << i) * W]);
      std::copy_n(t.cnt.data() + F * H, H, cnt.data() + (std::size_t{1} << i) * H);
    }
    double log_r = 0;
    for (std::uint32_t sset = 1; sset <= full; ++sset) {
      best[sset] = 0;
      if (std::popcount(sset) == 1) continue;
      const std::uint32_t low = sset & (~sset + 1), rest = sset ^ low;
      alg.combine(&lab[low * W], &lab[rest * W], cnt.data() + low * H, cnt.data() + rest * H,
                  &lab[sset * W], cnt.data() + sset * H, log_r);
      double b = std::numeric_limits<double>::infinity();
      for (std::uint32_t sub = rest;; sub = (sub - 1) & rest) {
        const std::uint32_t s1 = sub | low, s2 = sset ^ s1;
        if (s2 != 0) {
          const double f =
              best[s1] + best[s2] +
              alg.combine(&lab[s1 * W], &lab[s2 * W], cnt.data() + s1 * H, cnt.data() + s2 * H,
                          scratch.data(), scratch_cnt.data(), log_r);
          if (f < b) b = f, split[sset] = s1;
        }
        if (sub == 0) break;
      }
      best[sset] = b;
    }
    if (!(best[full] < current * (1 - 1e-12))) continue;
    improved = true;
    std::vector<std::int32_t> pool(inner.begin() + 1, inner.end());
    auto build = [&](auto&& self, std::uint32_t sset) -> std::int32_t {
      if (std::popcount(sset) == 1)
        return frontier[static_cast<std::size_t>(std::countr_zero(sset))];
      std::int32_t id = v;
      if (sset != full) id = pool.back(), pool.pop_back();
      const std::int32_t l = self(self, split[sset]), r = self(self, sset ^ split[sset]);
      const auto I = static_cast<std::size_t>(id);
      t.left[I] = l, t.right[I] = r;
      t.parent[static_cast<std::size_t>(l)] = id, t.parent[static_cast<std::size_t>(r)] = id;
      t.update(id);
      return id;
    };
    build(build, full);
  }
  return improved;
}

// The same unrooted tree rooted on the edge above node u: the nodes on the
// path from u to the root are re-hung (each keeps its id, the old root
// becomes the new root). For a chain this moves the point where two
// zippers meet, which local moves reach only through worse trees.
ContractionTree rerooted(const ContractionTree& t, const std::vector<std::int64_t>& parent,
                         std::int64_t u) {
  ContractionTree r = t;
  const std::size_t n = t.leaves;
  const auto root = static_cast<std::int64_t>(t.root);
  auto kids = [&](std::int64_t v) -> std::pair<std::int64_t, std::int64_t>& {
    return r.children[static_cast<std::size_t>(v) - n];
  };
  auto other = [&](std::int64_t p, std::int64_t c) {
    const auto& k = t.children[static_cast<std::size_t>(p) - n];
    return k.first == c ? k.second : k.first;
  };
  // Everything but the subtree of `from`, hanging below p.
  auto rehang = [&](auto&& self, std::int64_t p, std::int64_t from) -> std::int64_t {
    if (p == root) return other(p, from);
    const std::int64_t up = self(self, parent[static_cast<std::size_t>(p)], p);
    kids(p) = {other(p, from), up};
    return p;
  };
  const std::int64_t p = parent[static_cast<std::size_t>(u)];
  if (p < 0 || p == root) return r;
  kids(root) = {u, rehang(rehang, p, u)};
  return r;
}

double cost_of_tree(const Algebra& alg, const ContractionTree& t, double* largest = nullptr) {
  const Tree tree(alg, t);
  if (largest != nullptr) *largest = tree.largest();
  return tree.total();
}

// One annealing run from `start`: returns the best tree seen.
struct Annealer {
  const Algebra& alg;
  const SearchSettings& settings;
  SearchBudget& budget;
  bool cut_short = false;

  // `units`: this run's share of the budget; a share too small for the
  // schedule gets fewer moves per temperature, not fewer temperatures.
  ContractionTree run(const ContractionTree& start, std::uint64_t seed, int runs, double units) {
    Tree t(alg, start);
    Rng rng(seed);
    const std::size_t n = alg.n, W = alg.words, H = alg.hypers;
    std::vector<Word> rx(W), rp(W);
    std::vector<std::uint16_t> cx(H), cp(H);
    ContractionTree best = start;
    double best_cost = t.total();
    double total = best_cost;
    const double cap = settings.size_cap.value_or(std::numeric_limits<double>::infinity());
    double best_over = std::max(0.0, t.largest() - cap);
    auto excess = [&](double log_size) { return std::max(0.0, log_size - cap); };
    // Inverse temperatures in log2-flop units, a geometric ramp.
    // (200 n^2 moves per search, at most 3e6: about 0.3-1 s for 100-400 operands.)
    constexpr int kSteps = 60;
    constexpr double kBeta0 = 0.5, kBeta1 = 40.0;
    const double kMoves = std::min(3e6, 200.0 * double(n) * double(n));
    const double move_units = 2.5 * budget.combine;
    const std::size_t scheduled =
        std::max<std::size_t>(8 * (n - 1), static_cast<std::size_t>(kMoves / kSteps / runs));
    // (An infinite budget fits the schedule: no conversion of infinity.)
    const double fit = units / kSteps / move_units;
    const std::size_t moves =
        fit >= static_cast<double>(scheduled) ? scheduled : static_cast<std::size_t>(fit);
    cut_short = cut_short || moves < scheduled;
    if (moves == 0) return best;
    for (int step = 0; step < kSteps; ++step) {
      if (!budget.spend(static_cast<double>(moves) * move_units)) {
        cut_short = true;
        break;
      }
      const double beta = kBeta0 * std::pow(kBeta1 / kBeta0, step / double(kSteps - 1));
      bool stopped = false;
      for (std::size_t m = 0; m < moves; ++m) {
        // A wall-clock cap is read every 256 moves (about 5-20 us of work).
        if ((m & 255) == 255 && budget.time_up()) {
          stopped = cut_short = true;
          break;
        }
        const auto p = static_cast<std::int32_t>(n + rng.below(n - 1));
        const auto P = static_cast<std::size_t>(p);
        const bool li = t.left[P] >= static_cast<std::int32_t>(n);
        const bool ri = t.right[P] >= static_cast<std::int32_t>(n);
        if (!li && !ri) continue;
        // x: an inner child (x = (c, d)); y: p's other child. Rotation
        // `which` swaps y with c or d: x' = (y, kept), p = (x', moved).
        const bool side = li && ri ? rng.below(2) == 1 : ri;
        const std::size_t which = rng.below(2);
        const std::int32_t x = side ? t.right[P] : t.left[P], y = side ? t.left[P] : t.right[P];
        const auto X = static_cast<std::size_t>(x);
        const std::int32_t moved = which == 0 ? t.left[X] : t.right[X];
        const std::int32_t kept = which == 0 ? t.right[X] : t.left[X];
        const auto Y = static_cast<std::size_t>(y), K = static_cast<std::size_t>(kept),
                   M = static_cast<std::size_t>(moved);
        double log_x = 0, log_p = 0;
        const double fx = alg.combine(&t.lab[Y * W], &t.lab[K * W], t.cnt.data() + Y * H,
                                      t.cnt.data() + K * H, rx.data(), cx.data(), log_x);
        const double fp = alg.combine(rx.data(), &t.lab[M * W], cx.data(), t.cnt.data() + M * H,
                                      rp.data(), cp.data(), log_p);
        const double before = t.flops[X] + t.flops[P], after = fx + fp;
        const double de = std::log2(after / before) + (excess(log_x) - excess(t.log_size[X])) * 2.0;
        if (de > 0 && rng.uniform() >= std::exp2(-beta * de)) continue;
        t.left[X] = y, t.right[X] = kept;
        t.parent[Y] = x, t.parent[K] = x;
        t.left[P] = x, t.right[P] = moved;
        t.parent[M] = p;
        std::copy(rx.begin(), rx.end(), t.lab.begin() + static_cast<std::ptrdiff_t>(X * W));
        std::copy(cx.begin(), cx.end(), t.cnt.begin() + static_cast<std::ptrdiff_t>(X * H));
        t.log_size[X] = log_x, t.flops[X] = fx, t.flops[P] = fp;
        total += after - before;
      }
      total = t.total();  // no drift
      const double over = std::max(0.0, t.largest() - cap);
      if (over < best_over || (over == best_over && total < best_cost * (1 - 1e-12))) {
        best = t.shape();
        best_cost = total, best_over = over;
      }
      if (stopped) break;
    }
    return best;
  }
};

// A tree under construction: the live intermediates, how many of them hold
// each label, and the contractions so far.
struct Builder {
  const Algebra& alg;
  std::size_t n, W, nodes, next;
  std::vector<Word> bits;
  std::vector<double> log_size;
  std::vector<char> alive;
  std::vector<int> count;
  std::vector<std::vector<std::int32_t>> holders;
  ContractionTree tree;

  Builder(const Algebra& a, const Network& net)
      : alg(a), n(a.n), W(a.words), nodes(2 * a.n - 1), next(a.n) {
    const std::size_t labels = net.extents.size();
    bits.assign(nodes * W, 0);
    std::copy(alg.leaf.begin(), alg.leaf.end(), bits.begin());
    log_size.assign(nodes, 0), alive.assign(nodes, 0), count.assign(labels, 0);
    holders.resize(labels);
    for (std::size_t k = 0; k < n; ++k) {
      alive[k] = 1;
      log_size[k] = alg.log_size(&bits[k * W]);
      for (std::int64_t l : net.operands[k]) {
        ++count[static_cast<std::size_t>(l)];
        holders[static_cast<std::size_t>(l)].push_back(static_cast<std::int32_t>(k));
      }
    }
    tree.leaves = n;
    tree.root = nodes - 1;
  }
  bool done() const { return next == nodes; }
  // The labels of a (x) b given the live holders; returns its log2 size.
  double result(std::size_t a, std::size_t b, Word* out) const {
    double lr = 0;
    for (std::size_t w = 0; w < W; ++w) {
      const Word u = bits[a * W + w] | bits[b * W + w];
      Word keep = u & alg.out[w];
      for (Word x = u & ~alg.out[w]; x != 0; x &= x - 1) {
        const auto z = std::countr_zero(x);
        const std::size_t l = w * 64 + static_cast<std::size_t>(z);
        const int inside = static_cast<int>((bits[a * W + w] >> z) & 1) +
                           static_cast<int>((bits[b * W + w] >> z) & 1);
        if (count[l] > inside) keep |= x & (~x + 1);
      }
      out[w] = keep;
      for (Word x = keep; x != 0; x &= x - 1) lr += alg.lg[w * 64 + std::countr_zero(x)];
    }
    return lr;
  }
  std::size_t contract(std::size_t a, std::size_t b) {
    const std::size_t c = next++;
    log_size[c] = result(a, b, &bits[c * W]);
    for (std::size_t w = 0; w < W; ++w) {
      for (Word x = bits[a * W + w] | bits[b * W + w]; x != 0; x &= x - 1) {
        const auto z = std::countr_zero(x);
        const std::size_t l = w * 64 + static_cast<std::size_t>(z);
        count[l] -= static_cast<int>((bits[a * W + w] >> z) & 1) +
                    static_cast<int>((bits[b * W + w] >> z) & 1);
        if ((bits[c * W + w] >> z) & 1) {
          ++count[l];
          holders[l].push_back(static_cast<std::int32_t>(c));
        }
      }
    }
    alive[a] = alive[b] = 0, alive[c] = 1;
    tree.children.emplace_back(a, b);
    return c;
  }
  // The two smallest live intermediates (an outer product when nothing is shared).
  std::pair<std::size_t, std::size_t> smallest_pair() const {
    std::size_t a = nodes, b = nodes;
    for (std::size_t v = 0; v < next; ++v) {
      if (!alive[v]) continue;
      if (a == nodes || log_size[v] < log_size[a]) {
        b = a, a = v;
      } else if (b == nodes || log_size[v] < log_size[b]) {
        b = v;
      }
    }
    return {a, b};
  }
};

double gumbel(Rng& rng) {
  return -std::log(-std::log(std::max(rng.uniform(), 1e-300)));
}

// The pairwise greedy: key = result size - alpha * (operand sizes), plus
// Gumbel noise of scale `temperature` on a log scale when rng is set.
// `pairs`, when set, counts the candidate pairs scored (the search's work).
// `clock`, when set, is read every 32 contractions: nothing is returned
// once its wall-clock cap has passed.
std::optional<ContractionTree> greedy_tree(const Algebra& alg, const Network& net, double alpha,
                                           double temperature, Rng* rng, double* pairs = nullptr,
                                           SearchBudget* clock = nullptr) {
  Builder t(alg, net);
  std::vector<Word> r(t.W);
  struct Candidate {
    double key;
    std::int32_t a, b;
    bool operator>(const Candidate& o) const {
      return key != o.key ? key > o.key : a != o.a ? a > o.a : b > o.b;
    }
  };
  std::vector<Candidate> heap;
  auto push = [&](std::size_t a, std::size_t b) {
    if (pairs != nullptr) *pairs += 1;
    const double lr = t.result(a, b, r.data());
    double key = std::exp2(lr) - alpha * (std::exp2(t.log_size[a]) + std::exp2(t.log_size[b]));
    if (rng != nullptr && temperature > 0) {
      key = std::copysign(std::log1p(std::fabs(key)), key) - temperature * gumbel(*rng);
    }
    heap.push_back({key, static_cast<std::int32_t>(std::min(a, b)),
                    static_cast<std::int32_t>(std::max(a, b))});
    std::push_heap(heap.begin(), heap.end(), std::greater<>{});
  };
  // Pairs of c with the live intermediates sharing a label, each once.
  std::vector<std::size_t> stamp(t.nodes, t.nodes);
  auto push_neighbours = [&](std::size_t c, bool higher_only) {
    for (std::size_t w = 0; w < t.W; ++w) {
      for (Word x = t.bits[c * t.W + w]; x != 0; x &= x - 1) {
        const std::size_t l = w * 64 + static_cast<std::size_t>(std::countr_zero(x));
        for (std::int32_t h : t.holders[l]) {
          const auto H = static_cast<std::size_t>(h);
          if (H == c || !t.alive[H] || stamp[H] == c || (higher_only && H < c)) continue;
          stamp[H] = c;
          push(c, H);
        }
      }
    }
  };
  for (std::size_t k = 0; k < t.n; ++k) push_neighbours(k, true);
  while (!t.done()) {
    if (clock != nullptr && (t.next & 31) == 0 && clock->time_up()) return std::nullopt;
    std::size_t a = t.nodes, b = t.nodes;
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end(), std::greater<>{});
      const Candidate top = heap.back();
      heap.pop_back();
      if (t.alive[static_cast<std::size_t>(top.a)] && t.alive[static_cast<std::size_t>(top.b)]) {
        a = static_cast<std::size_t>(top.a), b = static_cast<std::size_t>(top.b);
        break;
      }
    }
    if (a == t.nodes) std::tie(a, b) = t.smallest_pair();
    push_neighbours(t.contract(a, b), false);
  }
  return t.tree;
}

// Variable elimination (the graphical-model view, good on hyperedges): sum
// away next the label whose holders' combined result is smallest (plus
// Gumbel noise when rng is set), contracting its holders smallest first.
// Each elimination scans every label (quadratic in the labels): when the
// budget is spent it gives up and returns nothing, so that the budget bounds it.
std::optional<ContractionTree> elimination_tree(const Algebra& alg, const Network& net,
                                                double temperature, Rng* rng,
                                                SearchBudget& budget) {
  Builder t(alg, net);
  const std::size_t labels = net.extents.size();
  std::vector<char> eliminated(labels, 0);
  for (std::int64_t l : net.output) eliminated[static_cast<std::size_t>(l)] = 1;
  std::vector<Word> u(t.W);
  std::vector<std::size_t> live;
  auto live_holders = [&](std::size_t l) {
    live.clear();
    for (std::int32_t h : t.holders[l]) {
      if (t.alive[static_cast<std::size_t>(h)]) live.push_back(static_cast<std::size_t>(h));
    }
  };
  while (!t.done()) {
    if (!budget.ok()) return std::nullopt;
    std::size_t best = labels;
    double best_key = 0;
    double work = static_cast<double>(labels);
    for (std::size_t l = 0; l < labels; ++l) {
      if (eliminated[l] || t.count[l] == 0) continue;
      live_holders(l);
      work += static_cast<double>(t.holders[l].size() + live.size() * t.W);
      std::fill(u.begin(), u.end(), 0);
      for (std::size_t h : live) {
        for (std::size_t w = 0; w < t.W; ++w) u[w] |= t.bits[h * t.W + w];
      }
      u[l / 64] &= ~Algebra::bit(static_cast<std::int64_t>(l));
      double key = alg.log_size(u.data());
      if (rng != nullptr && temperature > 0) key -= temperature * gumbel(*rng);
      if (best == labels || key < best_key) best = l, best_key = key;
    }
    budget.spend(work);
    if (best == labels) {  // only output labels are left
      const auto [a, b] = t.smallest_pair();
      t.contract(a, b);
      continue;
    }
    eliminated[best] = 1;
    live_holders(best);
    while (live.size() > 1) {
      std::sort(live.begin(), live.end(), [&](std::size_t x, std::size_t y) {
        return t.log_size[x] != t.log_size[y] ? t.log_size[x] < t.log_size[y] : x < y;
      });
      const std::size_t c = t.contract(live[0], live[1]);
      live.erase(live.begin(), live.begin() + 2);
      live.push_back(c);
    }
  }
  return t.tree;
}

}  // namespace

ContractionTree tree_of_path(std::size_t leaves, const EinsumPath& path) {
  ContractionTree t;
  t.leaves = leaves;
  std::vector<std::int64_t> list(leaves);
  for (std::size_t k = 0; k < leaves; ++k) list[k] = static_cast<std::int64_t>(k);
  for (const auto& [i0, j0] : path) {
    const auto i = static_cast<std::size_t>(std::min(i0, j0)),
               j = static_cast<std::size_t>(std::max(i0, j0));
    t.children.emplace_back(list[i], list[j]);
    list.erase(list.begin() + static_cast<std::ptrdiff_t>(j));
    list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
    list.push_back(static_cast<std::int64_t>(leaves + t.children.size() - 1));
  }
  t.root = leaves == 0 ? 0 : 2 * leaves - 2;
  return t;
}

EinsumPath path_of_tree(const ContractionTree& tree) {
  const std::size_t n = tree.leaves;
  EinsumPath path;
  if (n < 2) return path;
  std::vector<std::int64_t> list(n);
  for (std::size_t k = 0; k < n; ++k) list[k] = static_cast<std::int64_t>(k);
  auto pos = [&](std::int64_t v) {
    return static_cast<std::int64_t>(std::find(list.begin(), list.end(), v) - list.begin());
  };
  auto emit = [&](auto&& self, std::int64_t v) -> void {
    if (v < static_cast<std::int64_t>(n)) return;
    const auto [a, b] = tree.children[static_cast<std::size_t>(v) - n];
    self(self, a);
    self(self, b);
    const std::int64_t i = std::min(pos(a), pos(b)), j = std::max(pos(a), pos(b));
    list.erase(list.begin() + j);
    list.erase(list.begin() + i);
    list.push_back(v);
    path.emplace_back(i, j);
  };
  emit(emit, static_cast<std::int64_t>(tree.root));
  return path;
}

EinsumPath fast_greedy(const Network& net, double alpha) {
  const Algebra alg(net);
  return path_of_tree(*greedy_tree(alg, net, alpha, 0, nullptr));
}

SearchResult anneal_search(const Network& net, const EinsumPath& start,
                           const SearchSettings& settings) {
  const Algebra alg(net);
  const std::size_t n = alg.n;
  SearchResult out;
  if (n < 3) {
    out.path = start;
    return out;
  }
  const double cap = settings.size_cap.value_or(std::numeric_limits<double>::infinity());
  // Lexicographic: within the cap first, then flops.
  auto score = [&](const ContractionTree& t) {
    double largest = 0;
    const double f = cost_of_tree(alg, t, &largest);
    return std::pair<double, double>{std::max(0.0, largest - cap), f};
  };
  ContractionTree best = tree_of_path(n, start);
  auto best_score = score(best);
  Rng rng(settings.seed * 0x9E3779B97F4A7C15ULL + 1);
  SearchBudget budget(settings.work, settings.budget_ms, settings.start,
                      8.0 + double(alg.words) + double(alg.hypers) / 16.0);
  auto consider = [&](const ContractionTree& t) {
    budget.spend(double(n) * budget.combine);
    const auto s = score(t);
    if (s.first < best_score.first ||
        (s.first == best_score.first && s.second < best_score.second * (1 - 1e-12))) {
      best = t, best_score = s;
    }
  };

  // A greedy construction's work: its candidate pairs.
  auto greedy = [&](double alpha, double temperature, Rng* r) {
    double pairs = 0;
    auto t = greedy_tree(alg, net, alpha, temperature, r, &pairs, &budget);
    budget.spend(pairs * 4 * (budget.combine + 2));
    if (t) consider(*t);
  };
  for (double alpha : {1.0, 0.5, 0.0}) greedy(alpha, 0, nullptr);
  if (auto t = elimination_tree(alg, net, 0, nullptr, budget)) consider(*t);
  // The phases' shares of the work budget (cumulative): the randomised
  // starts, the annealing (its moves per temperature shrink to fit), the
  // polish by subtree reconfiguration, then the re-rooting.
  constexpr double kTrialsShare = 0.25, kAnnealShare = 0.75, kPolishShare = 0.95;
  constexpr int kGreedyTrials = 32;
  for (int trial = 0; trial < kGreedyTrials; ++trial) {
    if (!budget.within(kTrialsShare)) {
      out.cut_short = true;
      break;
    }
    const double alpha = 2.0 * rng.uniform();
    const double temperature = std::pow(10.0, -2.0 + 2.0 * rng.uniform());
    greedy(alpha, temperature, &rng);
    if (auto t = elimination_tree(alg, net, temperature, &rng, budget)) consider(*t);
  }
  Annealer ann{alg, settings, budget};
  constexpr int kRuns = 2;
  const ContractionTree from = best;
  const double anneal_units = budget.left_until(kAnnealShare);
  for (int run = 0; run < kRuns && budget.ok(); ++run) {
    consider(ann.run(from, rng.engine(), kRuns, anneal_units / kRuns));
    out.cut_short = out.cut_short || ann.cut_short;
  }
  // Polish the best tree by subtree reconfiguration.
  Tree polished(alg, best);
  for (int pass = 0, idle = 0; pass < 16 && idle < 3 && budget.within(kPolishShare); ++pass) {
    const bool better =
        reconfigure(polished, 8, budget, kPolishShare, pass % 2 == 0 ? nullptr : &rng);
    idle = better ? 0 : idle + 1;
  }
  consider(polished.shape());
  // Every rooting of the best tree (a closed network's chain meets anywhere).
  const ContractionTree base = best;
  std::vector<std::int64_t> parent(2 * n - 1, -1);
  for (std::size_t s = 0; s + 1 < n; ++s) {
    parent[static_cast<std::size_t>(base.children[s].first)] = static_cast<std::int64_t>(n + s);
    parent[static_cast<std::size_t>(base.children[s].second)] = static_cast<std::int64_t>(n + s);
  }
  // (Quadratic in n: bounded by the budget like every other phase.)
  for (std::size_t u = 0; u + 1 < 2 * n; ++u) {
    if (!budget.ok()) {
      out.cut_short = true;
      break;
    }
    consider(rerooted(base, parent, static_cast<std::int64_t>(u)));
  }
  out.path = path_of_tree(best);
  out.cut_short = out.cut_short || budget.exhausted();
  out.work = budget.used();
  return out;
}

}  // namespace tenferro::einsum_detail
