#pragma once
// The elementwise op lists: one entry per op is its whole description. The
// enums UnaryOp and BinaryOp, the descriptor tables (name, dtype rule, the
// dtypes an op refuses and what to do instead), the direct functions of
// backend/elementwise.hpp and the functions of both AD tiers
// (ad/ops.hpp) are generated from these lists; kernels (backend/cpu/) and AD
// rules (src/ad/rules/core_elementwise.cpp) switch on the enum. Adding an op:
// CONTRIBUTING.md, "Adding an operator".
//
// X(Enum, function, compute, result, complex, boolean, api)
//   compute  Keep: the operand dtype; Inexact: integers and bool compute in
//            f64 (binary: promote both operands first; Bool: each operand
//            becomes its truth value).
//   result   Compute: the compute dtype; Real: its real dtype; Bool; I32;
//            ComplexOf: the complex dtype of the (real) compute dtype.
//   complex  "" when complex dtypes are accepted, else the advice that
//            follows "not defined for complex dtype ..." (DTypeMismatch).
//   boolean  "" when bool is accepted, else the advice for a bool operand
//            (binary: a bool promoted operand pair).
//   api      Api: public functions `function(x, backend)` and
//            `function(x)` for both AD tiers; Internal: only through
//            unary(op, ...) (parts of a public function, e.g. frexp).

// clang-format off
#define TENFERRO_UNARY_OPS(X)                                                                    \
  X(Abs, abs, Keep, Real, "", "", Api)                                                           \
  X(Neg, neg, Keep, Compute, "",                                                                 \
    "negation of a bool tensor is not defined; use logical_not, or convert to an integer "       \
    "dtype first", Api)                                                                          \
  X(Conj, conj, Keep, Compute, "", "", Api)                                                      \
  X(Exp, exp, Inexact, Compute, "", "", Api)                                                     \
  X(Exp2, exp2, Inexact, Compute, "", "", Api)                                                   \
  X(Expm1, expm1, Inexact, Compute, "", "", Api)                                                 \
  X(Log, log, Inexact, Compute, "", "", Api)                                                     \
  X(Log2, log2, Inexact, Compute, "", "", Api)                                                   \
  X(Log10, log10, Inexact, Compute, "", "", Api)                                                 \
  X(Log1p, log1p, Inexact, Compute, "", "", Api)                                                 \
  X(Sqrt, sqrt, Inexact, Compute, "", "", Api)                                                   \
  X(Rsqrt, rsqrt, Inexact, Compute, "", "", Api)                                                 \
  X(Square, square, Keep, Compute, "", "", Api)                                                  \
  X(Reciprocal, reciprocal, Inexact, Compute, "", "", Api)                                       \
  X(Sin, sin, Inexact, Compute, "", "", Api)                                                     \
  X(Cos, cos, Inexact, Compute, "", "", Api)                                                     \
  X(Tan, tan, Inexact, Compute, "", "", Api)                                                     \
  X(Asin, asin, Inexact, Compute, "", "", Api)                                                   \
  X(Acos, acos, Inexact, Compute, "", "", Api)                                                   \
  X(Atan, atan, Inexact, Compute, "", "", Api)                                                   \
  X(Sinh, sinh, Inexact, Compute, "", "", Api)                                                   \
  X(Cosh, cosh, Inexact, Compute, "", "", Api)                                                   \
  X(Tanh, tanh, Inexact, Compute, "", "", Api)                                                   \
  X(Asinh, asinh, Inexact, Compute, "", "", Api)                                                 \
  X(Acosh, acosh, Inexact, Compute, "", "", Api)                                                 \
  X(Atanh, atanh, Inexact, Compute, "", "", Api)                                                 \
  X(Sigmoid, sigmoid, Inexact, Compute, "", "", Api)                                             \
  X(Erf, erf, Inexact, Compute, "apply it to real() and imag() separately", "", Api)             \
  X(Erfc, erfc, Inexact, Compute, "apply it to real() and imag() separately", "", Api)           \
  /* -1, 0, +1 (NaN stays NaN); real and integer dtypes. */                                     \
  X(Sign, sign, Keep, Compute,                                                                   \
    "apply it to real() and imag() separately (sgn is the complex sign)", "", Api)               \
  /* z / |z| (0 at 0) for complex, sign for real. */                                            \
  X(Sgn, sgn, Keep, Compute, "", "", Api)                                                        \
  X(Floor, floor, Keep, Compute, "apply it to real() and imag() separately", "", Api)            \
  X(Ceil, ceil, Keep, Compute, "apply it to real() and imag() separately", "", Api)              \
  /* Round half to even (like NumPy and PyTorch). */                                            \
  X(Round, round, Keep, Compute, "apply it to real() and imag() separately", "", Api)            \
  X(Trunc, trunc, Keep, Compute, "apply it to real() and imag() separately", "", Api)            \
  /* Real part as a fresh tensor (Tensor::real() is the view form). */                          \
  X(Real, real, Keep, Real, "", "", Api)                                                         \
  X(Imag, imag, Keep, Real, "", "", Api)                                                         \
  /* Argument of complex values; for reals 0, or pi for negative values. */                     \
  X(Angle, angle, Inexact, Real, "", "", Api)                                                    \
  X(IsFinite, isfinite, Keep, Bool, "", "", Api)                                                 \
  X(IsNan, isnan, Keep, Bool, "", "", Api)                                                       \
  X(LogicalNot, logical_not, Keep, Bool, "", "", Api)                                            \
  /* Special functions: values as in PyTorch / SciPy, never throwing per element. */            \
  /* Inverse error function: erfinv(+-1) = +-inf, NaN outside [-1, 1]. */                       \
  X(Erfinv, erfinv, Inexact, Compute, TENFERRO_REAL_FUNCTION, "", Api)                           \
  /* log|Gamma(x)|; +inf at the poles (non-positive integers). */                               \
  X(Lgamma, lgamma, Inexact, Compute, TENFERRO_REAL_FUNCTION, "", Api)                           \
  /* Psi(x) = Gamma'(x)/Gamma(x): -inf at +0, +inf at -0, NaN at negative integers. */          \
  X(Digamma, digamma, Inexact, Compute, TENFERRO_REAL_FUNCTION, "", Api)                         \
  /* Modified Bessel functions of the first kind of order 0 and 1, and their */                 \
  /* exponentially scaled forms i0e = exp(-|x|) i0, i1e = exp(-|x|) i1. */                      \
  X(I0, i0, Inexact, Compute, TENFERRO_REAL_FUNCTION, "", Api)                                   \
  X(I0e, i0e, Inexact, Compute, TENFERRO_REAL_FUNCTION, "", Api)                                 \
  X(I1, i1, Inexact, Compute, TENFERRO_REAL_FUNCTION, "", Api)                                   \
  X(I1e, i1e, Inexact, Compute, TENFERRO_REAL_FUNCTION, "", Api)                                 \
  /* Scaled complementary error function exp(x^2) erfc(x), accurate for large x. */             \
  X(Erfcx, erfcx, Inexact, Compute, TENFERRO_REAL_FUNCTION, "", Api)                             \
  /* Standard normal CDF, its inverse (ndtri(0) = -inf, ndtri(1) = inf) and the */              \
  /* log of the CDF (accurate far into the lower tail). */                                      \
  X(Ndtr, ndtr, Inexact, Compute, TENFERRO_REAL_FUNCTION, "", Api)                               \
  X(Ndtri, ndtri, Inexact, Compute, TENFERRO_REAL_FUNCTION, "", Api)                             \
  X(LogNdtr, log_ndtr, Inexact, Compute, TENFERRO_REAL_FUNCTION, "", Api)                        \
  /* -x log x (0 at 0, -inf for x < 0). */                                                      \
  X(Entr, entr, Inexact, Compute, TENFERRO_REAL_FUNCTION, "", Api)                               \
  /* log(x / (1 - x)). */                                                                       \
  X(Logit, logit, Inexact, Compute, TENFERRO_REAL_FUNCTION, "", Api)                             \
  /* x - trunc(x). */                                                                           \
  X(Frac, frac, Inexact, Compute, TENFERRO_REAL_FUNCTION, "", Api)                               \
  /* Normalised sinc sin(pi x) / (pi x), 1 at 0; real and complex. */                           \
  X(Sinc, sinc, Inexact, Compute, "", "", Api)                                                   \
  /* The two parts of frexp (see backend/elementwise.hpp). */                                   \
  X(FrexpMantissa, frexp_mantissa, Inexact, Compute, TENFERRO_REAL_FUNCTION, "", Internal)       \
  X(FrexpExponent, frexp_exponent, Inexact, I32, TENFERRO_REAL_FUNCTION, "", Internal)

#define TENFERRO_REAL_FUNCTION \
  "it is a real function: apply it to a real tensor (e.g. real() or abs())"
#define TENFERRO_UNORDERED "complex numbers are not ordered; compare abs() or real()"
#define TENFERRO_REAL_ONLY "real dtypes only; apply it to real() and imag()"
#define TENFERRO_INTEGER_FIRST "convert one operand to an integer dtype first"

#define TENFERRO_BINARY_OPS(X)                                                                   \
  X(Add, add, Keep, Compute, "", "", Api)                                                        \
  X(Sub, sub, Keep, Compute, "",                                                                 \
    "subtracting bools is undefined; use ne() for exclusive or, or convert to an integer "       \
    "dtype first", Api)                                                                          \
  X(Mul, mul, Keep, Compute, "", "", Api)                                                        \
  /* True division: integer inputs give f64. */                                                 \
  X(Div, div, Inexact, Compute, "", "", Api)                                                     \
  X(Pow, pow, Keep, Compute, "", TENFERRO_INTEGER_FIRST, Api)                                    \
  /* NaN-propagating elementwise max/min (real dtypes). */                                      \
  X(Maximum, maximum, Keep, Compute, TENFERRO_UNORDERED, "", Api)                                \
  X(Minimum, minimum, Keep, Compute, TENFERRO_UNORDERED, "", Api)                                \
  X(Atan2, atan2, Inexact, Compute, TENFERRO_REAL_ONLY, "", Api)                                 \
  X(Hypot, hypot, Inexact, Compute, TENFERRO_REAL_ONLY, "", Api)                                 \
  X(Copysign, copysign, Inexact, Compute, TENFERRO_REAL_ONLY, "", Api)                           \
  /* C fmod: the result has the sign of a. */                                                   \
  X(Fmod, fmod, Keep, Compute, "real and integer dtypes only", TENFERRO_INTEGER_FIRST, Api)      \
  /* Python remainder: the result has the sign of b. */                                         \
  X(Remainder, remainder, Keep, Compute, "real and integer dtypes only", TENFERRO_INTEGER_FIRST, \
    Api)                                                                                         \
  X(Eq, eq, Keep, Bool, "", "", Api)                                                             \
  X(Ne, ne, Keep, Bool, "", "", Api)                                                             \
  X(Lt, lt, Keep, Bool, TENFERRO_UNORDERED, "", Api)                                             \
  X(Le, le, Keep, Bool, TENFERRO_UNORDERED, "", Api)                                             \
  X(Gt, gt, Keep, Bool, TENFERRO_UNORDERED, "", Api)                                             \
  X(Ge, ge, Keep, Bool, TENFERRO_UNORDERED, "", Api)                                             \
  X(LogicalAnd, logical_and, Bool, Bool, "", "", Api)                                            \
  X(LogicalOr, logical_or, Bool, Bool, "", "", Api)                                              \
  /* a * log(b), 0 where a == 0 unless b is NaN (real dtypes; integers give f64). */            \
  X(Xlogy, xlogy, Inexact, Compute, TENFERRO_REAL_ONLY, "", Api)                                 \
  /* a * log1p(b), 0 where a == 0 unless b is NaN. */                                           \
  X(Xlog1py, xlog1py, Inexact, Compute, TENFERRO_REAL_ONLY, "", Api)                             \
  /* log(exp(a) + exp(b)) without overflow; real and complex (integers give f64). */            \
  X(LogAddExp, logaddexp, Inexact, Compute, "", "", Api)                                         \
  /* re + i im built exactly (complex(1, inf) = 1 + inf i): real operands, complex */           \
  /* result; declared with its own documentation in backend/elementwise.hpp. */                 \
  X(Complex, complex, Inexact, ComplexOf,                                                        \
    "the real and imaginary parts must be real; take real() and imag() of a complex operand "    \
    "first", "", Internal)
// clang-format on
