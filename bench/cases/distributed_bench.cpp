// Group 20 of the benchmark suite (bench/driver.py): sharded tensors on MPI.
// The same computations run as one process (--mode local --threads T) and as
// P ranks of one thread each (--mode dist under mpirun -np P):
//   matmul       C = A B, n x n f64, A and B row-sharded (Shard(0)): the
//                planner gathers B's rows and keeps C row-sharded;
//   matmul_grad  the gradient of sum(C * C) in A and B (eager backward);
//   chain        the network "ij,jk,kl,lm->im" of four n x n matrices.
// Each repetition starts after a barrier and lasts until the slowest rank is
// done (the time is the maximum over the ranks); a fixed number of
// repetitions, so every rank runs the same collectives. Rank 0 prints one
// JSON line per case with the median, and the bytes one rank sent.
//
//   distributed_bench --mode local|dist [--threads T] [--quick|--smoke]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "tenferro/distributed/distributed.hpp"
#include "tenferro/tenferro.hpp"

namespace tf = tenferro;
namespace dist = tenferro::dist;

namespace {

struct Setup {
  bool dist = false;
  int threads = 1;
  bool quick = false;
  bool smoke = false;
};

[[noreturn]] void usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s --mode local|dist [--threads T] [--quick|--smoke]\n", argv0);
  std::exit(2);
}

Setup parse(int argc, char** argv) {
  Setup s;
  bool mode = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--mode" && i + 1 < argc) {
      const std::string m = argv[++i];
      if (m != "local" && m != "dist") usage(argv[0]);
      s.dist = m == "dist";
      mode = true;
    } else if (a == "--threads" && i + 1 < argc) {
      s.threads = std::atoi(argv[++i]);
    } else if (a == "--quick") {
      s.quick = true;
    } else if (a == "--smoke") {
      s.smoke = true;
    } else {
      usage(argv[0]);
    }
  }
  if (!mode || s.threads < 1) usage(argv[0]);
  return s;
}

/// The median over repetitions of the slowest rank's time (ns).
double timed(const Setup& s, MPI_Comm comm, const std::function<void()>& fn) {
  const int reps = s.smoke ? 1 : s.quick ? 5 : 11;
  fn();  // warm-up
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    if (comm != MPI_COMM_NULL) MPI_Barrier(comm);
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    double ns = static_cast<double>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
            .count());
    if (comm != MPI_COMM_NULL) MPI_Allreduce(MPI_IN_PLACE, &ns, 1, MPI_DOUBLE, MPI_MAX, comm);
    times.push_back(ns);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const Setup s = parse(argc, argv);
  try {
    int ranks = 1, me = 0;
    MPI_Comm comm = MPI_COMM_NULL;
    if (s.dist) {
      dist::ensure_initialized();
      comm = MPI_COMM_WORLD;
      MPI_Comm_size(comm, &ranks);
      MPI_Comm_rank(comm, &me);
    }
    const int threads = s.dist ? 1 : s.threads;
    auto rt = tf::EagerRuntime::make_cpu(tf::CpuBackendOptions{.num_threads = threads});
    const std::int64_t n = s.smoke ? 64 : s.quick ? 512 : 1024;
    tf::Generator gen(7);
    std::vector<tf::Tensor> m;
    for (int k = 0; k < 4; ++k) m.push_back(tf::randn({n, n}, tf::f64, gen));
    const std::string variant =
        s.dist ? std::to_string(ranks) + " ranks" : std::string("1 process");
    const auto report = [&](const char* name, double ns, std::uint64_t bytes) {
      if (me != 0) return;
      std::printf(
          "{\"case\":\"%s\",\"size\":\"%lld\",\"impl\":\"tenferro\",\"variant\":\"%s\","
          "\"threads\":%d,\"median_ns\":%.1f,\"bytes_sent\":%llu}\n",
          name, static_cast<long long>(n), variant.c_str(), s.dist ? ranks : threads, ns,
          static_cast<unsigned long long>(bytes));
    };
    if (!s.dist) {
      const auto a = rt->tensor(m[0]), b = rt->tensor(m[1]), c = rt->tensor(m[2]),
                 d = rt->tensor(m[3]);
      report("dist_matmul", timed(s, comm, [&] { (void)tf::matmul(a, b).value(); }), 0);
      report("dist_matmul_grad",
             timed(s, comm,
                   [&] {
                     auto va = rt->variable(m[0]), vb = rt->variable(m[1]);
                     const auto y = tf::matmul(va, vb);
                     tf::sum(y * y).backward();
                   }),
             0);
      report("dist_chain",
             timed(s, comm,
                   [&] {
                     (void)tf::einsum("ij,jk,kl,lm->im", {a, b, c, d}).value();
                   }),
             0);
      return 0;
    }
    const dist::Mesh mesh = dist::Mesh::line();
    const dist::Placements rows = {dist::Shard(0)};
    std::vector<dist::DTensor> dm;
    for (const auto& t : m) dm.push_back(dist::distribute(rt->tensor(t), mesh, rows));
    const auto bytes_of = [&](const std::function<void()>& fn) {
      dist::reset_comm_stats();
      fn();
      return dist::comm_stats().bytes_sent;
    };
    const auto product = [&] { (void)dist::matmul(dm[0], dm[1]).local().value(); };
    report("dist_matmul", timed(s, comm, product), bytes_of(product));
    const auto gradient = [&] {
      dist::DTensor a = dm[0], b = dm[1];
      a = dist::DTensor(a.shape(), a.mesh(), a.placements(), rt->variable(a.local().value()));
      b = dist::DTensor(b.shape(), b.mesh(), b.placements(), rt->variable(b.local().value()));
      const dist::DTensor y = dist::matmul(a, b);
      dist::backward(dist::sum(y * y));
    };
    report("dist_matmul_grad", timed(s, comm, gradient), bytes_of(gradient));
    const auto chain = [&] {
      (void)dist::einsum("ij,jk,kl,lm->im", {dm[0], dm[1], dm[2], dm[3]}).local().value();
    };
    report("dist_chain", timed(s, comm, chain), bytes_of(chain));
  } catch (const tf::Error& e) {
    std::fprintf(stderr, "distributed_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
