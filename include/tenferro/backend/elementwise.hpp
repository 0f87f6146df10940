#pragma once
// Direct elementwise operations: explicit backend argument, no AD.
// Binary operations broadcast with NumPy rules (right-aligned) and promote
// dtypes along the lattice of core/dtype.hpp. Results are fresh compact
// tensors allocated by the backend; the *_into forms write into `out`, which
// must already have the result shape and dtype and must not overlap the inputs.

#include <cstdint>
#include <optional>
#include <utility>

#include "tenferro/backend/backend.hpp"

namespace tenferro {

enum class UnaryOp : unsigned char {
  Abs,
  Neg,
  Conj,
  Exp,
  Exp2,
  Expm1,
  Log,
  Log2,
  Log10,
  Log1p,
  Sqrt,
  Rsqrt,
  Square,
  Reciprocal,
  Sin,
  Cos,
  Tan,
  Asin,
  Acos,
  Atan,
  Sinh,
  Cosh,
  Tanh,
  Asinh,
  Acosh,
  Atanh,
  Sigmoid,
  Erf,
  Erfc,
  Sign,
  Sgn,
  Floor,
  Ceil,
  Round,
  Trunc,
  Real,
  Imag,
  Angle,
  IsFinite,
  IsNan,
  LogicalNot,
  // Special functions (real floating dtypes; sinc also complex).
  Erfinv,
  Lgamma,
  Digamma,
  I0,
  I0e,
  I1,
  I1e,
  Erfcx,
  Ndtr,
  Ndtri,
  LogNdtr,
  Entr,
  Logit,
  Frac,
  Sinc,
  FrexpMantissa,
  FrexpExponent,
};
/// Number of UnaryOp enumerators (they are numbered 0..kUnaryOpCount-1).
inline constexpr int kUnaryOpCount = static_cast<int>(UnaryOp::FrexpExponent) + 1;

enum class BinaryOp : unsigned char {
  Add,
  Sub,
  Mul,
  Div,
  Pow,
  Maximum,
  Minimum,
  Atan2,
  Hypot,
  Copysign,
  Fmod,
  Remainder,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  LogicalAnd,
  LogicalOr,
  Xlogy,
  Xlog1py,
  LogAddExp,
  // re + i im built exactly (no 0 * inf = NaN): real operands, complex result.
  Complex,
};
/// Number of BinaryOp enumerators (they are numbered 0..kBinaryOpCount-1).
inline constexpr int kBinaryOpCount = static_cast<int>(BinaryOp::Complex) + 1;

std::string_view name(UnaryOp op);
std::string_view name(BinaryOp op);

/// Result dtype of a unary op on `x` (throws DTypeMismatch when unsupported).
/// Rules: abs/real/imag/angle of complex give the real dtype; transcendental
/// functions on integers or bool give f64; floor/ceil/round/trunc/sign keep
/// integers; isfinite/isnan/logical_not give bool; erf/erfc, floor/ceil/
/// round/trunc and sign reject complex (sgn is the complex sign); the special
/// functions (erfinv ... frexp) reject complex except sinc, and
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

// ---- unary ---------------------------------------------------------------------
Tensor abs(const Tensor& x, Backend& backend);
Tensor neg(const Tensor& x, Backend& backend);
Tensor conj(const Tensor& x, Backend& backend);
Tensor exp(const Tensor& x, Backend& backend);
Tensor exp2(const Tensor& x, Backend& backend);
Tensor expm1(const Tensor& x, Backend& backend);
Tensor log(const Tensor& x, Backend& backend);
Tensor log2(const Tensor& x, Backend& backend);
Tensor log10(const Tensor& x, Backend& backend);
Tensor log1p(const Tensor& x, Backend& backend);
Tensor sqrt(const Tensor& x, Backend& backend);
Tensor rsqrt(const Tensor& x, Backend& backend);
Tensor square(const Tensor& x, Backend& backend);
Tensor reciprocal(const Tensor& x, Backend& backend);
Tensor sin(const Tensor& x, Backend& backend);
Tensor cos(const Tensor& x, Backend& backend);
Tensor tan(const Tensor& x, Backend& backend);
Tensor asin(const Tensor& x, Backend& backend);
Tensor acos(const Tensor& x, Backend& backend);
Tensor atan(const Tensor& x, Backend& backend);
Tensor sinh(const Tensor& x, Backend& backend);
Tensor cosh(const Tensor& x, Backend& backend);
Tensor tanh(const Tensor& x, Backend& backend);
Tensor asinh(const Tensor& x, Backend& backend);
Tensor acosh(const Tensor& x, Backend& backend);
Tensor atanh(const Tensor& x, Backend& backend);
Tensor sigmoid(const Tensor& x, Backend& backend);
Tensor erf(const Tensor& x, Backend& backend);
Tensor erfc(const Tensor& x, Backend& backend);
/// -1, 0, +1 (NaN stays NaN); real and integer dtypes.
Tensor sign(const Tensor& x, Backend& backend);
/// z / |z| (0 at 0) for complex, sign for real.
Tensor sgn(const Tensor& x, Backend& backend);
Tensor floor(const Tensor& x, Backend& backend);
Tensor ceil(const Tensor& x, Backend& backend);
/// Round half to even (like NumPy and PyTorch).
Tensor round(const Tensor& x, Backend& backend);
Tensor trunc(const Tensor& x, Backend& backend);
/// Real part as a fresh tensor (Tensor::real() is the view form).
Tensor real(const Tensor& x, Backend& backend);
Tensor imag(const Tensor& x, Backend& backend);
/// Argument of complex values; for reals 0, or pi for negative values.
Tensor angle(const Tensor& x, Backend& backend);
Tensor isfinite(const Tensor& x, Backend& backend);
Tensor isnan(const Tensor& x, Backend& backend);
Tensor logical_not(const Tensor& x, Backend& backend);

// ---- special functions (values as in PyTorch / SciPy; never throw per element) ----
/// Inverse error function: erfinv(+-1) = +-inf, NaN outside [-1, 1].
Tensor erfinv(const Tensor& x, Backend& backend);
/// log|Gamma(x)|; +inf at the poles (non-positive integers).
Tensor lgamma(const Tensor& x, Backend& backend);
/// Psi(x) = Gamma'(x)/Gamma(x): -inf at +0, +inf at -0, NaN at negative integers.
Tensor digamma(const Tensor& x, Backend& backend);
/// Largest order polygamma accepts: beyond it the values overflow or underflow
/// double except in a narrow band of x, and the reflection for x < 0 costs
/// O(n^2) per element.
inline constexpr std::int64_t kMaxPolygammaOrder = 1000;
/// n-th derivative of digamma, 0 <= n <= kMaxPolygammaOrder (else
/// InvalidArgument); polygamma(0, x) = digamma(x).
Tensor polygamma(std::int64_t n, const Tensor& x, Backend& backend);
/// Modified Bessel functions of the first kind of order 0 and 1, and their
/// exponentially scaled forms i0e = exp(-|x|) i0, i1e = exp(-|x|) i1.
Tensor i0(const Tensor& x, Backend& backend);
Tensor i0e(const Tensor& x, Backend& backend);
Tensor i1(const Tensor& x, Backend& backend);
Tensor i1e(const Tensor& x, Backend& backend);
/// Scaled complementary error function exp(x^2) erfc(x), accurate for large x.
Tensor erfcx(const Tensor& x, Backend& backend);
/// Standard normal CDF, its inverse (ndtri(0) = -inf, ndtri(1) = inf) and
/// the log of the CDF (accurate far into the lower tail).
Tensor ndtr(const Tensor& x, Backend& backend);
Tensor ndtri(const Tensor& x, Backend& backend);
Tensor log_ndtr(const Tensor& x, Backend& backend);
/// -x log x (0 at 0, -inf for x < 0).
Tensor entr(const Tensor& x, Backend& backend);
/// log(x / (1 - x)).
Tensor logit(const Tensor& x, Backend& backend);
/// x - trunc(x).
Tensor frac(const Tensor& x, Backend& backend);
/// Normalised sinc sin(pi x) / (pi x), 1 at 0; real and complex.
Tensor sinc(const Tensor& x, Backend& backend);
/// {mantissa, exponent} with x = mantissa * 2^exponent, |mantissa| in [0.5, 1)
/// (0 for 0) like std::frexp; the mantissa keeps x's floating dtype, the
/// exponent is i32.
std::pair<Tensor, Tensor> frexp(const Tensor& x, Backend& backend);

// ---- binary --------------------------------------------------------------------
Tensor add(const Tensor& a, const Tensor& b, Backend& backend);
Tensor sub(const Tensor& a, const Tensor& b, Backend& backend);
Tensor mul(const Tensor& a, const Tensor& b, Backend& backend);
/// True division: integer inputs give f64.
Tensor div(const Tensor& a, const Tensor& b, Backend& backend);
Tensor pow(const Tensor& a, const Tensor& b, Backend& backend);
/// NaN-propagating elementwise max/min (real dtypes).
Tensor maximum(const Tensor& a, const Tensor& b, Backend& backend);
Tensor minimum(const Tensor& a, const Tensor& b, Backend& backend);
Tensor atan2(const Tensor& a, const Tensor& b, Backend& backend);
Tensor hypot(const Tensor& a, const Tensor& b, Backend& backend);
Tensor copysign(const Tensor& a, const Tensor& b, Backend& backend);
/// C fmod: the result has the sign of a.
Tensor fmod(const Tensor& a, const Tensor& b, Backend& backend);
/// Python remainder: the result has the sign of b.
Tensor remainder(const Tensor& a, const Tensor& b, Backend& backend);
Tensor eq(const Tensor& a, const Tensor& b, Backend& backend);
Tensor ne(const Tensor& a, const Tensor& b, Backend& backend);
Tensor lt(const Tensor& a, const Tensor& b, Backend& backend);
Tensor le(const Tensor& a, const Tensor& b, Backend& backend);
Tensor gt(const Tensor& a, const Tensor& b, Backend& backend);
Tensor ge(const Tensor& a, const Tensor& b, Backend& backend);
Tensor logical_and(const Tensor& a, const Tensor& b, Backend& backend);
Tensor logical_or(const Tensor& a, const Tensor& b, Backend& backend);
/// a * log(b), 0 where a == 0 unless b is NaN (real dtypes; integers give f64).
Tensor xlogy(const Tensor& a, const Tensor& b, Backend& backend);
/// a * log1p(b), 0 where a == 0 unless b is NaN.
Tensor xlog1py(const Tensor& a, const Tensor& b, Backend& backend);
/// log(exp(a) + exp(b)) without overflow; real and complex (integers give f64).
Tensor logaddexp(const Tensor& a, const Tensor& b, Backend& backend);
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
