// The reduction primitives (the ReduceOps, var/std, argmax/argmin):
// inference and execution. Kernels compute in the result dtype (the
// descriptor's rule, backend/reduce.hpp); reductions without an identity
// refuse an empty reduction.

#include <cmath>
#include <string>

#include "ops/infer_context.hpp"
#include "ops/operands.hpp"

namespace tenferro {

using namespace detail;
using prim::Operands;

namespace {

using AxisMask = SmallVector<bool, 8>;

AxisMask mask_of(const Tensor& x, std::span<const std::int64_t> axes, const char* op) {
  AxisMask mask(static_cast<std::size_t>(x.rank()), false);
  for (const std::int64_t a : axes) {
    const auto d = static_cast<std::size_t>(normalize_axis(a, x.rank(), op));
    if (mask[d]) {
      fail(ErrorKind::DuplicateAxis, op, "axis ", a, " names axis ", d,
           " a second time in the axis list ", shape_to_string(axes), " of a rank-", x.rank(),
           " tensor; list each axis once");
    }
    mask[d] = true;
  }
  return mask;
}

Shape result_shape(const Tensor& x, const AxisMask& mask, bool keepdim) {
  Shape out;
  for (std::size_t d = 0; d < mask.size(); ++d) {
    if (!mask[d]) {
      out.push_back(x.shape()[d]);
    } else if (keepdim) {
      out.push_back(1);
    }
  }
  return out;
}

std::int64_t reduced_count(const Tensor& x, const AxisMask& mask) {
  std::int64_t n = 1;
  for (std::size_t d = 0; d < mask.size(); ++d)
    if (mask[d]) n *= x.shape()[d];
  return n;
}

void require_nonempty(const Tensor& x, const AxisMask& mask, const char* op) {
  if (reduced_count(x, mask) == 0) {
    fail(ErrorKind::InvalidArgument, op, "the reduction over a tensor of shape ",
         shape_to_string(x.shape()), " covers zero elements and ", op,
         " has no identity; reduce over non-empty axes or check the extents first");
  }
}

}  // namespace

// ---- the ReduceOps ----------------------------------------------------------------------

void prim::Reduce::infer(const Reduce& p, InferContext& ctx) {
  const TensorMeta& x = only_input(ctx);
  const Axes axes = normalize_axes_for(ctx, p.axes, x.rank());
  const DType dtype = reduce_result_dtype(p.op, x.dtype);  // the descriptor's rule
  if (!descriptor(p.op).has_identity) require_nonempty(ctx, x.shape, axes);
  ctx.emit(dtype, reduced_shape(x.shape, axes, p.keepdim));
}

Tensor prim::Reduce::execute(const Reduce& p, const Operands& in, Backend& backend,
                             const DimBindings&) {
  const Tensor& x = in[0];
  const char* op = name(p.op).data();  // a literal of the op list
  require_operand(x, backend, op);
  const AxisMask mask = mask_of(x, p.axes, op);
  const DType rd = reduce_result_dtype(p.op, x.dtype());
  if (!descriptor(p.op).has_identity) require_nonempty(x, mask, op);
  Tensor converted;  // only when the dtype changes: no handle copy otherwise
  if (x.dtype() != rd) converted = as_dtype(backend, x, rd);
  Tensor out = backend.empty(result_shape(x, mask, p.keepdim), rd);
  backend.reduce(p.op, converted.defined() ? converted : x, mask.span(), out);
  return out;
}

// ---- var and std: computed in x's floating dtype, real result -----------------------------

void prim::Variance::infer(const Variance& p, InferContext& ctx) {
  const TensorMeta& x = only_input(ctx);
  const Axes axes = normalize_axes_for(ctx, p.axes, x.rank());
  if (std::isnan(p.correction)) {
    fail(ErrorKind::InvalidArgument, ctx.op,
         "correction is NaN; pass 1 (unbiased) or 0 (population)");
  }
  ctx.emit(variance_result_dtype(x.dtype), reduced_shape(x.shape, axes, p.keepdim));
}

Tensor prim::Variance::execute(const Variance& p, const Operands& in, Backend& backend,
                               const DimBindings&) {
  const Tensor& x = in[0];
  const char* op = p.take_sqrt ? "std" : "var";
  require_operand(x, backend, op);
  const AxisMask mask = mask_of(x, p.axes, op);
  if (std::isnan(p.correction)) {
    fail(ErrorKind::InvalidArgument, op, "correction is NaN; pass 1 (unbiased) or 0 (population)");
  }
  const Tensor converted = as_dtype(backend, x, inexact_dtype(x.dtype()));
  Tensor out = backend.empty(result_shape(x, mask, p.keepdim), variance_result_dtype(x.dtype()));
  backend.variance(converted, mask.span(), p.correction, p.take_sqrt, out);
  return out;
}

// ---- argmax and argmin ---------------------------------------------------------------------

void prim::ArgReduce::infer(const ArgReduce& p, InferContext& ctx) {
  const TensorMeta& x = only_input(ctx);
  require_no_complex(ctx, x.dtype, "complex numbers are not ordered; use abs() or real()");
  const Axes axes{normalize_axis_for(ctx, p.axis, x.rank())};
  require_nonempty(ctx, x.shape, axes);
  ctx.emit(DType::I64, reduced_shape(x.shape, axes, p.keepdim));
}

Tensor prim::ArgReduce::execute(const ArgReduce& p, const Operands& in, Backend& backend,
                                const DimBindings&) {
  const Tensor& x = in[0];
  const char* op = p.is_max ? "argmax" : "argmin";
  require_operand(x, backend, op);
  if (is_complex(x.dtype())) {  // the message of the inference
    fail(ErrorKind::DTypeMismatch, op, "not defined for complex dtype ", name(x.dtype()),
         "; complex numbers are not ordered; use abs() or real()");
  }
  const std::int64_t a = normalize_axis(p.axis, x.rank(), op);
  AxisMask mask(static_cast<std::size_t>(x.rank()), false);
  mask[static_cast<std::size_t>(a)] = true;
  require_nonempty(x, mask, op);
  Tensor out = backend.empty(result_shape(x, mask, p.keepdim), DType::I64);
  backend.arg_reduce(p.is_max, x, a, out);
  return out;
}

}  // namespace tenferro
