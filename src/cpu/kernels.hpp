#pragma once
// Internal CPU copy and fill kernels, shared by CpuBackend's kernels
// (cpu_kernels.cpp) and the other kernels of this folder. Not installed.

#include "tenferro/backend/cpu/cpu_backend.hpp"

namespace tenferro::cpu {

/// dst[i] = convert(src[i]) for two tensors of one shape, any strides and
/// dtypes (complex -> real keeps the real part, x -> bool is x != 0). Permuted
/// layouts use a cache-blocked kernel; large copies split across the pool.
/// dst must not overlap src.
void copy(CpuBackend& backend, const Tensor& src, const Tensor& dst);

/// Fills every element of dst with value converted to dst's dtype.
void fill(CpuBackend& backend, const Tensor& dst, Scalar value);

}  // namespace tenferro::cpu
