// SLEEF's AVX-512 table (sleef_kernels.hpp). This file is compiled with
// -mavx512f on x86-64 (src/CMakeLists.txt) and includes only C headers and
// internal-linkage code, so nothing here can stand in for baseline code.

#include "cpu/sleef_kernels.hpp"

#if defined(__x86_64__) && defined(__AVX512F__)
#include <immintrin.h>
#include <sleef.h>

namespace tenferro::cpu::vmath {

namespace {

inline __m512d vload(const double* p) {
  return _mm512_loadu_pd(p);
}
inline __m512 vload(const float* p) {
  return _mm512_loadu_ps(p);
}
inline void vstore(double* p, __m512d v) {
  _mm512_storeu_pd(p, v);
}
inline void vstore(float* p, __m512 v) {
  _mm512_storeu_ps(p, v);
}

#include "cpu/sleef_apply.inc"

#define TENFERRO_SLEEF_F64(name, ulp) &apply<double, Sleef_##name##d8_##ulp##avx512f>,
#define TENFERRO_SLEEF_F32(name, ulp) &apply<float, Sleef_##name##f16_##ulp##avx512f>,
constexpr SleefTable kTable = {"avx512f",
                               {TENFERRO_SLEEF_FUNCTIONS(TENFERRO_SLEEF_F64)},
                               {TENFERRO_SLEEF_FUNCTIONS(TENFERRO_SLEEF_F32)}};
#undef TENFERRO_SLEEF_F64
#undef TENFERRO_SLEEF_F32

}  // namespace

const SleefTable* sleef_table_avx512() {
  return &kTable;
}

}  // namespace tenferro::cpu::vmath

#else

namespace tenferro::cpu::vmath {
const SleefTable* sleef_table_avx512() {
  return nullptr;
}
}  // namespace tenferro::cpu::vmath

#endif
