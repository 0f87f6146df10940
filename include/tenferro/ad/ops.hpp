#pragma once
// The operation surface of every tier, written once. Each function is a
// template over the tensor type, constrained to `SurfaceTensor`:
//
//   EagerTensor  y = exp(x_eager);       // runs now, records when x is tracked
//   TracedTensor t = exp(x_traced);      // builds one graph node
//   DirectTensor d = exp(on(cpu, x));    // runs now on `cpu`, no AD
//   Tensor       z = exp(x, cpu);        // the same, in the direct tier's form
//
// so an op exists in the direct, eager and traced tiers with one definition
// and one semantics. The direct tier's forms (a trailing Backend&, as
// `exp(x, cpu)`) are one-line calls of the same templates on DirectTensor,
// declared next to each template. Semantics: NumPy broadcasting, the dtype
// lattice of core/dtype.hpp and the primitives' rules (ops/primitives.hpp).
// Scalars mix with tensors like Python numbers do in PyTorch: a real scalar
// takes a floating tensor's dtype. Axis lists are `Axes` (braces, spans,
// vectors); shapes are `ShapeArg` (braces of constants or symbolic sizes,
// spans, vectors, SymShape). The eager and direct tiers need constant
// extents; a symbolic one is InvalidArgument.
//
// How it is built: the one-line forms below are inline and reduce to a few
// tier hooks (`unary`, `binary`, `detail::apply_primitive`, `full_like`...)
// that src/ad/surface/tensor_ops.cpp defines once and instantiates for the
// three tiers.

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "tenferro/core/error.hpp"
#include "tenferro/core/list_ref.hpp"
#include "tenferro/ops/primitives.hpp"

namespace tenferro {

class EagerTensor;
class TracedTensor;

/// The tensor types of the AD tiers.
template <class T>
concept AdTensor = std::same_as<T, EagerTensor> || std::same_as<T, TracedTensor>;

/// A tensor of the direct tier inside the one surface: a Tensor and the
/// backend its operations run on, at once and without AD bookkeeping.
/// on(backend, x) makes one. Every template of this header and of
/// composite.hpp takes it, so each operation, core or composite, exists in
/// the direct tier: `Tensor y = softplus(on(cpu, x)).value();`. Operands of
/// one operation must share the backend (ContextMismatch otherwise).
class DirectTensor {
 public:
  DirectTensor() = default;
  DirectTensor(Tensor value, Backend& backend) : value_(std::move(value)), backend_(&backend) {}
  const Tensor& value() const& { return value_; }
  Tensor value() && { return std::move(value_); }
  Backend& backend() const { return *backend_; }
  bool defined() const { return value_.defined(); }
  DType dtype() const { return value_.dtype(); }
  std::int64_t rank() const { return value_.rank(); }
  const Shape& shape() const { return value_.shape(); }
  std::int64_t numel() const { return value_.numel(); }

 private:
  Tensor value_;
  Backend* backend_ = nullptr;
};

/// `x` as a direct-tier tensor on `backend`.
inline DirectTensor on(Backend& backend, Tensor x) {
  return DirectTensor(std::move(x), backend);
}

/// The tensor types of the three tiers: what every surface function takes.
template <class T>
concept SurfaceTensor = AdTensor<T> || std::same_as<T, DirectTensor>;

namespace detail {
/// The value of a direct-tier result (the direct forms' return).
inline Tensor value_of(DirectTensor&& t) {
  return std::move(t).value();
}
/// Each tensor of a list as a direct-tier tensor on `backend`.
std::vector<DirectTensor> on_each(Backend& backend, ListRef<Tensor> xs);
}  // namespace detail

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
template <SurfaceTensor T>
T apply_primitive(prim::Params params, std::initializer_list<T> inputs);
/// The inputs' tensors joined along `axis` (shared by concatenate's forms).
template <SurfaceTensor T>
T concatenate_span(std::span<const T> xs, std::int64_t axis);
template <SurfaceTensor T>
T stack_span(std::span<const T> xs, std::int64_t axis);
template <SurfaceTensor T>
std::vector<T> apply_span(const OpPtr& op, std::span<const T> inputs);
}  // namespace detail

/// Applies any op (primitive or extension) to tensors of one tier (eager: one
/// runtime): one tensor per op output.
template <SurfaceTensor T>
std::vector<T> apply(const OpPtr& op, std::span<const T> inputs) {
  return detail::apply_span<T>(op, inputs);
}
template <SurfaceTensor T>
std::vector<T> apply(const OpPtr& op, const std::vector<T>& inputs) {
  return detail::apply_span<T>(op, inputs);
}
template <SurfaceTensor T, std::size_t N>
std::vector<T> apply(const OpPtr& op, const T (&inputs)[N]) {
  return detail::apply_span<T>(op, std::span<const T>(inputs, N));
}
template <SurfaceTensor T>
std::vector<T> apply(const OpPtr& op, std::initializer_list<T> inputs) {
  return detail::apply_span<T>(op, std::span<const T>(inputs.begin(), inputs.size()));
}

// ---- sources ------------------------------------------------------------------------

/// A filled tensor of `like`'s shape and dtype, in `like`'s tier (eager: its runtime).
template <SurfaceTensor T>
T full_like(const T& like, Scalar value);
template <SurfaceTensor T>
T zeros_like(const T& like) {
  return full_like(like, Scalar(0.0));
}
template <SurfaceTensor T>
T ones_like(const T& like) {
  return full_like(like, Scalar(1.0));
}
/// A rank-0 tensor holding `value` in `like`'s tier, typed like a Python
/// number mixed with `like` (real scalars take a floating tensor's dtype).
template <SurfaceTensor T>
T scalar_like(const T& like, Scalar value);

// ---- elementwise (NumPy broadcasting, dtype rules of backend/op_list.hpp) ---------

template <SurfaceTensor T>
T unary(UnaryOp op, const T& x);
template <SurfaceTensor T>
T binary(BinaryOp op, const T& a, const T& b);
inline Tensor unary(UnaryOp op, const Tensor& x, Backend& backend) {
  return detail::value_of(unary(op, on(backend, x)));
}
inline Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b, Backend& backend) {
  return detail::value_of(binary(op, on(backend, a), on(backend, b)));
}
// unary_into and binary_into (write into `out`) are ops/primitives.hpp's.

// One function per Api entry of backend/op_list.hpp, in every tier: `fn(x)`
// and `fn(a, b)`, and the direct forms `fn(x, backend)` and `fn(a, b, backend)`.
#define TENFERRO_SURFACE_UNARY(E, fn, compute, result, complex_advice, bool_advice, api) \
  TENFERRO_SURFACE_UNARY_##api(E, fn)
#define TENFERRO_SURFACE_UNARY_Api(E, fn)                       \
  template <SurfaceTensor T>                                    \
  T fn(const T& x) {                                            \
    return unary(UnaryOp::E, x);                                \
  }                                                             \
  inline Tensor fn(const Tensor& x, Backend& backend) {         \
    return detail::value_of(unary(UnaryOp::E, on(backend, x))); \
  }
#define TENFERRO_SURFACE_UNARY_Internal(E, fn)
TENFERRO_UNARY_OPS(TENFERRO_SURFACE_UNARY)
#undef TENFERRO_SURFACE_UNARY
#undef TENFERRO_SURFACE_UNARY_Api
#undef TENFERRO_SURFACE_UNARY_Internal
#define TENFERRO_SURFACE_BINARY(E, fn, compute, result, complex_advice, bool_advice, api) \
  TENFERRO_SURFACE_BINARY_##api(E, fn)
#define TENFERRO_SURFACE_BINARY_Api(E, fn)                                        \
  template <SurfaceTensor T>                                                      \
  T fn(const T& a, const T& b) {                                                  \
    return binary(BinaryOp::E, a, b);                                             \
  }                                                                               \
  inline Tensor fn(const Tensor& a, const Tensor& b, Backend& backend) {          \
    return detail::value_of(binary(BinaryOp::E, on(backend, a), on(backend, b))); \
  }
#define TENFERRO_SURFACE_BINARY_Internal(E, fn)
TENFERRO_BINARY_OPS(TENFERRO_SURFACE_BINARY)
#undef TENFERRO_SURFACE_BINARY
#undef TENFERRO_SURFACE_BINARY_Api
#undef TENFERRO_SURFACE_BINARY_Internal

// clang-format off
template <SurfaceTensor T> T operator+(const T& a, const T& b) { return add(a, b); }
template <SurfaceTensor T> T operator-(const T& a, const T& b) { return sub(a, b); }
template <SurfaceTensor T> T operator*(const T& a, const T& b) { return mul(a, b); }
template <SurfaceTensor T> T operator/(const T& a, const T& b) { return div(a, b); }
template <SurfaceTensor T> T operator-(const T& a) { return neg(a); }
template <SurfaceTensor T> T operator+(const T& a, Scalar b) { return add(a, scalar_like(a, b)); }
template <SurfaceTensor T> T operator-(const T& a, Scalar b) { return sub(a, scalar_like(a, b)); }
template <SurfaceTensor T> T operator*(const T& a, Scalar b) { return mul(a, scalar_like(a, b)); }
template <SurfaceTensor T> T operator/(const T& a, Scalar b) { return div(a, scalar_like(a, b)); }
template <SurfaceTensor T> T operator+(Scalar a, const T& b) { return add(scalar_like(b, a), b); }
template <SurfaceTensor T> T operator-(Scalar a, const T& b) { return sub(scalar_like(b, a), b); }
template <SurfaceTensor T> T operator*(Scalar a, const T& b) { return mul(scalar_like(b, a), b); }
template <SurfaceTensor T> T operator/(Scalar a, const T& b) { return div(scalar_like(b, a), b); }
// clang-format on

/// n-th derivative of digamma, 0 <= n <= kMaxPolygammaOrder (else
/// InvalidArgument); polygamma(0, x) = digamma(x). x's floating dtype
/// (integers and bool give f64); complex is DTypeMismatch.
template <SurfaceTensor T>
T polygamma(std::int64_t n, const T& x) {
  return detail::apply_primitive<T>(prim::Polygamma{n}, {x});
}
inline Tensor polygamma(std::int64_t n, const Tensor& x, Backend& backend) {
  return detail::value_of(polygamma(n, on(backend, x)));
}
/// The largest dimension mvlgamma takes (its sum unrolls p terms).
inline constexpr std::int64_t kMaxMvlgammaDimension = 10000;
/// Multivariate log-gamma of dimension 1 <= p <= kMaxMvlgammaDimension
/// (PyTorch's mvlgamma): sum_{i<p} lgamma(x - i/2) + p(p-1)/4 log(pi).
template <SurfaceTensor T>
T mvlgamma(const T& x, std::int64_t p);
/// {mantissa, exponent} with x = mantissa * 2^exponent, |mantissa| in
/// [0.5, 1) (0 for 0) like std::frexp; the mantissa keeps x's floating
/// dtype, the exponent is i32 (not differentiable).
template <SurfaceTensor T>
std::pair<T, T> frexp(const T& x) {
  return {unary(UnaryOp::FrexpMantissa, x), unary(UnaryOp::FrexpExponent, x)};
}
inline std::pair<Tensor, Tensor> frexp(const Tensor& x, Backend& backend) {
  auto [m, e] = frexp(on(backend, x));
  return {std::move(m).value(), std::move(e).value()};
}
/// cond ? a : b elementwise; cond is bool; all three broadcast; a and b promote.
template <SurfaceTensor T>
T where(const T& cond, const T& a, const T& b) {
  return detail::apply_primitive<T>(prim::Select{}, {cond, a, b});
}
inline Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b, Backend& backend) {
  return detail::value_of(where(on(backend, cond), on(backend, a), on(backend, b)));
}
/// Limits values to [lo, hi] (either bound optional); real and integer dtypes.
template <SurfaceTensor T>
T clamp(const T& x, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  return detail::apply_primitive<T>(prim::Clamp{lo, hi}, {x});
}
inline Tensor clamp(const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi,
                    Backend& backend) {
  return detail::value_of(clamp(on(backend, x), lo, hi));
}

// ---- reductions (empty axes reduce nothing; the forms without axes reduce all) ------
// Result dtypes follow backend/reduce.hpp (sum of bool/i32 gives i64, mean of
// integers f64); max and min propagate NaN and refuse an empty reduction.

template <SurfaceTensor T>
T reduce(ReduceOp op, const T& x, Axes axes, bool keepdim = false) {
  return detail::apply_primitive<T>(prim::Reduce{op, std::move(axes), keepdim}, {x});
}
inline Tensor reduce(ReduceOp op, const Tensor& x, std::span<const std::int64_t> axes,
                     Backend& backend, bool keepdim = false) {
  return detail::value_of(reduce(op, on(backend, x), Axes(axes), keepdim));
}
/// Every axis of x: 0, 1, ..., rank - 1.
template <class T>
Axes every_axis(const T& x) {
  Axes a;
  for (std::int64_t i = 0; i < x.rank(); ++i) a.push_back(i);
  return a;
}

// Each reduction in every tier: fn(x, axes, keepdim), fn(x) over every axis,
// and the direct forms fn(x, axes, backend, keepdim) (axes a span or braces)
// and fn(x, backend).
#define TENFERRO_SURFACE_REDUCTION(fn, op)                                                      \
  template <SurfaceTensor T>                                                                    \
  T fn(const T& x, Axes axes, bool keepdim = false) {                                           \
    return reduce(ReduceOp::op, x, std::move(axes), keepdim);                                   \
  }                                                                                             \
  template <SurfaceTensor T>                                                                    \
  T fn(const T& x) {                                                                            \
    return reduce(ReduceOp::op, x, every_axis(x));                                              \
  }                                                                                             \
  inline Tensor fn(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend,       \
                   bool keepdim = false) {                                                      \
    return detail::value_of(fn(on(backend, x), Axes(axes), keepdim));                           \
  }                                                                                             \
  inline Tensor fn(const Tensor& x, std::initializer_list<std::int64_t> axes, Backend& backend, \
                   bool keepdim = false) {                                                      \
    return detail::value_of(fn(on(backend, x), Axes(axes), keepdim));                           \
  }                                                                                             \
  inline Tensor fn(const Tensor& x, Backend& backend) {                                         \
    return detail::value_of(fn(on(backend, x)));                                                \
  }
TENFERRO_SURFACE_REDUCTION(sum, Sum)
TENFERRO_SURFACE_REDUCTION(prod, Prod)
TENFERRO_SURFACE_REDUCTION(mean, Mean)
TENFERRO_SURFACE_REDUCTION(max, Max)
TENFERRO_SURFACE_REDUCTION(min, Min)
TENFERRO_SURFACE_REDUCTION(all, All)
TENFERRO_SURFACE_REDUCTION(any, Any)
TENFERRO_SURFACE_REDUCTION(logsumexp, LogSumExp)
#undef TENFERRO_SURFACE_REDUCTION

/// Variance with `correction` (1 = unbiased, Bessel), like torch.var; the
/// real dtype of x's floating dtype.
template <SurfaceTensor T>
T var(const T& x, Axes axes, double correction = 1.0, bool keepdim = false) {
  return detail::apply_primitive<T>(prim::Variance{std::move(axes), correction, keepdim, false},
                                    {x});
}
inline Tensor var(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend,
                  double correction = 1.0, bool keepdim = false) {
  return detail::value_of(var(on(backend, x), Axes(axes), correction, keepdim));
}
/// Standard deviation (torch.std); named std_dev so it never clashes with namespace std.
template <SurfaceTensor T>
T std_dev(const T& x, Axes axes, double correction = 1.0, bool keepdim = false) {
  return detail::apply_primitive<T>(prim::Variance{std::move(axes), correction, keepdim, true},
                                    {x});
}
inline Tensor std_dev(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend,
                      double correction = 1.0, bool keepdim = false) {
  return detail::value_of(std_dev(on(backend, x), Axes(axes), correction, keepdim));
}
/// Index (i64) of the first maximum along `axis` (NaN counts as maximal).
template <SurfaceTensor T>
T argmax(const T& x, std::int64_t axis, bool keepdim = false) {
  return detail::apply_primitive<T>(prim::ArgReduce{true, axis, keepdim}, {x});
}
inline Tensor argmax(const Tensor& x, std::int64_t axis, Backend& backend, bool keepdim = false) {
  return detail::value_of(argmax(on(backend, x), axis, keepdim));
}
template <SurfaceTensor T>
T argmin(const T& x, std::int64_t axis, bool keepdim = false) {
  return detail::apply_primitive<T>(prim::ArgReduce{false, axis, keepdim}, {x});
}
inline Tensor argmin(const Tensor& x, std::int64_t axis, Backend& backend, bool keepdim = false) {
  return detail::value_of(argmin(on(backend, x), axis, keepdim));
}

// ---- contractions ------------------------------------------------------------------

/// General contraction (DotDims: [lhs free..., rhs free..., batch...]).
/// Operands promote to a common dtype (bool rejected; integer contractions
/// use a plain loop, floating and complex ones GEMM with transposes folded
/// into the GEMM flags where the strides allow).
template <SurfaceTensor T>
T dot_general(const T& lhs, const T& rhs, const DotDims& dims) {
  return detail::apply_primitive<T>(prim::DotGeneral{dims}, {lhs, rhs});
}
inline Tensor dot_general(const Tensor& lhs, const Tensor& rhs, const DotDims& dims,
                          Backend& backend) {
  return detail::value_of(dot_general(on(backend, lhs), on(backend, rhs), dims));
}
/// [m, k, batch...] x [k, n, batch...] -> [m, n, batch...]; batch axes
/// broadcast (NumPy rules, right-aligned; symbolic extents must be equal or
/// constant 1), rank-1 operands act as row/column vectors.
template <SurfaceTensor T>
T matmul(const T& a, const T& b);
inline Tensor matmul(const Tensor& a, const Tensor& b, Backend& backend) {
  return detail::value_of(matmul(on(backend, a), on(backend, b)));
}

// ---- structural (each returns a fresh tensor; Tensor's view methods copy nothing) -----

/// x.permute(perm) materialised compactly (cache-blocked kernel).
template <SurfaceTensor T>
T permute(const T& x, Axes perm) {
  return detail::apply_primitive<T>(prim::Transpose{std::move(perm)}, {x});
}
inline Tensor permute(const Tensor& x, std::span<const std::int64_t> perm, Backend& backend) {
  return detail::value_of(permute(on(backend, x), Axes(perm)));
}
/// Swaps axes a and b.
template <SurfaceTensor T>
T transpose(const T& x, std::int64_t a = 0, std::int64_t b = 1);
/// A compact copy of x with a new shape (column-major element order). One
/// extent may be -1 (resolved when x's size and the other extents are constant).
template <SurfaceTensor T>
T reshape(const T& x, ShapeArg shape);
inline Tensor reshape(const Tensor& x, std::span<const std::int64_t> shape, Backend& backend) {
  return detail::value_of(reshape(on(backend, x), ShapeArg(shape)));
}
/// x's axis i becomes axis dims[i] of `shape` (XLA's broadcast_in_dim; dims
/// strictly increasing, x's extents 1 or equal to the result's).
template <SurfaceTensor T>
T broadcast_in_dim(const T& x, ShapeArg shape, Axes dims);
inline Tensor broadcast_in_dim(const Tensor& x, std::span<const std::int64_t> shape,
                               std::span<const std::int64_t> dims, Backend& backend) {
  return detail::value_of(broadcast_in_dim(on(backend, x), ShapeArg(shape), Axes(dims)));
}
/// NumPy broadcast (right-aligned) to `shape`.
template <SurfaceTensor T>
T broadcast_to(const T& x, ShapeArg shape);
/// XLA slice: per axis [start, limit) with a positive stride; an empty
/// stride means stride 1 on every axis.
template <SurfaceTensor T>
T slice(const T& x, Shape start, Shape limit, Shape stride = {}) {
  if (stride.empty()) stride = Shape(start.size(), 1);
  return detail::apply_primitive<T>(
      prim::Slice{std::move(start), std::move(limit), std::move(stride)}, {x});
}
inline Tensor slice(const Tensor& x, std::span<const std::int64_t> start,
                    std::span<const std::int64_t> limit, std::span<const std::int64_t> stride,
                    Backend& backend) {
  return detail::value_of(slice(on(backend, x), Shape(start), Shape(limit), Shape(stride)));
}
/// Pads each axis with `low` and `high` elements of `value` (negative values
/// crop) and `interior` elements between neighbours (>= 0; empty: none).
template <SurfaceTensor T>
T pad(const T& x, Shape low, Shape high, Scalar value, Shape interior = {}) {
  if (interior.empty()) interior = Shape(low.size(), 0);
  return detail::apply_primitive<T>(
      prim::Pad{std::move(low), std::move(high), std::move(interior), value}, {x});
}
inline Tensor pad(const Tensor& x, std::span<const std::int64_t> low,
                  std::span<const std::int64_t> high, Scalar value, Backend& backend,
                  std::span<const std::int64_t> interior = {}) {
  return detail::value_of(pad(on(backend, x), Shape(low), Shape(high), value, Shape(interior)));
}
/// Joins tensors along an existing axis; dtypes promote.
template <SurfaceTensor T>
T concatenate(std::span<const T> xs, std::int64_t axis) {
  return detail::concatenate_span<T>(xs, axis);
}
template <SurfaceTensor T>
T concatenate(const std::vector<T>& xs, std::int64_t axis) {
  return detail::concatenate_span<T>(xs, axis);
}
template <SurfaceTensor T, std::size_t N>
T concatenate(const T (&xs)[N], std::int64_t axis) {
  return detail::concatenate_span<T>(std::span<const T>(xs, N), axis);
}
template <SurfaceTensor T>
T concatenate(std::initializer_list<T> xs, std::int64_t axis) {
  return detail::concatenate_span<T>(std::span<const T>(xs.begin(), xs.size()), axis);
}
inline Tensor concatenate(ListRef<Tensor> xs, std::int64_t axis, Backend& backend) {
  const std::vector<DirectTensor> on_backend = detail::on_each(backend, xs);
  return detail::value_of(detail::concatenate_span<DirectTensor>(on_backend, axis));
}
/// Joins tensors of one shape along a new axis inserted at `axis`; dtypes promote.
template <SurfaceTensor T>
T stack(std::span<const T> xs, std::int64_t axis) {
  return detail::stack_span<T>(xs, axis);
}
template <SurfaceTensor T>
T stack(const std::vector<T>& xs, std::int64_t axis) {
  return detail::stack_span<T>(xs, axis);
}
template <SurfaceTensor T, std::size_t N>
T stack(const T (&xs)[N], std::int64_t axis) {
  return detail::stack_span<T>(std::span<const T>(xs, N), axis);
}
template <SurfaceTensor T>
T stack(std::initializer_list<T> xs, std::int64_t axis) {
  return detail::stack_span<T>(std::span<const T>(xs.begin(), xs.size()), axis);
}
inline Tensor stack(ListRef<Tensor> xs, std::int64_t axis, Backend& backend) {
  const std::vector<DirectTensor> on_backend = detail::on_each(backend, xs);
  return detail::value_of(detail::stack_span<DirectTensor>(on_backend, axis));
}
/// numpy.tile in column-major terms: x repeated reps[d] times along axis d
/// (out[..., j, ...] = x[..., j mod x_d, ...]). Shorter reps are padded
/// with 1s; longer ones give x trailing unit axes (NumPy's leading ones).
template <SurfaceTensor T>
T tile(const T& x, Shape reps) {
  T v = x;
  if (static_cast<std::int64_t>(reps.size()) > x.rank()) {
    SymShape s;
    for (std::int64_t d = 0; d < x.rank(); ++d) s.push_back(x.shape()[static_cast<std::size_t>(d)]);
    while (static_cast<std::int64_t>(s.size()) < static_cast<std::int64_t>(reps.size()))
      s.push_back(SymDim(1));
    v = reshape(x, std::move(s));
  }
  while (static_cast<std::int64_t>(reps.size()) < v.rank()) reps.push_back(1);
  return detail::apply_primitive<T>(prim::Tile{std::move(reps)}, {v});
}
inline Tensor tile(const Tensor& x, std::span<const std::int64_t> reps, Backend& backend) {
  return detail::value_of(tile(on(backend, x), Shape(reps)));
}
/// Reverses the given axes.
template <SurfaceTensor T>
T reverse(const T& x, Axes axes) {
  return detail::apply_primitive<T>(prim::Reverse{std::move(axes)}, {x});
}
inline Tensor reverse(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend) {
  return detail::value_of(reverse(on(backend, x), Axes(axes)));
}
/// reverse under PyTorch's name (torch.flip).
template <SurfaceTensor T>
T flip(const T& x, Axes axes) {
  return reverse(x, std::move(axes));
}
inline Tensor flip(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend) {
  return detail::value_of(flip(on(backend, x), Axes(axes)));
}
/// Diagonal extract: the offset diagonal of the matrices in axis1/axis2
/// becomes the first axis, the other axes follow (Tensor::diagonal's order).
template <SurfaceTensor T>
T diagonal(const T& x, std::int64_t offset = 0, std::int64_t axis1 = 0, std::int64_t axis2 = 1) {
  return detail::apply_primitive<T>(prim::Diagonal{offset, axis1, axis2}, {x});
}
inline Tensor diagonal(const Tensor& x, std::int64_t offset, std::int64_t axis1, std::int64_t axis2,
                       Backend& backend) {
  return detail::value_of(diagonal(on(backend, x), offset, axis1, axis2));
}
/// Inverse of diagonal(x, offset, 0, 1): [n, batch...] -> [n+|offset|,
/// n+|offset|, batch...] with x on the offset diagonal and zeros elsewhere.
template <SurfaceTensor T>
T diag_embed(const T& x, std::int64_t offset = 0) {
  return detail::apply_primitive<T>(prim::DiagEmbed{offset}, {x});
}
inline Tensor diag_embed(const Tensor& x, std::int64_t offset, Backend& backend) {
  return detail::value_of(diag_embed(on(backend, x), offset));
}
/// Lower/upper triangle of the matrices in axes 0 and 1 (batch last); k
/// shifts the diagonal (k > 0 above the main one), the rest becomes zero.
template <SurfaceTensor T>
T tril(const T& x, std::int64_t k = 0) {
  return detail::apply_primitive<T>(prim::Triangle{true, k}, {x});
}
inline Tensor tril(const Tensor& x, std::int64_t k, Backend& backend) {
  return detail::value_of(tril(on(backend, x), k));
}
template <SurfaceTensor T>
T triu(const T& x, std::int64_t k = 0) {
  return detail::apply_primitive<T>(prim::Triangle{false, k}, {x});
}
inline Tensor triu(const Tensor& x, std::int64_t k, Backend& backend) {
  return detail::value_of(triu(on(backend, x), k));
}
/// Picks entries of `axis` at `index` (1-D, i32/i64; negative counts from the end).
template <SurfaceTensor T>
T index_select(const T& x, std::int64_t axis, const T& index) {
  return detail::apply_primitive<T>(prim::IndexSelect{axis}, {x, index});
}
inline Tensor index_select(const Tensor& x, std::int64_t axis, const Tensor& index,
                           Backend& backend) {
  return detail::value_of(index_select(on(backend, x), axis, on(backend, index)));
}
/// numpy.take_along_axis: index has x's rank and extents (except along `axis`).
template <SurfaceTensor T>
T take_along_axis(const T& x, const T& index, std::int64_t axis) {
  return detail::apply_primitive<T>(prim::TakeAlongAxis{axis}, {x, index});
}
inline Tensor take_along_axis(const Tensor& x, const Tensor& index, std::int64_t axis,
                              Backend& backend) {
  return detail::value_of(take_along_axis(on(backend, x), on(backend, index), axis));
}
/// x with src added at index along `axis` (torch.scatter_add semantics):
/// out[..., index[i...], ...] += src[i...]; index and src have equal shapes.
template <SurfaceTensor T>
T scatter_add(const T& x, std::int64_t axis, const T& index, const T& src) {
  return detail::apply_primitive<T>(prim::ScatterAdd{axis}, {x, index, src});
}
inline Tensor scatter_add(const Tensor& x, std::int64_t axis, const Tensor& index,
                          const Tensor& src, Backend& backend) {
  return detail::value_of(scatter_add(on(backend, x), axis, on(backend, index), on(backend, src)));
}
/// Lossless conversion (DTypeMismatch otherwise); cast converts lossily on
/// request (float -> int truncates, complex -> real keeps the real part).
template <SurfaceTensor T>
T convert(const T& x, DType dtype) {
  return detail::apply_primitive<T>(prim::Convert{dtype, false}, {x});
}
inline Tensor convert(const Tensor& x, DType dtype, Backend& backend) {
  return detail::value_of(convert(on(backend, x), dtype));
}
template <SurfaceTensor T>
T cast(const T& x, DType dtype) {
  return detail::apply_primitive<T>(prim::Convert{dtype, true}, {x});
}
inline Tensor cast(const Tensor& x, DType dtype, Backend& backend) {
  return detail::value_of(cast(on(backend, x), dtype));
}

// ---- scans and sorting ----------------------------------------------------------------
// Axes are column-major tensor axes: PyTorch's dim d of a rank-r tensor is our
// axis r - 1 - d (negative axes count from the end); a rank-0 tensor takes
// axis 0 or -1. Scans: bool and integers accumulate in and return i64
// (integer overflow wraps), the other dtypes keep theirs. Sorting is
// PyTorch's stable sort: equal elements keep their original order (in both
// directions), NaN counts as larger than every number, -0.0 equals 0.0;
// indices are i64; complex tensors are not ordered (DTypeMismatch).

/// Running sum along `axis` (torch.cumsum; PyTorch dim d is our axis
/// rank-1-d), from the end when `reverse`. bool and integers accumulate in
/// i64. Linear: the vjp is the reverse cumsum.
template <SurfaceTensor T>
T cumsum(const T& x, std::int64_t axis, bool reverse = false) {
  return detail::apply_primitive<T>(prim::Cumulative{ReduceOp::Sum, axis, reverse}, {x});
}
inline Tensor cumsum(const Tensor& x, std::int64_t axis, Backend& backend, bool reverse = false) {
  return detail::value_of(cumsum(on(backend, x), axis, reverse));
}
/// Running product along `axis` (torch.cumprod). The first derivative is exact
/// with zeros in x (PyTorch's formula); higher ones are exact away from zeros.
template <SurfaceTensor T>
T cumprod(const T& x, std::int64_t axis, bool reverse = false) {
  return detail::apply_primitive<T>(prim::Cumulative{ReduceOp::Prod, axis, reverse}, {x});
}
inline Tensor cumprod(const Tensor& x, std::int64_t axis, Backend& backend, bool reverse = false) {
  return detail::value_of(cumprod(on(backend, x), axis, reverse));
}
/// Indices (i64) that sort x along `axis`: stable, NaN largest (torch.argsort(stable=True)).
template <SurfaceTensor T>
T argsort(const T& x, std::int64_t axis, bool descending = false) {
  return detail::apply_primitive<T>(prim::Argsort{axis, descending, -1}, {x});
}
inline Tensor argsort(const Tensor& x, std::int64_t axis, Backend& backend,
                      bool descending = false) {
  return detail::value_of(argsort(on(backend, x), axis, descending));
}
namespace detail {
/// {values, indices} from the first k (k < 0: all) sorting indices; the
/// direct tier sorts values and indices in one pass (sort_prefix).
template <SurfaceTensor T>
std::pair<T, T> sorted(const T& x, std::int64_t axis, std::int64_t k, bool descending) {
  if constexpr (std::is_same_v<T, DirectTensor>) {
    auto [values, indices] = sort_prefix(x.value(), axis, k, descending, x.backend());
    return {on(x.backend(), std::move(values)), on(x.backend(), std::move(indices))};
  } else {
    T idx = apply_primitive<T>(prim::Argsort{axis, descending, k}, {x});
    if (x.rank() == 0) return {x, idx};
    return {take_along_axis(x, idx, axis), idx};
  }
}
}  // namespace detail
/// {values, indices} of x sorted along `axis` (torch.sort(stable=True)).
/// The values are take_along_axis(x, indices): differentiable as a gather.
template <SurfaceTensor T>
std::pair<T, T> sort(const T& x, std::int64_t axis, bool descending = false) {
  return detail::sorted(x, axis, -1, descending);
}
inline std::pair<Tensor, Tensor> sort(const Tensor& x, std::int64_t axis, Backend& backend,
                                      bool descending = false) {
  auto [v, i] = sort(on(backend, x), axis, descending);
  return {std::move(v).value(), std::move(i).value()};
}
/// {values, indices} of the k largest (smallest unless `largest`) entries
/// along `axis`, sorted; ties keep the lower index first (torch.topk).
/// 0 <= k <= extent of the axis, else InvalidArgument.
template <SurfaceTensor T>
std::pair<T, T> topk(const T& x, std::int64_t k, std::int64_t axis, bool largest = true) {
  if (k < 0) {
    fail(ErrorKind::InvalidArgument, "topk", "k = ", k, " is negative; choose 0 <= k <= extent");
  }
  return detail::sorted(x, axis, k, largest);
}
inline std::pair<Tensor, Tensor> topk(const Tensor& x, std::int64_t k, std::int64_t axis,
                                      Backend& backend, bool largest = true) {
  auto [v, i] = topk(on(backend, x), k, axis, largest);
  return {std::move(v).value(), std::move(i).value()};
}

}  // namespace tenferro
