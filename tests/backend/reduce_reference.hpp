#pragma once
// Reference helpers shared by the reduction tests.

#include <vector>

#include "test_util.hpp"

namespace tftest {

using AxisList = std::vector<std::int64_t>;

// The elements of t in column-major order, converted to V.
template <class V>
std::vector<V> values_as(const tenferro::Tensor& t) {
  tenferro::Tensor tmp = tenferro::zeros(t.shape(), tenferro::dtype_of_v<V>);
  tenferro::Tensor::copy_into(t, tmp);
  return tmp.to_vector<V>();
}

// The values of x grouped by output element (kept axes, column-major), each
// group in logical order of the reduced axes.
template <class V>
std::vector<std::vector<V>> group_values(const tenferro::Tensor& x, const AxisList& axes) {
  std::vector<bool> mask(static_cast<std::size_t>(x.rank()), false);
  for (auto a : axes) mask[static_cast<std::size_t>(a < 0 ? a + x.rank() : a)] = true;
  std::int64_t num_out = 1;
  for (std::size_t d = 0; d < mask.size(); ++d)
    if (!mask[d]) num_out *= x.shape()[d];
  std::vector<std::vector<V>> groups(static_cast<std::size_t>(num_out));
  const auto values = values_as<V>(x);
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    const auto idx = unravel(i, x.shape());
    std::int64_t o = 0, stride = 1;
    for (std::size_t d = 0; d < mask.size(); ++d) {
      if (mask[d]) continue;
      o += idx[d] * stride;
      stride *= x.shape()[d];
    }
    groups[static_cast<std::size_t>(o)].push_back(values[static_cast<std::size_t>(i)]);
  }
  return groups;
}

}  // namespace tftest
