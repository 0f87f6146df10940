// PyTorch-style math helpers and NaN-aware reductions as compositions of
// primitives, written once as templates over the tensor type and instantiated
// for the eager and the traced tier.

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "ad/surface/composite_checks.hpp"
#include "tenferro/ad/composite.hpp"
#include "tenferro/core/report_as.hpp"

namespace tenferro {
namespace {

using detail::require_defined;

template <class T>
void require_real(const T& x, const char* op, const char* which = "input") {
  require_defined(x, op, which);
  if (is_complex(x.dtype())) {
    fail(ErrorKind::DTypeMismatch, op, "not defined for complex ", which, " (dtype ",
         name(x.dtype()), "); pass a real tensor");
  }
}

template <class T>
void require_real_floating(const T& x, const char* op, const char* which = "input") {
  require_defined(x, op, which);
  if (x.dtype() != DType::F32 && x.dtype() != DType::F64) {
    fail(ErrorKind::DTypeMismatch, op, which, " must be f32 or f64, got ", name(x.dtype()));
  }
}

template <class T>
T as_dtype(const T& x, DType dtype) {
  return x.dtype() == dtype ? x : cast(x, dtype);
}

template <class T>
T isnan_of(const T& x) {
  return unary(UnaryOp::IsNan, x);
}

template <class T>
T float_power_impl(const T& a, const T& b) {
  require_defined(a, "float_power", "base");
  require_defined(b, "float_power", "exponent");
  const DType d = is_complex(a.dtype()) || is_complex(b.dtype()) ? DType::C128 : DType::F64;
  return pow(as_dtype(a, d), as_dtype(b, d));
}

template <class T>
T float_power_scalar_impl(const T& a, Scalar b) {
  require_defined(a, "float_power", "base");
  const DType d = is_complex(a.dtype()) || is_complex(b.dtype()) ? DType::C128 : DType::F64;
  const T base = as_dtype(a, d);
  return pow(base, scalar_like(base, b));
}

// The constants PyTorch multiplies by (double precision).
constexpr double kPiOver180 = 0.017453292519943295769236907684886127134428718885417;
constexpr double k180OverPi = 57.295779513082320876798154814105170332405472466564;

template <class T>
T angle_scale(const T& x, double factor, const char* op) {
  require_real(x, op);
  if (is_bool(x.dtype())) {
    fail(ErrorKind::DTypeMismatch, op, "not defined for bool; pass a floating tensor");
  }
  return x * factor;
}

template <class T>
T positive_impl(const T& x) {
  require_defined(x, "positive");
  if (is_bool(x.dtype())) {
    fail(ErrorKind::DTypeMismatch, "positive", "not defined for bool; use the tensor itself");
  }
  return x;
}

// cond picks a; NaN in b also picks a, so NaN survives only where both are NaN.
template <class T>
T fmax_fmin(const T& a, const T& b, bool is_max, const char* op) {
  require_real(a, op, "first operand");
  require_real(b, op, "second operand");
  T pick_a = is_max ? ge(a, b) : le(a, b);
  if (is_inexact(b.dtype())) pick_a = binary(BinaryOp::LogicalOr, pick_a, isnan_of(b));
  return where(pick_a, a, b);
}

// x where x is at or beyond the bound (ties give x the gradient) or NaN.
template <class T>
T clamp_bound(const T& x, const T& bound, bool is_min, const char* op) {
  require_real(x, op);
  require_real(bound, op, is_min ? "min" : "max");
  T keep = is_min ? ge(x, bound) : le(x, bound);
  if (is_inexact(x.dtype())) keep = binary(BinaryOp::LogicalOr, keep, isnan_of(x));
  return where(keep, x, bound);
}

template <class T>
T ldexp_impl(const T& a, const T& b) {
  require_defined(a, "ldexp", "mantissa");
  require_defined(b, "ldexp", "exponent");
  const DType r = inexact_dtype(promote_types(a.dtype(), b.dtype()));
  // The exponent stays real unless it is complex itself.
  const T e = as_dtype(b, is_complex(b.dtype()) ? r : real_dtype(r));
  return as_dtype(a, r) * unary(UnaryOp::Exp2, e);
}

template <class T>
void require_complex_parts(const T& re, const T& im, const char* op, const char* re_name,
                           const char* im_name) {
  require_real_floating(re, op, re_name);
  require_real_floating(im, op, im_name);
  if (re.dtype() != im.dtype()) {
    fail(ErrorKind::DTypeMismatch, op, re_name, " and ", im_name, " must have the same dtype, got ",
         name(re.dtype()), " and ", name(im.dtype()));
  }
}

// re + i im through the complex primitive: the parts are stored exactly
// (re + im * i would turn complex(1, inf) into NaN + inf i); the cotangents
// are Re(ct) and Im(ct).
template <class T>
T complex_core(const T& re, const T& im) {
  return binary(BinaryOp::Complex, re, im);
}

template <class T>
T complex_impl(const T& re, const T& im) {
  require_complex_parts(re, im, "complex", "real part", "imaginary part");
  return complex_core(re, im);
}

template <class T>
T polar_impl(const T& abs, const T& angle) {
  require_complex_parts(abs, angle, "polar", "abs", "angle");
  return complex_core(abs * cos(angle), abs * sin(angle));
}

template <class T>
T nan_to_num_real(const T& x, double nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
  const double big = x.dtype() == DType::F32 ? std::numeric_limits<float>::max()
                                             : std::numeric_limits<double>::max();
  const T pos = scalar_like(x, Scalar(posinf.value_or(big)));
  const T neg = scalar_like(x, Scalar(neginf.value_or(-big)));
  const T replaced = where(isnan_of(x), scalar_like(x, Scalar(nan)),
                           where(gt(x, scalar_like(x, Scalar(0.0))), pos, neg));
  return where(isfinite(x), x, replaced);  // the derivative passes only where x is finite
}

template <class T>
T nan_to_num_impl(const T& x, double nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
  require_defined(x, "nan_to_num");
  if (!is_inexact(x.dtype())) return x;  // integers and bool hold no NaN or inf
  if (!is_complex(x.dtype())) return nan_to_num_real(x, nan, posinf, neginf);
  return complex_core(nan_to_num_real(real(x), nan, posinf, neginf),
                      nan_to_num_real(imag(x), nan, posinf, neginf));
}

// PyTorch: d > 0: nearbyint(x * 10^d) / 10^d; d < 0: nearbyint(x / 10^-d) * 10^-d,
// with 10^|d| rounded to the tensor's dtype.
template <class T>
T logit_eps_impl(const T& x, double eps) {
  require_real_floating(x, "logit");
  if (!(eps >= 0.0 && eps <= 0.5)) {
    fail(ErrorKind::InvalidArgument, "logit", "eps must lie in [0, 0.5], got ", eps);
  }
  // clamp's derivative is 1 on the closed interval, as in PyTorch's logit backward.
  return logit(clamp(x, Scalar(eps), Scalar(1.0 - eps)));
}

template <class T>
T round_decimals_impl(const T& x, std::int64_t decimals) {
  require_defined(x, "round");
  if (decimals == 0) return unary(UnaryOp::Round, x);
  require_real_floating(x, "round");
  const T p = scalar_like(x, Scalar(std::pow(10.0, static_cast<double>(std::abs(decimals)))));
  return decimals > 0 ? unary(UnaryOp::Round, x * p) / p : unary(UnaryOp::Round, x / p) * p;
}

// ---- reductions ----------------------------------------------------------------------

// Axis lists pass straight to the core reductions, so an empty list reduces
// nothing there too (PyTorch's dim=[] is the form without axes).

template <class T>
T without_nan(const T& x) {
  return is_inexact(x.dtype()) ? where(isnan_of(x), scalar_like(x, Scalar(0.0)), x) : x;
}

template <class T>
T nansum_impl(const T& x, std::span<const std::int64_t> axes, bool keepdim) {
  require_real(x, "nansum");
  return sum(without_nan(x), axes, keepdim);
}

template <class T>
T nanmean_impl(const T& x, std::span<const std::int64_t> axes, bool keepdim) {
  require_real_floating(x, "nanmean");
  const T count = sum(cast(unary(UnaryOp::LogicalNot, isnan_of(x)), x.dtype()), axes, keepdim);
  return sum(without_nan(x), axes, keepdim) / count;  // 0 / 0 = NaN where all are NaN
}

template <class T>
T amax_amin(const T& x, std::span<const std::int64_t> axes, bool keepdim, bool is_max) {
  require_real(x, is_max ? "amax" : "amin");
  return is_max ? max(x, axes, keepdim) : min(x, axes, keepdim);
}

}  // namespace

// The public templates (composite.hpp) forward to the implementations above.
template <SurfaceTensor T>
T float_power(const T& a, const T& b) {
  return report_as("float_power", [&] { return float_power_impl(a, b); });
}
template <SurfaceTensor T>
T float_power(const T& a, Scalar b) {
  return report_as("float_power", [&] { return float_power_scalar_impl(a, b); });
}
template <SurfaceTensor T>
T deg2rad(const T& x) {
  return report_as("deg2rad", [&] { return angle_scale(x, kPiOver180, "deg2rad"); });
}
template <SurfaceTensor T>
T rad2deg(const T& x) {
  return report_as("rad2deg", [&] { return angle_scale(x, k180OverPi, "rad2deg"); });
}
template <SurfaceTensor T>
T positive(const T& x) {
  return report_as("positive", [&] { return positive_impl(x); });
}
template <SurfaceTensor T>
T fmax(const T& a, const T& b) {
  return report_as("fmax", [&] { return fmax_fmin(a, b, true, "fmax"); });
}
template <SurfaceTensor T>
T fmin(const T& a, const T& b) {
  return report_as("fmin", [&] { return fmax_fmin(a, b, false, "fmin"); });
}
template <SurfaceTensor T>
T clamp_min(const T& x, const T& min) {
  return report_as("clamp_min", [&] { return clamp_bound(x, min, true, "clamp_min"); });
}
template <SurfaceTensor T>
T clamp_max(const T& x, const T& max) {
  return report_as("clamp_max", [&] { return clamp_bound(x, max, false, "clamp_max"); });
}
template <SurfaceTensor T>
T ldexp(const T& a, const T& b) {
  return report_as("ldexp", [&] { return ldexp_impl(a, b); });
}
template <SurfaceTensor T>
T complex(const T& re, const T& im) {
  return report_as("complex", [&] { return complex_impl(re, im); });
}
template <SurfaceTensor T>
T polar(const T& abs, const T& angle) {
  return report_as("polar", [&] { return polar_impl(abs, angle); });
}
template <SurfaceTensor T>
T nan_to_num(const T& x, double nan, std::optional<double> posinf, std::optional<double> neginf) {
  return report_as("nan_to_num", [&] { return nan_to_num_impl(x, nan, posinf, neginf); });
}
template <SurfaceTensor T>
T logit(const T& x, double eps) {
  return report_as("logit", [&] { return logit_eps_impl(x, eps); });
}
template <SurfaceTensor T>
T round(const T& x, std::int64_t decimals) {
  return report_as("round", [&] { return round_decimals_impl(x, decimals); });
}
template <SurfaceTensor T>
T nansum(const T& x) {
  return report_as("nansum", [&] { return nansum_impl(x, every_axis(x), false); });
}
template <SurfaceTensor T>
T nanmean(const T& x) {
  return report_as("nanmean", [&] { return nanmean_impl(x, every_axis(x), false); });
}
template <SurfaceTensor T>
T amax(const T& x) {
  return report_as("amax", [&] { return amax_amin(x, every_axis(x), false, true); });
}
template <SurfaceTensor T>
T amin(const T& x) {
  return report_as("amin", [&] { return amax_amin(x, every_axis(x), false, false); });
}
template <SurfaceTensor T>
T nansum(const T& x, Axes axes, bool keepdim) {
  return report_as("nansum", [&] { return nansum_impl(x, axes, keepdim); });
}
template <SurfaceTensor T>
T nanmean(const T& x, Axes axes, bool keepdim) {
  return report_as("nanmean", [&] { return nanmean_impl(x, axes, keepdim); });
}
template <SurfaceTensor T>
T amax(const T& x, Axes axes, bool keepdim) {
  return report_as("amax", [&] { return amax_amin(x, axes, keepdim, true); });
}
template <SurfaceTensor T>
T amin(const T& x, Axes axes, bool keepdim) {
  return report_as("amin", [&] { return amax_amin(x, axes, keepdim, false); });
}

// Both tiers.
#define TF_INSTANTIATE(T)                                                                   \
  template T float_power<T>(const T&, const T&);                                            \
  template T float_power<T>(const T&, Scalar);                                              \
  template T deg2rad<T>(const T&);                                                          \
  template T rad2deg<T>(const T&);                                                          \
  template T positive<T>(const T&);                                                         \
  template T fmax<T>(const T&, const T&);                                                   \
  template T fmin<T>(const T&, const T&);                                                   \
  template T clamp_min<T>(const T&, const T&);                                              \
  template T clamp_max<T>(const T&, const T&);                                              \
  template T ldexp<T>(const T&, const T&);                                                  \
  template T complex<T>(const T&, const T&);                                                \
  template T polar<T>(const T&, const T&);                                                  \
  template T nan_to_num<T>(const T&, double, std::optional<double>, std::optional<double>); \
  template T logit<T>(const T&, double);                                                    \
  template T round<T>(const T&, std::int64_t);                                              \
  template T nansum<T>(const T&);                                                           \
  template T nanmean<T>(const T&);                                                          \
  template T amax<T>(const T&);                                                             \
  template T amin<T>(const T&);                                                             \
  template T nansum<T>(const T&, Axes, bool);                                               \
  template T nanmean<T>(const T&, Axes, bool);                                              \
  template T amax<T>(const T&, Axes, bool);                                                 \
  template T amin<T>(const T&, Axes, bool);

TF_INSTANTIATE(DirectTensor)
TF_INSTANTIATE(EagerTensor)
TF_INSTANTIATE(TracedTensor)
#undef TF_INSTANTIATE

}  // namespace tenferro
