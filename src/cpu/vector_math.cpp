// The array forms of vector_math.hpp, built three times on x86-64 with GCC:
// for AVX-512, for AVX2 with FMA, and for the baseline, one picked once from
// what the CPU reports (active_array_kernels). x86-64's baseline has no FMA
// instruction, so that build runs one element at a time through libm's fma
// (about 35 ns per element; only CPUs without AVX2 and FMA take it); AVX-512
// roughly halves the AVX2 time (tanh of 2^20 f64 values on an Intel Xeon:
// 2.9 ms with AVX2, 1.5 ms with AVX-512, from 2.4 ms before the polynomials
// became FMAs). Results are identical across the builds: the element code
// uses only correctly rounded operations and explicit std::fma, and this file
// is built with -ffp-contract=off (src/CMakeLists.txt), so no build contracts
// anything else. The builds use the target attribute rather than
// target_clones: a clone list cannot ask for AVX2 and FMA together, and an
// explicit choice needs no ifunc (which ThreadSanitizer cannot load).
//
// Also here: the choice of SLEEF table (sleef_kernels.hpp).

#include "cpu/vector_math.hpp"

#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "cpu/sleef_kernels.hpp"

namespace tenferro::cpu::vmath {

namespace {

template <class T, T (*F)(T)>
void map_baseline(const T* x, T* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = F(x[i]);
}

constexpr ArrayKernels kBaseline{
    map_baseline<double, detail::exp1<double>>,     map_baseline<float, detail::exp1<float>>,
    map_baseline<double, detail::tanh1<double>>,    map_baseline<float, detail::tanh1<float>>,
    map_baseline<double, detail::sigmoid1<double>>, map_baseline<float, detail::sigmoid1<float>>};

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TENFERRO_VMATH_X86_BUILDS 1

template <class T, T (*F)(T)>
__attribute__((target("avx2,fma"))) void map_avx2(const T* x, T* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = F(x[i]);
}

template <class T, T (*F)(T)>
__attribute__((target("avx512f,avx2,fma"))) void map_avx512(const T* x, T* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = F(x[i]);
}

constexpr ArrayKernels kAvx2{
    map_avx2<double, detail::exp1<double>>,     map_avx2<float, detail::exp1<float>>,
    map_avx2<double, detail::tanh1<double>>,    map_avx2<float, detail::tanh1<float>>,
    map_avx2<double, detail::sigmoid1<double>>, map_avx2<float, detail::sigmoid1<float>>};

constexpr ArrayKernels kAvx512{
    map_avx512<double, detail::exp1<double>>,     map_avx512<float, detail::exp1<float>>,
    map_avx512<double, detail::tanh1<double>>,    map_avx512<float, detail::tanh1<float>>,
    map_avx512<double, detail::sigmoid1<double>>, map_avx512<float, detail::sigmoid1<float>>};
#endif

}  // namespace

const ArrayKernels* array_kernels(VmathIsa isa) {
#ifdef TENFERRO_VMATH_X86_BUILDS
  __builtin_cpu_init();
  const bool fma = __builtin_cpu_supports("fma");
  switch (isa) {
    case VmathIsa::Baseline:
      return &kBaseline;
    case VmathIsa::Avx2Fma:
      return fma && __builtin_cpu_supports("avx2") ? &kAvx2 : nullptr;
    case VmathIsa::Avx512:
      return fma && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("avx512f") ? &kAvx512
                                                                                        : nullptr;
  }
  return nullptr;
#else
  return isa == VmathIsa::Baseline ? &kBaseline : nullptr;
#endif
}

namespace {

/// TENFERRO_VMATH_ISA: "baseline" or "avx2" cap the choice; anything else
/// (or unset) leaves it to the CPU.
VmathIsa isa_cap() {
  const char* cap = std::getenv("TENFERRO_VMATH_ISA");
  if (cap != nullptr && std::strcmp(cap, "baseline") == 0) return VmathIsa::Baseline;
  if (cap != nullptr && std::strcmp(cap, "avx2") == 0) return VmathIsa::Avx2Fma;
  return VmathIsa::Avx512;
}

}  // namespace

const ArrayKernels& active_array_kernels() {
  static const ArrayKernels* const active = [] {
    const VmathIsa cap = isa_cap();
    for (VmathIsa isa : {VmathIsa::Avx512, VmathIsa::Avx2Fma}) {
      if (static_cast<int>(isa) > static_cast<int>(cap)) continue;
      if (const ArrayKernels* k = array_kernels(isa)) return k;
    }
    return &kBaseline;
  }();
  return *active;
}

void vexp(const double* x, double* y, std::int64_t n) {
  active_array_kernels().exp64(x, y, n);
}
void vexp(const float* x, float* y, std::int64_t n) {
  active_array_kernels().exp32(x, y, n);
}
void vtanh(const double* x, double* y, std::int64_t n) {
  active_array_kernels().tanh64(x, y, n);
}
void vtanh(const float* x, float* y, std::int64_t n) {
  active_array_kernels().tanh32(x, y, n);
}
void vsigmoid(const double* x, double* y, std::int64_t n) {
  active_array_kernels().sigmoid64(x, y, n);
}
void vsigmoid(const float* x, float* y, std::int64_t n) {
  active_array_kernels().sigmoid32(x, y, n);
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
    const VmathIsa cap = isa_cap();
    if (cap == VmathIsa::Baseline) return static_cast<const SleefTable*>(nullptr);
    if (cap == VmathIsa::Avx512 && sleef_isa_supported(SleefIsa::Avx512))
      return sleef_table_avx512();
    if (sleef_isa_supported(SleefIsa::Avx2)) return sleef_table_avx2();
    return static_cast<const SleefTable*>(nullptr);
  }();
  return table;
}

}  // namespace tenferro::cpu::vmath
