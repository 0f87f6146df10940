#include "tenferro/ad/eager_ops.hpp"

#include <cmath>
#include <numbers>

#include "ad/eager_impl.hpp"
#include "tenferro/backend/structural.hpp"

namespace tenferro {

namespace {
EagerTensor run1(prim::Params p, std::initializer_list<EagerTensor> inputs) {
  const OpPtr op = make_primitive(std::move(p));
  std::span<const EagerTensor> in(inputs.begin(), inputs.size());
  return detail::eager_dispatch1(detail::common_runtime(in, op->name()), op, in);
}
Axes axes_of(std::span<const std::int64_t> s) {
  return Axes(s);
}
Shape shape_of(std::span<const std::int64_t> s) {
  return Shape(s);
}
}  // namespace

std::vector<EagerTensor> apply(const OpPtr& op, std::span<const EagerTensor> inputs) {
  if (!op) fail(ErrorKind::InvalidArgument, "apply", "op is null");
  return detail::eager_dispatch(detail::common_runtime(inputs, op->name()), op, inputs);
}

namespace {
// Elementwise ops are immutable values: build each once instead of per call.
const OpPtr& cached_unary(UnaryOp op) {
  static const std::vector<OpPtr> table = [] {
    std::vector<OpPtr> t;
    for (int i = 0; i < kUnaryOpCount; ++i)
      t.push_back(make_primitive(prim::Unary{static_cast<UnaryOp>(i)}));
    return t;
  }();
  return table[static_cast<std::size_t>(op)];
}
const OpPtr& cached_binary(BinaryOp op) {
  static const std::vector<OpPtr> table = [] {
    std::vector<OpPtr> t;
    for (int i = 0; i < kBinaryOpCount; ++i)
      t.push_back(make_primitive(prim::Binary{static_cast<BinaryOp>(i)}));
    return t;
  }();
  return table[static_cast<std::size_t>(op)];
}
}  // namespace

EagerTensor unary(UnaryOp op, const EagerTensor& x) {
  const EagerTensor in[1] = {x};
  return detail::eager_dispatch1(detail::common_runtime(in, name(op)), cached_unary(op), in);
}
EagerTensor binary(BinaryOp op, const EagerTensor& a, const EagerTensor& b) {
  const EagerTensor in[2] = {a, b};
  return detail::eager_dispatch1(detail::common_runtime(in, name(op)), cached_binary(op), in);
}
EagerTensor abs(const EagerTensor& x) {
  return unary(UnaryOp::Abs, x);
}
EagerTensor neg(const EagerTensor& x) {
  return unary(UnaryOp::Neg, x);
}
EagerTensor conj(const EagerTensor& x) {
  return unary(UnaryOp::Conj, x);
}
EagerTensor exp(const EagerTensor& x) {
  return unary(UnaryOp::Exp, x);
}
EagerTensor exp2(const EagerTensor& x) {
  return unary(UnaryOp::Exp2, x);
}
EagerTensor expm1(const EagerTensor& x) {
  return unary(UnaryOp::Expm1, x);
}
EagerTensor log(const EagerTensor& x) {
  return unary(UnaryOp::Log, x);
}
EagerTensor log2(const EagerTensor& x) {
  return unary(UnaryOp::Log2, x);
}
EagerTensor log10(const EagerTensor& x) {
  return unary(UnaryOp::Log10, x);
}
EagerTensor log1p(const EagerTensor& x) {
  return unary(UnaryOp::Log1p, x);
}
EagerTensor sqrt(const EagerTensor& x) {
  return unary(UnaryOp::Sqrt, x);
}
EagerTensor rsqrt(const EagerTensor& x) {
  return unary(UnaryOp::Rsqrt, x);
}
EagerTensor square(const EagerTensor& x) {
  return unary(UnaryOp::Square, x);
}
EagerTensor reciprocal(const EagerTensor& x) {
  return unary(UnaryOp::Reciprocal, x);
}
EagerTensor sin(const EagerTensor& x) {
  return unary(UnaryOp::Sin, x);
}
EagerTensor cos(const EagerTensor& x) {
  return unary(UnaryOp::Cos, x);
}
EagerTensor tan(const EagerTensor& x) {
  return unary(UnaryOp::Tan, x);
}
EagerTensor asin(const EagerTensor& x) {
  return unary(UnaryOp::Asin, x);
}
EagerTensor acos(const EagerTensor& x) {
  return unary(UnaryOp::Acos, x);
}
EagerTensor atan(const EagerTensor& x) {
  return unary(UnaryOp::Atan, x);
}
EagerTensor sinh(const EagerTensor& x) {
  return unary(UnaryOp::Sinh, x);
}
EagerTensor cosh(const EagerTensor& x) {
  return unary(UnaryOp::Cosh, x);
}
EagerTensor tanh(const EagerTensor& x) {
  return unary(UnaryOp::Tanh, x);
}
EagerTensor asinh(const EagerTensor& x) {
  return unary(UnaryOp::Asinh, x);
}
EagerTensor acosh(const EagerTensor& x) {
  return unary(UnaryOp::Acosh, x);
}
EagerTensor atanh(const EagerTensor& x) {
  return unary(UnaryOp::Atanh, x);
}
EagerTensor sigmoid(const EagerTensor& x) {
  return unary(UnaryOp::Sigmoid, x);
}
EagerTensor erf(const EagerTensor& x) {
  return unary(UnaryOp::Erf, x);
}
EagerTensor erfc(const EagerTensor& x) {
  return unary(UnaryOp::Erfc, x);
}
EagerTensor sign(const EagerTensor& x) {
  return unary(UnaryOp::Sign, x);
}
EagerTensor sgn(const EagerTensor& x) {
  return unary(UnaryOp::Sgn, x);
}
EagerTensor floor(const EagerTensor& x) {
  return unary(UnaryOp::Floor, x);
}
EagerTensor ceil(const EagerTensor& x) {
  return unary(UnaryOp::Ceil, x);
}
EagerTensor round(const EagerTensor& x) {
  return unary(UnaryOp::Round, x);
}
EagerTensor trunc(const EagerTensor& x) {
  return unary(UnaryOp::Trunc, x);
}
EagerTensor real(const EagerTensor& x) {
  return unary(UnaryOp::Real, x);
}
EagerTensor imag(const EagerTensor& x) {
  return unary(UnaryOp::Imag, x);
}
EagerTensor angle(const EagerTensor& x) {
  return unary(UnaryOp::Angle, x);
}
EagerTensor isfinite(const EagerTensor& x) {
  return unary(UnaryOp::IsFinite, x);
}
EagerTensor isnan(const EagerTensor& x) {
  return unary(UnaryOp::IsNan, x);
}
EagerTensor logical_not(const EagerTensor& x) {
  return unary(UnaryOp::LogicalNot, x);
}
#define TF_EAGER_UNARY(fn, kind)         \
  EagerTensor fn(const EagerTensor& x) { \
    return unary(UnaryOp::kind, x);      \
  }
TF_EAGER_UNARY(erfinv, Erfinv)
TF_EAGER_UNARY(lgamma, Lgamma)
TF_EAGER_UNARY(digamma, Digamma)
TF_EAGER_UNARY(i0, I0)
TF_EAGER_UNARY(i0e, I0e)
TF_EAGER_UNARY(i1, I1)
TF_EAGER_UNARY(i1e, I1e)
TF_EAGER_UNARY(erfcx, Erfcx)
TF_EAGER_UNARY(ndtr, Ndtr)
TF_EAGER_UNARY(ndtri, Ndtri)
TF_EAGER_UNARY(log_ndtr, LogNdtr)
TF_EAGER_UNARY(entr, Entr)
TF_EAGER_UNARY(logit, Logit)
TF_EAGER_UNARY(frac, Frac)
TF_EAGER_UNARY(sinc, Sinc)
#undef TF_EAGER_UNARY
std::pair<EagerTensor, EagerTensor> frexp(const EagerTensor& x) {
  return {unary(UnaryOp::FrexpMantissa, x), unary(UnaryOp::FrexpExponent, x)};
}
EagerTensor polygamma(std::int64_t n, const EagerTensor& x) {
  return run1(prim::Polygamma{n}, {x});
}
EagerTensor mvlgamma(const EagerTensor& x, std::int64_t p) {
  if (p < 1) {
    fail(ErrorKind::InvalidArgument, "mvlgamma", "dimension p = ", p, " must be >= 1");
  }
  EagerTensor out = lgamma(x);
  for (std::int64_t i = 1; i < p; ++i) out = out + lgamma(x - 0.5 * static_cast<double>(i));
  const auto pd = static_cast<double>(p);
  return out + pd * (pd - 1) / 4 * std::log(std::numbers::pi);
}
EagerTensor xlogy(const EagerTensor& a, const EagerTensor& b) {
  return binary(BinaryOp::Xlogy, a, b);
}
EagerTensor xlog1py(const EagerTensor& a, const EagerTensor& b) {
  return binary(BinaryOp::Xlog1py, a, b);
}
EagerTensor logaddexp(const EagerTensor& a, const EagerTensor& b) {
  return binary(BinaryOp::LogAddExp, a, b);
}
EagerTensor add(const EagerTensor& a, const EagerTensor& b) {
  return binary(BinaryOp::Add, a, b);
}
EagerTensor sub(const EagerTensor& a, const EagerTensor& b) {
  return binary(BinaryOp::Sub, a, b);
}
EagerTensor mul(const EagerTensor& a, const EagerTensor& b) {
  return binary(BinaryOp::Mul, a, b);
}
EagerTensor div(const EagerTensor& a, const EagerTensor& b) {
  return binary(BinaryOp::Div, a, b);
}
EagerTensor pow(const EagerTensor& a, const EagerTensor& b) {
  return binary(BinaryOp::Pow, a, b);
}
EagerTensor maximum(const EagerTensor& a, const EagerTensor& b) {
  return binary(BinaryOp::Maximum, a, b);
}
EagerTensor minimum(const EagerTensor& a, const EagerTensor& b) {
  return binary(BinaryOp::Minimum, a, b);
}
EagerTensor atan2(const EagerTensor& a, const EagerTensor& b) {
  return binary(BinaryOp::Atan2, a, b);
}
EagerTensor hypot(const EagerTensor& a, const EagerTensor& b) {
  return binary(BinaryOp::Hypot, a, b);
}
EagerTensor copysign(const EagerTensor& a, const EagerTensor& b) {
  return binary(BinaryOp::Copysign, a, b);
}
EagerTensor fmod(const EagerTensor& a, const EagerTensor& b) {
  return binary(BinaryOp::Fmod, a, b);
}
EagerTensor remainder(const EagerTensor& a, const EagerTensor& b) {
  return binary(BinaryOp::Remainder, a, b);
}
EagerTensor eq(const EagerTensor& a, const EagerTensor& b) {
  return binary(BinaryOp::Eq, a, b);
}
EagerTensor ne(const EagerTensor& a, const EagerTensor& b) {
  return binary(BinaryOp::Ne, a, b);
}
EagerTensor lt(const EagerTensor& a, const EagerTensor& b) {
  return binary(BinaryOp::Lt, a, b);
}
EagerTensor le(const EagerTensor& a, const EagerTensor& b) {
  return binary(BinaryOp::Le, a, b);
}
EagerTensor gt(const EagerTensor& a, const EagerTensor& b) {
  return binary(BinaryOp::Gt, a, b);
}
EagerTensor ge(const EagerTensor& a, const EagerTensor& b) {
  return binary(BinaryOp::Ge, a, b);
}
EagerTensor logical_and(const EagerTensor& a, const EagerTensor& b) {
  return binary(BinaryOp::LogicalAnd, a, b);
}
EagerTensor logical_or(const EagerTensor& a, const EagerTensor& b) {
  return binary(BinaryOp::LogicalOr, a, b);
}
EagerTensor where(const EagerTensor& cond, const EagerTensor& a, const EagerTensor& b) {
  return run1(prim::Select{}, {cond, a, b});
}
EagerTensor clamp(const EagerTensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  return run1(prim::Clamp{lo, hi}, {x});
}

EagerTensor scalar_like(const EagerTensor& like, Scalar value) {
  return like.runtime()->tensor(
      Tensor::scalar(value, scalar_operand_dtype(like.dtype(), value.dtype())));
}

EagerTensor operator+(const EagerTensor& a, const EagerTensor& b) {
  return add(a, b);
}
EagerTensor operator-(const EagerTensor& a, const EagerTensor& b) {
  return sub(a, b);
}
EagerTensor operator*(const EagerTensor& a, const EagerTensor& b) {
  return mul(a, b);
}
EagerTensor operator/(const EagerTensor& a, const EagerTensor& b) {
  return div(a, b);
}
EagerTensor operator-(const EagerTensor& a) {
  return neg(a);
}
EagerTensor operator+(const EagerTensor& a, Scalar b) {
  return add(a, scalar_like(a, b));
}
EagerTensor operator-(const EagerTensor& a, Scalar b) {
  return sub(a, scalar_like(a, b));
}
EagerTensor operator*(const EagerTensor& a, Scalar b) {
  return mul(a, scalar_like(a, b));
}
EagerTensor operator/(const EagerTensor& a, Scalar b) {
  return div(a, scalar_like(a, b));
}
EagerTensor operator+(Scalar a, const EagerTensor& b) {
  return add(scalar_like(b, a), b);
}
EagerTensor operator-(Scalar a, const EagerTensor& b) {
  return sub(scalar_like(b, a), b);
}
EagerTensor operator*(Scalar a, const EagerTensor& b) {
  return mul(scalar_like(b, a), b);
}
EagerTensor operator/(Scalar a, const EagerTensor& b) {
  return div(scalar_like(b, a), b);
}

EagerTensor reduce(ReduceOp op, const EagerTensor& x, std::span<const std::int64_t> axes,
                   bool keepdim) {
  return run1(prim::Reduce{op, axes_of(axes), keepdim}, {x});
}
namespace {
Axes all_axes(const EagerTensor& x) {
  Axes a;
  for (std::int64_t i = 0; i < x.rank(); ++i) a.push_back(i);
  return a;
}
}  // namespace
EagerTensor sum(const EagerTensor& x, std::span<const std::int64_t> axes, bool keepdim) {
  return reduce(ReduceOp::Sum, x, axes, keepdim);
}
EagerTensor sum(const EagerTensor& x) {
  return run1(prim::Reduce{ReduceOp::Sum, all_axes(x), false}, {x});
}
EagerTensor prod(const EagerTensor& x, std::span<const std::int64_t> axes, bool keepdim) {
  return reduce(ReduceOp::Prod, x, axes, keepdim);
}
EagerTensor prod(const EagerTensor& x) {
  return run1(prim::Reduce{ReduceOp::Prod, all_axes(x), false}, {x});
}
EagerTensor mean(const EagerTensor& x, std::span<const std::int64_t> axes, bool keepdim) {
  return reduce(ReduceOp::Mean, x, axes, keepdim);
}
EagerTensor mean(const EagerTensor& x) {
  return run1(prim::Reduce{ReduceOp::Mean, all_axes(x), false}, {x});
}
EagerTensor max(const EagerTensor& x, std::span<const std::int64_t> axes, bool keepdim) {
  return reduce(ReduceOp::Max, x, axes, keepdim);
}
EagerTensor max(const EagerTensor& x) {
  return run1(prim::Reduce{ReduceOp::Max, all_axes(x), false}, {x});
}
EagerTensor min(const EagerTensor& x, std::span<const std::int64_t> axes, bool keepdim) {
  return reduce(ReduceOp::Min, x, axes, keepdim);
}
EagerTensor min(const EagerTensor& x) {
  return run1(prim::Reduce{ReduceOp::Min, all_axes(x), false}, {x});
}
EagerTensor all(const EagerTensor& x, std::span<const std::int64_t> axes, bool keepdim) {
  return reduce(ReduceOp::All, x, axes, keepdim);
}
EagerTensor all(const EagerTensor& x) {
  return run1(prim::Reduce{ReduceOp::All, all_axes(x), false}, {x});
}
EagerTensor any(const EagerTensor& x, std::span<const std::int64_t> axes, bool keepdim) {
  return reduce(ReduceOp::Any, x, axes, keepdim);
}
EagerTensor any(const EagerTensor& x) {
  return run1(prim::Reduce{ReduceOp::Any, all_axes(x), false}, {x});
}
EagerTensor logsumexp(const EagerTensor& x, std::span<const std::int64_t> axes, bool keepdim) {
  return reduce(ReduceOp::LogSumExp, x, axes, keepdim);
}
EagerTensor logsumexp(const EagerTensor& x) {
  return run1(prim::Reduce{ReduceOp::LogSumExp, all_axes(x), false}, {x});
}
EagerTensor var(const EagerTensor& x, std::span<const std::int64_t> axes, double correction,
                bool keepdim) {
  return run1(prim::Variance{axes_of(axes), correction, keepdim, false}, {x});
}
EagerTensor std_dev(const EagerTensor& x, std::span<const std::int64_t> axes, double correction,
                    bool keepdim) {
  return run1(prim::Variance{axes_of(axes), correction, keepdim, true}, {x});
}
EagerTensor argmax(const EagerTensor& x, std::int64_t axis, bool keepdim) {
  return run1(prim::ArgReduce{true, axis, keepdim}, {x});
}
EagerTensor argmin(const EagerTensor& x, std::int64_t axis, bool keepdim) {
  return run1(prim::ArgReduce{false, axis, keepdim}, {x});
}

EagerTensor dot_general(const EagerTensor& lhs, const EagerTensor& rhs, const DotDims& dims) {
  return run1(prim::DotGeneral{dims}, {lhs, rhs});
}

EagerTensor matmul(const EagerTensor& a, const EagerTensor& b) {
  // Same semantics as the direct matmul, expressed with primitives so that it
  // differentiates: vectors become matrices, batch axes broadcast, then one
  // dot_general with batch dimensions.
  if (a.rank() == 0 || b.rank() == 0) {
    fail(ErrorKind::RankMismatch, "matmul", "matmul needs operands of rank >= 1, got ranks ",
         a.rank(), " and ", b.rank());
  }
  EagerTensor A = a.rank() == 1 ? reshape(a, Shape{1, a.shape()[0]}) : a;
  EagerTensor B = b.rank() == 1 ? reshape(b, Shape{b.shape()[0], 1}) : b;
  Shape ab(A.shape().begin() + 2, A.shape().end());
  Shape bb(B.shape().begin() + 2, B.shape().end());
  const Shape batch = broadcast_shapes(ab, bb, "matmul");
  auto expand = [&](const EagerTensor& t) {
    Shape target{t.shape()[0], t.shape()[1]};
    for (auto e : batch) target.push_back(e);
    if (target == t.shape()) return t;
    Axes dims{0, 1};
    const std::int64_t lead = static_cast<std::int64_t>(batch.size()) - (t.rank() - 2);
    for (std::int64_t i = 2; i < t.rank(); ++i) dims.push_back(i + lead);
    return broadcast_in_dim(t, target, dims);
  };
  EagerTensor A2 = expand(A), B2 = expand(B);
  DotDims dims;
  dims.lhs_contracting = {1};
  dims.rhs_contracting = {0};
  for (std::size_t i = 0; i < batch.size(); ++i) {
    dims.lhs_batch.push_back(static_cast<std::int64_t>(i + 2));
    dims.rhs_batch.push_back(static_cast<std::int64_t>(i + 2));
  }
  EagerTensor c = dot_general(A2, B2, dims);
  if (a.rank() == 1 || b.rank() == 1) {
    Shape s;
    if (a.rank() != 1) s.push_back(c.shape()[0]);
    if (b.rank() != 1) s.push_back(c.shape()[1]);
    for (auto e : batch) s.push_back(e);
    c = reshape(c, s);
  }
  return c;
}

EagerTensor permute(const EagerTensor& x, std::span<const std::int64_t> perm) {
  return run1(prim::Transpose{axes_of(perm)}, {x});
}
EagerTensor transpose(const EagerTensor& x, std::int64_t a, std::int64_t b) {
  Axes perm;
  for (std::int64_t i = 0; i < x.rank(); ++i) perm.push_back(i);
  const auto ia = normalize_axis(a, x.rank(), "transpose"),
             ib = normalize_axis(b, x.rank(), "transpose");
  std::swap(perm[static_cast<std::size_t>(ia)], perm[static_cast<std::size_t>(ib)]);
  return permute(x, perm);
}
EagerTensor reshape(const EagerTensor& x, std::span<const std::int64_t> shape) {
  // Resolve a -1 here: the primitive takes a full shape.
  Shape s = x.value().numel() == 0 ? Shape(shape) : x.value().reshape_copy(shape).shape();
  return run1(prim::Reshape{to_sym_shape(s)}, {x});
}
EagerTensor broadcast_in_dim(const EagerTensor& x, std::span<const std::int64_t> shape,
                             std::span<const std::int64_t> dims) {
  return run1(prim::BroadcastInDim{to_sym_shape(shape), axes_of(dims)}, {x});
}
EagerTensor broadcast_to(const EagerTensor& x, std::span<const std::int64_t> shape) {
  if (shape.size() < x.shape().size()) {
    fail(ErrorKind::RankMismatch, "broadcast_to", "cannot broadcast rank ", x.rank(), " to rank ",
         shape.size());
  }
  Axes dims;
  const std::size_t lead = shape.size() - x.shape().size();
  for (std::size_t i = 0; i < x.shape().size(); ++i)
    dims.push_back(static_cast<std::int64_t>(lead + i));
  return broadcast_in_dim(x, shape, dims);
}
EagerTensor slice(const EagerTensor& x, std::span<const std::int64_t> start,
                  std::span<const std::int64_t> limit, std::span<const std::int64_t> stride) {
  return run1(prim::Slice{shape_of(start), shape_of(limit), shape_of(stride)}, {x});
}
EagerTensor pad(const EagerTensor& x, std::span<const std::int64_t> low,
                std::span<const std::int64_t> high, Scalar value,
                std::span<const std::int64_t> interior) {
  Shape in = interior.empty() ? Shape(low.size(), 0) : shape_of(interior);
  return run1(prim::Pad{shape_of(low), shape_of(high), in, value}, {x});
}
EagerTensor concatenate(std::span<const EagerTensor> xs, std::int64_t axis) {
  if (xs.empty()) fail(ErrorKind::InvalidArgument, "concatenate", "needs at least one tensor");
  const OpPtr op = make_primitive(prim::Concatenate{axis, xs.size()});
  return detail::eager_dispatch(detail::common_runtime(xs, "concatenate"), op, xs)[0];
}
EagerTensor stack(std::span<const EagerTensor> xs, std::int64_t axis) {
  if (xs.empty()) fail(ErrorKind::InvalidArgument, "stack", "needs at least one tensor");
  const std::int64_t a = normalize_axis(axis, xs[0].rank() + 1, "stack");
  std::vector<EagerTensor> parts;
  for (const auto& x : xs) {
    Shape s = x.shape();
    s.insert(s.begin() + a, 1);
    parts.push_back(reshape(x, s));
  }
  return concatenate(parts, a);
}
EagerTensor reverse(const EagerTensor& x, std::span<const std::int64_t> axes) {
  return run1(prim::Reverse{axes_of(axes)}, {x});
}
EagerTensor diagonal(const EagerTensor& x, std::int64_t offset, std::int64_t axis1,
                     std::int64_t axis2) {
  return run1(prim::Diagonal{offset, axis1, axis2}, {x});
}
EagerTensor diag_embed(const EagerTensor& x, std::int64_t offset) {
  return run1(prim::DiagEmbed{offset}, {x});
}
EagerTensor tril(const EagerTensor& x, std::int64_t k) {
  return run1(prim::Triangle{true, k}, {x});
}
EagerTensor triu(const EagerTensor& x, std::int64_t k) {
  return run1(prim::Triangle{false, k}, {x});
}
EagerTensor index_select(const EagerTensor& x, std::int64_t axis, const EagerTensor& index) {
  return run1(prim::IndexSelect{axis}, {x, index});
}
EagerTensor take_along_axis(const EagerTensor& x, const EagerTensor& index, std::int64_t axis) {
  return run1(prim::TakeAlongAxis{axis}, {x, index});
}
EagerTensor scatter_add(const EagerTensor& x, std::int64_t axis, const EagerTensor& index,
                        const EagerTensor& src) {
  return run1(prim::ScatterAdd{axis}, {x, index, src});
}
EagerTensor convert(const EagerTensor& x, DType dtype) {
  return run1(prim::Convert{dtype, false}, {x});
}
EagerTensor cast(const EagerTensor& x, DType dtype) {
  return run1(prim::Convert{dtype, true}, {x});
}
EagerTensor full_like(const EagerTensor& like, Scalar value) {
  return like.runtime()->tensor(full(like.shape(), value, like.dtype()));
}
EagerTensor zeros_like(const EagerTensor& like) {
  return full_like(like, 0.0);
}
EagerTensor ones_like(const EagerTensor& like) {
  return full_like(like, 1.0);
}

}  // namespace tenferro
