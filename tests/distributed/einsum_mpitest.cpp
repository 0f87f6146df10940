// einsum, matmul and permute over sharded tensors under mpirun -np 1, 2, 4:
// values and gradients against one process, the strategy each step chose and
// the bytes it reports, refusals.

#include <gtest/gtest.h>

#include "distributed/mpi_test_util.hpp"

using namespace tenferro;
using namespace mpitest;
using dist::DTensor;
using dist::Placements;

namespace {

DTensor put(const Tensor& t, const dist::Mesh& mesh, Placements ps) {
  return dist::distribute(runtime()->tensor(t), mesh, std::move(ps));
}

}  // namespace

TEST(DistEinsum, MatmulOnALineEqualsOneProcessForEveryLayout) {
  const dist::Mesh mesh = dist::Mesh::line();
  const Tensor a = global_tensor({9, 6}, 1), b = global_tensor({6, 7}, 2);
  const Tensor want = matmul(a, b, runtime()->backend());
  const std::vector<Placements> layouts = {{dist::Shard(0)},
                                           {dist::Shard(1)},
                                           {dist::Replicate()},
                                           {dist::Partial()},
                                           {dist::Shard(0, 2)}};
  for (const auto& pa : layouts) {
    for (const auto& pb : layouts) {
      dist::EinsumReport report;
      const auto before = dist::comm_stats();
      const DTensor c = dist::matmul(put(a, mesh, pa), put(b, mesh, pb), &report);
      EXPECT_EQ(report.bytes_sent, dist::comm_stats().bytes_sent - before.bytes_sent);
      ASSERT_EQ(report.steps.size(), 1u);
      EXPECT_LT(rel(dist::full_tensor(c).value(), want), 1e-13)
          << pa[0].to_string() << " x " << pb[0].to_string() << " via " << report.steps[0];
    }
  }
  // Row-sharded A times replicated B needs no communication: rows stay sharded.
  dist::EinsumReport report;
  const DTensor c =
      dist::matmul(put(a, mesh, {dist::Shard(0)}), put(b, mesh, {dist::Replicate()}), &report);
  EXPECT_EQ(report.bytes_sent, 0u);
  if (world_size() > 1) {
    EXPECT_EQ(c.placements(), (Placements{dist::Shard(0)}));
  }
  // Both sharded on a long contracted index: local products, a pending sum
  // (its later reduction, 16 elements, is cheaper than moving either operand).
  const Tensor wide = global_tensor({4, 40}, 12), tall = global_tensor({40, 4}, 13);
  const DTensor k =
      dist::matmul(put(wide, mesh, {dist::Shard(1)}), put(tall, mesh, {dist::Shard(0)}), &report);
  EXPECT_EQ(report.bytes_sent, 0u);
  EXPECT_EQ(k.placements()[0].kind,
            world_size() > 1 ? dist::Placement::Kind::Partial : k.placements()[0].kind);
  EXPECT_LT(rel(dist::full_tensor(k).value(), matmul(wide, tall, runtime()->backend())), 1e-13);
}

TEST(DistEinsum, TwoDimensionalMeshShardsBothFreeIndices) {
  if (world_size() != 4) GTEST_SKIP() << "needs 4 ranks";
  const dist::Mesh mesh(dist::Communicator::world(), {2, 2});
  const std::int64_t n = 32;
  const Tensor a = global_tensor({n, n}, 3), b = global_tensor({n, n}, 4);
  const Placements block = {dist::Shard(0), dist::Shard(1)};
  dist::EinsumReport report;
  const DTensor c = dist::matmul(put(a, mesh, block), put(b, mesh, block), &report);
  EXPECT_LT(rel(dist::full_tensor(c).value(), matmul(a, b, runtime()->backend())), 1e-13);
  // Each rank moves O(N^2 / sqrt(P)) elements, less than gathering both operands.
  const std::uint64_t gather_both = 2u * static_cast<std::uint64_t>(n * n / 4) * 8u * 3u;
  EXPECT_LT(report.bytes_sent, gather_both) << report.steps[0];
  ASSERT_EQ(report.steps.size(), 1u);
  EXPECT_EQ(report.steps[0], "summa(i,k)");  // mesh axis 0 shards i, axis 1 k, in panels
}

TEST(DistEinsum, SummaEqualsGatheringBothOperandsInValueGradientAndBytes) {
  if (world_size() != 4) GTEST_SKIP() << "needs 4 ranks";
  const dist::Mesh mesh(dist::Communicator::world(), {2, 2});
  const Tensor a = global_tensor({13, 11}, 21), b = global_tensor({11, 9}, 22);
  EagerTensor ea = runtime()->variable(a), eb = runtime()->variable(b);
  const EagerTensor c = matmul(ea, eb);
  sum(sin(c) * c).backward();
  // Contiguous blocks; block-cyclic with different blocks on the two sides
  // (panels end where either owner changes); contiguous against cyclic.
  const std::vector<std::pair<Placements, Placements>> layouts = {
      {{dist::Shard(0), dist::Shard(1)}, {dist::Shard(0), dist::Shard(1)}},
      {{dist::Shard(0, 2), dist::Shard(1, 3)}, {dist::Shard(0, 2), dist::Shard(1, 2)}},
      {{dist::Shard(0), dist::Shard(1)}, {dist::Shard(0, 1), dist::Shard(1)}}};
  for (const auto& [pa, pb] : layouts) {
    for (const std::int64_t width : {std::int64_t{2}, std::int64_t{256}}) {
      std::vector<dist::EinsumReport> reports(2);
      std::vector<Tensor> values, grads_a, grads_b;
      for (const bool summa : {true, false}) {
        DTensor da = put(a, mesh, pa), db = put(b, mesh, pb);
        da.requires_grad_();
        db.requires_grad_();
        dist::EinsumReport& report = reports[summa ? 0 : 1];
        const DTensor dc = dist::matmul(da, db, &report,
                                        dist::EinsumOptions{.summa = summa, .summa_panel = width});
        dist::backward(dist::sum(dist::map(dc, [](const EagerTensor& t) { return sin(t); }) * dc));
        values.push_back(dist::full_tensor(dc).value());
        EXPECT_EQ(da.grad().placements(), pa);
        EXPECT_EQ(db.grad().placements(), pb);
        grads_a.push_back(dist::full_tensor(da.grad()).value());
        grads_b.push_back(dist::full_tensor(db.grad()).value());
      }
      const std::string what = pa[0].to_string() + pa[1].to_string() + " x " + pb[0].to_string() +
                               pb[1].to_string() + " panel " + std::to_string(width);
      ASSERT_EQ(reports[0].steps.size(), 1u);
      EXPECT_EQ(reports[0].steps[0], "summa(i,k)") << what;
      EXPECT_EQ(reports[1].steps[0], "i,k") << what;
      // The same data move: each rank sends its part of A along the mesh row
      // and of B along the column once, panel by panel or all at once.
      EXPECT_EQ(reports[0].bytes_sent, reports[1].bytes_sent) << what;
      EXPECT_EQ(reports[0].model_bytes, reports[1].model_bytes) << what;
      EXPECT_LT(rel(values[0], c.value()), 1e-13) << what;
      EXPECT_LT(rel(values[1], c.value()), 1e-13) << what;
      EXPECT_LT(rel(grads_a[0], ea.grad().value()), 1e-12) << what;
      EXPECT_LT(rel(grads_b[0], eb.grad().value()), 1e-12) << what;
    }
  }
  // A panel of 2 runs ceil(local extent / 2) broadcasts per owner and operand.
  dist::reset_comm_stats();
  (void)dist::matmul(put(a, mesh, layouts[0].first), put(b, mesh, layouts[0].second), nullptr,
                     dist::EinsumOptions{.summa_panel = 2});
  const auto before = dist::comm_stats().collectives;
  (void)dist::matmul(put(a, mesh, layouts[0].first), put(b, mesh, layouts[0].second), nullptr,
                     dist::EinsumOptions{.summa_panel = 2});
  // j = 11 splits 6 + 5 on both sides: panels 2,2,2 | 2,2,1 -> 6 panels, two
  // broadcasts each (the distribute calls move nothing).
  EXPECT_EQ(dist::comm_stats().collectives - before, 2u * 6u);
}

TEST(DistEinsum, SummaInATracedProgramGivesTheOneProcessGradient) {
  if (world_size() != 4) GTEST_SKIP() << "needs 4 ranks";
  const dist::Mesh mesh(dist::Communicator::world(), {2, 2});
  const Tensor a = global_tensor({10, 7}, 23), b = global_tensor({7, 6}, 24);
  EagerTensor ea = runtime()->variable(a), eb = runtime()->variable(b);
  const EagerTensor loss = sum(cos(matmul(ea, eb)));
  loss.backward();
  const TracedTensor xa = placeholder(f64, {10, 7}), xb = placeholder(f64, {7, 6});
  const Placements block = {dist::Shard(0), dist::Shard(1, 2)};
  const dist::TracedDTensor da = dist::distribute(xa, mesh, block);
  const dist::TracedDTensor db = dist::distribute(xb, mesh, block);
  const dist::TracedDTensor dl =
      dist::sum(dist::map(dist::matmul(da, db, nullptr, dist::EinsumOptions{.summa_panel = 2}),
                          [](const TracedTensor& t) { return cos(t); }));
  const auto g = dist::grad(dl, {da, db});
  Program p =
      compile({dist::full_tensor(dl), dist::full_tensor(g[0]), dist::full_tensor(g[1])}, {xa, xb});
  EXPECT_GT(p.count_ops("tenferro.dist.broadcast.v1"), 0u);
  EXPECT_EQ(p.count_ops("tenferro.dist.broadcast.v1"), p.count_ops("tenferro.dist.reduce.v1"));
  const auto out = run_compiled(*runtime()->runtime(), p, {a, b});
  EXPECT_NEAR(out[0].item<double>(), loss.item<double>(),
              1e-12 * (1 + std::abs(loss.item<double>())));
  EXPECT_LT(rel(out[1], ea.grad().value()), 1e-12);
  EXPECT_LT(rel(out[2], eb.grad().value()), 1e-12);
}

TEST(DistEinsum, NetworksAndTheirGradientsEqualOneProcess) {
  const Tensor a = global_tensor({5, 6}, 5), b = global_tensor({6, 4, 3}, 6);
  const Tensor c = global_tensor({3, 7}, 7), d = global_tensor({7, 5}, 8);
  const char* eq = "ij,jkl,lm,mi->k";
  EagerTensor ea = runtime()->variable(a), eb = runtime()->variable(b);
  EagerTensor ec = runtime()->variable(c), ed = runtime()->variable(d);
  const EagerTensor y = einsum(eq, {ea, eb, ec, ed});
  sum(y * y).backward();
  std::vector<dist::Mesh> meshes = {dist::Mesh::line()};
  if (world_size() == 4) meshes.emplace_back(dist::Communicator::world(), std::vector<int>{2, 2});
  for (const auto& mesh : meshes) {
    const bool two = mesh.ndim() == 2;
    DTensor da =
        put(a, mesh, two ? Placements{dist::Shard(0), dist::Shard(1)} : Placements{dist::Shard(1)});
    DTensor db =
        put(b, mesh,
            two ? Placements{dist::Replicate(), dist::Shard(1)} : Placements{dist::Shard(0, 2)});
    DTensor dc =
        put(c, mesh,
            two ? Placements{dist::Shard(1), dist::Replicate()} : Placements{dist::Replicate()});
    DTensor dd = put(
        d, mesh, two ? Placements{dist::Partial(), dist::Shard(0)} : Placements{dist::Shard(0)});
    for (DTensor* t : {&da, &db, &dc, &dd}) t->requires_grad_();
    dist::EinsumReport report;
    const DTensor dy = dist::einsum(eq, {da, db, dc, dd}, &report);
    EXPECT_EQ(report.steps.size(), 3u);
    EXPECT_LT(rel(dist::full_tensor(dy).value(), y.value()), 1e-12) << mesh.to_string();
    dist::backward(dist::sum(dy * dy));
    EXPECT_LT(rel(dist::full_tensor(da.grad()).value(), ea.grad().value()), 1e-12);
    EXPECT_LT(rel(dist::full_tensor(db.grad()).value(), eb.grad().value()), 1e-12);
    EXPECT_LT(rel(dist::full_tensor(dc.grad()).value(), ec.grad().value()), 1e-12);
    EXPECT_LT(rel(dist::full_tensor(dd.grad()).value(), ed.grad().value()), 1e-12);
  }
}

TEST(DistEinsum, IntegerLabelsReachPastTheAlphabet) {
  // 60 distinct labels (more than the 52 letters): a ring of 30 matrices.
  const dist::Mesh mesh = dist::Mesh::line();
  EinsumLabels labels;
  std::vector<EagerTensor> local;
  std::vector<DTensor> sharded;
  for (int k = 0; k < 30; ++k) {
    labels.inputs.push_back({1000 + k, 1000 + (k + 1) % 30});
    const Tensor m = global_tensor({3, 3}, 100 + static_cast<std::uint64_t>(k));
    local.push_back(runtime()->tensor(m));
    sharded.push_back(put(m, mesh, {dist::Shard(k % 2)}));
  }
  labels.output = std::vector<std::int64_t>{};
  const DTensor y = dist::einsum(labels, sharded);
  const EagerTensor want = einsum(labels, local);
  EXPECT_LT(rel(dist::full_tensor(y).value(), want.value()), 1e-12);
  labels.inputs.pop_back();
  try {
    (void)dist::einsum(labels, sharded);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
  }
}

TEST(DistEinsum, PermuteMovesNoData) {
  const dist::Mesh mesh = dist::Mesh::line();
  const Tensor a = global_tensor({4, 5, 6}, 9);
  const DTensor d = put(a, mesh, {dist::Shard(1)});
  dist::reset_comm_stats();
  const DTensor p = dist::permute(d, {2, 0, 1});
  EXPECT_EQ(dist::comm_stats().collectives, 0u);
  EXPECT_EQ(p.placements(), (Placements{dist::Shard(2)}));
  EXPECT_EQ(
      max_abs_diff(dist::full_tensor(p).value(), a.permute(std::vector<std::int64_t>{2, 0, 1})),
      0.0);
}

TEST(DistEinsum, RefusesBadEquationsOnEveryRank) {
  const dist::Mesh mesh = dist::Mesh::line();
  const DTensor a = put(global_tensor({4, 5}, 1), mesh, {dist::Shard(0)});
  const DTensor b = put(global_tensor({6, 3}, 2), mesh, {dist::Shard(0)});
  auto kind_of = [](auto&& fn) {
    try {
      fn();
    } catch (const Error& e) {
      return e.kind();
    }
    return ErrorKind::Internal;
  };
  EXPECT_EQ(kind_of([&] { (void)dist::einsum("ij,jk->ik", {a, b}); }), ErrorKind::ShapeMismatch);
  EXPECT_EQ(kind_of([&] { (void)dist::einsum("ijk,jk->i", {a, b}); }), ErrorKind::RankMismatch);
  EXPECT_EQ(kind_of([&] { (void)dist::einsum("ii->i", {a}); }), ErrorKind::Unsupported);
  EXPECT_EQ(kind_of([&] { (void)dist::einsum("ij->z", {a}); }), ErrorKind::InvalidArgument);
  EXPECT_EQ(
      kind_of([&] { (void)dist::matmul(a, put(global_tensor({5}, 3), mesh, {dist::Shard(0)})); }),
      ErrorKind::RankMismatch);
}
