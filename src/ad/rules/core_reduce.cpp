// AD rules of the reductions (sum, mean, prod, max, min, logsumexp, var,
// std, all/any, argmax/argmin) and of dot_general. Every nonlinear reduction
// is written as sum(t * coefficient) with the coefficient computed on
// primals, so its transpose comes from the mul and sum transposes.

#include "ad/rules/core.hpp"

namespace tenferro::ad::core {

namespace {

using Tangents = std::span<const MaybeVal>;
using Out = std::vector<MaybeVal>;

Val reduce(Emitter& e, ReduceOp op, Val x, Axes axes, bool keepdim) {
  const Val in[1] = {x};
  return e.emit1(make_primitive(prim::Reduce{op, std::move(axes), keepdim}), in);
}

Axes axes_of(const RuleArgs& a, std::span<const std::int64_t> axes) {
  return normalized_axes(axes, in_meta(a, 0).rank());
}

Val scalar_like(Emitter& e, Val like, double v) {
  return e.scalar(v, e.dtype_of(like));
}

// sum(t * coef) over the reduced axes, for a coefficient of x's shape.
Out weighted_sum(const RuleArgs& a, Tangents t, Val coef, const Axes& axes, bool keepdim) {
  Emitter& e = a.emitter;
  return {reduce(e, ReduceOp::Sum, e.mul(*t[0], coef), axes, keepdim)};
}

RuleSet sum_rule(ReduceOp op) {
  // sum and mean are linear; mean's transpose also divides by the count.
  return linear_rule(
      [op](const RuleArgs& a, Tangents t) -> Out {
        if (!t[0]) return {std::nullopt};
        const auto& p = params<prim::Reduce>(a);
        return {reduce(a.emitter, op, *t[0], p.axes, p.keepdim)};
      },
      [op](const RuleArgs& a, std::span<const bool>, Tangents ct) -> Out {
        if (!ct[0]) return {std::nullopt};
        Emitter& e = a.emitter;
        const auto& p = params<prim::Reduce>(a);
        const Axes axes = axes_of(a, p.axes);
        const SymShape& shape = in_meta(a, 0).shape;
        Val g = unreduce(e, *ct[0], shape, axes, p.keepdim);
        if (op == ReduceOp::Mean) g = e.div(g, reduced_count(e, shape, axes, e.dtype_of(g)));
        return {g};
      });
}

RuleSet prod_rule() {
  // Coefficient: the product of the other entries of the slice. With no zero
  // it is prod / x; with one zero it is the product of the nonzeros at the
  // zero and 0 elsewhere; with two or more zeros it is 0. Exact first
  // derivatives everywhere; higher derivatives are exact away from zeros.
  return jvp_rule(
      [](const RuleArgs& a, Tangents t) -> Out {
        if (!t[0]) return {std::nullopt};
        Emitter& e = a.emitter;
        const auto& p = params<prim::Reduce>(a);
        const Axes axes = axes_of(a, p.axes);
        const Val x = a.inputs[0];
        const Val zero = scalar_like(e, x, 0.0), one = scalar_like(e, x, 1.0);
        const Val is0 = e.binary(BinaryOp::Eq, x, zero);
        const DType rdt = real_dtype(e.dtype_of(x));
        const Val zeros =
            reduce(e, ReduceOp::Sum, e.select(is0, e.scalar(1.0, rdt), e.scalar(0.0, rdt)), axes,
                   /*keepdim=*/true);
        const Val x_safe = e.select(is0, one, x);
        const Val p_nz = reduce(e, ReduceOp::Prod, x_safe, axes, /*keepdim=*/true);
        const Val none0 = e.binary(BinaryOp::Eq, zeros, e.scalar(0.0, rdt));
        const Val one0 =
            e.binary(BinaryOp::LogicalAnd, is0, e.binary(BinaryOp::Eq, zeros, e.scalar(1.0, rdt)));
        const Val coef = e.select(none0, e.div(p_nz, x_safe), e.select(one0, p_nz, zero));
        return weighted_sum(a, t, coef, axes, p.keepdim);
      },
      Residuals::of({0}, {}));
}

RuleSet extremum_rule() {
  // Ties split evenly (JAX): weight = [x == y] / count([x == y]).
  return jvp_rule(
      [](const RuleArgs& a, Tangents t) -> Out {
        if (!t[0]) return {std::nullopt};
        Emitter& e = a.emitter;
        const auto& p = params<prim::Reduce>(a);
        const Axes axes = axes_of(a, p.axes);
        const Val x = a.inputs[0];
        const Val hit = e.binary(BinaryOp::Eq, x,
                                 unreduce(e, a.outputs[0], in_meta(a, 0).shape, axes, p.keepdim));
        const Val w = e.select(hit, scalar_like(e, x, 1.0), scalar_like(e, x, 0.0));
        const Val coef = e.div(w, reduce(e, ReduceOp::Sum, w, axes, /*keepdim=*/true));
        return weighted_sum(a, t, coef, axes, p.keepdim);
      },
      Residuals::of({0}, {0}));
}

RuleSet logsumexp_rule() {
  // Softmax weights exp(x - y).
  return jvp_rule(
      [](const RuleArgs& a, Tangents t) -> Out {
        if (!t[0]) return {std::nullopt};
        Emitter& e = a.emitter;
        const auto& p = params<prim::Reduce>(a);
        const Axes axes = axes_of(a, p.axes);
        const Val y = unreduce(e, a.outputs[0], in_meta(a, 0).shape, axes, p.keepdim);
        const Val w = e.unary(UnaryOp::Exp, e.sub(a.inputs[0], y));
        return weighted_sum(a, t, w, axes, p.keepdim);
      },
      Residuals::of({0}, {0}));
}

RuleSet variance_rule(bool take_sqrt) {
  // dvar = 2 / (N - correction) * sum(Re(conj(x - mean) t)) (the mean of t
  // drops out since x - mean sums to zero); dstd = dvar / (2 std). N equal
  // to the correction gives inf/NaN like PyTorch.
  return jvp_rule(
      [](const RuleArgs& a, Tangents t) -> Out {
        if (!t[0]) return {std::nullopt};
        Emitter& e = a.emitter;
        const auto& p = params<prim::Variance>(a);
        const Axes axes = axes_of(a, p.axes);
        const Val x = a.inputs[0];
        const Val d = e.sub(x, reduce(e, ReduceOp::Mean, x, axes, /*keepdim=*/true));
        const DType rdt = out_meta(a).dtype;
        const Val n = reduced_count(e, in_meta(a, 0).shape, axes, rdt);
        const Val scale = e.div(e.scalar(2.0, rdt), e.sub(n, e.scalar(p.correction, rdt)));
        const Val dvar = e.mul(
            reduce(e, ReduceOp::Sum, e.real(e.mul(*t[0], conj_c(e, d))), axes, p.keepdim), scale);
        if (!p.take_sqrt) return {dvar};
        return {e.div(dvar, e.scale(a.outputs[0], 2.0))};
      },
      take_sqrt ? Residuals::of({0}, {0}) : Residuals::of({0}, {}));
}

// ---- dot_general ----------------------------------------------------------------

bool contains(const Axes& axes, std::int64_t a) {
  for (std::int64_t x : axes) {
    if (x == a) return true;
  }
  return false;
}

// Axes of a rank-`rank` operand that are neither contracting nor batch, in order.
Axes free_axes(std::int64_t rank, const Axes& contracting, const Axes& batch) {
  Axes out;
  for (std::int64_t d = 0; d < rank; ++d) {
    if (!contains(contracting, d) && !contains(batch, d)) out.push_back(d);
  }
  return out;
}

std::int64_t index_of(const Axes& axes, std::int64_t a) {
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] == a) return static_cast<std::int64_t>(i);
  }
  return -1;
}

// Number of entries of `axes` smaller than a (the rank of a among them).
std::int64_t rank_among(const Axes& axes, std::int64_t a) {
  std::int64_t r = 0;
  for (std::int64_t x : axes) r += x < a ? 1 : 0;
  return r;
}

// Cotangent of one operand: contract ct with the conjugate of the other
// operand over the other's free axes, then permute to the operand's axis order.
// `self` is the operand being transposed, `other` the primal one. The result
// of ct x other (self = lhs) is [self free, self contracting (in the order of
// the paired other axes, sorted), batch]; with self = rhs it is
// other x ct = [self contracting (sorted by the paired other axes), self free, batch].
Val dot_transpose(Emitter& e, Val ct, Val other, bool self_is_lhs, const Axes& sc, const Axes& sb,
                  std::int64_t self_rank, const Axes& oc, const Axes& ob, std::int64_t other_rank) {
  const Axes sfree = free_axes(self_rank, sc, sb), ofree = free_axes(other_rank, oc, ob);
  const auto nsf = static_cast<std::int64_t>(sfree.size()),
             nof = static_cast<std::int64_t>(ofree.size());
  const auto nc = static_cast<std::int64_t>(sc.size());
  // Axes of ct: [lhs free, rhs free, batch].
  const std::int64_t lf = self_is_lhs ? nsf : nof;
  Axes ct_self_free, ct_other_free, ct_batch;
  for (std::int64_t i = 0; i < nsf; ++i) ct_self_free.push_back(self_is_lhs ? i : lf + i);
  for (std::int64_t i = 0; i < nof; ++i) ct_other_free.push_back(self_is_lhs ? nsf + i : i);
  for (std::size_t k = 0; k < sb.size(); ++k)
    ct_batch.push_back(nsf + nof + static_cast<std::int64_t>(k));
  const Val oc_val = conj_c(e, other);
  Val r;
  Axes perm(static_cast<std::size_t>(self_rank));
  if (self_is_lhs) {
    r = e.dot_general(ct, oc_val, DotDims{ct_other_free, ofree, ct_batch, ob});
    for (std::int64_t d = 0; d < self_rank; ++d) {
      std::int64_t pos;
      if (std::int64_t i = index_of(sfree, d); i >= 0) {
        pos = i;
      } else if (std::int64_t k = index_of(sc, d); k >= 0) {
        pos = nsf + rank_among(oc, oc[static_cast<std::size_t>(k)]);
      } else {
        pos = nsf + nc + index_of(sb, d);
      }
      perm[static_cast<std::size_t>(d)] = pos;
    }
  } else {
    r = e.dot_general(oc_val, ct, DotDims{ofree, ct_other_free, ob, ct_batch});
    for (std::int64_t d = 0; d < self_rank; ++d) {
      std::int64_t pos;
      if (std::int64_t k = index_of(sc, d); k >= 0) {
        pos = rank_among(oc, oc[static_cast<std::size_t>(k)]);
      } else if (std::int64_t i = index_of(sfree, d); i >= 0) {
        pos = nc + i;
      } else {
        pos = nc + nsf + index_of(sb, d);
      }
      perm[static_cast<std::size_t>(d)] = pos;
    }
  }
  // Operand axis d is result axis perm[d]; transpose takes out[i] = in[q[i]].
  return e.transpose(r, perm);
}

RuleSet dot_general_rule() {
  return linear_rule(
      [](const RuleArgs& a, Tangents t) -> Out {
        Emitter& e = a.emitter;
        const DotDims& dims = params<prim::DotGeneral>(a).dims;
        MaybeVal out;
        if (t[0]) out = e.dot_general(*t[0], a.inputs[1], dims);
        if (t[1]) out = add_maybe(e, out, e.dot_general(a.inputs[0], *t[1], dims));
        return {out};
      },
      [](const RuleArgs& a, std::span<const bool> lin, Tangents ct) -> Out {
        if (!ct[0]) return {std::nullopt, std::nullopt};
        if (lin[0] && lin[1])
          fail(ErrorKind::Internal, "dot_general", "transpose of a product of two linear values");
        Emitter& e = a.emitter;
        const DotDims& d = params<prim::DotGeneral>(a).dims;
        const std::int64_t lr = in_meta(a, 0).rank(), rr = in_meta(a, 1).rank();
        const Axes lc = normalized_axes(d.lhs_contracting, lr),
                   rc = normalized_axes(d.rhs_contracting, rr);
        const Axes lb = normalized_axes(d.lhs_batch, lr), rb = normalized_axes(d.rhs_batch, rr);
        if (lin[0])
          return {dot_transpose(e, *ct[0], a.inputs[1], true, lc, lb, lr, rc, rb, rr),
                  std::nullopt};
        return {std::nullopt, dot_transpose(e, *ct[0], a.inputs[0], false, rc, rb, rr, lc, lb, lr)};
      },
      Residuals::of({0, 1}, {}));
}

}  // namespace

}  // namespace tenferro::ad::core

// ---- the kinds' rule hooks -------------------------------------------------------------

namespace tenferro {

using namespace ad::core;

ad::RuleSet prim::Reduce::rules(std::int32_t kind) {
  switch (static_cast<ReduceOp>(kind)) {
    case ReduceOp::Sum:
    case ReduceOp::Mean:
      return with_vjp(sum_rule(static_cast<ReduceOp>(kind)));
    case ReduceOp::Prod:
      return prod_rule();
    case ReduceOp::Max:
    case ReduceOp::Min:
      return extremum_rule();
    case ReduceOp::LogSumExp:
      return logsumexp_rule();
    case ReduceOp::All:
    case ReduceOp::Any:
      break;
  }
  return non_differentiable();
}

ad::RuleSet prim::Variance::rules(std::int32_t kind) {
  return variance_rule(kind != 0);
}
ad::RuleSet prim::ArgReduce::rules(std::int32_t) {
  return non_differentiable();
}
ad::RuleSet prim::DotGeneral::rules(std::int32_t) {
  return with_vjp(dot_general_rule());
}

}  // namespace tenferro
