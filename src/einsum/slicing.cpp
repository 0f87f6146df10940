// Slicing: fixing a summed label to one index at a time divides every
// intermediate holding it by its extent; the slices' results add up to the
// whole. Labels are chosen greedily: the one that most reduces the sizes
// above the limit, then the one with the fewest flops over all slices.

#include <algorithm>
#include <cmath>
#include <limits>

#include "einsum/optimize.hpp"
#include "tenferro/core/error.hpp"

namespace tenferro::einsum_detail {
namespace {

// Per pairwise step of a path: the labels of its two operands and of its result.
struct Step {
  std::vector<std::int64_t> all, result;
  bool sums = false;
};

std::vector<Step> steps_of(const Network& net, const EinsumPath& path) {
  std::vector<std::vector<std::int64_t>> list = net.operands;
  for (auto& l : list) std::sort(l.begin(), l.end());
  std::vector<int> count(net.extents.size(), 0);
  for (const auto& l : list) {
    for (std::int64_t x : l) ++count[static_cast<std::size_t>(x)];
  }
  std::vector<char> out(net.extents.size(), 0);
  for (std::int64_t x : net.output) out[static_cast<std::size_t>(x)] = 1;
  std::vector<Step> steps;
  for (const auto& [i0, j0] : path) {
    const auto i = static_cast<std::size_t>(std::min(i0, j0)),
               j = static_cast<std::size_t>(std::max(i0, j0));
    Step s;
    std::set_union(list[i].begin(), list[i].end(), list[j].begin(), list[j].end(),
                   std::back_inserter(s.all));
    for (std::int64_t x : s.all) {
      const auto X = static_cast<std::size_t>(x);
      const int inside = static_cast<int>(std::binary_search(list[i].begin(), list[i].end(), x)) +
                         static_cast<int>(std::binary_search(list[j].begin(), list[j].end(), x));
      count[X] -= inside;
      if (out[X] || count[X] > 0) s.result.push_back(x), ++count[X];
    }
    s.sums = s.result.size() < s.all.size();
    list.erase(list.begin() + static_cast<std::ptrdiff_t>(j));
    list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
    list.push_back(s.result);
    steps.push_back(std::move(s));
  }
  return steps;
}

struct Cost {
  double flops = 0, largest = 0, excess = 0;  // excess: log2 elements above the limit, summed
};

Cost cost(const std::vector<Step>& steps, const std::vector<double>& ext, double slices,
          double out_size, double limit) {
  Cost c;
  for (const Step& s : steps) {
    double u = 1, r = 1;
    for (std::int64_t x : s.all) u *= ext[static_cast<std::size_t>(x)];
    for (std::int64_t x : s.result) r *= ext[static_cast<std::size_t>(x)];
    c.flops += u * (s.sums ? 2.0 : 1.0);
    c.largest = std::max(c.largest, r);
    if (r > limit) c.excess += std::log2(r / limit);
  }
  c.flops = c.flops * slices + (slices - 1) * out_size;
  return c;
}

}  // namespace

SliceChoice choose_slices(const Network& net, const EinsumPath& path, double limit, const char* op,
                          bool soft) {
  const std::vector<Step> steps = steps_of(net, path);
  std::vector<double> ext = net.extents;
  double out_size = 1;
  std::vector<char> in_output(ext.size(), 0);
  for (std::int64_t x : net.output) {
    out_size *= ext[static_cast<std::size_t>(x)];
    in_output[static_cast<std::size_t>(x)] = 1;
  }
  SliceChoice choice;
  Cost now = cost(steps, ext, 1, out_size, limit);
  while (now.largest > limit) {
    // Candidates: summed labels of the results above the limit.
    std::vector<char> candidate(ext.size(), 0);
    for (const Step& s : steps) {
      double r = 1;
      for (std::int64_t x : s.result) r *= ext[static_cast<std::size_t>(x)];
      if (r <= limit) continue;
      for (std::int64_t x : s.result) {
        const auto X = static_cast<std::size_t>(x);
        if (!in_output[X] && ext[X] > 1) candidate[X] = 1;
      }
    }
    std::int64_t best = -1;
    Cost best_cost;
    for (std::size_t x = 0; x < ext.size(); ++x) {
      if (!candidate[x]) continue;
      const double e = ext[x];
      ext[x] = 1;
      const Cost c = cost(steps, ext, choice.slices * e, out_size, limit);
      ext[x] = e;
      const bool better = best < 0 || c.excess < best_cost.excess - 1e-9 ||
                          (c.excess <= best_cost.excess + 1e-9 && c.flops < best_cost.flops);
      if (better) best = static_cast<std::int64_t>(x), best_cost = c;
    }
    if (best < 0 && soft) break;
    if (best < 0) {
      fail(ErrorKind::InvalidArgument, op, "the memory limit of ", limit,
           " elements per intermediate cannot be met by slicing summed labels: a result of ",
           now.largest,
           " elements holds only output labels; raise the limit or contract without one");
    }
    choice.slices *= ext[static_cast<std::size_t>(best)];
    ext[static_cast<std::size_t>(best)] = 1;
    choice.labels.push_back(best);
    now = best_cost;
  }
  choice.flops = now.flops;
  choice.largest = now.largest;
  return choice;
}

}  // namespace tenferro::einsum_detail
