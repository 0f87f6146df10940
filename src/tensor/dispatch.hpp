#pragma once
// Per-dtype dispatch: one switch, generated once, instead of an if-ladder in
// every kernel. `f` receives a value of type TypeTag<T>.

#include "tenferro/core/dtype.hpp"
#include "tenferro/core/error.hpp"

namespace tenferro::detail {

template <class T>
struct TypeTag {
  using type = T;
};

template <class F>
decltype(auto) dispatch_dtype(DType t, F&& f) {
  switch (t) {
    case DType::Bool:
      return f(TypeTag<bool>{});
    case DType::I32:
      return f(TypeTag<std::int32_t>{});
    case DType::I64:
      return f(TypeTag<std::int64_t>{});
    case DType::F32:
      return f(TypeTag<float>{});
    case DType::F64:
      return f(TypeTag<double>{});
    case DType::C64:
      return f(TypeTag<c64_t>{});
    case DType::C128:
      return f(TypeTag<c128_t>{});
  }
  throw Error(ErrorKind::Internal, "dispatch", "unknown dtype");
}

template <class T>
inline constexpr bool is_complex_v = false;
template <class R>
inline constexpr bool is_complex_v<std::complex<R>> = true;

/// The real type underlying T (float for c64_t, T otherwise).
template <class T>
struct real_of {
  using type = T;
};
template <class R>
struct real_of<std::complex<R>> {
  using type = R;
};
template <class T>
using real_of_t = typename real_of<T>::type;

/// Value conversion used by copy/convert/cast: complex -> real keeps the real
/// part, anything -> bool is (x != 0).
template <class To, class From>
inline To convert_value(const From& v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From{};
  } else if constexpr (is_complex_v<To>) {
    using R = typename To::value_type;
    if constexpr (is_complex_v<From>) {
      return To(static_cast<R>(v.real()), static_cast<R>(v.imag()));
    } else {
      return To(static_cast<R>(v), R(0));
    }
  } else if constexpr (is_complex_v<From>) {
    return static_cast<To>(v.real());
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace tenferro::detail
