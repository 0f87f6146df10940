#pragma once
// A prepared einsum program (program.hpp) run over a semiring other than the
// standard one (docs/tropical.md): the same steps, with every sum a semiring
// addition (max, min, or) and every product a semiring multiplication (+,
// and); the pairwise steps and the single-operand reductions run on the
// semiring GEMM kernel (semiring_gemm.hpp), the slices combine by the
// semiring addition. The tropical derivatives route through the winning
// terms (ties: the first term in the kernel's order, the first slice).
// Private to src/einsum/; host memory (the CPU backend) only.

#include <vector>

#include "einsum/program.hpp"
#include "tenferro/backend/cpu/cpu_backend.hpp"
#include "tenferro/einsum/semiring.hpp"

namespace tenferro::einsum_detail {

/// DTypeMismatch when semiring `s` (not Standard) has no `dtype`: MaxPlus and
/// MinPlus take f32, f64 and i64, OrAnd bool. `op` names the caller.
void check_semiring_dtype(Semiring s, DType dtype, const char* op);

/// The CPU backend that runs semiring contractions; Unsupported naming
/// `backend`'s kind for any other.
CpuBackend& semiring_backend(Backend& backend, const char* op);

/// The program's result over `s` (xs: the prepared shapes and dtype).
Tensor run_semiring(const Program& p, Semiring s, const std::vector<Tensor>& xs, CpuBackend& cpu);

/// The tangent of run_semiring at xs along ts (one per operand; undefined:
/// zero): each result element's tangent is the sum of the tangents of the
/// entries of its winning term. MaxPlus and MinPlus over f32 and f64.
Tensor semiring_jvp(const Program& p, Semiring s, const std::vector<Tensor>& xs,
                    const std::vector<Tensor>& ts, CpuBackend& cpu);

/// The cotangents of the operands for the result's cotangent `ct`: each
/// result element's cotangent goes to every entry of its winning term (a
/// network's value thus marks one optimal configuration with ones).
/// MaxPlus and MinPlus over f32 and f64.
std::vector<Tensor> semiring_vjp(const Program& p, Semiring s, const std::vector<Tensor>& xs,
                                 const Tensor& ct, CpuBackend& cpu);

/// The counting tropical run (einsum_count): values over MaxPlus or MinPlus
/// with the number of terms attaining each (f64).
CountedTensor run_counting(const Program& p, Semiring s, const std::vector<Tensor>& xs,
                           CpuBackend& cpu);

}  // namespace tenferro::einsum_detail
