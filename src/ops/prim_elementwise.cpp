// The elementwise primitives (unary, binary, select, clamp, polygamma,
// convert/cast): inference and execution. Execution validates, applies the
// dtype rules of backend/op_list.hpp, allocates the output and runs the
// backend's kernels; an operand whose dtype differs from the compute dtype
// is converted once into a pooled temporary, so kernels exist per compute
// dtype only. unary_into/binary_into are the forms writing into `out`.

#include <cstdint>
#include <string>
#include <utility>

#include "ops/infer_context.hpp"
#include "ops/operands.hpp"

namespace tenferro {

using namespace detail;
using prim::Operands;

namespace {

// The dtype a unary op computes in, from its descriptor (its refusals are
// unary_result_dtype's, checked first).
DType unary_compute_dtype(UnaryOp op, DType x) {
  const ElementwiseDescriptor& d = descriptor(op);
  return d.compute == ComputeRule::Inexact ? inexact_dtype(x) : x;
}

// Byte range [lo, hi) spanned by the elements of a non-empty tensor.
std::pair<std::intptr_t, std::intptr_t> byte_range(const Tensor& t) {
  std::int64_t lo = 0, hi = 0;
  for (std::size_t d = 0; d < t.shape().size(); ++d) {
    (t.strides()[d] < 0 ? lo : hi) += (t.shape()[d] - 1) * t.strides()[d];
  }
  const auto base = reinterpret_cast<std::intptr_t>(t.raw_data());
  const auto item = static_cast<std::int64_t>(itemsize(t.dtype()));
  return {base + lo * item, base + (hi + 1) * item};
}

// `out` must not write an element twice, and must not overlap an input unless
// it is that input's exact same view (in-place elementwise is safe then).
void check_out(const Tensor& out, std::span<const Tensor* const> inputs, std::string_view op) {
  if (out.numel() == 0) return;
  for (std::size_t d = 0; d < out.shape().size(); ++d) {
    if (out.strides()[d] == 0 && out.shape()[d] > 1) {
      fail(ErrorKind::InvalidArgument, std::string(op),
           "out has a broadcast (stride 0) axis and would be written more than once; pass a "
           "tensor with distinct elements");
    }
  }
  const auto [olo, ohi] = byte_range(out);
  for (const Tensor* in : inputs) {
    if (in->storage() != out.storage() || in->numel() == 0) continue;
    const bool same_view = in->dtype() == out.dtype() && in->offset() == out.offset() &&
                           in->shape() == out.shape() && in->strides() == out.strides();
    const auto [ilo, ihi] = byte_range(*in);
    if (!same_view && ilo < ohi && olo < ihi) {
      fail(ErrorKind::InvalidArgument, std::string(op),
           "out overlaps an input without being the same view; write into a separate tensor");
    }
  }
}

void require_out(const Tensor& out, const Backend& backend, std::span<const std::int64_t> shape,
                 DType dtype, std::string_view op) {
  require_operand(out, backend, op, "out");
  if (!(out.shape() == Shape(shape))) {
    fail(ErrorKind::ShapeMismatch, std::string(op), "out has shape ", shape_to_string(out.shape()),
         " but the result has shape ", shape_to_string(shape));
  }
  if (out.dtype() != dtype) {
    fail(ErrorKind::DTypeMismatch, std::string(op), "out has dtype ", name(out.dtype()),
         " but the result has dtype ", name(dtype));
  }
}

// `t` in dtype `d` and broadcast to `shape`: t itself when it already is
// (the common case: no handle copy), else a view or converted copy kept in
// `holder`. Converting before broadcasting converts a small operand once.
const Tensor& operand(Backend& backend, const Tensor& t, DType d, const Shape& shape,
                      Tensor& holder) {
  if (t.dtype() == d && t.shape() == shape) return t;
  holder = as_dtype(backend, t, d).broadcast_to(shape);
  return holder;
}

void run_unary(Backend& backend, UnaryOp op, const Tensor& x, const Tensor& out) {
  Tensor holder;
  backend.unary(op, operand(backend, x, unary_compute_dtype(op, x.dtype()), x.shape(), holder),
                out);
}

void run_binary(Backend& backend, BinaryOp op, const Tensor& a, const Tensor& b,
                const Tensor& out) {
  const DType c = binary_compute_dtype(op, a.dtype(), b.dtype());
  Tensor ha, hb;
  backend.binary(op, operand(backend, a, c, out.shape(), ha),
                 operand(backend, b, c, out.shape(), hb), out);
}

// The checks of a binary op; returns its result shape and dtype.
std::pair<Shape, DType> check_binary(BinaryOp op, const Tensor& a, const Tensor& b,
                                     const Backend& backend) {
  require_operand(a, backend, name(op), "first operand");
  require_operand(b, backend, name(op), "second operand");
  const DType dtype = binary_result_dtype(op, a.dtype(), b.dtype());
  return {broadcast_shapes(a.shape(), b.shape(), name(op).data()), dtype};
}

}  // namespace

// ---- unary ---------------------------------------------------------------------------

void prim::Unary::infer(const Unary& p, InferContext& ctx) {
  const TensorMeta& x = only_input(ctx);
  ctx.emit(unary_result_dtype(p.op, x.dtype), x.shape);
}

Tensor prim::Unary::execute(const Unary& p, const Operands& in, Backend& backend,
                            const DimBindings&) {
  const Tensor& x = in[0];
  require_operand(x, backend, name(p.op));
  Tensor out = backend.empty(x.shape(), unary_result_dtype(p.op, x.dtype()));
  run_unary(backend, p.op, x, out);
  return out;
}

void unary_into(UnaryOp op, const Tensor& x, const Tensor& out, Backend& backend) {
  require_operand(x, backend, name(op));
  const DType rd = unary_result_dtype(op, x.dtype());
  require_out(out, backend, x.shape(), rd, name(op));
  const Tensor* inputs[] = {&x};
  check_out(out, inputs, name(op));
  run_unary(backend, op, x, out);
}

// ---- binary --------------------------------------------------------------------------

void prim::Binary::infer(const Binary& p, InferContext& ctx) {
  const TensorMeta &a = ctx.in[0], &b = ctx.in[1];
  const DType dtype = binary_result_dtype(p.op, a.dtype, b.dtype);
  ctx.emit(dtype, broadcast_shape(ctx, a.shape, b.shape));
}

Tensor prim::Binary::execute(const Binary& p, const Operands& in, Backend& backend,
                             const DimBindings&) {
  const Tensor &a = in[0], &b = in[1];
  const auto [shape, dtype] = check_binary(p.op, a, b, backend);
  Tensor out = backend.empty(shape, dtype);
  run_binary(backend, p.op, a, b, out);
  return out;
}

void binary_into(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out,
                 Backend& backend) {
  const auto [shape, dtype] = check_binary(op, a, b, backend);
  require_out(out, backend, shape, dtype, name(op));
  const Tensor ab = a.broadcast_to(shape), bb = b.broadcast_to(shape);
  const Tensor* inputs[] = {&ab, &bb};
  check_out(out, inputs, name(op));
  run_binary(backend, op, a, b, out);
}

// ---- select, clamp, polygamma ------------------------------------------------------------

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

Tensor prim::Select::execute(const Select&, const Operands& in, Backend& backend,
                             const DimBindings&) {
  const Tensor &cond = in[0], &a = in[1], &b = in[2];
  require_operand(cond, backend, "where", "cond");
  require_operand(a, backend, "where", "a");
  require_operand(b, backend, "where", "b");
  if (!is_bool(cond.dtype())) {
    fail(ErrorKind::DTypeMismatch, "where", "cond has dtype ", name(cond.dtype()),
         " but must be bool; build it with a comparison such as ne(x, 0)");
  }
  const DType c = promote_types(a.dtype(), b.dtype());
  const Shape shape =
      broadcast_shapes(broadcast_shapes(cond.shape(), a.shape(), "where"), b.shape(), "where");
  Tensor out = backend.empty(shape, c);
  backend.where(cond.broadcast_to(shape), as_dtype(backend, a, c).broadcast_to(shape),
                as_dtype(backend, b, c).broadcast_to(shape), out);
  return out;
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

Tensor prim::Clamp::execute(const Clamp& p, const Operands& in, Backend& backend,
                            const DimBindings&) {
  const Tensor& x = in[0];
  require_operand(x, backend, "clamp");
  if (is_complex(x.dtype()) || is_bool(x.dtype())) {
    fail(ErrorKind::DTypeMismatch, "clamp", "not defined for dtype ", name(x.dtype()),
         "; clamp needs a real or integer tensor");
  }
  for (const auto& bound : {p.lo, p.hi}) {
    if (bound && is_complex(bound->dtype())) {
      fail(ErrorKind::DTypeMismatch, "clamp", "bounds must be real, got a ", name(bound->dtype()),
           " scalar");
    }
  }
  Tensor out = backend.empty(x.shape(), x.dtype());
  if (!p.lo && !p.hi) {
    backend.copy(x, out);
  } else {
    backend.clamp(x, p.lo, p.hi, out);
  }
  return out;
}

void prim::Polygamma::infer(const Polygamma& p, InferContext& ctx) {
  const TensorMeta& x = only_input(ctx);
  if (p.n < 0 || p.n > kMaxPolygammaOrder) {
    fail(ErrorKind::InvalidArgument, ctx.op, "order n = ", p.n,
         " is out of range; pass 0 <= n <= ", kMaxPolygammaOrder, " (n = 0 is digamma)");
  }
  ctx.emit(polygamma_result_dtype(x.dtype), x.shape);
}

Tensor prim::Polygamma::execute(const Polygamma& p, const Operands& in, Backend& backend,
                                const DimBindings&) {
  const Tensor& x = in[0];
  if (p.n < 0 || p.n > kMaxPolygammaOrder) {
    fail(ErrorKind::InvalidArgument, "polygamma", "order n = ", p.n,
         " is out of range; pass 0 <= n <= ", kMaxPolygammaOrder, " (n = 0 is digamma)");
  }
  require_operand(x, backend, "polygamma");
  const DType rd = polygamma_result_dtype(x.dtype());
  Tensor out = backend.empty(x.shape(), rd);
  backend.polygamma(p.n, as_dtype(backend, x, rd), out);
  return out;
}

// ---- conversion ------------------------------------------------------------------------

void prim::Convert::infer(const Convert& p, InferContext& ctx) {
  const TensorMeta& x = only_input(ctx);
  if (!p.lossy && !is_lossless_conversion(x.dtype, p.dtype)) {
    fail(ErrorKind::DTypeMismatch, ctx.op, name(x.dtype), " -> ", name(p.dtype),
         " can lose information; use cast (Convert{dtype, lossy=true}) for a lossy conversion");
  }
  ctx.emit(p.dtype, x.shape);
}

Tensor prim::Convert::execute(const Convert& p, const Operands& in, Backend& backend,
                              const DimBindings&) {
  const Tensor& x = in[0];
  require_operand(x, backend, kind_name(kind_of(p)));
  if (p.lossy) {
    Tensor out = backend.empty(x.shape(), p.dtype);
    backend.cast(x, out);
    return out;
  }
  if (!is_lossless_conversion(x.dtype(), p.dtype)) {
    fail(ErrorKind::DTypeMismatch, "convert", name(x.dtype()), " -> ", name(p.dtype),
         " can lose information; use cast for an explicit lossy conversion");
  }
  return materialize(backend, x, p.dtype);
}

}  // namespace tenferro
