// Shape and dtype inference of the core primitives: the shared helpers, the
// dispatch, and the elementwise, reduction, contraction, conversion and source
// kinds. The dtype rules mirror the direct operations' documented rules; they
// are restated here so that inference does not need the kernels linked (a test
// compares them with execution).

#include <cmath>

#include "ops/primitive_infer.hpp"
#include "tenferro/tensor/tensor.hpp"

namespace tenferro::detail {

// ---- shared helpers ----------------------------------------------------------------

void InferContext::require_equal(const SymDim& a, const SymDim& b, const std::string& what) {
  if (a == b) return;
  if (a.is_constant() && b.is_constant()) {
    fail(ErrorKind::ShapeMismatch, op, what, ": extents ", a.constant(), " and ", b.constant(),
         " differ; they must be equal");
  }
  result.constraints.push_back(ShapeConstraint::dims_equal(a, b, what));
}

void InferContext::require_at_most(const SymDim& a, const SymDim& b, const std::string& what,
                                   ErrorKind kind) {
  if (a == b) return;
  if (a.is_constant() && b.is_constant()) {
    if (a.constant() > b.constant()) {
      fail(kind, op, what, ": ", a.constant(), " exceeds ", b.constant());
    }
    return;
  }
  result.constraints.push_back(ShapeConstraint::dims_equal(min(a, b), a, what));
}

SymDim broadcast_dim(InferContext& ctx, const SymDim& a, const SymDim& b, const std::string& what) {
  if (a == b) return a;
  if (a.try_constant() == 1) return b;
  if (b.try_constant() == 1) return a;
  if (a.is_constant() && b.is_constant()) {
    fail(ErrorKind::ShapeMismatch, ctx.op, what, ": extents ", a.constant(), " and ", b.constant(),
         " do not broadcast; they must be equal or one of them 1");
  }
  ctx.result.constraints.push_back(ShapeConstraint::dims_equal(a, b, what));
  // A constant is the more useful guess for later inference.
  return b.is_constant() ? b : a;
}

SymShape broadcast_shape(InferContext& ctx, const SymShape& a, const SymShape& b) {
  const std::size_t r = std::max(a.size(), b.size());
  const std::size_t pa = r - a.size(), pb = r - b.size();
  SymShape out(r);
  for (std::size_t i = 0; i < r; ++i) {
    const SymDim da = i < pa ? SymDim(1) : a[i - pa];
    const SymDim db = i < pb ? SymDim(1) : b[i - pb];
    if (da == db || db.try_constant() == 1) {
      out[i] = da;
    } else if (da.try_constant() == 1) {
      out[i] = db;
    } else {
      out[i] = broadcast_dim(ctx, da, db,
                             "broadcasting " + to_string(a) + " with " + to_string(b) +
                                 " at result axis " + std::to_string(i));
    }
  }
  return out;
}

std::int64_t normalize_axis_for(const InferContext& ctx, std::int64_t axis, std::int64_t rank) {
  if (axis < -rank || axis >= rank) {
    fail(ErrorKind::AxisOutOfBounds, ctx.op, "axis ", axis, " is out of range for rank ", rank,
         " (valid: ", -rank, "..", rank - 1, ")");
  }
  return axis < 0 ? axis + rank : axis;
}

Axes normalize_axes_for(const InferContext& ctx, std::span<const std::int64_t> axes,
                        std::int64_t rank) {
  Axes out;
  for (std::int64_t axis : axes) {
    const std::int64_t a = normalize_axis_for(ctx, axis, rank);
    for (std::int64_t seen : out) {
      if (seen == a) {
        fail(ErrorKind::DuplicateAxis, ctx.op, "axis ", axis, " appears twice in ",
             axes_to_string(axes), "; list each axis once");
      }
    }
    out.push_back(a);
  }
  return out;
}

void require_nonnegative(const std::string& op, const SymShape& shape, const char* what) {
  for (const SymDim& d : shape) {
    if (d.is_constant() && d.constant() < 0) {
      fail(ErrorKind::InvalidArgument, op, what, " ", to_string(shape),
           " has a negative extent; extents must be >= 0");
    }
  }
  // Constant extents whose product overflows are refused when the graph is built.
  Shape constants;
  for (const SymDim& d : shape) {
    if (!d.is_constant()) return;
    constants.push_back(d.constant());
  }
  shape_numel(constants, op.c_str());
}

void InferContext::check_constant_size(const SymShape& shape) const {
  Shape constants;
  for (const SymDim& d : shape) {
    if (!d.is_constant()) return;
    constants.push_back(d.constant());
  }
  shape_numel(constants, op.c_str());
}

void check_fill_value(const std::string& op, const Scalar& value, DType dtype) {
  if (!is_complex(dtype) && value.imag() != 0.0) {
    fail(ErrorKind::DTypeMismatch, op, "value ", value.real(), "+", value.imag(),
         "i is complex but the tensor is ", name(dtype), "; pass a real value");
  }
  if (!is_integral(dtype) || !is_inexact(value.dtype())) return;
  const double limit = dtype == DType::I32 ? 2147483648.0 : 9223372036854775808.0;
  const double v = value.real();
  if (!std::isfinite(v) || std::trunc(v) < -limit || std::trunc(v) >= limit) {
    fail(ErrorKind::InvalidArgument, op, "value ", v, " has no ", name(dtype),
         " equivalent; pass a finite value inside the integer range");
  }
}

std::string axes_to_string(std::span<const std::int64_t> axes) {
  return shape_to_string(axes);
}

namespace {

const TensorMeta& only_input(const InferContext& ctx) {
  return ctx.in[0];
}

// Shape after reducing the (normalised) `axes`.
SymShape reduced_shape(const SymShape& shape, const Axes& axes, bool keepdim) {
  SymShape out;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    bool reduced = false;
    for (std::int64_t a : axes) reduced = reduced || a == static_cast<std::int64_t>(d);
    if (!reduced) {
      out.push_back(shape[d]);
    } else if (keepdim) {
      out.push_back(SymDim(1));
    }
  }
  return out;
}

// ---- dtype rules (see elementwise.hpp and reduce.hpp) -------------------------------

// The dtype rules are the direct ops' own (one source of truth); their errors
// already name the op.
DType unary_dtype(const InferContext&, UnaryOp op, DType x) {
  return unary_result_dtype(op, x);
}

DType binary_dtype(const InferContext&, BinaryOp op, DType a, DType b) {
  return binary_result_dtype(op, a, b);
}

void require_no_complex(const InferContext& ctx, DType x, const char* why) {
  if (is_complex(x)) {
    fail(ErrorKind::DTypeMismatch, ctx.op, "not defined for complex dtype ", name(x), "; ", why);
  }
}

// max/min/argmax/argmin have no identity: a constant zero extent on a reduced
// axis is an error (symbolic extents are checked by the kernel at run time).
void require_nonempty(const InferContext& ctx, const SymShape& shape, const Axes& axes) {
  for (std::int64_t a : axes) {
    if (shape[static_cast<std::size_t>(a)].try_constant() == 0) {
      fail(ErrorKind::InvalidArgument, ctx.op, "axis ", a,
           " has extent 0 and this reduction has no identity; reduce a non-empty axis");
    }
  }
}

}  // namespace

}  // namespace tenferro::detail

// ---- the kinds' inference hooks -------------------------------------------------------

namespace tenferro {

using namespace detail;

// ---- elementwise -------------------------------------------------------------------

void prim::Unary::infer(const Unary& p, InferContext& ctx) {
  const TensorMeta& x = only_input(ctx);
  ctx.emit(unary_dtype(ctx, p.op, x.dtype), x.shape);
}

void prim::Binary::infer(const Binary& p, InferContext& ctx) {
  const TensorMeta &a = ctx.in[0], &b = ctx.in[1];
  const DType dtype = binary_dtype(ctx, p.op, a.dtype, b.dtype);
  ctx.emit(dtype, broadcast_shape(ctx, a.shape, b.shape));
}

void prim::Select::infer(const Select&, InferContext& ctx) {
  const TensorMeta &cond = ctx.in[0], &a = ctx.in[1], &b = ctx.in[2];
  if (!is_bool(cond.dtype)) {
    fail(ErrorKind::DTypeMismatch, ctx.op, "cond has dtype ", name(cond.dtype),
         " but must be bool; compare first (e.g. ne(x, 0))");
  }
  const DType dtype = promote_types(a.dtype, b.dtype);
  SymShape shape = broadcast_shape(ctx, cond.shape, a.shape);
  ctx.emit(dtype, broadcast_shape(ctx, shape, b.shape));
}

void prim::Polygamma::infer(const Polygamma& p, InferContext& ctx) {
  const TensorMeta& x = only_input(ctx);
  if (p.n < 0 || p.n > kMaxPolygammaOrder) {
    fail(ErrorKind::InvalidArgument, ctx.op, "order n = ", p.n,
         " is out of range; pass 0 <= n <= ", kMaxPolygammaOrder, " (n = 0 is digamma)");
  }
  ctx.emit(polygamma_result_dtype(x.dtype), x.shape);
}

void prim::Clamp::infer(const Clamp& p, InferContext& ctx) {
  const TensorMeta& x = only_input(ctx);
  if (is_complex(x.dtype) || is_bool(x.dtype)) {
    fail(ErrorKind::DTypeMismatch, ctx.op, "not defined for dtype ", name(x.dtype),
         "; clamp needs a real or integer tensor");
  }
  for (const auto& bound : {p.lo, p.hi}) {
    if (bound && is_complex(bound->dtype())) {
      fail(ErrorKind::DTypeMismatch, ctx.op, "bounds must be real, got a ", name(bound->dtype()),
           " scalar");
    }
  }
  ctx.emit(x.dtype, x.shape);
}

// ---- reductions --------------------------------------------------------------------

void prim::Reduce::infer(const Reduce& p, InferContext& ctx) {
  const TensorMeta& x = only_input(ctx);
  const Axes axes = normalize_axes_for(ctx, p.axes, x.rank());
  const DType dtype = reduce_result_dtype(p.op, x.dtype);  // the descriptor's rule
  if (!descriptor(p.op).has_identity) require_nonempty(ctx, x.shape, axes);
  ctx.emit(dtype, reduced_shape(x.shape, axes, p.keepdim));
}

void prim::Variance::infer(const Variance& p, InferContext& ctx) {
  const TensorMeta& x = only_input(ctx);
  const Axes axes = normalize_axes_for(ctx, p.axes, x.rank());
  if (std::isnan(p.correction)) {
    fail(ErrorKind::InvalidArgument, ctx.op,
         "correction is NaN; pass 1 (unbiased) or 0 (population)");
  }
  ctx.emit(variance_result_dtype(x.dtype), reduced_shape(x.shape, axes, p.keepdim));
}

void prim::ArgReduce::infer(const ArgReduce& p, InferContext& ctx) {
  const TensorMeta& x = only_input(ctx);
  require_no_complex(ctx, x.dtype, "complex numbers are not ordered; use abs() or real()");
  const Axes axes{normalize_axis_for(ctx, p.axis, x.rank())};
  require_nonempty(ctx, x.shape, axes);
  ctx.emit(DType::I64, reduced_shape(x.shape, axes, p.keepdim));
}

// A rank-0 input is one lane of length 1 (axis 0 or -1, like PyTorch).
namespace {
std::int64_t lane_axis_for(const InferContext& ctx, std::int64_t axis, std::int64_t rank) {
  if (rank == 0) {
    if (axis != 0 && axis != -1) {
      fail(ErrorKind::AxisOutOfBounds, ctx.op, "axis ", axis,
           " is out of range for a rank-0 tensor; use 0 or -1");
    }
    return 0;
  }
  return normalize_axis_for(ctx, axis, rank);
}
}  // namespace

void prim::Cumulative::infer(const Cumulative& p, InferContext& ctx) {
  const TensorMeta& x = only_input(ctx);
  if (p.op != ReduceOp::Sum && p.op != ReduceOp::Prod) {
    fail(ErrorKind::InvalidArgument, ctx.op, "cumulative ", name(p.op),
         " is not supported; use ReduceOp::Sum (cumsum) or ReduceOp::Prod (cumprod)");
  }
  (void)lane_axis_for(ctx, p.axis, x.rank());
  ctx.emit(cumulative_result_dtype(x.dtype), x.shape);
}

void prim::Argsort::infer(const Argsort& p, InferContext& ctx) {
  const TensorMeta& x = only_input(ctx);
  require_no_complex(ctx, x.dtype,
                     "complex numbers are not ordered; sort abs(x), real(x) or imag(x) instead");
  const std::int64_t a = lane_axis_for(ctx, p.axis, x.rank());
  if (p.k < 0) {
    ctx.emit(DType::I64, x.shape);
    return;
  }
  if (x.rank() == 0) {
    if (p.k != 1) {
      fail(ErrorKind::InvalidArgument, ctx.op, "k = ", p.k,
           " on a rank-0 tensor, which always holds one value; use k = 1");
    }
    ctx.emit(DType::I64, x.shape);
    return;
  }
  SymShape shape = x.shape;
  const auto ua = static_cast<std::size_t>(a);
  ctx.require_at_most(SymDim(p.k), x.shape[ua],
                      "k must not exceed the extent of axis " + std::to_string(a),
                      ErrorKind::InvalidArgument);
  shape[ua] = SymDim(p.k);
  ctx.emit(DType::I64, std::move(shape));
}

// ---- contraction -------------------------------------------------------------------

void prim::DotGeneral::infer(const DotGeneral& p, InferContext& ctx) {
  const TensorMeta &lhs = ctx.in[0], &rhs = ctx.in[1];
  for (const auto& [side, t] : {std::pair{"lhs", &lhs}, std::pair{"rhs", &rhs}}) {
    if (is_bool(t->dtype)) {
      fail(ErrorKind::DTypeMismatch, ctx.op, side,
           " has dtype bool; contractions need numbers: cast it to an integer or floating dtype");
    }
  }
  const DotDims& d = p.dims;
  if (d.lhs_contracting.size() != d.rhs_contracting.size()) {
    fail(ErrorKind::InvalidArgument, ctx.op, "lhs has ", d.lhs_contracting.size(),
         " contracting axes but rhs has ", d.rhs_contracting.size(),
         "; contracting axes pair up in order, so give both lists the same length");
  }
  if (d.lhs_batch.size() != d.rhs_batch.size()) {
    fail(ErrorKind::InvalidArgument, ctx.op, "lhs has ", d.lhs_batch.size(),
         " batch axes but rhs has ", d.rhs_batch.size(),
         "; batch axes pair up in order, so give both lists the same length");
  }
  const Axes lc = normalize_axes_for(ctx, d.lhs_contracting, lhs.rank());
  const Axes rc = normalize_axes_for(ctx, d.rhs_contracting, rhs.rank());
  const Axes lb = normalize_axes_for(ctx, d.lhs_batch, lhs.rank());
  const Axes rb = normalize_axes_for(ctx, d.rhs_batch, rhs.rank());
  auto contains = [](const Axes& v, std::int64_t a) {
    for (std::int64_t x : v) {
      if (x == a) return true;
    }
    return false;
  };
  for (const auto& [side, c, b] : {std::tuple{"lhs", &lc, &lb}, std::tuple{"rhs", &rc, &rb}}) {
    for (std::int64_t a : *c) {
      if (contains(*b, a)) {
        fail(ErrorKind::InvalidArgument, ctx.op, side, " axis ", a,
             " is listed as both a contracting and a batch axis; an axis can have one role");
      }
    }
  }
  auto at = [](const TensorMeta& t, std::int64_t a) {
    return t.shape[static_cast<std::size_t>(a)];
  };
  for (std::size_t i = 0; i < lc.size(); ++i) {
    ctx.require_equal(at(lhs, lc[i]), at(rhs, rc[i]),
                      "contracting pair " + std::to_string(i) + " (lhs axis " +
                          std::to_string(lc[i]) + ", rhs axis " + std::to_string(rc[i]) + ")");
  }
  SymShape out;
  for (std::int64_t a = 0; a < lhs.rank(); ++a) {
    if (!contains(lc, a) && !contains(lb, a)) out.push_back(at(lhs, a));
  }
  for (std::int64_t a = 0; a < rhs.rank(); ++a) {
    if (!contains(rc, a) && !contains(rb, a)) out.push_back(at(rhs, a));
  }
  for (std::size_t i = 0; i < lb.size(); ++i) {
    const SymDim &l = at(lhs, lb[i]), &r = at(rhs, rb[i]);
    ctx.require_equal(l, r,
                      "batch pair " + std::to_string(i) + " (lhs axis " + std::to_string(lb[i]) +
                          ", rhs axis " + std::to_string(rb[i]) + ")");
    out.push_back(l.is_constant() ? l : r);
  }
  ctx.emit(promote_types(lhs.dtype, rhs.dtype), std::move(out));
}

// ---- conversion and sources --------------------------------------------------------

void prim::Convert::infer(const Convert& p, InferContext& ctx) {
  const TensorMeta& x = only_input(ctx);
  if (!p.lossy && !is_lossless_conversion(x.dtype, p.dtype)) {
    fail(ErrorKind::DTypeMismatch, ctx.op, name(x.dtype), " -> ", name(p.dtype),
         " can lose information; use cast (Convert{dtype, lossy=true}) for a lossy conversion");
  }
  ctx.emit(p.dtype, x.shape);
}

void prim::Full::infer(const Full& p, InferContext& ctx) {
  require_nonnegative(ctx.op, p.shape, "shape");
  check_fill_value(ctx.op, p.value, p.dtype);
  ctx.emit(p.dtype, p.shape);
}

void prim::Constant::infer(const Constant& p, InferContext& ctx) {
  if (!p.value.defined()) {
    fail(ErrorKind::InvalidArgument, ctx.op, "the constant's tensor is undefined; pass a tensor");
  }
  ctx.emit(p.value.dtype(), to_sym_shape(p.value.shape()));
}

InferenceResult PrimitiveOp::infer(std::span<const TensorMeta> inputs) const {
  detail::InferContext ctx{std::string(name()), inputs, {}};
  if (inputs.size() != input_count()) {
    fail(ErrorKind::InvalidArgument, ctx.op, "expects ", input_count(), " input(s), got ",
         inputs.size());
  }
  std::visit([&](const auto& p) { std::decay_t<decltype(p)>::infer(p, ctx); }, params_);
  return std::move(ctx.result);
}

}  // namespace tenferro
