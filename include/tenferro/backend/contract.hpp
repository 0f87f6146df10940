#pragma once
// Direct contractions on BLAS GEMM: explicit backend argument, no AD.

#include <span>

#include "tenferro/backend/backend.hpp"

namespace tenferro {

/// Dimension numbers of dot_general. Contracting axes pair up in order, batch
/// axes pair up in order. The result is [lhs free..., rhs free..., batch...]
/// (batch last, so each matrix of a batch is contiguous column-major); free
/// axes keep their relative order.
struct DotDims {
  Axes lhs_contracting;
  Axes rhs_contracting;
  Axes lhs_batch;
  Axes rhs_batch;
};

/// General contraction. Operands promote to a common dtype (bool rejected;
/// integer contractions use a plain loop, floating and complex ones GEMM with
/// transposes folded into the GEMM flags where the strides allow).
Tensor dot_general(const Tensor& lhs, const Tensor& rhs, const DotDims& dims, Backend& backend);

/// Matrix product with batch-last broadcasting: [m, k, batch...] x
/// [k, n, batch...] -> [m, n, batch...] (batch extents broadcast, right-aligned
/// as in NumPy). A rank-1 lhs [k] acts as a row vector and a rank-1 rhs [k] as a
/// column vector; the vector axis is dropped from the result.
Tensor matmul(const Tensor& a, const Tensor& b, Backend& backend);

}  // namespace tenferro
