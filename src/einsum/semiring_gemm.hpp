#pragma once
// GEMM over a semiring (tropical max-plus / min-plus, boolean or-and) and over
// the counting tropical semiring: the kernel layer of einsum's semiring
// contractions (docs/tropical.md). Private to src/einsum/.
//
// Operands are described as for Backend::gemm: column-major with a leading
// dimension, read transposed when `trans` is set, batch strides in elements
// (any sign, 0 for a broadcast axis); C is compact [m, n, batch...].
//
// The kernel packs panels of A and B like a BLAS and runs a register-tiled
// micro-kernel, built for AVX-512, AVX2 and the baseline and picked once per
// process from the CPU. Every element of C reduces over k in increasing
// order on one thread, whatever the thread count, so results (values,
// argbest, counts) are the same bits with any number of threads.

#include <cstdint>

#include "tenferro/backend/backend.hpp"
#include "tenferro/backend/cpu/cpu_backend.hpp"
#include "tenferro/core/dtype.hpp"
#include "tenferro/einsum/semiring.hpp"

namespace tenferro::einsum_detail {

/// For every index b of `batch_shape`: C_b[i, j] = add_p mul(op(A_b)[i, p],
/// op(B_b)[p, j]) over p in [0, k), in semiring `s`; m, n, k >= 0 (k == 0
/// gives the semiring zero).
///
/// dtypes: MaxPlus and MinPlus over F32, F64 and I64; OrAnd over Bool (read
/// as zero / non-zero bytes, written as 0 / 1). Anything else throws
/// (Unsupported for Standard, which is Backend::gemm's job; DTypeMismatch for
/// a dtype the semiring does not have).
///
/// `argbest` (nullable; MaxPlus and MinPlus only): compact [m, n, batch...],
/// the k index of the winning term of each element. Ties go to the smallest
/// k; an element that no term beats the zero with gets 0.
///
/// Floating point: a term is a[i, p] + b[p, j] rounded once; a NaN term never
/// wins (a comparison with NaN is false, as in std::fmax), so NaN entries are
/// skipped, and (-inf) + (+inf) is skipped like the zero it stands for.
/// i64: a term with an operand equal to the semiring zero (INT64_MIN for
/// MaxPlus, INT64_MAX for MinPlus) is the zero, never a wrapped sum; any other
/// sum must fit in i64 (the caller's duty: it wraps otherwise).
///
/// `threads` (nullable: serial) splits the columns of large products and the
/// batch over the CPU backend's pool.
void semiring_gemm(Semiring s, DType dtype, std::int64_t m, std::int64_t n, std::int64_t k,
                   const GemmOperand& a, const GemmOperand& b, void* c, const Shape& batch_shape,
                   std::int64_t* argbest, CpuBackend* threads);

/// The counting tropical semiring: a value (max-plus) with the number of
/// ways it is attained. For every batch index,
///   c_values[i, j] = max_p a_values[i, p] + b_values[p, j]
///   c_counts[i, j] = sum of a_counts[i, p] * b_counts[p, j] over the
///                    maximising p,
/// with the values' dtype `value_dtype` (F32, F64 or I64) and the counts F64
/// holding integers. Each count has its own descriptor (a value array and its
/// count array usually share ld, trans and strides, but need not). k == 0
/// (and a row whose terms are all -inf / INT64_MIN) gives value -inf
/// (INT64_MIN) with count 0 plus the counts of such terms: -inf terms tie
/// with each other like any equal values.
///
/// The value is exact (max and one rounded +, as semiring_gemm). Counts are
/// exact while every product and partial sum is below 2^53; beyond that
/// they round like any f64 sum (and overflow to +inf past 1.8e308). NaN value
/// terms are skipped with their counts.
void counting_gemm(DType value_dtype, std::int64_t m, std::int64_t n, std::int64_t k,
                   const GemmOperand& a_values, const GemmOperand& a_counts,
                   const GemmOperand& b_values, const GemmOperand& b_counts, void* c_values,
                   double* c_counts, const Shape& batch_shape, CpuBackend* threads);

/// Tests only: 512, 256 or 128 makes the kernels above use at most AVX-512,
/// AVX2 or the baseline instruction set (where the CPU has it), 0 (the
/// default) the best the CPU has. Takes effect at the next call.
void set_semiring_isa_for_tests(int max_vector_bits);

}  // namespace tenferro::einsum_detail
