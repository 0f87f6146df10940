#pragma once
// Direct cumulative sums and products along one axis: explicit backend
// argument, no AD (the eager and traced forms are in tenferro/ad/ops.hpp).
//
// Axes are column-major tensor axes: PyTorch's dim d of a rank-r tensor is our
// axis r - 1 - d (negative axes count from the end). A rank-0 tensor takes
// axis 0 or -1 and is returned as is (converted). Dtypes follow PyTorch:
// bool, i32 and i64 accumulate in and return i64 (integer overflow wraps);
// f32, f64, c64 and c128 keep their dtype.

#include <cstdint>

#include "tenferro/backend/backend.hpp"

namespace tenferro {

/// out[..., k, ...] = x[..., 0, ...] + ... + x[..., k, ...] along `axis`
/// (torch.cumsum). With `reverse` the sums run from the end:
/// out[k] = x[k] + ... + x[n-1] (flip, cumsum, flip in one pass).
Tensor cumsum(const Tensor& x, std::int64_t axis, Backend& backend, bool reverse = false);
/// Cumulative product along `axis` (torch.cumprod); `reverse` as in cumsum.
Tensor cumprod(const Tensor& x, std::int64_t axis, Backend& backend, bool reverse = false);

/// The dtype cumsum/cumprod return for an input of `dtype`.
DType cumulative_result_dtype(DType dtype);

}  // namespace tenferro
