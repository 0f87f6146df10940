#pragma once
// The backends the conformance suite (tests/conformance/*_test.cpp) runs on.
// Data moves in and out only explicitly (from_host, to_host: Backend::write
// and read), so the suite runs on a backend with memory of its own.
// A new backend runs the whole suite by adding one line to
// conformance_backends() in backends.cpp. A partial backend (one with only
// some kernels) runs the cases its kernels cover: a case may end in
// Unsupported only when the backend itself reports the kernel missing, and
// every other outcome is checked as on the CPU.

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "tenferro/tenferro.hpp"

namespace tftest {

struct ConformanceBackend {
  std::string name;
  /// A fresh backend.
  std::function<std::shared_ptr<tenferro::Backend>()> make;
  /// Whether `e` says the backend lacks a kernel (never for a complete one).
  std::function<bool(const tenferro::Error&)> lacks_kernel;
};

/// gtest prints a parameter with this (its name, not its bytes).
inline void PrintTo(const ConformanceBackend& b, std::ostream* os) {
  *os << b.name;
}

const std::vector<ConformanceBackend>& conformance_backends();

/// The test name suffix of a backend ("cpu", "reference").
std::string backend_name(const testing::TestParamInfo<ConformanceBackend>& info);

/// A gradient case of the suite: a function of `inputs` tensors of `shape`,
/// drawn in [lo, hi) (real part; imaginary part in [-0.2, 0.2) when complex).
struct GradCase {
  const char* name;
  std::function<tenferro::EagerTensor(std::span<const tenferro::EagerTensor>)> f;
  int inputs = 1;
  bool complex_ok = true;
  double lo = 0.3, hi = 1.2;  // real input range (a safe domain)
  tenferro::Shape shape{3, 2};
};

/// A host input of case `c` in dtype `dt` (f64 or c128), drawn from `gen`.
tenferro::Tensor random_input(const GradCase& c, tenferro::DType dt, tenferro::Generator& gen);

/// Cases a backend ran and skipped for a missing kernel.
struct CaseCount {
  int ran = 0;
  int lacked_kernel = 0;
};

/// Runs `f()`; counts it as run, or as skipped when the backend lacks a
/// kernel it needs. Any other error fails the test, naming `what`.
template <class F>
void run_case(const ConformanceBackend& b, const std::string& what, CaseCount& count, F&& f) {
  try {
    f();
    ++count.ran;
  } catch (const tenferro::Error& e) {
    if (b.lacks_kernel(e)) {
      ++count.lacked_kernel;
    } else {
      ADD_FAILURE() << b.name << ": " << what << " threw " << e.what();
    }
  }
}

}  // namespace tftest
