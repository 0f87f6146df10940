#pragma once
// Composite operators: activations and PyTorch-style math helpers built from
// the primitive ops, for both the eager and the traced tier (the same free
// functions exist for EagerTensor and TracedTensor, with identical semantics).
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

#include <optional>

#include "tenferro/ad/eager_ops.hpp"
#include "tenferro/ad/traced.hpp"

namespace tenferro {

// ---- activations (torch.nn.functional defaults) -------------------------------------
// Real inputs only except softsign and tanhshrink, which also take complex.

EagerTensor relu(const EagerTensor& x);
TracedTensor relu(const TracedTensor& x);
/// hardtanh(x, 0, 6).
EagerTensor relu6(const EagerTensor& x);
TracedTensor relu6(const TracedTensor& x);
/// x > 0 ? x : negative_slope * x.
EagerTensor leaky_relu(const EagerTensor& x, double negative_slope = 0.01);
TracedTensor leaky_relu(const TracedTensor& x, double negative_slope = 0.01);
/// x > 0 ? x : alpha * expm1(x).
EagerTensor elu(const EagerTensor& x, double alpha = 1.0);
TracedTensor elu(const TracedTensor& x, double alpha = 1.0);
/// max(0, x) + min(0, alpha * expm1(x / alpha)); alpha == 0 is InvalidArgument.
EagerTensor celu(const EagerTensor& x, double alpha = 1.0);
TracedTensor celu(const TracedTensor& x, double alpha = 1.0);
/// scale * elu(x, alpha) with the self-normalising constants.
EagerTensor selu(const EagerTensor& x);
TracedTensor selu(const TracedTensor& x);
/// x * sigmoid(x).
EagerTensor silu(const EagerTensor& x);
TracedTensor silu(const TracedTensor& x);
/// x * tanh(softplus(x)).
EagerTensor mish(const EagerTensor& x);
TracedTensor mish(const TracedTensor& x);
/// x * beta > threshold ? x : log1p(exp(beta * x)) / beta; beta == 0 is InvalidArgument.
EagerTensor softplus(const EagerTensor& x, double beta = 1.0, double threshold = 20.0);
TracedTensor softplus(const TracedTensor& x, double beta = 1.0, double threshold = 20.0);
/// Limits x to [min_val, max_val]; max_val < min_val is InvalidArgument.
EagerTensor hardtanh(const EagerTensor& x, double min_val = -1.0, double max_val = 1.0);
TracedTensor hardtanh(const TracedTensor& x, double min_val = -1.0, double max_val = 1.0);
/// relu6(x + 3) / 6.
EagerTensor hardsigmoid(const EagerTensor& x);
TracedTensor hardsigmoid(const TracedTensor& x);
/// |x| > lambd ? x : 0.
EagerTensor hardshrink(const EagerTensor& x, double lambd = 0.5);
TracedTensor hardshrink(const TracedTensor& x, double lambd = 0.5);
/// x > lambd ? x - lambd : x < -lambd ? x + lambd : 0; lambd < 0 is InvalidArgument.
EagerTensor softshrink(const EagerTensor& x, double lambd = 0.5);
TracedTensor softshrink(const TracedTensor& x, double lambd = 0.5);
/// x / (1 + |x|); for complex x, |x| is the modulus (not holomorphic).
EagerTensor softsign(const EagerTensor& x);
TracedTensor softsign(const TracedTensor& x);
/// x - tanh(x) (real and complex).
EagerTensor tanhshrink(const EagerTensor& x);
TracedTensor tanhshrink(const TracedTensor& x);
/// log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), stable for large |x|.
EagerTensor logsigmoid(const EagerTensor& x);
TracedTensor logsigmoid(const TracedTensor& x);
/// x > threshold ? x : value.
EagerTensor threshold(const EagerTensor& x, double threshold, double value);
TracedTensor threshold(const TracedTensor& x, double threshold, double value);
/// x > 0 ? x : weight * x; weight broadcasts against x (NumPy rules).
EagerTensor prelu(const EagerTensor& x, const EagerTensor& weight);
TracedTensor prelu(const TracedTensor& x, const TracedTensor& weight);
/// Randomised leaky relu in evaluation mode: leaky_relu(x, (lower + upper) / 2);
/// lower > upper is InvalidArgument.
EagerTensor rrelu(const EagerTensor& x, double lower = 1.0 / 8, double upper = 1.0 / 3);
TracedTensor rrelu(const TracedTensor& x, double lower = 1.0 / 8, double upper = 1.0 / 3);

// ---- math helpers (torch.*) -----------------------------------------------------------

/// pow with both operands cast to f64 (c128 when either is complex).
EagerTensor float_power(const EagerTensor& a, const EagerTensor& b);
TracedTensor float_power(const TracedTensor& a, const TracedTensor& b);
EagerTensor float_power(const EagerTensor& a, Scalar b);
TracedTensor float_power(const TracedTensor& a, Scalar b);
/// x * pi / 180 and x * 180 / pi (real inputs; integers give f64).
EagerTensor deg2rad(const EagerTensor& x);
TracedTensor deg2rad(const TracedTensor& x);
EagerTensor rad2deg(const EagerTensor& x);
TracedTensor rad2deg(const TracedTensor& x);
/// The identity (returns x itself); bool is DTypeMismatch, as in PyTorch.
EagerTensor positive(const EagerTensor& x);
TracedTensor positive(const TracedTensor& x);
/// NaN-ignoring maximum / minimum (NaN only where both are NaN); real dtypes.
EagerTensor fmax(const EagerTensor& a, const EagerTensor& b);
TracedTensor fmax(const TracedTensor& a, const TracedTensor& b);
EagerTensor fmin(const EagerTensor& a, const EagerTensor& b);
TracedTensor fmin(const TracedTensor& a, const TracedTensor& b);
/// max(x, min) / min(x, max) with tensor bounds (broadcasting); NaN propagates.
EagerTensor clamp_min(const EagerTensor& x, const EagerTensor& min);
TracedTensor clamp_min(const TracedTensor& x, const TracedTensor& min);
EagerTensor clamp_max(const EagerTensor& x, const EagerTensor& max);
TracedTensor clamp_max(const TracedTensor& x, const TracedTensor& max);
/// a * 2^b, in the floating (or complex) dtype a * b promotes to.
EagerTensor ldexp(const EagerTensor& a, const EagerTensor& b);
TracedTensor ldexp(const TracedTensor& a, const TracedTensor& b);
/// re + i im from two tensors of the same real floating dtype (f32 -> c64,
/// f64 -> c128), broadcasting; each part is taken exactly, also when it is
/// infinite or NaN (the complex primitive, BinaryOp::Complex).
EagerTensor complex(const EagerTensor& re, const EagerTensor& im);
TracedTensor complex(const TracedTensor& re, const TracedTensor& im);
/// complex(abs * cos(angle), abs * sin(angle)).
EagerTensor polar(const EagerTensor& abs, const EagerTensor& angle);
TracedTensor polar(const TracedTensor& abs, const TracedTensor& angle);
/// NaN -> nan, +inf -> posinf, -inf -> neginf (defaults: the dtype's largest
/// and lowest finite values); complex inputs: both parts. Integers and bool
/// are returned unchanged.
EagerTensor nan_to_num(const EagerTensor& x, double nan = 0.0,
                       std::optional<double> posinf = std::nullopt,
                       std::optional<double> neginf = std::nullopt);
TracedTensor nan_to_num(const TracedTensor& x, double nan = 0.0,
                        std::optional<double> posinf = std::nullopt,
                        std::optional<double> neginf = std::nullopt);
/// logit of x clamped to [eps, 1 - eps] (PyTorch's logit(x, eps)): the
/// derivative is 1 / (x (1 - x)) inside the closed interval and 0 outside.
/// eps must lie in [0, 0.5] (InvalidArgument); real floating dtypes.
EagerTensor logit(const EagerTensor& x, double eps);
TracedTensor logit(const TracedTensor& x, double eps);
/// Rounds half to even at `decimals` decimal digits (negative: tens,
/// hundreds...), like torch.round(x, decimals=d). Floating dtypes for d != 0.
EagerTensor round(const EagerTensor& x, std::int64_t decimals);
TracedTensor round(const TracedTensor& x, std::int64_t decimals);

// ---- reductions (as in the core: empty axes reduce nothing; the forms without axes reduce all) --

/// Sum treating NaN as 0 (real dtypes; bool and integers give i64).
EagerTensor nansum(const EagerTensor& x, std::span<const std::int64_t> axes, bool keepdim = false);
EagerTensor nansum(const EagerTensor& x);
inline EagerTensor nansum(const EagerTensor& x, std::initializer_list<std::int64_t> axes,
                          bool keepdim = false) {
  return nansum(x, std::span<const std::int64_t>(axes.begin(), axes.size()), keepdim);
}
TracedTensor nansum(const TracedTensor& x, Axes axes, bool keepdim = false);
TracedTensor nansum(const TracedTensor& x);
/// Mean over the non-NaN entries (NaN where all are NaN); f32 and f64.
EagerTensor nanmean(const EagerTensor& x, std::span<const std::int64_t> axes, bool keepdim = false);
EagerTensor nanmean(const EagerTensor& x);
inline EagerTensor nanmean(const EagerTensor& x, std::initializer_list<std::int64_t> axes,
                           bool keepdim = false) {
  return nanmean(x, std::span<const std::int64_t>(axes.begin(), axes.size()), keepdim);
}
TracedTensor nanmean(const TracedTensor& x, Axes axes, bool keepdim = false);
TracedTensor nanmean(const TracedTensor& x);
/// Max / min reductions (NaN-propagating); ties share the gradient evenly.
EagerTensor amax(const EagerTensor& x, std::span<const std::int64_t> axes, bool keepdim = false);
EagerTensor amax(const EagerTensor& x);
inline EagerTensor amax(const EagerTensor& x, std::initializer_list<std::int64_t> axes,
                        bool keepdim = false) {
  return amax(x, std::span<const std::int64_t>(axes.begin(), axes.size()), keepdim);
}
TracedTensor amax(const TracedTensor& x, Axes axes, bool keepdim = false);
TracedTensor amax(const TracedTensor& x);
EagerTensor amin(const EagerTensor& x, std::span<const std::int64_t> axes, bool keepdim = false);
EagerTensor amin(const EagerTensor& x);
inline EagerTensor amin(const EagerTensor& x, std::initializer_list<std::int64_t> axes,
                        bool keepdim = false) {
  return amin(x, std::span<const std::int64_t>(axes.begin(), axes.size()), keepdim);
}
TracedTensor amin(const TracedTensor& x, Axes axes, bool keepdim = false);
TracedTensor amin(const TracedTensor& x);

}  // namespace tenferro
