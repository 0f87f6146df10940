#pragma once
// CPU reduction kernels behind CpuBackend::reduce (src/backend/reduce.cpp's ops).
// The op layer validates and converts; these only compute. `reduced[d]` marks
// the reduced axes of x; `out` is a compact tensor holding the kept extents in
// their original order (with or without keepdim: the memory is the same).

#include <cstdint>
#include <span>

#include "tenferro/backend/cpu/cpu_backend.hpp"
#include "tenferro/backend/reduce.hpp"

namespace tenferro::cpu {

/// out = reduction of x (Sum, Prod, Max, Min, All or Any; mean and logsumexp
/// below); out has x's dtype. Sum/Prod: i64, f32, f64, c64, c128;
/// Max/Min: bool, i32, i64, f32, f64 (NaN-propagating); All/Any: bool.
/// An empty reduction writes the identity (Max/Min: the lowest/highest value).
void reduce_axes(CpuBackend& cpu, ReduceOp kind, const Tensor& x, std::span<const bool> reduced,
                 const Tensor& out);

/// Sum divided by the reduced count (NaN for an empty reduction); x inexact.
void mean_axes(CpuBackend& cpu, const Tensor& x, std::span<const bool> reduced, const Tensor& out);

/// Two-pass variance mean(|x - mean|^2) with the divisor max(N - correction, 0),
/// square-rooted when take_sqrt. x inexact; out has the real dtype of x.
void var_axes(CpuBackend& cpu, const Tensor& x, std::span<const bool> reduced, const Tensor& out,
              double correction, bool take_sqrt);

/// max + log(sum(exp(x - max))); a non-finite max is the result itself. x f32/f64.
void logsumexp_axes(CpuBackend& cpu, const Tensor& x, std::span<const bool> reduced,
                    const Tensor& out);

/// Index (i64) of the first maximum/minimum along `axis` (non-negative, extent
/// >= 1); NaN counts as the extreme. x bool, i32, i64, f32 or f64.
void arg_reduce(CpuBackend& cpu, bool is_max, const Tensor& x, std::int64_t axis,
                const Tensor& out);

}  // namespace tenferro::cpu
