#pragma once
// What the distributed benchmarks share (groups 20 and 21:
// distributed_bench.cpp, distributed_linalg_bench.cpp): the command line,
// the slowest rank's time of one call, the check against one process.

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "tenferro/distributed/distributed.hpp"
#include "tenferro/tenferro.hpp"

namespace dist_bench {

struct Setup {
  bool dist = false;
  int threads = 1;
  std::int64_t block = 0;  ///< --block NB, where the benchmark takes one
  bool block_given = false;
  bool quick = false;
  bool smoke = false;
};

/// --mode local|dist [--threads T] [--block NB] [--quick|--smoke]; --block
/// only where `with_block` (default `block`). Exit 2 with the usage otherwise.
inline Setup parse(int argc, char** argv, bool with_block = false, std::int64_t block = 0) {
  const auto usage = [&] {
    std::fprintf(stderr, "usage: %s --mode local|dist [--threads T]%s [--quick|--smoke]\n", argv[0],
                 with_block ? " [--block NB]" : "");
    std::exit(2);
  };
  Setup s;
  s.block = block;
  bool mode = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--mode" && i + 1 < argc) {
      const std::string m = argv[++i];
      if (m != "local" && m != "dist") usage();
      s.dist = m == "dist";
      mode = true;
    } else if (a == "--threads" && i + 1 < argc) {
      s.threads = std::atoi(argv[++i]);
    } else if (with_block && a == "--block" && i + 1 < argc) {
      s.block = std::atoll(argv[++i]);
      s.block_given = true;
    } else if (a == "--quick") {
      s.quick = true;
    } else if (a == "--smoke") {
      s.smoke = true;
    } else {
      usage();
    }
  }
  if (!mode || s.threads < 1 || (with_block && s.block < 1)) usage();
  return s;
}

/// The process's place: MPI_COMM_WORLD under --mode dist (MPI initialised),
/// MPI_COMM_NULL and one rank otherwise; and the runtime, one thread per
/// rank under dist, --threads otherwise.
struct World {
  int ranks = 1;
  int me = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  tenferro::EagerRuntimePtr rt;
};

inline World world(const Setup& s) {
  World w;
  if (s.dist) {
    tenferro::dist::ensure_initialized();
    w.comm = MPI_COMM_WORLD;
    MPI_Comm_size(w.comm, &w.ranks);
    MPI_Comm_rank(w.comm, &w.me);
  }
  w.rt = tenferro::EagerRuntime::make_cpu(
      tenferro::CpuBackendOptions{.num_threads = s.dist ? 1 : s.threads});
  return w;
}

/// The slowest rank's time of one call of fn (ns), agreed over `comm`
/// (MPI_COMM_NULL: one process), starting after a barrier.
inline double call_ns(MPI_Comm comm, const std::function<void()>& fn) {
  if (comm != MPI_COMM_NULL) MPI_Barrier(comm);
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  double ns = static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
          .count());
  if (comm != MPI_COMM_NULL) MPI_Allreduce(MPI_IN_PLACE, &ns, 1, MPI_DOUBLE, MPI_MAX, comm);
  return ns;
}

/// max |a - b| / max |b| over the elements (b the one-process reference).
inline double relative_difference(const tenferro::Tensor& a, const tenferro::Tensor& b) {
  const std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  if (x.size() != y.size()) return std::numeric_limits<double>::infinity();
  double diff = 0, size = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    diff = std::max(diff, std::abs(x[i] - y[i]));
    size = std::max(size, std::abs(y[i]));
  }
  return size > 0 ? diff / size : diff;
}

}  // namespace dist_bench
