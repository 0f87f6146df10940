// AD rules of the layout primitives, gathers/scatters, dtype conversion and
// constants. All of them are linear in their data inputs (index inputs and
// parameters are constants), so each has a jvp that applies the op to the
// tangent and a transpose rule. Transposes that re-create a larger shape
// (slice, pad, concatenate, diagonal) need static extents and are
// Unsupported on unbound symbolic sizes.

#include <algorithm>
#include <functional>

#include "ad/rules/core.hpp"

namespace tenferro::ad::core {

namespace {

using Tangents = std::span<const MaybeVal>;
using Out = std::vector<MaybeVal>;
using Linear = std::span<const bool>;

Val emit_prim(Emitter& e, prim::Params p, std::initializer_list<Val> in) {
  return e.emit1(make_primitive(std::move(p)), std::span<const Val>(in.begin(), in.size()));
}

// An op with one data input whose jvp re-applies the op and whose transpose
// is given by `tr`.
template <class P>
RuleSet unary_linear(std::function<Val(const RuleArgs&, Val ct)> tr) {
  return linear_rule(
      [](const RuleArgs& a, Tangents t) -> Out {
        if (!t[0]) return {std::nullopt};
        return {emit_prim(a.emitter, params<P>(a), {*t[0]})};
      },
      [tr = std::move(tr)](const RuleArgs& a, Linear, Tangents ct) -> Out {
        if (!ct[0]) return {std::nullopt};
        return {tr(a, *ct[0])};
      });
}

Val zeros_of(Emitter& e, const SymShape& shape, DType dtype) {
  return e.full(shape, 0.0, dtype);
}

RuleSet transpose_rule() {
  return unary_linear<prim::Transpose>([](const RuleArgs& a, Val ct) {
    const Axes perm = normalized_axes(params<prim::Transpose>(a).perm, in_meta(a, 0).rank());
    Axes inv(perm.size());
    for (std::size_t i = 0; i < perm.size(); ++i)
      inv[static_cast<std::size_t>(perm[i])] = static_cast<std::int64_t>(i);
    return a.emitter.transpose(ct, inv);
  });
}

RuleSet reshape_rule() {
  return unary_linear<prim::Reshape>(
      [](const RuleArgs& a, Val ct) { return a.emitter.reshape(ct, in_meta(a, 0).shape); });
}

RuleSet broadcast_rule() {
  // Sum over the new axes and the axes broadcast from extent 1, then restore
  // the operand's shape (its kept axes are in order since dims increase).
  return unary_linear<prim::BroadcastInDim>([](const RuleArgs& a, Val ct) {
    const auto& p = params<prim::BroadcastInDim>(a);
    const SymShape& x = in_meta(a, 0).shape;
    const SymShape& out = out_meta(a).shape;
    Axes axes;
    for (std::size_t d = 0; d < out.size(); ++d) {
      const auto it = std::find(p.dims.begin(), p.dims.end(), static_cast<std::int64_t>(d));
      if (it == p.dims.end()) {
        axes.push_back(static_cast<std::int64_t>(d));
      } else {
        const SymDim& e = x[static_cast<std::size_t>(it - p.dims.begin())];
        if (e.try_constant() == 1 && !(out[d].try_constant() == 1))
          axes.push_back(static_cast<std::int64_t>(d));
      }
    }
    return a.emitter.reshape(a.emitter.sum(ct, axes), x);
  });
}

RuleSet slice_rule() {
  // Transpose: zero padding, with stride - 1 interior zeros between entries.
  return unary_linear<prim::Slice>([](const RuleArgs& a, Val ct) {
    const auto& p = params<prim::Slice>(a);
    const SymShape& x = in_meta(a, 0).shape;
    Shape low, high, interior;
    for (std::size_t d = 0; d < x.size(); ++d) {
      const std::int64_t n = static_extent(a, x[d], "the transpose of slice");
      // k = ceil((limit - start) / stride) without overflow (stride may be
      // INT64_MAX); with k <= 1 no gaps are needed, and none are padded.
      const std::int64_t span = p.limit[d] - p.start[d];
      const std::int64_t k = span == 0 ? 0 : 1 + (span - 1) / p.stride[d];
      low.push_back(p.start[d]);
      high.push_back(n - p.start[d] - (k > 0 ? (k - 1) * p.stride[d] + 1 : 0));
      interior.push_back(k > 1 ? p.stride[d] - 1 : 0);
    }
    return emit_prim(a.emitter, prim::Pad{low, high, interior, Scalar(0.0)}, {ct});
  });
}

RuleSet pad_rule() {
  // jvp pads with zeros (the pad value is a constant). Transpose: undo the
  // cropping of negative pads with zeros, then take every (interior + 1)-th
  // entry from max(low, 0).
  return linear_rule(
      [](const RuleArgs& a, Tangents t) -> Out {
        if (!t[0]) return {std::nullopt};
        prim::Pad p = params<prim::Pad>(a);
        p.value = Scalar(0.0);
        return {emit_prim(a.emitter, p, {*t[0]})};
      },
      [](const RuleArgs& a, Linear, Tangents ct) -> Out {
        if (!ct[0]) return {std::nullopt};
        const auto& p = params<prim::Pad>(a);
        const SymShape& x = in_meta(a, 0).shape;
        Shape ulow, uhigh, start, limit, stride;
        bool crops = false;
        for (std::size_t d = 0; d < x.size(); ++d) {
          const std::int64_t n = static_extent(a, x[d], "the transpose of pad");
          const std::int64_t g = p.interior.empty() ? 0 : p.interior[d];
          ulow.push_back(std::max<std::int64_t>(-p.low[d], 0));
          uhigh.push_back(std::max<std::int64_t>(-p.high[d], 0));
          crops |= ulow.back() > 0 || uhigh.back() > 0;
          start.push_back(std::max<std::int64_t>(p.low[d], 0));
          limit.push_back(start.back() + (n > 0 ? (n - 1) * (g + 1) + 1 : 0));
          stride.push_back(g + 1);
        }
        Val c = *ct[0];
        if (crops) c = emit_prim(a.emitter, prim::Pad{ulow, uhigh, {}, Scalar(0.0)}, {c});
        return {emit_prim(a.emitter, prim::Slice{start, limit, stride}, {c})};
      });
}

RuleSet concatenate_rule() {
  return linear_rule(
      [](const RuleArgs& a, Tangents t) -> Out {
        bool any = false;
        for (const auto& ti : t) any |= ti.has_value();
        if (!any) return {std::nullopt};
        Emitter& e = a.emitter;
        const DType dt = out_meta(a).dtype;
        std::vector<Val> parts;
        for (std::size_t i = 0; i < t.size(); ++i) {
          parts.push_back(t[i] ? e.to_dtype(*t[i], dt) : zeros_of(e, in_meta(a, i).shape, dt));
        }
        return {e.emit1(make_primitive(params<prim::Concatenate>(a)), parts)};
      },
      [](const RuleArgs& a, Linear lin, Tangents ct) -> Out {
        Out out(a.inputs.size());
        if (!ct[0]) return out;
        const auto& p = params<prim::Concatenate>(a);
        const SymShape& y = out_meta(a).shape;
        const auto axis = static_cast<std::size_t>(
            p.axis < 0 ? p.axis + static_cast<std::int64_t>(y.size()) : p.axis);
        Shape start(y.size(), 0), limit, stride(y.size(), 1);
        for (const SymDim& d : y)
          limit.push_back(static_extent(a, d, "the transpose of concatenate"));
        std::int64_t offset = 0;
        for (std::size_t i = 0; i < out.size(); ++i) {
          const std::int64_t n =
              static_extent(a, in_meta(a, i).shape[axis], "the transpose of concatenate");
          if (lin[i]) {
            start[axis] = offset;
            limit[axis] = offset + n;
            out[i] = emit_prim(a.emitter, prim::Slice{start, limit, stride}, {*ct[0]});
          }
          offset += n;
        }
        return out;
      });
}

RuleSet tile_rule() {
  // Transpose: the cotangent seen as [x0, r0, x1, r1, ...], summed over the
  // repeat axes.
  return unary_linear<prim::Tile>([](const RuleArgs& a, Val ct) {
    const auto& p = params<prim::Tile>(a);
    const SymShape& x = in_meta(a, 0).shape;
    SymShape split;
    Axes repeats;
    for (std::size_t d = 0; d < x.size(); ++d) {
      split.push_back(x[d]);
      split.push_back(SymDim(p.reps[d]));
      repeats.push_back(static_cast<std::int64_t>(2 * d + 1));
    }
    return a.emitter.sum(a.emitter.reshape(ct, split), repeats);
  });
}

RuleSet reverse_rule() {
  return unary_linear<prim::Reverse>([](const RuleArgs& a, Val ct) {
    return emit_prim(a.emitter, params<prim::Reverse>(a), {ct});
  });
}

std::int64_t norm_axis(std::int64_t axis, std::int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

// Gathers: linear in x (input 0), the index (input 1) is a residual.
template <class P>
RuleSet gather_rule(bool index_is_1d) {
  return linear_rule(
      [](const RuleArgs& a, Tangents t) -> Out {
        if (!t[0]) return {std::nullopt};
        return {emit_prim(a.emitter, params<P>(a), {*t[0], a.inputs[1]})};
      },
      [index_is_1d](const RuleArgs& a, Linear, Tangents ct) -> Out {
        if (!ct[0]) return {std::nullopt, std::nullopt};
        Emitter& e = a.emitter;
        const TensorMeta& x = in_meta(a, 0);
        const std::int64_t axis = norm_axis(params<P>(a).axis, x.rank());
        Val index = a.inputs[1];
        if (index_is_1d) index = e.broadcast_in_dim(index, e.meta(*ct[0]).shape, {axis});
        const Val z = zeros_of(e, x.shape, e.dtype_of(*ct[0]));
        return {emit_prim(e, prim::ScatterAdd{axis}, {z, index, *ct[0]}), std::nullopt};
      },
      Residuals::of({1}, {}));
}

RuleSet scatter_add_rule() {
  // Linear in x and src. Transpose: x gets the cotangent, src gathers it at
  // the index (off the axis the index may be shorter than x: slice first).
  return linear_rule(
      [](const RuleArgs& a, Tangents t) -> Out {
        if (!t[2]) return {t[0]};
        Emitter& e = a.emitter;
        const Val base = t[0] ? *t[0] : zeros_of(e, in_meta(a, 0).shape, out_meta(a).dtype);
        return {emit_prim(e, params<prim::ScatterAdd>(a), {base, a.inputs[1], *t[2]})};
      },
      [](const RuleArgs& a, Linear lin, Tangents ct) -> Out {
        Out out(3);
        if (!ct[0]) return out;
        if (lin[0]) out[0] = ct[0];
        if (!lin[2]) return out;
        Emitter& e = a.emitter;
        const TensorMeta& x = in_meta(a, 0);
        const SymShape& idx = in_meta(a, 1).shape;
        const std::int64_t axis = norm_axis(params<prim::ScatterAdd>(a).axis, x.rank());
        Val c = *ct[0];
        bool same = true;
        for (std::size_t d = 0; d < idx.size(); ++d)
          same &= static_cast<std::int64_t>(d) == axis || idx[d] == x.shape[d];
        if (!same) {
          Shape start(idx.size(), 0), limit, stride(idx.size(), 1);
          for (std::size_t d = 0; d < idx.size(); ++d) {
            const SymDim& ext = static_cast<std::int64_t>(d) == axis ? x.shape[d] : idx[d];
            limit.push_back(static_extent(a, ext, "the transpose of scatter_add"));
          }
          c = emit_prim(e, prim::Slice{start, limit, stride}, {c});
        }
        out[2] = emit_prim(e, prim::TakeAlongAxis{axis}, {c, a.inputs[1]});
        return out;
      },
      Residuals::of({1}, {}));
}

RuleSet diagonal_rule() {
  // Transpose: embed the cotangent on the offset diagonal of an
  // [n1, n2, rest...] block (diag_embed gives a square block; pad or crop its
  // zero margins), then move the two axes back to axis1 and axis2.
  return unary_linear<prim::Diagonal>([](const RuleArgs& a, Val ct) {
    Emitter& e = a.emitter;
    const auto& p = params<prim::Diagonal>(a);
    const TensorMeta& x = in_meta(a, 0);
    const std::int64_t r = x.rank();
    const std::int64_t a1 = norm_axis(p.axis1, r), a2 = norm_axis(p.axis2, r);
    const std::int64_t n1 =
        static_extent(a, x.shape[static_cast<std::size_t>(a1)], "the transpose of diagonal");
    const std::int64_t n2 =
        static_extent(a, x.shape[static_cast<std::size_t>(a2)], "the transpose of diagonal");
    const std::int64_t len = static_extent(a, out_meta(a).shape[0], "the transpose of diagonal");
    // An empty diagonal (the offset past the block, possibly by 2^62 or
    // INT64_MIN) takes nothing from x: zeros, no block of |offset| rows.
    if (len == 0) return e.full(x.shape, Scalar(0.0), x.dtype);
    const std::int64_t m = len + (p.offset < 0 ? -p.offset : p.offset);
    Val block = emit_prim(e, prim::DiagEmbed{p.offset}, {ct});
    if (n1 != m || n2 != m) {
      Shape low(static_cast<std::size_t>(r), 0), high(static_cast<std::size_t>(r), 0);
      high[0] = n1 - m;
      high[1] = n2 - m;
      block = emit_prim(e, prim::Pad{low, high, {}, Scalar(0.0)}, {block});
    }
    Axes perm;
    std::int64_t next = 2;
    for (std::int64_t d = 0; d < r; ++d) perm.push_back(d == a1 ? 0 : d == a2 ? 1 : next++);
    return e.transpose(block, perm);
  });
}

RuleSet diag_embed_rule() {
  return unary_linear<prim::DiagEmbed>([](const RuleArgs& a, Val ct) {
    return emit_prim(a.emitter, prim::Diagonal{params<prim::DiagEmbed>(a).offset, 0, 1}, {ct});
  });
}

RuleSet triangle_rule() {
  // A mask, hence self-adjoint.
  return unary_linear<prim::Triangle>([](const RuleArgs& a, Val ct) {
    return emit_prim(a.emitter, params<prim::Triangle>(a), {ct});
  });
}

RuleSet convert_rule() {
  // jvp converts the tangent (none for integer/bool targets); the transpose
  // converts back, taking the real part for complex -> real (wrapper).
  return linear_rule(
      [](const RuleArgs& a, Tangents t) -> Out {
        const auto& p = params<prim::Convert>(a);
        if (!t[0] || !is_inexact(p.dtype)) return {std::nullopt};
        return {emit_prim(a.emitter, p, {*t[0]})};
      },
      [](const RuleArgs&, Linear, Tangents ct) -> Out { return {ct[0]}; });
}

RuleSet constant_rule() {
  // No inputs: zero tangent, nothing to transpose.
  return linear_rule([](const RuleArgs&, Tangents) -> Out { return {std::nullopt}; },
                     [](const RuleArgs&, Linear, Tangents) -> Out { return {}; });
}

}  // namespace

}  // namespace tenferro::ad::core

// ---- the kinds' rule hooks -------------------------------------------------------------

namespace tenferro {

using namespace ad::core;

// clang-format off
ad::RuleSet prim::Transpose::rules(std::int32_t) { return with_vjp(transpose_rule()); }
ad::RuleSet prim::Reshape::rules(std::int32_t) { return with_vjp(reshape_rule()); }
ad::RuleSet prim::BroadcastInDim::rules(std::int32_t) { return with_vjp(broadcast_rule()); }
ad::RuleSet prim::Slice::rules(std::int32_t) { return with_vjp(slice_rule()); }
ad::RuleSet prim::Pad::rules(std::int32_t) { return with_vjp(pad_rule()); }
ad::RuleSet prim::Concatenate::rules(std::int32_t) { return with_vjp(concatenate_rule()); }
ad::RuleSet prim::Reverse::rules(std::int32_t) { return with_vjp(reverse_rule()); }
ad::RuleSet prim::Tile::rules(std::int32_t) { return with_vjp(tile_rule()); }
ad::RuleSet prim::IndexSelect::rules(std::int32_t) { return with_vjp(gather_rule<IndexSelect>(true)); }
ad::RuleSet prim::TakeAlongAxis::rules(std::int32_t) { return with_vjp(gather_rule<TakeAlongAxis>(false)); }
ad::RuleSet prim::ScatterAdd::rules(std::int32_t) { return with_vjp(scatter_add_rule()); }
ad::RuleSet prim::Diagonal::rules(std::int32_t) { return with_vjp(diagonal_rule()); }
ad::RuleSet prim::DiagEmbed::rules(std::int32_t) { return with_vjp(diag_embed_rule()); }
ad::RuleSet prim::Triangle::rules(std::int32_t) { return with_vjp(triangle_rule()); }
ad::RuleSet prim::Convert::rules(std::int32_t) { return with_vjp(convert_rule()); }
ad::RuleSet prim::Full::rules(std::int32_t) { return constant_rule(); }
ad::RuleSet prim::Constant::rules(std::int32_t) { return constant_rule(); }
// clang-format on

}  // namespace tenferro
