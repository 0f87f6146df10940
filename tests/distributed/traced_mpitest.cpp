// Traced programs over sharded tensors under mpirun -np 1, 2, 4: each rank
// compiles its program (collectives are nodes of it), prepares it once and
// runs it; values and dist::grad's gradients equal one process's.

#include <gtest/gtest.h>

#include "distributed/mpi_test_util.hpp"

using namespace tenferro;
using namespace mpitest;
using dist::Placements;
using dist::TracedDTensor;

TEST(DistTraced, ProgramsGiveTheOneProcessValuesAndGradients) {
  const Tensor a = global_tensor({8, 5}, 1), b = global_tensor({5, 6}, 2);
  EagerTensor ea = runtime()->variable(a), eb = runtime()->variable(b);
  const EagerTensor c = matmul(ea, eb);
  const EagerTensor loss = sum(sin(c) * c);
  loss.backward();
  std::vector<dist::Mesh> meshes = {dist::Mesh::line()};
  if (dist::Communicator::world().size() == 4) {
    meshes.emplace_back(dist::Communicator::world(), std::vector<int>{2, 2});
  }
  for (const auto& mesh : meshes) {
    const bool two = mesh.ndim() == 2;
    const TracedTensor xa = placeholder(f64, {8, 5}), xb = placeholder(f64, {5, 6});
    const TracedDTensor da = dist::distribute(
        xa, mesh, two ? Placements{dist::Shard(0), dist::Shard(1)} : Placements{dist::Shard(0)});
    const TracedDTensor db = dist::distribute(
        xb, mesh, two ? Placements{dist::Replicate(), dist::Shard(1)} : Placements{dist::Shard(1)});
    const TracedDTensor dc = dist::matmul(da, db);
    const TracedDTensor dl =
        dist::sum(dist::map(dc, [](const TracedTensor& t) { return sin(t); }) * dc);
    const auto g = dist::grad(dl, {da, db});
    EXPECT_EQ(g[0].placements(), da.placements());
    EXPECT_EQ(g[1].placements(), db.placements());
    Program p = compile({dist::full_tensor(dl), dist::full_tensor(g[0]), dist::full_tensor(g[1])},
                        {xa, xb});
    EXPECT_GE(
        p.count_ops("tenferro.dist.all_reduce.v1") + p.count_ops("tenferro.dist.all_gather.v1"),
        mesh.comm().size() > 1 ? 1u : 0u);
    // Prepared once, run twice (the second run sends the same collectives again).
    const std::vector<Tensor> in = {a, b};
    PreparedProgram plan = prepare(*runtime()->runtime(), p, InputSignature::of(in));
    for (int rep = 0; rep < 2; ++rep) {
      const auto out = run(*runtime()->runtime(), plan, in);
      EXPECT_NEAR(out[0].item<double>(), loss.item<double>(),
                  1e-12 * (1 + std::abs(loss.item<double>())))
          << mesh.to_string();
      EXPECT_LT(rel(out[1], ea.grad().value()), 1e-12) << mesh.to_string();
      EXPECT_LT(rel(out[2], eb.grad().value()), 1e-12) << mesh.to_string();
    }
  }
}

TEST(DistTraced, SymbolicExtentsAreRefused) {
  const dist::Mesh mesh = dist::Mesh::line();
  const TracedTensor x = placeholder(f64, {SymDim::var("n"), 3});
  try {
    (void)dist::distribute(x, mesh, {dist::Shard(0)});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.what()).find("constant extents"), std::string::npos) << e.what();
  }
}
