#pragma once
// Private to the factor part of the linalg family: the ops' factories (the
// LU ops in factor.cpp, det in factor_det.cpp, QR and Householder products
// in factor_qr.cpp) and the emitter helpers their rules share.

#include <cstdint>
#include <memory>

#include "linalg/common.hpp"

namespace tenferro::linalg::detail {

/// Who called an LU-based op: names the op in errors.
enum class LuCaller : std::uint8_t { LuFactor, Solve, Inv, Det };
const char* caller_name(LuCaller c);

/// getrf: A [m, n, b...] -> {LU [m, n, b...], pivots i32 [min(m, n), b...],
/// info i32 [b...], P [m, m, b...] (A's dtype) with A = P L U}. `check`: an exactly singular U is
/// Singular (naming the caller and batch index) instead of info > 0.
std::shared_ptr<const LinalgOpBase> lu_factor_op(bool check, LuCaller caller);
/// getrs: (LU [n, n, b...], pivots [n, b...], B [n, k, b...]) -> A^{-1} B, or
/// A^{-H} B when `adjoint`, with A = P L U. Linear in B.
std::shared_ptr<const LinalgOpBase> lu_solve_op(bool adjoint);
/// getrf + getrs: (A [n, n, b...], B [n, k, b...]) -> {X = A^{-1} B, info i32 [b...],
/// LU, P} (LU and P as lu_factor's, for the rule); `check` as lu_factor's.
std::shared_ptr<const LinalgOpBase> solve_op(bool check, LuCaller caller);
/// A [n, n, b...] -> {det, sign, logabsdet} (logabsdet real) over b...
std::shared_ptr<const LinalgOpBase> det_op(bool slogdet);
/// Mode of qr: 0 reduced, 1 complete, 2 r.
std::shared_ptr<const LinalgOpBase> qr_op(int mode);
/// orgqr/ungqr: (V [m, n, b...], tau [k, b...]) -> Q [m, n, b...]
/// (direct tier; the AD tiers compose the product from core ops).
std::shared_ptr<const LinalgOpBase> householder_op();

// ---- emitter helpers (constant extents) ----------------------------------------------

/// The constant extent of axis `d` of v; Unsupported for a symbolic extent.
std::int64_t extent(Emitter& e, Val v, std::int64_t d, std::string_view op);
/// Rows [r0, r1) (axis 0) or columns (axis 1) of a [m, n, b...] value.
Val slice_axis(Emitter& e, Val x, std::int64_t axis, std::int64_t lo, std::int64_t hi);
/// "[2, 3]" for error messages.
inline std::string shape_str(const Shape& s) {
  return to_string(to_sym_shape(std::span<const std::int64_t>(s.data(), s.size())));
}
/// Two values joined along `axis`.
Val concat2(Emitter& e, Val a, Val b, std::int64_t axis);

}  // namespace tenferro::linalg::detail
