#pragma once
// Reading structured choices out of a fuzzer's bytes: each call consumes
// bytes from the front and returns a default once they run out, so every
// input decodes to something and a mutation changes only part of it.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>

namespace tenferro_fuzz {

class FuzzInput {
 public:
  FuzzInput(const std::uint8_t* data, std::size_t size) : bytes_(data, size) {}

  bool empty() const { return at_ >= bytes_.size(); }
  std::uint8_t byte() { return empty() ? 0 : bytes_[at_++]; }
  /// A value in [lo, hi] from one byte.
  int range(int lo, int hi) { return lo + byte() % (hi - lo + 1); }
  bool flag() { return (byte() & 1u) != 0; }
  std::int64_t i64() {
    std::uint64_t v = 0;
    for (int k = 0; k < 8; ++k) v |= static_cast<std::uint64_t>(byte()) << (8 * k);
    return static_cast<std::int64_t>(v);
  }
  /// The bytes not consumed yet.
  std::span<const std::uint8_t> rest() const {
    return empty() ? std::span<const std::uint8_t>() : bytes_.subspan(at_);
  }

 private:
  std::span<const std::uint8_t> bytes_;
  std::size_t at_ = 0;
};

/// A finding the sanitizers cannot see (a wrong value, an exception of a
/// type the parser must not throw): print it and abort, so both libFuzzer
/// and the standalone driver record the input.
[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz: FINDING: %s\n", what.c_str());
  std::abort();
}

}  // namespace tenferro_fuzz
