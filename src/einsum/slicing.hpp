#pragma once
// Running a sliced contraction (the labels come from choose_slices in
// src/einsum/slicing.cpp): every slice is a static slice of the operands
// that hold a sliced label, contracted along the same path; the results add
// up. Written over the AD ops, so derivatives come through slice and add.
// The slices run one after another (each step already uses the backend's
// threads). Private to src/einsum/.

#include <algorithm>
#include <optional>
#include <vector>

#include "einsum/common.hpp"
#include "tenferro/ad/ops.hpp"
#include "tenferro/core/error.hpp"

namespace tenferro::einsum_detail {

// An intermediate and its dense labels (one per axis).
template <AdTensor T>
struct LabelledTensor {
  T x;
  std::vector<std::int64_t> labels;
};

// Runs `contract` on every slice of `list` along the sliced labels (static
// slices of the operands that hold them) and adds the results, serially.
template <AdTensor T, class F>
LabelledTensor<T> contract_slices(const std::vector<LabelledTensor<T>>& list,
                                  const std::vector<std::int64_t>& sliced, const Analysis& a,
                                  F&& contract) {
  auto extent = [&](std::int64_t d) {
    const auto e = a.extent[static_cast<std::size_t>(d)];
    if (!e) {
      fail(ErrorKind::InvalidArgument, "einsum", "memory_limit slices label ",
           a.ids[static_cast<std::size_t>(d)],
           " whose extent is symbolic; bind the extents first or drop the limit");
    }
    return *e;
  };
  std::vector<std::int64_t> index(sliced.size(), 0);
  std::optional<LabelledTensor<T>> total;
  for (;;) {
    std::vector<LabelledTensor<T>> part = list;
    for (LabelledTensor<T>& it : part) {
      Shape start(it.labels.size(), 0), limit;
      bool cut = false;
      for (std::size_t q = 0; q < it.labels.size(); ++q) {
        limit.push_back(extent(it.labels[q]));
        const auto k = static_cast<std::size_t>(
            std::find(sliced.begin(), sliced.end(), it.labels[q]) - sliced.begin());
        if (k < sliced.size()) {
          start[q] = index[k], limit[q] = index[k] + 1;
          cut = true;
        }
      }
      if (cut) it.x = slice(it.x, start, limit);
    }
    LabelledTensor<T> r = contract(std::move(part));
    if (total) {
      total->x = add(total->x, r.x);
    } else {
      total = std::move(r);
    }
    std::size_t k = 0;
    while (k < sliced.size() && ++index[k] == extent(sliced[k])) index[k++] = 0;
    if (k == sliced.size()) break;
  }
  return *total;
}

}  // namespace tenferro::einsum_detail
