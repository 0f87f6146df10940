// The public transforms, composed once for both AD tiers: argument checks,
// dtype promotion, padding / truncation (a core pad, so its AD is the core's)
// and one transform node (module.cpp, kernels.cpp). The direct tier runs the
// same code on an untracked eager runtime over the caller's backend.

#include <cmath>
#include <string>

#include "fft/common.hpp"
#include "tenferro/core/report_as.hpp"
#include "tenferro/fft/fft.hpp"

namespace tenferro::fft {
namespace detail {
namespace {

enum class Fn { Fft, Ifft, Rfft, Irfft, Hfft, Ihfft };

const char* fn_name(Fn f, bool nd) {
  switch (f) {
    case Fn::Fft:
      return nd ? "fftn" : "fft";
    case Fn::Ifft:
      return nd ? "ifftn" : "ifft";
    case Fn::Rfft:
      return nd ? "rfftn" : "rfft";
    case Fn::Irfft:
      return nd ? "irfftn" : "irfft";
    case Fn::Hfft:
      return nd ? "hfftn" : "hfft";
    case Fn::Ihfft:
      return nd ? "ihfftn" : "ihfft";
  }
  return "fft";
}

template <FftTensor T>
std::int64_t const_extent(const T& x, std::int64_t axis, const char* op) {
  if constexpr (std::same_as<T, EagerTensor>) {
    return x.shape()[static_cast<std::size_t>(axis)];
  } else {
    const auto e = x.shape()[static_cast<std::size_t>(axis)].try_constant();
    if (!e) {
      fail(ErrorKind::Unsupported, op, "axis ", axis,
           " has a symbolic extent; FFTs need constant extents (bind the shape first)");
    }
    return *e;
  }
}

// The scale of a norm mode for a forward-named (fft, rfft, hfft) or
// inverse-named (ifft, irfft, ihfft) transform of N points.
double norm_scale(std::string_view norm, bool inverse, double points, const char* op) {
  if (norm == "backward") return inverse ? 1.0 / points : 1.0;
  if (norm == "forward") return inverse ? 1.0 : 1.0 / points;
  if (norm == "ortho") return 1.0 / std::sqrt(points);
  fail(ErrorKind::InvalidArgument, op,
       "norm must be \"backward\", \"forward\" or \"ortho\", got \"", std::string(norm), "\"");
}

Axes normalise(const Axes& axes, std::int64_t rank, const char* op) {
  Axes out;
  for (const std::int64_t a : axes) {
    if (a < -rank || a >= rank) {
      fail(ErrorKind::AxisOutOfBounds, op, "axis ", a, " is out of range for a rank-", rank,
           " tensor (valid: ", -rank, " .. ", rank - 1, ")");
    }
    const std::int64_t k = a < 0 ? a + rank : a;
    for (const std::int64_t b : out) {
      if (b == k) fail(ErrorKind::DuplicateAxis, op, "axis ", k, " is given twice");
    }
    out.push_back(k);
  }
  return out;
}

template <FftTensor T>
T transform(const T& x, Fn fn, bool nd, const Lengths& s, const Axes& axes_in,
            std::string_view norm) {
  const char* op = fn_name(fn, nd);
  if (!x.defined()) fail(ErrorKind::InvalidArgument, op, "the input is undefined");
  const DType dt = x.dtype();
  if (dt != DType::F32 && dt != DType::F64 && dt != DType::C64 && dt != DType::C128) {
    fail(ErrorKind::DTypeMismatch, op, "the input must be f32, f64, c64 or c128, got ", name(dt),
         "; convert it first");
  }
  (void)norm_scale(norm, false, 1.0, op);  // a bad norm string fails before any work
  const std::int64_t rank = x.rank();
  Axes axes = axes_in;
  if (nd && axes.empty()) {
    const std::int64_t count = s.empty() ? rank : static_cast<std::int64_t>(s.size());
    if (count > rank) {
      fail(ErrorKind::InvalidArgument, op, "s has ", count, " lengths but the input has rank ",
           rank, "; give at most one length per axis");
    }
    for (std::int64_t a = 0; a < count; ++a) axes.push_back(a);
  }
  axes = normalise(axes, rank, op);
  if (axes.empty()) fail(ErrorKind::InvalidArgument, op, "no axis to transform (rank 0 input?)");
  if (!s.empty() && s.size() != axes.size()) {
    fail(ErrorKind::InvalidArgument, op, "s has ", s.size(), " lengths for ", axes.size(),
         " axes; give one length per axis");
  }
  const bool r2c = fn == Fn::Rfft || fn == Fn::Ihfft;
  const bool c2r = fn == Fn::Irfft || fn == Fn::Hfft;
  if (r2c && is_complex(dt)) {
    fail(ErrorKind::DTypeMismatch, op, "takes a real (f32 or f64) input, got ", name(dt),
         "; use fft for complex signals");
  }
  T y = x;
  if (!r2c && !is_complex(dt)) y = convert(y, dt == DType::F32 ? DType::C64 : DType::C128);
  // Signal lengths and the extents the input is padded / truncated to.
  Shape low(static_cast<std::size_t>(rank), 0), high(static_cast<std::size_t>(rank), 0);
  double points = 1;
  std::int64_t n0 = 0;
  bool resize = false;
  // The transformed extents, checked as a result shape before any padding
  // allocates: a length no tensor can have is InvalidArgument in every tier.
  Shape lengths;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const std::int64_t e = const_extent(y, axes[i], op);
    const bool halved = c2r && i == 0;
    std::int64_t len = halved ? 2 * (e - 1) : e;
    if (!s.empty() && s[i] != -1) len = s[i];
    if (len < 1) {
      fail(ErrorKind::InvalidArgument, op, "invalid number of data points (", len, ") along axis ",
           axes[i], "; the signal length must be at least 1");
    }
    if (i == 0) n0 = len;
    lengths.push_back(r2c && i == 0 ? len / 2 + 1 : len);
    points *= static_cast<double>(len);
    const std::int64_t target = halved ? len / 2 + 1 : len;
    high[static_cast<std::size_t>(axes[i])] = target - e;
    resize = resize || target != e;
  }
  (void)shape_numel(lengths, op);
  if (resize) y = pad(y, low, high, Scalar(0.0));
  FftParams p;
  p.kind = r2c ? Kind::R2C : (c2r ? Kind::C2R : Kind::C2C);
  p.axes.assign(axes.begin(), axes.end());
  p.n = p.kind == Kind::C2C ? 0 : n0;
  p.sign = (fn == Fn::Fft || fn == Fn::Rfft || fn == Fn::Hfft) ? -1 : 1;
  const bool inverse = fn == Fn::Ifft || fn == Fn::Irfft || fn == Fn::Ihfft;
  p.scale = norm_scale(norm, inverse, points, op);
  return apply(p, y);
}

template <FftTensor T>
T one_axis(const T& x, Fn fn, std::optional<std::int64_t> n, std::int64_t axis,
           std::string_view norm) {
  Lengths s;
  if (n) {
    // -1 means "the input's extent" only in the s lists of the n-axis forms.
    if (*n < 1) {
      fail(ErrorKind::InvalidArgument, fn_name(fn, false), "invalid number of data points (", *n,
           "); n must be at least 1, or left out for the axis' extent");
    }
    s.push_back(*n);
  }
  return transform(x, fn, false, s, Axes{axis}, norm);
}

// Rolls every axis of `axes` (empty: all) by extent / 2 (forward) or by
// -(extent / 2) (inverse).
template <FftTensor T>
T shift(const T& x, const Axes& axes_in, bool inverse, const char* op) {
  if (!x.defined()) fail(ErrorKind::InvalidArgument, op, "the input is undefined");
  Axes axes = axes_in;
  if (axes.empty()) {
    for (std::int64_t a = 0; a < x.rank(); ++a) axes.push_back(a);
  }
  axes = normalise(axes, x.rank(), op);
  T y = x;
  for (const std::int64_t a : axes) {
    const std::int64_t e = const_extent(y, a, op);
    const std::int64_t k = inverse ? e - e / 2 : e / 2;  // roll right by k
    if (e == 0 || k % e == 0) continue;
    Shape start(static_cast<std::size_t>(y.rank()), 0), limit;
    for (std::int64_t d = 0; d < y.rank(); ++d) limit.push_back(const_extent(y, d, op));
    Shape s1 = start, l1 = limit, s2 = start, l2 = limit;
    s1[static_cast<std::size_t>(a)] = e - k;  // the last k entries come first
    l2[static_cast<std::size_t>(a)] = e - k;
    y = concatenate({slice(y, s1, l1), slice(y, s2, l2)}, a);
  }
  return y;
}

Tensor freq(std::int64_t n, double d, DType dtype, bool half, const char* op) {
  if (n < 0) fail(ErrorKind::InvalidArgument, op, "n must be >= 0, got ", n);
  if (dtype != DType::F32 && dtype != DType::F64) {
    fail(ErrorKind::DTypeMismatch, op, "dtype must be f32 or f64, got ", name(dtype));
  }
  const std::int64_t count = n == 0 ? 0 : (half ? n / 2 + 1 : n);
  const Shape shape{count};
  // A length above kMaxElements is InvalidArgument; one the heap cannot hold
  // is OutOfMemory (allocate_host_storage), before any element is written.
  (void)shape_numel(shape, op);
  Tensor out =
      Tensor::from_storage(allocate_host_storage(static_cast<std::size_t>(count) * itemsize(dtype)),
                           dtype, shape, col_major_strides(shape), 0);
  const auto value = [&](std::int64_t k) {
    const std::int64_t f = (half || k <= (n - 1) / 2) ? k : k - n;
    return static_cast<double>(f) / (d * static_cast<double>(n));
  };
  if (dtype == DType::F64) {
    auto* p = static_cast<double*>(out.raw_data());
    for (std::int64_t k = 0; k < count; ++k) p[k] = value(k);
  } else {
    auto* p = static_cast<float*>(out.raw_data());
    for (std::int64_t k = 0; k < count; ++k) p[k] = static_cast<float>(value(k));
  }
  return out;
}

}  // namespace
}  // namespace detail

using detail::Fn;

#define TF_ONE_AXIS(name, FN)                                                                   \
  template <FftTensor T>                                                                        \
  T name(const T& x, std::optional<std::int64_t> n, std::int64_t axis, std::string_view norm) { \
    return report_as(#name, [&] { return detail::one_axis(x, FN, n, axis, norm); });            \
  }                                                                                             \
  Tensor name(const Tensor& x, std::optional<std::int64_t> n, std::int64_t axis,                \
              std::string_view norm, Backend& backend) {                                        \
    return detail::on_backend(backend, #name, [&](EagerRuntime& rt) {                           \
      return name(rt.tensor(x), n, axis, norm).value();                                         \
    });                                                                                         \
  }                                                                                             \
  template EagerTensor name<EagerTensor>(const EagerTensor&, std::optional<std::int64_t>,       \
                                         std::int64_t, std::string_view);                       \
  template TracedTensor name<TracedTensor>(const TracedTensor&, std::optional<std::int64_t>,    \
                                           std::int64_t, std::string_view);
TF_ONE_AXIS(fft, Fn::Fft)
TF_ONE_AXIS(ifft, Fn::Ifft)
TF_ONE_AXIS(rfft, Fn::Rfft)
TF_ONE_AXIS(irfft, Fn::Irfft)
TF_ONE_AXIS(hfft, Fn::Hfft)
TF_ONE_AXIS(ihfft, Fn::Ihfft)
#undef TF_ONE_AXIS

#define TF_N_AXES(name, two, FN)                                                             \
  template <FftTensor T>                                                                     \
  T name(const T& x, const Lengths& s, const Axes& axes, std::string_view norm) {            \
    return report_as(#name, [&] { return detail::transform(x, FN, true, s, axes, norm); });  \
  }                                                                                          \
  Tensor name(const Tensor& x, const Lengths& s, const Axes& axes, std::string_view norm,    \
              Backend& backend) {                                                            \
    return detail::on_backend(backend, #name, [&](EagerRuntime& rt) {                        \
      return name(rt.tensor(x), s, axes, norm).value();                                      \
    });                                                                                      \
  }                                                                                          \
  template <FftTensor T>                                                                     \
  T two(const T& x, const Lengths& s, const Axes& axes, std::string_view norm) {             \
    return report_as(#two, [&] { return detail::transform(x, FN, true, s, axes, norm); });   \
  }                                                                                          \
  Tensor two(const Tensor& x, const Lengths& s, const Axes& axes, std::string_view norm,     \
             Backend& backend) {                                                             \
    return detail::on_backend(backend, #two, [&](EagerRuntime& rt) {                         \
      return two(rt.tensor(x), s, axes, norm).value();                                       \
    });                                                                                      \
  }                                                                                          \
  template EagerTensor name<EagerTensor>(const EagerTensor&, const Lengths&, const Axes&,    \
                                         std::string_view);                                  \
  template TracedTensor name<TracedTensor>(const TracedTensor&, const Lengths&, const Axes&, \
                                           std::string_view);                                \
  template EagerTensor two<EagerTensor>(const EagerTensor&, const Lengths&, const Axes&,     \
                                        std::string_view);                                   \
  template TracedTensor two<TracedTensor>(const TracedTensor&, const Lengths&, const Axes&,  \
                                          std::string_view);
TF_N_AXES(fftn, fft2, Fn::Fft)
TF_N_AXES(ifftn, ifft2, Fn::Ifft)
TF_N_AXES(rfftn, rfft2, Fn::Rfft)
TF_N_AXES(irfftn, irfft2, Fn::Irfft)
TF_N_AXES(hfftn, hfft2, Fn::Hfft)
TF_N_AXES(ihfftn, ihfft2, Fn::Ihfft)
#undef TF_N_AXES

Tensor fftfreq(std::int64_t n, double d, DType dtype) {
  return detail::freq(n, d, dtype, false, "fftfreq");
}
Tensor rfftfreq(std::int64_t n, double d, DType dtype) {
  return detail::freq(n, d, dtype, true, "rfftfreq");
}

template <FftTensor T>
T fftshift(const T& x, const Axes& axes) {
  return detail::shift(x, axes, false, "fftshift");
}
template <FftTensor T>
T ifftshift(const T& x, const Axes& axes) {
  return detail::shift(x, axes, true, "ifftshift");
}
Tensor fftshift(const Tensor& x, const Axes& axes, Backend& backend) {
  return detail::on_backend(backend, "fftshift",
                            [&](EagerRuntime& rt) { return fftshift(rt.tensor(x), axes).value(); });
}
Tensor ifftshift(const Tensor& x, const Axes& axes, Backend& backend) {
  return detail::on_backend(backend, "ifftshift", [&](EagerRuntime& rt) {
    return ifftshift(rt.tensor(x), axes).value();
  });
}
template EagerTensor fftshift<EagerTensor>(const EagerTensor&, const Axes&);
template TracedTensor fftshift<TracedTensor>(const TracedTensor&, const Axes&);
template EagerTensor ifftshift<EagerTensor>(const EagerTensor&, const Axes&);
template TracedTensor ifftshift<TracedTensor>(const TracedTensor&, const Axes&);

}  // namespace tenferro::fft
