// Direct elementwise ops: validation, dtype rules, broadcasting, output
// allocation, then dispatch to the CPU kernels of backend/cpu/*_kernels.cpp.
// Operands whose dtype differs from the compute dtype are converted once into
// a pooled temporary, so kernels are instantiated per compute dtype only.

#include "tenferro/backend/elementwise.hpp"

#include <cstdint>
#include <iterator>
#include <string>
#include <utility>

#include "backend/cpu/elementwise_kernels.hpp"
#include "backend/cpu/kernels.hpp"
#include "backend/cpu/special_kernels.hpp"

namespace tenferro {

// Indexed by the enumerator value; the order follows the enum declarations.
constexpr std::string_view kUnaryNames[] = {
    "abs", "neg", "conj", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
    "square", "reciprocal", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
    "asinh", "acosh", "atanh", "sigmoid", "erf", "erfc", "sign", "sgn", "floor", "ceil", "round",
    "trunc", "real", "imag", "angle", "isfinite", "isnan", "logical_not",
    // special functions
    "erfinv", "lgamma", "digamma", "i0", "i0e", "i1", "i1e", "erfcx", "ndtr", "ndtri", "log_ndtr",
    "entr", "logit", "frac", "sinc", "frexp_mantissa", "frexp_exponent"};
constexpr std::string_view kBinaryNames[] = {
    "add",   "sub",      "mul",         "div",        "pow",   "maximum", "minimum",   "atan2",
    "hypot", "copysign", "fmod",        "remainder",  "eq",    "ne",      "lt",        "le",
    "gt",    "ge",       "logical_and", "logical_or", "xlogy", "xlog1py", "logaddexp", "complex"};
static_assert(std::size(kUnaryNames) == static_cast<std::size_t>(kUnaryOpCount));
static_assert(std::size(kBinaryNames) == static_cast<std::size_t>(kBinaryOpCount));

std::string_view name(UnaryOp op) {
  const auto i = static_cast<std::size_t>(op);
  return i < std::size(kUnaryNames) ? kUnaryNames[i] : "unary";
}

std::string_view name(BinaryOp op) {
  const auto i = static_cast<std::size_t>(op);
  return i < std::size(kBinaryNames) ? kBinaryNames[i] : "binary";
}

namespace {

// Ops whose result is inexact: integer and bool inputs compute in f64.
bool computes_inexact(UnaryOp op) {
  if (cpu::is_special_op(op)) return true;
  switch (op) {
    case UnaryOp::Exp:
    case UnaryOp::Exp2:
    case UnaryOp::Expm1:
    case UnaryOp::Log:
    case UnaryOp::Log2:
    case UnaryOp::Log10:
    case UnaryOp::Log1p:
    case UnaryOp::Sqrt:
    case UnaryOp::Rsqrt:
    case UnaryOp::Reciprocal:
    case UnaryOp::Sin:
    case UnaryOp::Cos:
    case UnaryOp::Tan:
    case UnaryOp::Asin:
    case UnaryOp::Acos:
    case UnaryOp::Atan:
    case UnaryOp::Sinh:
    case UnaryOp::Cosh:
    case UnaryOp::Tanh:
    case UnaryOp::Asinh:
    case UnaryOp::Acosh:
    case UnaryOp::Atanh:
    case UnaryOp::Sigmoid:
    case UnaryOp::Erf:
    case UnaryOp::Erfc:
    case UnaryOp::Angle:
      return true;
    default:
      return false;
  }
}

DType unary_compute_dtype(UnaryOp op, DType x) {
  // The special functions are real functions; sinc also takes complex values.
  if (cpu::is_special_op(op) && op != UnaryOp::Sinc && is_complex(x)) {
    fail(ErrorKind::DTypeMismatch, std::string(name(op)), "not defined for complex dtype ", name(x),
         "; it is a real function: apply it to a real tensor (e.g. real() or abs())");
  }
  switch (op) {
    case UnaryOp::Neg:
      if (is_bool(x)) {
        fail(ErrorKind::DTypeMismatch, std::string(name(op)),
             "negation of a bool tensor is not defined; use logical_not, or convert to an "
             "integer dtype first");
      }
      break;
    case UnaryOp::Erf:
    case UnaryOp::Erfc:
    case UnaryOp::Sign:
    case UnaryOp::Floor:
    case UnaryOp::Ceil:
    case UnaryOp::Round:
    case UnaryOp::Trunc:
      if (is_complex(x)) {
        fail(ErrorKind::DTypeMismatch, std::string(name(op)), "not defined for complex dtype ",
             name(x), "; apply it to real() and imag() separately",
             op == UnaryOp::Sign ? " (sgn is the complex sign)" : "");
      }
      break;
    default:
      break;
  }
  return computes_inexact(op) ? inexact_dtype(x) : x;
}

[[noreturn]] void reject_binary(BinaryOp op, DType a, DType b, const char* what) {
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

void require_host(const CpuBackend& cpu, const Tensor& t, std::string_view op) {
  if (!cpu.accepts(t.placement())) {
    fail(ErrorKind::Unsupported, std::string(op), "a tensor placed at ", to_string(t.placement()),
         " cannot be read by the CPU backend; transfer it to the host first");
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
Tensor as_dtype(CpuBackend& cpu, const Tensor& t, DType d) {
  if (t.dtype() == d) return t;
  Tensor converted = cpu.empty(t.shape(), d);
  cpu::copy(cpu, t, converted);
  return converted;
}

// `t` in dtype `d` and broadcast to `shape`: t itself when it already is
// (the common case: no handle copy), else a view or converted copy kept in
// `holder`. Converting before broadcasting converts a small operand once.
const Tensor& operand(CpuBackend& cpu, const Tensor& t, DType d, const Shape& shape,
                      Tensor& holder) {
  if (t.dtype() == d && t.shape() == shape) return t;
  holder = as_dtype(cpu, t, d).broadcast_to(shape);
  return holder;
}

void run_unary(CpuBackend& cpu, UnaryOp op, const Tensor& x, const Tensor& out) {
  ScopedCpuSession session(cpu);
  Tensor holder;
  cpu::unary_kernel(cpu, op, operand(cpu, x, unary_compute_dtype(op, x.dtype()), x.shape(), holder),
                    out);
}

void run_binary(CpuBackend& cpu, BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out) {
  ScopedCpuSession session(cpu);
  const DType c = binary_compute_dtype(op, a.dtype(), b.dtype());
  Tensor ha, hb;
  cpu::binary_kernel(cpu, op, operand(cpu, a, c, out.shape(), ha),
                     operand(cpu, b, c, out.shape(), hb), out);
}

Shape binary_shape(BinaryOp op, const Tensor& a, const Tensor& b) {
  return broadcast_shapes(a.shape(), b.shape(), name(op).data());
}

}  // namespace

// ---- dtype rules -----------------------------------------------------------------

DType unary_result_dtype(UnaryOp op, DType x) {
  const DType c = unary_compute_dtype(op, x);
  switch (op) {
    case UnaryOp::Abs:
    case UnaryOp::Real:
    case UnaryOp::Imag:
    case UnaryOp::Angle:
      return real_dtype(c);
    case UnaryOp::IsFinite:
    case UnaryOp::IsNan:
    case UnaryOp::LogicalNot:
      return DType::Bool;
    case UnaryOp::FrexpExponent:
      return DType::I32;
    default:
      return c;
  }
}

DType polygamma_result_dtype(DType x) {
  if (is_complex(x)) {
    fail(ErrorKind::DTypeMismatch, "polygamma", "not defined for complex dtype ", name(x),
         "; it is a real function: apply it to a real tensor");
  }
  return inexact_dtype(x);
}

DType binary_compute_dtype(BinaryOp op, DType a, DType b) {
  const DType p = promote_types(a, b);
  switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Mul:
    case BinaryOp::Eq:
    case BinaryOp::Ne:
      return p;
    case BinaryOp::Sub:
      if (is_bool(p))
        reject_binary(op, a, b,
                      "subtracting bools is undefined; use ne() for exclusive or, or convert "
                      "to an integer dtype first");
      return p;
    case BinaryOp::Div:
      return inexact_dtype(p);
    case BinaryOp::Pow:
      if (is_bool(p)) reject_binary(op, a, b, "convert one operand to an integer dtype first");
      return p;
    case BinaryOp::Maximum:
    case BinaryOp::Minimum:
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge:
      if (is_complex(p))
        reject_binary(op, a, b, "complex numbers are not ordered; compare abs() or real()");
      return p;
    case BinaryOp::Atan2:
    case BinaryOp::Hypot:
    case BinaryOp::Copysign:
      if (is_complex(p)) reject_binary(op, a, b, "real dtypes only; apply it to real() and imag()");
      return inexact_dtype(p);
    case BinaryOp::Fmod:
    case BinaryOp::Remainder:
      if (is_complex(p)) reject_binary(op, a, b, "real and integer dtypes only");
      if (is_bool(p)) reject_binary(op, a, b, "convert one operand to an integer dtype first");
      return p;
    case BinaryOp::LogicalAnd:
    case BinaryOp::LogicalOr:
      return DType::Bool;  // each operand becomes its truth value x != 0
    case BinaryOp::Xlogy:
    case BinaryOp::Xlog1py:
      if (is_complex(p)) reject_binary(op, a, b, "real dtypes only; apply it to real() and imag()");
      return inexact_dtype(p);
    case BinaryOp::LogAddExp:
      return inexact_dtype(p);
    case BinaryOp::Complex:
      if (is_complex(p))
        reject_binary(op, a, b,
                      "the real and imaginary parts must be real; take real() and imag() of a "
                      "complex operand first");
      return inexact_dtype(p);
  }
  return p;
}

DType binary_result_dtype(BinaryOp op, DType a, DType b) {
  const DType c = binary_compute_dtype(op, a, b);
  switch (op) {
    case BinaryOp::Eq:
    case BinaryOp::Ne:
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge:
    case BinaryOp::LogicalAnd:
    case BinaryOp::LogicalOr:
      return DType::Bool;
    case BinaryOp::Complex:
      return complex_dtype(c);
    default:
      return c;
  }
}

// ---- generic entry points ----------------------------------------------------------

Tensor unary(UnaryOp op, const Tensor& x, Backend& backend) {
  require_defined(x, name(op), "input");
  const DType rd = unary_result_dtype(op, x.dtype());
  CpuBackend& cpu = require_cpu(backend, name(op).data());
  require_host(cpu, x, name(op));
  Tensor out = cpu.empty(x.shape(), rd);
  run_unary(cpu, op, x, out);
  return out;
}

void unary_into(UnaryOp op, const Tensor& x, const Tensor& out, Backend& backend) {
  require_defined(x, name(op), "input");
  const DType rd = unary_result_dtype(op, x.dtype());
  require_out(out, x.shape(), rd, name(op));
  CpuBackend& cpu = require_cpu(backend, name(op).data());
  require_host(cpu, x, name(op));
  require_host(cpu, out, name(op));
  const Tensor* inputs[] = {&x};
  check_out(out, inputs, name(op));
  run_unary(cpu, op, x, out);
}

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b, Backend& backend) {
  require_defined(a, op, "first operand");
  require_defined(b, op, "second operand");
  const DType rd = binary_result_dtype(op, a.dtype(), b.dtype());
  const Shape shape = binary_shape(op, a, b);
  CpuBackend& cpu = require_cpu(backend, name(op).data());
  require_host(cpu, a, name(op));
  require_host(cpu, b, name(op));
  Tensor out = cpu.empty(shape, rd);
  run_binary(cpu, op, a, b, out);
  return out;
}

void binary_into(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out,
                 Backend& backend) {
  require_defined(a, op, "first operand");
  require_defined(b, op, "second operand");
  const DType rd = binary_result_dtype(op, a.dtype(), b.dtype());
  const Shape shape = binary_shape(op, a, b);
  require_out(out, shape, rd, name(op));
  CpuBackend& cpu = require_cpu(backend, name(op).data());
  require_host(cpu, a, name(op));
  require_host(cpu, b, name(op));
  require_host(cpu, out, name(op));
  const Tensor ab = a.broadcast_to(shape), bb = b.broadcast_to(shape);
  const Tensor* inputs[] = {&ab, &bb};
  check_out(out, inputs, name(op));
  run_binary(cpu, op, a, b, out);
}

// ---- named ops -------------------------------------------------------------------

#define TENFERRO_UNARY(fn, op)                   \
  Tensor fn(const Tensor& x, Backend& backend) { \
    return unary(UnaryOp::op, x, backend);       \
  }
TENFERRO_UNARY(abs, Abs)
TENFERRO_UNARY(neg, Neg)
TENFERRO_UNARY(conj, Conj)
TENFERRO_UNARY(exp, Exp)
TENFERRO_UNARY(exp2, Exp2)
TENFERRO_UNARY(expm1, Expm1)
TENFERRO_UNARY(log, Log)
TENFERRO_UNARY(log2, Log2)
TENFERRO_UNARY(log10, Log10)
TENFERRO_UNARY(log1p, Log1p)
TENFERRO_UNARY(sqrt, Sqrt)
TENFERRO_UNARY(rsqrt, Rsqrt)
TENFERRO_UNARY(square, Square)
TENFERRO_UNARY(reciprocal, Reciprocal)
TENFERRO_UNARY(sin, Sin)
TENFERRO_UNARY(cos, Cos)
TENFERRO_UNARY(tan, Tan)
TENFERRO_UNARY(asin, Asin)
TENFERRO_UNARY(acos, Acos)
TENFERRO_UNARY(atan, Atan)
TENFERRO_UNARY(sinh, Sinh)
TENFERRO_UNARY(cosh, Cosh)
TENFERRO_UNARY(tanh, Tanh)
TENFERRO_UNARY(asinh, Asinh)
TENFERRO_UNARY(acosh, Acosh)
TENFERRO_UNARY(atanh, Atanh)
TENFERRO_UNARY(sigmoid, Sigmoid)
TENFERRO_UNARY(erf, Erf)
TENFERRO_UNARY(erfc, Erfc)
TENFERRO_UNARY(sign, Sign)
TENFERRO_UNARY(sgn, Sgn)
TENFERRO_UNARY(floor, Floor)
TENFERRO_UNARY(ceil, Ceil)
TENFERRO_UNARY(round, Round)
TENFERRO_UNARY(trunc, Trunc)
TENFERRO_UNARY(real, Real)
TENFERRO_UNARY(imag, Imag)
TENFERRO_UNARY(angle, Angle)
TENFERRO_UNARY(isfinite, IsFinite)
TENFERRO_UNARY(isnan, IsNan)
TENFERRO_UNARY(logical_not, LogicalNot)
TENFERRO_UNARY(erfinv, Erfinv)
TENFERRO_UNARY(lgamma, Lgamma)
TENFERRO_UNARY(digamma, Digamma)
TENFERRO_UNARY(i0, I0)
TENFERRO_UNARY(i0e, I0e)
TENFERRO_UNARY(i1, I1)
TENFERRO_UNARY(i1e, I1e)
TENFERRO_UNARY(erfcx, Erfcx)
TENFERRO_UNARY(ndtr, Ndtr)
TENFERRO_UNARY(ndtri, Ndtri)
TENFERRO_UNARY(log_ndtr, LogNdtr)
TENFERRO_UNARY(entr, Entr)
TENFERRO_UNARY(logit, Logit)
TENFERRO_UNARY(frac, Frac)
TENFERRO_UNARY(sinc, Sinc)
#undef TENFERRO_UNARY

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
  CpuBackend& cpu = require_cpu(backend, "polygamma");
  require_host(cpu, x, "polygamma");
  ScopedCpuSession session(cpu);
  Tensor out = cpu.empty(x.shape(), rd);
  cpu::polygamma_kernel(cpu, n, as_dtype(cpu, x, rd), out);
  return out;
}

#define TENFERRO_BINARY(fn, op)                                   \
  Tensor fn(const Tensor& a, const Tensor& b, Backend& backend) { \
    return binary(BinaryOp::op, a, b, backend);                   \
  }
TENFERRO_BINARY(add, Add)
TENFERRO_BINARY(sub, Sub)
TENFERRO_BINARY(mul, Mul)
TENFERRO_BINARY(div, Div)
TENFERRO_BINARY(pow, Pow)
TENFERRO_BINARY(maximum, Maximum)
TENFERRO_BINARY(minimum, Minimum)
TENFERRO_BINARY(atan2, Atan2)
TENFERRO_BINARY(hypot, Hypot)
TENFERRO_BINARY(copysign, Copysign)
TENFERRO_BINARY(fmod, Fmod)
TENFERRO_BINARY(remainder, Remainder)
TENFERRO_BINARY(eq, Eq)
TENFERRO_BINARY(ne, Ne)
TENFERRO_BINARY(lt, Lt)
TENFERRO_BINARY(le, Le)
TENFERRO_BINARY(gt, Gt)
TENFERRO_BINARY(ge, Ge)
TENFERRO_BINARY(logical_and, LogicalAnd)
TENFERRO_BINARY(logical_or, LogicalOr)
TENFERRO_BINARY(xlogy, Xlogy)
TENFERRO_BINARY(xlog1py, Xlog1py)
TENFERRO_BINARY(logaddexp, LogAddExp)
TENFERRO_BINARY(complex, Complex)
#undef TENFERRO_BINARY

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
  CpuBackend& cpu = require_cpu(backend, "where");
  for (const Tensor* t : {&cond, &a, &b}) require_host(cpu, *t, "where");
  ScopedCpuSession session(cpu);
  Tensor out = cpu.empty(shape, c);
  cpu::where_kernel(cpu, cond.broadcast_to(shape), as_dtype(cpu, a, c).broadcast_to(shape),
                    as_dtype(cpu, b, c).broadcast_to(shape), out);
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
  CpuBackend& cpu = require_cpu(backend, "clamp");
  require_host(cpu, x, "clamp");
  ScopedCpuSession session(cpu);
  Tensor out = cpu.empty(x.shape(), x.dtype());
  if (!lo && !hi) {
    cpu::copy(cpu, x, out);
  } else {
    cpu::clamp_kernel(cpu, x, lo, hi, out);
  }
  return out;
}

}  // namespace tenferro
