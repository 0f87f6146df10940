// .npy bytes: tenferro::io::from_npy_bytes on anything. A bad file must be a
// tenferro::Error; a file that loads must round-trip through to_npy_bytes to
// the same dtype, shape and bytes.

#include <cstdint>
#include <span>

#include "fuzz_input.hpp"
#include "same_tensor.hpp"
#include "tenferro/io/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  tenferro::Tensor t;
  try {
    t = tenferro::io::from_npy_bytes(bytes, "fuzz input");
  } catch (const tenferro::Error&) {
    return 0;  // the expected outcome for a bad file
  }
  const tenferro::Tensor back = tenferro::io::from_npy_bytes(tenferro::io::to_npy_bytes(t));
  if (!tenferro_fuzz::same_tensor(t, back))
    tenferro_fuzz::finding("a loaded .npy does not round-trip");
  return 0;
}
