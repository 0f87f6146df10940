#pragma once
// Shared helpers for the traced-tier tests.

#include <gtest/gtest.h>

#include "example_families/example_families.hpp"
#include "tenferro/ad/program.hpp"
#include "test_util.hpp"

namespace ttest {

using namespace tenferro;

inline RuntimePtr cpu_runtime(CpuBackendOptions options = {}) {
  return Runtime::builder()
      .cpu(std::make_shared<CpuBackend>(options))
      .module(example::make_example_module())
      .build();
}

inline SymDim n_dim() { return SymDim::var("n"); }
inline SymDim m_dim() { return SymDim::var("m"); }

inline Tensor random(std::initializer_list<std::int64_t> shape, DType dtype, std::uint64_t seed) {
  Generator gen(seed);
  return randn(shape, dtype, gen);
}

/// Values of two tensors equal to the last bit (same dtype and shape).
inline void expect_identical(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.shape(), b.shape());
  EXPECT_EQ(max_abs_diff(a, b), 0.0);
}

}  // namespace ttest
