#pragma once
// Bit-exact tensor equality for the round-trip fuzz targets (npy, npz).

#include <cstddef>
#include <cstring>

#include "tenferro/tensor/tensor.hpp"

namespace tenferro_fuzz {

/// Same dtype, shape and bytes (compared compactly; NaN payloads included).
inline bool same_tensor(const tenferro::Tensor& a, const tenferro::Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  const tenferro::Tensor ca = a.contiguous(), cb = b.contiguous();
  const auto n = static_cast<std::size_t>(ca.numel()) * tenferro::itemsize(ca.dtype());
  return n == 0 || std::memcmp(ca.raw_data(), cb.raw_data(), n) == 0;
}

}  // namespace tenferro_fuzz
