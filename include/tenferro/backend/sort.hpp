#pragma once
// Direct sorting along one axis: explicit backend argument, no AD (the eager
// and traced forms, differentiable in the values, are in tenferro/ad/ops.hpp).
//
// Axes are column-major tensor axes: PyTorch's dim d of a rank-r tensor is our
// axis r - 1 - d, so PyTorch's default dim = -1 is our axis 0. The order is
// PyTorch's stable sort: equal elements keep their original order (in both
// directions), NaN counts as larger than every number (last when ascending,
// first when descending), -0.0 equals 0.0. Indices are i64. Complex tensors
// are not ordered (DTypeMismatch); bool and integer dtypes sort as numbers.

#include <cstdint>
#include <utility>

#include "tenferro/backend/backend.hpp"

namespace tenferro {

/// Indices (i64, x's shape) that sort x along `axis` (torch.argsort(stable=True)).
Tensor argsort(const Tensor& x, std::int64_t axis, Backend& backend, bool descending = false);
/// {values, indices} of x sorted along `axis` (torch.sort(stable=True)).
std::pair<Tensor, Tensor> sort(const Tensor& x, std::int64_t axis, Backend& backend,
                               bool descending = false);
/// {values, indices} of the k largest (smallest when !largest) entries along
/// `axis`, in sorted order; ties keep the lower index first (torch.topk with
/// sorted=True). 0 <= k <= extent of the axis, else InvalidArgument.
std::pair<Tensor, Tensor> topk(const Tensor& x, std::int64_t k, std::int64_t axis, Backend& backend,
                               bool largest = true);

namespace detail {
/// The kernel behind argsort and topk: the first k sorting indices along
/// `axis` (k < 0: all of them).
Tensor argsort_prefix(const Tensor& x, std::int64_t axis, std::int64_t k, bool descending,
                      Backend& backend);
}  // namespace detail

}  // namespace tenferro
