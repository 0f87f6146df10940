#pragma once
// What the primitives' execute hooks share: the conversions and copies that
// bring operands to a kernel's contract (the operand check itself,
// detail::require_operand, is backend.hpp's).

#include <string_view>

#include "tenferro/backend/backend.hpp"

namespace tenferro::detail {

/// `t` in dtype `d`: itself, or a compact converted copy on `backend`.
Tensor as_dtype(Backend& backend, const Tensor& t, DType d);
/// A fresh compact copy of `view` (any strides) in `dtype`.
Tensor materialize(Backend& backend, const Tensor& view, DType dtype);
inline Tensor materialize(Backend& backend, const Tensor& view) {
  return materialize(backend, view, view.dtype());
}
/// The lane axis of a scan or sort: normalised, and 0 for a rank-0 tensor
/// (one lane of length 1; PyTorch accepts dim 0 or -1 there).
std::int64_t lane_axis(const Tensor& x, std::int64_t axis, std::string_view op);

}  // namespace tenferro::detail
