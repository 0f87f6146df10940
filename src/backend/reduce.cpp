// The reductions' vocabulary: names and dtype rules (the primitives' inference
// and execution are src/ops/prim_reduce.cpp).

#include "tenferro/backend/reduce.hpp"

#include <string>

namespace tenferro {

std::string_view name(ReduceOp op) {
  const auto i = static_cast<std::size_t>(op);
  return i < std::size(kReduceOps) ? kReduceOps[i].name : "reduce";
}

namespace {
// The descriptor of a ReduceOp from outside the library (InvalidArgument for
// a value that is no enumerator).
const ReduceDescriptor& checked_descriptor(ReduceOp op) {
  if (static_cast<std::size_t>(op) >= std::size(kReduceOps)) {
    fail(ErrorKind::InvalidArgument, "reduce", "unknown ReduceOp ", static_cast<int>(op),
         "; use one of the ReduceOp enumerators");
  }
  return descriptor(op);
}
}  // namespace

DType reduce_result_dtype(ReduceOp op, DType x) {
  const ReduceDescriptor& d = checked_descriptor(op);
  if (is_complex(x) && !d.complex_advice.empty()) {
    fail(ErrorKind::DTypeMismatch, std::string(d.name), "not defined for complex dtype ", name(x),
         "; ", d.complex_advice);
  }
  switch (d.result) {
    case ReduceResult::Accumulate:
      return is_bool(x) || is_integral(x) ? DType::I64 : x;
    case ReduceResult::Inexact:
      return inexact_dtype(x);
    case ReduceResult::Same:
      return x;
    case ReduceResult::Bool:
      return DType::Bool;
  }
  return x;
}

DType variance_result_dtype(DType x) {
  return real_dtype(inexact_dtype(x));
}

}  // namespace tenferro
