// einsum's integer-label form (tenferro::EinsumLabels), decoded from the
// bytes: 1-6 operands of rank 0-4 over a few small labels plus the extremes
// of int64, an explicit or implicit output, and shapes that mostly agree
// with the labels; see einsum_check.hpp for what is checked.

#include <cstdint>
#include <limits>
#include <map>
#include <vector>

#include "einsum_check.hpp"
#include "fuzz_input.hpp"

namespace {

std::int64_t label(tenferro_fuzz::FuzzInput& in) {
  const int v = in.byte();
  if (v < 240) return v % 10 - 2;  // -2..7: labels shared between operands
  switch (v % 4) {
    case 0:
      return std::numeric_limits<std::int64_t>::min();
    case 1:
      return std::numeric_limits<std::int64_t>::max();
    case 2:
      return std::int64_t{1} << 40;
    default:
      return in.i64();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tenferro_fuzz::FuzzInput in(data, size);
  tenferro::EinsumLabels labels;
  const int n = in.range(1, 6);
  for (int k = 0; k < n; ++k) {
    std::vector<std::int64_t> term;
    const int rank = in.range(0, 4);
    for (int a = 0; a < rank; ++a) term.push_back(label(in));
    labels.inputs.push_back(term);
  }
  if (in.flag()) {
    labels.output.emplace();
    const int rank = in.range(0, 4);
    for (int a = 0; a < rank; ++a) labels.output->push_back(label(in));
  }
  tenferro_fuzz::ExtentBudget budget(4096);
  std::map<std::int64_t, std::int64_t> extent;
  std::vector<tenferro::Shape> shapes;
  for (const auto& term : labels.inputs) {
    tenferro::Shape shape;
    for (std::int64_t l : term) {
      auto it = extent.find(l);
      if (it == extent.end()) it = extent.emplace(l, budget.draw(in)).first;
      shape.push_back(in.range(0, 31) == 31 ? in.range(0, 3) : it->second);
    }
    const int jitter = in.range(0, 31);
    if (jitter == 30) shape.push_back(1);
    if (jitter == 31 && !shape.empty()) shape.pop_back();
    shapes.push_back(shape);
  }
  tenferro_fuzz::check_einsum(labels, shapes, in);
  return 0;
}
