#pragma once
// An explicit, seedable random generator (no global random state).

#include <cstdint>
#include <memory>

namespace tenferro {

class Generator {
 public:
  explicit Generator(std::uint64_t seed = 0);
  Generator(const Generator& other);
  Generator& operator=(const Generator& other);
  Generator(Generator&&) noexcept;
  Generator& operator=(Generator&&) noexcept;
  ~Generator();

  std::uint64_t seed() const { return seed_; }
  /// Restarts the stream from `seed`.
  void reseed(std::uint64_t seed);
  /// Uniform on [0, 1).
  double uniform();
  /// Standard normal.
  double normal();
  /// 64 raw random bits.
  std::uint64_t next_u64();

 private:
  struct Engine;
  std::uint64_t seed_;
  std::unique_ptr<Engine> engine_;
};

}  // namespace tenferro
