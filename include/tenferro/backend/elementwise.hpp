#pragma once
// Direct elementwise operations: explicit backend argument, no AD.
// Binary operations broadcast with NumPy rules (right-aligned) and promote
// dtypes along the lattice of core/dtype.hpp. Results are fresh compact
// tensors allocated by the backend; the *_into forms write into `out`, which
// must already have the result shape and dtype and must not overlap the inputs.

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

Tensor unary(UnaryOp op, const Tensor& x, Backend& backend);
void unary_into(UnaryOp op, const Tensor& x, const Tensor& out, Backend& backend);
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b, Backend& backend);
void binary_into(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out,
                 Backend& backend);

// ---- unary: `fn(x, backend)` for every Api entry of TENFERRO_UNARY_OPS -------------
#define TENFERRO_DECLARE_UNARY(E, fn, compute, result, complex_advice, bool_advice, api) \
  TENFERRO_DECLARE_UNARY_##api(fn)
#define TENFERRO_DECLARE_UNARY_Api(fn) Tensor fn(const Tensor& x, Backend& backend);
#define TENFERRO_DECLARE_UNARY_Internal(fn)
TENFERRO_UNARY_OPS(TENFERRO_DECLARE_UNARY)
#undef TENFERRO_DECLARE_UNARY
#undef TENFERRO_DECLARE_UNARY_Api
#undef TENFERRO_DECLARE_UNARY_Internal

// ---- unary functions with more than one operand or result ----------------------
/// Largest order polygamma accepts: beyond it the values overflow or underflow
/// double except in a narrow band of x, and the reflection for x < 0 costs
/// O(n^2) per element.
inline constexpr std::int64_t kMaxPolygammaOrder = 1000;
/// n-th derivative of digamma, 0 <= n <= kMaxPolygammaOrder (else
/// InvalidArgument); polygamma(0, x) = digamma(x).
Tensor polygamma(std::int64_t n, const Tensor& x, Backend& backend);
/// {mantissa, exponent} with x = mantissa * 2^exponent, |mantissa| in [0.5, 1)
/// (0 for 0) like std::frexp; the mantissa keeps x's floating dtype, the
/// exponent is i32.
std::pair<Tensor, Tensor> frexp(const Tensor& x, Backend& backend);

// ---- binary: `fn(a, b, backend)` for every Api entry of TENFERRO_BINARY_OPS --------
#define TENFERRO_DECLARE_BINARY(E, fn, compute, result, complex_advice, bool_advice, api) \
  TENFERRO_DECLARE_BINARY_##api(fn)
#define TENFERRO_DECLARE_BINARY_Api(fn) \
  Tensor fn(const Tensor& a, const Tensor& b, Backend& backend);
#define TENFERRO_DECLARE_BINARY_Internal(fn)
TENFERRO_BINARY_OPS(TENFERRO_DECLARE_BINARY)
#undef TENFERRO_DECLARE_BINARY
#undef TENFERRO_DECLARE_BINARY_Api
#undef TENFERRO_DECLARE_BINARY_Internal

/// re + i im, each part taken exactly (complex(1, inf) = 1 + inf i). Real
/// operands promote to a common floating dtype (integers and bool give f64)
/// and broadcast; f32 -> c64, f64 -> c128; complex operands are DTypeMismatch.
/// (tenferro::complex(re, im) of tensor.hpp is the backend-free form for
/// operands of one floating dtype and one shape.)
Tensor complex(const Tensor& re, const Tensor& im, Backend& backend);

/// cond ? a : b elementwise; cond is bool; all three broadcast; a and b promote.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b, Backend& backend);
/// Limits values to [lo, hi] (either bound optional); real and integer dtypes.
Tensor clamp(const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi, Backend& backend);

}  // namespace tenferro
