// Distributed linear algebra on ScaLAPACK under mpirun -np 1, 2 and 4:
// every op (matmul, svd, eigh, qr, cholesky, solve) in f32, f64, c64 and
// c128 on the grids the ranks allow (1x1, 1x2, 2x1, 2x2, 1x4, 4x1, 1-D
// lines as 1xP and Px1 grids, and sub-communicators of the world), with
// block sizes that do not divide the extents, against the single-process
// linalg family; singular and gauge-dependent outputs compared in a
// gauge-independent way. Bad inputs, also on one rank only, raise the same
// typed error on every rank.

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "distributed/linalg_test_util.hpp"

using namespace tenferro;
using namespace mpitest;
using namespace linalg_test;
using dist::DTensor;
using dist::Placements;

TEST(ScalapackLayout, DescriptorsMatchTheShards) {
  for (const auto& l : layouts()) {
    for (const std::int64_t nb : kBlocks) {
      const DTensor a = place(random_matrix(7, 5, f64, 1), l, nb);
      const dist::BlockCyclicLayout layout = dist::block_cyclic_layout(a);
      const auto desc = dist::descriptor(a);
      EXPECT_EQ(desc[0], 1);  // dense matrix
      EXPECT_EQ(desc[1], layout.grid.context);
      EXPECT_EQ(desc[2], 7);
      EXPECT_EQ(desc[3], 5);
      EXPECT_EQ(desc[4], nb);
      EXPECT_EQ(desc[5], nb);
      EXPECT_EQ(desc[6], 0);  // blocks dealt from grid row 0 (shard_indices)
      EXPECT_EQ(desc[7], 0);
      EXPECT_EQ(desc[8], std::max<std::int64_t>(1, a.local().value().dim(0))) << l.name;
      const bool line = l.mesh.ndim() == 1;
      EXPECT_EQ(layout.grid.rows, line ? (l.rows_on_line ? l.mesh.size(0) : 1) : l.mesh.size(0));
      EXPECT_EQ(layout.grid.row,
                line ? (l.rows_on_line ? l.mesh.coordinate(0) : 0) : l.mesh.coordinate(0));
      EXPECT_EQ(layout.grid.col,
                line ? (l.rows_on_line ? 0 : l.mesh.coordinate(0)) : l.mesh.coordinate(1));
      // One context per grid: asking again gives the same one.
      EXPECT_EQ(dist::blacs_grid(l.mesh, layout.grid.rows, layout.grid.cols).context,
                layout.grid.context);
    }
  }
}

TEST(ScalapackLayout, ToBlockCyclicAndBack) {
  const Tensor full = random_matrix(7, 6, f64, 2);
  for (const auto& l : layouts()) {
    const Placements from = l.mesh.ndim() == 2 ? Placements{dist::Shard(0), dist::Replicate()}
                                               : Placements{dist::Shard(0)};
    const DTensor a = dist::distribute(eager(full), l.mesh, from);
    const DTensor b = dist::to_block_cyclic(a, 3);
    EXPECT_EQ(b.placements(), dist::block_cyclic_placements(l.mesh, 3));
    EXPECT_EQ(max_abs_diff(whole(b), full), 0.0) << l.name;
    const DTensor back = dist::redistribute(b, from);
    EXPECT_EQ(max_abs_diff(back.local().value(), a.local().value()), 0.0) << l.name;
  }
}

TEST(ScalapackLayout, OnALineToBlockCyclicIsAnAllToAll) {
  const dist::Mesh line = dist::Mesh::line();
  const int p = line.size(0), me = line.coordinate(0);
  const Tensor full = random_matrix(7, 9, f64, 70);
  for (const Placements& from : {Placements{dist::Shard(0)}, Placements{dist::Shard(1)},
                                 Placements{dist::Shard(1, 2)}, Placements{dist::Shard(0, 4)}}) {
    DTensor a = dist::distribute(eager(full), line, from);
    a.requires_grad_();
    dist::reset_comm_stats();
    const DTensor b = dist::to_block_cyclic(a, 3);
    const dist::CommStats stats = dist::comm_stats();
    EXPECT_EQ(b.placements(), (Placements{dist::Shard(1, 3)}));
    EXPECT_EQ(max_abs_diff(whole(b), full), 0.0) << from[0].to_string();
    if (from[0] == dist::Shard(0)) {
      // This rank's rows, less the columns it keeps, to the others: no gather.
      const std::int64_t rows = dist::shard_extent(7, p, me, 0);
      const std::int64_t kept = dist::shard_extent(9, p, me, 3);
      EXPECT_EQ(stats.bytes_sent, static_cast<std::uint64_t>(rows * (9 - kept) * 8));
    }
    // Differentiable: the gradient of sum(b * b) is 2 a, placed like a.
    dist::backward(dist::sum(b * b));
    EXPECT_EQ(a.grad().placements(), from);
    EXPECT_LT(rel(whole(a.grad()), (eager(full) * Scalar(2.0)).value()), 1e-15)
        << from[0].to_string();
  }
}

TEST(ScalapackOps, MatmulWithTransposes) {
  const std::int64_t m = 7, k = 5, n = 6;
  const std::pair<char, char> flags[] = {{'N', 'N'}, {'T', 'N'}, {'N', 'C'}, {'C', 'T'}};
  for (const DType dt : dtypes()) {
    for (const auto& [ta, tb] : flags) {
      const Tensor a = ta == 'N' ? random_matrix(m, k, dt, 3) : random_matrix(k, m, dt, 3);
      const Tensor b = tb == 'N' ? random_matrix(k, n, dt, 4) : random_matrix(n, k, dt, 4);
      auto op = [](const Tensor& x, char t) {
        const EagerTensor e = eager(x);
        return t == 'N' ? e : t == 'T' ? transpose(e) : adjoint(e);
      };
      const Tensor ref = matmul(op(a, ta), op(b, tb)).value();
      for (const auto& l : layouts()) {
        for (const std::int64_t nb : kBlocks) {
          const DTensor c = dist::linalg::matmul(place(a, l, nb), place(b, l, nb), ta, tb);
          EXPECT_EQ(c.shape(), (Shape{m, n}));
          EXPECT_EQ(c.placements(), l.placements(nb));
          EXPECT_LT(rel(whole(c), ref), tol(dt)) << what(l, dt, nb) << " " << ta << tb;
        }
      }
    }
  }
}

TEST(ScalapackOps, SvdTallAndWide) {
  for (const DType dt : dtypes()) {
    for (const auto& [m, n] : {std::pair<std::int64_t, std::int64_t>{7, 5}, {5, 7}}) {
      const Tensor a = random_matrix(m, n, dt, 5);
      const auto ref = tenferro::linalg::svd(eager(a), false);
      const std::int64_t k = std::min(m, n);
      for (const auto& l : layouts()) {
        for (const std::int64_t nb : kBlocks) {
          const auto [u, s, vh] = dist::linalg::svd(place(a, l, nb));
          const std::string at =
              what(l, dt, nb) + " " + std::to_string(m) + "x" + std::to_string(n);
          ASSERT_EQ(s.shape(), (Shape{k})) << at;
          EXPECT_EQ(s.placements(),
                    Placements(static_cast<std::size_t>(l.mesh.ndim()), dist::Replicate()));
          EXPECT_EQ(s.dtype(), real_dtype(dt));
          // S is whole on every rank, without communication.
          EXPECT_LT(rel(s.local().value(), ref.S.value()), tol(dt)) << at;
          const Tensor U = whole(u), Vh = whole(vh);
          EXPECT_EQ(U.shape(), (Shape{m, k}));
          EXPECT_EQ(Vh.shape(), (Shape{k, n}));
          const Tensor rebuilt = matmul(eager(U) * s.local(), eager(Vh)).value();
          EXPECT_LT(rel(rebuilt, a), tol(dt)) << at;
          EXPECT_LT(gauge_distance(U, ref.U.value()), 10 * tol(dt)) << at;
          EXPECT_LT(gauge_distance(adjoint(eager(Vh)).value(), adjoint(ref.Vh).value()),
                    10 * tol(dt))
              << at;
        }
      }
    }
  }
}

TEST(ScalapackOps, EighReadsOneTriangle) {
  const std::int64_t n = 7;
  for (const DType dt : dtypes()) {
    // Not Hermitian: eigh reads the `uplo` triangle only (and the real part
    // of the diagonal), as the single-process eigh does.
    const Tensor x = random_matrix(n, n, dt, 6);
    for (const char uplo : {'L', 'U'}) {
      const auto ref = tenferro::linalg::eigh(eager(x), uplo);
      const EagerTensor h = ref.eigenvectors * ref.eigenvalues;
      const Tensor herm = matmul(h, adjoint(ref.eigenvectors)).value();  // the matrix read
      for (const auto& l : layouts()) {
        for (const std::int64_t nb : kBlocks) {
          const auto [w, v] = dist::linalg::eigh(place(x, l, nb), uplo);
          const std::string at = what(l, dt, nb) + " uplo " + uplo;
          EXPECT_EQ(w.placements(),
                    Placements(static_cast<std::size_t>(l.mesh.ndim()), dist::Replicate()));
          EXPECT_LT(rel(w.local().value(), ref.eigenvalues.value()), tol(dt)) << at;
          const Tensor V = whole(v);
          EXPECT_LT(gauge_distance(V, ref.eigenvectors.value()), 10 * tol(dt)) << at;
          const Tensor rebuilt = matmul(eager(V) * w.local(), adjoint(eager(V))).value();
          EXPECT_LT(rel(rebuilt, herm), tol(dt)) << at;
        }
      }
    }
  }
}

TEST(ScalapackOps, QrEqualsTheSingleProcessFactors) {
  for (const DType dt : dtypes()) {
    for (const auto& [m, n] : {std::pair<std::int64_t, std::int64_t>{7, 5}, {5, 7}}) {
      const Tensor a = random_matrix(m, n, dt, 7);
      const auto [qref, rref] = tenferro::linalg::qr(eager(a));
      for (const auto& l : layouts()) {
        for (const std::int64_t nb : kBlocks) {
          const auto [q, r] = dist::linalg::qr(place(a, l, nb));
          const std::string at =
              what(l, dt, nb) + " " + std::to_string(m) + "x" + std::to_string(n);
          // The same Householder convention as LAPACK: the same factors.
          EXPECT_LT(rel(whole(q), qref.value()), 10 * tol(dt)) << at;
          EXPECT_LT(rel(whole(r), rref.value()), 10 * tol(dt)) << at;
        }
      }
    }
  }
}

TEST(ScalapackOps, CholeskyLowerAndUpper) {
  const std::int64_t n = 7;
  for (const DType dt : dtypes()) {
    const EagerTensor x = eager(random_matrix(n, n, dt, 8));
    const Tensor a = (matmul(x, adjoint(x)) + eager(eye(n, n, dt)) * Scalar(double(n))).value();
    for (const bool upper : {false, true}) {
      const Tensor ref = tenferro::linalg::cholesky(eager(a), upper).value();
      for (const auto& l : layouts()) {
        for (const std::int64_t nb : kBlocks) {
          const DTensor c = dist::linalg::cholesky(place(a, l, nb), upper);
          EXPECT_LT(rel(whole(c), ref), tol(dt)) << what(l, dt, nb) << " upper " << upper;
        }
      }
    }
  }
}

TEST(ScalapackOps, SolveEqualsTheSingleProcessSolve) {
  const std::int64_t n = 7, k = 3;
  for (const DType dt : dtypes()) {
    const Tensor a =
        (eager(random_matrix(n, n, dt, 9)) + eager(eye(n, n, dt)) * Scalar(4.0)).value();
    const Tensor b = random_matrix(n, k, dt, 10);
    const Tensor ref = tenferro::linalg::solve(eager(a), eager(b)).value();
    for (const auto& l : layouts()) {
      for (const std::int64_t nb : kBlocks) {
        const DTensor xs = dist::linalg::solve(place(a, l, nb), place(b, l, nb));
        EXPECT_EQ(xs.shape(), (Shape{n, k}));
        EXPECT_LT(rel(whole(xs), ref), 10 * tol(dt)) << what(l, dt, nb);
      }
    }
  }
}

TEST(ScalapackOps, TracedProgramsRunTheSameOps) {
  const Tensor a = random_matrix(7, 5, f64, 11), b = random_matrix(5, 6, f64, 12);
  const Tensor ref = matmul(eager(a), eager(b)).value();
  const auto sref = tenferro::linalg::svd(eager(a), false);
  for (const auto& l : layouts()) {
    const TracedTensor xa = placeholder(f64, {7, 5}), xb = placeholder(f64, {5, 6});
    const dist::TracedDTensor da = dist::distribute(xa, l.mesh, l.placements(2));
    const dist::TracedDTensor db = dist::distribute(xb, l.mesh, l.placements(2));
    const dist::TracedDTensor c = dist::linalg::matmul(da, db);
    const auto [u, s, vh] = dist::linalg::svd(da);
    Program p = compile({dist::full_tensor(c), s.local()}, {xa, xb});
    EXPECT_EQ(p.count_ops("tenferro.dist.scalapack_gemm.v1"), 1u);
    EXPECT_EQ(p.count_ops("tenferro.dist.scalapack_svd.v1"), 1u);
    const std::vector<Tensor> in = {a, b};
    PreparedProgram plan = prepare(*runtime()->runtime(), p, InputSignature::of(in));
    for (int rep = 0; rep < 2; ++rep) {
      const auto out = run(*runtime()->runtime(), plan, in);
      EXPECT_LT(rel(out[0], ref), 1e-12) << l.name;
      EXPECT_LT(rel(out[1], sref.S.value()), 1e-12) << l.name;
    }
  }
}

TEST(ScalapackOps, MatricesSmallerThanTheGridLeaveRanksEmpty) {
  // 3x2 with blocks of 2 (and 1x1, 2x3): some grid rows or columns own no
  // block; blocks of 4 put every block on coordinate 0.
  for (const auto& l : layouts()) {
    for (const std::int64_t nb : {2, 4}) {
      for (const auto& [m, n] : {std::pair<std::int64_t, std::int64_t>{3, 2}, {2, 3}, {1, 1}}) {
        const DType dt = c128;
        const std::string at = what(l, dt, nb) + " " + std::to_string(m) + "x" + std::to_string(n);
        SCOPED_TRACE(at);
        const Tensor a = random_matrix(m, n, dt, 40);
        const Tensor b = random_matrix(n, 2, dt, 41);
        EXPECT_LT(rel(whole(dist::linalg::matmul(place(a, l, nb), place(b, l, nb))),
                      matmul(eager(a), eager(b)).value()),
                  1e-12)
            << at;
        const auto [u, s, vh] = dist::linalg::svd(place(a, l, nb));
        EXPECT_LT(rel(s.local().value(), tenferro::linalg::svd(eager(a), false).S.value()), 1e-12)
            << at;
        EXPECT_LT(rel(matmul(eager(whole(u)) * s.local(), eager(whole(vh))).value(), a), 1e-12)
            << at;
        const auto [q, r] = dist::linalg::qr(place(a, l, nb));
        EXPECT_LT(rel(whole(q), tenferro::linalg::qr(eager(a)).first.value()), 1e-12) << at;
        EXPECT_LT(rel(whole(r), tenferro::linalg::qr(eager(a)).second.value()), 1e-12) << at;
      }
      const std::int64_t n = 3;
      const EagerTensor x = eager(random_matrix(n, n, c128, 42));
      const Tensor h = (matmul(x, adjoint(x)) + eager(eye(n, n, c128))).value();
      const auto [w, v] = dist::linalg::eigh(place(h, l, nb));
      EXPECT_LT(rel(w.local().value(), tenferro::linalg::eigh(eager(h)).eigenvalues.value()), 1e-12)
          << what(l, c128, nb);
      const Tensor V = whole(v);
      EXPECT_LT(rel(matmul(eager(V) * w.local(), adjoint(eager(V))).value(), h), 1e-12)
          << what(l, c128, nb);
      EXPECT_LT(rel(whole(dist::linalg::cholesky(place(h, l, nb))),
                    tenferro::linalg::cholesky(eager(h)).value()),
                1e-12)
          << l.name;
      const Tensor rhs = random_matrix(n, 1, c128, 43);
      EXPECT_LT(rel(whole(dist::linalg::solve(place(h, l, nb), place(rhs, l, nb))),
                    tenferro::linalg::solve(eager(h), eager(rhs)).value()),
                1e-12)
          << l.name;
    }
  }
}

TEST(ScalapackOps, TruncatedSvdKeepsTheSameRankAsOneProcessOnEveryRank) {
  using tenferro::linalg::Truncation;
  std::vector<Truncation> truncations(5);
  truncations[0].max_rank = 3;
  truncations[1].cutoff = 0.5;
  truncations[2].max_discarded_weight = 0.05;
  truncations[3].max_rank = 5;
  truncations[3].cutoff = 0.1;
  for (const DType dt : {f64, c64}) {
    const Tensor a = random_matrix(9, 7, dt, 50);
    for (std::size_t t = 0; t < truncations.size(); ++t) {
      const auto ref = tenferro::linalg::svd_truncated(eager(a), truncations[t]);
      const Tensor ref_rebuilt = matmul(ref.U * ref.S, ref.Vh).value();
      for (const auto& l : layouts()) {
        const std::string at = what(l, dt, 2) + " truncation " + std::to_string(t);
        const auto d = dist::linalg::svd_truncated(place(a, l, 2), truncations[t]);
        EXPECT_EQ(d.rank, ref.rank) << at;
        long long lo = 0, hi = 0, mine = d.rank;
        MPI_Allreduce(&mine, &lo, 1, MPI_LONG_LONG, MPI_MIN, l.mesh.comm().handle());
        MPI_Allreduce(&mine, &hi, 1, MPI_LONG_LONG, MPI_MAX, l.mesh.comm().handle());
        EXPECT_EQ(lo, hi) << at;
        EXPECT_EQ(d.U.shape(), (Shape{9, ref.rank})) << at;
        EXPECT_EQ(d.Vh.shape(), (Shape{ref.rank, 7})) << at;
        EXPECT_EQ(d.U.placements(), l.placements(2)) << at;
        EXPECT_LT(rel(d.S.local().value(), ref.S.value()), tol(dt)) << at;
        EXPECT_LT(rel(d.discarded_weight.local().value(), ref.discarded_weight.value()), tol(dt))
            << at;
        const Tensor rebuilt = matmul(eager(whole(d.U)) * d.S.local(), eager(whole(d.Vh))).value();
        EXPECT_LT(rel(rebuilt, ref_rebuilt), 10 * tol(dt)) << at;
      }
    }
  }
  // Traced programs: a constant rank (max_rank) only.
  const Layout& l = layouts().front();
  const TracedTensor x = placeholder(f64, {9, 7});
  const dist::TracedDTensor dx = dist::distribute(x, l.mesh, l.placements(2));
  const auto tr = dist::linalg::svd_truncated(dx, truncations[0]);
  EXPECT_EQ(tr.rank, 3);
  const Tensor a = random_matrix(9, 7, f64, 51);
  const auto out = run_compiled(*runtime()->runtime(),
                                compile({dist::full_tensor(tr.U), tr.S.local()}, {x}), {a});
  const auto ref = tenferro::linalg::svd_truncated(eager(a), truncations[0]);
  EXPECT_LT(rel(out[1], ref.S.value()), 1e-12);
  EXPECT_LT(gauge_distance(out[0], ref.U.value()), 1e-10);
  EXPECT_EQ(same_error_everywhere([&] { (void)dist::linalg::svd_truncated(dx, truncations[1]); },
                                  l.mesh.comm()),
            ErrorKind::Unsupported);
  Truncation bad;
  bad.cutoff = -1;
  EXPECT_EQ(same_error_everywhere([&] { (void)dist::linalg::svd_truncated(place(a, l, 2), bad); },
                                  l.mesh.comm()),
            ErrorKind::InvalidArgument);
}

TEST(ScalapackOps, LargerMatricesWithRealisticBlocks) {
  // Several blocks per rank (workspace queries at a size where they matter).
  for (const DType dt : {c128, f32}) {
    const Tensor a = random_matrix(100, 70, dt, 80);
    const EagerTensor x = eager(random_matrix(90, 90, dt, 81));
    const Tensor h = (matmul(x, adjoint(x)) + eager(eye(90, 90, dt))).value();
    const auto sref = tenferro::linalg::svd(eager(a), false);
    const auto eref = tenferro::linalg::eigh(eager(h));
    const auto qref = tenferro::linalg::qr(eager(a));
    for (const auto& l : layouts()) {
      const std::string at = what(l, dt, 16);
      const auto [u, s, vh] = dist::linalg::svd(place(a, l, 16));
      EXPECT_LT(rel(s.local().value(), sref.S.value()), tol(dt)) << at;
      EXPECT_LT(rel(matmul(eager(whole(u)) * s.local(), eager(whole(vh))).value(), a), 10 * tol(dt))
          << at;
      const auto [w, v] = dist::linalg::eigh(place(h, l, 16));
      EXPECT_LT(rel(w.local().value(), eref.eigenvalues.value()), tol(dt)) << at;
      const Tensor V = whole(v);
      EXPECT_LT(rel(matmul(eager(V) * w.local(), adjoint(eager(V))).value(), h), 10 * tol(dt))
          << at;
      const auto [q, r] = dist::linalg::qr(place(a, l, 16));
      EXPECT_LT(rel(whole(q), qref.first.value()), 100 * tol(dt)) << at;
      EXPECT_LT(rel(whole(r), qref.second.value()), 100 * tol(dt)) << at;
    }
  }
}

// ---- errors ------------------------------------------------------------------------------

TEST(ScalapackOps, TransposeAndAdjoint) {
  for (const DType dt : dtypes()) {
    const Tensor a = random_matrix(7, 5, dt, 60);
    for (const auto& l : layouts()) {
      for (const std::int64_t nb : kBlocks) {
        const DTensor d = place(a, l, nb);
        const DTensor t = dist::linalg::transpose(d), h = dist::linalg::transpose(d, true);
        EXPECT_EQ(t.shape(), (Shape{5, 7}));
        EXPECT_EQ(max_abs_diff(whole(t), transpose(eager(a)).value()), 0.0) << what(l, dt, nb);
        EXPECT_EQ(max_abs_diff(whole(h), adjoint(eager(a)).value()), 0.0) << what(l, dt, nb);
      }
    }
  }
}
