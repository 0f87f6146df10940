#pragma once
// Every direct operation on EagerTensor, with AD rules. Semantics (dtypes,
// broadcasting, errors) are those of the direct ops in tenferro/backend/*.hpp;
// these forms run on the tensors' own runtime and record when an input is
// tracked. Scalars mix with tensors like Python numbers do in PyTorch: a real
// scalar takes a floating tensor's dtype.

#include <optional>
#include <span>
#include <utility>

#include "tenferro/ad/eager.hpp"
#include "tenferro/backend/contract.hpp"
#include "tenferro/backend/elementwise.hpp"
#include "tenferro/backend/reduce.hpp"

namespace tenferro {

/// Applies any op (primitive or extension) to eager tensors of one runtime.
std::vector<EagerTensor> apply(const OpPtr& op, std::span<const EagerTensor> inputs);

// ---- elementwise ----
EagerTensor unary(UnaryOp op, const EagerTensor& x);
EagerTensor binary(BinaryOp op, const EagerTensor& a, const EagerTensor& b);
EagerTensor abs(const EagerTensor& x);
EagerTensor neg(const EagerTensor& x);
EagerTensor conj(const EagerTensor& x);
EagerTensor exp(const EagerTensor& x);
EagerTensor exp2(const EagerTensor& x);
EagerTensor expm1(const EagerTensor& x);
EagerTensor log(const EagerTensor& x);
EagerTensor log2(const EagerTensor& x);
EagerTensor log10(const EagerTensor& x);
EagerTensor log1p(const EagerTensor& x);
EagerTensor sqrt(const EagerTensor& x);
EagerTensor rsqrt(const EagerTensor& x);
EagerTensor square(const EagerTensor& x);
EagerTensor reciprocal(const EagerTensor& x);
EagerTensor sin(const EagerTensor& x);
EagerTensor cos(const EagerTensor& x);
EagerTensor tan(const EagerTensor& x);
EagerTensor asin(const EagerTensor& x);
EagerTensor acos(const EagerTensor& x);
EagerTensor atan(const EagerTensor& x);
EagerTensor sinh(const EagerTensor& x);
EagerTensor cosh(const EagerTensor& x);
EagerTensor tanh(const EagerTensor& x);
EagerTensor asinh(const EagerTensor& x);
EagerTensor acosh(const EagerTensor& x);
EagerTensor atanh(const EagerTensor& x);
EagerTensor sigmoid(const EagerTensor& x);
EagerTensor erf(const EagerTensor& x);
EagerTensor erfc(const EagerTensor& x);
EagerTensor sign(const EagerTensor& x);
EagerTensor sgn(const EagerTensor& x);
EagerTensor floor(const EagerTensor& x);
EagerTensor ceil(const EagerTensor& x);
EagerTensor round(const EagerTensor& x);
EagerTensor trunc(const EagerTensor& x);
EagerTensor real(const EagerTensor& x);
EagerTensor imag(const EagerTensor& x);
EagerTensor angle(const EagerTensor& x);
EagerTensor isfinite(const EagerTensor& x);
EagerTensor isnan(const EagerTensor& x);
EagerTensor logical_not(const EagerTensor& x);
// special functions (see backend/elementwise.hpp)
EagerTensor erfinv(const EagerTensor& x);
EagerTensor lgamma(const EagerTensor& x);
EagerTensor digamma(const EagerTensor& x);
/// 0 <= n <= kMaxPolygammaOrder, else InvalidArgument.
EagerTensor polygamma(std::int64_t n, const EagerTensor& x);
/// Multivariate log-gamma of dimension p >= 1 (PyTorch's mvlgamma):
/// sum_{i<p} lgamma(x - i/2) + p(p-1)/4 log(pi).
EagerTensor mvlgamma(const EagerTensor& x, std::int64_t p);
EagerTensor i0(const EagerTensor& x);
EagerTensor i0e(const EagerTensor& x);
EagerTensor i1(const EagerTensor& x);
EagerTensor i1e(const EagerTensor& x);
EagerTensor erfcx(const EagerTensor& x);
EagerTensor ndtr(const EagerTensor& x);
EagerTensor ndtri(const EagerTensor& x);
EagerTensor log_ndtr(const EagerTensor& x);
EagerTensor entr(const EagerTensor& x);
EagerTensor logit(const EagerTensor& x);
EagerTensor frac(const EagerTensor& x);
EagerTensor sinc(const EagerTensor& x);
/// {mantissa, exponent (i32, not differentiable)}.
std::pair<EagerTensor, EagerTensor> frexp(const EagerTensor& x);
EagerTensor add(const EagerTensor& a, const EagerTensor& b);
EagerTensor sub(const EagerTensor& a, const EagerTensor& b);
EagerTensor mul(const EagerTensor& a, const EagerTensor& b);
EagerTensor div(const EagerTensor& a, const EagerTensor& b);
EagerTensor pow(const EagerTensor& a, const EagerTensor& b);
EagerTensor maximum(const EagerTensor& a, const EagerTensor& b);
EagerTensor minimum(const EagerTensor& a, const EagerTensor& b);
EagerTensor atan2(const EagerTensor& a, const EagerTensor& b);
EagerTensor hypot(const EagerTensor& a, const EagerTensor& b);
EagerTensor copysign(const EagerTensor& a, const EagerTensor& b);
EagerTensor fmod(const EagerTensor& a, const EagerTensor& b);
EagerTensor remainder(const EagerTensor& a, const EagerTensor& b);
EagerTensor eq(const EagerTensor& a, const EagerTensor& b);
EagerTensor ne(const EagerTensor& a, const EagerTensor& b);
EagerTensor lt(const EagerTensor& a, const EagerTensor& b);
EagerTensor le(const EagerTensor& a, const EagerTensor& b);
EagerTensor gt(const EagerTensor& a, const EagerTensor& b);
EagerTensor ge(const EagerTensor& a, const EagerTensor& b);
EagerTensor logical_and(const EagerTensor& a, const EagerTensor& b);
EagerTensor logical_or(const EagerTensor& a, const EagerTensor& b);
EagerTensor xlogy(const EagerTensor& a, const EagerTensor& b);
EagerTensor xlog1py(const EagerTensor& a, const EagerTensor& b);
EagerTensor logaddexp(const EagerTensor& a, const EagerTensor& b);
EagerTensor where(const EagerTensor& cond, const EagerTensor& a, const EagerTensor& b);
EagerTensor clamp(const EagerTensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi);
/// A rank-0 tensor holding `value` in `like`'s runtime, typed like a Python
/// number mixed with `like` (real scalars take a floating tensor's dtype).
EagerTensor scalar_like(const EagerTensor& like, Scalar value);

EagerTensor operator+(const EagerTensor& a, const EagerTensor& b);
EagerTensor operator-(const EagerTensor& a, const EagerTensor& b);
EagerTensor operator*(const EagerTensor& a, const EagerTensor& b);
EagerTensor operator/(const EagerTensor& a, const EagerTensor& b);
EagerTensor operator-(const EagerTensor& a);
EagerTensor operator+(const EagerTensor& a, Scalar b);
EagerTensor operator-(const EagerTensor& a, Scalar b);
EagerTensor operator*(const EagerTensor& a, Scalar b);
EagerTensor operator/(const EagerTensor& a, Scalar b);
EagerTensor operator+(Scalar a, const EagerTensor& b);
EagerTensor operator-(Scalar a, const EagerTensor& b);
EagerTensor operator*(Scalar a, const EagerTensor& b);
EagerTensor operator/(Scalar a, const EagerTensor& b);

// ---- reductions (axes as in tenferro/backend/reduce.hpp) ----
EagerTensor reduce(ReduceOp op, const EagerTensor& x, std::span<const std::int64_t> axes,
                   bool keepdim = false);
EagerTensor sum(const EagerTensor& x, std::span<const std::int64_t> axes, bool keepdim = false);
EagerTensor sum(const EagerTensor& x);
inline EagerTensor sum(const EagerTensor& x, std::initializer_list<std::int64_t> axes,
                       bool keepdim = false) {
  return sum(x, std::span<const std::int64_t>(axes.begin(), axes.size()), keepdim);
}
EagerTensor prod(const EagerTensor& x, std::span<const std::int64_t> axes, bool keepdim = false);
EagerTensor prod(const EagerTensor& x);
inline EagerTensor prod(const EagerTensor& x, std::initializer_list<std::int64_t> axes,
                        bool keepdim = false) {
  return prod(x, std::span<const std::int64_t>(axes.begin(), axes.size()), keepdim);
}
EagerTensor mean(const EagerTensor& x, std::span<const std::int64_t> axes, bool keepdim = false);
EagerTensor mean(const EagerTensor& x);
inline EagerTensor mean(const EagerTensor& x, std::initializer_list<std::int64_t> axes,
                        bool keepdim = false) {
  return mean(x, std::span<const std::int64_t>(axes.begin(), axes.size()), keepdim);
}
EagerTensor max(const EagerTensor& x, std::span<const std::int64_t> axes, bool keepdim = false);
EagerTensor max(const EagerTensor& x);
inline EagerTensor max(const EagerTensor& x, std::initializer_list<std::int64_t> axes,
                       bool keepdim = false) {
  return max(x, std::span<const std::int64_t>(axes.begin(), axes.size()), keepdim);
}
EagerTensor min(const EagerTensor& x, std::span<const std::int64_t> axes, bool keepdim = false);
EagerTensor min(const EagerTensor& x);
inline EagerTensor min(const EagerTensor& x, std::initializer_list<std::int64_t> axes,
                       bool keepdim = false) {
  return min(x, std::span<const std::int64_t>(axes.begin(), axes.size()), keepdim);
}
EagerTensor all(const EagerTensor& x, std::span<const std::int64_t> axes, bool keepdim = false);
EagerTensor all(const EagerTensor& x);
inline EagerTensor all(const EagerTensor& x, std::initializer_list<std::int64_t> axes,
                       bool keepdim = false) {
  return all(x, std::span<const std::int64_t>(axes.begin(), axes.size()), keepdim);
}
EagerTensor any(const EagerTensor& x, std::span<const std::int64_t> axes, bool keepdim = false);
EagerTensor any(const EagerTensor& x);
inline EagerTensor any(const EagerTensor& x, std::initializer_list<std::int64_t> axes,
                       bool keepdim = false) {
  return any(x, std::span<const std::int64_t>(axes.begin(), axes.size()), keepdim);
}
EagerTensor logsumexp(const EagerTensor& x, std::span<const std::int64_t> axes,
                      bool keepdim = false);
EagerTensor logsumexp(const EagerTensor& x);
inline EagerTensor logsumexp(const EagerTensor& x, std::initializer_list<std::int64_t> axes,
                             bool keepdim = false) {
  return logsumexp(x, std::span<const std::int64_t>(axes.begin(), axes.size()), keepdim);
}
EagerTensor var(const EagerTensor& x, std::span<const std::int64_t> axes, double correction = 1.0,
                bool keepdim = false);
EagerTensor std_dev(const EagerTensor& x, std::span<const std::int64_t> axes,
                    double correction = 1.0, bool keepdim = false);
EagerTensor argmax(const EagerTensor& x, std::int64_t axis, bool keepdim = false);
EagerTensor argmin(const EagerTensor& x, std::int64_t axis, bool keepdim = false);

// ---- contractions ----
EagerTensor dot_general(const EagerTensor& lhs, const EagerTensor& rhs, const DotDims& dims);
EagerTensor matmul(const EagerTensor& a, const EagerTensor& b);

// ---- structural (each returns a fresh tensor) ----
EagerTensor permute(const EagerTensor& x, std::span<const std::int64_t> perm);
EagerTensor transpose(const EagerTensor& x, std::int64_t a = 0, std::int64_t b = 1);
EagerTensor reshape(const EagerTensor& x, std::span<const std::int64_t> shape);
EagerTensor broadcast_in_dim(const EagerTensor& x, std::span<const std::int64_t> shape,
                             std::span<const std::int64_t> dims);
EagerTensor broadcast_to(const EagerTensor& x, std::span<const std::int64_t> shape);
EagerTensor slice(const EagerTensor& x, std::span<const std::int64_t> start,
                  std::span<const std::int64_t> limit, std::span<const std::int64_t> stride);
EagerTensor pad(const EagerTensor& x, std::span<const std::int64_t> low,
                std::span<const std::int64_t> high, Scalar value,
                std::span<const std::int64_t> interior = {});
EagerTensor concatenate(std::span<const EagerTensor> xs, std::int64_t axis);
EagerTensor stack(std::span<const EagerTensor> xs, std::int64_t axis);
EagerTensor reverse(const EagerTensor& x, std::span<const std::int64_t> axes);
EagerTensor diagonal(const EagerTensor& x, std::int64_t offset = 0, std::int64_t axis1 = 0,
                     std::int64_t axis2 = 1);
EagerTensor diag_embed(const EagerTensor& x, std::int64_t offset = 0);
EagerTensor tril(const EagerTensor& x, std::int64_t k = 0);
EagerTensor triu(const EagerTensor& x, std::int64_t k = 0);
EagerTensor index_select(const EagerTensor& x, std::int64_t axis, const EagerTensor& index);
EagerTensor take_along_axis(const EagerTensor& x, const EagerTensor& index, std::int64_t axis);
EagerTensor scatter_add(const EagerTensor& x, std::int64_t axis, const EagerTensor& index,
                        const EagerTensor& src);
EagerTensor convert(const EagerTensor& x, DType dtype);
EagerTensor cast(const EagerTensor& x, DType dtype);
/// A filled tensor in `like`'s runtime.
EagerTensor full_like(const EagerTensor& like, Scalar value);
EagerTensor zeros_like(const EagerTensor& like);
EagerTensor ones_like(const EagerTensor& like);

}  // namespace tenferro
