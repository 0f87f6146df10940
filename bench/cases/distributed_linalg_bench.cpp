// Group 21 of the benchmark suite (bench/driver.py): distributed linear
// algebra on ScaLAPACK. The same decompositions of an n x n f64 matrix
// (n = 2048; --quick 1024; --smoke 96) run as one process
// (--mode local --threads T: tenferro::linalg::svd / eigh / qr on the CPU
// backend, LAPACK gesdd / syevd / geqrf + orgqr) and as P ranks of one
// thread each (--mode dist under mpirun -np P: dist::linalg::svd / eigh / qr:
// the SVD by gesdd's algorithm, ScaLAPACK pdgebrd, LAPACK dbdsdc on every
// rank, pdormbr; pdsyevd, or ELPA where built; pdgeqrf + pdorgqr), the ranks
// on every grid rows x cols with rows * cols = P (1x2 and 2x1 for 2 ranks),
// square blocks of --block (64):
//   dist_svd   the reduced SVD of a Gaussian matrix (U, S, Vh);
//   dist_eigh  the eigendecomposition of its symmetric part (M + M^T) / 2;
//   dist_eigh_truncated  the n / 32 eigenpairs of largest |w| of the same
//              (eigh, then the kept vectors gathered: a pdgemm by a 0/1
//              selection matrix on ranks, an index_select in one process);
//   dist_qr    the reduced QR of the Gaussian matrix.
// Inputs are block-cyclic before the clock starts; each repetition starts
// after a barrier and lasts until the slowest rank is done. Rank 0 prints
// one JSON line per case and grid, with the check against one process (the
// same tenferro::linalg call on rank 0, one thread, outside the clock):
// singular values and eigenvalues max |d| / max |ref|, QR by reconstruction
// max |Q R - A| / max |A| (Q R by dist::linalg::matmul). A check above
// 1e-10 is reported on stderr and the exit status is 3.
//
//   distributed_linalg_bench --mode local|dist [--threads T] [--block NB] [--quick|--smoke]

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "dist_common.hpp"
#include "tenferro/distributed/distributed.hpp"
#include "tenferro/distributed/linalg.hpp"
#include "tenferro/tenferro.hpp"

namespace tf = tenferro;
namespace dist = tenferro::dist;

namespace {

constexpr double kTolerance = 1e-10;

using dist_bench::call_ns;
using dist_bench::relative_difference;
using dist_bench::Setup;

// One decomposition of 2048^2 takes seconds: few repetitions, and a call slower than kLongCallNs is
// timed once.
constexpr double kLongCallNs = 5e9;

struct Timing {
  double ns = 0;
  int reps = 0;
};

/// The median of 3 calls after a warm-up; the first call alone where it took
/// over kLongCallNs (the warm-up matters little there) or in --smoke.
Timing timed(const Setup& s, MPI_Comm comm, const std::function<void()>& fn) {
  const double first = call_ns(comm, fn);
  if (s.smoke || first > kLongCallNs) return {first, 1};
  std::vector<double> times;
  for (int r = 0; r < 3; ++r) times.push_back(call_ns(comm, fn));
  std::sort(times.begin(), times.end());
  return {times[1], 3};
}

/// (M + M^T) / 2 of a square column-major matrix.
tf::Tensor symmetric_part(const tf::Tensor& m) {
  const std::int64_t n = m.shape()[0];
  std::vector<double> v = m.to_vector<double>();
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t i = j + 1; i < n; ++i) {
      const double x = 0.5 * (v[i + j * n] + v[j + i * n]);
      v[i + j * n] = v[j + i * n] = x;
    }
  }
  return tf::Tensor::from_col_major({n, n}, v);
}

/// One row of the table: a case on one side (one process or one grid).
struct Row {
  std::string name, check;  // check: what rel_diff compares
  Timing time;
  double rel_diff = -1;  // < 0: not checked (one process)
};

}  // namespace

int main(int argc, char** argv) {
  Setup s = dist_bench::parse(argc, argv, /*with_block=*/true, /*block=*/64);
  // Small blocks in --smoke, so every rank of the grid holds some.
  if (s.smoke && !s.block_given) s.block = 16;
  try {
    const dist_bench::World w = dist_bench::world(s);
    const int ranks = w.ranks, me = w.me;
    const MPI_Comm comm = w.comm;
    const int threads = s.dist ? 1 : s.threads;
    const auto& rt = w.rt;
    const std::int64_t n = s.smoke ? 96 : s.quick ? 1024 : 2048;
    tf::Generator gen(7);
    const tf::Tensor m = tf::randn({n, n}, tf::f64, gen);
    const tf::Tensor h = symmetric_part(m);
    tf::linalg::Truncation keep;
    keep.max_rank = n / 32;
    bool mismatch = false;
    const auto report = [&](const Row& r, const std::string& variant, const std::string& grid) {
      if (r.rel_diff >= 0 && !(r.rel_diff <= kTolerance)) {
        mismatch = true;
        std::fprintf(stderr,
                     "distributed_linalg_bench: %s on %s differs from one process by %.3e (%s)\n",
                     r.name.c_str(), grid.c_str(), r.rel_diff, r.check.c_str());
      }
      if (me != 0) return;
      std::string extra;
      if (s.dist) {
        char buf[200];
        std::snprintf(buf, sizeof buf,
                      ",\"grid\":\"%s\",\"block\":%lld,\"rel_diff\":%.3e,\"check\":\"%s\"",
                      grid.c_str(), static_cast<long long>(s.block), r.rel_diff, r.check.c_str());
        extra = buf;
      }
      std::printf(
          "{\"case\":\"%s\",\"size\":\"%lld\",\"impl\":\"tenferro\",\"variant\":\"%s\","
          "\"threads\":%d,\"median_ns\":%.1f,\"reps\":%d%s}\n",
          r.name.c_str(), static_cast<long long>(n), variant.c_str(), s.dist ? ranks : threads,
          r.time.ns, r.time.reps, extra.c_str());
      std::fflush(stdout);
    };

    if (!s.dist) {
      const auto a = rt->tensor(m), ah = rt->tensor(h);
      report({"dist_svd", "",
              timed(s, comm,
                    [&] {
                      const auto f = tf::linalg::svd(a, false);
                      (void)f.U.value();
                      (void)f.S.value();
                      (void)f.Vh.value();
                    })},
             "1 process", "");
      report({"dist_eigh", "",
              timed(s, comm,
                    [&] {
                      const auto f = tf::linalg::eigh(ah);
                      (void)f.eigenvalues.value();
                      (void)f.eigenvectors.value();
                    })},
             "1 process", "");
      report({"dist_eigh_truncated", "",
              timed(s, comm,
                    [&] {
                      const auto f = tf::linalg::eigh_truncated(ah, keep);
                      (void)f.eigenvalues.value();
                      (void)f.eigenvectors.value();
                    })},
             "1 process", "");
      report({"dist_qr", "",
              timed(s, comm,
                    [&] {
                      const auto [q, r] = tf::linalg::qr(a);
                      (void)q.value();
                      (void)r.value();
                    })},
             "1 process", "");
      return 0;
    }

    // The one-process references, on rank 0 (the others wait at the barrier
    // of the first timed call).
    tf::Tensor ref_s, ref_w, ref_kept;
    if (me == 0) {
      ref_s = tf::linalg::svd(m, false, rt->backend()).S;
      ref_w = tf::linalg::eigh(h, 'L', rt->backend()).eigenvalues;
      ref_kept = tf::linalg::eigh_truncated(h, keep, 'L', rt->backend()).eigenvalues;
    }
    const dist::Communicator world = dist::Communicator::world();
    const std::string variant = std::to_string(ranks) + " ranks";
    for (int rows = 1; rows <= ranks; ++rows) {
      if (ranks % rows != 0) continue;
      const int cols = ranks / rows;
      const std::string grid = std::to_string(rows) + "x" + std::to_string(cols);
      const dist::Mesh mesh(world, {rows, cols});
      const dist::Placements bc = dist::block_cyclic_placements(mesh, s.block);
      const dist::DTensor da = dist::distribute(rt->tensor(m), mesh, bc);
      const dist::DTensor dh = dist::distribute(rt->tensor(h), mesh, bc);

      Row row{"dist_svd", "singular values", {}};
      dist::DTensor sv;
      row.time = timed(s, comm, [&] {
        const auto f = dist::linalg::svd(da);
        (void)f.U.local().value();
        (void)f.Vh.local().value();
        sv = f.S;
        (void)sv.local().value();
      });
      if (me == 0) row.rel_diff = relative_difference(sv.local().value(), ref_s);
      report(row, variant + " " + grid, grid);

      row = {"dist_eigh", "eigenvalues", {}};
      dist::DTensor w;
      row.time = timed(s, comm, [&] {
        const auto f = dist::linalg::eigh(dh);
        (void)f.eigenvectors.local().value();
        w = f.eigenvalues;
        (void)w.local().value();
      });
      if (me == 0) row.rel_diff = relative_difference(w.local().value(), ref_w);
      report(row, variant + " " + grid, grid);

      row = {"dist_eigh_truncated", "kept eigenvalues", {}};
      dist::DTensor kept;
      row.time = timed(s, comm, [&] {
        const auto f = dist::linalg::eigh_truncated(dh, keep);
        (void)f.eigenvectors.local().value();
        kept = f.eigenvalues;
        (void)kept.local().value();
      });
      if (me == 0) row.rel_diff = relative_difference(kept.local().value(), ref_kept);
      report(row, variant + " " + grid, grid);

      row = {"dist_qr", "max |QR - A| / max |A|", {}};
      dist::DTensor q, r;
      row.time = timed(s, comm, [&] {
        std::tie(q, r) = dist::linalg::qr(da);
        (void)q.local().value();
        (void)r.local().value();
      });
      const tf::Tensor qr_full = dist::full_tensor(dist::linalg::matmul(q, r)).value();
      if (me == 0) row.rel_diff = relative_difference(qr_full, m);
      report(row, variant + " " + grid, grid);
    }
    // Every rank leaves with rank 0's verdict.
    int bad = mismatch ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm);
    return bad ? 3 : 0;
  } catch (const tf::Error& e) {
    std::fprintf(stderr, "distributed_linalg_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
