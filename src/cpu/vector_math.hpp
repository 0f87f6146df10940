#pragma once
// Array forms of exp, tanh and sigmoid for f32 and f64 whose inner loops have
// no branches, calls or tables, so GCC -O3 vectorises them. Not installed. The
// scalar element functions are here (inline) so tests can check them one by
// one.
//
// exp: x = k ln2 + r with |r| <= ln2/2 (Cody-Waite: ln2 split into a short
// head, so k * head is exact, and a tail), e^r from its Taylor polynomial
// (degree 13 for f64, 7 for f32; the truncation error is below 0.05 ulp), and
// 2^k built from exponent bits in two halves so results that overflow,
// underflow or are subnormal round once, at the last multiplication.
// tanh: a rational form near 0, 1 - 2e/(1+e) with e = exp(-2|x|) beyond
// (see tanh1). sigmoid: from exp(-|x|), stable both ways (see sigmoid1).
// Measured against exact values: exp <= 1 ulp, tanh <= 1, sigmoid <= 2 (f64
// and f32); against std:: at most 1 ulp more.
//
// Every multiply-add of the polynomials and the reduction is an explicit
// std::fma, and nothing else may be contracted (vector_math.cpp is built with
// -ffp-contract=off): the FMA is exact by definition, so every build of these
// functions (AVX-512, AVX2 + FMA, the baseline with libm's fma, other
// architectures) rounds alike and returns the same bits, while the vector
// builds run one instruction where a multiply and an add ran before.
// Selections are written as conditional expressions; vector_math.cpp is built
// with -fno-trapping-math so GCC turns them into vector blends (it does not
// change any result: the functions never read the floating-point flags).
//
// Rounding to an integer and converting to exponent bits use the "add 1.5 *
// 2^mantissa_bits" trick rather than lround/casts, because double -> int64
// conversion does not vectorise below AVX-512. The trick needs IEEE rounding
// kept as written (no -ffast-math / -fassociative-math on this code).

#include <bit>
#include <cmath>
#include <cstdint>

namespace tenferro::cpu::vmath {

namespace detail {

template <class T>
struct Consts;

template <>
struct Consts<double> {
  using Bits = std::uint64_t;
  static constexpr int mantissa_bits = 52;
  static constexpr double bias = 1023;
  // Adding it rounds |v| < 2^51 to an integer held in the low mantissa bits.
  static constexpr double magic = 0x1.8p52;
  static constexpr double log2e = 0x1.71547652b82fep+0;
  // ln2 = head + tail; the head has 21 trailing zero bits, so k * head is exact
  // for |k| < 2^21.
  static constexpr double ln2_head = 0x1.62e42feep-1;
  static constexpr double ln2_tail = 0x1.a39ef35793c76p-33;
  // Beyond +-exp_bound, exp is 0 or +inf; inside, k and its halves stay in
  // the normal exponent range (|k| <= 1155, |k / 2| <= 578).
  static constexpr double exp_bound = 800;
  // tanh(x) rounds to +-1 for |x| > 19.1.
  static constexpr double tanh_bound = 20;
};

template <>
struct Consts<float> {
  using Bits = std::uint32_t;
  static constexpr int mantissa_bits = 23;
  static constexpr float bias = 127;
  static constexpr float magic = 0x1.8p23f;
  static constexpr float log2e = 0x1.715476p+0f;
  // 13 significant bits: k * head is exact for |k| < 2^11.
  static constexpr float ln2_head = 0x1.62ep-1f;
  static constexpr float ln2_tail = 0x1.0bfbe8p-15f;
  // |k| <= 159, |k / 2| <= 80: both inside the normal exponent range.
  static constexpr float exp_bound = 110;
  // tanh(x) rounds to +-1 for |x| > 9.1 in f32.
  static constexpr float tanh_bound = 10;
};

/// v rounded to an integer (ties to even), for |v| < 2^(mantissa_bits - 1).
template <class T>
inline T round_int(T v) {
  constexpr T m = Consts<T>::magic;
  return (v + m) - m;
}

/// 2^k for an integer-valued k inside the normal exponent range: the biased
/// exponent ends up in the low mantissa bits of k + bias + magic, and the
/// shift moves it into the exponent field (dropping everything above).
template <class T>
inline T pow2_int(T k) {
  using C = Consts<T>;
  const auto bits = std::bit_cast<typename C::Bits>(k + (C::magic + C::bias));
  return std::bit_cast<T>(static_cast<typename C::Bits>(bits << C::mantissa_bits));
}

/// x with its magnitude limited to `bound`; NaN fails the test and stays.
/// The clamped arm is copysign(bound, x) rather than a constant on purpose:
/// with a constant, GCC's PRE folds the whole computation on that path,
/// splits the loop body into branches, and then cannot if-convert them under
/// -ftrapping-math, so the loop would not vectorise.
template <class T>
inline T clamp_magnitude(T x, T bound) {
  return std::fabs(x) > bound ? std::copysign(bound, x) : x;
}

/// e^r - 1 for |r| <= ln2/2 (plus rounding): r + r^2 * q(r), Taylor terms up
/// to r^13 (f64) or r^7 (f32). Keeping the 1 out preserves small results.
template <class T>
inline T expm1_reduced(T r) {
  // Estrin's scheme: a short dependency chain, so the vector loop is not
  // latency bound the way a 12-step Horner chain is.
  const T r2 = r * r;
  T q;
  if constexpr (sizeof(T) == 8) {
    const T r4 = r2 * r2;
    const T a0 = std::fma(0x1.5555555555555p-3, r, 0.5);                     // 1/2!, 1/3!
    const T a1 = std::fma(0x1.1111111111111p-7, r, 0x1.5555555555555p-5);    // 1/4!, 1/5!
    const T a2 = std::fma(0x1.a01a01a01a01ap-13, r, 0x1.6c16c16c16c17p-10);  // 1/6!, 1/7!
    const T a3 = std::fma(0x1.71de3a556c734p-19, r, 0x1.a01a01a01a01ap-16);  // 1/8!, 1/9!
    const T a4 = std::fma(0x1.ae64567f544e4p-26, r, 0x1.27e4fb7789f5cp-22);  // 1/10!, 1/11!
    const T a5 = std::fma(0x1.6124613a86d09p-33, r, 0x1.1eed8eff8d898p-29);  // 1/12!, 1/13!
    q = std::fma(r4, std::fma(r4, std::fma(a5, r2, a4), std::fma(a3, r2, a2)),
                 std::fma(a1, r2, a0));
  } else {
    const T a0 = std::fma(0x1.555556p-3f, r, 0.5f);              // 1/2!, 1/3!
    const T a1 = std::fma(0x1.111112p-7f, r, 0x1.555556p-5f);    // 1/4!, 1/5!
    const T a2 = std::fma(0x1.a01a02p-13f, r, 0x1.6c16c2p-10f);  // 1/6!, 1/7!
    q = std::fma(r2, std::fma(r2, a2, a1), a0);
  }
  return std::fma(r2, q, r);
}

/// k (integer-valued) and r with x = k ln2 + r, |r| <= ln2/2 (plus rounding).
template <class T>
inline T reduce(T x, T& k) {
  using C = Consts<T>;
  k = round_int(x * C::log2e);
  return std::fma(-k, C::ln2_tail, std::fma(-k, C::ln2_head, x));
}

template <class T>
inline T exp1(T x) {
  x = clamp_magnitude(x, Consts<T>::exp_bound);
  T k;
  const T r = reduce(x, k);
  const T e = T(1) + expm1_reduced(r);
  // Two factors: each stays normal, and the product rounds once (so overflow
  // gives +inf and underflow a correctly rounded subnormal or 0).
  const T k1 = round_int(k * T(0.5));
  return (e * pow2_int(k1)) * pow2_int(k - k1);
}

/// tanh(a) - a for 0 <= a < 0.625, as numerator / denominator: the
/// Lambert continued fraction tanh a = a / (1 + a^2 / (3 + a^2 / (5 + ...)))
/// cut after 2n+1 = 17 (f64, relative error < 1e-20) or 9 (f32, < 1e-9),
/// rewritten as a + a z D(z) / Q(z) with z = a^2 so the small correction
/// carries the rounding errors, not the leading term.
template <class T>
inline void tanh_small_correction(T a, T& num, T& den) {
  const T z = a * a;
  if constexpr (sizeof(T) == 8) {
    num = a * z *
          std::fma(std::fma(std::fma(-0x1.56c16d6d82d98p-20, z, -0x1.87a00187a0018p-12), z,
                            -0x1.8181818181818p-6),
                   z, -0x1.5555555555555p-2);
    den = std::fma(std::fma(std::fma(std::fma(0x1.5e8ba44745d2dp-20, z, 0x1.a5c001a5c001ap-12), z,
                                     0x1.c1c1c1c1c1c1cp-6),
                            z, 0x1.e1e1e1e1e1e1ep-2),
                   z, 1.0);
  } else {
    num = a * z * std::fma(-0x1.e573acp-7f, z, -0x1.555556p-2f);
    den = std::fma(std::fma(0x1.041042p-6f, z, 0x1.c71c72p-2f), z, 1.0f);
  }
}

/// tanh a for a = |x|: a + a z D(z) / Q(z) below 0.625, and
/// 1 - 2e / (1 + e) with e = e^(-2a) above, where the subtracted term is at
/// most 0.45 so 1 - h loses nothing. One division serves both: numerator,
/// denominator and base are selected first (both forms are finite for
/// |x| <= tanh_bound, so the unused one is harmless). tanh(+-0) = +-0, NaN
/// stays NaN, and |x| > tanh_bound gives 1 (e^(-2 bound) is below half an
/// ulp of 1).
template <class T>
inline T tanh1(T x) {
  const T ax = std::fabs(x);
  const T ac = ax > Consts<T>::tanh_bound ? Consts<T>::tanh_bound : ax;  // NaN stays
  T k;
  const T r = reduce(T(-2) * ac, k);  // k >= -58: one factor 2^k stays normal
  const T e = (T(1) + expm1_reduced(r)) * pow2_int(k);
  T num_small, den_small;
  tanh_small_correction(ac, num_small, den_small);
  const bool small = ac < T(0.625);
  const T num = small ? num_small : T(-2) * e;
  const T den = small ? den_small : T(1) + e;
  const T base = small ? ac : T(1);
  return std::copysign(base + num / den, x);
}

/// 1 / (1 + e^-x) for x >= 0 and e^x / (1 + e^x) for x < 0: e = e^-|x| never
/// overflows, and tiny results for very negative x keep their precision.
template <class T>
inline T sigmoid1(T x) {
  const T e = exp1(-std::fabs(x));
  return (x >= T(0) ? T(1) : e) / (T(1) + e);
}

}  // namespace detail

// y[i] = f(x[i]) for i < n; y == x (in place) is allowed, partial overlap is
// not. Defined in vector_math.cpp: one build per instruction set on x86-64
// (see ArrayKernels), all returning the same bits.
void vexp(const double* x, double* y, std::int64_t n);
void vexp(const float* x, float* y, std::int64_t n);
void vtanh(const double* x, double* y, std::int64_t n);
void vtanh(const float* x, float* y, std::int64_t n);
void vsigmoid(const double* x, double* y, std::int64_t n);
void vsigmoid(const float* x, float* y, std::int64_t n);

/// The instruction sets the array forms are built for: AVX-512 (with FMA),
/// AVX2 with FMA, and the baseline (x86-64's SSE2 or the architecture's own,
/// with std::fma from libm where the target has no FMA instruction).
enum class VmathIsa { Baseline, Avx2Fma, Avx512 };

/// One build of the array forms.
struct ArrayKernels {
  void (*exp64)(const double*, double*, std::int64_t);
  void (*exp32)(const float*, float*, std::int64_t);
  void (*tanh64)(const double*, double*, std::int64_t);
  void (*tanh32)(const float*, float*, std::int64_t);
  void (*sigmoid64)(const double*, double*, std::int64_t);
  void (*sigmoid32)(const float*, float*, std::int64_t);
};

/// The build for `isa`, or nullptr where this CPU (or this compiler) cannot
/// run it. The baseline is always there.
const ArrayKernels* array_kernels(VmathIsa isa);

/// The build vexp / vtanh / vsigmoid use: the widest the CPU runs, capped by
/// TENFERRO_VMATH_ISA=baseline or =avx2 in the environment (read once).
const ArrayKernels& active_array_kernels();

}  // namespace tenferro::cpu::vmath
