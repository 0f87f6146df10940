// Traced forms of the core primitives: each builds one graph node.

#include "tenferro/ad/traced.hpp"

#include <cmath>
#include <numbers>

namespace tenferro {

namespace {

TracedTensor build(prim::Params p, std::initializer_list<TracedTensor> inputs) {
  return detail::make_traced1(make_primitive(std::move(p)),
                              std::span<const TracedTensor>(inputs.begin(), inputs.size()));
}

Axes all_axes(const TracedTensor& x) {
  Axes a;
  for (std::int64_t i = 0; i < x.rank(); ++i) a.push_back(i);
  return a;
}

}  // namespace

TracedTensor traced_full(const SymShape& shape, Scalar value, DType dtype) {
  return build(prim::Full{shape, value, dtype}, {});
}
TracedTensor full_like(const TracedTensor& like, Scalar value) {
  return traced_full(like.shape(), value, like.dtype());
}
TracedTensor zeros_like(const TracedTensor& like) {
  return full_like(like, 0.0);
}
TracedTensor ones_like(const TracedTensor& like) {
  return full_like(like, 1.0);
}

TracedTensor scalar_like(const TracedTensor& like, Scalar value) {
  return traced_full({}, value, scalar_operand_dtype(like.dtype(), value.dtype()));
}

// ---- elementwise ---------------------------------------------------------------------

TracedTensor unary(UnaryOp op, const TracedTensor& x) {
  return build(prim::Unary{op}, {x});
}
TracedTensor binary(BinaryOp op, const TracedTensor& a, const TracedTensor& b) {
  return build(prim::Binary{op}, {a, b});
}

#define TF_TRACED_UNARY(fn, kind)          \
  TracedTensor fn(const TracedTensor& x) { \
    return unary(UnaryOp::kind, x);        \
  }
TF_TRACED_UNARY(abs, Abs)
TF_TRACED_UNARY(neg, Neg)
TF_TRACED_UNARY(conj, Conj)
TF_TRACED_UNARY(exp, Exp)
TF_TRACED_UNARY(expm1, Expm1)
TF_TRACED_UNARY(log, Log)
TF_TRACED_UNARY(log1p, Log1p)
TF_TRACED_UNARY(sqrt, Sqrt)
TF_TRACED_UNARY(rsqrt, Rsqrt)
TF_TRACED_UNARY(square, Square)
TF_TRACED_UNARY(reciprocal, Reciprocal)
TF_TRACED_UNARY(sin, Sin)
TF_TRACED_UNARY(cos, Cos)
TF_TRACED_UNARY(tan, Tan)
TF_TRACED_UNARY(sinh, Sinh)
TF_TRACED_UNARY(cosh, Cosh)
TF_TRACED_UNARY(tanh, Tanh)
TF_TRACED_UNARY(asin, Asin)
TF_TRACED_UNARY(acos, Acos)
TF_TRACED_UNARY(atan, Atan)
TF_TRACED_UNARY(sigmoid, Sigmoid)
TF_TRACED_UNARY(erf, Erf)
TF_TRACED_UNARY(sign, Sign)
TF_TRACED_UNARY(floor, Floor)
TF_TRACED_UNARY(real, Real)
TF_TRACED_UNARY(imag, Imag)
TF_TRACED_UNARY(isfinite, IsFinite)
TF_TRACED_UNARY(exp2, Exp2)
TF_TRACED_UNARY(log2, Log2)
TF_TRACED_UNARY(log10, Log10)
TF_TRACED_UNARY(asinh, Asinh)
TF_TRACED_UNARY(acosh, Acosh)
TF_TRACED_UNARY(atanh, Atanh)
TF_TRACED_UNARY(erfc, Erfc)
TF_TRACED_UNARY(sgn, Sgn)
TF_TRACED_UNARY(ceil, Ceil)
TF_TRACED_UNARY(round, Round)
TF_TRACED_UNARY(trunc, Trunc)
TF_TRACED_UNARY(angle, Angle)
TF_TRACED_UNARY(isnan, IsNan)
TF_TRACED_UNARY(logical_not, LogicalNot)
TF_TRACED_UNARY(erfinv, Erfinv)
TF_TRACED_UNARY(lgamma, Lgamma)
TF_TRACED_UNARY(digamma, Digamma)
TF_TRACED_UNARY(i0, I0)
TF_TRACED_UNARY(i0e, I0e)
TF_TRACED_UNARY(i1, I1)
TF_TRACED_UNARY(i1e, I1e)
TF_TRACED_UNARY(erfcx, Erfcx)
TF_TRACED_UNARY(ndtr, Ndtr)
TF_TRACED_UNARY(ndtri, Ndtri)
TF_TRACED_UNARY(log_ndtr, LogNdtr)
TF_TRACED_UNARY(entr, Entr)
TF_TRACED_UNARY(logit, Logit)
TF_TRACED_UNARY(frac, Frac)
TF_TRACED_UNARY(sinc, Sinc)
#undef TF_TRACED_UNARY

std::pair<TracedTensor, TracedTensor> frexp(const TracedTensor& x) {
  return {unary(UnaryOp::FrexpMantissa, x), unary(UnaryOp::FrexpExponent, x)};
}
TracedTensor polygamma(std::int64_t n, const TracedTensor& x) {
  return build(prim::Polygamma{n}, {x});
}
TracedTensor mvlgamma(const TracedTensor& x, std::int64_t p) {
  if (p < 1) {
    fail(ErrorKind::InvalidArgument, "mvlgamma", "dimension p = ", p, " must be >= 1");
  }
  TracedTensor out = lgamma(x);
  for (std::int64_t i = 1; i < p; ++i) out = out + lgamma(x - 0.5 * static_cast<double>(i));
  const auto pd = static_cast<double>(p);
  return out + pd * (pd - 1) / 4 * std::log(std::numbers::pi);
}

#define TF_TRACED_BINARY(fn, kind)                                \
  TracedTensor fn(const TracedTensor& a, const TracedTensor& b) { \
    return binary(BinaryOp::kind, a, b);                          \
  }
TF_TRACED_BINARY(add, Add)
TF_TRACED_BINARY(sub, Sub)
TF_TRACED_BINARY(mul, Mul)
TF_TRACED_BINARY(div, Div)
TF_TRACED_BINARY(pow, Pow)
TF_TRACED_BINARY(maximum, Maximum)
TF_TRACED_BINARY(minimum, Minimum)
TF_TRACED_BINARY(atan2, Atan2)
TF_TRACED_BINARY(hypot, Hypot)
TF_TRACED_BINARY(copysign, Copysign)
TF_TRACED_BINARY(fmod, Fmod)
TF_TRACED_BINARY(remainder, Remainder)
TF_TRACED_BINARY(logical_and, LogicalAnd)
TF_TRACED_BINARY(logical_or, LogicalOr)
TF_TRACED_BINARY(xlogy, Xlogy)
TF_TRACED_BINARY(xlog1py, Xlog1py)
TF_TRACED_BINARY(logaddexp, LogAddExp)
TF_TRACED_BINARY(eq, Eq)
TF_TRACED_BINARY(ne, Ne)
TF_TRACED_BINARY(lt, Lt)
TF_TRACED_BINARY(le, Le)
TF_TRACED_BINARY(gt, Gt)
TF_TRACED_BINARY(ge, Ge)
#undef TF_TRACED_BINARY

TracedTensor where(const TracedTensor& cond, const TracedTensor& a, const TracedTensor& b) {
  return build(prim::Select{}, {cond, a, b});
}
TracedTensor clamp(const TracedTensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  return build(prim::Clamp{lo, hi}, {x});
}

TracedTensor operator+(const TracedTensor& a, const TracedTensor& b) {
  return add(a, b);
}
TracedTensor operator-(const TracedTensor& a, const TracedTensor& b) {
  return sub(a, b);
}
TracedTensor operator*(const TracedTensor& a, const TracedTensor& b) {
  return mul(a, b);
}
TracedTensor operator/(const TracedTensor& a, const TracedTensor& b) {
  return div(a, b);
}
TracedTensor operator-(const TracedTensor& a) {
  return neg(a);
}
TracedTensor operator+(const TracedTensor& a, Scalar b) {
  return add(a, scalar_like(a, b));
}
TracedTensor operator-(const TracedTensor& a, Scalar b) {
  return sub(a, scalar_like(a, b));
}
TracedTensor operator*(const TracedTensor& a, Scalar b) {
  return mul(a, scalar_like(a, b));
}
TracedTensor operator/(const TracedTensor& a, Scalar b) {
  return div(a, scalar_like(a, b));
}
TracedTensor operator+(Scalar a, const TracedTensor& b) {
  return add(scalar_like(b, a), b);
}
TracedTensor operator-(Scalar a, const TracedTensor& b) {
  return sub(scalar_like(b, a), b);
}
TracedTensor operator*(Scalar a, const TracedTensor& b) {
  return mul(scalar_like(b, a), b);
}
TracedTensor operator/(Scalar a, const TracedTensor& b) {
  return div(scalar_like(b, a), b);
}

// ---- reductions ----------------------------------------------------------------------

TracedTensor reduce(ReduceOp op, const TracedTensor& x, Axes axes, bool keepdim) {
  return build(prim::Reduce{op, std::move(axes), keepdim}, {x});
}
TracedTensor sum(const TracedTensor& x, Axes axes, bool keepdim) {
  return reduce(ReduceOp::Sum, x, std::move(axes), keepdim);
}
TracedTensor sum(const TracedTensor& x) {
  return sum(x, all_axes(x));
}
TracedTensor prod(const TracedTensor& x, Axes axes, bool keepdim) {
  return reduce(ReduceOp::Prod, x, std::move(axes), keepdim);
}
TracedTensor prod(const TracedTensor& x) {
  return prod(x, all_axes(x));
}
TracedTensor mean(const TracedTensor& x, Axes axes, bool keepdim) {
  return reduce(ReduceOp::Mean, x, std::move(axes), keepdim);
}
TracedTensor mean(const TracedTensor& x) {
  return mean(x, all_axes(x));
}
TracedTensor max(const TracedTensor& x, Axes axes, bool keepdim) {
  return reduce(ReduceOp::Max, x, std::move(axes), keepdim);
}
TracedTensor min(const TracedTensor& x, Axes axes, bool keepdim) {
  return reduce(ReduceOp::Min, x, std::move(axes), keepdim);
}
TracedTensor max(const TracedTensor& x) {
  return max(x, all_axes(x));
}
TracedTensor min(const TracedTensor& x) {
  return min(x, all_axes(x));
}
TracedTensor all(const TracedTensor& x, Axes axes, bool keepdim) {
  return reduce(ReduceOp::All, x, std::move(axes), keepdim);
}
TracedTensor all(const TracedTensor& x) {
  return all(x, all_axes(x));
}
TracedTensor any(const TracedTensor& x, Axes axes, bool keepdim) {
  return reduce(ReduceOp::Any, x, std::move(axes), keepdim);
}
TracedTensor any(const TracedTensor& x) {
  return any(x, all_axes(x));
}
TracedTensor logsumexp(const TracedTensor& x, Axes axes, bool keepdim) {
  return reduce(ReduceOp::LogSumExp, x, std::move(axes), keepdim);
}
TracedTensor logsumexp(const TracedTensor& x) {
  return logsumexp(x, all_axes(x));
}
TracedTensor var(const TracedTensor& x, Axes axes, double correction, bool keepdim) {
  return build(prim::Variance{std::move(axes), correction, keepdim, false}, {x});
}
TracedTensor std_dev(const TracedTensor& x, Axes axes, double correction, bool keepdim) {
  return build(prim::Variance{std::move(axes), correction, keepdim, true}, {x});
}
TracedTensor argmax(const TracedTensor& x, std::int64_t axis, bool keepdim) {
  return build(prim::ArgReduce{true, axis, keepdim}, {x});
}
TracedTensor argmin(const TracedTensor& x, std::int64_t axis, bool keepdim) {
  return build(prim::ArgReduce{false, axis, keepdim}, {x});
}

// ---- contractions --------------------------------------------------------------------

TracedTensor dot_general(const TracedTensor& lhs, const TracedTensor& rhs, const DotDims& dims) {
  return build(prim::DotGeneral{dims}, {lhs, rhs});
}

TracedTensor matmul(const TracedTensor& a, const TracedTensor& b) {
  if (a.rank() == 0 || b.rank() == 0) {
    fail(ErrorKind::RankMismatch, "matmul", "matmul needs operands of rank >= 1, got ranks ",
         a.rank(), " and ", b.rank());
  }
  TracedTensor A = a.rank() == 1 ? reshape(a, {1, a.shape()[0]}) : a;
  TracedTensor B = b.rank() == 1 ? reshape(b, {b.shape()[0], 1}) : b;
  if (A.rank() != B.rank()) {
    fail(ErrorKind::RankMismatch, "matmul", "traced matmul needs equal batch ranks, got ",
         A.rank() - 2, " and ", B.rank() - 2, "; broadcast_in_dim the operand first");
  }
  DotDims dims;
  dims.lhs_contracting = {1};
  dims.rhs_contracting = {0};
  for (std::int64_t i = 2; i < A.rank(); ++i) {
    dims.lhs_batch.push_back(i);
    dims.rhs_batch.push_back(i);
  }
  TracedTensor c = dot_general(A, B, dims);
  if (a.rank() == 1 || b.rank() == 1) {
    SymShape s;
    if (a.rank() != 1) s.push_back(c.shape()[0]);
    if (b.rank() != 1) s.push_back(c.shape()[1]);
    for (std::size_t i = 2; i < c.shape().size(); ++i) s.push_back(c.shape()[i]);
    c = reshape(c, s);
  }
  return c;
}

// ---- structural ----------------------------------------------------------------------

TracedTensor permute(const TracedTensor& x, Axes perm) {
  return build(prim::Transpose{std::move(perm)}, {x});
}
TracedTensor transpose(const TracedTensor& x, std::int64_t a, std::int64_t b) {
  Axes perm = all_axes(x);
  const auto ia = normalize_axis(a, x.rank(), "transpose");
  const auto ib = normalize_axis(b, x.rank(), "transpose");
  std::swap(perm[static_cast<std::size_t>(ia)], perm[static_cast<std::size_t>(ib)]);
  return permute(x, perm);
}
TracedTensor reshape(const TracedTensor& x, SymShape shape) {
  return build(prim::Reshape{std::move(shape)}, {x});
}
TracedTensor broadcast_in_dim(const TracedTensor& x, SymShape shape, Axes dims) {
  return build(prim::BroadcastInDim{std::move(shape), std::move(dims)}, {x});
}
TracedTensor broadcast_to(const TracedTensor& x, const SymShape& shape) {
  if (x.rank() > static_cast<std::int64_t>(shape.size())) {
    fail(ErrorKind::RankMismatch, "broadcast_to", "cannot broadcast rank ", x.rank(), " to rank ",
         shape.size());
  }
  Axes dims;
  const std::int64_t lead = static_cast<std::int64_t>(shape.size()) - x.rank();
  for (std::int64_t i = 0; i < x.rank(); ++i) dims.push_back(lead + i);
  return broadcast_in_dim(x, shape, dims);
}
TracedTensor slice(const TracedTensor& x, Shape start, Shape limit, Shape stride) {
  if (stride.empty()) stride = Shape(start.size(), 1);
  return build(prim::Slice{std::move(start), std::move(limit), std::move(stride)}, {x});
}
TracedTensor pad(const TracedTensor& x, Shape low, Shape high, Scalar value, Shape interior) {
  if (interior.empty()) interior = Shape(low.size(), 0);
  return build(prim::Pad{std::move(low), std::move(high), std::move(interior), value}, {x});
}
TracedTensor concatenate(std::span<const TracedTensor> xs, std::int64_t axis) {
  return detail::make_traced1(make_primitive(prim::Concatenate{axis, xs.size()}), xs);
}
TracedTensor stack(std::span<const TracedTensor> xs, std::int64_t axis) {
  if (xs.empty()) fail(ErrorKind::InvalidArgument, "stack", "needs at least one tensor");
  for (const TracedTensor& x : xs) {
    if (!x.defined()) fail(ErrorKind::InvalidArgument, "stack", "an input is undefined");
  }
  const std::int64_t a = normalize_axis(axis, xs[0].rank() + 1, "stack");
  std::vector<TracedTensor> parts;
  for (const TracedTensor& x : xs) {
    SymShape s;
    for (std::int64_t d = 0; d <= x.rank(); ++d) {
      if (d == a) s.push_back(SymDim(1));
      if (d < x.rank()) s.push_back(x.shape()[static_cast<std::size_t>(d)]);
    }
    parts.push_back(reshape(x, s));
  }
  return concatenate(parts, a);
}
TracedTensor reverse(const TracedTensor& x, Axes axes) {
  return build(prim::Reverse{std::move(axes)}, {x});
}
TracedTensor index_select(const TracedTensor& x, std::int64_t axis, const TracedTensor& index) {
  return build(prim::IndexSelect{axis}, {x, index});
}
TracedTensor take_along_axis(const TracedTensor& x, const TracedTensor& index, std::int64_t axis) {
  return build(prim::TakeAlongAxis{axis}, {x, index});
}
TracedTensor scatter_add(const TracedTensor& x, std::int64_t axis, const TracedTensor& index,
                         const TracedTensor& src) {
  return build(prim::ScatterAdd{axis}, {x, index, src});
}
TracedTensor diagonal(const TracedTensor& x, std::int64_t offset, std::int64_t axis1,
                      std::int64_t axis2) {
  return build(prim::Diagonal{offset, axis1, axis2}, {x});
}
TracedTensor diag_embed(const TracedTensor& x, std::int64_t offset) {
  return build(prim::DiagEmbed{offset}, {x});
}
TracedTensor tril(const TracedTensor& x, std::int64_t k) {
  return build(prim::Triangle{true, k}, {x});
}
TracedTensor triu(const TracedTensor& x, std::int64_t k) {
  return build(prim::Triangle{false, k}, {x});
}
TracedTensor convert(const TracedTensor& x, DType dtype) {
  return build(prim::Convert{dtype, false}, {x});
}
TracedTensor cast(const TracedTensor& x, DType dtype) {
  return build(prim::Convert{dtype, true}, {x});
}

}  // namespace tenferro
