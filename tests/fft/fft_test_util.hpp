#pragma once
// Test signals shared by the FFT tests.

#include <cmath>
#include <complex>
#include <cstdint>
#include <vector>

namespace fft_test {

/// A complex signal with no symmetry: sin(1.7 i + 0.3) + i cos(0.9 i).
inline std::vector<std::complex<double>> signal(std::int64_t count) {
  std::vector<std::complex<double>> v(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) {
    v[static_cast<std::size_t>(i)] = {std::sin(1.7 * i + 0.3), std::cos(0.9 * i)};
  }
  return v;
}

/// A real signal with a trend: sin(1.3 i + 0.2) + 0.1 i.
inline std::vector<double> real_signal(std::int64_t count) {
  std::vector<double> v(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i)
    v[static_cast<std::size_t>(i)] = std::sin(1.3 * i + 0.2) + 0.1 * i;
  return v;
}

}  // namespace fft_test
