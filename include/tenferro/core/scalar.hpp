#pragma once
// A dtype-tagged host scalar for fill values, clamp bounds and pad values.

#include <complex>
#include <cstdint>
#include <type_traits>

#include "tenferro/core/dtype.hpp"

namespace tenferro {

class Scalar {
 public:
  Scalar() = default;
  /// double -> int64 without undefined behaviour: truncation toward zero,
  /// saturated at the int64 range; NaN gives 0.
  static constexpr std::int64_t to_int64(double v) {
    if (v != v) return 0;
    if (v >= 9223372036854775807.0) return INT64_MAX;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    return static_cast<std::int64_t>(v);
  }
  Scalar(bool v) : dtype_(DType::Bool), re_(v ? 1.0 : 0.0), int_(v) {}                  // NOLINT
  Scalar(std::int32_t v) : dtype_(DType::I32), re_(static_cast<double>(v)), int_(v) {}  // NOLINT
  Scalar(std::int64_t v) : dtype_(DType::I64), re_(static_cast<double>(v)), int_(v) {}  // NOLINT
  Scalar(float v) : dtype_(DType::F32), re_(v), int_(to_int64(v)) {}                    // NOLINT
  Scalar(double v) : dtype_(DType::F64), re_(v), int_(to_int64(v)) {}                   // NOLINT
  Scalar(c64_t v)                                                                       // NOLINT
      : dtype_(DType::C64), re_(v.real()), im_(v.imag()), int_(to_int64(v.real())) {}
  Scalar(c128_t v)  // NOLINT
      : dtype_(DType::C128), re_(v.real()), im_(v.imag()), int_(to_int64(v.real())) {}

  /// The dtype the value was given in.
  DType dtype() const { return dtype_; }
  double real() const { return re_; }
  double imag() const { return im_; }
  std::int64_t to_int() const { return int_; }
  c128_t to_complex() const { return {re_, im_}; }

  /// The value as T (lossy conversions truncate: complex -> real drops imag).
  template <class T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) {
      return re_ != 0.0 || im_ != 0.0;
    } else if constexpr (std::is_integral_v<T>) {
      // Floating values convert through the saturating int64 conversion
      // (then C++'s integral conversion), never by an undefined cast.
      return is_integral(dtype_) || dtype_ == DType::Bool ? static_cast<T>(int_)
                                                          : static_cast<T>(to_int64(re_));
    } else if constexpr (std::is_floating_point_v<T>) {
      return static_cast<T>(re_);
    } else {
      using R = typename T::value_type;
      return T(static_cast<R>(re_), static_cast<R>(im_));
    }
  }

 private:
  DType dtype_ = DType::F64;
  double re_ = 0.0;
  double im_ = 0.0;
  std::int64_t int_ = 0;
};

}  // namespace tenferro
