// The layout primitives (transpose, reshape, broadcast_in_dim, slice, pad,
// concatenate, reverse, tile): inference and execution. Inference follows the
// execution's rules; symbolic extents turn equality requirements into
// constraints. Execution builds a zero-copy view of the input (or of the
// output) and materialises it with one Backend::copy into a fresh tensor.

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ops/infer_context.hpp"
#include "ops/operands.hpp"

namespace tenferro {

using namespace detail;
using prim::Operands;

namespace {

// A parameter shape with its names bound; extents must come out >= 0.
Shape bind(std::string_view op, const SymShape& shape, const DimBindings& bindings) {
  Shape out = evaluate(shape, bindings);
  for (std::int64_t e : out) {
    if (e < 0) {
      fail(ErrorKind::InvalidArgument, std::string(op), "shape ", to_string(shape), " binds to ",
           shape_to_string(out), ", which has a negative extent; check the bound sizes");
    }
  }
  return out;
}

void require_rank(std::span<const std::int64_t> list, std::int64_t rank, const char* op,
                  const char* what) {
  if (static_cast<std::int64_t>(list.size()) != rank) {
    fail(ErrorKind::RankMismatch, op, what, " has ", list.size(),
         " entries but the tensor has rank ", rank, "; give one per axis");
  }
}

// Resolves one -1 in a reshape target against `numel`.
Shape resolve_reshape(std::span<const std::int64_t> shape, const Tensor& x) {
  Shape out(shape);
  std::int64_t known = 1;
  std::int64_t infer = -1;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (infer >= 0) fail(ErrorKind::InvalidArgument, "reshape", "only one extent may be -1");
      infer = static_cast<std::int64_t>(i);
    } else if (out[i] < 0) {
      fail(ErrorKind::InvalidArgument, "reshape", "negative extent ", out[i], " in ",
           shape_to_string(shape));
    }
  }
  // The given extents must be a shape a tensor can have (InvalidArgument, as
  // every shape): their product never overflows into a wrong count.
  Shape given;
  for (const std::int64_t e : out)
    if (e >= 0) given.push_back(e);
  known = shape_numel(given, "reshape");
  const std::int64_t n = x.numel();
  if (infer >= 0) {
    if (known == 0 || n % known != 0) {
      fail(ErrorKind::ShapeMismatch, "reshape", "cannot infer the -1 in ", shape_to_string(shape),
           " for ", n, " elements");
    }
    out[static_cast<std::size_t>(infer)] = n / known;
  } else if (known != n) {
    fail(ErrorKind::ShapeMismatch, "reshape", "cannot reshape ", shape_to_string(x.shape()), " (",
         n, " elements) to ", shape_to_string(shape), " (", known, " elements)");
  }
  return out;
}

// Result dtype of joining `xs` (non-empty, all defined and host-readable).
DType joined_dtype(const Operands& xs, const Backend& backend, const char* op) {
  if (xs.empty()) fail(ErrorKind::InvalidArgument, op, "needs at least one tensor");
  for (std::size_t i = 0; i < xs.size(); ++i) require_operand(xs[i], backend, op, "an input");
  DType dtype = xs[0].dtype();
  for (std::size_t i = 0; i < xs.size(); ++i) dtype = promote_types(dtype, xs[i].dtype());
  return dtype;
}

}  // namespace

// ---- transpose ---------------------------------------------------------------------------

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

Tensor prim::Transpose::execute(const Transpose& p, const Operands& in, Backend& backend,
                                const DimBindings&) {
  const Tensor& x = in[0];
  require_operand(x, backend, "permute");
  return materialize(backend, x.permute(p.perm));  // the view validates the permutation
}

// ---- reshape ------------------------------------------------------------------------------

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

Tensor prim::Reshape::execute(const Reshape& p, const Operands& in, Backend& backend,
                              const DimBindings& bindings) {
  const Tensor& x = in[0];
  require_operand(x, backend, "reshape");
  const Shape target = resolve_reshape(bind(kName, p.shape, bindings), x);
  Tensor out = backend.empty(target, x.dtype());
  // A compact tensor can always be viewed with x's shape: copy into that view.
  backend.copy(x, out.reshape(x.shape()));
  return out;
}

// ---- broadcast_in_dim ---------------------------------------------------------------------------

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

Tensor prim::BroadcastInDim::execute(const BroadcastInDim& p, const Operands& in, Backend& backend,
                                     const DimBindings& bindings) {
  const Tensor& x = in[0];
  const Shape shape = bind(kName, p.shape, bindings);
  const Axes& dims = p.dims;
  const char* op = "broadcast_in_dim";
  require_operand(x, backend, op);
  if (static_cast<std::int64_t>(dims.size()) != x.rank()) {
    fail(ErrorKind::RankMismatch, op, "dims has ", dims.size(),
         " entries but the operand has rank ", x.rank(),
         "; give the result axis of every operand axis");
  }
  for (std::int64_t e : shape) {
    if (e < 0) fail(ErrorKind::InvalidArgument, op, "negative extent in ", shape_to_string(shape));
  }
  shape_numel(shape, op);  // an overflowing size names this op
  const auto out_rank = static_cast<std::int64_t>(shape.size());
  Strides strides(shape.size(), 0);
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const std::int64_t d = dims[i];
    if (d < 0 || d >= out_rank) {
      fail(ErrorKind::AxisOutOfBounds, op, "dims[", i, "] = ", d, " is not an axis of the rank ",
           out_rank, " result");
    }
    if (i > 0 && d <= dims[i - 1]) {
      fail(ErrorKind::InvalidArgument, op, "dims must be strictly increasing, got ",
           shape_to_string(dims));
    }
  }
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const std::int64_t d = dims[i];
    const std::int64_t e = x.shape()[i], target = shape[static_cast<std::size_t>(d)];
    if (e != 1 && e != target) {
      fail(ErrorKind::ShapeMismatch, op, "operand axis ", i, " has extent ", e, " but result axis ",
           d, " has extent ", target, "; it must be 1 or equal");
    }
    // Extent-1 axes broadcast with stride 0; the rest keep their stride.
    if (e == target) strides[static_cast<std::size_t>(d)] = x.strides()[i];
  }
  const Tensor view =
      Tensor::from_storage(x.storage(), x.dtype(), Shape(shape), std::move(strides), x.offset());
  return materialize(backend, view);
}

// ---- slice --------------------------------------------------------------------------------------

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

Tensor prim::Slice::execute(const Slice& p, const Operands& in, Backend& backend,
                            const DimBindings&) {
  const Tensor& x = in[0];
  const Shape &start = p.start, &limit = p.limit, &stride = p.stride;
  const char* op = "slice";
  require_operand(x, backend, op);
  require_rank(start, x.rank(), op, "start");
  require_rank(limit, x.rank(), op, "limit");
  require_rank(stride, x.rank(), op, "stride");
  Tensor view = x;
  for (std::size_t d = 0; d < start.size(); ++d) {
    const std::int64_t n = x.shape()[d];
    if (stride[d] <= 0) {
      fail(ErrorKind::InvalidArgument, op, "stride[", d, "] = ", stride[d],
           " must be positive; use reverse for backward steps");
    }
    if (start[d] < 0 || limit[d] > n) {
      fail(ErrorKind::AxisOutOfBounds, op, "axis ", d, " range [", start[d], ", ", limit[d],
           ") is outside [0, ", n, ")");
    }
    if (start[d] > limit[d]) {
      fail(ErrorKind::InvalidArgument, op, "axis ", d, " start ", start[d], " exceeds limit ",
           limit[d]);
    }
    view = view.slice(static_cast<std::int64_t>(d), start[d], limit[d], stride[d]);
  }
  return materialize(backend, view);
}

// ---- pad
// ------------------------------------------------------------------------------------------

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

Tensor prim::Pad::execute(const Pad& p, const Operands& in, Backend& backend, const DimBindings&) {
  const Tensor& x = in[0];
  const Shape &low = p.low, &high = p.high, &interior = p.interior;
  const Scalar& value = p.value;
  const char* op = "pad";
  require_operand(x, backend, op);
  require_rank(low, x.rank(), op, "low");
  require_rank(high, x.rank(), op, "high");
  if (!interior.empty()) require_rank(interior, x.rank(), op, "interior");
  if (!is_complex(x.dtype()) && value.imag() != 0.0) {
    fail(ErrorKind::DTypeMismatch, op, "value ", value.real(), "+", value.imag(),
         "i is complex but the tensor is ", name(x.dtype()), "; pass a real value");
  }
  if (is_integral(x.dtype()) && is_inexact(value.dtype())) {
    // Converting a non-finite or out-of-range float to an integer is undefined.
    const double limit = x.dtype() == DType::I32 ? 2147483648.0 : 9223372036854775808.0;
    const double v = value.real();
    if (!std::isfinite(v) || std::trunc(v) < -limit || std::trunc(v) >= limit) {
      fail(ErrorKind::InvalidArgument, op, "pad value ", v, " has no ", name(x.dtype()),
           " equivalent; pass a finite value inside the integer range");
    }
  }
  const std::size_t r = low.size();
  Shape out_shape(r, 0);
  // Where x's kept elements land: x[first + i] -> out[pos + i * step], count of them.
  Strides first(r, 0), pos(r, 0), step(r, 1), count(r, 0);
  for (std::size_t d = 0; d < r; ++d) {
    const std::int64_t n = x.shape()[d];
    const std::int64_t gap = interior.empty() ? 0 : interior[d];
    if (gap < 0) {
      fail(ErrorKind::InvalidArgument, op, "interior[", d, "] = ", gap, " must be >= 0");
    }
    if (low[d] == INT64_MIN) {
      fail(ErrorKind::InvalidArgument, op, "low[", d, "] = ", low[d], " is out of range");
    }
    const std::int64_t extent =
        checked_add(checked_add(checked_add(low[d], high[d], op), n, op),
                    checked_mul(std::max<std::int64_t>(n - 1, 0), gap, op), op);
    if (extent < 0) {
      fail(ErrorKind::InvalidArgument, op, "axis ", d, " would have negative extent ", extent,
           "; crop less with negative low/high");
    }
    out_shape[d] = extent;
    step[d] = checked_add(gap, 1, op);
    // Elements at out positions low + i * step; keep those inside [0, extent).
    const std::int64_t i0 = low[d] >= 0 ? 0 : checked_add(-low[d], step[d] - 1, op) / step[d];
    const std::int64_t room = checked_add(extent, -low[d], op);
    const std::int64_t i1 =
        room > 0 ? std::min(n, checked_add(room, step[d] - 1, op) / step[d]) : 0;
    first[d] = i0;
    count[d] = std::max<std::int64_t>(i1 - i0, 0);
    pos[d] = low[d] + i0 * step[d];
  }
  Tensor out = backend.empty(out_shape, x.dtype());
  backend.fill(out, value);
  if (shape_numel(count) == 0) return out;
  std::int64_t x_off = x.offset(), o_off = 0;
  Strides x_strides(r, 0), o_strides(r, 0);
  for (std::size_t d = 0; d < r; ++d) {
    x_off += first[d] * x.strides()[d];
    o_off += pos[d] * out.strides()[d];
    x_strides[d] = x.strides()[d];
    o_strides[d] = out.strides()[d] * step[d];
  }
  const Tensor src =
      Tensor::from_storage(x.storage(), x.dtype(), count, std::move(x_strides), x_off);
  const Tensor dst = Tensor::from_storage(out.storage(), out.dtype(), count, std::move(o_strides),
                                          out.offset() + o_off);
  backend.copy(src, dst);
  return out;
}

// ---- concatenate -------------------------------------------------------------------------------

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

Tensor prim::Concatenate::execute(const Concatenate& p, const Operands& xs, Backend& backend,
                                  const DimBindings&) {
  const std::int64_t axis = p.axis;
  const char* op = "concatenate";
  const DType dtype = joined_dtype(xs, backend, op);
  const Tensor& x0 = xs[0];
  const auto a = static_cast<std::size_t>(normalize_axis(axis, x0.rank(), op));
  Shape out_shape(x0.shape());
  out_shape[a] = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const Tensor& x = xs[i];
    if (x.rank() != x0.rank()) {
      fail(ErrorKind::RankMismatch, op, "input ", i, " has rank ", x.rank(),
           " but input 0 has rank ", x0.rank());
    }
    for (std::size_t d = 0; d < out_shape.size(); ++d) {
      if (d != a && x.shape()[d] != x0.shape()[d]) {
        fail(ErrorKind::ShapeMismatch, op, "input ", i, " has shape ", shape_to_string(x.shape()),
             " but input 0 has ", shape_to_string(x0.shape()), "; only axis ", a, " may differ");
      }
    }
    out_shape[a] += x.shape()[a];
  }
  Tensor out = backend.empty(out_shape, dtype);
  std::int64_t at = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const Tensor& x = xs[i];
    const std::int64_t n = x.shape()[a];
    backend.copy(x, out.slice(static_cast<std::int64_t>(a), at, at + n));
    at += n;
  }
  return out;
}

// ---- reverse
// ---------------------------------------------------------------------------------------

void prim::Reverse::infer(const Reverse& p, InferContext& ctx) {
  const TensorMeta& x = ctx.in[0];
  (void)normalize_axes_for(ctx, p.axes, x.rank());
  ctx.emit(x.dtype, x.shape);
}

Tensor prim::Reverse::execute(const Reverse& p, const Operands& in, Backend& backend,
                              const DimBindings&) {
  const Tensor& x = in[0];
  const Axes& axes = p.axes;
  const char* op = "reverse";
  require_operand(x, backend, op);
  std::vector<bool> seen(static_cast<std::size_t>(x.rank()), false);
  Tensor view = x;
  for (std::int64_t axis : axes) {
    const std::int64_t a = normalize_axis(axis, x.rank(), op);
    if (seen[static_cast<std::size_t>(a)]) {
      fail(ErrorKind::DuplicateAxis, op, "axis ", axis, " is listed twice");
    }
    seen[static_cast<std::size_t>(a)] = true;
    view = view.slice(a, std::nullopt, std::nullopt, -1);
  }
  return materialize(backend, view);
}

// ---- tile ------------------------------------------------------------------------------------

void prim::Tile::infer(const Tile& p, InferContext& ctx) {
  const TensorMeta& x = only_input(ctx);
  require_entries(ctx, p.reps, x.rank(), "reps");
  SymShape shape;
  for (std::size_t d = 0; d < p.reps.size(); ++d) {
    if (p.reps[d] < 0) {
      fail(ErrorKind::InvalidArgument, ctx.op, "reps[", d, "] = ", p.reps[d], " must be >= 0");
    }
    shape.push_back(x.shape[d] * SymDim(p.reps[d]));
  }
  ctx.emit(x.dtype, std::move(shape));
}

Tensor prim::Tile::execute(const Tile& p, const Operands& in, Backend& backend,
                           const DimBindings&) {
  const Tensor& x = in[0];
  require_operand(x, backend, kName);
  require_rank(p.reps, x.rank(), "tile", "reps");
  // x seen as [x0, r0, x1, r1, ...] with stride 0 on each repeat axis: its
  // column-major order is the tiled order, so one copy materialises it.
  Shape view_shape, out_shape;
  Strides view_strides;
  for (std::size_t d = 0; d < p.reps.size(); ++d) {
    if (p.reps[d] < 0) {
      fail(ErrorKind::InvalidArgument, "tile", "reps[", d, "] = ", p.reps[d], " must be >= 0");
    }
    view_shape.push_back(x.shape()[d]);
    view_shape.push_back(p.reps[d]);
    view_strides.push_back(x.strides()[d]);
    view_strides.push_back(0);
    out_shape.push_back(checked_mul(x.shape()[d], p.reps[d], "tile"));
  }
  shape_numel(out_shape, "tile");  // a size no tensor can have names this op
  const Tensor view = Tensor::from_storage(x.storage(), x.dtype(), std::move(view_shape),
                                           std::move(view_strides), x.offset());
  return materialize(backend, view).reshape(out_shape.span());
}

}  // namespace tenferro
