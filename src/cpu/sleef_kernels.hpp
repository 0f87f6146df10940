#pragma once
// Array forms of the elementwise functions taken from SLEEF (the vectorised
// math library PyTorch uses), one table per x86-64 instruction set. Not
// installed. Each table lives in its own file compiled for that instruction
// set (sleef_avx2.cpp: -mavx2 -mfma, sleef_avx512.cpp: -mavx512f); those files
// include only C headers, so no inline C++ function is compiled for a wider
// instruction set there and then picked by the linker for baseline code.
// vector_math.cpp picks the table once, from what the CPU reports.
//
// Accuracy: SLEEF's documented bound of each function is in the list below
// (u10 = 1.0 ulp, u15 = 1.5 ulp), over the whole domain, with the C99 special
// values; tests/backend/vector_math_test.cpp checks both against long double.
// SLEEF's SSE2 forms are slower than glibc's scalar functions (measured), so a
// CPU without AVX2 keeps std::.
//
// Not taken: sinh and cosh (SLEEF's overflow at |x| > 709 instead of 710.47
// for f64), asinh and acosh (inf beyond |x| = 1.3e154 in f64 and 1.8e19 in
// f32, measured), and exp, tanh, sigmoid, whose own kernels in vector_math.hpp are
// faster than SLEEF's (tanh: 1.5 ms against 3.4 ms per 2^20 f64 values with
// AVX-512) and return the same bits on every instruction set.

#include <cstdint>

namespace tenferro::cpu::vmath {

/// TENFERRO_SLEEF_FUNCTIONS(X) calls X(name, ulp) for every function, name
/// being SLEEF's (and std::'s) base name and ulp SLEEF's accuracy suffix.
// clang-format off
#define TENFERRO_SLEEF_FUNCTIONS(X) \
  X(log, u10) \
  X(log2, u10) \
  X(log10, u10) \
  X(log1p, u10) \
  X(expm1, u10) \
  X(exp2, u10) \
  X(sin, u10) \
  X(cos, u10) \
  X(tan, u10) \
  X(asin, u10) \
  X(acos, u10) \
  X(atan, u10) \
  X(atanh, u10) \
  X(erf, u10) \
  X(erfc, u15)
// clang-format on

enum class SleefFn : int {
#define TENFERRO_SLEEF_ENUM(name, ulp) name,
  TENFERRO_SLEEF_FUNCTIONS(TENFERRO_SLEEF_ENUM)
#undef TENFERRO_SLEEF_ENUM
      count
};
inline constexpr int kSleefFnCount = static_cast<int>(SleefFn::count);

template <class T>
using ArrayFn = void (*)(const T*, T*, std::int64_t);

/// y[i] = f(x[i]) for i < n, one entry per SleefFn; y == x (in place) is
/// allowed, partial overlap is not.
struct SleefTable {
  const char* isa;
  ArrayFn<double> f64[kSleefFnCount];
  ArrayFn<float> f32[kSleefFnCount];
};

enum class SleefIsa { Avx2, Avx512 };

/// The table for `isa`, or nullptr when this build has none (not x86-64).
/// The caller checks the CPU first (sleef_isa_supported).
const SleefTable* sleef_table_avx2();
const SleefTable* sleef_table_avx512();

/// Whether this CPU runs `isa`'s table (and the build has it).
bool sleef_isa_supported(SleefIsa isa);

/// The table the kernels use: AVX-512 where the CPU has it, else AVX2 (with
/// FMA), else nullptr (std:: is used). TENFERRO_VMATH_ISA=avx2 or =baseline in
/// the environment caps the choice (read once, for measurements and tests).
const SleefTable* active_sleef_table();

}  // namespace tenferro::cpu::vmath
