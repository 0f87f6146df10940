#pragma once
// The semiring einsum as extension ops (docs/tropical.md): the contraction
// itself, its tangent and its cotangents, each planned when the shapes are
// known (one program per shape, as the symbolic einsum op) and run on the
// CPU engine. The value op carries tropical AD rules: its jvp is the tangent
// op, its vjp the cotangent op (the derivatives route through the winning
// terms); the tangent op is linear in the tangents and transposes to the
// cotangent op. The tangent and cotangent ops have no derivatives of their
// own (a tropical function is piecewise linear: its second derivative is
// zero almost everywhere, and UnsupportedAdRule says so). Private to
// src/einsum/.

#include <vector>

#include "einsum/common.hpp"
#include "tenferro/ad/eager.hpp"
#include "tenferro/ad/traced.hpp"

namespace tenferro::einsum_detail {

/// The contraction of `operands` over options.semiring, recorded (eager with
/// tracked operands, or traced) as the semiring value op.
template <AdTensor T>
T apply_semiring(const Spec& spec, const std::vector<T>& operands, const EinsumOptions& options);

}  // namespace tenferro::einsum_detail
