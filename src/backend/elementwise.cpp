// Direct elementwise ops: validation, dtype rules, broadcasting, output
// allocation, then the backend's kernels (Backend::unary, binary, ...).
// Operands whose dtype differs from the compute dtype are converted once into
// a pooled temporary, so kernels are instantiated per compute dtype only.

#include "tenferro/backend/elementwise.hpp"

#include <cstdint>
#include <iterator>
#include <string>
#include <utility>

namespace tenferro {

std::string_view name(UnaryOp op) {
  const auto i = static_cast<std::size_t>(op);
  return i < std::size(kUnaryOps) ? kUnaryOps[i].name : "unary";
}

std::string_view name(BinaryOp op) {
  const auto i = static_cast<std::size_t>(op);
  return i < std::size(kBinaryOps) ? kBinaryOps[i].name : "binary";
}

std::optional<UnaryOp> unary_op_named(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kUnaryOps); ++i)
    if (kUnaryOps[i].name == name) return static_cast<UnaryOp>(i);
  return std::nullopt;
}

std::optional<BinaryOp> binary_op_named(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kBinaryOps); ++i)
    if (kBinaryOps[i].name == name) return static_cast<BinaryOp>(i);
  return std::nullopt;
}

namespace {

// The dtype a unary op computes in, from its descriptor.
DType unary_compute_dtype(UnaryOp op, DType x) {
  const ElementwiseDescriptor& d = descriptor(op);
  if (is_complex(x) && !d.complex_advice.empty()) {
    fail(ErrorKind::DTypeMismatch, std::string(d.name), "not defined for complex dtype ", name(x),
         "; ", d.complex_advice);
  }
  if (is_bool(x) && !d.bool_advice.empty())
    fail(ErrorKind::DTypeMismatch, std::string(d.name), d.bool_advice);
  return d.compute == ComputeRule::Inexact ? inexact_dtype(x) : x;
}

[[noreturn]] void reject_binary(BinaryOp op, DType a, DType b, std::string_view what) {
  fail(ErrorKind::DTypeMismatch, std::string(name(op)), "not defined for dtypes ", name(a), " and ",
       name(b), ": ", what);
}

void require_defined(const Tensor& t, BinaryOp op, const char* which) {
  if (!t.defined()) {
    fail(ErrorKind::InvalidArgument, std::string(name(op)), which,
         " is undefined (default-constructed); pass a tensor");
  }
}

void require_defined(const Tensor& t, std::string_view op, const char* which) {
  if (!t.defined()) {
    fail(ErrorKind::InvalidArgument, std::string(op), which,
         " is undefined (default-constructed); pass a tensor");
  }
}

void require_host(const Backend& backend, const Tensor& t, std::string_view op) {
  if (!backend.accepts(t.placement())) {
    fail(ErrorKind::Unsupported, std::string(op), "a tensor placed at ", to_string(t.placement()),
         " cannot be read by the ", backend.kind(),
         " backend; transfer it to the backend's placement first");
  }
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

void require_out(const Tensor& out, std::span<const std::int64_t> shape, DType dtype,
                 std::string_view op) {
  require_defined(out, op, "out");
  if (!(out.shape() == Shape(shape))) {
    fail(ErrorKind::ShapeMismatch, std::string(op), "out has shape ", shape_to_string(out.shape()),
         " but the result has shape ", shape_to_string(shape));
  }
  if (out.dtype() != dtype) {
    fail(ErrorKind::DTypeMismatch, std::string(op), "out has dtype ", name(out.dtype()),
         " but the result has dtype ", name(dtype));
  }
}

// `t` in dtype `d`: itself, or a pooled converted copy.
Tensor as_dtype(Backend& backend, const Tensor& t, DType d) {
  if (t.dtype() == d) return t;
  Tensor converted = backend.empty(t.shape(), d);
  backend.copy(t, converted);
  return converted;
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

Shape binary_shape(BinaryOp op, const Tensor& a, const Tensor& b) {
  return broadcast_shapes(a.shape(), b.shape(), name(op).data());
}

}  // namespace

// ---- dtype rules -----------------------------------------------------------------

namespace {
DType result_of(ResultRule rule, DType compute) {
  switch (rule) {
    case ResultRule::Compute:
      return compute;
    case ResultRule::Real:
      return real_dtype(compute);
    case ResultRule::Bool:
      return DType::Bool;
    case ResultRule::I32:
      return DType::I32;
    case ResultRule::ComplexOf:
      return complex_dtype(compute);
  }
  return compute;
}
}  // namespace

DType unary_result_dtype(UnaryOp op, DType x) {
  return result_of(descriptor(op).result, unary_compute_dtype(op, x));
}

DType polygamma_result_dtype(DType x) {
  if (is_complex(x)) {
    fail(ErrorKind::DTypeMismatch, "polygamma", "not defined for complex dtype ", name(x),
         "; it is a real function: apply it to a real tensor");
  }
  return inexact_dtype(x);
}

DType binary_compute_dtype(BinaryOp op, DType a, DType b) {
  const ElementwiseDescriptor& d = descriptor(op);
  const DType p = promote_types(a, b);
  if (is_complex(p) && !d.complex_advice.empty()) reject_binary(op, a, b, d.complex_advice);
  if (is_bool(p) && !d.bool_advice.empty()) reject_binary(op, a, b, d.bool_advice);
  switch (d.compute) {
    case ComputeRule::Keep:
      return p;
    case ComputeRule::Inexact:
      return inexact_dtype(p);
    case ComputeRule::Bool:
      return DType::Bool;  // each operand becomes its truth value x != 0
  }
  return p;
}

DType binary_result_dtype(BinaryOp op, DType a, DType b) {
  return result_of(descriptor(op).result, binary_compute_dtype(op, a, b));
}

// ---- generic entry points ----------------------------------------------------------

Tensor unary(UnaryOp op, const Tensor& x, Backend& backend) {
  require_defined(x, name(op), "input");
  const DType rd = unary_result_dtype(op, x.dtype());
  require_host(backend, x, name(op));
  Tensor out = backend.empty(x.shape(), rd);
  run_unary(backend, op, x, out);
  return out;
}

void unary_into(UnaryOp op, const Tensor& x, const Tensor& out, Backend& backend) {
  require_defined(x, name(op), "input");
  const DType rd = unary_result_dtype(op, x.dtype());
  require_out(out, x.shape(), rd, name(op));
  require_host(backend, x, name(op));
  require_host(backend, out, name(op));
  const Tensor* inputs[] = {&x};
  check_out(out, inputs, name(op));
  run_unary(backend, op, x, out);
}

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b, Backend& backend) {
  require_defined(a, op, "first operand");
  require_defined(b, op, "second operand");
  const DType rd = binary_result_dtype(op, a.dtype(), b.dtype());
  const Shape shape = binary_shape(op, a, b);
  require_host(backend, a, name(op));
  require_host(backend, b, name(op));
  Tensor out = backend.empty(shape, rd);
  run_binary(backend, op, a, b, out);
  return out;
}

void binary_into(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out,
                 Backend& backend) {
  require_defined(a, op, "first operand");
  require_defined(b, op, "second operand");
  const DType rd = binary_result_dtype(op, a.dtype(), b.dtype());
  const Shape shape = binary_shape(op, a, b);
  require_out(out, shape, rd, name(op));
  require_host(backend, a, name(op));
  require_host(backend, b, name(op));
  require_host(backend, out, name(op));
  const Tensor ab = a.broadcast_to(shape), bb = b.broadcast_to(shape);
  const Tensor* inputs[] = {&ab, &bb};
  check_out(out, inputs, name(op));
  run_binary(backend, op, a, b, out);
}

// ---- named ops -------------------------------------------------------------------

#define TENFERRO_DEFINE_UNARY(E, fn, compute, result, complex_advice, bool_advice, api) \
  TENFERRO_DEFINE_UNARY_##api(E, fn)
#define TENFERRO_DEFINE_UNARY_Api(E, fn)         \
  Tensor fn(const Tensor& x, Backend& backend) { \
    return unary(UnaryOp::E, x, backend);        \
  }
#define TENFERRO_DEFINE_UNARY_Internal(E, fn)
TENFERRO_UNARY_OPS(TENFERRO_DEFINE_UNARY)
#undef TENFERRO_DEFINE_UNARY
#undef TENFERRO_DEFINE_UNARY_Api
#undef TENFERRO_DEFINE_UNARY_Internal

std::pair<Tensor, Tensor> frexp(const Tensor& x, Backend& backend) {
  return {unary(UnaryOp::FrexpMantissa, x, backend), unary(UnaryOp::FrexpExponent, x, backend)};
}

Tensor polygamma(std::int64_t n, const Tensor& x, Backend& backend) {
  if (n < 0 || n > kMaxPolygammaOrder) {
    fail(ErrorKind::InvalidArgument, "polygamma", "order n = ", n,
         " is out of range; pass 0 <= n <= ", kMaxPolygammaOrder, " (n = 0 is digamma)");
  }
  require_defined(x, "polygamma", "input");
  const DType rd = polygamma_result_dtype(x.dtype());
  require_host(backend, x, "polygamma");
  Tensor out = backend.empty(x.shape(), rd);
  backend.polygamma(n, as_dtype(backend, x, rd), out);
  return out;
}

#define TENFERRO_DEFINE_BINARY(E, fn, compute, result, complex_advice, bool_advice, api) \
  TENFERRO_DEFINE_BINARY_##api(E, fn)
#define TENFERRO_DEFINE_BINARY_Api(E, fn)                         \
  Tensor fn(const Tensor& a, const Tensor& b, Backend& backend) { \
    return binary(BinaryOp::E, a, b, backend);                    \
  }
#define TENFERRO_DEFINE_BINARY_Internal(E, fn)
TENFERRO_BINARY_OPS(TENFERRO_DEFINE_BINARY)
#undef TENFERRO_DEFINE_BINARY
#undef TENFERRO_DEFINE_BINARY_Api
#undef TENFERRO_DEFINE_BINARY_Internal

Tensor complex(const Tensor& re, const Tensor& im, Backend& backend) {
  return binary(BinaryOp::Complex, re, im, backend);
}

// ---- where and clamp ---------------------------------------------------------------

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b, Backend& backend) {
  require_defined(cond, "where", "cond");
  require_defined(a, "where", "a");
  require_defined(b, "where", "b");
  if (!is_bool(cond.dtype())) {
    fail(ErrorKind::DTypeMismatch, "where", "cond has dtype ", name(cond.dtype()),
         " but must be bool; build it with a comparison such as ne(x, 0)");
  }
  const DType c = promote_types(a.dtype(), b.dtype());
  const Shape shape =
      broadcast_shapes(broadcast_shapes(cond.shape(), a.shape(), "where"), b.shape(), "where");
  for (const Tensor* t : {&cond, &a, &b}) require_host(backend, *t, "where");
  Tensor out = backend.empty(shape, c);
  backend.where(cond.broadcast_to(shape), as_dtype(backend, a, c).broadcast_to(shape),
                as_dtype(backend, b, c).broadcast_to(shape), out);
  return out;
}

Tensor clamp(const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi,
             Backend& backend) {
  require_defined(x, "clamp", "input");
  if (is_complex(x.dtype()) || is_bool(x.dtype())) {
    fail(ErrorKind::DTypeMismatch, "clamp", "not defined for dtype ", name(x.dtype()),
         "; clamp needs a real or integer tensor");
  }
  for (const auto& bound : {lo, hi}) {
    if (bound && is_complex(bound->dtype())) {
      fail(ErrorKind::DTypeMismatch, "clamp", "bounds must be real, got a ", name(bound->dtype()),
           " scalar");
    }
  }
  require_host(backend, x, "clamp");
  Tensor out = backend.empty(x.shape(), x.dtype());
  if (!lo && !hi) {
    backend.copy(x, out);
  } else {
    backend.clamp(x, lo, hi, out);
  }
  return out;
}

}  // namespace tenferro
