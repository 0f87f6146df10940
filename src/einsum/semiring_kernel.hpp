#pragma once
// What the semiring GEMM's driver (semiring_gemm.cpp) and its kernels share:
// the semirings' scalar facts, the register tiles and blocks, one product's
// operands, and the kernels' entry points, compiled once per instruction set
// (semiring_kernel_<set>.cpp, from semiring_kernel.inc). Private to
// src/einsum/.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#define TENFERRO_SEMIRING_INLINE inline __attribute__((always_inline))

// GCC on x86-64 builds the kernels for AVX2 and AVX-512 too and picks one
// at run time; elsewhere (and with clang) only the baseline is built.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define TENFERRO_SEMIRING_X86 1
#else
#define TENFERRO_SEMIRING_X86 0
#endif

namespace tenferro::einsum_detail::semiring {

// ---- vectors ----------------------------------------------------------------------

template <class T, int Bytes>
struct VecOf {
  typedef T type __attribute__((vector_size(Bytes)));
};
template <class T, int Bytes>
using Vec = typename VecOf<T, Bytes>::type;

template <std::size_t Size>
using SignedOf = std::conditional_t<Size == 1, std::int8_t,
                                    std::conditional_t<Size == 4, std::int32_t, std::int64_t>>;

// ---- semirings ----------------------------------------------------------------------

// Max-plus (kMax) or min-plus over f32, f64 or i64; the vector arithmetic
// is in semiring_kernel.inc.
template <class T, bool Max>
struct Tropical {
  using value_type = T;
  static constexpr bool kOrAnd = false;
  static constexpr bool kMax = Max;
  static constexpr T zero() {
    if constexpr (std::is_floating_point_v<T>) {
      return Max ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    } else {
      return Max ? std::numeric_limits<T>::min() : std::numeric_limits<T>::max();
    }
  }
  static T pack(T x) { return x; }
};

// Or-and over bool bytes (packed as 0 / 1).
struct OrAnd {
  using value_type = std::uint8_t;
  static constexpr bool kOrAnd = true;
  static constexpr bool kMax = true;
  static constexpr std::uint8_t zero() { return 0; }
  static std::uint8_t pack(std::uint8_t x) { return x != 0 ? 1 : 0; }
};

// ---- tiles and blocks ---------------------------------------------------------------

enum class Mode { Plain, Track, Count };

// The register tile: MV vectors of rows by NR columns of accumulators (plus
// as many index or count vectors in Track and Count), sized to the register
// file: 32 registers with AVX-512, 16 otherwise.
template <class T, int Bytes, Mode M>
struct Tile {
  static constexpr int kLanes = M == Mode::Count ? Bytes / 8 : Bytes / int(sizeof(T));
  static constexpr int kMV = M == Mode::Plain || Bytes == 64 ? 2 : 1;
  static constexpr int kMR = kMV * kLanes;
  static constexpr int kNR =
      M == Mode::Plain ? (Bytes == 64 ? 12 : 6) : (Bytes == 64 && M == Mode::Track ? 6 : 4);
  // Depth of a block: a B micro-panel (kNR x kKC) stays in L1, an A block
  // (kMC x kKC) in L2, a B panel (kKC x kNC) in L3.
  static constexpr std::int64_t kKC = M == Mode::Count ? 256 : 2048 / std::int64_t(sizeof(T));
  static constexpr std::int64_t kMC = (256 + kMR - 1) / kMR * kMR;
  static constexpr std::int64_t kNC =
      (std::int64_t{2} << 20) / (kKC * std::int64_t(sizeof(T))) / kNR * kNR;
};

struct Operand {
  const char* data = nullptr;
  bool trans = false;
  std::int64_t ld = 1;
};

// One product of the batch: operands and outputs already at that matrix.
struct Job {
  std::int64_t m = 0, n = 0, k = 0;
  Operand a, b, a_counts, b_counts;
  char* c = nullptr;
  double* c_counts = nullptr;
  std::int64_t* argbest = nullptr;
};

// The thread's memory for packed panels (semiring_gemm.cpp): at least
// `bytes` bytes aligned to 64, kept between calls (a fresh allocation per call
// costs page faults: a 192^2 product spent more time in them than computing);
// valid until the thread's next call. The block sizes bound it to a few MiB.
char* thread_pack_arena(std::size_t bytes);

// Bytes of n values of T, rounded up to whole 64-byte lines (so that arrays
// carved one after another out of the arena stay aligned).
template <class T>
std::size_t aligned_bytes(std::int64_t n) {
  return (static_cast<std::size_t>(n) * sizeof(T) + 63) / 64 * 64;
}

// Where one register tile reads and writes C: values at c (leading
// dimension ldc), argbest / counts alike (Track / Count). `first`: the first
// depth block, which starts from the zero instead of C.
template <class T>
struct TileOut {
  T* c;
  std::int64_t* argbest;
  double* counts;
  std::int64_t ldc;
  std::int64_t p0;
  bool first;
};

/// Runs columns [j0, j1) of one product.
using ColumnsFn = void (*)(const Job&, std::int64_t, std::int64_t);

using MaxPlusF32 = Tropical<float, true>;
using MinPlusF32 = Tropical<float, false>;
using MaxPlusF64 = Tropical<double, true>;
using MinPlusF64 = Tropical<double, false>;
using MaxPlusI64 = Tropical<std::int64_t, true>;
using MinPlusI64 = Tropical<std::int64_t, false>;

// Every (semiring, mode) the driver runs: X(rule, mode).
#define TENFERRO_SEMIRING_KERNELS(X) \
  X(MaxPlusF32, Mode::Plain)         \
  X(MinPlusF32, Mode::Plain)         \
  X(MaxPlusF64, Mode::Plain)         \
  X(MinPlusF64, Mode::Plain)         \
  X(MaxPlusI64, Mode::Plain)         \
  X(MinPlusI64, Mode::Plain)         \
  X(OrAnd, Mode::Plain)              \
  X(MaxPlusF32, Mode::Track)         \
  X(MinPlusF32, Mode::Track)         \
  X(MaxPlusF64, Mode::Track)         \
  X(MinPlusF64, Mode::Track)         \
  X(MaxPlusI64, Mode::Track)         \
  X(MinPlusI64, Mode::Track)         \
  X(MaxPlusF32, Mode::Count)         \
  X(MaxPlusF64, Mode::Count)         \
  X(MaxPlusI64, Mode::Count)

// The kernels of one instruction set, instantiated in its
// semiring_kernel_<set>.cpp for every entry of TENFERRO_SEMIRING_KERNELS.
namespace baseline {
template <class R, Mode M>
void columns(const Job& job, std::int64_t j0, std::int64_t j1);
}  // namespace baseline
#if TENFERRO_SEMIRING_X86
namespace avx2 {
template <class R, Mode M>
void columns(const Job& job, std::int64_t j0, std::int64_t j1);
}  // namespace avx2
namespace avx512 {
template <class R, Mode M>
void columns(const Job& job, std::int64_t j0, std::int64_t j1);
}  // namespace avx512
#endif

}  // namespace tenferro::einsum_detail::semiring
