#pragma once
// TENFERRO_TARGET_CLONES: compile a function for AVX-512, AVX2 and the
// baseline, picked at load time (GCC ifunc), where that is safe.
//
// ThreadSanitizer instruments the ifunc resolvers, which run during relocation
// before its runtime is up (the process dies at load), so TSan builds keep the
// baseline loop only.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(__SANITIZE_THREAD__)
#define TENFERRO_TARGET_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#define TENFERRO_TARGET_CLONES_AVX2 __attribute__((target_clones("avx2", "default")))
#else
#define TENFERRO_TARGET_CLONES
#define TENFERRO_TARGET_CLONES_AVX2
#endif

// TENFERRO_TARGET_AVX512 / TENFERRO_TARGET_AVX2: a function compiled for
// that instruction set only, for code with its own form there (wider
// vectors, more columns, streaming stores), called after a run-time check of
// the processor (cpu_has_avx512f(), cpu_has_avx2()). Not defined where x86
// target attributes are not available (TENFERRO_HAS_TARGET_* is 0); such
// code then has no such form.
#if defined(__GNUC__) && defined(__x86_64__)
#define TENFERRO_HAS_TARGET_AVX512 1
#define TENFERRO_HAS_TARGET_AVX2 1
#define TENFERRO_TARGET_AVX512 __attribute__((target("avx512f")))
#define TENFERRO_TARGET_AVX2 __attribute__((target("avx2")))
namespace tenferro::cpu {
inline bool cpu_has_avx512f() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0;
  }();
  return has;
}
inline bool cpu_has_avx2() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return has;
}
}  // namespace tenferro::cpu
#else
#define TENFERRO_HAS_TARGET_AVX512 0
#define TENFERRO_HAS_TARGET_AVX2 0
#endif
