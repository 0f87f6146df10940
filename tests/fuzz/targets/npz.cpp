// .npz (zip) bytes: tenferro::io::from_npz_bytes on anything. A bad archive
// must be a tenferro::Error; an archive that loads must round-trip through
// to_npz_bytes (stored and deflated) to the same keys, dtypes, shapes and bytes.

#include <cstdint>
#include <cstring>
#include <map>
#include <span>
#include <string>

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
  std::map<std::string, tenferro::Tensor> arrays;
  try {
    arrays = tenferro::io::from_npz_bytes(bytes, "fuzz input");
  } catch (const tenferro::Error&) {
    return 0;  // the expected outcome for a bad archive
  }
  // Member names save_npz refuses (an archive may hold them): no round trip.
  for (const auto& [k, t] : arrays) {
    if (k.empty() || k.find('/') != std::string::npos) return 0;
  }
  for (bool compressed : {false, true}) {
    const auto back = tenferro::io::from_npz_bytes(tenferro::io::to_npz_bytes(arrays, compressed));
    if (back.size() != arrays.size()) tenferro_fuzz::finding("a loaded .npz loses members");
    for (const auto& [k, t] : arrays) {
      const auto it = back.find(k);
      if (it == back.end() || !same_tensor(t, it->second)) {
        tenferro_fuzz::finding("member '" + k + "' of a loaded .npz does not round-trip");
      }
    }
  }
  return 0;
}
