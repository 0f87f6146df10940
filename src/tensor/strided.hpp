#pragma once
// Iteration over K strided operands sharing one shape. Axes of extent 1 are
// dropped and adjacent axes that are contiguous in every operand are merged,
// so a compact tensor becomes a single flat loop. The body receives runs along
// the innermost remaining axis: body(n, offsets, inner_strides), offsets in
// elements of each operand.

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>

#include "tenferro/core/small_vector.hpp"

namespace tenferro::detail {

template <std::size_t K>
struct StridedPlan {
  Shape shape;  // after coalescing; rank >= 1
  std::array<Strides, K> strides;
  std::int64_t numel = 1;

  StridedPlan(std::span<const std::int64_t> full_shape,
              const std::array<std::span<const std::int64_t>, K>& full_strides) {
    for (std::size_t d = 0; d < full_shape.size(); ++d) {
      numel *= full_shape[d];
      if (full_shape[d] == 1) continue;
      bool merge = !shape.empty();
      for (std::size_t k = 0; k < K && merge; ++k) {
        merge = strides[k].back() * shape.back() == full_strides[k][d];
      }
      if (merge) {
        shape.back() *= full_shape[d];
      } else {
        shape.push_back(full_shape[d]);
        for (std::size_t k = 0; k < K; ++k) strides[k].push_back(full_strides[k][d]);
      }
    }
    if (shape.empty()) {
      shape.push_back(1);
      for (std::size_t k = 0; k < K; ++k) strides[k].push_back(1);
    }
  }

  /// True when every operand is a flat unit-stride run.
  bool is_flat_unit() const {
    if (shape.size() != 1) return false;
    for (std::size_t k = 0; k < K; ++k)
      if (strides[k][0] != 1) return false;
    return true;
  }

  /// Visits elements [begin, end) of the column-major linear index space.
  template <class Body>
  void run(std::int64_t begin, std::int64_t end, Body&& body) const {
    if (begin >= end || numel == 0) return;
    const std::size_t nd = shape.size();
    SmallVector<std::int64_t, 8> idx(nd, 0);
    std::array<std::int64_t, K> off{};
    std::int64_t rem = begin;
    for (std::size_t d = 0; d < nd; ++d) {
      idx[d] = rem % shape[d];
      rem /= shape[d];
      for (std::size_t k = 0; k < K; ++k) off[k] += idx[d] * strides[k][d];
    }
    std::array<std::int64_t, K> inner{};
    for (std::size_t k = 0; k < K; ++k) inner[k] = strides[k][0];
    std::int64_t pos = begin;
    while (pos < end) {
      const std::int64_t n = std::min(shape[0] - idx[0], end - pos);
      body(n, off, inner);
      pos += n;
      for (std::size_t k = 0; k < K; ++k) off[k] += n * inner[k];
      idx[0] += n;
      // Carry into the outer axes.
      for (std::size_t d = 0; d + 1 < nd && idx[d] == shape[d]; ++d) {
        for (std::size_t k = 0; k < K; ++k) off[k] -= shape[d] * strides[k][d];
        idx[d] = 0;
        ++idx[d + 1];
        for (std::size_t k = 0; k < K; ++k) off[k] += strides[k][d + 1];
      }
    }
  }
  template <class Body>
  void run(Body&& body) const {
    run(0, numel, static_cast<Body&&>(body));
  }
};

}  // namespace tenferro::detail
