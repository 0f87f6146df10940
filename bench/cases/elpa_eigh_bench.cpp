// ELPA against ScaLAPACK's pdsyevd on one symmetric n x n f64 matrix
// (issue 48: "eigh: p?syevd / p?heevd, or ELPA where it is faster").
// A standalone measurement, not part of the build: tenferro does not depend
// on ELPA. It uses MPI, BLACS / ScaLAPACK and ELPA directly, on every grid
// rows x cols of the ranks, square blocks of --block (64):
//   pdsyevd       ScaLAPACK's divide and conquer (what dist::linalg::eigh runs);
//   elpa_1stage   ELPA's one-stage solver (full -> tridiagonal directly);
//   elpa_2stage   ELPA's two-stage solver (full -> banded -> tridiagonal),
//                 its default real kernel.
// Each call gets a fresh copy of the matrix; a call starts after a barrier
// and lasts until the slowest rank is done; median of 3 after a warm-up.
// Rank 0 prints one JSON line per solver and grid, with max |w - w_pdsyevd| /
// max |w_pdsyevd| of the eigenvalues.
//
// Build and run (Debian bookworm: apt-get install libelpa-dev
// libscalapack-openmpi-dev):
//   g++ -O2 -std=c++20 bench/cases/elpa_eigh_bench.cpp -o /tmp/elpa_eigh_bench \
//       $(pkg-config --cflags --libs elpa) $(pkg-config --cflags --libs mpi-cxx)
//   OMP_NUM_THREADS=1 mpirun -np 2 /tmp/elpa_eigh_bench [--n 2048] [--block 64]

#include <elpa/elpa.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

extern "C" {
void Cblacs_get(int context, int what, int* value);
void Cblacs_gridinit(int* context, const char* order, int rows, int cols);
void Cblacs_gridinfo(int context, int* rows, int* cols, int* row, int* col);
void Cblacs_gridexit(int context);
int numroc_(const int* n, const int* nb, const int* iproc, const int* isrcproc, const int* nprocs);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb,
               const int* irsrc, const int* icsrc, const int* context, const int* lld, int* info);
void pdsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* ia,
              const int* ja, const int* desca, double* w, double* z, const int* iz, const int* jz,
              const int* descz, double* work, const int* lwork, int* iwork, const int* liwork,
              int* info);
}

namespace {

/// A symmetric pseudo-random element: the same on every rank, in [-1, 1).
double element(std::int64_t i, std::int64_t j) {
  std::uint64_t x = static_cast<std::uint64_t>(std::min(i, j)) * 0x9E3779B97F4A7C15ull +
                    static_cast<std::uint64_t>(std::max(i, j)) * 0xBF58476D1CE4E5B9ull + 1;
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return static_cast<double>(x >> 11) * 0x1.0p-52 - 1.0;
}

/// The median over 3 calls (after a warm-up) of the slowest rank's seconds.
double timed(const std::function<void()>& fn) {
  fn();
  std::vector<double> t;
  for (int r = 0; r < 3; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    t.push_back(s);
  }
  std::sort(t.begin(), t.end());
  return t[1];
}

double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0, m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    d = std::max(d, std::abs(a[i] - b[i]));
    m = std::max(m, std::abs(b[i]));
  }
  return d / m;
}

[[noreturn]] void die(const char* what, int code) {
  std::fprintf(stderr, "elpa_eigh_bench: %s failed (%d)\n", what, code);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int n = 2048, nb = 64;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--n") n = std::atoi(argv[i + 1]);
    if (a == "--block") nb = std::atoi(argv[i + 1]);
  }
  int ranks = 1, me = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  if (elpa_init(20221109) != ELPA_OK) die("elpa_init (API 20221109)", 0);
  for (int rows = 1; rows <= ranks; ++rows) {
    if (ranks % rows != 0) continue;
    const int cols = ranks / rows;
    int ctx = 0, r = 0, c = 0, row = 0, col = 0, info = 0;
    Cblacs_get(0, 0, &ctx);
    Cblacs_gridinit(&ctx, "Row", rows, cols);
    Cblacs_gridinfo(ctx, &r, &c, &row, &col);
    const int zero = 0;
    const int lrows = numroc_(&n, &nb, &row, &zero, &rows);
    const int lcols = numroc_(&n, &nb, &col, &zero, &cols);
    const int lld = std::max(1, lrows);
    int desc[9];
    descinit_(desc, &n, &n, &nb, &nb, &zero, &zero, &ctx, &lld, &info);
    if (info != 0) die("descinit", info);
    // The local block: local (li, lj) is global (block * grid + offset).
    std::vector<double> a(static_cast<std::size_t>(lld) * std::max(1, lcols));
    for (int lj = 0; lj < lcols; ++lj) {
      const std::int64_t j = (lj / nb * cols + col) * static_cast<std::int64_t>(nb) + lj % nb;
      for (int li = 0; li < lrows; ++li) {
        const std::int64_t i = (li / nb * rows + row) * static_cast<std::int64_t>(nb) + li % nb;
        a[static_cast<std::size_t>(li + lj * lld)] = element(i, j);
      }
    }
    std::vector<double> work_a(a.size()), z(a.size()), w(static_cast<std::size_t>(n));
    const int one = 1;
    // pdsyevd's workspace, queried once.
    int lwork = -1, liwork = -1, iwork_query = 0;
    double work_query = 0;
    pdsyevd_("V", "L", &n, work_a.data(), &one, &one, desc, w.data(), z.data(), &one, &one, desc,
             &work_query, &lwork, &iwork_query, &liwork, &info);
    lwork = static_cast<int>(work_query) + 1;
    liwork = iwork_query;
    std::vector<double> work(static_cast<std::size_t>(lwork));
    std::vector<int> iwork(static_cast<std::size_t>(liwork));
    const double t_scalapack = timed([&] {
      work_a = a;
      pdsyevd_("V", "L", &n, work_a.data(), &one, &one, desc, w.data(), z.data(), &one, &one, desc,
               work.data(), &lwork, iwork.data(), &liwork, &info);
      if (info != 0) die("pdsyevd", info);
    });
    const std::vector<double> w_ref = w;
    const std::string grid = std::to_string(rows) + "x" + std::to_string(cols);
    const auto report = [&](const char* solver, double seconds, double diff) {
      if (me == 0) {
        std::printf(
            "{\"solver\":\"%s\",\"n\":%d,\"grid\":\"%s\",\"block\":%d,\"ranks\":%d,"
            "\"median_s\":%.4f,\"rel_diff_vs_pdsyevd\":%.3e}\n",
            solver, n, grid.c_str(), nb, ranks, seconds, diff);
        std::fflush(stdout);
      }
    };
    report("pdsyevd", t_scalapack, 0.0);

    for (const int stage : {ELPA_SOLVER_1STAGE, ELPA_SOLVER_2STAGE}) {
      int err = 0;
      elpa_t e = elpa_allocate(&err);
      if (err != ELPA_OK) die("elpa_allocate", err);
      elpa_set(e, "na", n, &err);
      elpa_set(e, "nev", n, &err);
      elpa_set(e, "local_nrows", lrows, &err);
      elpa_set(e, "local_ncols", lcols, &err);
      elpa_set(e, "nblk", nb, &err);
      elpa_set(e, "mpi_comm_parent", static_cast<int>(MPI_Comm_c2f(MPI_COMM_WORLD)), &err);
      elpa_set(e, "process_row", row, &err);
      elpa_set(e, "process_col", col, &err);
      if (elpa_setup(e) != ELPA_OK) die("elpa_setup", 0);
      elpa_set(e, "solver", stage, &err);
      if (err != ELPA_OK) die("elpa_set solver", err);
      const double t = timed([&] {
        work_a = a;
        elpa_eigenvectors(e, work_a.data(), w.data(), z.data(), &err);
        if (err != ELPA_OK) die("elpa_eigenvectors", err);
      });
      report(stage == ELPA_SOLVER_1STAGE ? "elpa_1stage" : "elpa_2stage", t,
             relative_difference(w, w_ref));
      elpa_deallocate(e, &err);
    }
    Cblacs_gridexit(ctx);
  }
  int err = 0;
  elpa_uninit(&err);
  MPI_Finalize();
  return 0;
}
