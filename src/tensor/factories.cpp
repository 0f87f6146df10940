#include <cmath>

#include "tenferro/tensor/tensor.hpp"
#include "tensor/dispatch.hpp"

namespace tenferro {

namespace {
Tensor owned(std::span<const std::int64_t> shape, DType dtype, const char* op) {
  const std::int64_t n = shape_numel(shape, op);
  return Tensor::from_storage(allocate_host_storage(static_cast<std::size_t>(n) * itemsize(dtype)),
                              dtype, Shape(shape), col_major_strides(shape), 0);
}

// Fills a compact tensor element by element from gen(i) -> c128_t.
template <class Gen>
void fill_with(Tensor& t, Gen&& gen) {
  detail::dispatch_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = static_cast<T*>(t.raw_data());
    const std::int64_t n = t.numel();
    for (std::int64_t i = 0; i < n; ++i) p[i] = detail::convert_value<T>(gen(i));
  });
}
}  // namespace

namespace {
Tensor full_named(std::span<const std::int64_t> shape, Scalar value, DType dtype, const char* op) {
  // A complex value in a real tensor would lose its imaginary part silently:
  // refuse it as convert() refuses lossy conversions (cast first to drop it).
  if (!is_complex(dtype) && value.imag() != 0.0) {
    fail(ErrorKind::DTypeMismatch, op, "the value ", value.real(), "+", value.imag(),
         "i is complex but the dtype ", name(dtype),
         " is real; use a complex dtype or pass the real part");
  }
  Tensor t = owned(shape, dtype, op);
  detail::dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = value.to<T>();
    T* p = static_cast<T*>(t.raw_data());
    std::fill(p, p + t.numel(), v);
  });
  return t;
}
}  // namespace

Tensor empty(std::span<const std::int64_t> shape, DType dtype) {
  return owned(shape, dtype, "empty");
}

Tensor zeros(std::span<const std::int64_t> shape, DType dtype) {
  return full_named(shape, 0.0, dtype, "zeros");
}

Tensor ones(std::span<const std::int64_t> shape, DType dtype) {
  return full_named(shape, 1.0, dtype, "ones");
}

Tensor full(std::span<const std::int64_t> shape, Scalar value, DType dtype) {
  return full_named(shape, value, dtype, "full");
}

Tensor full(std::span<const std::int64_t> shape, Scalar value) {
  return full(shape, value, value.dtype());
}

Tensor eye(std::int64_t n, std::int64_t m, DType dtype) {
  if (m < 0) m = n;
  if (n < 0) fail(ErrorKind::InvalidArgument, "eye", "n must be >= 0, got ", n);
  const std::int64_t shape[2] = {n, m};
  Tensor t = full_named(shape, 0.0, dtype, "eye");
  detail::dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = static_cast<T*>(t.raw_data());
    for (std::int64_t i = 0; i < std::min(n, m); ++i) p[i + i * n] = detail::convert_value<T>(1);
  });
  return t;
}

Tensor arange(double start, double stop, double step, DType dtype) {
  if (step == 0.0 || !std::isfinite(step)) {
    fail(ErrorKind::InvalidArgument, "arange", "step must be finite and non-zero, got ", step);
  }
  if (!std::isfinite(start) || !std::isfinite(stop)) {
    fail(ErrorKind::InvalidArgument, "arange", "start and stop must be finite");
  }
  const double count = std::ceil((stop - start) / step);
  if (!(count < static_cast<double>(kMaxElements))) {
    fail(ErrorKind::InvalidArgument, "arange", "[", start, ", ", stop, ") in steps of ", step,
         " has more than 2^59 elements (the most a tensor may have)");
  }
  const std::int64_t n = count > 0 ? static_cast<std::int64_t>(count) : 0;
  const std::int64_t shape[1] = {n};
  Tensor t = owned(shape, dtype, "arange");
  fill_with(t, [&](std::int64_t i) { return start + static_cast<double>(i) * step; });
  return t;
}

Tensor arange(std::int64_t n, DType dtype) {
  if (n < 0) fail(ErrorKind::InvalidArgument, "arange", "n must be >= 0, got ", n);
  return arange(0.0, static_cast<double>(n), 1.0, dtype);
}

Tensor linspace(double start, double stop, std::int64_t num, DType dtype) {
  if (num < 0) fail(ErrorKind::InvalidArgument, "linspace", "num must be >= 0, got ", num);
  const std::int64_t shape[1] = {num};
  Tensor t = owned(shape, dtype, "linspace");
  const double step = num > 1 ? (stop - start) / static_cast<double>(num - 1) : 0.0;
  fill_with(t, [&](std::int64_t i) {
    return i == num - 1 && num > 1 ? stop : start + static_cast<double>(i) * step;
  });
  return t;
}

Tensor rand(std::span<const std::int64_t> shape, DType dtype, Generator& gen) {
  if (!is_inexact(dtype)) {
    fail(ErrorKind::DTypeMismatch, "rand", "rand needs a floating or complex dtype, got ",
         name(dtype));
  }
  Tensor t = owned(shape, dtype, "rand");
  fill_with(t, [&](std::int64_t) {
    const double re = gen.uniform();
    return is_complex(dtype) ? c128_t(re, gen.uniform()) : c128_t(re, 0.0);
  });
  return t;
}

Tensor randn(std::span<const std::int64_t> shape, DType dtype, Generator& gen) {
  if (!is_inexact(dtype)) {
    fail(ErrorKind::DTypeMismatch, "randn", "randn needs a floating or complex dtype, got ",
         name(dtype));
  }
  Tensor t = owned(shape, dtype, "randn");
  const double half = std::sqrt(0.5);
  fill_with(t, [&](std::int64_t) {
    if (!is_complex(dtype)) return c128_t(gen.normal(), 0.0);
    const double re = gen.normal() * half;
    return c128_t(re, gen.normal() * half);
  });
  return t;
}

Tensor complex(const Tensor& re, const Tensor& im) {
  if (!re.defined() || !im.defined()) {
    fail(ErrorKind::InvalidArgument, "complex", "inputs must be defined tensors");
  }
  if (re.dtype() != im.dtype() || !is_floating(re.dtype())) {
    fail(ErrorKind::DTypeMismatch, "complex",
         "real and imaginary parts must share one floating dtype, got ", name(re.dtype()), " and ",
         name(im.dtype()));
  }
  if (!(re.shape() == im.shape())) {
    fail(ErrorKind::ShapeMismatch, "complex", "real part has shape ", shape_to_string(re.shape()),
         " but imaginary part has shape ", shape_to_string(im.shape()));
  }
  Tensor t = owned(re.shape(), complex_dtype(re.dtype()), "complex");
  Tensor::copy_into(re, t.real());
  Tensor::copy_into(im, t.imag());
  return t;
}

}  // namespace tenferro
