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

#include "cpu/arith_ops.hpp"
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
TENFERRO_TARGET_AVX2 void stream_loop(const T* a, const T* b, T* o, std::int64_t n, bool fence) {
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
  if (fence) _mm_sfence();
}

// stream_loop for two operations: o[i] = m op2 c[i] (or c[i] op2 m), with
// m = a[i] op1 b[i] rounded to T (this file is built with -ffp-contract=off,
// so no multiply-add is fused).
template <BinaryOp kOp1, BinaryOp kOp2, bool kMidRight, class V>
TENFERRO_TARGET_AVX2 inline V apply2(V x, V y, V z) {
  const V m = apply<kOp1>(x, y);
  return kMidRight ? apply<kOp2>(z, m) : apply<kOp2>(m, z);
}

template <BinaryOp kOp1, BinaryOp kOp2, bool kMidRight, class T>
TENFERRO_TARGET_AVX2 void stream_loop2(const T* a, const T* b, const T* c, T* o, std::int64_t n,
                                       bool fence) {
  constexpr std::int64_t kW = 32 / sizeof(T);
  constexpr std::int64_t kLine = 2 * kW;
  const auto misaligned = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(o) % 64);
  const std::int64_t head =
      std::min<std::int64_t>(n, (64 - misaligned) % 64 / static_cast<std::int64_t>(sizeof(T)));
  std::int64_t i = 0;
  for (; i < head; ++i) o[i] = apply2<kOp1, kOp2, kMidRight>(a[i], b[i], c[i]);
  for (; i + kLine <= n; i += kLine) {
    const auto x0 = vload(a + i), x1 = vload(a + i + kW);
    const auto y0 = vload(b + i), y1 = vload(b + i + kW);
    const auto z0 = vload(c + i), z1 = vload(c + i + kW);
    vstream(o + i, apply2<kOp1, kOp2, kMidRight>(x0, y0, z0));
    vstream(o + i + kW, apply2<kOp1, kOp2, kMidRight>(x1, y1, z1));
  }
  for (; i < n; ++i) o[i] = apply2<kOp1, kOp2, kMidRight>(a[i], b[i], c[i]);
  if (fence) _mm_sfence();
}

template <class T>
bool stream_any2(BinaryOp op1, BinaryOp op2, bool mid_right, const T* a, const T* b, const T* c,
                 T* o, std::int64_t n, bool fence) {
  if (!stream_arith_available() || !is_arith(op1) || !is_arith(op2) ||
      reinterpret_cast<std::uintptr_t>(o) % sizeof(T) != 0)
    return false;
  if (n <= 0) return true;
  const bool right = mid_right && order_matters(op2);
  // As arith2_run (binary_kernels.cpp): add and mul commute, so only sub
  // and div take the intermediate on the right.
  visit_arith(op1, [&](auto k1) {
    visit_arith(op2, [&](auto k2) {
      constexpr BinaryOp kOp1 = decltype(k1)::value, kOp2 = decltype(k2)::value;
      if (right) return stream_loop2<kOp1, kOp2, true>(a, b, c, o, n, fence);
      stream_loop2<kOp1, kOp2, false>(a, b, c, o, n, fence);
    });
  });
  return true;
}

template <BinaryOp kOp, class T>
void by_operands(const T* a, bool a_one, const T* b, bool b_one, T* o, std::int64_t n, bool fence) {
  if (a_one) {
    stream_loop<kOp, Operand::One, Operand::Run>(a, b, o, n, fence);
  } else if (b_one) {
    stream_loop<kOp, Operand::Run, Operand::One>(a, b, o, n, fence);
  } else {
    stream_loop<kOp, Operand::Run, Operand::Run>(a, b, o, n, fence);
  }
}

template <class T>
bool stream_any(BinaryOp op, const T* a, bool a_one, const T* b, bool b_one, T* o, std::int64_t n,
                bool fence) {
  if (!stream_arith_available() || !is_arith(op) || (a_one && b_one) ||
      reinterpret_cast<std::uintptr_t>(o) % sizeof(T) != 0)
    return false;
  if (n > 0)
    visit_arith(op,
                [&](auto k) { by_operands<decltype(k)::value>(a, a_one, b, b_one, o, n, fence); });
  return true;
}

#else

template <class T>
bool stream_any(BinaryOp, const T*, bool, const T*, bool, T*, std::int64_t, bool) {
  return false;
}

template <class T>
bool stream_any2(BinaryOp, BinaryOp, bool, const T*, const T*, const T*, T*, std::int64_t, bool) {
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
                  std::int64_t n, bool fence) {
  return stream_any(op, a, a_one, b, b_one, o, n, fence);
}

bool stream_arith(BinaryOp op, const float* a, bool a_one, const float* b, bool b_one, float* o,
                  std::int64_t n, bool fence) {
  return stream_any(op, a, a_one, b, b_one, o, n, fence);
}

bool stream_arith2(BinaryOp op1, BinaryOp op2, bool mid_right, const double* a, const double* b,
                   const double* c, double* o, std::int64_t n, bool fence) {
  return stream_any2(op1, op2, mid_right, a, b, c, o, n, fence);
}

bool stream_arith2(BinaryOp op1, BinaryOp op2, bool mid_right, const float* a, const float* b,
                   const float* c, float* o, std::int64_t n, bool fence) {
  return stream_any2(op1, op2, mid_right, a, b, c, o, n, fence);
}

}  // namespace tenferro::cpu
