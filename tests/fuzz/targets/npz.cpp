// .npz (zip) bytes: tenferro::io::from_npz_bytes on anything. A bad archive
// must be a tenferro::Error; an archive that loads must round-trip through
// to_npz_bytes (stored and deflated) to the same keys, dtypes, shapes and bytes.

#include <cstdint>
#include <map>
#include <span>
#include <string>

#include "fuzz_input.hpp"
#include "same_tensor.hpp"
#include "tenferro/io/npy.hpp"

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
      if (it == back.end() || !tenferro_fuzz::same_tensor(t, it->second)) {
        tenferro_fuzz::finding("member '" + k + "' of a loaded .npz does not round-trip");
      }
    }
  }
  return 0;
}
