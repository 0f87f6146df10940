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
