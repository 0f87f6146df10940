#pragma once
// The implicit derivatives of a fixed point x* = f(x*, p), as traced graphs
// (control_flow.cpp): the traced fixed_point's AD hooks and the eager
// fixed_point's rules build them.

#include <optional>
#include <span>
#include <vector>

#include "tenferro/ad/control_flow.hpp"
#include "tenferro/ad/rules.hpp"

namespace tenferro::detail {

/// What a fixed-point node solves: the problem, or the linear system of its
/// tangent or of its adjoint (the derivatives' solves, which report their
/// failures as such).
enum class FixedPointRole : unsigned char { Solve, Tangent, Adjoint };

/// The traced fixed_point with a role.
FixedPointResult<TracedTensor> fixed_point_node(const TracedFixedPointFn& f,
                                                ListRef<TracedTensor> x0,
                                                ListRef<TracedTensor> params,
                                                const FixedPointOptions& options,
                                                FixedPointRole role);

/// InvalidArgument for a tolerance or an iteration cap out of range, an
/// unknown linear solver, or a Direct one that cannot serve these states
/// (symbolic extents, more than kFixedPointDirectMax unknowns).
void check_fixed_point_options(const FixedPointOptions& options,
                               std::span<const TensorMeta> states);

/// Whether the derivatives' linear systems over these states are solved
/// directly (the options checked).
bool solves_directly(const FixedPointOptions& options, std::span<const TensorMeta> states);

/// z = L z + rhs solved directly (Gauss-Jordan elimination with partial
/// pivoting on I - L as a dense real matrix, in one checkpoint region over
/// (xs, ps, rhs)), with L = df/dx(xs, ps) (a jvp per column), or, for the
/// adjoint, the vjp map lambda -> (df/dx)^T lambda. L is real-linear: complex
/// elements are two real unknowns, so the transpose convention of complex
/// vjps never enters.
std::vector<TracedTensor> solve_directly(const Program& f, std::span<const TracedTensor> xs,
                                         std::span<const TracedTensor> ps,
                                         std::span<const TracedTensor> rhs, bool adjoint,
                                         const ad::AdContext& rules);

/// NoConvergence for a run of `role` that stopped after `iterations` with
/// `residual` (NaN: the iteration produced NaN), with the advice that fits.
[[noreturn]] void fail_no_convergence(FixedPointRole role, std::int64_t iterations, double residual,
                                      double tol);

/// The solution's tangents (one per state tensor): the fixed point of
/// dx -> df/dx dx + df/dp dp at (xs, ps). `f` takes (state..., params...);
/// `dps` holds one tangent per parameter (nullopt: zero). All nullopt when
/// no parameter has a tangent.
std::vector<std::optional<TracedTensor>> fixed_point_tangent(
    const Program& f, std::span<const TracedTensor> xs, std::span<const TracedTensor> ps,
    std::span<const std::optional<TracedTensor>> dps, const FixedPointOptions& options,
    const ad::AdContext& rules);

/// The parameters' cotangents (one per parameter; nullopt: none) for the
/// solution's cotangents `ybar` (nullopt: zero): (df/dp)^T lambda with
/// lambda the fixed point of lambda -> ybar + (df/dx)^T lambda.
std::vector<std::optional<TracedTensor>> fixed_point_cotangent(
    const Program& f, std::span<const TracedTensor> xs, std::span<const TracedTensor> ps,
    std::span<const std::optional<TracedTensor>> ybar, const FixedPointOptions& options,
    const ad::AdContext& rules);

}  // namespace tenferro::detail
