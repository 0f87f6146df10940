#pragma once
// Per-op derivative drivers shared by the eager and traced tiers.

#include "tenferro/ad/rules.hpp"

namespace tenferro::ad {

/// Forward mode through one op application: the jvp rule. `tangents` has one
/// entry per input; inputs of integer or bool dtype never carry tangents.
/// `input_metas` (one per input) may be omitted only when every input is a
/// valid Val or carries a tangent.
std::vector<MaybeVal> forward_op(const AdContext& ctx, Emitter& emitter, const Op& op,
                                 std::span<const Val> inputs, std::span<const Val> outputs,
                                 std::span<const MaybeVal> tangents, std::string_view transform,
                                 std::span<const TensorMeta> input_metas = {});

/// Reverse mode through one op application: the direct vjp rule when one is
/// registered, otherwise linearise-then-transpose with the jvp rule. Primal
/// inputs/outputs not declared as residuals may be invalid Vals. Returns one
/// cotangent per input in that input's dtype (nullopt: zero or not
/// differentiable). `output_metas`, when given, saves re-inferring them.
/// `wanted`, when given, marks the inputs whose cotangents the caller reads
/// (RuleArgs::wanted): the others may come back nullopt without being computed.
std::vector<MaybeVal> backward_op(const AdContext& ctx, Emitter& emitter, const Op& op,
                                  std::span<const TensorMeta> input_metas,
                                  std::span<const Val> inputs, std::span<const Val> outputs,
                                  std::span<const MaybeVal> cotangents, std::string_view transform,
                                  std::span<const TensorMeta> output_metas = {},
                                  std::span<const bool> wanted = {});

/// Whether values of this dtype carry derivatives (floating and complex).
inline bool differentiable(DType t) {
  return is_inexact(t);
}

}  // namespace tenferro::ad
