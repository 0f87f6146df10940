#pragma once
// The contraction-tree search for large networks (src/einsum/optimize.cpp):
// a randomised greedy and simulated annealing over contraction trees, and the
// tree <-> shrinking-list path conversions the planner and slicing share.
// Private to src/einsum/.

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "tenferro/einsum/einsum.hpp"

namespace tenferro::einsum_detail {

/// A network for the search: per operand its dense labels (distinct), the
/// output labels, the extent of every dense label.
struct Network {
  std::vector<std::vector<std::int64_t>> operands;
  std::vector<std::int64_t> output;
  std::vector<double> extents;
};

/// A binary contraction tree: leaves 0..n-1 are the operands, internal node
/// n + s is the s-th contraction; children[s] = {left, right} of node n + s.
/// The root is `root` (2n - 2 when built from a path).
struct ContractionTree {
  std::size_t leaves = 0;
  std::size_t root = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> children;
};

ContractionTree tree_of_path(std::size_t leaves, const EinsumPath& path);
EinsumPath path_of_tree(const ContractionTree& tree);

/// What the search does (see EinsumOptions).
struct SearchSettings {
  /// Work units the search may spend (deterministic; see SearchBudget in
  /// optimize.cpp).
  double work = 0;
  /// Optional wall-clock cap in milliseconds (nullopt: none), counted from
  /// `start` (when planning began).
  std::optional<double> budget_ms;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::uint64_t seed = 0;          // same seed, same tree (unless a wall cap cut the search)
  std::optional<double> size_cap;  // log2 elements: intermediates above it are penalised
};

/// The best tree found: the randomised greedy seeded by `start` (a path
/// that is never beaten by a worse result), then annealing. `cut_short`
/// tells whether the budget stopped the annealing before its schedule ended.
struct SearchResult {
  EinsumPath path;
  bool cut_short = false;
  double work = 0;  // units spent
};
SearchResult anneal_search(const Network& net, const EinsumPath& start,
                           const SearchSettings& settings);

/// A fast greedy (candidate pairs share a label; score: result size less
/// alpha times the operands' sizes). Used for the Greedy strategy and as
/// the annealing's starts.
EinsumPath fast_greedy(const Network& net, double alpha);

}  // namespace tenferro::einsum_detail

namespace tenferro::einsum_detail {

/// Labels to slice so that every pairwise result of `path` has at most
/// `limit` elements (src/einsum/slicing.cpp). Only labels summed by the
/// network (absent from the output) are sliced, so the slices' results add
/// up to the whole. `flops` counts all slices and the additions.
struct SliceChoice {
  std::vector<std::int64_t> labels;
  double slices = 1, flops = 0, largest = 0;
};
/// InvalidArgument (naming `op`) when slicing summed labels cannot reach the limit.
/// `soft`: a limit slicing cannot reach gives the best reachable slicing
/// instead of InvalidArgument.
SliceChoice choose_slices(const Network& net, const EinsumPath& path, double limit, const char* op,
                          bool soft = false);

}  // namespace tenferro::einsum_detail
