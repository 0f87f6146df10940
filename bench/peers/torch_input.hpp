#pragma once
// The libtorch side's inputs, shared by libtorch_bench.cpp and libtorch_ab.cpp:
// our column-major tensor of shape S as the row-major tensor of shape
// reversed(S) over the same numbers (bench::input_vector).

#include <torch/torch.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "../cases/harness.hpp"

namespace bench {

inline torch::Tensor torch_input(const std::vector<std::int64_t>& shape, std::int64_t off) {
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  auto v = input_vector(n, off);
  auto t = torch::empty(reversed(shape), torch::kFloat64);
  std::copy(v.begin(), v.end(), t.data_ptr<double>());
  return t;
}

}  // namespace bench
