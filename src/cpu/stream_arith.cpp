// The streaming form of compact f32/f64 add, sub, mul and div
// (cpu/stream_arith.hpp), in 32-byte AVX2 vectors. Two vectors make one
// 64-byte line of the output: the loop aligns the output to a line with
// scalar steps, then loads both vectors' inputs before it streams the line
// out (in place, that line of the input is read whole before it is written),
// and ends with scalar steps for the ragged tail. The memory, not the vector
// width, limits these loops: a standalone add of 2^22 doubles streamed from
// 16-byte and from 64-byte vectors measured alike on the Zen 4 VM.

#include "cpu/stream_arith.hpp"

#include <algorithm>
#include <cstdint>

#include "cpu/target_clones.hpp"

#if TENFERRO_HAS_TARGET_AVX2
#include <immintrin.h>
#endif

namespace tenferro::cpu {

namespace {

#if TENFERRO_HAS_TARGET_AVX2

TENFERRO_TARGET_AVX2 inline __m256d vload(const double* p) {
  return _mm256_loadu_pd(p);
}
TENFERRO_TARGET_AVX2 inline __m256 vload(const float* p) {
  return _mm256_loadu_ps(p);
}
TENFERRO_TARGET_AVX2 inline __m256d vsplat(double x) {
  return _mm256_set1_pd(x);
}
TENFERRO_TARGET_AVX2 inline __m256 vsplat(float x) {
  return _mm256_set1_ps(x);
}
TENFERRO_TARGET_AVX2 inline void vstream(double* p, __m256d v) {
  _mm256_stream_pd(p, v);
}
TENFERRO_TARGET_AVX2 inline void vstream(float* p, __m256 v) {
  _mm256_stream_ps(p, v);
}

// x op y on scalars and on vectors alike (GCC and Clang vector operators).
template <BinaryOp kOp, class V>
TENFERRO_TARGET_AVX2 inline V apply(V x, V y) {
  if constexpr (kOp == BinaryOp::Add) {
    return x + y;
  } else if constexpr (kOp == BinaryOp::Sub) {
    return x - y;
  } else if constexpr (kOp == BinaryOp::Mul) {
    return x * y;
  } else {
    return x / y;
  }
}

// One = the operand is a single value for every element.
enum class Operand { Run, One };

template <BinaryOp kOp, Operand kA, Operand kB, class T>
TENFERRO_TARGET_AVX2 void stream_loop(const T* a, const T* b, T* o, std::int64_t n) {
  constexpr std::int64_t kW = 32 / sizeof(T);  // elements per vector
  constexpr std::int64_t kLine = 2 * kW;       // elements per 64-byte line
  const T a0 = *a, b0 = *b;
  const auto misaligned = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(o) % 64);
  const std::int64_t head =
      std::min<std::int64_t>(n, (64 - misaligned) % 64 / static_cast<std::int64_t>(sizeof(T)));
  std::int64_t i = 0;
  for (; i < head; ++i)
    o[i] = apply<kOp>(kA == Operand::One ? a0 : a[i], kB == Operand::One ? b0 : b[i]);
  const auto va = vsplat(a0), vb = vsplat(b0);
  for (; i + kLine <= n; i += kLine) {
    const auto x0 = kA == Operand::One ? va : vload(a + i);
    const auto x1 = kA == Operand::One ? va : vload(a + i + kW);
    const auto y0 = kB == Operand::One ? vb : vload(b + i);
    const auto y1 = kB == Operand::One ? vb : vload(b + i + kW);
    vstream(o + i, apply<kOp>(x0, y0));
    vstream(o + i + kW, apply<kOp>(x1, y1));
  }
  for (; i < n; ++i)
    o[i] = apply<kOp>(kA == Operand::One ? a0 : a[i], kB == Operand::One ? b0 : b[i]);
  _mm_sfence();
}

template <BinaryOp kOp, class T>
void by_operands(const T* a, bool a_one, const T* b, bool b_one, T* o, std::int64_t n) {
  if (a_one) {
    stream_loop<kOp, Operand::One, Operand::Run>(a, b, o, n);
  } else if (b_one) {
    stream_loop<kOp, Operand::Run, Operand::One>(a, b, o, n);
  } else {
    stream_loop<kOp, Operand::Run, Operand::Run>(a, b, o, n);
  }
}

template <class T>
bool stream_any(BinaryOp op, const T* a, bool a_one, const T* b, bool b_one, T* o, std::int64_t n) {
  if (!stream_arith_available() || (a_one && b_one) ||
      reinterpret_cast<std::uintptr_t>(o) % sizeof(T) != 0)
    return false;
  switch (op) {
    case BinaryOp::Add:
      if (n > 0) by_operands<BinaryOp::Add>(a, a_one, b, b_one, o, n);
      return true;
    case BinaryOp::Sub:
      if (n > 0) by_operands<BinaryOp::Sub>(a, a_one, b, b_one, o, n);
      return true;
    case BinaryOp::Mul:
      if (n > 0) by_operands<BinaryOp::Mul>(a, a_one, b, b_one, o, n);
      return true;
    case BinaryOp::Div:
      if (n > 0) by_operands<BinaryOp::Div>(a, a_one, b, b_one, o, n);
      return true;
    default:
      return false;
  }
}

#else

template <class T>
bool stream_any(BinaryOp, const T*, bool, const T*, bool, T*, std::int64_t) {
  return false;
}

#endif  // TENFERRO_HAS_TARGET_AVX2

}  // namespace

bool stream_arith_available() {
#if TENFERRO_HAS_TARGET_AVX2
  return cpu_has_avx2();
#else
  return false;
#endif
}

bool stream_arith(BinaryOp op, const double* a, bool a_one, const double* b, bool b_one, double* o,
                  std::int64_t n) {
  return stream_any(op, a, a_one, b, b_one, o, n);
}

bool stream_arith(BinaryOp op, const float* a, bool a_one, const float* b, bool b_one, float* o,
                  std::int64_t n) {
  return stream_any(op, a, a_one, b, b_one, o, n);
}

}  // namespace tenferro::cpu
