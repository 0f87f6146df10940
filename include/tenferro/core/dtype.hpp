#pragma once
// Element types and the promotion lattice.

#include <complex>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tenferro {

using c64_t = std::complex<float>;
using c128_t = std::complex<double>;

enum class DType : std::uint8_t { Bool, I32, I64, F32, F64, C64, C128 };

inline constexpr DType bool_ = DType::Bool;
inline constexpr DType i32 = DType::I32;
inline constexpr DType i64 = DType::I64;
inline constexpr DType f32 = DType::F32;
inline constexpr DType f64 = DType::F64;
inline constexpr DType c64 = DType::C64;
inline constexpr DType c128 = DType::C128;

inline constexpr DType kAllDTypes[] = {DType::Bool, DType::I32, DType::I64, DType::F32,
                                       DType::F64,  DType::C64, DType::C128};

/// Bytes per element.
constexpr std::size_t itemsize(DType t) {
  switch (t) {
    case DType::Bool:
      return 1;
    case DType::I32:
      return 4;
    case DType::I64:
      return 8;
    case DType::F32:
      return 4;
    case DType::F64:
      return 8;
    case DType::C64:
      return 8;
    case DType::C128:
      return 16;
  }
  return 0;
}

/// Short lowercase name: "bool", "i32", "i64", "f32", "f64", "c64", "c128".
std::string_view name(DType t);

constexpr bool is_complex(DType t) {
  return t == DType::C64 || t == DType::C128;
}
constexpr bool is_floating(DType t) {
  return t == DType::F32 || t == DType::F64;
}
/// Floating or complex: the dtypes that carry derivatives.
constexpr bool is_inexact(DType t) {
  return is_floating(t) || is_complex(t);
}
constexpr bool is_integral(DType t) {
  return t == DType::I32 || t == DType::I64;
}
constexpr bool is_bool(DType t) {
  return t == DType::Bool;
}

/// Real counterpart of a complex dtype (c64 -> f32, c128 -> f64); identity otherwise.
constexpr DType real_dtype(DType t) {
  return t == DType::C64 ? DType::F32 : t == DType::C128 ? DType::F64 : t;
}
/// Complex counterpart (f32 -> c64, everything else non-complex -> c128).
constexpr DType complex_dtype(DType t) {
  return (t == DType::F32 || t == DType::C64) ? DType::C64 : DType::C128;
}
/// Floating counterpart for ops whose result is inexact (ints and bool -> f64).
constexpr DType inexact_dtype(DType t) {
  return is_inexact(t) ? t : DType::F64;
}

/// The promotion lattice: bool < i32 < i64 < f32 < f64, and real < complex.
/// - bool with anything gives the other type;
/// - two integers give the wider integer;
/// - an integer with a float or complex gives that float or complex type;
/// - floats and complexes combine to the widest precision, complex if either is
///   complex: f32+f64 -> f64, f32+c64 -> c64, f64+c64 -> c128, f32+c128 -> c128.
DType promote_types(DType a, DType b);

/// The dtype a host scalar takes when mixed with a tensor of `tensor` dtype,
/// like a Python number in PyTorch: a real scalar takes a floating or complex
/// tensor's dtype, a complex scalar the tensor's complex counterpart, an
/// integer or bool scalar an integer tensor's dtype; otherwise its own dtype
/// (so that promotion then applies, e.g. 0.5 with an i64 tensor gives f64).
DType scalar_operand_dtype(DType tensor, DType scalar);

/// True when every value of `from` is exactly representable in `to` under the
/// lattice above (so `convert` accepts it): e.g. i32->f64, f32->c64, bool->anything.
bool is_lossless_conversion(DType from, DType to);

template <class T>
struct dtype_of;
template <>
struct dtype_of<bool> {
  static constexpr DType value = DType::Bool;
};
template <>
struct dtype_of<std::int32_t> {
  static constexpr DType value = DType::I32;
};
template <>
struct dtype_of<std::int64_t> {
  static constexpr DType value = DType::I64;
};
template <>
struct dtype_of<float> {
  static constexpr DType value = DType::F32;
};
template <>
struct dtype_of<double> {
  static constexpr DType value = DType::F64;
};
template <>
struct dtype_of<c64_t> {
  static constexpr DType value = DType::C64;
};
template <>
struct dtype_of<c128_t> {
  static constexpr DType value = DType::C128;
};
template <class T>
inline constexpr DType dtype_of_v = dtype_of<T>::value;

}  // namespace tenferro
