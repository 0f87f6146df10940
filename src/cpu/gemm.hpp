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

/// The forms of the register kernel for real GEMMs with every side <= 16:
/// 32-byte vectors two columns at a time (built for AVX2 and the baseline) or
/// 64-byte vectors eight columns at a time (AVX-512). gemm_batched takes the
/// widest one the processor has; tests run each one here.
enum class SmallGemmForm { Vec32, Vec64 };

/// Whether this build and processor can run `form`.
bool small_gemm_form_available(SmallGemmForm form);

/// C = A B with the small kernel in `form`: compact column-major f32 or f64
/// A (m x k), B (k x n), C (m x n), every side in [1, 16]. Throws
/// Unsupported when `form` is not available and InvalidArgument for other
/// dtypes or sides.
void small_gemm_with(SmallGemmForm form, DType dtype, std::int64_t m, std::int64_t n,
                     std::int64_t k, const void* a, const void* b, void* c);

}  // namespace tenferro::cpu
