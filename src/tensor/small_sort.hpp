#pragma once
// A stable sort for the short ranges of axis bookkeeping (a tensor's axes,
// a contraction's label pairs). std::stable_sort asks the allocator for a
// scratch buffer on every call, even for three elements; per-op planning
// calls it several times, so that allocation showed in the eager overhead.
// Not installed.

#include <iterator>
#include <utility>

namespace tenferro::detail {

/// Sorts [first, last) by `less`, keeping equal elements in their order
/// (the same permutation as std::stable_sort). Insertion sort: quadratic,
/// meant for ranges of a few dozen elements at most; allocates nothing.
template <class It, class Less>
void small_stable_sort(It first, It last, Less less) {
  if (first == last) return;
  for (It i = std::next(first); i != last; ++i) {
    auto value = std::move(*i);
    It j = i;
    // Move greater elements right; stop at an element that is not greater
    // (equal elements keep their order).
    for (It prev = std::prev(j); less(value, *prev); prev = std::prev(j)) {
      *j = std::move(*prev);
      j = prev;
      if (j == first) break;
    }
    *j = std::move(value);
  }
}

}  // namespace tenferro::detail
