#pragma once
// What the AD rules of the distributed decompositions (svd, eigh) write
// with: the single-process family's rules need matrices of spectral factors
// (F(i, j) = 1 / (d_j - d_i), diagonals, triangles) that are block-cyclic
// here. Each rank builds its local block of them from the replicated values
// and the global indices of its local rows and columns (index constants,
// gathers, masks: elementwise, no communication); a diagonal read into a
// replicated vector is a local scatter then an all-reduce over the grid.
// Products and adjoints are the ScaLAPACK ops (p?gemm, p?tranc). Every
// helper emits ops with AD rules, so the rules differentiate again.
// (scalapack_grad_util.cpp)

#include <optional>
#include <vector>

#include "distributed/scalapack.hpp"

namespace tenferro::dist::detail {

/// A block-cyclic matrix in a rule: its local block and global extents.
struct BcMat {
  ad::Val v;
  std::int64_t rows = 0, cols = 0;
};

/// The emitter of a rule of a ScaLAPACK op with the op's grid and block.
class BlockCyclicEmitter {
 public:
  BlockCyclicEmitter(ad::Emitter& e, const SlParams& p) : e(e), p(p) {}
  ad::Emitter& e;
  const SlParams& p;

  /// The global indices of this rank's local rows / columns of a matrix with
  /// `n` global rows / columns.
  std::vector<std::int64_t> row_indices(std::int64_t n) const;
  std::vector<std::int64_t> col_indices(std::int64_t n) const;
  /// v (a replicated vector [n]) at this rank's rows / columns: [local].
  ad::Val at_rows(ad::Val v, std::int64_t n);
  ad::Val at_cols(ad::Val v, std::int64_t n);
  /// The local block of the [rows, cols] matrix out(i, j) = v(j) (bcast_row)
  /// or v(i) (bcast_col) of a replicated v.
  ad::Val bcast_row(ad::Val v, std::int64_t rows, std::int64_t cols);
  ad::Val bcast_col(ad::Val v, std::int64_t rows, std::int64_t cols);
  /// Bool local block of [rows, cols]: global row `cmp` global column
  /// (BinaryOp::Eq: the diagonal, Gt: strictly below it, Lt: above).
  ad::Val index_mask(BinaryOp cmp, std::int64_t rows, std::int64_t cols);
  /// x where `mask`, 0 elsewhere.
  ad::Val masked(ad::Val mask, ad::Val x);
  /// The diagonal of a block-cyclic [n, n] matrix as a replicated [n]
  /// (local scatter, then an all-reduce over the grid).
  ad::Val diag(const BcMat& x);
  /// The local block of diag(v) [n, n] for a replicated v [n].
  ad::Val diag_embed(ad::Val v, std::int64_t n);
  /// sum over rows (axis 0) or columns (axis 1) of |x|^2: a replicated real
  /// vector [cols] or [rows].
  ad::Val sum_squares(const BcMat& x, std::int64_t axis);
  /// The sum of x's local values over the grid's ranks.
  ad::Val all_reduce(ad::Val x);
  /// x^H (p?tranc; p?tran for real dtypes).
  BcMat adjoint(const BcMat& x);
  /// x + x^H and x - x^H.
  ad::Val sym2(const BcMat& x);
  ad::Val skew2(const BcMat& x);
  /// op_l(l) op_r(r) (one p?gemm; ops 'N', 'T', 'C', 'K' as Factor).
  BcMat mm(const BcMat& l, const BcMat& r, char op_l = 'N', char op_r = 'N');
  /// x converted to `dtype` when it differs.
  ad::Val as_dtype(ad::Val x, DType dtype);
  /// A constant tensor of this rank (the same in every tier).
  ad::Val constant(const Tensor& t);

  // ---- the gap factors of the single-process family (spectral_common.hpp),
  // as local blocks of [k, k] from a replicated d [k] ----
  struct GapFactors {
    ad::Val F;
    std::optional<ad::Val> degenerate;  ///< Strict: the degenerate pairs
    std::optional<ad::Val> gap;         ///< Strict: |d_j - d_i| for messages
  };
  /// F = 1 / (d_j - d_i) (or d_j + d_i for `sums`) off degenerate pairs
  /// (Strict), or the Lorentzian conj(D) / (|D|^2 + eta^2) (Regularised).
  GapFactors gap_factors(ad::Val d, std::int64_t k, bool sums = false);
  /// svd's 1 / s factors (F a replicated [k]; degenerate and gap local
  /// blocks of [k, k] on the diagonal).
  GapFactors inverse_factors(ad::Val s, std::int64_t k);
  /// out(i, j) = g(j) - g(i), the split of a values cotangent.
  ad::Val value_split(ad::Val g, std::int64_t k);
  /// x guarded by the Strict degeneracy check (x itself when Regularised):
  /// GaugeIllDefined on every rank when sum |c|^2 (+ squared) on a degenerate
  /// pair exceeds tol^2 times the largest value of that sum plus sum |r|^2
  /// over the references anywhere in the matrix.
  ad::Val check_degenerate(bool tangent, ad::Val x, const std::vector<ad::Val>& components,
                           const GapFactors& g, std::int64_t k,
                           const std::vector<ad::Val>& squared = {},
                           const std::vector<ad::Val>& references = {});
  /// x guarded by the phase check: GaugeIllDefined on every rank when
  /// max |g| > gauge_tolerance (g a replicated real vector).
  ad::Val check_gauge(ad::Val x, ad::Val g);
};

}  // namespace tenferro::dist::detail
