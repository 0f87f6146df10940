#pragma once
// Shared helpers of the distributed suite (run under mpirun).

#include <gtest/gtest.h>

#include "tenferro/distributed/distributed.hpp"
#include "tenferro/tenferro.hpp"

namespace mpitest {

using namespace tenferro;

/// One eager runtime per process, one thread (the ranks share the cores).
inline EagerRuntimePtr runtime() {
  static const EagerRuntimePtr rt = EagerRuntime::make_cpu(CpuBackendOptions{1});
  return rt;
}

inline int world_size() {
  return dist::Communicator::world().size();
}

/// The same values on every rank (a seeded generator).
inline Tensor global_tensor(std::initializer_list<std::int64_t> shape, std::uint64_t seed) {
  Generator gen(seed);
  return randn(shape, f64, gen);
}

/// max |a - b| relative to 1 + max |b|.
inline double rel(const Tensor& a, const Tensor& b) {
  return max_abs_diff(a, b) / (1.0 + max_abs_diff(b, zeros(b.shape().span(), b.dtype())));
}

}  // namespace mpitest
