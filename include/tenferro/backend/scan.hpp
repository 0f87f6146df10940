#pragma once
// The scans' dtype rule, shared by the kernels and the primitives. The
// functions (cumsum, cumprod) are in tenferro/ad/ops.hpp, in every tier.

#include "tenferro/core/dtype.hpp"

namespace tenferro {

/// The dtype cumsum and cumprod accumulate and return: bool and integers in
/// i64, the other dtypes their own.
DType cumulative_result_dtype(DType dtype);

}  // namespace tenferro
