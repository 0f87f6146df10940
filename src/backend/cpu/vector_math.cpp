// The array forms of vector_math.hpp. On x86-64 with GCC each is also built
// for AVX2 and picked at load time (ifunc): the baseline SSE2 loop handles two
// doubles at a time, which is no faster than glibc's scalar exp. Results are
// identical across the copies: the element code uses only correctly rounded
// operations and the build does not contract a * b + c into FMA (ISO C++ mode
// defaults to -ffp-contract=off).

#include "backend/cpu/vector_math.hpp"

// ThreadSanitizer instruments the ifunc resolvers, which run during relocation
// before its runtime is up (the process dies at load), so TSan builds keep the
// baseline loop only.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(__SANITIZE_THREAD__)
#define TENFERRO_VMATH_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define TENFERRO_VMATH_CLONES
#endif

namespace tenferro::cpu::vmath {

namespace {

template <class T, class F>
inline void map_array(const T* x, T* y, std::int64_t n, F f) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

}  // namespace

TENFERRO_VMATH_CLONES void vexp(const double* x, double* y, std::int64_t n) {
  map_array(x, y, n, [](double v) { return detail::exp1(v); });
}
TENFERRO_VMATH_CLONES void vexp(const float* x, float* y, std::int64_t n) {
  map_array(x, y, n, [](float v) { return detail::exp1(v); });
}
TENFERRO_VMATH_CLONES void vtanh(const double* x, double* y, std::int64_t n) {
  map_array(x, y, n, [](double v) { return detail::tanh1(v); });
}
TENFERRO_VMATH_CLONES void vtanh(const float* x, float* y, std::int64_t n) {
  map_array(x, y, n, [](float v) { return detail::tanh1(v); });
}
TENFERRO_VMATH_CLONES void vsigmoid(const double* x, double* y, std::int64_t n) {
  map_array(x, y, n, [](double v) { return detail::sigmoid1(v); });
}
TENFERRO_VMATH_CLONES void vsigmoid(const float* x, float* y, std::int64_t n) {
  map_array(x, y, n, [](float v) { return detail::sigmoid1(v); });
}

}  // namespace tenferro::cpu::vmath
