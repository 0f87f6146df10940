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
// and one semantics. The direct tier's forms (a trailing backend, as
// `exp(x, cpu)`) sit next to each template: one line running the kind's
// execute hook when the template is one primitive (detail::run_kind), else
// the template on DirectTensor. Those that build a primitive's parameters
// are templates over the backend type (BackendRef), so only code that calls
// one compiles it. Semantics: NumPy broadcasting, the dtype
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
  /// Marks the borrowing constructor (detail::borrow).
  struct Borrowed {};
  DirectTensor() = default;
  DirectTensor(Tensor value, Backend& backend) : value_(std::move(value)), backend_(&backend) {}
  /// Refers to `value` without copying its handle: for arguments that outlive
  /// the call reading them (the direct forms' operands), never for results.
  DirectTensor(Borrowed, const Tensor& value, Backend& backend)
      : borrowed_(&value), backend_(&backend) {}
  const Tensor& value() const& { return borrowed_ ? *borrowed_ : value_; }
  Tensor value() && { return borrowed_ ? *borrowed_ : std::move(value_); }
  Backend& backend() const { return *backend_; }
  bool defined() const { return value().defined(); }
  DType dtype() const { return value().dtype(); }
  std::int64_t rank() const { return value().rank(); }
  const Shape& shape() const { return value().shape(); }
  std::int64_t numel() const { return value().numel(); }

 private:
  Tensor value_;
  const Tensor* borrowed_ = nullptr;
  Backend* backend_ = nullptr;
};

/// `x` as a direct-tier tensor on `backend`.
inline DirectTensor on(Backend& backend, Tensor x) {
  return DirectTensor(std::move(x), backend);
}

/// The tensor types of the three tiers: what every surface function takes.
template <class T>
concept SurfaceTensor = AdTensor<T> || std::same_as<T, DirectTensor>;

/// A backend type: the direct forms take any backend by reference.
template <class B>
concept BackendRef = std::derived_from<B, Backend>;

namespace detail {
/// A direct form's operand: `x` on `backend`, borrowed for the call (no
/// handle copy; x outlives the call).
inline DirectTensor borrow(Backend& backend, const Tensor& x) {
  return DirectTensor(DirectTensor::Borrowed{}, x, backend);
}
/// The value of a direct-tier result (the direct forms' return).
inline Tensor value_of(DirectTensor&& t) {
  return std::move(t).value();
}
/// Each tensor of a list borrowed as a direct operand on `backend` (borrow).
std::vector<DirectTensor> on_each(Backend& backend, ListRef<Tensor> xs);
/// No dimension bindings (the direct tier's extents are constant).
const DimBindings& no_bindings();
/// The direct form of a one-primitive template: the kind P's execute hook on
/// the operands, as the template on DirectTensor runs it (no op, no Params).
template <class P>
Tensor run_kind(const P& params, std::initializer_list<const Tensor*> inputs, Backend& backend) {
  return P::execute(
      params, prim::Operands{{}, std::span<const Tensor* const>(inputs.begin(), inputs.size())},
      backend, no_bindings());
}
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
namespace detail {
/// The direct forms of unary and binary: the kind's execute hook on the
/// operands, as unary/binary on DirectTensor run it (no handle is copied).
Tensor direct_unary(UnaryOp op, const Tensor& x, Backend& backend);
Tensor direct_binary(BinaryOp op, const Tensor& a, const Tensor& b, Backend& backend);
}  // namespace detail
inline Tensor unary(UnaryOp op, const Tensor& x, Backend& backend) {
  return detail::direct_unary(op, x, backend);
}
inline Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b, Backend& backend) {
  return detail::direct_binary(op, a, b, backend);
}
// unary_into and binary_into (write into `out`) are ops/primitives.hpp's.

// One function per Api entry of backend/op_list.hpp, in every tier: `fn(x)`
// and `fn(a, b)`, and the direct forms `fn(x, backend)` and `fn(a, b, backend)`.
#define TENFERRO_SURFACE_UNARY(E, fn, compute, result, complex_advice, bool_advice, api) \
  TENFERRO_SURFACE_UNARY_##api(E, fn)
#define TENFERRO_SURFACE_UNARY_Api(E, fn)                \
  template <SurfaceTensor T>                             \
  T fn(const T& x) {                                     \
    return unary(UnaryOp::E, x);                         \
  }                                                      \
  inline Tensor fn(const Tensor& x, Backend& backend) {  \
    return detail::direct_unary(UnaryOp::E, x, backend); \
  }
#define TENFERRO_SURFACE_UNARY_Internal(E, fn)
TENFERRO_UNARY_OPS(TENFERRO_SURFACE_UNARY)
#undef TENFERRO_SURFACE_UNARY
#undef TENFERRO_SURFACE_UNARY_Api
#undef TENFERRO_SURFACE_UNARY_Internal
#define TENFERRO_SURFACE_BINARY(E, fn, compute, result, complex_advice, bool_advice, api) \
  TENFERRO_SURFACE_BINARY_##api(E, fn)
#define TENFERRO_SURFACE_BINARY_Api(E, fn)                               \
  template <SurfaceTensor T>                                             \
  T fn(const T& a, const T& b) {                                         \
    return binary(BinaryOp::E, a, b);                                    \
  }                                                                      \
  inline Tensor fn(const Tensor& a, const Tensor& b, Backend& backend) { \
    return detail::direct_binary(BinaryOp::E, a, b, backend);            \
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
template <BackendRef B>
Tensor polygamma(std::int64_t n, const Tensor& x, B& backend) {
  return detail::run_kind(prim::Polygamma{n}, {&x}, backend);
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
template <BackendRef B>
std::pair<Tensor, Tensor> frexp(const Tensor& x, B& backend) {
  auto [m, e] = frexp(detail::borrow(backend, x));
  return {std::move(m).value(), std::move(e).value()};
}
/// cond ? a : b elementwise; cond is bool; all three broadcast; a and b promote.
template <SurfaceTensor T>
T where(const T& cond, const T& a, const T& b) {
  return detail::apply_primitive<T>(prim::Select{}, {cond, a, b});
}
template <BackendRef B>
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b, B& backend) {
  return detail::run_kind(prim::Select{}, {&cond, &a, &b}, backend);
}
/// Limits values to [lo, hi] (either bound optional); real and integer dtypes.
template <SurfaceTensor T>
T clamp(const T& x, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  return detail::apply_primitive<T>(prim::Clamp{lo, hi}, {x});
}
template <BackendRef B>
Tensor clamp(const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi, B& backend) {
  return detail::run_kind(prim::Clamp{lo, hi}, {&x}, backend);
}

// ---- reductions (empty axes reduce nothing; the forms without axes reduce all) ------
// Result dtypes follow backend/reduce.hpp (sum of bool/i32 gives i64, mean of
// integers f64); max and min propagate NaN and refuse an empty reduction.

template <SurfaceTensor T>
T reduce(ReduceOp op, const T& x, Axes axes, bool keepdim = false) {
  return detail::apply_primitive<T>(prim::Reduce{op, std::move(axes), keepdim}, {x});
}
namespace detail {
/// The direct forms of reduce: the Reduce kind's execute hook on x (over
/// `axes`, or over every axis).
Tensor direct_reduce(ReduceOp op, const Tensor& x, std::span<const std::int64_t> axes,
                     Backend& backend, bool keepdim);
Tensor direct_reduce_all(ReduceOp op, const Tensor& x, Backend& backend);
}  // namespace detail
inline Tensor reduce(ReduceOp op, const Tensor& x, std::span<const std::int64_t> axes,
                     Backend& backend, bool keepdim = false) {
  return detail::direct_reduce(op, x, axes, backend, keepdim);
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
    return reduce(ReduceOp::op, x, axes, backend, keepdim);                                     \
  }                                                                                             \
  inline Tensor fn(const Tensor& x, std::initializer_list<std::int64_t> axes, Backend& backend, \
                   bool keepdim = false) {                                                      \
    return reduce(ReduceOp::op, x, std::span<const std::int64_t>(axes.begin(), axes.size()),    \
                  backend, keepdim);                                                            \
  }                                                                                             \
  inline Tensor fn(const Tensor& x, Backend& backend) {                                         \
    return detail::direct_reduce_all(ReduceOp::op, x, backend);                                 \
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
template <BackendRef B>
Tensor var(const Tensor& x, std::span<const std::int64_t> axes, B& backend, double correction = 1.0,
           bool keepdim = false) {
  return detail::run_kind(prim::Variance{Axes(axes), correction, keepdim, false}, {&x}, backend);
}
/// Standard deviation (torch.std); named std_dev so it never clashes with namespace std.
template <SurfaceTensor T>
T std_dev(const T& x, Axes axes, double correction = 1.0, bool keepdim = false) {
  return detail::apply_primitive<T>(prim::Variance{std::move(axes), correction, keepdim, true},
                                    {x});
}
template <BackendRef B>
Tensor std_dev(const Tensor& x, std::span<const std::int64_t> axes, B& backend,
               double correction = 1.0, bool keepdim = false) {
  return detail::run_kind(prim::Variance{Axes(axes), correction, keepdim, true}, {&x}, backend);
}
/// Index (i64) of the first maximum along `axis` (NaN counts as maximal).
template <SurfaceTensor T>
T argmax(const T& x, std::int64_t axis, bool keepdim = false) {
  return detail::apply_primitive<T>(prim::ArgReduce{true, axis, keepdim}, {x});
}
template <BackendRef B>
Tensor argmax(const Tensor& x, std::int64_t axis, B& backend, bool keepdim = false) {
  return detail::run_kind(prim::ArgReduce{true, axis, keepdim}, {&x}, backend);
}
template <SurfaceTensor T>
T argmin(const T& x, std::int64_t axis, bool keepdim = false) {
  return detail::apply_primitive<T>(prim::ArgReduce{false, axis, keepdim}, {x});
}
template <BackendRef B>
Tensor argmin(const Tensor& x, std::int64_t axis, B& backend, bool keepdim = false) {
  return detail::run_kind(prim::ArgReduce{false, axis, keepdim}, {&x}, backend);
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
template <BackendRef B>
Tensor dot_general(const Tensor& lhs, const Tensor& rhs, const DotDims& dims, B& backend) {
  return detail::run_kind(prim::DotGeneral{dims}, {&lhs, &rhs}, backend);
}
/// [m, k, batch...] x [k, n, batch...] -> [m, n, batch...]; batch axes
/// broadcast (NumPy rules, right-aligned; symbolic extents must be equal or
/// constant 1), rank-1 operands act as row/column vectors.
template <SurfaceTensor T>
T matmul(const T& a, const T& b);
template <BackendRef B>
Tensor matmul(const Tensor& a, const Tensor& b, B& backend) {
  return detail::value_of(matmul(detail::borrow(backend, a), detail::borrow(backend, b)));
}

}  // namespace tenferro

// The layout, scan and sort operations, written the same way.
#include "tenferro/ad/ops_layout.hpp"
