#pragma once
// The 2-D tile transposition under the permuted strided copy
// (tensor/strided_copy.hpp): d[i + j * dld] = s[i * sld + j] for i < rows,
// j < cols, elements of `item` bytes. 4- and 8-byte elements go through
// register-blocked transposes (AVX-512 or AVX2, picked once at load time),
// other sizes through a scalar loop. With `streaming`, destination lines that
// the kernel writes whole and 64-byte aligned take non-temporal stores (for
// outputs far larger than the cache: no read for ownership, no eviction of
// the source); call transpose_fence() once after the last streaming tile.
// Not installed.

#include <cstddef>
#include <cstdint>

namespace tenferro::detail {

void transpose_tile(const void* s, std::int64_t sld, void* d, std::int64_t dld, std::int64_t rows,
                    std::int64_t cols, std::size_t item, bool streaming);

/// The instruction sets of the kernels; transpose_tile uses the best one the
/// machine has (best_transpose_isa()).
enum class TransposeIsa { Scalar, Avx2, Avx512 };
TransposeIsa best_transpose_isa();

/// transpose_tile on the kernels of `isa`, which the machine must support
/// (tests run every supported one).
void transpose_tile_with(TransposeIsa isa, const void* s, std::int64_t sld, void* d,
                         std::int64_t dld, std::int64_t rows, std::int64_t cols, std::size_t item,
                         bool streaming);

/// Orders earlier streaming stores before later loads and stores (sfence).
void transpose_fence();

/// Tiles at most this many bytes wide (cols * item) are walked by strips of
/// rows in source order, so the caller can pass many rows at once.
inline constexpr std::int64_t kNarrowTileBytes = 512;

/// Outputs of at least this many bytes are written with streaming stores.
inline constexpr std::size_t kStreamingBytes = std::size_t{16} << 20;

}  // namespace tenferro::detail
