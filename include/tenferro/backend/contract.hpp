#pragma once
// The contraction vocabulary: which axes of dot_general's operands contract
// and which are batch axes (XLA's DotDimensionNumbers). The functions
// (dot_general, matmul) are in tenferro/ad/ops.hpp, in every tier.

#include "tenferro/core/small_vector.hpp"

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

}  // namespace tenferro
