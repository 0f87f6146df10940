// Register-blocked 2-D tile transposition (see tensor/transpose_tile.hpp).
//
// Each kernel reads a block of source rows (consecutive elements along the
// source's memory) into registers, transposes it there and stores whole
// destination runs: 8 x 8 blocks of 8-byte elements (AVX-512), 8 x 4 as two
// 4 x 4 (AVX2) and 16 x 8 blocks of 4-byte elements as two 8 x 8 (AVX2), so
// every destination row receives 64 contiguous bytes per block. The blocks
// walk the destination rows in the inner loop so each row's stores follow one
// another (write combining for the streaming form); narrow tiles go by
// strips of rows instead (see tile8_avx2). A last partial block of columns
// overlaps the one before it; the rows the blocks do not cover take the
// scalar loop.

#include "tensor/transpose_tile.hpp"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define TENFERRO_X86 1
#endif

namespace tenferro::detail {
namespace {

template <class T>
void scalar_tile(const T* s, std::int64_t sld, T* d, std::int64_t dld, std::int64_t r0,
                 std::int64_t rows, std::int64_t c0, std::int64_t cols) {
  for (std::int64_t j = c0; j < cols; ++j) {
    T* dp = d + j * dld;
    const T* sp = s + j;
    for (std::int64_t i = r0; i < rows; ++i) dp[i] = sp[i * sld];
  }
}

struct Bytes16 {
  unsigned char b[16];
};

void scalar_any(const void* s, std::int64_t sld, void* d, std::int64_t dld, std::int64_t rows,
                std::int64_t cols, std::size_t item) {
  const auto width = cols * static_cast<std::int64_t>(item);
  if (width <= kNarrowTileBytes && item <= 64 && rows > 64 / static_cast<std::int64_t>(item)) {
    // Narrow: strips of one destination line's rows, in source order.
    const std::int64_t strip = 64 / static_cast<std::int64_t>(item);
    const auto* sb = static_cast<const unsigned char*>(s);
    auto* db = static_cast<unsigned char*>(d);
    for (std::int64_t i = 0; i < rows; i += strip) {
      const auto at = static_cast<std::int64_t>(item) * i;
      scalar_any(sb + at * sld, sld, db + at, dld, std::min(strip, rows - i), cols, item);
    }
    return;
  }
  switch (item) {
    case 1:
      scalar_tile(static_cast<const std::uint8_t*>(s), sld, static_cast<std::uint8_t*>(d), dld, 0,
                  rows, 0, cols);
      return;
    case 2:
      scalar_tile(static_cast<const std::uint16_t*>(s), sld, static_cast<std::uint16_t*>(d), dld, 0,
                  rows, 0, cols);
      return;
    case 4:
      scalar_tile(static_cast<const std::uint32_t*>(s), sld, static_cast<std::uint32_t*>(d), dld, 0,
                  rows, 0, cols);
      return;
    case 8:
      scalar_tile(static_cast<const std::uint64_t*>(s), sld, static_cast<std::uint64_t*>(d), dld, 0,
                  rows, 0, cols);
      return;
    case 16:
      scalar_tile(static_cast<const Bytes16*>(s), sld, static_cast<Bytes16*>(d), dld, 0, rows, 0,
                  cols);
      return;
    default:
      for (std::int64_t j = 0; j < cols; ++j)
        for (std::int64_t i = 0; i < rows; ++i)
          std::memcpy(static_cast<unsigned char*>(d) + (i + j * dld) * item,
                      static_cast<const unsigned char*>(s) + (i * sld + j) * item, item);
  }
}

#if TENFERRO_X86

// ---- 8-byte elements, AVX-512: 8 source rows x 8 columns per block ----------

template <bool NT>
__attribute__((target("avx512f"))) inline void store8(double* p, __m512d v) {
  if constexpr (NT) {
    _mm512_stream_pd(p, v);
  } else {
    _mm512_storeu_pd(p, v);
  }
}

template <bool NT>
__attribute__((target("avx512f"))) inline void block8x8(const double* s, std::int64_t sld,
                                                        double* d, std::int64_t dld) {
  const __m512d r0 = _mm512_loadu_pd(s), r1 = _mm512_loadu_pd(s + sld),
                r2 = _mm512_loadu_pd(s + 2 * sld), r3 = _mm512_loadu_pd(s + 3 * sld),
                r4 = _mm512_loadu_pd(s + 4 * sld), r5 = _mm512_loadu_pd(s + 5 * sld),
                r6 = _mm512_loadu_pd(s + 6 * sld), r7 = _mm512_loadu_pd(s + 7 * sld);
  // Pairs of rows interleaved, then pairs of pairs, then halves (all as
  // two-source permutes: GCC 12 warns on the unpack intrinsics' undefined
  // pass-through operand).
  const __m512i even = _mm512_set_epi64(14, 6, 12, 4, 10, 2, 8, 0);
  const __m512i odd = _mm512_set_epi64(15, 7, 13, 5, 11, 3, 9, 1);
  const __m512d t0 = _mm512_permutex2var_pd(r0, even, r1), t1 = _mm512_permutex2var_pd(r0, odd, r1),
                t2 = _mm512_permutex2var_pd(r2, even, r3), t3 = _mm512_permutex2var_pd(r2, odd, r3),
                t4 = _mm512_permutex2var_pd(r4, even, r5), t5 = _mm512_permutex2var_pd(r4, odd, r5),
                t6 = _mm512_permutex2var_pd(r6, even, r7), t7 = _mm512_permutex2var_pd(r6, odd, r7);
  const __m512i lo = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0);
  const __m512i hi = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
  const __m512d u0 = _mm512_permutex2var_pd(t0, lo, t2), u1 = _mm512_permutex2var_pd(t1, lo, t3),
                u2 = _mm512_permutex2var_pd(t0, hi, t2), u3 = _mm512_permutex2var_pd(t1, hi, t3),
                u4 = _mm512_permutex2var_pd(t4, lo, t6), u5 = _mm512_permutex2var_pd(t5, lo, t7),
                u6 = _mm512_permutex2var_pd(t4, hi, t6), u7 = _mm512_permutex2var_pd(t5, hi, t7);
  const __m512i first = _mm512_set_epi64(11, 10, 9, 8, 3, 2, 1, 0);
  const __m512i second = _mm512_set_epi64(15, 14, 13, 12, 7, 6, 5, 4);
  store8<NT>(d, _mm512_permutex2var_pd(u0, first, u4));
  store8<NT>(d + dld, _mm512_permutex2var_pd(u1, first, u5));
  store8<NT>(d + 2 * dld, _mm512_permutex2var_pd(u2, first, u6));
  store8<NT>(d + 3 * dld, _mm512_permutex2var_pd(u3, first, u7));
  store8<NT>(d + 4 * dld, _mm512_permutex2var_pd(u0, second, u4));
  store8<NT>(d + 5 * dld, _mm512_permutex2var_pd(u1, second, u5));
  store8<NT>(d + 6 * dld, _mm512_permutex2var_pd(u2, second, u6));
  store8<NT>(d + 7 * dld, _mm512_permutex2var_pd(u3, second, u7));
}

template <bool NT>
__attribute__((target("avx512f"))) void tile8_avx512(const double* s, std::int64_t sld, double* d,
                                                     std::int64_t dld, std::int64_t rows,
                                                     std::int64_t cols) {
  const std::int64_t rf = rows / 8 * 8, cf = cols / 8 * 8;
  for (std::int64_t j = 0; j < cf; j += 8)
    for (std::int64_t i = 0; i < rf; i += 8)
      block8x8<NT>(s + i * sld + j, sld, d + i + j * dld, dld);
  scalar_tile(s, sld, d, dld, rf, rows, 0, cf);
  scalar_tile(s, sld, d, dld, 0, rows, cf, cols);
}

// ---- 8-byte elements, AVX2: 8 source rows x 4 columns as two 4 x 4 ----------

template <bool NT>
__attribute__((target("avx2"))) inline void store4(double* p, __m256d v) {
  if constexpr (NT) {
    _mm256_stream_pd(p, v);
  } else {
    _mm256_storeu_pd(p, v);
  }
}

template <bool NT>
__attribute__((target("avx2"))) inline void block4x4(const double* s, std::int64_t sld, double* d,
                                                     std::int64_t dld) {
  const __m256d r0 = _mm256_loadu_pd(s), r1 = _mm256_loadu_pd(s + sld),
                r2 = _mm256_loadu_pd(s + 2 * sld), r3 = _mm256_loadu_pd(s + 3 * sld);
  const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1),
                t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
  store4<NT>(d, _mm256_permute2f128_pd(t0, t2, 0x20));
  store4<NT>(d + dld, _mm256_permute2f128_pd(t1, t3, 0x20));
  store4<NT>(d + 2 * dld, _mm256_permute2f128_pd(t0, t2, 0x31));
  store4<NT>(d + 3 * dld, _mm256_permute2f128_pd(t1, t3, 0x31));
}

// Tiles at most kNarrowTileBytes wide (along the source's runs) go by strips
// of one block's rows with all their columns, so the source is read in its
// order. A cold 19 x 1900 double tile (an MPS bra tensor B(e, b, d) of
// 19 x 19 x 100 copied to [b, d, e]) took 31-33 us by 4-column blocks over
// 16 rows and 20.5-21 us by strips of 4 rows, against 19 us for a memcpy
// (2-core AMD EPYC, strips of 8 rows: 21-29 us, of 16: 27-33 us). Wider
// tiles keep the column blocks (each destination column gets 64 bytes at a
// time). A last partial block of columns overlaps the one before it (the
// same values stored twice) rather than taking the scalar loop.
template <bool NT>
__attribute__((target("avx2"))) void tile8_avx2(const double* s, std::int64_t sld, double* d,
                                                std::int64_t dld, std::int64_t rows,
                                                std::int64_t cols) {
  if (cols < 4) {
    scalar_tile(s, sld, d, dld, 0, rows, 0, cols);
    return;
  }
  const std::int64_t cf = cols / 4 * 4, last = cols - 4;
  if (cols * 8 <= kNarrowTileBytes) {
    const std::int64_t rf = rows / 4 * 4;
    for (std::int64_t i = 0; i < rf; i += 4) {
      for (std::int64_t j = 0; j < cf; j += 4)
        block4x4<NT>(s + i * sld + j, sld, d + i + j * dld, dld);
      if (cf < cols) block4x4<NT>(s + i * sld + last, sld, d + i + last * dld, dld);
    }
    scalar_tile(s, sld, d, dld, rf, rows, 0, cols);
    return;
  }
  const std::int64_t rf = rows / 8 * 8;
  for (std::int64_t j = 0; j < cf; j += 4) {
    for (std::int64_t i = 0; i < rf; i += 8) {
      block4x4<NT>(s + i * sld + j, sld, d + i + j * dld, dld);
      block4x4<NT>(s + (i + 4) * sld + j, sld, d + i + 4 + j * dld, dld);
    }
  }
  if (cf < cols) {
    for (std::int64_t i = 0; i < rf; i += 8) {
      block4x4<NT>(s + i * sld + last, sld, d + i + last * dld, dld);
      block4x4<NT>(s + (i + 4) * sld + last, sld, d + i + 4 + last * dld, dld);
    }
  }
  scalar_tile(s, sld, d, dld, rf, rows, 0, cols);
}

// ---- 4-byte elements, AVX2: 16 source rows x 8 columns as two 8 x 8 ---------

template <bool NT>
__attribute__((target("avx2"))) inline void storef(float* p, __m256 v) {
  if constexpr (NT) {
    _mm256_stream_ps(p, v);
  } else {
    _mm256_storeu_ps(p, v);
  }
}

template <bool NT>
__attribute__((target("avx2"))) inline void block8x8f(const float* s, std::int64_t sld, float* d,
                                                      std::int64_t dld) {
  __m256 r[8];
  for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(s + k * sld);
  __m256 t[8];
  for (int k = 0; k < 8; k += 2) {
    t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
    t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
  }
  __m256 u[8];
  for (int k = 0; k < 8; k += 4) {
    u[k] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int k = 0; k < 4; ++k) {
    storef<NT>(d + k * dld, _mm256_permute2f128_ps(u[k], u[k + 4], 0x20));
    storef<NT>(d + (k + 4) * dld, _mm256_permute2f128_ps(u[k], u[k + 4], 0x31));
  }
}

// As tile8_avx2: narrow tiles by strips of 8 rows, wider ones by blocks of
// 8 columns over 16 rows.
template <bool NT>
__attribute__((target("avx2"))) void tile4_avx2(const float* s, std::int64_t sld, float* d,
                                                std::int64_t dld, std::int64_t rows,
                                                std::int64_t cols) {
  if (cols < 8) {
    scalar_tile(s, sld, d, dld, 0, rows, 0, cols);
    return;
  }
  const std::int64_t cf = cols / 8 * 8, last = cols - 8;
  if (cols * 4 <= kNarrowTileBytes) {
    const std::int64_t rf = rows / 8 * 8;
    for (std::int64_t i = 0; i < rf; i += 8) {
      for (std::int64_t j = 0; j < cf; j += 8)
        block8x8f<NT>(s + i * sld + j, sld, d + i + j * dld, dld);
      if (cf < cols) block8x8f<NT>(s + i * sld + last, sld, d + i + last * dld, dld);
    }
    scalar_tile(s, sld, d, dld, rf, rows, 0, cols);
    return;
  }
  const std::int64_t rf = rows / 16 * 16;
  for (std::int64_t j = 0; j < cf; j += 8) {
    for (std::int64_t i = 0; i < rf; i += 16) {
      block8x8f<NT>(s + i * sld + j, sld, d + i + j * dld, dld);
      block8x8f<NT>(s + (i + 8) * sld + j, sld, d + i + 8 + j * dld, dld);
    }
  }
  if (cf < cols) {
    for (std::int64_t i = 0; i < rf; i += 16) {
      block8x8f<NT>(s + i * sld + last, sld, d + i + last * dld, dld);
      block8x8f<NT>(s + (i + 8) * sld + last, sld, d + i + 8 + last * dld, dld);
    }
  }
  scalar_tile(s, sld, d, dld, rf, rows, 0, cols);
}

#endif  // TENFERRO_X86

}  // namespace

TransposeIsa best_transpose_isa() {
#if TENFERRO_X86
  static const TransposeIsa best = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return TransposeIsa::Avx512;
    if (__builtin_cpu_supports("avx2")) return TransposeIsa::Avx2;
    return TransposeIsa::Scalar;
  }();
  return best;
#else
  return TransposeIsa::Scalar;
#endif
}

void transpose_tile(const void* s, std::int64_t sld, void* d, std::int64_t dld, std::int64_t rows,
                    std::int64_t cols, std::size_t item, bool streaming) {
  transpose_tile_with(best_transpose_isa(), s, sld, d, dld, rows, cols, item, streaming);
}

void transpose_tile_with(TransposeIsa isa, const void* s, std::int64_t sld, void* d,
                         std::int64_t dld, std::int64_t rows, std::int64_t cols, std::size_t item,
                         bool streaming) {
#if TENFERRO_X86
  // Streaming stores need each destination run's 64 bytes aligned: the
  // tile's start and every row's stride.
  const bool nt = streaming && reinterpret_cast<std::uintptr_t>(d) % 64 == 0 &&
                  (dld * static_cast<std::int64_t>(item)) % 64 == 0;
  if (item == 8 && isa != TransposeIsa::Scalar) {
    const auto* sp = static_cast<const double*>(s);
    auto* dp = static_cast<double*>(d);
    // Narrow tiles take the AVX2 strips on AVX-512 machines too (the 8 x 8
    // blocks walk columns over all of a tall tile's rows).
    if (isa == TransposeIsa::Avx512 && cols * 8 > kNarrowTileBytes) {
      nt ? tile8_avx512<true>(sp, sld, dp, dld, rows, cols)
         : tile8_avx512<false>(sp, sld, dp, dld, rows, cols);
    } else {
      nt ? tile8_avx2<true>(sp, sld, dp, dld, rows, cols)
         : tile8_avx2<false>(sp, sld, dp, dld, rows, cols);
    }
    return;
  }
  if (item == 4 && isa != TransposeIsa::Scalar) {
    const auto* sp = static_cast<const float*>(s);
    auto* dp = static_cast<float*>(d);
    nt ? tile4_avx2<true>(sp, sld, dp, dld, rows, cols)
       : tile4_avx2<false>(sp, sld, dp, dld, rows, cols);
    return;
  }
#else
  (void)isa;
  (void)streaming;
#endif
  scalar_any(s, sld, d, dld, rows, cols, item);
}

void transpose_fence() {
#if TENFERRO_X86
  _mm_sfence();
#endif
}

}  // namespace tenferro::detail
