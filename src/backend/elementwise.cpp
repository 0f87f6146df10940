// The elementwise vocabulary: op names and dtype rules, from the descriptors
// of op_list.hpp (the primitives' inference and execution are
// src/ops/prim_elementwise.cpp).

#include "tenferro/backend/elementwise.hpp"

#include <iterator>
#include <string>

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

}  // namespace

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

}  // namespace tenferro
