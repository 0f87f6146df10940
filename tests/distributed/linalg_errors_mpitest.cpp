// Distributed linear algebra under mpirun -np 1, 2 and 4: bad inputs, also
// on one rank only, raise the same typed error on every rank; matmul and
// solve gradients against one process (linalg_grad_mpitest.cpp has the
// decompositions').

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "distributed/linalg_test_util.hpp"

using namespace tenferro;
using namespace mpitest;
using namespace linalg_test;
using dist::DTensor;
using dist::Placements;

TEST(ScalapackErrors, MetadataErrorsAreTypedOnEveryRank) {
  const Layout& l = layouts().front();
  const dist::Communicator& comm = l.mesh.comm();
  const DTensor rect = place(random_matrix(7, 5, f64, 13), l, 2);
  const DTensor sq = place(random_matrix(5, 5, f64, 14), l, 2);
  EXPECT_EQ(same_error_everywhere([&] { (void)dist::linalg::eigh(rect); }, comm),
            ErrorKind::ShapeMismatch);
  EXPECT_EQ(same_error_everywhere([&] { (void)dist::linalg::cholesky(rect); }, comm),
            ErrorKind::ShapeMismatch);
  EXPECT_EQ(same_error_everywhere([&] { (void)dist::linalg::solve(rect, rect); }, comm),
            ErrorKind::ShapeMismatch);
  EXPECT_EQ(same_error_everywhere([&] { (void)dist::linalg::matmul(sq, rect); }, comm),
            ErrorKind::ShapeMismatch);  // [5, 5] x [7, 5]
  EXPECT_EQ(same_error_everywhere([&] { (void)dist::linalg::matmul(rect, sq, 'X'); }, comm),
            ErrorKind::InvalidArgument);
  EXPECT_EQ(same_error_everywhere([&] { (void)dist::linalg::eigh(sq, 'Q'); }, comm),
            ErrorKind::InvalidArgument);
  // Not block-cyclic: contiguous shards.
  const DTensor contiguous = dist::distribute(
      eager(random_matrix(5, 5, f64, 15)), l.mesh,
      l.mesh.ndim() == 2 ? Placements{dist::Shard(0), dist::Shard(1)} : Placements{dist::Shard(1)});
  try {
    (void)dist::linalg::svd(contiguous);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("to_block_cyclic"), std::string::npos) << e.what();
  }
  // Two block sizes.
  const DTensor sq3 = place(random_matrix(5, 5, f64, 14), l, 3);
  EXPECT_EQ(same_error_everywhere([&] { (void)dist::linalg::solve(sq, sq3); }, comm),
            ErrorKind::InvalidArgument);
  // Not a matrix.
  const DTensor vec =
      dist::distribute(eager(Tensor::from_col_major({5}, std::vector<double>(5, 1.0))), l.mesh,
                       Placements(static_cast<std::size_t>(l.mesh.ndim()), dist::Replicate()));
  EXPECT_EQ(same_error_everywhere([&] { (void)dist::linalg::qr(vec); }, comm),
            ErrorKind::RankMismatch);
}

TEST(ScalapackErrors, MismatchedMeshesAreContextMismatch) {
  const auto& all = layouts();
  const Layout& a = all.front();
  const Layout& b = all[1];  // another mesh shape (or the 1-D line) on the same world
  ASSERT_FALSE(a.mesh == b.mesh);
  const DTensor x = place(random_matrix(5, 5, f64, 17), a, 2);
  const DTensor y = place(random_matrix(5, 5, f64, 18), b, 2);
  EXPECT_EQ(
      same_error_everywhere([&] { (void)dist::linalg::matmul(x, y); }, dist::Communicator::world()),
      ErrorKind::ContextMismatch);
}

TEST(ScalapackErrors, DataErrorsAreAgreedAcrossTheGrid) {
  const std::int64_t n = 6;
  for (const auto& l : layouts()) {
    const dist::Communicator& comm = l.mesh.comm();
    for (const DType dt : {f64, c64}) {
      // Singular: a zero column (an exactly zero pivot).
      const EagerTensor zero_col =
          cast(eager(Tensor::from_col_major({n}, std::vector<double>{1, 1, 0, 1, 1, 1})),
               real_dtype(dt));
      const Tensor sing = (eager(random_matrix(n, n, dt, 19)) * zero_col).value();
      const DTensor ds = place(sing, l, 4);
      const DTensor rhs = place(random_matrix(n, 2, dt, 20), l, 4);
      EXPECT_EQ(same_error_everywhere([&] { (void)dist::linalg::solve(ds, rhs); }, comm),
                ErrorKind::Singular)
          << l.name;
      // Not positive definite: a Hermitian matrix with a negative eigenvalue
      // (the failing minor sits in a block another rank owns for nb = 2).
      const EagerTensor signs =
          cast(eager(Tensor::from_col_major({n}, std::vector<double>{1, 1, 1, 1, -1, 1})),
               real_dtype(dt));
      const Tensor indef = (eager(eye(n, n, dt)) * signs).value();
      for (const std::int64_t nb : {2, 4}) {
        const DTensor di = place(indef, l, nb);
        try {
          (void)dist::linalg::cholesky(di);
          ADD_FAILURE() << "no error " << l.name;
        } catch (const Error& e) {
          EXPECT_EQ(e.kind(), ErrorKind::Singular) << l.name;
          EXPECT_NE(std::string(e.what()).find("not positive definite"), std::string::npos)
              << e.what();
        }
        EXPECT_EQ(same_error_everywhere([&] { (void)dist::linalg::cholesky(di); }, comm),
                  ErrorKind::Singular);
      }
    }
  }
}

TEST(ScalapackErrors, BadBlocksOnOneRankGiveTheSameErrorEverywhere) {
  for (const auto& l : layouts()) {
    const dist::Communicator& comm = l.mesh.comm();
    const bool last = comm.rank() == comm.size() - 1;
    const DTensor a = place(random_matrix(7, 7, f64, 21), l, 2);
    // A NaN in the last rank's block: svd and eigh refuse on every rank.
    Tensor mine = a.local().value().clone();
    if (last && mine.numel() > 0) mine.mutable_data<double>()[0] = std::nan("");
    const DTensor bad(a.shape(), a.mesh(), a.placements(), eager(mine));
    const ErrorKind svd_kind = same_error_everywhere([&] { (void)dist::linalg::svd(bad); }, comm);
    const ErrorKind eigh_kind = same_error_everywhere([&] { (void)dist::linalg::eigh(bad); }, comm);
    EXPECT_EQ(svd_kind, ErrorKind::NoConvergence) << l.name;
    EXPECT_EQ(eigh_kind, ErrorKind::NoConvergence) << l.name;
    if (comm.size() > 1) {
      // The last rank's block in another dtype: refused on every rank.
      const EagerTensor other = last ? cast(a.local(), f32) : a.local();
      const DTensor mixed(a.shape(), a.mesh(), a.placements(), other);
      EXPECT_EQ(same_error_everywhere([&] { (void)dist::linalg::qr(mixed); }, comm),
                ErrorKind::DTypeMismatch)
          << l.name;
      EXPECT_EQ(same_error_everywhere([&] { (void)dist::linalg::matmul(mixed, a); }, comm),
                ErrorKind::DTypeMismatch)
          << l.name;
    }
    // The grid is still usable after the errors.
    const auto [q, r] = dist::linalg::qr(a);
    EXPECT_LT(rel(whole(dist::linalg::matmul(q, r)), whole(a)), 1e-12) << l.name;
  }
}

// ---- derivatives ---------------------------------------------------------------------------

namespace {

EagerTensor apply_flag(const EagerTensor& x, char t) {
  return t == 'N' ? x : t == 'T' ? transpose(x) : adjoint(x);
}

}  // namespace

TEST(ScalapackAd, MatmulGradientsEqualOneProcess) {
  const std::int64_t m = 5, k = 4, n = 6;
  const std::pair<char, char> flags[] = {{'N', 'N'}, {'T', 'C'}, {'C', 'T'}, {'N', 'T'}};
  for (const DType dt : {f64, c128}) {
    for (const auto& [ta, tb] : flags) {
      const Tensor a = ta == 'N' ? random_matrix(m, k, dt, 30) : random_matrix(k, m, dt, 30);
      const Tensor b = tb == 'N' ? random_matrix(k, n, dt, 31) : random_matrix(n, k, dt, 31);
      const Tensor w = random_matrix(m, n, dt, 32);
      EagerTensor ea = runtime()->variable(a), eb = runtime()->variable(b);
      // A loss that depends on the phases of C, not only on |C|.
      const EagerTensor c = matmul(apply_flag(ea, ta), apply_flag(eb, tb));
      sum(square(abs(c + eager(w) * c * c))).backward();
      for (const auto& l : layouts()) {
        DTensor da = place(a, l, 2), db = place(b, l, 2);
        da.requires_grad_();
        db.requires_grad_();
        const DTensor dw = place(w, l, 2);
        const DTensor dc = dist::linalg::matmul(da, db, ta, tb);
        const DTensor loss = dist::sum(
            dist::map(dc + dw * dc * dc, [](const EagerTensor& t) { return square(abs(t)); }));
        dist::backward(loss);
        const std::string at = what(l, dt, 2) + " " + ta + tb;
        EXPECT_EQ(da.grad().placements(), da.placements()) << at;
        EXPECT_LT(rel(whole(da.grad()), ea.grad().value()), 1e-12) << at;
        EXPECT_LT(rel(whole(db.grad()), eb.grad().value()), 1e-12) << at;
      }
    }
  }
}

TEST(ScalapackAd, TracedMatmulGradientEqualsOneProcess) {
  const Tensor a = random_matrix(6, 5, c128, 33), b = random_matrix(4, 6, c128, 34);
  EagerTensor ea = runtime()->variable(a), eb = runtime()->variable(b);
  sum(square(abs(matmul(transpose(ea), adjoint(eb))))).backward();
  for (const auto& l : layouts()) {
    const TracedTensor xa = placeholder(c128, {6, 5}), xb = placeholder(c128, {4, 6});
    const dist::TracedDTensor da = dist::distribute(xa, l.mesh, l.placements(3));
    const dist::TracedDTensor db = dist::distribute(xb, l.mesh, l.placements(3));
    const dist::TracedDTensor c = dist::linalg::matmul(da, db, 'T', 'C');
    const dist::TracedDTensor loss =
        dist::sum(dist::map(c, [](const TracedTensor& t) { return square(abs(t)); }));
    const auto g = dist::grad(loss, {da, db});
    Program p = compile({dist::full_tensor(g[0]), dist::full_tensor(g[1])}, {xa, xb});
    EXPECT_EQ(p.count_ops("tenferro.dist.scalapack_gemm.v1"), 3u) << l.name;
    const std::vector<Tensor> in = {a, b};
    const auto out = run_compiled(*runtime()->runtime(), p, in);
    EXPECT_LT(rel(out[0], ea.grad().value()), 1e-12) << l.name;
    EXPECT_LT(rel(out[1], eb.grad().value()), 1e-12) << l.name;
  }
}

TEST(ScalapackAd, SolveGradientsEqualOneProcess) {
  const std::int64_t n = 6, k = 3;
  for (const DType dt : {f64, c128}) {
    const Tensor a =
        (eager(random_matrix(n, n, dt, 61)) + eager(eye(n, n, dt)) * Scalar(4.0)).value();
    const Tensor b = random_matrix(n, k, dt, 62);
    EagerTensor ea = runtime()->variable(a), eb = runtime()->variable(b);
    sum(square(abs(tenferro::linalg::solve(ea, eb)))).backward();
    for (const auto& l : layouts()) {
      for (const std::int64_t nb : kBlocks) {
        DTensor da = place(a, l, nb), db = place(b, l, nb);
        da.requires_grad_();
        db.requires_grad_();
        const DTensor x = dist::linalg::solve(da, db);
        dist::backward(
            dist::sum(dist::map(x, [](const EagerTensor& t) { return square(abs(t)); })));
        EXPECT_LT(rel(whole(da.grad()), ea.grad().value()), 1e-10) << what(l, dt, nb);
        EXPECT_LT(rel(whole(db.grad()), eb.grad().value()), 1e-10) << what(l, dt, nb);
      }
    }
  }
  // The traced tier, and the transpose's own gradient through it.
  const Layout& l = layouts().front();
  const Tensor a =
      (eager(random_matrix(n, n, c128, 63)) + eager(eye(n, n, c128)) * Scalar(4.0)).value();
  const Tensor b = random_matrix(k, n, c128, 64);
  EagerTensor ea = runtime()->variable(a), eb = runtime()->variable(b);
  sum(square(abs(tenferro::linalg::solve(ea, adjoint(eb))))).backward();
  const TracedTensor xa = placeholder(c128, {n, n}), xb = placeholder(c128, {k, n});
  const dist::TracedDTensor ta = dist::distribute(xa, l.mesh, l.placements(2));
  const dist::TracedDTensor tb = dist::distribute(xb, l.mesh, l.placements(2));
  const dist::TracedDTensor x = dist::linalg::solve(ta, dist::linalg::transpose(tb, true));
  const auto g = dist::grad(
      dist::sum(dist::map(x, [](const TracedTensor& t) { return square(abs(t)); })), {ta, tb});
  const auto out =
      run_compiled(*runtime()->runtime(),
                   compile({dist::full_tensor(g[0]), dist::full_tensor(g[1])}, {xa, xb}), {a, b});
  EXPECT_LT(rel(out[0], ea.grad().value()), 1e-10);
  EXPECT_LT(rel(out[1], eb.grad().value()), 1e-10);
}
