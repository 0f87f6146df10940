#pragma once
// Composite operators: activations and PyTorch-style math helpers built from
// the primitive ops, written once for every tier: each is a template over
// `SurfaceTensor` (EagerTensor, TracedTensor or DirectTensor, see
// tenferro/ad/ops.hpp) with one semantics. In the direct tier they run on
// on(backend, x): `Tensor y = softplus(on(cpu, x)).value();`.
//
// They are compositions, so autodiff comes from the primitives' rules and
// higher-order derivatives work wherever the math is smooth. Derivatives at
// kinks and ties follow PyTorch (torch.nn.functional, torch 1.13):
//   relu, threshold, leaky_relu, rrelu, prelu, elu, celu, selu: the x <= 0 (resp.
//     x <= threshold) branch is taken at the kink (relu'(0) = 0, elu'(0) = alpha);
//   hardtanh, relu6, hardsigmoid: 1 (1/6) strictly inside, 0 at and outside the bounds;
//   hardshrink, softshrink: 0 on [-lambd, lambd];
//   fmax/fmin, clamp_min/clamp_max: the gradient goes to the first operand at ties;
//   amax/amin: split evenly between tied entries;
//   nan_to_num: passes through where x is finite, 0 elsewhere;
//   round(x, decimals): zero derivative.
// Parameters are validated first (InvalidArgument); real-only functions reject
// complex and bool inputs (DTypeMismatch).
//
// Reductions use the tier's axis numbering and the core's rule: an empty axis
// list reduces nothing, the forms without axes reduce every axis (PyTorch's
// dim=[] for nansum/nanmean/amax/amin is the form without axes).

#include <initializer_list>
#include <optional>
#include <span>

#include "tenferro/ad/eager_ops.hpp"
#include "tenferro/ad/traced.hpp"

namespace tenferro {

// ---- activations (torch.nn.functional defaults) -------------------------------------
// Real inputs only except softsign and tanhshrink, which also take complex.

template <SurfaceTensor T>
T relu(const T& x);
/// hardtanh(x, 0, 6).
template <SurfaceTensor T>
T relu6(const T& x);
/// x > 0 ? x : negative_slope * x.
template <SurfaceTensor T>
T leaky_relu(const T& x, double negative_slope = 0.01);
/// x > 0 ? x : alpha * expm1(x).
template <SurfaceTensor T>
T elu(const T& x, double alpha = 1.0);
/// max(0, x) + min(0, alpha * expm1(x / alpha)); alpha == 0 is InvalidArgument.
template <SurfaceTensor T>
T celu(const T& x, double alpha = 1.0);
/// scale * elu(x, alpha) with the self-normalising constants.
template <SurfaceTensor T>
T selu(const T& x);
/// x * sigmoid(x).
template <SurfaceTensor T>
T silu(const T& x);
/// x * tanh(softplus(x)).
template <SurfaceTensor T>
T mish(const T& x);
/// x * beta > threshold ? x : log1p(exp(beta * x)) / beta; beta == 0 is InvalidArgument.
template <SurfaceTensor T>
T softplus(const T& x, double beta = 1.0, double threshold = 20.0);
/// Limits x to [min_val, max_val]; max_val < min_val is InvalidArgument.
template <SurfaceTensor T>
T hardtanh(const T& x, double min_val = -1.0, double max_val = 1.0);
/// relu6(x + 3) / 6.
template <SurfaceTensor T>
T hardsigmoid(const T& x);
/// |x| > lambd ? x : 0.
template <SurfaceTensor T>
T hardshrink(const T& x, double lambd = 0.5);
/// x > lambd ? x - lambd : x < -lambd ? x + lambd : 0; lambd < 0 is InvalidArgument.
template <SurfaceTensor T>
T softshrink(const T& x, double lambd = 0.5);
/// x / (1 + |x|); for complex x, |x| is the modulus (not holomorphic).
template <SurfaceTensor T>
T softsign(const T& x);
/// x - tanh(x) (real and complex).
template <SurfaceTensor T>
T tanhshrink(const T& x);
/// log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), stable for large |x|.
template <SurfaceTensor T>
T logsigmoid(const T& x);
/// x > threshold ? x : value.
template <SurfaceTensor T>
T threshold(const T& x, double threshold, double value);
/// x > 0 ? x : weight * x; weight broadcasts against x (NumPy rules).
template <SurfaceTensor T>
T prelu(const T& x, const T& weight);
/// Randomised leaky relu in evaluation mode: leaky_relu(x, (lower + upper) / 2);
/// lower > upper is InvalidArgument.
template <SurfaceTensor T>
T rrelu(const T& x, double lower = 1.0 / 8, double upper = 1.0 / 3);

// ---- math helpers (torch.*) -----------------------------------------------------------

/// pow with both operands cast to f64 (c128 when either is complex).
template <SurfaceTensor T>
T float_power(const T& a, const T& b);
template <SurfaceTensor T>
T float_power(const T& a, Scalar b);
/// x * pi / 180 and x * 180 / pi (real inputs; integers give f64).
template <SurfaceTensor T>
T deg2rad(const T& x);
template <SurfaceTensor T>
T rad2deg(const T& x);
/// The identity (returns x itself); bool is DTypeMismatch, as in PyTorch.
template <SurfaceTensor T>
T positive(const T& x);
/// NaN-ignoring maximum / minimum (NaN only where both are NaN); real dtypes.
template <SurfaceTensor T>
T fmax(const T& a, const T& b);
template <SurfaceTensor T>
T fmin(const T& a, const T& b);
/// max(x, min) / min(x, max) with tensor bounds (broadcasting); NaN propagates.
template <SurfaceTensor T>
T clamp_min(const T& x, const T& min);
template <SurfaceTensor T>
T clamp_max(const T& x, const T& max);
/// a * 2^b, in the floating (or complex) dtype a * b promotes to.
template <SurfaceTensor T>
T ldexp(const T& a, const T& b);
/// re + i im from two tensors of the same real floating dtype (f32 -> c64,
/// f64 -> c128), broadcasting; each part is taken exactly, also when it is
/// infinite or NaN (the complex primitive, BinaryOp::Complex, which also
/// promotes mixed and integer parts: binary(BinaryOp::Complex, re, im)).
/// (tenferro::complex(re, im) of tensor.hpp is the backend-free form.)
template <SurfaceTensor T>
T complex(const T& re, const T& im);
template <BackendRef B>
Tensor complex(const Tensor& re, const Tensor& im, B& backend) {
  return detail::value_of(complex(detail::borrow(backend, re), detail::borrow(backend, im)));
}
/// complex(abs * cos(angle), abs * sin(angle)).
template <SurfaceTensor T>
T polar(const T& abs, const T& angle);
/// NaN -> nan, +inf -> posinf, -inf -> neginf (defaults: the dtype's largest
/// and lowest finite values); complex inputs: both parts. Integers and bool
/// are returned unchanged.
template <SurfaceTensor T>
T nan_to_num(const T& x, double nan = 0.0, std::optional<double> posinf = std::nullopt,
             std::optional<double> neginf = std::nullopt);
/// logit of x clamped to [eps, 1 - eps] (PyTorch's logit(x, eps)): the
/// derivative is 1 / (x (1 - x)) inside the closed interval and 0 outside.
/// eps must lie in [0, 0.5] (InvalidArgument); real floating dtypes.
template <SurfaceTensor T>
T logit(const T& x, double eps);
/// Rounds half to even at `decimals` decimal digits (negative: tens,
/// hundreds...), like torch.round(x, decimals=d). Floating dtypes for d != 0.
template <SurfaceTensor T>
T round(const T& x, std::int64_t decimals);

// ---- reductions (as in the core: empty axes reduce nothing; the forms without axes reduce all) --

/// Sum treating NaN as 0 (real dtypes; bool and integers give i64).
template <SurfaceTensor T>
T nansum(const T& x, Axes axes, bool keepdim = false);
template <SurfaceTensor T>
T nansum(const T& x);
/// Mean over the non-NaN entries (NaN where all are NaN); f32 and f64.
template <SurfaceTensor T>
T nanmean(const T& x, Axes axes, bool keepdim = false);
template <SurfaceTensor T>
T nanmean(const T& x);
/// Max / min reductions (NaN-propagating); ties share the gradient evenly.
template <SurfaceTensor T>
T amax(const T& x, Axes axes, bool keepdim = false);
template <SurfaceTensor T>
T amax(const T& x);
template <SurfaceTensor T>
T amin(const T& x, Axes axes, bool keepdim = false);
template <SurfaceTensor T>
T amin(const T& x);

// ---- layout helpers (axes are column-major: PyTorch dim d is our axis rank-1-d) --

/// Kronecker product (torch.kron): the result has extent a_d * b_d on each
/// axis d and holds a[i] * b[j] at i * b_d + j, so kron of two matrices is the
/// textbook block matrix [a_00 b, a_01 b; ...]. The lower-rank operand gets
/// trailing unit axes (PyTorch's leading ones). dtypes promote as in mul.
template <SurfaceTensor T>
T kron(const T& a, const T& b);
template <BackendRef B>
Tensor kron(const Tensor& a, const Tensor& b, B& backend) {
  return detail::value_of(kron(detail::borrow(backend, a), detail::borrow(backend, b)));
}
/// Sum of the offset diagonal of the matrices in axis1 and axis2, the other
/// axes kept as a batch (torch.trace for a matrix; rank 0 for rank 2).
/// dtypes as in sum (bool, i32 -> i64).
template <SurfaceTensor T>
T trace(const T& x, std::int64_t offset = 0, std::int64_t axis1 = 0, std::int64_t axis2 = 1);
template <BackendRef B>
Tensor trace(const Tensor& x, B& backend, std::int64_t offset = 0, std::int64_t axis1 = 0,
             std::int64_t axis2 = 1) {
  return detail::value_of(trace(detail::borrow(backend, x), offset, axis1, axis2));
}
/// Rolls x by shifts[i] along axes[i] (torch.roll): out[(j + s) mod n] = x[j].
/// Negative shifts roll backwards; an axis may repeat (the shifts add).
/// Needs constant extents on the rolled axes (traced: bind them first).
template <SurfaceTensor T>
T roll(const T& x, std::span<const std::int64_t> shifts, Axes axes);
template <BackendRef B>
Tensor roll(const Tensor& x, std::span<const std::int64_t> shifts,
            std::span<const std::int64_t> axes, B& backend) {
  return detail::value_of(roll(detail::borrow(backend, x), shifts, Axes(axes)));
}
template <SurfaceTensor T>
T roll(const T& x, std::initializer_list<std::int64_t> shifts, Axes axes) {
  return roll(x, std::span<const std::int64_t>(shifts.begin(), shifts.size()), std::move(axes));
}
/// torch.roll without dims: rolls the column-major flattening of x (the
/// row-major flattening of the PyTorch tensor on the same memory).
template <SurfaceTensor T>
T roll(const T& x, std::int64_t shift);
template <BackendRef B>
Tensor roll(const Tensor& x, std::int64_t shift, B& backend) {
  return detail::value_of(roll(detail::borrow(backend, x), shift));
}

}  // namespace tenferro
