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
#else
#define TENFERRO_TARGET_CLONES
#endif
