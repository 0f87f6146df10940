// The array forms of vector_math.hpp. On x86-64 with GCC each is also built
// for AVX2 and AVX-512 and picked at load time (ifunc): the baseline SSE2 loop
// handles two doubles at a time, which is no faster than glibc's scalar exp,
// and AVX-512 halves the AVX2 time again (tanh of 2^20 f64 values: 3.7 ms
// with AVX2, 1.8 ms with AVX-512, measured on an AMD EPYC). Results are
// identical across the copies: the element code uses only correctly rounded
// operations and this file is built with -ffp-contract=off (src/CMakeLists.txt),
// so no clone contracts a * b + c into FMA.
//
// Also here: the choice of SLEEF table (sleef_kernels.hpp).

#include "cpu/vector_math.hpp"

#include <cstdlib>
#include <cstring>

#include "cpu/sleef_kernels.hpp"
#include "cpu/target_clones.hpp"

namespace tenferro::cpu::vmath {

namespace {

template <class T, class F>
inline void map_array(const T* x, T* y, std::int64_t n, F f) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

}  // namespace

TENFERRO_TARGET_CLONES void vexp(const double* x, double* y, std::int64_t n) {
  map_array(x, y, n, [](double v) { return detail::exp1(v); });
}
TENFERRO_TARGET_CLONES void vexp(const float* x, float* y, std::int64_t n) {
  map_array(x, y, n, [](float v) { return detail::exp1(v); });
}
TENFERRO_TARGET_CLONES void vtanh(const double* x, double* y, std::int64_t n) {
  map_array(x, y, n, [](double v) { return detail::tanh1(v); });
}
TENFERRO_TARGET_CLONES void vtanh(const float* x, float* y, std::int64_t n) {
  map_array(x, y, n, [](float v) { return detail::tanh1(v); });
}
TENFERRO_TARGET_CLONES void vsigmoid(const double* x, double* y, std::int64_t n) {
  map_array(x, y, n, [](double v) { return detail::sigmoid1(v); });
}
TENFERRO_TARGET_CLONES void vsigmoid(const float* x, float* y, std::int64_t n) {
  map_array(x, y, n, [](float v) { return detail::sigmoid1(v); });
}

bool sleef_isa_supported(SleefIsa isa) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  switch (isa) {
    case SleefIsa::Avx2:
      return sleef_table_avx2() != nullptr && __builtin_cpu_supports("avx2") &&
             __builtin_cpu_supports("fma");
    case SleefIsa::Avx512:
      return sleef_table_avx512() != nullptr && __builtin_cpu_supports("avx512f");
  }
#else
  (void)isa;
#endif
  return false;
}

const SleefTable* active_sleef_table() {
  static const SleefTable* const table = [] {
    const char* cap = std::getenv("TENFERRO_VMATH_ISA");
    const bool baseline = cap != nullptr && std::strcmp(cap, "baseline") == 0;
    const bool avx2_cap = cap != nullptr && std::strcmp(cap, "avx2") == 0;
    if (baseline) return static_cast<const SleefTable*>(nullptr);
    if (!avx2_cap && sleef_isa_supported(SleefIsa::Avx512)) return sleef_table_avx512();
    if (sleef_isa_supported(SleefIsa::Avx2)) return sleef_table_avx2();
    return static_cast<const SleefTable*>(nullptr);
  }();
  return table;
}

}  // namespace tenferro::cpu::vmath
