#pragma once
// Shared helpers of the core AD rules (src/ad/rules/core_*.cpp). Rules are
// written only against the Emitter, so each one serves eager, traced and
// higher-order differentiation; shapes come from RuleArgs metas because
// undeclared residuals and linear inputs are invalid Vals.

#include <functional>
#include <string>

#include "tenferro/ad/rules.hpp"

namespace tenferro::ad::core {

/// The parameters of the primitive a rule runs for.
template <class P>
const P& params(const RuleArgs& a) {
  const auto* prim = dynamic_cast<const PrimitiveOp*>(&a.op);
  const P* p = prim != nullptr ? prim->get<P>() : nullptr;
  if (p == nullptr) {
    fail(ErrorKind::Internal, std::string(a.op.name()), "core AD rule applied to a different op");
  }
  return *p;
}

inline const TensorMeta& in_meta(const RuleArgs& a, std::size_t i) {
  if (i >= a.input_metas.size()) {
    fail(ErrorKind::Internal, std::string(a.op.name()), "AD rule needs input metas");
  }
  return a.input_metas[i];
}
inline const TensorMeta& out_meta(const RuleArgs& a, std::size_t j = 0) {
  if (j >= a.output_metas.size()) {
    fail(ErrorKind::Internal, std::string(a.op.name()), "AD rule needs output metas");
  }
  return a.output_metas[j];
}

/// conj for complex values, x itself otherwise (conj(x) of a real primal is a no-op).
inline Val conj_c(Emitter& e, Val x) {
  return is_complex(e.dtype_of(x)) ? e.conj(x) : x;
}

/// a + b with symbolic zeros.
inline MaybeVal add_maybe(Emitter& e, MaybeVal a, MaybeVal b) {
  if (!a) return b;
  if (!b) return a;
  return e.add(*a, *b);
}

/// A rank-0 constant in the (real or complex) dtype of `like`.
inline Val constant_like(Emitter& e, Val like, double value) {
  return e.scalar(value, e.dtype_of(like));
}

/// Static extent of a dimension, or Unsupported naming the op and what needs it.
std::int64_t static_extent(const RuleArgs& a, const SymDim& d, const char* what);

/// Normalised axes (negative counted from the end) for a value of `rank`.
Axes normalized_axes(std::span<const std::int64_t> axes, std::int64_t rank);

/// Broadcasts a value of a reduced shape (reduce over `axes` of a tensor of
/// `full` shape, with or without keepdim) back to `full`.
Val unreduce(Emitter& e, Val v, const SymShape& full, const Axes& axes, bool keepdim);

/// Number of elements reduced by `axes` of `shape` as a rank-0 value of `dtype`
/// (a constant when the extents are static).
Val reduced_count(Emitter& e, const SymShape& shape, const Axes& axes, DType dtype);

/// Rule-set builders. The jvp wrapper brings each tangent output to the shape
/// and dtype of its primal output (broadcast, convert); the transpose wrapper
/// sums each cotangent down to its input's shape and converts it to the
/// input's dtype (the real part for real inputs), so rules can stay short.
RuleSet jvp_rule(JvpRule jvp, Residuals residuals);
RuleSet linear_rule(JvpRule jvp, TransposeRule transpose, Residuals residuals = Residuals::none());
RuleSet non_differentiable();
/// Adds a direct vjp built from the transpose rule (ops linear in each input
/// separately: add, sub, mul).
void add_vjp_from_transpose(RuleSet& r);
inline RuleSet with_vjp(RuleSet r) {
  add_vjp_from_transpose(r);
  return r;
}

/// A coefficient of a unary rule, read from the primal input x and/or output
/// y (only the declared residuals are valid Vals).
using Coef = std::function<Val(Emitter&, Val x, Val y)>;
/// Unary jvp t * coef(x, y), or t / coef(x, y) when `divide`.
RuleSet scaled(Coef coef, Residuals r, bool divide = false);
/// A coefficient of a binary rule; null means 1 (for the first operand) or
/// no dependence (for the second).
using BinCoef = std::function<Val(Emitter&, const RuleArgs&)>;
/// Binary jvp ta * ca + tb * cb, each coefficient computed only when its
/// tangent is present.
RuleSet binary_scaled(BinCoef ca, BinCoef cb, Residuals r);

/// Rules of the special functions (rules/core_special.cpp).
RuleSet special_unary_rules(UnaryOp op);
RuleSet special_binary_rules(BinaryOp op);
RuleSet polygamma_rule();

}  // namespace tenferro::ad::core
