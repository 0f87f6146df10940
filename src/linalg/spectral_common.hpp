#pragma once
// What the spectral ops (svd, eigh, eig and their values-only forms) share:
// op constructors (the rules of one op emit the others), the gauge check op,
// and emitter helpers for the 1/(gap) factors of the derivatives. Private to
// src/linalg/.

#include <optional>

#include "linalg/common.hpp"
#include "tenferro/linalg/spectral.hpp"

namespace tenferro::linalg::detail {

/// The AD part of SpectralOptions, carried by the ops that have vectors.
struct AdParams {
  bool regularised = false;
  double eta = 1e-8;
  double gauge_tolerance = 1e-2;
  double degeneracy_tolerance = 1e-10;
  double component_tolerance = 1e-6;
  bool operator==(const AdParams&) const = default;
};
std::size_t hash_value(const AdParams& p);
AdParams ad_params(std::string_view op, const SpectralOptions& o);

// ---- ops (each file defines its constructor) -------------------------------------

enum class SvdMode { Values, Reduced, Full };
std::shared_ptr<const LinalgOpBase> svd_op(SvdMode mode, AdParams ad = {});
std::shared_ptr<const LinalgOpBase> eigh_op(bool lower, bool vectors, AdParams ad = {});
std::shared_ptr<const LinalgOpBase> eig_op(bool vectors, AdParams ad = {});
/// X = op(A)^{-1} B with op(A) = A or A^H (LU; used by eig's rules).
std::shared_ptr<const LinalgOpBase> solve_op(bool adjoint);

/// Which decomposition a gauge check reports.
enum class GaugeOwner { Svd, Eigh, Eig };
/// (x, g) -> x; throws GaugeIllDefined at execution when max |g| > tolerance.
/// AD: identity in x, zero in g.
std::shared_ptr<const LinalgOpBase> gauge_check_op(GaugeOwner owner, double tolerance);
/// (x, c2, gap, all) -> x with c2, gap and all real [k, k, batch...]: throws
/// GaugeIllDefined at execution when some c2(i, j) > tolerance^2 * max all
/// over the same matrix (c2: the squared magnitude of the cotangent, or
/// tangent when `tangent`, component that a zeroed 1/gap factor multiplies,
/// zero outside the degenerate pairs; all: that component everywhere), naming
/// i, j, the batch index and gap(i, j). AD: identity in x, zero elsewhere.
std::shared_ptr<const LinalgOpBase> degeneracy_check_op(GaugeOwner owner, double tolerance,
                                                        bool tangent);

void register_svd(Registry& r);
void register_eigh(Registry& r);
void register_eig(Registry& r);

// ---- emitter helpers (values [k, batch...], matrices [k, k, batch...]) ------------

/// [k, batch...] -> [k, k, batch...] (or the shape of `like`, a [r, k, ...]
/// matrix): out(i, j) = v(j) (PyTorch's v.unsqueeze(-2)).
Val bcast_row(Emitter& e, Val v, std::optional<Val> like = std::nullopt);
/// out(i, j) = v(i) (PyTorch's v.unsqueeze(-1)); `like` a [k, c, ...] matrix.
Val bcast_col(Emitter& e, Val v, std::optional<Val> like = std::nullopt);
/// x converted to `dtype` when it differs (real -> complex).
Val as_dtype(Emitter& e, Val x, DType dtype);
/// The Hermitian / skew-Hermitian parts times two: x + x^H, x - x^H.
Val sym2(Emitter& e, Val x);
Val skew2(Emitter& e, Val x);
/// Imaginary part of the diagonal of a square matrix, as a real [k, batch...].
Val imag_diag(Emitter& e, Val x);
/// The factor F(i, j) = 1 / D(i, j), D = d(j) - d(i) (or d(j) + d(i) for
/// `sums`), of a value vector d (real or complex). Strict: 1 / D off the
/// diagonal where |D| > tol * ||d||_2 (tol = max(ad.degeneracy_tolerance,
/// 100 eps of the dtype)), 0 elsewhere; the degenerate pairs (off the
/// diagonal, |D| <= tol ||d||_2) are recorded in `degenerate` (Bool
/// [k, k, batch...]) and `gap` is |r(j) - r(i)| (real) for the reported values
/// r (d unless given), for error messages. Regularised: conj(D) /
/// (|D|^2 + eta^2) with eta = ad.eta * ||d||_2 (plus a tiny floor), so equal
/// entries give 0 instead of Inf; no `degenerate`.
struct GapFactors {
  Val F;
  std::optional<Val> degenerate;
  std::optional<Val> gap;
};
GapFactors gap_factors(Emitter& e, Val d, const AdParams& ad,
                       std::optional<Val> reported = std::nullopt, bool sums = false);
/// out(i, j) = g(j) - g(i): how a values cotangent separates two values (a
/// loss with a non-zero split on a degenerate pair depends on how the pair
/// splits, which the vectors' basis decides).
Val value_split(Emitter& e, Val g);
/// x guarded by a degeneracy check (Strict only; x itself otherwise): raises
/// GaugeIllDefined when the components (matrices [k, k, batch...]) that the
/// 1/gap factors of `g` multiply, sum |c(i, j)|^2 (plus the `squared` ones),
/// exceed tol^2 times the largest value of that sum plus sum |r|^2 over the
/// `references` (the rest of the (co)tangent, same shape) in the matrix, on a
/// degenerate pair (tol = max(ad.component_tolerance, sqrt(eps))). `tangent`: the components come
/// from a jvp.
Val check_degenerate(Emitter& e, GaugeOwner owner, bool tangent, Val x,
                     const std::vector<Val>& components, const GapFactors& g, const AdParams& ad,
                     const std::vector<Val>& squared = {}, const std::vector<Val>& references = {});
/// svd's 1 / s factors as GapFactors (vectors [k, batch...] for F): Strict:
/// 1 / s where s > tol * ||s||_2, else 0, with `degenerate` the diagonal
/// entries (i, i) of those zero values and `gap` diag(s); Regularised: as
/// safe_inverse. Components for check_degenerate are diagonal matrices
/// (`squared`: already |c|^2).
GapFactors inverse_factors(Emitter& e, Val s, const AdParams& ad);
/// sum over `axis` of |x|^2 (real).
Val sum_squares(Emitter& e, Val x, std::int64_t axis);
/// 1 / s (strict) or s / (s^2 + eta^2) (regularised, eta relative to |s|).
Val safe_inverse(Emitter& e, Val s, const AdParams& ad);
/// Columns [0, k) of a matrix / rows [0, k) (constant extents).
Val first_cols(Emitter& e, Val x, std::int64_t k);
Val first_rows(Emitter& e, Val x, std::int64_t k);
/// Appends `extra` zero columns / rows.
Val pad_cols(Emitter& e, Val x, std::int64_t extra);
Val pad_rows(Emitter& e, Val x, std::int64_t extra);
/// A constant extent, or Unsupported naming `op` (symbolic extents where the
/// rule needs a concrete one).
std::int64_t constant_extent(std::string_view op, const SymDim& d);

}  // namespace tenferro::linalg::detail
