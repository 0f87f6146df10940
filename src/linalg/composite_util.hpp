#pragma once
// Argument checks shared by the composite ops (templates over both AD tiers).
// Private to src/linalg/.

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "tenferro/linalg/triangular.hpp"

namespace tenferro::linalg::detail {

/// The constant extent of `axis` (nullopt when symbolic).
template <LinalgTensor T>
std::optional<std::int64_t> extent(const T& x, std::int64_t axis) {
  if constexpr (std::same_as<T, EagerTensor>) {
    return x.shape()[static_cast<std::size_t>(axis)];
  } else {
    return x.shape()[static_cast<std::size_t>(axis)].try_constant();
  }
}

/// The extent of `axis` as a SymDim (constant in the eager tier).
template <LinalgTensor T>
SymDim sym_extent(const T& x, std::int64_t axis) {
  if constexpr (std::same_as<T, EagerTensor>) {
    return SymDim(x.shape()[static_cast<std::size_t>(axis)]);
  } else {
    return x.shape()[static_cast<std::size_t>(axis)];
  }
}

template <LinalgTensor T>
std::string shape_str(const T& x) {
  if constexpr (std::same_as<T, EagerTensor>) {
    return to_string(to_sym_shape(x.shape().span()));
  } else {
    return to_string(x.shape());
  }
}

/// f32, f64, c64 or c128, else DTypeMismatch naming the op.
template <LinalgTensor T>
void require_floating_tensor(const T& x, const char* op) {
  if (!x.defined()) fail(ErrorKind::InvalidArgument, op, "the input is undefined");
  const DType d = x.dtype();
  if (d != DType::F32 && d != DType::F64 && d != DType::C64 && d != DType::C128) {
    fail(ErrorKind::DTypeMismatch, op, "the input must be f32, f64, c64 or c128, got ", name(d),
         "; convert it first");
  }
}

/// Axes in [-rank, rank) made non-negative (AxisOutOfBounds otherwise;
/// repeated: DuplicateAxis). Rank 0 accepts 0 and -1 (no axis), like
/// PyTorch. Empty `dims` means every axis when `empty_is_all`.
inline Axes normalise_axes(const char* op, const Axes& dims, std::int64_t rank, bool empty_is_all) {
  Axes out;
  if (dims.empty() && empty_is_all) {
    for (std::int64_t a = 0; a < rank; ++a) out.push_back(a);
    return out;
  }
  for (std::int64_t d : dims) {
    if (rank == 0 && (d == 0 || d == -1)) continue;
    if (d < -rank || d >= rank) {
      fail(ErrorKind::AxisOutOfBounds, op, "axis ", d, " is out of range for rank ", rank,
           " (valid: ", -rank, " to ", rank - 1, ")");
    }
    const std::int64_t a = d < 0 ? d + rank : d;
    if (std::find(out.begin(), out.end(), a) != out.end()) {
      fail(ErrorKind::DuplicateAxis, op, "axis ", d, " is given twice");
    }
    out.push_back(a);
  }
  return out;
}

/// {row axis, column axis} of a matrix norm: two distinct axes of a rank >= 2 input.
template <LinalgTensor T>
std::pair<std::int64_t, std::int64_t> matrix_axes(const char* op, const T& a, const Axes& dims) {
  if (a.rank() < 2) {
    fail(ErrorKind::RankMismatch, op, "the input must have at least 2 axes (a matrix), got ",
         shape_str(a));
  }
  if (dims.size() != 2) {
    fail(ErrorKind::InvalidArgument, op, "dims must name 2 axes {rows, columns}, got ",
         dims.size());
  }
  const Axes ax = normalise_axes(op, dims, a.rank(), false);
  return {ax[0], ax[1]};
}

/// Whether reducing `axes` reduces an empty set (some constant extent is 0).
template <LinalgTensor T>
bool reduces_empty(const T& x, const Axes& axes) {
  for (std::int64_t a : axes) {
    const auto e = extent(x, a);
    if (e && *e == 0) return true;
  }
  return false;
}

/// Every extent of x, constant (Unsupported naming `op` when one is symbolic).
template <LinalgTensor T>
Shape constant_shape(const T& x, const char* op) {
  Shape s;
  for (std::int64_t a = 0; a < x.rank(); ++a) {
    const auto e = extent(x, a);
    if (!e) {
      fail(ErrorKind::Unsupported, op, "needs constant extents, got ", shape_str(x),
           "; bind the symbolic extents first");
    }
    s.push_back(*e);
  }
  return s;
}

}  // namespace tenferro::linalg::detail
