// Gradients of the distributed decompositions against central finite
// differences of the same distributed computation, under mpirun -np 1, 2
// and 4 (the r x c grid of all ranks with the most rows, blocks of 2): for a
// loss L of the factors and a random direction V, <dL/dA, V> from
// dist::backward equals (L(A + hV) - L(A - hV)) / 2h. The losses are blind
// to the gauge of singular and eigen vectors (|X|^2 weighted), so both sides
// are defined.

#include <gtest/gtest.h>

#include <functional>

#include "distributed/mpi_test_util.hpp"
#include "tenferro/distributed/linalg.hpp"

using namespace tenferro;
using namespace mpitest;
using dist::DTensor;

namespace {

/// The world's ranks as an r x c grid with r the largest divisor up to sqrt(P).
const dist::Mesh& grid() {
  static const dist::Mesh mesh = [] {
    const dist::Communicator world = dist::Communicator::world();
    const int p = world.size();
    int r = 1;
    for (int k = 1; k * k <= p; ++k)
      if (p % k == 0) r = k;
    return dist::Mesh(world, {r, p / r});
  }();
  return mesh;
}

constexpr std::int64_t kBlock = 2;

DTensor place(const Tensor& full) {
  return dist::distribute(runtime()->tensor(full), grid(),
                          dist::block_cyclic_placements(grid(), kBlock));
}

Tensor random_matrix(std::int64_t m, std::int64_t n, std::uint64_t seed) {
  Generator gen(seed);
  return randn({m, n}, f64, gen);
}

/// sum(x * w) with w placed like x (a Partial scalar), w a fixed random tensor.
DTensor weighted(const DTensor& x, std::uint64_t seed) {
  Generator gen(seed);
  const Tensor w = randn(std::vector<std::int64_t>(x.shape().begin(), x.shape().end()), f64, gen);
  return dist::sum(x * dist::distribute(runtime()->tensor(w), x.mesh(), x.placements()));
}

DTensor squared(const DTensor& x) {
  return dist::map(x, [](const EagerTensor& t) { return t * t; });
}

double value(const DTensor& loss) {
  return dist::item(loss);
}

/// <dL/dA, V> by reverse mode and by central differences of L.
void expect_gradient_matches_differences(const std::string& what, const Tensor& a, const Tensor& v,
                                         const std::function<DTensor(const DTensor&)>& loss) {
  DTensor da = place(a);
  da.requires_grad_();
  dist::backward(loss(da));
  const Tensor g = dist::full_tensor(da.grad()).value();
  const double directional =
      sum(runtime()->tensor(g) * runtime()->tensor(v)).value().item<double>();
  const double h = 1e-5;
  const auto at = [&](double t) {
    return value(
        loss(place(add(a, mul(v, Tensor::scalar(t), runtime()->backend()), runtime()->backend()))));
  };
  const double fd = (at(h) - at(-h)) / (2 * h);
  EXPECT_NEAR(directional, fd, 1e-6 * (1 + std::abs(fd))) << what;
}

}  // namespace

TEST(ScalapackFiniteDifferences, DecompositionGradientsMatchCentralDifferences) {
  const Tensor a = random_matrix(9, 7, 301), v = random_matrix(9, 7, 302);
  // svd: values and both vector factors, gauge-blind.
  expect_gradient_matches_differences("svd", a, v, [](const DTensor& x) {
    const auto f = dist::linalg::svd(x);
    return weighted(squared(f.U), 11) + weighted(f.S, 12) + weighted(squared(f.Vh), 13);
  });
  // Truncated to rank 4: the kept triplets and the discarded weight.
  expect_gradient_matches_differences("svd_truncated", a, v, [](const DTensor& x) {
    linalg::Truncation keep;
    keep.max_rank = 4;
    const auto f = dist::linalg::svd_truncated(x, keep);
    return weighted(squared(f.U), 14) + weighted(f.S, 15) + weighted(squared(f.Vh), 16) +
           f.discarded_weight * Scalar(3.0);
  });
  // qr of a tall matrix: both factors.
  expect_gradient_matches_differences("qr", a, v, [](const DTensor& x) {
    const auto [q, r] = dist::linalg::qr(x);
    return weighted(q, 17) + weighted(r, 18);
  });
  // Symmetric input for eigh and a positive-definite one for cholesky; the
  // direction keeps the symmetry.
  const Tensor b = random_matrix(8, 8, 303), w = random_matrix(8, 8, 304);
  Backend& cpu = runtime()->backend();
  const Tensor sym = add(b, b.permute(std::vector<std::int64_t>{1, 0}), cpu);
  const Tensor dir = add(w, w.permute(std::vector<std::int64_t>{1, 0}), cpu);
  expect_gradient_matches_differences("eigh", sym, dir, [](const DTensor& x) {
    const auto f = dist::linalg::eigh(x);
    return weighted(f.eigenvalues, 19) + weighted(squared(f.eigenvectors), 20);
  });
  const Tensor spd = add(matmul(b, b.permute(std::vector<std::int64_t>{1, 0}), cpu),
                         mul(eye(8, 8, f64), Tensor::scalar(8.0), cpu), cpu);
  expect_gradient_matches_differences("cholesky", spd, dir, [](const DTensor& x) {
    return weighted(dist::linalg::cholesky(x), 21);
  });
  // solve: the gradient reaches A (and B, fixed here).
  const Tensor rhs = random_matrix(8, 3, 305);
  expect_gradient_matches_differences("solve", spd, w, [&](const DTensor& x) {
    return weighted(dist::linalg::solve(x, place(rhs)), 22);
  });
}
