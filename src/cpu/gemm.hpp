#pragma once
// Internal batched GEMM entry point behind CpuBackend::gemm. Not installed.

#include <cstdint>

#include "tenferro/backend/cpu/cpu_backend.hpp"

namespace tenferro::cpu {

/// For every index b of `batch_shape`: C_b = op(A_b) op(B_b), op(A_b) m x k,
/// op(B_b) k x n, C compact [m, n, batch...] at `c`. Requires m, n, k > 0 and
/// a non-bool dtype. Floating and complex dtypes go to BLAS; integers to a
/// plain loop with wrap-around arithmetic.
void gemm_batched(CpuBackend& backend, DType dtype, std::int64_t m, std::int64_t n, std::int64_t k,
                  const GemmOperand& a, const GemmOperand& b, void* c, const Shape& batch_shape);

}  // namespace tenferro::cpu
