#pragma once
// The operations of both AD tiers, written once. Each function is a template
// over the tensor type, constrained to `AdTensor` (EagerTensor or
// TracedTensor), so an op exists in the eager and the traced tier with one
// signature and one semantics:
//
//   EagerTensor  y = exp(x_eager);    // runs now, records when x is tracked
//   TracedTensor t = exp(x_traced);   // builds one graph node
//
// Semantics (dtypes, broadcasting, errors) are those of the direct ops in
// tenferro/backend/*.hpp. Scalars mix with tensors like Python numbers do in
// PyTorch: a real scalar takes a floating tensor's dtype. Axis lists are
// `Axes` (braces, spans, vectors); shapes are `ShapeArg` (braces of constants
// or symbolic sizes, spans, vectors, SymShape). The eager tier needs constant
// extents; a symbolic one is InvalidArgument.
//
// How it is built: the one-line forms below are inline and reduce to a few
// tier hooks (`unary`, `binary`, `detail::apply_primitive`, `full_like`...)
// that src/ad/surface/tensor_ops.cpp defines once and instantiates for both tiers.

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "tenferro/core/error.hpp"
#include "tenferro/ops/primitives.hpp"

namespace tenferro {

class EagerTensor;
class TracedTensor;

/// The tensor types of the AD tiers.
template <class T>
concept AdTensor = std::same_as<T, EagerTensor> || std::same_as<T, TracedTensor>;

/// A shape argument: constants ({2, 3}, a span, a vector, a Shape) or
/// symbolic extents ({SymDim::var("n"), 3}, a SymShape). One extent may be -1
/// in reshape (resolved against the input's size when that is constant).
class ShapeArg {
 public:
  ShapeArg() = default;
  ShapeArg(std::initializer_list<SymDim> dims) : dims_(dims) {}  // NOLINT: implicit on purpose
  ShapeArg(SymShape dims) : dims_(std::move(dims)) {}            // NOLINT
  ShapeArg(std::span<const std::int64_t> dims) : dims_(to_sym_shape(dims)) {}  // NOLINT
  ShapeArg(const std::vector<std::int64_t>& dims)                              // NOLINT
      : dims_(to_sym_shape(dims)) {}
  ShapeArg(const Shape& dims) : dims_(to_sym_shape(dims.span())) {}  // NOLINT
  template <std::size_t N>
  ShapeArg(const std::int64_t (&dims)[N])  // NOLINT
      : dims_(to_sym_shape(std::span<const std::int64_t>(dims, N))) {}

  const SymShape& dims() const& { return dims_; }
  SymShape dims() && { return std::move(dims_); }

 private:
  SymShape dims_;
};

namespace detail {
/// Runs (eager) or records (traced) one single-output primitive.
template <AdTensor T>
T apply_primitive(prim::Params params, std::initializer_list<T> inputs);
/// The inputs' tensors joined along `axis` (shared by concatenate's forms).
template <AdTensor T>
T concatenate_span(std::span<const T> xs, std::int64_t axis);
template <AdTensor T>
T stack_span(std::span<const T> xs, std::int64_t axis);
template <AdTensor T>
std::vector<T> apply_span(const OpPtr& op, std::span<const T> inputs);
}  // namespace detail

/// Applies any op (primitive or extension) to tensors of one tier (eager: one
/// runtime): one tensor per op output.
template <AdTensor T>
std::vector<T> apply(const OpPtr& op, std::span<const T> inputs) {
  return detail::apply_span<T>(op, inputs);
}
template <AdTensor T>
std::vector<T> apply(const OpPtr& op, const std::vector<T>& inputs) {
  return detail::apply_span<T>(op, inputs);
}
template <AdTensor T, std::size_t N>
std::vector<T> apply(const OpPtr& op, const T (&inputs)[N]) {
  return detail::apply_span<T>(op, std::span<const T>(inputs, N));
}
template <AdTensor T>
std::vector<T> apply(const OpPtr& op, std::initializer_list<T> inputs) {
  return detail::apply_span<T>(op, std::span<const T>(inputs.begin(), inputs.size()));
}

// ---- sources ------------------------------------------------------------------------

/// A filled tensor of `like`'s shape and dtype, in `like`'s tier (eager: its runtime).
template <AdTensor T>
T full_like(const T& like, Scalar value);
template <AdTensor T>
T zeros_like(const T& like) {
  return full_like(like, Scalar(0.0));
}
template <AdTensor T>
T ones_like(const T& like) {
  return full_like(like, Scalar(1.0));
}
/// A rank-0 tensor holding `value` in `like`'s tier, typed like a Python
/// number mixed with `like` (real scalars take a floating tensor's dtype).
template <AdTensor T>
T scalar_like(const T& like, Scalar value);

// ---- elementwise (NumPy broadcasting, dtype rules of backend/elementwise.hpp) ------

template <AdTensor T>
T unary(UnaryOp op, const T& x);
template <AdTensor T>
T binary(BinaryOp op, const T& a, const T& b);

// clang-format off
// clang-format on
// One function per Api entry of backend/op_list.hpp: `fn(x)` and `fn(a, b)`.
#define TENFERRO_AD_UNARY(E, fn, compute, result, complex_advice, bool_advice, api) \
  TENFERRO_AD_UNARY_##api(E, fn)
#define TENFERRO_AD_UNARY_Api(E, fn) \
  template <AdTensor T>              \
  T fn(const T& x) {                 \
    return unary(UnaryOp::E, x);     \
  }
#define TENFERRO_AD_UNARY_Internal(E, fn)
TENFERRO_UNARY_OPS(TENFERRO_AD_UNARY)
#undef TENFERRO_AD_UNARY
#undef TENFERRO_AD_UNARY_Api
#undef TENFERRO_AD_UNARY_Internal
#define TENFERRO_AD_BINARY(E, fn, compute, result, complex_advice, bool_advice, api) \
  TENFERRO_AD_BINARY_##api(E, fn)
#define TENFERRO_AD_BINARY_Api(E, fn) \
  template <AdTensor T>               \
  T fn(const T& a, const T& b) {      \
    return binary(BinaryOp::E, a, b); \
  }
#define TENFERRO_AD_BINARY_Internal(E, fn)
TENFERRO_BINARY_OPS(TENFERRO_AD_BINARY)
#undef TENFERRO_AD_BINARY
#undef TENFERRO_AD_BINARY_Api
#undef TENFERRO_AD_BINARY_Internal

// clang-format off
template <AdTensor T> T operator+(const T& a, const T& b) { return add(a, b); }
template <AdTensor T> T operator-(const T& a, const T& b) { return sub(a, b); }
template <AdTensor T> T operator*(const T& a, const T& b) { return mul(a, b); }
template <AdTensor T> T operator/(const T& a, const T& b) { return div(a, b); }
template <AdTensor T> T operator-(const T& a) { return neg(a); }
template <AdTensor T> T operator+(const T& a, Scalar b) { return add(a, scalar_like(a, b)); }
template <AdTensor T> T operator-(const T& a, Scalar b) { return sub(a, scalar_like(a, b)); }
template <AdTensor T> T operator*(const T& a, Scalar b) { return mul(a, scalar_like(a, b)); }
template <AdTensor T> T operator/(const T& a, Scalar b) { return div(a, scalar_like(a, b)); }
template <AdTensor T> T operator+(Scalar a, const T& b) { return add(scalar_like(b, a), b); }
template <AdTensor T> T operator-(Scalar a, const T& b) { return sub(scalar_like(b, a), b); }
template <AdTensor T> T operator*(Scalar a, const T& b) { return mul(scalar_like(b, a), b); }
template <AdTensor T> T operator/(Scalar a, const T& b) { return div(scalar_like(b, a), b); }
// clang-format on

/// 0 <= n <= kMaxPolygammaOrder, else InvalidArgument.
template <AdTensor T>
T polygamma(std::int64_t n, const T& x) {
  return detail::apply_primitive<T>(prim::Polygamma{n}, {x});
}
/// The largest dimension mvlgamma takes (its sum unrolls p terms).
inline constexpr std::int64_t kMaxMvlgammaDimension = 10000;
/// Multivariate log-gamma of dimension 1 <= p <= kMaxMvlgammaDimension
/// (PyTorch's mvlgamma): sum_{i<p} lgamma(x - i/2) + p(p-1)/4 log(pi).
template <AdTensor T>
T mvlgamma(const T& x, std::int64_t p);
/// {mantissa, exponent (i32, not differentiable)}.
template <AdTensor T>
std::pair<T, T> frexp(const T& x) {
  return {unary(UnaryOp::FrexpMantissa, x), unary(UnaryOp::FrexpExponent, x)};
}
template <AdTensor T>
T where(const T& cond, const T& a, const T& b) {
  return detail::apply_primitive<T>(prim::Select{}, {cond, a, b});
}
template <AdTensor T>
T clamp(const T& x, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  return detail::apply_primitive<T>(prim::Clamp{lo, hi}, {x});
}

// ---- reductions (empty axes reduce nothing; the forms without axes reduce all) ------

template <AdTensor T>
T reduce(ReduceOp op, const T& x, Axes axes, bool keepdim = false) {
  return detail::apply_primitive<T>(prim::Reduce{op, std::move(axes), keepdim}, {x});
}
/// Every axis of x: 0, 1, ..., rank - 1.
template <AdTensor T>
Axes every_axis(const T& x) {
  Axes a;
  for (std::int64_t i = 0; i < x.rank(); ++i) a.push_back(i);
  return a;
}

// clang-format off
template <AdTensor T> T sum(const T& x, Axes axes, bool keepdim = false) { return reduce(ReduceOp::Sum, x, std::move(axes), keepdim); }
template <AdTensor T> T sum(const T& x) { return reduce(ReduceOp::Sum, x, every_axis(x)); }
template <AdTensor T> T prod(const T& x, Axes axes, bool keepdim = false) { return reduce(ReduceOp::Prod, x, std::move(axes), keepdim); }
template <AdTensor T> T prod(const T& x) { return reduce(ReduceOp::Prod, x, every_axis(x)); }
template <AdTensor T> T mean(const T& x, Axes axes, bool keepdim = false) { return reduce(ReduceOp::Mean, x, std::move(axes), keepdim); }
template <AdTensor T> T mean(const T& x) { return reduce(ReduceOp::Mean, x, every_axis(x)); }
template <AdTensor T> T max(const T& x, Axes axes, bool keepdim = false) { return reduce(ReduceOp::Max, x, std::move(axes), keepdim); }
template <AdTensor T> T max(const T& x) { return reduce(ReduceOp::Max, x, every_axis(x)); }
template <AdTensor T> T min(const T& x, Axes axes, bool keepdim = false) { return reduce(ReduceOp::Min, x, std::move(axes), keepdim); }
template <AdTensor T> T min(const T& x) { return reduce(ReduceOp::Min, x, every_axis(x)); }
template <AdTensor T> T all(const T& x, Axes axes, bool keepdim = false) { return reduce(ReduceOp::All, x, std::move(axes), keepdim); }
template <AdTensor T> T all(const T& x) { return reduce(ReduceOp::All, x, every_axis(x)); }
template <AdTensor T> T any(const T& x, Axes axes, bool keepdim = false) { return reduce(ReduceOp::Any, x, std::move(axes), keepdim); }
template <AdTensor T> T any(const T& x) { return reduce(ReduceOp::Any, x, every_axis(x)); }
template <AdTensor T> T logsumexp(const T& x, Axes axes, bool keepdim = false) { return reduce(ReduceOp::LogSumExp, x, std::move(axes), keepdim); }
template <AdTensor T> T logsumexp(const T& x) { return reduce(ReduceOp::LogSumExp, x, every_axis(x)); }
// clang-format on

template <AdTensor T>
T var(const T& x, Axes axes, double correction = 1.0, bool keepdim = false) {
  return detail::apply_primitive<T>(prim::Variance{std::move(axes), correction, keepdim, false},
                                    {x});
}
template <AdTensor T>
T std_dev(const T& x, Axes axes, double correction = 1.0, bool keepdim = false) {
  return detail::apply_primitive<T>(prim::Variance{std::move(axes), correction, keepdim, true},
                                    {x});
}
template <AdTensor T>
T argmax(const T& x, std::int64_t axis, bool keepdim = false) {
  return detail::apply_primitive<T>(prim::ArgReduce{true, axis, keepdim}, {x});
}
template <AdTensor T>
T argmin(const T& x, std::int64_t axis, bool keepdim = false) {
  return detail::apply_primitive<T>(prim::ArgReduce{false, axis, keepdim}, {x});
}

// ---- contractions ------------------------------------------------------------------

template <AdTensor T>
T dot_general(const T& lhs, const T& rhs, const DotDims& dims) {
  return detail::apply_primitive<T>(prim::DotGeneral{dims}, {lhs, rhs});
}
/// [m, k, batch...] x [k, n, batch...] -> [m, n, batch...]; batch axes
/// broadcast (NumPy rules, right-aligned; symbolic extents must be equal or
/// constant 1), rank-1 operands act as row/column vectors as in the direct
/// matmul.
template <AdTensor T>
T matmul(const T& a, const T& b);

// ---- structural (each returns a fresh tensor) ----------------------------------------

template <AdTensor T>
T permute(const T& x, Axes perm) {
  return detail::apply_primitive<T>(prim::Transpose{std::move(perm)}, {x});
}
template <AdTensor T>
T transpose(const T& x, std::int64_t a = 0, std::int64_t b = 1);
/// One extent may be -1 (resolved when x's size and the other extents are constant).
template <AdTensor T>
T reshape(const T& x, ShapeArg shape);
/// x's axis i becomes axis dims[i] of `shape` (XLA's broadcast_in_dim).
template <AdTensor T>
T broadcast_in_dim(const T& x, ShapeArg shape, Axes dims);
/// NumPy broadcast (right-aligned) to `shape`.
template <AdTensor T>
T broadcast_to(const T& x, ShapeArg shape);
/// Static slice; an empty stride means stride 1 on every axis.
template <AdTensor T>
T slice(const T& x, Shape start, Shape limit, Shape stride = {}) {
  if (stride.empty()) stride = Shape(start.size(), 1);
  return detail::apply_primitive<T>(
      prim::Slice{std::move(start), std::move(limit), std::move(stride)}, {x});
}
/// Edge padding by `low`/`high` (negative crops) with `interior` padding
/// between elements (empty: none).
template <AdTensor T>
T pad(const T& x, Shape low, Shape high, Scalar value, Shape interior = {}) {
  if (interior.empty()) interior = Shape(low.size(), 0);
  return detail::apply_primitive<T>(
      prim::Pad{std::move(low), std::move(high), std::move(interior), value}, {x});
}
template <AdTensor T>
T concatenate(std::span<const T> xs, std::int64_t axis) {
  return detail::concatenate_span<T>(xs, axis);
}
template <AdTensor T>
T concatenate(const std::vector<T>& xs, std::int64_t axis) {
  return detail::concatenate_span<T>(xs, axis);
}
template <AdTensor T, std::size_t N>
T concatenate(const T (&xs)[N], std::int64_t axis) {
  return detail::concatenate_span<T>(std::span<const T>(xs, N), axis);
}
template <AdTensor T>
T concatenate(std::initializer_list<T> xs, std::int64_t axis) {
  return detail::concatenate_span<T>(std::span<const T>(xs.begin(), xs.size()), axis);
}
/// Joins tensors of one shape along a new axis.
template <AdTensor T>
T stack(std::span<const T> xs, std::int64_t axis) {
  return detail::stack_span<T>(xs, axis);
}
template <AdTensor T>
T stack(const std::vector<T>& xs, std::int64_t axis) {
  return detail::stack_span<T>(xs, axis);
}
template <AdTensor T, std::size_t N>
T stack(const T (&xs)[N], std::int64_t axis) {
  return detail::stack_span<T>(std::span<const T>(xs, N), axis);
}
template <AdTensor T>
T stack(std::initializer_list<T> xs, std::int64_t axis) {
  return detail::stack_span<T>(std::span<const T>(xs.begin(), xs.size()), axis);
}
template <AdTensor T>
T reverse(const T& x, Axes axes) {
  return detail::apply_primitive<T>(prim::Reverse{std::move(axes)}, {x});
}
/// reverse under PyTorch's name (torch.flip).
template <AdTensor T>
T flip(const T& x, Axes axes) {
  return reverse(x, std::move(axes));
}
template <AdTensor T>
T diagonal(const T& x, std::int64_t offset = 0, std::int64_t axis1 = 0, std::int64_t axis2 = 1) {
  return detail::apply_primitive<T>(prim::Diagonal{offset, axis1, axis2}, {x});
}
template <AdTensor T>
T diag_embed(const T& x, std::int64_t offset = 0) {
  return detail::apply_primitive<T>(prim::DiagEmbed{offset}, {x});
}
template <AdTensor T>
T tril(const T& x, std::int64_t k = 0) {
  return detail::apply_primitive<T>(prim::Triangle{true, k}, {x});
}
template <AdTensor T>
T triu(const T& x, std::int64_t k = 0) {
  return detail::apply_primitive<T>(prim::Triangle{false, k}, {x});
}
template <AdTensor T>
T index_select(const T& x, std::int64_t axis, const T& index) {
  return detail::apply_primitive<T>(prim::IndexSelect{axis}, {x, index});
}
template <AdTensor T>
T take_along_axis(const T& x, const T& index, std::int64_t axis) {
  return detail::apply_primitive<T>(prim::TakeAlongAxis{axis}, {x, index});
}
template <AdTensor T>
T scatter_add(const T& x, std::int64_t axis, const T& index, const T& src) {
  return detail::apply_primitive<T>(prim::ScatterAdd{axis}, {x, index, src});
}
/// Lossless conversion (DTypeMismatch otherwise); cast converts lossily on request.
template <AdTensor T>
T convert(const T& x, DType dtype) {
  return detail::apply_primitive<T>(prim::Convert{dtype, false}, {x});
}
template <AdTensor T>
T cast(const T& x, DType dtype) {
  return detail::apply_primitive<T>(prim::Convert{dtype, true}, {x});
}

// ---- scans and sorting (axes as in tenferro/backend/scan.hpp and sort.hpp) ----------

/// Running sum along `axis` (torch.cumsum; PyTorch dim d is our axis rank-1-d).
/// bool and integers accumulate in i64. Linear: the vjp is the reverse cumsum.
template <AdTensor T>
T cumsum(const T& x, std::int64_t axis) {
  return detail::apply_primitive<T>(prim::Cumulative{ReduceOp::Sum, axis, false}, {x});
}
/// Running product along `axis` (torch.cumprod). The first derivative is exact
/// with zeros in x (PyTorch's formula); higher ones are exact away from zeros.
template <AdTensor T>
T cumprod(const T& x, std::int64_t axis) {
  return detail::apply_primitive<T>(prim::Cumulative{ReduceOp::Prod, axis, false}, {x});
}
/// Indices (i64) that sort x along `axis`: stable, NaN largest (torch.argsort(stable=True)).
template <AdTensor T>
T argsort(const T& x, std::int64_t axis, bool descending = false) {
  return detail::apply_primitive<T>(prim::Argsort{axis, descending, -1}, {x});
}
/// {values, indices} of x sorted along `axis` (torch.sort(stable=True)).
/// The values are take_along_axis(x, indices): differentiable as a gather.
template <AdTensor T>
std::pair<T, T> sort(const T& x, std::int64_t axis, bool descending = false) {
  T idx = argsort(x, axis, descending);
  if (x.rank() == 0) return {x, idx};
  return {take_along_axis(x, idx, axis), idx};
}
/// {values, indices} of the k largest (smallest unless `largest`) entries
/// along `axis`, sorted; ties keep the lower index first (torch.topk).
/// 0 <= k <= extent of the axis, else InvalidArgument.
template <AdTensor T>
std::pair<T, T> topk(const T& x, std::int64_t k, std::int64_t axis, bool largest = true) {
  if (k < 0) {
    fail(ErrorKind::InvalidArgument, "topk", "k = ", k, " is negative; choose 0 <= k <= extent");
  }
  T idx = detail::apply_primitive<T>(prim::Argsort{axis, largest, k}, {x});
  if (x.rank() == 0) return {x, idx};
  return {take_along_axis(x, idx, axis), idx};
}

}  // namespace tenferro
