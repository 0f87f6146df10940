// Group 16 of the peer suite: cumsum along either axis of a 2048 x 2048
// matrix, a stable sort of 2^20 values and of the 1024 columns of a
// 1024 x 1024 matrix, and the top 16 of 2^20 values (f64). References are
// naive loops and std::stable_sort on the host copy of the input.

#include "scan_sort_cases.hpp"

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "tenferro/ad/ops.hpp"
#include "tenferro/backend/scan.hpp"

namespace bench_scan_sort {

using namespace tenferro;

namespace {

Tensor make(const std::vector<std::int64_t>& shape, const std::vector<double>& v) {
  return Tensor::from_col_major(Shape(shape.begin(), shape.end()), v);
}

// The lanes of axis 0 of a column-major [n, m] input, each sorted (lazily:
// only a selected case pays for it). descending reverses each lane.
std::function<double(std::int64_t)> sorted_ref(const std::vector<double>& v, std::int64_t n,
                                               std::int64_t keep, bool descending) {
  auto cache = std::make_shared<std::optional<std::vector<double>>>();
  return [&v, n, keep, descending, cache](std::int64_t q) {
    if (!*cache) {
      std::vector<double> out;
      for (std::size_t lane = 0; lane * static_cast<std::size_t>(n) < v.size(); ++lane) {
        std::vector<double> l(v.begin() + static_cast<std::ptrdiff_t>(lane * n),
                              v.begin() + static_cast<std::ptrdiff_t>((lane + 1) * n));
        std::stable_sort(l.begin(), l.end());
        if (descending) std::reverse(l.begin(), l.end());
        out.insert(out.end(), l.begin(), l.begin() + keep);
      }
      *cache = std::move(out);
    }
    return (**cache)[static_cast<std::size_t>(q)];
  };
}

}  // namespace

void run_cases(CpuBackend& cpu, const Runner& run) {
  {
    const std::int64_t n = 2048;
    const auto xv = bench::input_vector(n * n, 1);
    const Tensor x = make({n, n}, xv);
    // Our axis 0 is the contiguous one (peer dim 1 of the row-major array).
    run(
        "cumsum_axis0", "2048x2048", "", [&] { return cumsum(x, 0, cpu); },
        [&](std::int64_t q) {
          const std::int64_t i = q % n, j = q / n;
          double s = 0;
          for (std::int64_t k = 0; k <= i; ++k) s += xv[static_cast<std::size_t>(k + j * n)];
          return s;
        });
    run(
        "cumsum_axis1", "2048x2048", "", [&] { return cumsum(x, 1, cpu); },
        [&](std::int64_t q) {
          const std::int64_t i = q % n, j = q / n;
          double s = 0;
          for (std::int64_t k = 0; k <= j; ++k) s += xv[static_cast<std::size_t>(i + k * n)];
          return s;
        });
  }
  {
    const std::int64_t n = std::int64_t{1} << 20;
    const auto xv = bench::input_vector(n, 2);
    const Tensor x = make({n}, xv);
    run(
        "sort", "2^20", "", [&] { return sort(x, 0, cpu).first; }, sorted_ref(xv, n, n, false));
    run(
        "topk", "2^20", "k16", [&] { return topk(x, 16, 0, cpu).first; },
        sorted_ref(xv, n, 16, true));
  }
  {
    const std::int64_t n = 1024;
    const auto xv = bench::input_vector(n * n, 3);
    const Tensor x = make({n, n}, xv);
    run(
        "sort_axis0", "1024x1024", "", [&] { return sort(x, 0, cpu).first; },
        sorted_ref(xv, n, n, false));
  }
}

}  // namespace bench_scan_sort
