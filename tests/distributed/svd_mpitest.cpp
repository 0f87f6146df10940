// The distributed SVD's own route (scalapack_kernels.cpp: p?gebrd, LAPACK's
// ?bdsdc redundantly on every rank, p?ormbr / p?unmbr) under mpirun -np 1,
// 2 and 4, on every grid the ranks allow (1x1, 1x2, 2x1, 2x2, lines, pairs):
// tall, wide and square matrices in f32, f64, c64 and c128 with extents that
// are not multiples of the block (several blocks per rank, so p?gebrd's
// blocked panels and its unblocked tail both run), rank-deficient and zero
// matrices, matrices smaller than the grid, and a non-finite entry on one
// rank. Against the single-process svd (gesdd): singular values to 1e-10
// (2e-4 in single precision), bitwise the same on every rank; U and Vh
// orthonormal, U diag(S) Vh = A, and the vectors of distinct singular values
// the reference's up to a phase each.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "distributed/linalg_test_util.hpp"

using namespace tenferro;
using namespace mpitest;
using namespace linalg_test;
using dist::DTensor;

namespace {

/// S as doubles (f32 widened exactly).
std::vector<double> values_of(const Tensor& s) {
  if (s.dtype() == f64) return s.to_vector<double>();
  const std::vector<float> v = s.to_vector<float>();
  return {v.begin(), v.end()};
}

/// True where `s` is bitwise the same on every rank of `comm` (rank 0's).
bool same_bits_everywhere(const Tensor& s, const dist::Communicator& comm) {
  const std::vector<double> mine = values_of(s);
  std::vector<double> first = mine;
  MPI_Bcast(first.data(), static_cast<int>(first.size()), MPI_DOUBLE, 0, comm.handle());
  int same = std::memcmp(first.data(), mine.data(), mine.size() * sizeof(double)) == 0 ? 1 : 0;
  int all = 0;
  MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_MIN, comm.handle());
  return all == 1;
}

/// max |X^H X - I| of the k columns of X.
double orthonormality(const Tensor& x) {
  const Tensor g = matmul(adjoint(eager(x)), eager(x)).value();
  return max_abs_diff(g, eye(x.dim(1), x.dim(1), x.dtype()));
}

/// The first `r` columns.
Tensor leading(const Tensor& x, std::int64_t r) {
  return x.slice(1, 0, r).contiguous();
}

/// Every check of one distributed SVD against one process's; `rank`: the
/// number of leading singular values that are distinct and nonzero (their
/// vectors are compared up to phase; the rest of a rank-deficient or zero
/// matrix's vectors only for orthonormality).
void expect_svd_matches(const Tensor& a, const Layout& l, std::int64_t nb, std::int64_t rank,
                        const std::string& at) {
  const DType dt = a.dtype();
  const std::int64_t m = a.dim(0), n = a.dim(1), k = std::min(m, n);
  const auto ref = tenferro::linalg::svd(eager(a), false);
  const auto [u, s, vh] = dist::linalg::svd(place(a, l, nb));
  ASSERT_EQ(s.shape(), (Shape{k})) << at;
  ASSERT_EQ(u.shape(), (Shape{m, k})) << at;
  ASSERT_EQ(vh.shape(), (Shape{k, n})) << at;
  EXPECT_EQ(u.placements(), l.placements(nb)) << at;
  EXPECT_EQ(vh.placements(), l.placements(nb)) << at;
  const Tensor S = s.local().value();
  EXPECT_EQ(S.dtype(), real_dtype(dt)) << at;
  EXPECT_TRUE(same_bits_everywhere(S, l.mesh.comm())) << at;
  const double scale = 1.0 + max_abs_diff(ref.S.value(), zeros({k}, real_dtype(dt)));
  EXPECT_LT(max_abs_diff(S, ref.S.value()) / scale, tol(dt)) << at;
  const Tensor U = whole(u), Vh = whole(vh);
  const Tensor V = adjoint(eager(Vh)).value();
  EXPECT_LT(orthonormality(U), 10 * tol(dt)) << at;
  EXPECT_LT(orthonormality(V), 10 * tol(dt)) << at;
  EXPECT_LT(rel(matmul(eager(U) * s.local(), eager(Vh)).value(), a), 10 * tol(dt)) << at;
  if (rank > 0) {
    EXPECT_LT(gauge_distance(leading(U, rank), leading(ref.U.value(), rank)), 100 * tol(dt)) << at;
    EXPECT_LT(gauge_distance(leading(V, rank), leading(adjoint(ref.Vh).value(), rank)),
              100 * tol(dt))
        << at;
  }
}

}  // namespace

TEST(ScalapackSvd, TallWideAndSquareInEveryDtypeOnEveryGrid) {
  // Extents not multiples of the blocks; 37x23 with blocks of 4 gives each
  // rank several blocks in both directions.
  const std::pair<std::int64_t, std::int64_t> shapes[] = {
      {13, 5}, {5, 13}, {9, 9}, {37, 23}, {23, 37}};
  for (const DType dt : dtypes()) {
    for (const auto& [m, n] : shapes) {
      const Tensor a = random_matrix(m, n, dt, 100 + static_cast<std::uint64_t>(m));
      for (const auto& l : layouts()) {
        for (const std::int64_t nb : {2, 3, 4}) {
          const std::string at =
              what(l, dt, nb) + " " + std::to_string(m) + "x" + std::to_string(n);
          SCOPED_TRACE(at);
          expect_svd_matches(a, l, nb, std::min(m, n), at);
        }
      }
    }
  }
}

TEST(ScalapackSvd, RankDeficientAndZeroMatrices) {
  // A = X Y of rank 3 (11x8 and 8x11): three nonzero singular values, the
  // rest zero to rounding; the zero matrix: all zero, U and Vh still
  // orthonormal.
  for (const DType dt : dtypes()) {
    for (const auto& [m, n] : {std::pair<std::int64_t, std::int64_t>{11, 8}, {8, 11}}) {
      const Tensor x = random_matrix(m, 3, dt, 120), y = random_matrix(3, n, dt, 121);
      const Tensor a = matmul(eager(x), eager(y)).value();
      const Tensor z = zeros({m, n}, dt);
      for (const auto& l : layouts()) {
        for (const std::int64_t nb : {2, 3}) {
          const std::string at =
              what(l, dt, nb) + " " + std::to_string(m) + "x" + std::to_string(n);
          SCOPED_TRACE(at);
          expect_svd_matches(a, l, nb, 3, at + " rank 3");
          const Tensor s = dist::linalg::svd(place(a, l, nb)).S.local().value();
          const std::vector<double> sv = values_of(s);
          for (std::size_t i = 3; i < sv.size(); ++i) EXPECT_LT(sv[i], 10 * tol(dt) * sv[0]) << at;
          expect_svd_matches(z, l, nb, 0, at + " zero");
          EXPECT_EQ(max_abs_diff(dist::linalg::svd(place(z, l, nb)).S.local().value(),
                                 zeros({std::min(m, n)}, real_dtype(dt))),
                    0.0)
              << at;
        }
      }
    }
  }
}

TEST(ScalapackSvd, MatricesSmallerThanTheGrid) {
  // Some grid rows or columns own no block (blocks of 2 on a 2x2 grid with
  // a 1x3 or 3x1 matrix; blocks of 4 put everything on coordinate 0).
  const std::pair<std::int64_t, std::int64_t> shapes[] = {{1, 1}, {1, 3}, {3, 1}, {3, 2}, {2, 3}};
  for (const DType dt : dtypes()) {
    for (const auto& [m, n] : shapes) {
      const Tensor a = random_matrix(m, n, dt, 130);
      for (const auto& l : layouts()) {
        for (const std::int64_t nb : {1, 2, 4}) {
          const std::string at =
              what(l, dt, nb) + " " + std::to_string(m) + "x" + std::to_string(n);
          SCOPED_TRACE(at);
          expect_svd_matches(a, l, nb, std::min(m, n), at);
        }
      }
    }
  }
}

TEST(ScalapackSvd, NonFiniteEntryOnOneRankIsNoConvergenceEverywhere) {
  for (const DType dt : dtypes()) {
    for (const auto& [m, n] : {std::pair<std::int64_t, std::int64_t>{7, 5}, {5, 7}}) {
      for (const auto& l : layouts()) {
        const DTensor good = place(random_matrix(m, n, dt, 140), l, 2);
        // A NaN in the last rank's first local entry (if it holds one) and an
        // Inf in rank 0's.
        Tensor local = good.local().value().clone();
        const int me = l.mesh.comm().rank(), last = l.mesh.comm().size() - 1;
        if (local.numel() > 0 && (me == last || me == 0)) {
          const double value = me == last ? std::nan("") : HUGE_VAL;
          if (real_dtype(dt) == f64) {
            static_cast<double*>(local.raw_data())[0] = value;
          } else {
            static_cast<float*>(local.raw_data())[0] = static_cast<float>(value);
          }
        }
        const DTensor bad(good.shape(), good.mesh(), good.placements(), eager(local));
        EXPECT_EQ(same_error_everywhere([&] { (void)dist::linalg::svd(bad); }, l.mesh.comm()),
                  ErrorKind::NoConvergence)
            << what(l, dt, 2);
      }
    }
  }
}
