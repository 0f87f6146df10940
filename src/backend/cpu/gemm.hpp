#pragma once
// Internal batched GEMM entry point used by dot_general/matmul. Not installed.

#include <cstdint>

#include "tenferro/backend/cpu/cpu_backend.hpp"

namespace tenferro::cpu {

/// One GEMM operand. Element (0, 0) of batch 0 lives at `data`; the stored
/// matrix is column-major with leading dimension `ld`, and the GEMM reads it
/// transposed when `trans` is set. `batch_strides` (elements, any sign, 0 for a
/// broadcast axis) move between the matrices of the batch.
struct GemmOperand {
  const void* data = nullptr;
  bool trans = false;
  std::int64_t ld = 1;
  Strides batch_strides;
};

/// For every index b of `batch_shape`: C_b = op(A_b) op(B_b), op(A_b) m x k,
/// op(B_b) k x n, C compact [m, n, batch...] at `c`. Requires m, n, k > 0 and
/// a non-bool dtype. Floating and complex dtypes go to BLAS; integers to a
/// plain loop with wrap-around arithmetic.
void gemm_batched(CpuBackend& backend, DType dtype, std::int64_t m, std::int64_t n, std::int64_t k,
                  const GemmOperand& a, const GemmOperand& b, void* c, const Shape& batch_shape);

}  // namespace tenferro::cpu
