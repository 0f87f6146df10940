// SLEEF's AVX2 table (sleef_kernels.hpp). This file is compiled with
// -mavx2 -mfma on x86-64 (src/CMakeLists.txt) and includes only C headers and
// internal-linkage code, so nothing here can stand in for baseline code.

#include "cpu/sleef_kernels.hpp"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#include <sleef.h>

namespace tenferro::cpu::vmath {

namespace {

inline __m256d vload(const double* p) {
  return _mm256_loadu_pd(p);
}
inline __m256 vload(const float* p) {
  return _mm256_loadu_ps(p);
}
inline void vstore(double* p, __m256d v) {
  _mm256_storeu_pd(p, v);
}
inline void vstore(float* p, __m256 v) {
  _mm256_storeu_ps(p, v);
}

#include "cpu/sleef_apply.inc"

#define TENFERRO_SLEEF_F64(name, ulp) &apply<double, Sleef_##name##d4_##ulp##avx2>,
#define TENFERRO_SLEEF_F32(name, ulp) &apply<float, Sleef_##name##f8_##ulp##avx2>,
constexpr SleefTable kTable = {"avx2",
                               {TENFERRO_SLEEF_FUNCTIONS(TENFERRO_SLEEF_F64)},
                               {TENFERRO_SLEEF_FUNCTIONS(TENFERRO_SLEEF_F32)}};
#undef TENFERRO_SLEEF_F64
#undef TENFERRO_SLEEF_F32

}  // namespace

const SleefTable* sleef_table_avx2() {
  return &kTable;
}

}  // namespace tenferro::cpu::vmath

#else

namespace tenferro::cpu::vmath {
const SleefTable* sleef_table_avx2() {
  return nullptr;
}
}  // namespace tenferro::cpu::vmath

#endif
