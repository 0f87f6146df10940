// .npy bytes: tenferro::io::from_npy_bytes on anything. A bad file must be a
// tenferro::Error; a file that loads must round-trip through to_npy_bytes to
// the same dtype, shape and bytes.

#include <cstdint>
#include <cstring>
#include <span>

#include "fuzz_input.hpp"
#include "tenferro/io/npy.hpp"

namespace {

bool same_tensor(const tenferro::Tensor& a, const tenferro::Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  const tenferro::Tensor ca = a.contiguous(), cb = b.contiguous();
  const auto n = static_cast<std::size_t>(ca.numel()) * tenferro::itemsize(ca.dtype());
  return n == 0 || std::memcmp(ca.raw_data(), cb.raw_data(), n) == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  tenferro::Tensor t;
  try {
    t = tenferro::io::from_npy_bytes(bytes, "fuzz input");
  } catch (const tenferro::Error&) {
    return 0;  // the expected outcome for a bad file
  }
  const tenferro::Tensor back = tenferro::io::from_npy_bytes(tenferro::io::to_npy_bytes(t));
  if (!same_tensor(t, back)) tenferro_fuzz::finding("a loaded .npy does not round-trip");
  return 0;
}
