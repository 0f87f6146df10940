// dist::linalg::eigh_truncated under mpirun -np 1, 2 and 4 on every grid of
// linalg_test_util.hpp: rank, eigenvalues (in descending |w|), discarded
// weight and eigenvectors against the single-process eigh_truncated for
// max rank, cutoff and weight truncations in all four dtypes; the traced
// tier with a constant rank; bad options as the same typed error on every
// rank. Its derivatives are in linalg_grad_mpitest.cpp.

#include <gtest/gtest.h>

#include "distributed/linalg_test_util.hpp"

using namespace linalg_test;
using tenferro::linalg::Truncation;

namespace {

/// A Hermitian matrix with eigenvalues of both signs (a random one).
Tensor hermitian(std::int64_t n, DType dt, std::uint64_t seed) {
  const Tensor a = random_matrix(n, n, dt, seed);
  return (eager(a) + adjoint(eager(a))).value();
}

std::vector<Truncation> truncations() {
  std::vector<Truncation> t(4);
  t[0].max_rank = 3;
  t[1].cutoff = 1.0;
  t[2].max_discarded_weight = 0.05;
  t[3].max_rank = 5;
  t[3].cutoff = 0.2;
  t[3].relative_cutoff = true;
  return t;
}

}  // namespace

TEST(ScalapackOps, TruncatedEighEqualsOneProcessOnEveryGrid) {
  const std::int64_t n = 9;
  const auto ts = truncations();
  for (const DType dt : dtypes()) {
    const Tensor h = hermitian(n, dt, 60);
    for (std::size_t t = 0; t < ts.size(); ++t) {
      const auto ref = tenferro::linalg::eigh_truncated(eager(h), ts[t]);
      ASSERT_GT(ref.rank, 0);
      ASSERT_LT(ref.rank, n);  // something is cut
      // The kept values have both signs: the gather reads both ends of eigh's order.
      const std::vector<double> kept =
          convert(ref.eigenvalues, f64).value().template to_vector<double>();
      if (ref.rank >= 3) {
        EXPECT_LT(*std::min_element(kept.begin(), kept.end()), 0.0);
        EXPECT_GT(*std::max_element(kept.begin(), kept.end()), 0.0);
      }
      for (const auto& l : layouts()) {
        for (const std::int64_t nb : kBlocks) {
          const std::string at = what(l, dt, nb) + " truncation " + std::to_string(t);
          const auto d = dist::linalg::eigh_truncated(place(h, l, nb), ts[t]);
          ASSERT_EQ(d.rank, ref.rank) << at;
          EXPECT_EQ(d.eigenvalues.shape(), (Shape{ref.rank})) << at;
          EXPECT_EQ(d.eigenvectors.shape(), (Shape{n, ref.rank})) << at;
          EXPECT_EQ(d.eigenvectors.placements(), l.placements(nb)) << at;
          EXPECT_LT(rel(d.eigenvalues.local().value(), ref.eigenvalues.value()), tol(dt)) << at;
          EXPECT_LT(rel(d.discarded_weight.local().value(), ref.discarded_weight.value()), tol(dt))
              << at;
          // Each kept vector is one process's, up to a phase, in the same order.
          EXPECT_LT(gauge_distance(whole(d.eigenvectors), ref.eigenvectors.value()), 50 * tol(dt))
              << at;
        }
      }
    }
  }
}

TEST(ScalapackOps, TruncatedEighOfAZeroMatrixKeepsOneVectorAndWeighsNothing) {
  Truncation keep;
  keep.cutoff = 1e-3;
  const Tensor z = zeros(Shape{5, 5}.span(), f64);
  const auto ref = tenferro::linalg::eigh_truncated(eager(z), keep);
  for (const auto& l : layouts()) {
    const auto d = dist::linalg::eigh_truncated(place(z, l, 2), keep);
    EXPECT_EQ(d.rank, ref.rank) << l.name;
    EXPECT_EQ(d.rank, 1) << l.name;
    EXPECT_EQ(d.discarded_weight.local().value().item<double>(), 0.0) << l.name;
    EXPECT_EQ(whole(d.eigenvectors).shape(), (Shape{5, 1})) << l.name;
  }
}

TEST(ScalapackOps, TracedTruncatedEighNeedsAConstantRank) {
  const auto ts = truncations();
  const Tensor h = hermitian(8, c128, 61);
  const auto ref = tenferro::linalg::eigh_truncated(eager(h), ts[0]);
  for (const auto& l : layouts()) {
    const TracedTensor x = placeholder(c128, {8, 8});
    const dist::TracedDTensor dx = dist::distribute(x, l.mesh, l.placements(2));
    const auto tr = dist::linalg::eigh_truncated(dx, ts[0]);
    EXPECT_EQ(tr.rank, 3) << l.name;
    const auto out = run_compiled(*runtime()->runtime(),
                                  compile({dist::full_tensor(tr.eigenvectors),
                                           tr.eigenvalues.local(), tr.discarded_weight.local()},
                                          {x}),
                                  {h});
    EXPECT_LT(gauge_distance(out[0], ref.eigenvectors.value()), 1e-9) << l.name;
    EXPECT_LT(rel(out[1], ref.eigenvalues.value()), 1e-12) << l.name;
    EXPECT_LT(rel(out[2], ref.discarded_weight.value()), 1e-12) << l.name;
    for (std::size_t t = 1; t < 3; ++t) {
      EXPECT_EQ(same_error_everywhere([&] { (void)dist::linalg::eigh_truncated(dx, ts[t]); },
                                      l.mesh.comm()),
                ErrorKind::Unsupported)
          << l.name << " truncation " << t;
    }
  }
}

TEST(ScalapackErrors, TruncatedEighRejectsBadInputOnEveryRank) {
  const Layout& l = layouts().front();
  const Tensor h = hermitian(6, f64, 62);
  Truncation bad_cutoff, bad_weight, no_rank, fine;
  bad_cutoff.cutoff = -1;
  bad_weight.max_discarded_weight = 1.5;
  no_rank.max_rank = 0;
  fine.max_rank = 2;
  const auto kind = [&](const std::function<void()>& f) {
    return same_error_everywhere(f, l.mesh.comm());
  };
  for (const Truncation& t : {bad_cutoff, bad_weight, no_rank}) {
    EXPECT_EQ(kind([&] { (void)dist::linalg::eigh_truncated(place(h, l, 2), t); }),
              ErrorKind::InvalidArgument);
  }
  EXPECT_EQ(kind([&] { (void)dist::linalg::eigh_truncated(place(h, l, 2), fine, 'X'); }),
            ErrorKind::InvalidArgument);
  EXPECT_EQ(kind([&] {
              (void)dist::linalg::eigh_truncated(place(random_matrix(6, 4, f64, 63), l, 2), fine);
            }),
            ErrorKind::ShapeMismatch);
  Tensor nan = h.clone();
  nan.mutable_data<double>()[3] = std::nan("");
  EXPECT_EQ(kind([&] { (void)dist::linalg::eigh_truncated(place(nan, l, 2), fine); }),
            ErrorKind::NoConvergence);
}
