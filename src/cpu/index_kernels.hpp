#pragma once
// Private CPU kernels behind the structural ops that cpu::copy/cpu::fill do not
// cover: index normalisation, gather/scatter along an axis, triangle masking and
// the safe lossy cast. Not installed; CpuBackend's kernels call them.

#include <cstdint>

#include "tenferro/backend/cpu/cpu_backend.hpp"

namespace tenferro::cpu {

/// A fresh compact i64 copy of `index` (i32 or i64, any layout) with negative
/// entries wrapped by `extent`. An entry outside [-extent, extent) throws
/// AxisOutOfBounds naming the index, `axis` and `extent` before anything is
/// written, so callers validate all indices before touching their outputs.
Tensor normalize_indices(CpuBackend& backend, const Tensor& index, std::int64_t extent,
                         std::int64_t axis, const char* op);

/// out[i] = x[i with coordinate `axis` replaced by index[i]]. `index` is i64,
/// normalised, with out's shape (stride 0 allowed); x has out's dtype and shape
/// except along `axis`.
void gather_along_axis(CpuBackend& backend, const Tensor& x, const Tensor& index, std::int64_t axis,
                       const Tensor& out);

/// out[i with coordinate `axis` replaced by index[i]] += src[i]. `index`
/// (normalised i64) and src share a shape whose extents off `axis` are <= out's;
/// src has out's dtype. Deterministic: contributions are added in axis order.
void scatter_add_along_axis(CpuBackend& backend, const Tensor& src, const Tensor& index,
                            std::int64_t axis, const Tensor& out);

/// Zeroes the entries of the compact matrices [m, n, batch...] in `out` outside
/// the lower (keep_lower) or upper triangle bounded by diagonal k.
void zero_triangle(CpuBackend& backend, const Tensor& out, std::int64_t k, bool keep_lower);

/// dst = src converted to dst's dtype like cpu::copy, except that float or
/// complex -> integer is defined for every value: truncation toward zero,
/// saturation at the integer range, and NaN/inf -> 0 (a plain static_cast would
/// be undefined behaviour there).
void cast_copy(CpuBackend& backend, const Tensor& src, const Tensor& dst);

}  // namespace tenferro::cpu
