#pragma once
// A prepared einsum: the parsed and checked equation turned into a fixed list
// of steps (diagonals and single-operand sums per operand, pairwise
// dot_general along the planned path, the output permutation and diagonal
// embeddings). Built once per (equation, dtype, shapes, options); run by every
// tier. Private to src/einsum/.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "einsum/common.hpp"

namespace tenferro::einsum_detail {

/// What happens to one operand before any pairwise step.
struct OperandPrep {
  /// Diagonals of repeated labels, applied in order: (axis1, axis2) of the
  /// tensor at that point; the diagonal axis becomes axis 0.
  std::vector<std::pair<std::int64_t, std::int64_t>> diagonals;
  /// Axes summed after the diagonals (labels no other operand and not the
  /// output has, and extent-1 axes that broadcast), increasing.
  Axes summed;
};

/// One pairwise contraction: operands `i` and `j` of the current list leave
/// it and dot_general(list[lhs], list[rhs], dims) is appended.
struct PairStep {
  std::int64_t i = 0, j = 0;
  bool swap = false;  // lhs is list[j], rhs list[i]
  DotDims dims;
};

struct Program {
  std::vector<OperandPrep> prep;
  std::vector<PairStep> steps;
  /// After the steps: the permutation to the output's distinct labels.
  Axes out_perm;
  /// One diag_embed per extra copy of an output label: the permutation that
  /// brings that label first before diag_embed(x, 0).
  std::vector<Axes> embeds;
  Axes final_perm;
  /// The order and its cost, as einsum_path reports them.
  EinsumPlan cost;
  /// Elements of intermediates alive at once at the worst point (see
  /// EinsumPlan::peak_bytes), without the dtype.
  double peak_elements = 0;
  /// With a memory limit (EinsumPlan::sliced_labels): the extent of each
  /// sliced label, and per operand (after its prep) the axis holding each
  /// sliced label, or -1. Every slice runs the same steps on static slices of
  /// the operands and the results add up.
  std::vector<std::int64_t> sliced_extents;
  std::vector<std::vector<std::int64_t>> sliced_axes;
  /// How many slices may run at once (each holds its own intermediates and
  /// partial sum): as many sliced largest intermediates as fit the memory
  /// limit, at least 1, and 1 when a slice's largest step is a GEMM that
  /// BLAS threads itself; run_direct takes the smaller of this and the
  /// backend's threads.
  std::int64_t concurrent_slices = 1;

  /// The algebra (EinsumOptions::semiring), and for the semiring ops
  /// (semiring_op.hpp) the equation and options it was built from.
  Semiring semiring = Semiring::Standard;
  Spec spec;
  EinsumOptions options;

  /// Set for prepared plans: the checked signature.
  DType dtype = DType::F64;
  std::vector<Shape> shapes;
};

/// The steps for `spec` checked against `dims` (analyse's errors), for
/// operands of `dtype` (its size is the element size of a memory limit).
Program build_program(const Spec& spec, const std::vector<Dims>& dims, const EinsumOptions& options,
                      const char* op, DType dtype);

/// Calls f(index) for slices [begin, end) of `p` in order (default: all;
/// one entry per sliced label, the first label fastest); once with an empty
/// index when nothing is sliced.
template <class F>
void for_each_slice(const Program& p, F&& f, std::int64_t begin = 0, std::int64_t end = -1) {
  std::vector<std::int64_t> index(p.sliced_extents.size(), 0);
  std::int64_t rest = begin;
  for (std::size_t k = 0; k < index.size(); ++k) {
    index[k] = rest % p.sliced_extents[k];
    rest /= p.sliced_extents[k];
  }
  for (std::int64_t s = begin; end < 0 || s < end; ++s) {
    f(index);
    std::size_t k = 0;
    while (k < index.size() && ++index[k] == p.sliced_extents[k]) index[k++] = 0;
    if (k == index.size()) return;
  }
}

/// Runs the steps on untracked values over `backend` (a fresh result: an
/// alias of an operand is copied).
Tensor run_direct(const Program& p, std::vector<Tensor> operands, Backend& backend);

/// The reverse pass of `p` along its own tree (pullback.cpp): the cotangent
/// of every operand for the output cotangent `ct` (conjugating the operands
/// when complex, tenferro's convention). The forward steps run once and keep
/// their results; each step then passes one cotangent to each side.
std::vector<Tensor> pullback_direct(const Program& p, const std::vector<Tensor>& operands,
                                    const Tensor& ct, Backend& backend);

/// The cache discriminator of an eager call: equation (or integer labels),
/// dtype, shapes and options, in a compact binary form.
std::string cache_key(std::string_view equation, DType dtype, const std::vector<Shape>& shapes,
                      const EinsumOptions& options);
std::string cache_key(const EinsumLabels& labels, DType dtype, const std::vector<Shape>& shapes,
                      const EinsumOptions& options);

/// The extension-cache names the eager einsum uses (family, cache).
inline constexpr const char* kCacheFamily = "tenferro.einsum";
inline constexpr const char* kPlanCache = "plans";

}  // namespace tenferro::einsum_detail
