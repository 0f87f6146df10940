#pragma once
// What the einsum files share: the parsed equation (labels as int64 ids), its
// checks against the operands' extents, and the planner on dense labels.
// Private to src/einsum/; the family uses only tenferro's public headers.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tenferro/einsum/einsum.hpp"

namespace tenferro::einsum_detail {

/// Extents of one operand's axes (nullopt: symbolic, traced tier).
using Dims = std::vector<std::optional<std::int64_t>>;

/// An equation with every label an id: letters are their code points,
/// ellipsis axes are -1, -2, ... (right-aligned: -E is the first of E
/// ellipsis positions, -1 the last), integer labels are themselves.
struct Spec {
  std::vector<std::vector<std::int64_t>> inputs;
  std::vector<std::int64_t> output;
  bool from_string = false;
  /// A gradient's einsum (op.cpp): it inherits the forward's memory limit,
  /// which its own result may exceed, so a limit that slicing cannot reach is
  /// a target, not an error (issue 52 item 8).
  bool soft_memory_limit = false;
  friend bool operator==(const Spec&, const Spec&) = default;
  /// The label as the user wrote it ('j', "7" in the integer form, "ellipsis
  /// axis (1 from the end)"); messages put "label " before it.
  std::string label_name(std::int64_t id) const;
};

/// Parses `equation` for operands of ranks `ranks` (InvalidArgument with the
/// byte position for a malformed string, InvalidArgument for a wrong operand
/// count, RankMismatch for a term that does not fit its operand).
Spec parse_equation(std::string_view equation, const std::vector<std::int64_t>& ranks);
/// The integer-label form, with the same checks.
Spec parse_labels(const EinsumLabels& labels, const std::vector<std::int64_t>& ranks);

/// The equation checked against the extents, and what the execution needs.
struct Analysis {
  /// Every distinct label (dense index = position here).
  std::vector<std::int64_t> ids;
  /// Per dense label: the extent every operand agrees on (1 only when it is
  /// 1 everywhere); nullopt when symbolic.
  std::vector<std::optional<std::int64_t>> extent;
  /// Per operand: its labels after taking the diagonals of repeated labels
  /// (the order diagonal() leaves them in: each diagonal label moves first).
  std::vector<std::vector<std::int64_t>> diag_labels;
  /// Per operand: the axes of diag_labels summed away before any pairwise
  /// step (extent-1 labels that broadcast, labels in that operand only and
  /// not in the output), in increasing order.
  std::vector<std::vector<std::int64_t>> summed_axes;
  /// Per operand: the labels left after that (dense indices).
  std::vector<std::vector<std::int64_t>> reduced;
  /// The output's distinct labels (dense indices), in first-appearance order.
  std::vector<std::int64_t> output_distinct;
  std::int64_t dense(std::int64_t id) const;
};

/// Checks extents (ShapeMismatch naming the label, operands and extents) and
/// prepares the Analysis. `op` names the function in errors.
Analysis analyse(const Spec& spec, const std::vector<Dims>& dims, const char* op);

/// InvalidArgument, before any work, when the result or the path's largest
/// (sliced) intermediate would have more than 2^59 elements.
void check_sizes(const Spec& spec, const Analysis& a, const std::vector<double>& extents,
                 const EinsumPlan& plan, const char* op);

/// The plan for the reduced operands (see plan_contraction); `op` names the
/// function the user called in errors.
EinsumPlan plan_dense(const std::vector<std::vector<std::int64_t>>& operands,
                      const std::vector<std::int64_t>& output, const std::vector<double>& extents,
                      const EinsumOptions& options, const char* op, bool soft_limit = false);

/// Planner extents: constants as they are, symbolic ones as 2.
std::vector<double> planning_extents(const Analysis& a);

}  // namespace tenferro::einsum_detail
