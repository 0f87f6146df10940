// Activation functions as compositions of primitives, written once as
// templates over the tensor type and instantiated for the eager and the traced
// tier. Kinks are placed with where() conditions so that the derivative there
// equals PyTorch's; branches that could overflow get a safe input, so the
// unselected branch never turns a zero cotangent into NaN (inf * 0).
//
// Untracked eager calls on large f32/f64 inputs run as one fused pass over
// memory instead of one pass per primitive (see fused_or below).

#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <type_traits>

#include "ad/surface/composite_checks.hpp"
#include "tenferro/ad/composite.hpp"
#include "tenferro/ad/program.hpp"
#include "tenferro/core/report_as.hpp"

namespace tenferro {
namespace {

using detail::require_defined;

// Activations are defined on the real line: complex and bool are rejected.
template <class T>
void require_real(const T& x, const char* op, const char* which = "input") {
  require_defined(x, op, which);
  if (is_complex(x.dtype()) || is_bool(x.dtype())) {
    fail(ErrorKind::DTypeMismatch, op, "not defined for ", which, " dtype ", name(x.dtype()),
         "; pass a real (floating or integer) tensor");
  }
}

template <class T>
void require_defined_non_bool(const T& x, const char* op) {
  require_defined(x, op);
  if (is_bool(x.dtype())) {
    fail(ErrorKind::DTypeMismatch, op, "not defined for bool; convert to a floating dtype first");
  }
}

// A rank-0 constant: doubles take a floating tensor's dtype.
template <class T>
T num(const T& like, double v) {
  return scalar_like(like, Scalar(v));
}
// An integer zero keeps integer tensors integer (relu of i64 stays i64).
template <class T>
T zero(const T& like) {
  return scalar_like(like, Scalar(std::int64_t{0}));
}

template <class T>
T relu_impl(const T& x) {
  require_real(x, "relu");
  const T z = zero(x);
  // x == 0 takes the constant branch (relu'(0) = 0) and NaN passes through, as in PyTorch.
  return where(le(x, z), z, x);
}

template <class T>
T leaky_impl(const T& x, double slope, const char* op) {
  require_real(x, op);
  return where(gt(x, zero(x)), x, x * slope);  // slope at 0, like PyTorch
}

template <class T>
T leaky_relu_impl(const T& x, double negative_slope) {
  return leaky_impl(x, negative_slope, "leaky_relu");
}

template <class T>
T rrelu_impl(const T& x, double lower, double upper) {
  if (!(lower <= upper)) {
    fail(ErrorKind::InvalidArgument, "rrelu", "lower (", lower, ") must not exceed upper (", upper,
         ")");
  }
  return leaky_impl(x, (lower + upper) / 2, "rrelu");
}

// x > 0 ? pos_scale * x : neg_scale * expm1(x * in_scale); the x <= 0 branch
// owns the kink (elu'(0) = alpha, as in PyTorch).
template <class T>
T elu_family(const T& x, double pos_scale, double neg_scale, double in_scale, const char* op) {
  require_real(x, op);
  const T z = zero(x);
  const T pos = gt(x, z);
  const T safe = where(pos, z, x);  // keeps expm1 finite where its branch is unused
  const T neg = in_scale == 1.0 ? expm1(safe) : expm1(safe * in_scale);
  return where(pos, pos_scale == 1.0 ? x : x * pos_scale, neg * neg_scale);
}

template <class T>
T elu_impl(const T& x, double alpha) {
  return elu_family(x, 1.0, alpha, 1.0, "elu");
}

template <class T>
T celu_impl(const T& x, double alpha) {
  if (alpha == 0.0) {
    fail(ErrorKind::InvalidArgument, "celu", "alpha must be nonzero (it divides the input)");
  }
  require_real(x, "celu");
  const T z = zero(x);
  const T pos = gt(x, z);
  const T safe = where(pos, z, x);
  return where(pos, x, expm1(safe / alpha) * alpha);
}

template <class T>
T selu_impl(const T& x) {
  constexpr double kScale = 1.0507009873554804934193349852946;
  constexpr double kAlpha = 1.6732632423543772848170429916717;
  return elu_family(x, kScale, kAlpha * kScale, 1.0, "selu");
}

template <class T>
T softplus_core(const T& x, double beta, double threshold) {
  const T bx = beta == 1.0 ? x : x * beta;
  const T linear = gt(bx, num(bx, threshold));
  const T safe = where(linear, zero(bx), bx);  // exp(bx) may overflow where unused
  const T soft = log1p(exp(safe));
  return where(linear, x, beta == 1.0 ? soft : soft / beta);
}

template <class T>
T softplus_impl(const T& x, double beta, double threshold) {
  if (beta == 0.0) {
    fail(ErrorKind::InvalidArgument, "softplus", "beta must be nonzero (it divides the result)");
  }
  require_real(x, "softplus");
  return softplus_core(x, beta, threshold);
}

template <class T>
T silu_impl(const T& x) {
  require_real(x, "silu");
  return x * sigmoid(x);
}

template <class T>
T mish_impl(const T& x) {
  require_real(x, "mish");
  return x * tanh(softplus_core(x, 1.0, 20.0));
}

// Bounds take the constant branches: derivative 0 at and outside them.
template <class T>
T hardtanh_core(const T& x, double lo, double hi, const char* op) {
  if (!(lo <= hi)) {
    fail(ErrorKind::InvalidArgument, op, "max_val (", hi, ") must not be below min_val (", lo, ")");
  }
  require_real(x, op);
  return where(le(x, num(x, lo)), num(x, lo), where(ge(x, num(x, hi)), num(x, hi), x));
}

template <class T>
T hardtanh_impl(const T& x, double min_val, double max_val) {
  return hardtanh_core(x, min_val, max_val, "hardtanh");
}

template <class T>
T relu6_impl(const T& x) {
  return hardtanh_core(x, 0.0, 6.0, "relu6");
}

template <class T>
T hardsigmoid_impl(const T& x) {
  require_real(x, "hardsigmoid");
  return hardtanh_core(x + 3.0, 0.0, 6.0, "hardsigmoid") / 6.0;
}

template <class T>
T hardshrink_impl(const T& x, double lambd) {
  require_real(x, "hardshrink");
  // Written as "inside the band -> 0" so that NaN passes through, as in PyTorch.
  const T inside = binary(BinaryOp::LogicalAnd, ge(x, num(x, -lambd)), le(x, num(x, lambd)));
  return where(inside, zero(x), x);
}

template <class T>
T softshrink_impl(const T& x, double lambd) {
  if (!(lambd >= 0.0)) {
    fail(ErrorKind::InvalidArgument, "softshrink", "lambd must be non-negative, got ", lambd);
  }
  require_real(x, "softshrink");
  const T l = num(x, lambd);
  return where(gt(x, l), x - lambd, where(lt(x, -l), x + lambd, zero(x)));
}

template <class T>
T softsign_impl(const T& x) {
  require_defined_non_bool(x, "softsign");
  return x / (abs(x) + 1.0);  // abs is the modulus for complex x
}

template <class T>
T tanhshrink_impl(const T& x) {
  require_defined_non_bool(x, "tanhshrink");
  return x - tanh(x);
}

// min(x, 0) - log1p(exp(-|x|)), PyTorch's stable form. Both pieces are written
// with where(x < 0, ...) so that the derivative at 0 is sigmoid(0) = 1/2 (abs
// would give 0 there) and the function stays twice differentiable.
template <class T>
T logsigmoid_impl(const T& x) {
  require_real(x, "logsigmoid");
  const T z = zero(x);
  const T negative = lt(x, z);
  return where(negative, x, z) - log1p(exp(where(negative, x, -x)));
}

template <class T>
T threshold_impl(const T& x, double threshold, double value) {
  require_real(x, "threshold");
  return where(le(x, num(x, threshold)), num(x, value), x);  // NaN passes through
}

template <class T>
T prelu_impl(const T& x, const T& weight) {
  require_real(x, "prelu");
  require_real(weight, "prelu", "weight");
  return where(gt(x, zero(x)), x, weight * x);
}

// ---- fused eager passes ------------------------------------------------------

// Elements from which an untracked eager composite runs fused (below, the few
// microseconds of program lookup would outweigh the passes saved).
constexpr std::int64_t kFusedFrom = std::int64_t{1} << 15;
constexpr const char* kFusedFamily = "tenferro.composites.v1";

bool fusable(const EagerTensor& x) {
  return x.defined() && (x.dtype() == DType::F64 || x.dtype() == DType::F32) &&
         x.numel() >= kFusedFrom && !capture_active() &&
         !(grad_recording_enabled() && x.requires_grad());
}
bool fusable(const DirectTensor& x) {
  return x.defined() && (x.dtype() == DType::F64 || x.dtype() == DType::F32) &&
         x.numel() >= kFusedFrom && x.backend().runs_fused_passes();
}

// The composite `f` traced once per (name and parameters, dtype, rank) on a
// placeholder with named sizes, compiled, and kept in the runtime's extension
// caches (family "tenferro.composites.v1", cache "programs"); run_compiled
// prepares it once (its elementwise chain becomes one blockwise pass) and
// keeps that preparation in its own cache. The values are those of the
// op-by-op composite: the fused pass runs the same kernels block by block.
template <class F>
Tensor run_fused(Runtime& runtime, const Tensor& x, const char* op,
                 std::initializer_list<double> params, F f) {
  std::string key = op;
  for (const double p : params) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "|%a", p);
    key += buf;
  }
  key += '|';
  key += name(x.dtype());
  key += '|';
  key += std::to_string(x.rank());
  ExtensionCaches caches(runtime.extension_caches(), kFusedFamily);
  const auto program = caches.get_or_put<Program>("programs", key, 4096, [&] {
    SymShape dims;
    for (std::int64_t d = 0; d < x.rank(); ++d) {
      std::string dim = "d";
      dim += std::to_string(d);
      dims.push_back(SymDim::var(std::move(dim)));
    }
    const TracedTensor t = placeholder(x.dtype(), std::move(dims));
    return std::make_shared<const Program>(compile({f(t)}, {t}));
  });
  std::vector<Tensor> out = run_compiled(runtime, *program, {x});
  return std::move(out[0]);
}

// f(x), fused (run_fused) for an untracked eager x of at least kFusedFrom
// f32/f64 elements, outside capture scopes; op by op otherwise. `f` is
// generic over the tensor type. Invalid parameters fail before anything
// is cached (the traced f validates them as the eager one does).
template <class T, class F>
T fused_or(const T& x, const char* op, std::initializer_list<double> params, F f) {
  if constexpr (std::is_same_v<T, EagerTensor>) {
    if (fusable(x))
      return x.runtime()->tensor(run_fused(*x.runtime()->runtime(), x.value(), op, params, f));
  } else if constexpr (std::is_same_v<T, DirectTensor>) {
    // On the runtime attached to the backend: its program cache persists.
    if (fusable(x)) {
      Runtime& runtime = *EagerRuntime::attached(x.backend())->runtime();
      return on(x.backend(), run_fused(runtime, x.value(), op, params, f));
    }
  }
  return f(x);
}

}  // namespace

// The public templates (composite.hpp) forward to the implementations above.
template <SurfaceTensor T>
T relu(const T& x) {
  return report_as(
      "relu", [&] { return fused_or(x, "relu", {}, [&](const auto& v) { return relu_impl(v); }); });
}
template <SurfaceTensor T>
T relu6(const T& x) {
  return report_as("relu6", [&] {
    return fused_or(x, "relu6", {}, [&](const auto& v) { return relu6_impl(v); });
  });
}
template <SurfaceTensor T>
T leaky_relu(const T& x, double negative_slope) {
  return report_as("leaky_relu", [&] {
    return fused_or(x, "leaky_relu", {negative_slope},
                    [&](const auto& v) { return leaky_relu_impl(v, negative_slope); });
  });
}
template <SurfaceTensor T>
T elu(const T& x, double alpha) {
  return report_as("elu", [&] {
    return fused_or(x, "elu", {alpha}, [&](const auto& v) { return elu_impl(v, alpha); });
  });
}
template <SurfaceTensor T>
T celu(const T& x, double alpha) {
  return report_as("celu", [&] {
    return fused_or(x, "celu", {alpha}, [&](const auto& v) { return celu_impl(v, alpha); });
  });
}
template <SurfaceTensor T>
T selu(const T& x) {
  return report_as(
      "selu", [&] { return fused_or(x, "selu", {}, [&](const auto& v) { return selu_impl(v); }); });
}
template <SurfaceTensor T>
T silu(const T& x) {
  return report_as(
      "silu", [&] { return fused_or(x, "silu", {}, [&](const auto& v) { return silu_impl(v); }); });
}
template <SurfaceTensor T>
T mish(const T& x) {
  return report_as(
      "mish", [&] { return fused_or(x, "mish", {}, [&](const auto& v) { return mish_impl(v); }); });
}
template <SurfaceTensor T>
T softplus(const T& x, double beta, double threshold) {
  return report_as("softplus", [&] {
    return fused_or(x, "softplus", {beta, threshold},
                    [&](const auto& v) { return softplus_impl(v, beta, threshold); });
  });
}
template <SurfaceTensor T>
T hardtanh(const T& x, double min_val, double max_val) {
  return report_as("hardtanh", [&] {
    return fused_or(x, "hardtanh", {min_val, max_val},
                    [&](const auto& v) { return hardtanh_impl(v, min_val, max_val); });
  });
}
template <SurfaceTensor T>
T hardsigmoid(const T& x) {
  return report_as("hardsigmoid", [&] {
    return fused_or(x, "hardsigmoid", {}, [&](const auto& v) { return hardsigmoid_impl(v); });
  });
}
template <SurfaceTensor T>
T hardshrink(const T& x, double lambd) {
  return report_as("hardshrink", [&] {
    return fused_or(x, "hardshrink", {lambd},
                    [&](const auto& v) { return hardshrink_impl(v, lambd); });
  });
}
template <SurfaceTensor T>
T softshrink(const T& x, double lambd) {
  return report_as("softshrink", [&] {
    return fused_or(x, "softshrink", {lambd},
                    [&](const auto& v) { return softshrink_impl(v, lambd); });
  });
}
template <SurfaceTensor T>
T softsign(const T& x) {
  return report_as("softsign", [&] {
    return fused_or(x, "softsign", {}, [&](const auto& v) { return softsign_impl(v); });
  });
}
template <SurfaceTensor T>
T tanhshrink(const T& x) {
  return report_as("tanhshrink", [&] {
    return fused_or(x, "tanhshrink", {}, [&](const auto& v) { return tanhshrink_impl(v); });
  });
}
template <SurfaceTensor T>
T logsigmoid(const T& x) {
  return report_as("logsigmoid", [&] {
    return fused_or(x, "logsigmoid", {}, [&](const auto& v) { return logsigmoid_impl(v); });
  });
}
template <SurfaceTensor T>
T threshold(const T& x, double threshold, double value) {
  return report_as("threshold", [&] {
    return fused_or(x, "threshold", {threshold, value},
                    [&](const auto& v) { return threshold_impl(v, threshold, value); });
  });
}
template <SurfaceTensor T>
T prelu(const T& x, const T& weight) {
  return report_as("prelu", [&] { return prelu_impl(x, weight); });
}
template <SurfaceTensor T>
T rrelu(const T& x, double lower, double upper) {
  return report_as("rrelu", [&] {
    return fused_or(x, "rrelu", {lower, upper},
                    [&](const auto& v) { return rrelu_impl(v, lower, upper); });
  });
}

// Both tiers.
#define TF_INSTANTIATE(T)                            \
  template T relu<T>(const T&);                      \
  template T relu6<T>(const T&);                     \
  template T leaky_relu<T>(const T&, double);        \
  template T elu<T>(const T&, double);               \
  template T celu<T>(const T&, double);              \
  template T selu<T>(const T&);                      \
  template T silu<T>(const T&);                      \
  template T mish<T>(const T&);                      \
  template T softplus<T>(const T&, double, double);  \
  template T hardtanh<T>(const T&, double, double);  \
  template T hardsigmoid<T>(const T&);               \
  template T hardshrink<T>(const T&, double);        \
  template T softshrink<T>(const T&, double);        \
  template T softsign<T>(const T&);                  \
  template T tanhshrink<T>(const T&);                \
  template T logsigmoid<T>(const T&);                \
  template T threshold<T>(const T&, double, double); \
  template T prelu<T>(const T&, const T&);           \
  template T rrelu<T>(const T&, double, double);

TF_INSTANTIATE(DirectTensor)
TF_INSTANTIATE(EagerTensor)
TF_INSTANTIATE(TracedTensor)
#undef TF_INSTANTIATE

}  // namespace tenferro
