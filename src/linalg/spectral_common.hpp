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
/// The factor F(i, j) = 1 / (d(j) - d(i)) off the diagonal, 0 on it, for a
/// value vector d (real or complex). Regularised: conj(D) / (|D|^2 + eta^2)
/// with D = d(j) - d(i) and eta = ad.eta * sqrt(sum |d|^2) (plus a tiny
/// floor), so equal entries give 0 instead of Inf.
Val inv_gaps(Emitter& e, Val d, const AdParams& ad);
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
