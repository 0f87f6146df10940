// register_core_rules and the helpers shared by the core rule files.

#include <utility>
#include <variant>

#include "ad/rules/core.hpp"

namespace tenferro::ad {

namespace core {

std::int64_t static_extent(const RuleArgs& a, const SymDim& d, const char* what) {
  if (!d.is_constant()) {
    fail(ErrorKind::Unsupported, std::string(a.op.name()), what, " needs a static extent, got ",
         d.to_string(), "; bind the symbolic size before differentiating");
  }
  return d.constant();
}

Axes normalized_axes(std::span<const std::int64_t> axes, std::int64_t rank) {
  Axes out;
  for (std::int64_t a : axes) out.push_back(a < 0 ? a + rank : a);
  return out;
}

namespace {
bool contains(const Axes& axes, std::int64_t a) {
  for (std::int64_t x : axes) {
    if (x == a) return true;
  }
  return false;
}
}  // namespace

Val unreduce(Emitter& e, Val v, const SymShape& full, const Axes& axes, bool keepdim) {
  if (e.has_shape(v, full)) return v;
  Axes dims;
  for (std::size_t d = 0; d < full.size(); ++d) {
    if (keepdim || !contains(axes, static_cast<std::int64_t>(d)))
      dims.push_back(static_cast<std::int64_t>(d));
  }
  return e.broadcast_in_dim(v, full, dims);
}

Val reduced_count(Emitter& e, const SymShape& shape, const Axes& axes, DType dtype) {
  std::int64_t n = 1;
  bool known = true;
  for (std::int64_t a : axes) {
    const SymDim& d = shape[static_cast<std::size_t>(a)];
    if (!d.is_constant()) {
      known = false;
      break;
    }
    n *= d.constant();
  }
  if (known) return e.scalar(static_cast<double>(n), dtype);
  // A symbolic extent: count by summing ones (only for unbound sizes).
  return e.sum(e.full(shape, 1.0, dtype), axes, /*keepdim=*/false);
}

RuleSet jvp_rule(JvpRule jvp, Residuals residuals) {
  RuleSet r;
  r.jvp = [inner = std::move(jvp)](const RuleArgs& a, std::span<const MaybeVal> tangents) {
    std::vector<MaybeVal> out = inner(a, tangents);
    for (std::size_t j = 0; j < out.size() && j < a.output_metas.size(); ++j) {
      if (!out[j]) continue;
      const TensorMeta& m = a.output_metas[j];
      Val t = *out[j];
      if (!a.emitter.has_shape(t, m.shape)) t = a.emitter.broadcast_to(t, m.shape);
      out[j] = a.emitter.to_dtype(t, m.dtype);
    }
    return out;
  };
  r.residuals = residuals;
  return r;
}

RuleSet linear_rule(JvpRule jvp, TransposeRule transpose, Residuals residuals) {
  RuleSet r = jvp_rule(std::move(jvp), residuals);
  r.transpose = [inner = std::move(transpose)](const RuleArgs& a, std::span<const bool> linear,
                                               std::span<const MaybeVal> cts) {
    std::vector<MaybeVal> out = inner(a, linear, cts);
    out.resize(a.inputs.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (!out[i]) continue;
      if (i >= linear.size() || !linear[i]) {
        out[i].reset();
        continue;
      }
      const TensorMeta& m = in_meta(a, i);
      out[i] = a.emitter.to_dtype(a.emitter.sum_to(*out[i], m.shape), m.dtype);
    }
    return out;
  };
  return r;
}

void add_vjp_from_transpose(RuleSet& r) {
  // For ops that are linear in each input separately (given the other
  // inputs), J^T ct per input is the transpose with only that input linear:
  // the same math as linearise-then-transpose without building the tape.
  r.vjp = [transpose = r.transpose](const RuleArgs& a, std::span<const MaybeVal> cts) {
    std::vector<MaybeVal> out(a.inputs.size());
    bool mask[8] = {};
    for (std::size_t i = 0; i < out.size() && i < 8; ++i) {
      if (!a.wants(i) || !is_inexact(in_meta(a, i).dtype)) continue;
      mask[i] = true;
      out[i] = transpose(a, std::span<const bool>(mask, out.size()), cts)[i];
      mask[i] = false;
    }
    return out;
  };
}

RuleSet non_differentiable() {
  RuleSet r;
  r.non_differentiable = true;
  r.residuals = Residuals::none();
  return r;
}

}  // namespace core

namespace {
// Every named kind of P under its name, with the rules its hook gives.
template <class P>
void register_kinds(AdContext& ctx) {
  for (std::int32_t k = 0; k < prim::kinds_of<P>(); ++k)
    ctx.register_rules(std::string(PrimitiveOp(prim::with_kind<P>(k)).name()), P::rules(k));
}
}  // namespace

void register_core_rules(AdContext& ctx) {
  // The catalog's every kind: a kind without rules does not link.
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (register_kinds<std::variant_alternative_t<I, prim::Params>>(ctx), ...);
  }
  (std::make_index_sequence<std::variant_size_v<prim::Params>>{});
}

}  // namespace tenferro::ad
