#pragma once
// Private CPU kernels that run along one axis of a compact column-major
// tensor: cumulative sums/products and (partial) argsort. A compact tensor of
// shape [inner..., n, outer...] holds lane (i, o) at i + k * inner + o * inner * n.

#include <cstdint>

#include "tenferro/backend/cpu/cpu_backend.hpp"

namespace tenferro::cpu {

/// The extents around one axis of a compact tensor.
struct LaneShape {
  std::int64_t inner = 1;  // product of the extents before the axis
  std::int64_t n = 1;      // extent of the axis
  std::int64_t outer = 1;  // product of the extents after the axis
};
LaneShape lane_shape(const Tensor& x, std::int64_t axis);

/// out = running sums (`product` false) or products of x along the lanes,
/// from the end when `reverse`; x and out compact, of one dtype (i64, f32,
/// f64, c64 or c128), and the same tensor for a scan in place. Integer
/// arithmetic wraps.
void cumulate_lanes(CpuBackend& backend, const Tensor& x, const Tensor& out, const LaneShape& lanes,
                    bool product, bool reverse);

/// out (compact i64 [inner, k, outer]) = the first k indices that stably sort
/// each lane of the compact real tensor x, NaN largest; and, with `values`
/// (compact, x's dtype, out's shape), the values at those indices.
void argsort_lanes(CpuBackend& backend, const Tensor& x, const LaneShape& lanes, std::int64_t k,
                   bool descending, const Tensor& out, const Tensor* values);

}  // namespace tenferro::cpu
