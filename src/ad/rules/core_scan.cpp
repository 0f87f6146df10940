// AD rules of the cumulative ops and argsort/topk. cumsum is linear: its
// transpose is the cumsum running the other way. cumprod's jvp is exact with
// zeros (the first derivative PyTorch's cumprod_backward computes): before
// the first zero of a lane it is y * cumsum(t / x); from the first zero on,
// only that zero's tangent reaches the outputs, through the running product
// with the zero replaced by 1, until a second zero makes everything 0.
// argsort/topk return indices (no derivative); sort and topk values are
// take_along_axis of x at those indices, differentiated as a gather.

#include "ad/rules/core.hpp"

namespace tenferro::ad::core {

namespace {

using Tangents = std::span<const MaybeVal>;
using Out = std::vector<MaybeVal>;

Val cumulate(Emitter& e, Val x, const prim::Cumulative& p, ReduceOp op, bool reverse) {
  return e.emit1(make_primitive(prim::Cumulative{op, p.axis, reverse}),
                 std::span<const Val>(&x, 1));
}

RuleSet cumsum_rule() {
  return linear_rule(
      [](const RuleArgs& a, Tangents t) -> Out {
        if (!t[0]) return {std::nullopt};
        const auto& p = params<prim::Cumulative>(a);
        return {cumulate(a.emitter, *t[0], p, ReduceOp::Sum, p.reverse)};
      },
      [](const RuleArgs& a, std::span<const bool>, Tangents ct) -> Out {
        if (!ct[0]) return {std::nullopt};
        const auto& p = params<prim::Cumulative>(a);
        return {cumulate(a.emitter, *ct[0], p, ReduceOp::Sum, !p.reverse)};
      });
}

RuleSet cumprod_rule() {
  return jvp_rule(
      [](const RuleArgs& a, Tangents t) -> Out {
        if (!t[0]) return {std::nullopt};
        Emitter& e = a.emitter;
        const auto& p = params<prim::Cumulative>(a);
        const Val x = a.inputs[0], y = a.outputs[0];
        const TensorMeta& xm = in_meta(a, 0);
        const Val zero = constant_like(e, x, 0.0), one = constant_like(e, x, 1.0);
        const Val is0 = e.binary(BinaryOp::Eq, x, zero);
        // Zeros seen so far along the lane (inclusive), as i64.
        const Val seen = cumulate(e, is0, p, ReduceOp::Sum, p.reverse);
        const Val i0 = e.scalar(std::int64_t{0}, DType::I64),
                  i1 = e.scalar(std::int64_t{1}, DType::I64);
        const Val before = e.binary(BinaryOp::Eq, seen, i0);
        const Val one_zero = e.binary(BinaryOp::Eq, seen, i1);
        const Val first = e.binary(BinaryOp::LogicalAnd, is0, one_zero);
        // Before the first zero: y_k * sum_{i<=k} t_i / x_i.
        const Val x_safe = e.select(before, x, one);
        const Val head = e.mul(y, cumulate(e, e.div(*t[0], x_safe), p, ReduceOp::Sum, p.reverse));
        // From the first zero until the second: t_z * prod_{i<=k, i!=z} x_i.
        const Val skip = cumulate(e, e.select(first, one, x), p, ReduceOp::Prod, p.reverse);
        const std::int64_t axis = xm.rank() == 0 ? 0 : (p.axis < 0 ? p.axis + xm.rank() : p.axis);
        Val tz = e.select(first, *t[0], zero);
        if (xm.rank() > 0) tz = unreduce(e, e.sum(tz, {axis}, true), xm.shape, {axis}, true);
        const Val tail = e.select(one_zero, e.mul(skip, tz), zero);
        return {e.select(before, head, tail)};
      },
      Residuals::of({0}, {0}));
}

}  // namespace

}  // namespace tenferro::ad::core

// ---- the kinds' rule hooks -------------------------------------------------------------

namespace tenferro {

using namespace ad::core;

ad::RuleSet prim::Cumulative::rules(std::int32_t kind) {
  return kind != 0 ? cumprod_rule() : with_vjp(cumsum_rule());  // cumprod : cumsum
}
ad::RuleSet prim::Argsort::rules(std::int32_t) {
  return non_differentiable();
}

}  // namespace tenferro
