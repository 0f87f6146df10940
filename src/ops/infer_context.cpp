// What the kinds' inference hooks share (InferContext, broadcasting, axis
// normalisation and the common requirements) and PrimitiveOp::infer, which
// dispatches to the hook of the op's kind (src/ops/prim_*.cpp). The dtype
// rules are the backend vocabulary's own (backend/elementwise.hpp, reduce.hpp),
// so inference needs no kernel linked (a test compares it with execution).

#include <cmath>

#include "ops/infer_context.hpp"
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

}  // namespace tenferro::detail

namespace tenferro {

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
