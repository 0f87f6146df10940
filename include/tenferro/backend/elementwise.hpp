#pragma once
// The elementwise vocabulary: the ops (one entry each in op_list.hpp), their
// descriptors and dtype rules, shared by the kernels, the primitives and the
// operation surface (tenferro/ad/ops.hpp, whose exp(x, backend) and exp(x)
// are the functions). Binary operations promote dtypes along the lattice of
// core/dtype.hpp.

#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>
#include <utility>

#include "tenferro/backend/backend.hpp"
#include "tenferro/backend/op_list.hpp"

namespace tenferro {

// Every elementwise op and its facts are one entry of backend/op_list.hpp.
#define TENFERRO_ENUMERATOR(E, ...) E,
enum class UnaryOp : unsigned char { TENFERRO_UNARY_OPS(TENFERRO_ENUMERATOR) };
enum class BinaryOp : unsigned char { TENFERRO_BINARY_OPS(TENFERRO_ENUMERATOR) };
#undef TENFERRO_ENUMERATOR

/// How an op picks the dtype it computes in (see op_list.hpp).
enum class ComputeRule : unsigned char { Keep, Inexact, Bool };
/// The result dtype from the compute dtype (see op_list.hpp).
enum class ResultRule : unsigned char { Compute, Real, Bool, I32, ComplexOf };
/// Whether an op has public functions of its own or is reached through
/// unary()/binary() only.
enum class OpApi : unsigned char { Api, Internal };

/// One elementwise op: everything the dtype rules, messages and name lookups
/// need. `complex_advice` / `bool_advice` are empty when those dtypes are
/// accepted.
struct ElementwiseDescriptor {
  std::string_view name;
  ComputeRule compute;
  ResultRule result;
  std::string_view complex_advice;
  std::string_view bool_advice;
  OpApi api;
};

#define TENFERRO_DESCRIPTOR(E, fn, compute, result, complex_advice, bool_advice, api) \
  ElementwiseDescriptor{                                                              \
      #fn, ComputeRule::compute, ResultRule::result, complex_advice, bool_advice, OpApi::api},
/// Indexed by the enumerator value.
inline constexpr ElementwiseDescriptor kUnaryOps[] = {TENFERRO_UNARY_OPS(TENFERRO_DESCRIPTOR)};
inline constexpr ElementwiseDescriptor kBinaryOps[] = {TENFERRO_BINARY_OPS(TENFERRO_DESCRIPTOR)};
#undef TENFERRO_DESCRIPTOR

/// Number of UnaryOp enumerators (they are numbered 0..kUnaryOpCount-1).
inline constexpr int kUnaryOpCount = static_cast<int>(std::size(kUnaryOps));
/// Number of BinaryOp enumerators (they are numbered 0..kBinaryOpCount-1).
inline constexpr int kBinaryOpCount = static_cast<int>(std::size(kBinaryOps));

constexpr const ElementwiseDescriptor& descriptor(UnaryOp op) {
  return kUnaryOps[static_cast<std::size_t>(op)];
}
constexpr const ElementwiseDescriptor& descriptor(BinaryOp op) {
  return kBinaryOps[static_cast<std::size_t>(op)];
}

std::string_view name(UnaryOp op);
std::string_view name(BinaryOp op);
/// The op of that name (nullopt for none): "tanh" -> UnaryOp::Tanh.
std::optional<UnaryOp> unary_op_named(std::string_view name);
std::optional<BinaryOp> binary_op_named(std::string_view name);

/// Result dtype of a unary op on `x` (throws DTypeMismatch when unsupported),
/// from its descriptor: abs/real/imag/angle of complex give the real dtype;
/// transcendental functions on integers or bool give f64; floor/ceil/round/
/// trunc/sign keep integers; isfinite/isnan/logical_not give bool; erf/erfc,
/// floor/ceil/round/trunc and sign reject complex (sgn is the complex sign);
/// the special functions (erfinv ... frexp) reject complex except sinc, and
/// frexp_exponent gives i32.
DType unary_result_dtype(UnaryOp op, DType x);
/// Result dtype of polygamma(n, x): x's floating dtype (integers and bool give
/// f64; complex is DTypeMismatch).
DType polygamma_result_dtype(DType x);
/// Dtype both operands are converted to before the kernel runs.
DType binary_compute_dtype(BinaryOp op, DType a, DType b);
/// Result dtype: bool for comparisons and logical ops, the complex dtype of
/// the (real) compute dtype for complex, else the compute dtype.
DType binary_result_dtype(BinaryOp op, DType a, DType b);

/// Largest order polygamma accepts: beyond it the values overflow or underflow
/// double except in a narrow band of x, and the reflection for x < 0 costs
/// O(n^2) per element.
inline constexpr std::int64_t kMaxPolygammaOrder = 1000;

}  // namespace tenferro
