#pragma once
// tenferro::einsum: Einstein summation over any number of operands, planned
// (contraction order) and composed of core ops (docs/einsum.md).
//
// Every function exists in three tiers with one meaning:
//   EagerTensor  c = einsum("ij,jk->ik", {a, b});        // runs now, records for AD
//   TracedTensor c = einsum("ij,jk->ik", {ta, tb});      // builds graph nodes
//   Tensor       c = einsum("ij,jk->ik", {a, b}, cpu);   // direct, on a backend
// Labels address OUR axes: label i of an operand names its axis i
// (column-major, batch axes last). AD (jvp, vjp, higher order) comes from the
// composed ops (diagonal, sum, dot_general, permute, diag_embed); a traced
// call with symbolic extents is one node that plans when they bind and
// carries einsum's own rules (docs/einsum.md).

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "tenferro/ad/eager.hpp"
#include "tenferro/ad/ops.hpp"
#include "tenferro/ad/traced.hpp"
#include "tenferro/backend/backend.hpp"
#include "tenferro/einsum/semiring.hpp"

namespace tenferro {

/// A contraction order in the shrinking-list format of NumPy / opt_einsum:
/// each step (i, j), i < j, removes operands i and j from the current list
/// and appends their contraction at its end. n operands need n - 1 steps.
using EinsumPath = std::vector<std::pair<std::int64_t, std::int64_t>>;

/// How einsum orders the pairwise contractions.
enum class EinsumStrategy {
  Auto,     ///< Optimal for up to 16 operands, Anneal beyond.
  Optimal,  ///< Dynamic programming over subsets (minimum flops, then size): exact up
            ///< to 16 operands; beyond, without outer products of connected parts.
  Greedy,   ///< The cheapest of several greedy runs (pair scores: result size less
            ///< its operands', step flops, result size; see docs/einsum.md).
  Anneal,   ///< Randomised greedy runs, then simulated annealing over contraction
            ///< trees within the work budget (`search_work`, and `budget_ms`
            ///< when set); never worse than Greedy.
};

/// Options of einsum and einsum_path.
struct EinsumOptions {
  EinsumStrategy strategy = EinsumStrategy::Auto;
  /// A user path (shrinking-list format); when set, `strategy` is ignored.
  /// A step out of range, with i == j, or a path that does not end with one
  /// operand is InvalidArgument.
  std::optional<EinsumPath> path = std::nullopt;
  /// Optional wall-clock cap of the randomised search in milliseconds. By
  /// default (nullopt) the search is bounded by counted work, not time: the
  /// same inputs and seed give the same path on any machine under any load
  /// (docs/einsum.md, "Search budget"). A cap, counted from the start of
  /// planning, makes the path depend on the machine's speed and load.
  /// Infinity or more than 1e12 ms: no cap.
  /// Negative or NaN: InvalidArgument.
  std::optional<double> budget_ms = std::nullopt;
  /// Work budget of the randomised search in units of counted work (tree
  /// scorings, candidate pairs, annealing moves; nullopt: 1e9, about 1-3 s
  /// on a 2-core machine, enough for every shipped instance to finish its
  /// schedule). Infinity: no limit. Not positive or NaN: InvalidArgument.
  std::optional<double> search_work = std::nullopt;
  /// Seed of the randomised search: the same seed gives the same path
  /// (unless a wall-clock cap cut it short, see EinsumPlan::search_cut_short).
  std::uint64_t seed = 0;
  /// Largest pairwise intermediate allowed, in bytes (nullopt: no limit). The
  /// search penalises larger intermediates, then labels are sliced until the
  /// largest fits (see EinsumPlan::sliced_labels); einsum then runs each slice
  /// and sums. Not positive, or unreachable by slicing summed labels:
  /// InvalidArgument.
  std::optional<double> memory_limit = std::nullopt;
  /// Bytes per element for memory_limit in einsum_path and plan_contraction
  /// (einsum uses its operands' dtype). Not positive: InvalidArgument.
  std::int64_t element_bytes = 8;
  /// The algebra of the contraction (docs/tropical.md): Standard (sum of
  /// products), MaxPlus / MinPlus (max / min of sums; f32, f64, i64) or
  /// OrAnd (or of ands; bool). The same planner, slicing and prepared plans
  /// serve every semiring. A tropical result's gradient routes the cotangent
  /// through the winning terms (ties: the first in the contraction's order),
  /// so the gradient of a network's value marks one optimal configuration.
  /// A dtype the semiring lacks is DTypeMismatch; a backend without the
  /// semiring kernels (any but the CPU backend) is Unsupported.
  Semiring semiring = Semiring::Standard;
};

namespace einsum_detail {
struct Program;
}  // namespace einsum_detail
struct EinsumLabels;

/// A planned contraction order and its cost; made by EinsumPlan::prepare it
/// is also a prepared plan (docs/einsum.md, "Prepared plans").
///
/// A prepared plan fixes the equation, the dtype, the operand shapes and the
/// options; it holds no operand values, so it is made once and run many
/// times with new values: parsing, checking and the order search happen in
/// prepare(), run() only contracts. Copies share the prepared program (cheap,
/// immutable, usable from several threads).
///   auto plan = EinsumPlan::prepare("ij,jk->ik", DType::F64, {{2, 3}, {3, 4}});
///   Tensor c = plan.run({a, b}, cpu);          // direct tier
///   EagerTensor d = plan.run({ea, eb});          // eager tier (AD when tracked)
/// The eager einsum() keeps such plans in its runtime's extension cache.
struct EinsumPlan {
  EinsumPath path;
  /// Flops of the pairwise contractions: for each step the product of the
  /// extents of every label of its two operands, times 2 when the step sums
  /// a label away (a multiply and an add) and 1 when it sums none (an outer or
  /// elementwise product).
  double flops = 0;
  /// Elements of the largest pairwise result (0 with fewer than two operands).
  double largest_intermediate = 0;
  /// Wall time of the search in milliseconds.
  double search_ms = 0;
  /// Whether the work budget or a wall-clock cap ended the search early.
  bool search_cut_short = false;
  /// Work units the randomised search spent (see EinsumOptions::search_work;
  /// 0 when it did not run).
  double search_work = 0;
  /// With a memory limit: the labels sliced (plan_contraction: dense labels;
  /// einsum_path: label ids, a letter's code point or an integer label),
  /// empty when the plan fits unsliced.
  std::vector<std::int64_t> sliced_labels;
  /// The number of slices (the product of the sliced labels' extents).
  double slices = 1;
  /// Flops of all slices together plus the additions summing them; equals
  /// `flops` without slicing. The overhead of slicing is sliced_flops / flops.
  double sliced_flops = 0;
  /// Elements of the largest pairwise result of one slice.
  double sliced_largest_intermediate = 0;
  /// Slices that may run at once (set by prepare(); 1 otherwise): as many
  /// sliced largest intermediates as fit the memory limit, and 1 when a
  /// slice's largest pairwise step has 64^3 multiply-adds or more (BLAS
  /// then threads each step itself). The direct tier
  /// and untracked eager calls run up to this many slices in parallel on
  /// the backend's threads and add their results in slice order (the bits
  /// of a one-thread run).
  std::int64_t concurrent_slices = 1;
  /// Bytes of the intermediates alive at once at the worst point of a run
  /// (operands excluded; copies GEMM makes of operands whose strides it
  /// cannot read are not counted). Set by prepare(); 0 otherwise.
  std::int64_t peak_bytes = 0;

  /// Parses, checks and plans `equation` for operands of `dtype` and these
  /// shapes (the errors of einsum()).
  static EinsumPlan prepare(std::string_view equation, DType dtype,
                            const std::vector<Shape>& shapes, const EinsumOptions& options = {});
  static EinsumPlan prepare(const EinsumLabels& labels, DType dtype,
                            const std::vector<Shape>& shapes, const EinsumOptions& options = {});

  /// Whether this plan was made by prepare() (einsum_path's plans only
  /// describe an order and cannot run).
  bool prepared() const { return program_ != nullptr; }
  /// The prepared dtype and shapes (InvalidArgument when not prepared).
  DType dtype() const;
  const std::vector<Shape>& shapes() const;

  /// Runs the plan on new operands. An operand count, rank, shape or dtype
  /// other than the prepared ones is InvalidArgument, RankMismatch,
  /// ShapeMismatch or DTypeMismatch (prepare another plan for them); running
  /// a plan that is not prepared is InvalidArgument. The direct tier (the
  /// CPU backend; another is Unsupported) returns a fresh tensor.
  Tensor run(const std::vector<Tensor>& operands, Backend& backend) const;
  /// The eager tier: untracked operands run the prepared steps directly;
  /// operands that require grad (or a capture scope) record the composed
  /// core ops, so AD works as with einsum().
  EagerTensor run(const std::vector<EagerTensor>& operands) const;

  /// For the einsum implementation.
  explicit EinsumPlan(std::shared_ptr<const einsum_detail::Program> program);
  EinsumPlan() = default;

 private:
  std::shared_ptr<const einsum_detail::Program> program_;
};

/// Integer-label form of an equation, for networks with more labels than
/// letters: labels[k] names the axes of operand k (label i names axis i);
/// `output` the result's axes, or nullopt for the implicit form (labels that
/// appear exactly once, in increasing order). Labels are any int64 values.
struct EinsumLabels {
  std::vector<std::vector<std::int64_t>> inputs;
  std::optional<std::vector<std::int64_t>> output;
};

/// Einstein summation. `equation` is "terms->output" or the implicit
/// "terms" (the output is the labels appearing exactly once, in code-point
/// order: 'A'-'Z' before 'a'-'z', followed by the ellipsis axes). Terms are
/// separated by ','; a label is an ASCII letter or any non-ASCII UTF-8
/// character; spaces are ignored. "..." stands for the axes not otherwise
/// labelled; ellipsis groups of different lengths broadcast right-aligned
/// (like the core's broadcasting on our shapes); ellipsis axes missing from an
/// explicit output are summed.
/// Semantics: a label repeated in one operand takes that operand's diagonal;
/// a label absent from the output is summed over; a label repeated in the
/// output places the values on the diagonal (zeros elsewhere). A label with
/// extent 1 in some operands broadcasts against its extent elsewhere.
/// Operands: one dtype (DTypeMismatch otherwise), any rank (rank 0 has the
/// empty term), zero-size extents allowed. Errors: a malformed equation is
/// InvalidArgument naming the byte position; a term whose label count does
/// not match the operand's rank is RankMismatch; extents that disagree are
/// ShapeMismatch naming the label, the operands and the extents; a wrong
/// operand count is InvalidArgument; an output label absent from every input
/// is InvalidArgument.
template <AdTensor T>
T einsum(std::string_view equation, const std::vector<T>& operands,
         const EinsumOptions& options = {});
template <AdTensor T>
T einsum(std::string_view equation, std::initializer_list<T> operands,
         const EinsumOptions& options = {}) {
  return einsum(equation, std::vector<T>(operands), options);
}
/// The integer-label form (see EinsumLabels).
template <AdTensor T>
T einsum(const EinsumLabels& labels, const std::vector<T>& operands,
         const EinsumOptions& options = {});

/// The direct tier: the same composition on an untracked eager runtime over
/// `backend` (the CPU backend; another is Unsupported).
Tensor einsum(std::string_view equation, const std::vector<Tensor>& operands, Backend& backend,
              const EinsumOptions& options = {});
Tensor einsum(const EinsumLabels& labels, const std::vector<Tensor>& operands, Backend& backend,
              const EinsumOptions& options = {});

/// The counting tropical einsum: the contraction's value over
/// options.semiring (MaxPlus or MinPlus; another is InvalidArgument) and,
/// per element of the result, the number of terms that attain it (f64
/// holding integers, exact below 2^53, rounded like any f64 beyond). Each
/// operand entry counts once; a spin glass's ground-state degeneracy is the
/// count of its network's value. Operands f32, f64 or i64; the direct tier.
struct CountedTensor {
  Tensor value;
  Tensor count;
};
CountedTensor einsum_count(std::string_view equation, const std::vector<Tensor>& operands,
                           Backend& backend, const EinsumOptions& options);
CountedTensor einsum_count(const EinsumLabels& labels, const std::vector<Tensor>& operands,
                           Backend& backend, const EinsumOptions& options);

/// The contraction order einsum would use for operands of these shapes (our
/// shapes, column-major), with its cost; the same checks as einsum. With
/// options.path set, that path's cost (after validating it).
EinsumPlan einsum_path(std::string_view equation, const std::vector<Shape>& shapes,
                       const EinsumOptions& options = {});
EinsumPlan einsum_path(const EinsumLabels& labels, const std::vector<Shape>& shapes,
                       const EinsumOptions& options = {});

/// The planner on its own: operand label sets (distinct labels each), the
/// extent of every label (labels index this vector, 0 <= label <
/// extents.size()) and the output labels. Labels absent from the output
/// that appear in one operand only are summed before any pairwise step
/// (free). InvalidArgument for a label out of range.
EinsumPlan plan_contraction(const std::vector<std::vector<std::int64_t>>& operands,
                            const std::vector<std::int64_t>& output,
                            const std::vector<double>& extents, const EinsumOptions& options = {});

}  // namespace tenferro
