// Shape and dtype inference of the layout primitives (transpose, reshape,
// broadcast_in_dim, slice, pad, concatenate, reverse, gather/scatter,
// diagonal, triangle). The rules follow structural.hpp; extents that are
// symbolic turn equality requirements into constraints.

#include "ops/primitive_infer.hpp"

namespace tenferro::detail {

namespace {

std::string axis_text(std::int64_t d) {
  return "axis " + std::to_string(d);
}

void require_entries(const InferContext& ctx, std::span<const std::int64_t> list, std::int64_t rank,
                     const char* what) {
  if (static_cast<std::int64_t>(list.size()) != rank) {
    fail(ErrorKind::RankMismatch, ctx.op, what, " has ", list.size(),
         " entries but the tensor has rank ", rank, "; give one per axis");
  }
}

void require_index_dtype(const InferContext& ctx, const TensorMeta& index) {
  if (index.dtype != DType::I32 && index.dtype != DType::I64) {
    fail(ErrorKind::DTypeMismatch, ctx.op, "index dtype must be i32 or i64, got ",
         name(index.dtype), "; cast the indices first");
  }
}

void require_same_rank(const InferContext& ctx, const TensorMeta& x, const TensorMeta& other,
                       const char* what) {
  if (other.rank() != x.rank()) {
    fail(ErrorKind::RankMismatch, ctx.op, what, " has rank ", other.rank(), " but x has rank ",
         x.rank(), "; they must match");
  }
}

void require_rank_at_least(const InferContext& ctx, const TensorMeta& x, std::int64_t rank,
                           const char* layout) {
  if (x.rank() < rank) {
    fail(ErrorKind::RankMismatch, ctx.op, "needs a tensor ", layout, " of rank >= ", rank,
         ", got rank ", x.rank());
  }
}

}  // namespace

}  // namespace tenferro::detail

namespace tenferro {

using namespace detail;

void prim::Transpose::infer(const Transpose& p, InferContext& ctx) {
  const TensorMeta& x = ctx.in[0];
  if (static_cast<std::int64_t>(p.perm.size()) != x.rank()) {
    fail(ErrorKind::RankMismatch, ctx.op, "permutation ", axes_to_string(p.perm), " has ",
         p.perm.size(), " axes but the tensor has rank ", x.rank());
  }
  const Axes perm = normalize_axes_for(ctx, p.perm, x.rank());
  SymShape out;
  for (std::int64_t a : perm) out.push_back(x.shape[static_cast<std::size_t>(a)]);
  ctx.emit(x.dtype, std::move(out));
}

void prim::Reshape::infer(const Reshape& p, InferContext& ctx) {
  const TensorMeta& x = ctx.in[0];
  require_nonnegative(ctx.op, p.shape, "target shape");
  const SymDim from = numel(x.shape), to = numel(p.shape);
  if (!(from == to)) {
    if (from.is_constant() && to.is_constant()) {
      fail(ErrorKind::ShapeMismatch, ctx.op, "cannot reshape ", to_string(x.shape), " (",
           from.constant(), " elements) to ", to_string(p.shape), " (", to.constant(),
           " elements)");
    }
    ctx.result.constraints.push_back(
        ShapeConstraint::dims_equal(from, to,
                                    "reshape of " + to_string(x.shape) + " to " +
                                        to_string(p.shape) + " must keep the element count"));
  }
  ctx.emit(x.dtype, p.shape);
}

void prim::BroadcastInDim::infer(const BroadcastInDim& p, InferContext& ctx) {
  const TensorMeta& x = ctx.in[0];
  if (static_cast<std::int64_t>(p.dims.size()) != x.rank()) {
    fail(ErrorKind::RankMismatch, ctx.op, "dims has ", p.dims.size(),
         " entries but the operand has rank ", x.rank(),
         "; give the result axis of every operand axis");
  }
  require_nonnegative(ctx.op, p.shape, "shape");
  const auto out_rank = static_cast<std::int64_t>(p.shape.size());
  for (std::size_t i = 0; i < p.dims.size(); ++i) {
    const std::int64_t d = p.dims[i];
    if (d < 0 || d >= out_rank) {
      fail(ErrorKind::AxisOutOfBounds, ctx.op, "dims[", i, "] = ", d,
           " is not an axis of the rank ", out_rank, " result");
    }
    if (i > 0 && d <= p.dims[i - 1]) {
      fail(ErrorKind::InvalidArgument, ctx.op, "dims must be strictly increasing, got ",
           axes_to_string(p.dims));
    }
  }
  // Extents only after every dim is valid: the same order (and kind) as the direct tier.
  for (std::size_t i = 0; i < p.dims.size(); ++i) {
    const std::int64_t d = p.dims[i];
    const SymDim& e = x.shape[i];
    const SymDim& target = p.shape[static_cast<std::size_t>(d)];
    if (e.try_constant() == 1) continue;
    ctx.require_equal(e, target,
                      "operand axis " + std::to_string(i) + " against result axis " +
                          std::to_string(d) + " (it must be 1 or equal)");
  }
  ctx.emit(x.dtype, p.shape);
}

void prim::Slice::infer(const Slice& p, InferContext& ctx) {
  const TensorMeta& x = ctx.in[0];
  require_entries(ctx, p.start, x.rank(), "start");
  require_entries(ctx, p.limit, x.rank(), "limit");
  require_entries(ctx, p.stride, x.rank(), "stride");
  SymShape out;
  for (std::size_t d = 0; d < p.start.size(); ++d) {
    const std::int64_t start = p.start[d], limit = p.limit[d], stride = p.stride[d];
    if (stride <= 0) {
      fail(ErrorKind::InvalidArgument, ctx.op, "stride[", d, "] = ", stride,
           " must be positive; use reverse for backward steps");
    }
    if (start < 0) {
      fail(ErrorKind::AxisOutOfBounds, ctx.op, "axis ", d, " start ", start, " is negative");
    }
    ctx.require_at_most(SymDim(limit), x.shape[d],
                        "axis " + std::to_string(d) + " slice limit against the extent",
                        ErrorKind::AxisOutOfBounds);
    if (start > limit) {
      fail(ErrorKind::InvalidArgument, ctx.op, "axis ", d, " start ", start, " exceeds limit ",
           limit);
    }
    // ceil((limit - start) / stride) without overflow (stride may be INT64_MAX).
    out.push_back(SymDim(limit == start ? 0 : 1 + (limit - start - 1) / stride));
  }
  ctx.emit(x.dtype, std::move(out));
}

void prim::Pad::infer(const Pad& p, InferContext& ctx) {
  const TensorMeta& x = ctx.in[0];
  require_entries(ctx, p.low, x.rank(), "low");
  require_entries(ctx, p.high, x.rank(), "high");
  if (!p.interior.empty()) require_entries(ctx, p.interior, x.rank(), "interior");
  check_fill_value(ctx.op, p.value, x.dtype);
  SymShape out;
  for (std::size_t d = 0; d < p.low.size(); ++d) {
    const SymDim& n = x.shape[d];
    const std::int64_t gap = p.interior.empty() ? 0 : p.interior[d];
    if (gap < 0) {
      fail(ErrorKind::InvalidArgument, ctx.op, "interior[", d, "] = ", gap, " must be >= 0");
    }
    SymDim extent = n + SymDim(checked_add(p.low[d], p.high[d], ctx.op.c_str()));
    if (gap > 0) extent = extent + max(n - SymDim(1), SymDim(0)) * SymDim(gap);
    if (extent.is_constant() && extent.constant() < 0) {
      fail(ErrorKind::InvalidArgument, ctx.op, "axis ", d, " would have negative extent ",
           extent.constant(), "; crop less with negative low/high");
    }
    out.push_back(extent);
  }
  ctx.emit(x.dtype, std::move(out));
}

void prim::Concatenate::infer(const Concatenate& p, InferContext& ctx) {
  if (ctx.in.empty()) {
    fail(ErrorKind::InvalidArgument, ctx.op, "needs at least one tensor; set count >= 1");
  }
  const TensorMeta& x0 = ctx.in[0];
  const auto a = static_cast<std::size_t>(normalize_axis_for(ctx, p.axis, x0.rank()));
  DType dtype = x0.dtype;
  SymShape out = x0.shape;
  out[a] = SymDim(0);
  for (std::size_t i = 0; i < ctx.in.size(); ++i) {
    const TensorMeta& x = ctx.in[i];
    if (x.rank() != x0.rank()) {
      fail(ErrorKind::RankMismatch, ctx.op, "input ", i, " has rank ", x.rank(),
           " but input 0 has rank ", x0.rank());
    }
    for (std::size_t d = 0; d < out.size(); ++d) {
      if (d == a) continue;
      ctx.require_equal(x.shape[d], x0.shape[d],
                        "input " + std::to_string(i) + " against input 0 on " +
                            axis_text(static_cast<std::int64_t>(d)) + " (only axis " +
                            std::to_string(a) + " may differ)");
    }
    dtype = promote_types(dtype, x.dtype);
    out[a] = out[a] + x.shape[a];
  }
  ctx.emit(dtype, std::move(out));
}

void prim::Reverse::infer(const Reverse& p, InferContext& ctx) {
  const TensorMeta& x = ctx.in[0];
  (void)normalize_axes_for(ctx, p.axes, x.rank());
  ctx.emit(x.dtype, x.shape);
}

void prim::IndexSelect::infer(const IndexSelect& p, InferContext& ctx) {
  const TensorMeta &x = ctx.in[0], &index = ctx.in[1];
  require_index_dtype(ctx, index);
  if (index.rank() != 1) {
    fail(ErrorKind::RankMismatch, ctx.op, "index must be 1-D, got shape ", to_string(index.shape),
         "; use take_along_axis for an index per element");
  }
  const auto a = static_cast<std::size_t>(normalize_axis_for(ctx, p.axis, x.rank()));
  SymShape out = x.shape;
  out[a] = index.shape[0];
  ctx.emit(x.dtype, std::move(out));
}

void prim::TakeAlongAxis::infer(const TakeAlongAxis& p, InferContext& ctx) {
  const TensorMeta &x = ctx.in[0], &index = ctx.in[1];
  require_index_dtype(ctx, index);
  require_same_rank(ctx, x, index, "index");
  const std::int64_t a = normalize_axis_for(ctx, p.axis, x.rank());
  for (std::int64_t d = 0; d < x.rank(); ++d) {
    const auto ud = static_cast<std::size_t>(d);
    if (d != a) ctx.require_equal(index.shape[ud], x.shape[ud], "index and x on " + axis_text(d));
  }
  ctx.emit(x.dtype, index.shape);
}

void prim::ScatterAdd::infer(const ScatterAdd& p, InferContext& ctx) {
  const TensorMeta &x = ctx.in[0], &index = ctx.in[1], &src = ctx.in[2];
  require_index_dtype(ctx, index);
  require_same_rank(ctx, x, index, "index");
  require_same_rank(ctx, x, src, "src");
  for (std::int64_t d = 0; d < x.rank(); ++d) {
    const auto ud = static_cast<std::size_t>(d);
    ctx.require_equal(index.shape[ud], src.shape[ud], "index and src on " + axis_text(d));
  }
  const std::int64_t a = normalize_axis_for(ctx, p.axis, x.rank());
  for (std::int64_t d = 0; d < x.rank(); ++d) {
    const auto ud = static_cast<std::size_t>(d);
    if (d != a) {
      ctx.require_at_most(index.shape[ud], x.shape[ud],
                          "index extent against x extent on " + axis_text(d) +
                              " (off the scatter axis index must fit in x)",
                          ErrorKind::ShapeMismatch);
    }
  }
  ctx.emit(promote_types(x.dtype, src.dtype), x.shape);
}

void prim::Diagonal::infer(const Diagonal& p, InferContext& ctx) {
  const TensorMeta& x = ctx.in[0];
  const auto a = static_cast<std::size_t>(normalize_axis_for(ctx, p.axis1, x.rank()));
  const auto b = static_cast<std::size_t>(normalize_axis_for(ctx, p.axis2, x.rank()));
  if (a == b) fail(ErrorKind::DuplicateAxis, ctx.op, "axis1 and axis2 are both ", a);
  const SymDim &n1 = x.shape[a], &n2 = x.shape[b];
  const SymDim off(p.offset);
  SymDim len = p.offset >= 0 ? min(n1, n2 - off) : min(n1 + off, n2);
  // Extents are non-negative, so only a shifted diagonal can run empty.
  if (p.offset != 0) len = max(SymDim(0), len);
  SymShape out{len};
  for (std::size_t d = 0; d < x.shape.size(); ++d) {
    if (d != a && d != b) out.push_back(x.shape[d]);
  }
  ctx.emit(x.dtype, std::move(out));
}

void prim::DiagEmbed::infer(const DiagEmbed& p, InferContext& ctx) {
  const TensorMeta& x = ctx.in[0];
  require_rank_at_least(ctx, x, 1, "[n, batch...]");
  if (p.offset == INT64_MIN) {
    fail(ErrorKind::InvalidArgument, ctx.op, "offset ", p.offset, " is out of range");
  }
  const SymDim n = x.shape[0] + SymDim(p.offset < 0 ? -p.offset : p.offset);
  SymShape out{n, n};
  for (std::size_t d = 1; d < x.shape.size(); ++d) out.push_back(x.shape[d]);
  ctx.emit(x.dtype, std::move(out));
}

void prim::Triangle::infer(const Triangle&, InferContext& ctx) {
  const TensorMeta& x = ctx.in[0];
  require_rank_at_least(ctx, x, 2, "[m, n, batch...]");
  ctx.emit(x.dtype, x.shape);
}

}  // namespace tenferro
