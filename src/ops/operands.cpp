#include "ops/operands.hpp"

#include <string>

namespace tenferro::detail {

Tensor as_dtype(Backend& backend, const Tensor& t, DType d) {
  if (t.dtype() == d) return t;
  return materialize(backend, t, d);
}

Tensor materialize(Backend& backend, const Tensor& view, DType dtype) {
  Tensor out = backend.empty(view.shape(), dtype);
  backend.copy(view, out);
  return out;
}

std::int64_t lane_axis(const Tensor& x, std::int64_t axis, std::string_view op) {
  if (x.rank() == 0) {
    if (axis != 0 && axis != -1) {
      fail(ErrorKind::AxisOutOfBounds, std::string(op), "axis ", axis,
           " is out of range for a rank-0 tensor; use 0 or -1");
    }
    return 0;
  }
  return normalize_axis(axis, x.rank(), std::string(op).c_str());
}

}  // namespace tenferro::detail
