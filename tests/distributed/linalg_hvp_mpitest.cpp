// Second derivatives through the distributed decompositions under mpirun
// -np 1, 2 and 4: the rules emit ops that carry rules themselves (ScaLAPACK
// products and solves, gathers, masks, all-reduces, the gauge checks), so a
// traced gradient differentiates again. Hessian-vector products of losses
// through svd and cholesky equal one process's to 1e-9 relative on every
// r x c grid.

#include <gtest/gtest.h>

#include <functional>

#include "distributed/mpi_test_util.hpp"
#include "tenferro/distributed/linalg.hpp"

using namespace tenferro;
using namespace mpitest;

namespace {

using Loss = std::function<dist::TracedDTensor(const dist::TracedDTensor&, const dist::Mesh&)>;

/// H v of a loss of one f64 matrix, distributed on every r x c grid (blocks
/// of 2) through the gradient of <grad, v>, against one process's.
void expect_hvp_matches(const Tensor& a, const Tensor& v,
                        const std::function<EagerTensor(const EagerTensor&)>& local_loss,
                        const Loss& dist_loss, const std::string& label) {
  EagerTensor ea = runtime()->variable(a);
  sum(grad(local_loss, ea) * runtime()->tensor(v)).backward();
  const Tensor ref = ea.grad().value();
  ASSERT_GT(max_abs_diff(ref, zeros(ref.shape().span(), f64)), 1e-3) << label;
  const dist::Communicator world = dist::Communicator::world();
  const dist::Placements rep{dist::Replicate(), dist::Replicate()};
  for (int r = 1; r <= world.size(); ++r) {
    if (world.size() % r != 0) continue;
    const dist::Mesh mesh(world, {r, world.size() / r});
    const auto pl = dist::block_cyclic_placements(mesh, 2);
    const TracedTensor x = placeholder(f64, {a.dim(0), a.dim(1)});
    const dist::TracedDTensor dx = dist::distribute(x, mesh, pl);
    const dist::TracedDTensor g = dist::grad(dist_loss(dx, mesh), {dx})[0];
    const dist::TracedDTensor gv =
        dist::redistribute(dist::sum(g * dist::distribute(constant(v), mesh, pl)), rep);
    const dist::TracedDTensor hv = dist::grad(gv, {dx})[0];
    const auto out =
        run_compiled(*runtime()->runtime(), compile({dist::full_tensor(hv)}, {x}), {a});
    EXPECT_LT(rel(out[0], ref), 1e-9) << label << " on " << r << "x" << world.size() / r;
  }
}

Tensor random_matrix(std::int64_t m, std::int64_t n, std::uint64_t seed) {
  Generator gen(seed);
  return randn({m, n}, f64, gen);
}

}  // namespace

TEST(ScalapackHvp, SvdAndCholeskyHessianVectorProductsEqualOneProcess) {
  const dist::Placements rep{dist::Replicate(), dist::Replicate()};
  const auto cube = [](const TracedTensor& t) { return t * t * t; };
  // sum(S^3) + sum(|U|^2 W): second derivatives of values and vectors.
  const Tensor a = random_matrix(7, 5, 300), v = random_matrix(7, 5, 301);
  const Tensor w = random_matrix(7, 5, 302);
  expect_hvp_matches(
      a, v,
      [&](const EagerTensor& x) {
        const auto f = tenferro::linalg::svd(x, false);
        return sum(f.S * f.S * f.S) + sum(f.U * f.U * runtime()->tensor(w));
      },
      [&](const dist::TracedDTensor& x, const dist::Mesh& mesh) {
        const auto f = dist::linalg::svd(x);
        const auto sq = [](const TracedTensor& t) { return t * t; };
        const auto pl = dist::block_cyclic_placements(mesh, 2);
        return dist::redistribute(
            dist::sum(dist::map(f.S, cube)) +
                dist::sum(dist::map(f.U, sq) * dist::distribute(constant(w), mesh, pl)),
            rep);
      },
      "svd");
  // sum(L^3) of the Cholesky factor of B B^T + 6 I.
  const Tensor b = random_matrix(6, 6, 303), u = random_matrix(6, 6, 304);
  const Tensor spd = (matmul(runtime()->tensor(b), transpose(runtime()->tensor(b))) +
                      runtime()->tensor(eye(6, 6, f64)) * Scalar(6.0))
                         .value();
  expect_hvp_matches(
      spd, (runtime()->tensor(u) + transpose(runtime()->tensor(u))).value(),
      [&](const EagerTensor& x) {
        const EagerTensor l = tenferro::linalg::cholesky(x);
        return sum(l * l * l);
      },
      [&](const dist::TracedDTensor& x, const dist::Mesh&) {
        return dist::redistribute(dist::sum(dist::map(dist::linalg::cholesky(x), cube)), rep);
      },
      "cholesky");
}
