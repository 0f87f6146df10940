#pragma once
// Shared helpers of the distributed suite (run under mpirun).

#include <gtest/gtest.h>

#include <functional>
#include <string>

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

/// Runs `f`, which must throw a tenferro::Error on every rank of `comm`:
/// the same kind and message everywhere (compared by hash).
inline ErrorKind same_error_everywhere(const std::function<void()>& f,
                                       const dist::Communicator& comm) {
  bool threw = false;
  ErrorKind kind = ErrorKind::Internal;
  std::string message;
  try {
    f();
  } catch (const Error& e) {
    threw = true;
    kind = e.kind();
    message = e.what();
  }
  int mine = threw ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm.handle());
  EXPECT_EQ(all, 1) << "a rank did not throw";
  unsigned long long h = std::hash<std::string>{}(message) ^ static_cast<unsigned long long>(kind);
  unsigned long long lo = 0, hi = 0;
  MPI_Allreduce(&h, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, comm.handle());
  MPI_Allreduce(&h, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm.handle());
  EXPECT_EQ(lo, hi) << "the ranks raised different errors; this one: " << message;
  return kind;
}

}  // namespace mpitest
