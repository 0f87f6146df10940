// Sharded tensors under mpirun -np 1, 2 and 4: layouts, distribute / scatter
// / redistribute / gather against the full tensor, elementwise ops and sums,
// gradients equal to the single-process ones, the same typed error on every
// rank, and the bytes each redistribution sends.

#include <gtest/gtest.h>

#include <cmath>

#include "distributed/mpi_test_util.hpp"

using namespace tenferro;
using namespace mpitest;
using dist::DTensor;
using dist::Placements;

namespace {

double max_diff(const Tensor& a, const Tensor& b) {
  return max_abs_diff(a, b);
}

std::vector<Placements> line_placements() {
  return {{dist::Shard(0)},    {dist::Shard(1)},  {dist::Shard(1, 2)},
          {dist::Replicate()}, {dist::Partial()}, {dist::Shard(0, 1)}};
}

std::string text(const Placements& ps) {
  std::string s;
  for (const auto& p : ps) s += p.to_string();
  return s;
}

}  // namespace

TEST(DistLayout, ShardIndicesCoverEveryIndexOnce) {
  for (const std::int64_t n : {0, 1, 5, 7, 16}) {
    for (const int parts : {1, 2, 3, 4}) {
      for (const std::int64_t block : {0, 1, 2, 3}) {
        std::vector<int> seen(static_cast<std::size_t>(n), 0);
        std::int64_t total = 0;
        for (int r = 0; r < parts; ++r) {
          const auto idx = dist::shard_indices(n, parts, r, block);
          EXPECT_EQ(static_cast<std::int64_t>(idx.size()), dist::shard_extent(n, parts, r, block));
          for (const auto i : idx) ++seen[static_cast<std::size_t>(i)];
          total += static_cast<std::int64_t>(idx.size());
        }
        EXPECT_EQ(total, n);
        for (const int s : seen) EXPECT_EQ(s, 1) << n << " " << parts << " " << block;
      }
    }
  }
  // Contiguous blocks: sizes differ by at most one, larger first.
  EXPECT_EQ(dist::shard_extent(7, 4, 0, 0), 2);
  EXPECT_EQ(dist::shard_extent(7, 4, 3, 0), 1);
}

TEST(DistTensor, DistributeThenFullTensorGivesTheTensorBack) {
  const dist::Mesh mesh = dist::Mesh::line();
  const Tensor full = global_tensor({5, 6}, 1);
  for (const auto& ps : line_placements()) {
    const DTensor d = dist::distribute(runtime()->tensor(full), mesh, ps);
    EXPECT_EQ(d.shape(), full.shape());
    EXPECT_EQ(max_diff(dist::full_tensor(d).value(), full), 0.0) << text(ps);
    const Tensor g = dist::gather(d, 0);
    if (mesh.comm().rank() == 0) {
      EXPECT_EQ(max_diff(g, full), 0.0) << text(ps);
    } else {
      EXPECT_FALSE(g.defined());
    }
  }
}

TEST(DistTensor, RedistributeBetweenEveryPairOfPlacements) {
  const dist::Mesh mesh = dist::Mesh::line();
  const Tensor full = global_tensor({7, 5}, 2);
  for (const auto& from : line_placements()) {
    const DTensor d = dist::distribute(runtime()->tensor(full), mesh, from);
    for (const auto& to : line_placements()) {
      const DTensor r = dist::redistribute(d, to);
      EXPECT_EQ(r.placements(), to);
      EXPECT_NEAR(max_diff(dist::full_tensor(r).value(), full), 0.0, 1e-15)
          << text(from) << " -> " << text(to);
    }
  }
}

TEST(DistTensor, TwoDimensionalMeshes) {
  const int p = world_size();
  const std::vector<std::vector<int>> shapes =
      p == 4 ? std::vector<std::vector<int>>{{2, 2}, {1, 4}, {4, 1}}
             : std::vector<std::vector<int>>{{1, p}, {p, 1}};
  const Tensor full = global_tensor({6, 5, 3}, 3);
  const std::vector<Placements> layouts = {
      {dist::Shard(0), dist::Shard(1)},    {dist::Shard(1), dist::Shard(0)},
      {dist::Replicate(), dist::Shard(2)}, {dist::Partial(), dist::Shard(0, 2)},
      {dist::Shard(2), dist::Partial()},   {dist::Replicate(), dist::Replicate()}};
  for (const auto& shape : shapes) {
    const dist::Mesh mesh(dist::Communicator::world(), shape);
    for (const auto& from : layouts) {
      const DTensor d = dist::distribute(runtime()->tensor(full), mesh, from);
      for (const auto& to : layouts) {
        EXPECT_NEAR(max_diff(dist::full_tensor(dist::redistribute(d, to)).value(), full), 0.0,
                    1e-15)
            << mesh.to_string() << " " << text(from) << " -> " << text(to);
      }
    }
  }
}

TEST(DistTensor, ScatterFromOneRank) {
  const dist::Mesh mesh = dist::Mesh::line();
  const Tensor full = global_tensor({4, 9}, 4);
  const int root = world_size() - 1;
  for (const auto& ps : line_placements()) {
    const Tensor mine = mesh.comm().rank() == root ? full : Tensor();
    const DTensor d = dist::scatter(runtime(), mine, root, mesh, ps);
    const DTensor ref = dist::distribute(runtime()->tensor(full), mesh, ps);
    EXPECT_EQ(max_diff(d.local().value(), ref.local().value()), 0.0) << text(ps);
  }
}

TEST(DistOps, ElementwiseAndSumsEqualTheSingleProcessValues) {
  const dist::Mesh mesh = dist::Mesh::line();
  const Tensor a = global_tensor({6, 4}, 5), b = global_tensor({6, 4}, 6);
  Backend& cpu = runtime()->backend();
  const DTensor da = dist::distribute(runtime()->tensor(a), mesh, {dist::Shard(0)});
  const DTensor db = dist::distribute(runtime()->tensor(b), mesh, {dist::Shard(1)});
  const DTensor y = dist::map(da * db + da, [](const EagerTensor& x) { return sin(x); });
  EXPECT_EQ(y.placements(), (Placements{dist::Shard(0)}));
  const Tensor want = sin(add(mul(a, b, cpu), a, cpu), cpu);
  EXPECT_LT(max_diff(dist::full_tensor(y).value(), want), 1e-15);
  const DTensor s = dist::sum(y);
  EXPECT_EQ(s.placements()[0].kind, dist::Placement::Kind::Partial);
  EXPECT_NEAR(dist::item(s), sum(want, cpu).item<double>(), 1e-13);
  const DTensor rows = dist::sum(y, {1});
  EXPECT_EQ(rows.placements(), (Placements{dist::Shard(0)}));
  EXPECT_LT(max_diff(dist::full_tensor(rows).value(), sum(want, {1}, cpu)), 1e-14);
  // A Partial operand of a product is summed first.
  const DTensor pa = dist::distribute(runtime()->tensor(a), mesh, {dist::Partial()});
  EXPECT_LT(max_diff(dist::full_tensor(pa * da).value(), mul(a, a, cpu)), 1e-14);
  EXPECT_EQ((pa + pa).placements()[0].kind, dist::Placement::Kind::Partial);
  EXPECT_LT(max_diff(dist::full_tensor(pa + pa).value(), add(a, a, cpu)), 1e-14);
}

TEST(DistOps, BroadcastingFollowsNumPyAndMovesOnlyTheBroadcastOperand) {
  Backend& cpu = runtime()->backend();
  const Tensor x = global_tensor({6, 4}, 31), bias = global_tensor({4}, 32);
  const Tensor col = global_tensor({6, 1}, 33), row = global_tensor({1, 4}, 34);
  const auto put = [&](const Tensor& t, const dist::Mesh& mesh, Placements ps) {
    return dist::distribute(runtime()->tensor(t), mesh, std::move(ps));
  };
  const dist::Mesh line = dist::Mesh::line();
  // Row-sharded x plus a replicated bias: local, rows stay sharded.
  dist::reset_comm_stats();
  const DTensor y = put(x, line, {dist::Shard(0)}) + put(bias, line, {dist::Replicate()});
  EXPECT_EQ(dist::comm_stats().collectives, 0u);
  EXPECT_EQ(y.shape(), (Shape{6, 4}));
  EXPECT_EQ(y.placements(), (Placements{dist::Shard(0)}));
  EXPECT_LT(max_diff(dist::full_tensor(y).value(), add(x, bias, cpu)), 1e-15);
  // Column-sharded x times a bias sharded alike (block-cyclic): local too.
  dist::reset_comm_stats();
  const DTensor z = put(x, line, {dist::Shard(1, 1)}) * put(bias, line, {dist::Shard(0, 1)});
  EXPECT_EQ(dist::comm_stats().collectives, 0u);
  EXPECT_EQ(z.placements(), (Placements{dist::Shard(1, 1)}));
  EXPECT_LT(max_diff(dist::full_tensor(z).value(), mul(x, bias, cpu)), 1e-15);
  // A replicated first operand against a sharded one takes the shard (a local
  // slice) instead of gathering the second.
  dist::reset_comm_stats();
  const DTensor w = put(bias, line, {dist::Replicate()}) - put(x, line, {dist::Shard(1)});
  EXPECT_EQ(dist::comm_stats().collectives, 0u);
  EXPECT_EQ(w.placements(), (Placements{dist::Shard(1)}));
  EXPECT_LT(max_diff(dist::full_tensor(w).value(), sub(bias, x, cpu)), 1e-15);
  // Both broadcast: an outer sum; the column keeps its rows sharded, the row
  // sharded on its extent-1 axis is gathered.
  const DTensor o = put(col, line, {dist::Shard(0)}) / put(row, line, {dist::Shard(1)});
  EXPECT_EQ(o.shape(), (Shape{6, 4}));
  EXPECT_EQ(o.placements(), (Placements{dist::Shard(0)}));
  EXPECT_LT(max_diff(dist::full_tensor(o).value(), div(col, row, cpu)), 1e-14);
  // A 2x2 mesh: rows and columns sharded, the bias sharded along mesh axis 1 only.
  if (world_size() == 4) {
    const dist::Mesh grid(dist::Communicator::world(), {2, 2});
    dist::reset_comm_stats();
    const DTensor g = put(x, grid, {dist::Shard(0), dist::Shard(1)}) +
                      put(bias, grid, {dist::Replicate(), dist::Shard(0)});
    EXPECT_EQ(dist::comm_stats().collectives, 0u);
    EXPECT_EQ(g.placements(), (Placements{dist::Shard(0), dist::Shard(1)}));
    EXPECT_LT(max_diff(dist::full_tensor(g).value(), add(x, bias, cpu)), 1e-15);
  }
  // Gradients through broadcasting equal one process's: the bias's gradient
  // sums over the rows every rank holds.
  EagerTensor ex = runtime()->variable(x), eb = runtime()->variable(bias);
  sum(sin(ex * eb + eb)).backward();
  for (const auto& pb : {Placements{dist::Replicate()}, Placements{dist::Shard(0)}}) {
    DTensor dx = put(x, line, {dist::Shard(0)}), db = put(bias, line, pb);
    dx.requires_grad_();
    db.requires_grad_();
    dist::backward(dist::sum(dist::map(dx * db + db, [](const EagerTensor& t) { return sin(t); })));
    EXPECT_EQ(db.grad().placements(), pb);
    EXPECT_LT(rel(dist::full_tensor(dx.grad()).value(), ex.grad().value()), 1e-12);
    EXPECT_LT(rel(dist::full_tensor(db.grad()).value(), eb.grad().value()), 1e-12);
  }
  // Shapes that do not broadcast are refused on every rank, naming both.
  try {
    (void)(put(x, line, {dist::Shard(0)}) + put(global_tensor({5}, 35), line, {dist::Replicate()}));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ShapeMismatch);
    EXPECT_NE(std::string(e.what()).find("[6, 4] and [5] do not broadcast"), std::string::npos)
        << e.what();
  }
}

TEST(DistAutodiff, GradientsEqualTheSingleProcessGradients) {
  const Tensor a = global_tensor({8, 5}, 7), b = global_tensor({8, 5}, 8);
  // Single process.
  EagerTensor ea = runtime()->variable(a), eb = runtime()->variable(b);
  (sum(sin(ea) * eb + ea * ea * eb)).backward();
  const Tensor ga = ea.grad().value(), gb = eb.grad().value();
  const int p = world_size();
  std::vector<dist::Mesh> meshes = {dist::Mesh::line()};
  if (p == 4) meshes.emplace_back(dist::Communicator::world(), std::vector<int>{2, 2});
  const std::vector<std::pair<Placements, Placements>> cases_1d = {
      {{dist::Shard(0)}, {dist::Replicate()}},
      {{dist::Shard(1)}, {dist::Shard(0)}},
      {{dist::Replicate()}, {dist::Partial()}},
      {{dist::Shard(0, 3)}, {dist::Shard(1)}}};
  const std::vector<std::pair<Placements, Placements>> cases_2d = {
      {{dist::Shard(0), dist::Shard(1)}, {dist::Replicate(), dist::Shard(0)}},
      {{dist::Partial(), dist::Replicate()}, {dist::Shard(1), dist::Shard(0)}}};
  for (const auto& mesh : meshes) {
    for (const auto& [pa, pb] : mesh.ndim() == 1 ? cases_1d : cases_2d) {
      DTensor da = dist::distribute(runtime()->tensor(a), mesh, pa);
      DTensor db = dist::distribute(runtime()->tensor(b), mesh, pb);
      if (pa[0].kind == dist::Placement::Kind::Partial) {
        // A Partial leaf: each rank holds a part of the sum.
        da = dist::distribute(runtime()->tensor(a), mesh, {dist::Replicate(), dist::Replicate()});
      }
      da.requires_grad_();
      db.requires_grad_();
      const DTensor loss =
          dist::sum(dist::map(da, [](const EagerTensor& x) { return sin(x); }) * db + da * da * db);
      dist::backward(loss);
      const DTensor gda = da.grad(), gdb = db.grad();
      // Placed like the leaves; a Partial leaf's gradient is the same on every rank.
      auto expected = [](Placements ps) {
        for (auto& q : ps)
          if (q.kind == dist::Placement::Kind::Partial) q = dist::Replicate();
        return ps;
      };
      EXPECT_EQ(gda.placements(), expected(da.placements()));
      EXPECT_EQ(gdb.placements(), expected(db.placements()));
      const double ra = max_diff(dist::full_tensor(gda).value(), ga);
      const double rb = max_diff(dist::full_tensor(gdb).value(), gb);
      EXPECT_LT(ra, 1e-12 * (1 + max_abs_diff(ga, zeros({8, 5}, f64))))
          << mesh.to_string() << " " << text(pa);
      EXPECT_LT(rb, 1e-12 * (1 + max_abs_diff(gb, zeros({8, 5}, f64))))
          << mesh.to_string() << " " << text(pb);
    }
  }
}

TEST(DistAutodiff, ThroughRedistributions) {
  const dist::Mesh mesh = dist::Mesh::line();
  const Tensor a = global_tensor({6, 7}, 9);
  EagerTensor ea = runtime()->variable(a);
  sum(exp(ea) * ea).backward();
  const Tensor want = ea.grad().value();
  DTensor da = dist::distribute(runtime()->tensor(a), mesh, {dist::Shard(0)});
  da.requires_grad_();
  // Shard(0) -> Shard(1) (all-to-all) -> Replicate (all-gather) -> Shard(0, 2).
  DTensor x = dist::redistribute(da, {dist::Shard(1)});
  x = dist::redistribute(x, {dist::Replicate()});
  x = dist::redistribute(x, {dist::Shard(0, 2)});
  const DTensor loss = dist::sum(dist::map(x, [](const EagerTensor& t) { return exp(t); }) * x);
  dist::backward(loss);
  EXPECT_LT(max_diff(dist::full_tensor(da.grad()).value(), want), 1e-12);
}

TEST(DistErrors, EveryRankRaisesTheSameTypedError) {
  const dist::Mesh mesh = dist::Mesh::line();
  const int me = mesh.comm().rank();
  // The last rank passes another shape: everyone gets ShapeMismatch, nobody hangs.
  const Tensor full = global_tensor({4, me == world_size() - 1 && world_size() > 1 ? 5 : 4}, 1);
  if (world_size() > 1) {
    try {
      dist::distribute(runtime()->tensor(full), mesh, {dist::Shard(0)});
      ADD_FAILURE() << "no error on rank " << me;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::ShapeMismatch);
      EXPECT_NE(
          std::string(e.what()).find("rank " + std::to_string(world_size() - 1) + " f64[4, 5]"),
          std::string::npos)
          << e.what();
    }
  }
  // Metadata errors are the same everywhere without communication.
  const Tensor ok = global_tensor({4, 4}, 2);
  try {
    dist::distribute(runtime()->tensor(ok), mesh, {dist::Shard(2)});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::AxisOutOfBounds);
  }
  try {
    dist::distribute(runtime()->tensor(ok), mesh, {dist::Shard(0), dist::Shard(1)});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("one placement per mesh axis"), std::string::npos);
  }
  try {
    dist::Mesh bad(dist::Communicator::world(), {world_size() + 1});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
  }
  const DTensor a = dist::distribute(runtime()->tensor(ok), mesh, {dist::Shard(0)});
  const DTensor b =
      dist::distribute(runtime()->tensor(global_tensor({4, 3}, 3)), mesh, {dist::Shard(0)});
  try {
    (void)(a + b);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ShapeMismatch);
  }
  // The job still works afterwards.
  EXPECT_EQ(max_diff(dist::full_tensor(a).value(), ok), 0.0);
}

TEST(DistStats, RedistributionsReportTheBytesTheySend) {
  const dist::Mesh mesh = dist::Mesh::line();
  const int p = world_size(), me = mesh.comm().rank();
  const Tensor full = global_tensor({10, 3}, 4);
  const DTensor d = dist::distribute(runtime()->tensor(full), mesh, {dist::Shard(0)});
  dist::reset_comm_stats();
  (void)dist::redistribute(d, {dist::Replicate()});
  const auto s = dist::comm_stats();
  // One all-gather: this rank's rows reach the p - 1 others (nothing moves on one rank).
  EXPECT_EQ(s.collectives, p > 1 ? 1u : 0u);
  EXPECT_EQ(s.bytes_sent,
            static_cast<std::uint64_t>(dist::shard_extent(10, p, me, 0) * 3 * 8 * (p - 1)));
  // A pending sum made whole: 2 (p - 1) / p of it (reduce-scatter, then all-gather).
  const DTensor partial = dist::distribute(runtime()->tensor(full), mesh, {dist::Partial()});
  dist::reset_comm_stats();
  (void)dist::redistribute(partial, {dist::Replicate()});
  EXPECT_EQ(dist::comm_stats().bytes_sent, static_cast<std::uint64_t>(2 * (p - 1) * 30 * 8 / p));
  // Reduce-scattered: the other ranks' rows of this rank's summand.
  dist::reset_comm_stats();
  (void)dist::redistribute(partial, {dist::Shard(0)});
  EXPECT_EQ(dist::comm_stats().bytes_sent,
            static_cast<std::uint64_t>((10 - dist::shard_extent(10, p, me, 0)) * 3 * 8));
  dist::reset_comm_stats();
  (void)dist::redistribute(d, {dist::Shard(0)});
  EXPECT_EQ(dist::comm_stats().collectives, 0u);  // nothing to move
}

TEST(DistTensor, ReshapeOfShardedAxesIsOneAllToAll) {
  // Merging or splitting a sharded axis: every element goes straight to its
  // new holder (one collective, each rank sending at most its own part),
  // for every pair of placements, pending sums included.
  const Tensor t = global_tensor({4, 6, 5}, 41);
  const std::vector<std::int64_t> merged = {24, 5}, split = {4, 3, 10};
  std::vector<std::pair<dist::Mesh, std::vector<std::pair<Placements, Placements>>>> cases;
  cases.push_back({dist::Mesh::line(),
                   {{{dist::Shard(1)}, {dist::Shard(0)}},
                    {{dist::Shard(0, 1)}, {dist::Shard(1, 2)}},
                    {{dist::Shard(2)}, {dist::Replicate()}},
                    {{dist::Partial()}, {dist::Shard(0)}},
                    {{dist::Partial()}, {dist::Replicate()}},
                    {{dist::Shard(1)}, {dist::Partial()}},
                    {{dist::Replicate()}, {dist::Partial()}},
                    {{dist::Partial()}, {dist::Partial()}}}});
  if (world_size() == 4) {
    cases.push_back(
        {dist::Mesh(dist::Communicator::world(), {2, 2}),
         {{{dist::Shard(0), dist::Shard(1)}, {dist::Shard(1), dist::Shard(0)}},
          {{dist::Shard(1, 2), dist::Partial()}, {dist::Replicate(), dist::Shard(0, 3)}},
          {{dist::Replicate(), dist::Shard(2)}, {dist::Shard(0), dist::Partial()}}}});
  }
  for (const auto& [mesh, pairs] : cases) {
    for (const auto& [from, to] : pairs) {
      for (const auto& shape : {merged, split}) {
        const std::string what = mesh.to_string() + " " + text(from) + " -> " + text(to) + " " +
                                 std::to_string(shape.size()) + "-d";
        EagerTensor et = runtime()->variable(t);
        const EagerTensor ey = reshape(et, shape);
        sum(sin(ey) * ey).backward();
        DTensor dt = dist::distribute(runtime()->tensor(t), mesh, from);
        dt.requires_grad_();
        dist::reset_comm_stats();
        const DTensor dy = dist::reshape(dt, Shape(shape.begin(), shape.end()), to);
        EXPECT_LE(dist::comm_stats().collectives, 1u) << what;
        EXPECT_EQ(dy.placements(), to) << what;
        EXPECT_LT(rel(dist::full_tensor(dy).value(), ey.value()), 1e-15) << what;
        dist::backward(dist::sum(dist::map(dy, [](const EagerTensor& v) { return sin(v); }) * dy));
        EXPECT_LT(rel(dist::full_tensor(dt.grad()).value(), et.grad().value()), 1e-12) << what;
      }
    }
  }
  // From contiguous rows to block-cyclic columns: one relayout, no rank
  // receives more than its new part (nothing gathered).
  const dist::Mesh line = dist::Mesh::line();
  const Tensor m = global_tensor({12, 10}, 42);
  const DTensor rows = dist::distribute(runtime()->tensor(m), line, {dist::Shard(0)});
  dist::reset_comm_stats();
  const DTensor cyc = dist::redistribute(rows, {dist::Shard(1, 3)});
  EXPECT_EQ(dist::comm_stats().collectives, world_size() > 1 ? 1u : 0u);
  EXPECT_LE(dist::comm_stats().bytes_sent,
            static_cast<std::uint64_t>(rows.local().value().numel()) * 8u);
  EXPECT_EQ(max_diff(dist::full_tensor(cyc).value(), m), 0.0);
}

TEST(DistTensor, ReshapeAndSubCommunicators) {
  const dist::Mesh mesh = dist::Mesh::line();
  const Tensor full = global_tensor({6, 4}, 11);
  const DTensor d = dist::distribute(runtime()->tensor(full), mesh, {dist::Shard(1)});
  const DTensor r = dist::reshape(d, Shape{3, 8}, {dist::Shard(0)});
  EXPECT_EQ(r.shape(), (Shape{3, 8}));
  EXPECT_EQ(max_diff(dist::full_tensor(r).value(), full.reshape(std::vector<std::int64_t>{3, 8})),
            0.0);
  // A sharded axis the reshape leaves alone stays in place: no communication,
  // also with unit axes around it, on a pending sum, and in the gradient.
  const Tensor t = global_tensor({2, 3, 5, 4}, 12);
  EagerTensor et = runtime()->variable(t);
  const EagerTensor ey = reshape(et, std::vector<std::int64_t>{6, 5, 1, 4});
  sum(sin(ey) * ey).backward();
  for (const auto& [from, to] :
       {std::pair{Placements{dist::Shard(3, 1)}, Placements{dist::Shard(3, 1)}},
        std::pair{Placements{dist::Shard(2)}, Placements{dist::Shard(1)}},
        std::pair{Placements{dist::Partial()}, Placements{dist::Partial()}}}) {
    DTensor dt = dist::distribute(runtime()->tensor(t), mesh, from);
    dt.requires_grad_();
    dist::reset_comm_stats();
    const DTensor dy = dist::reshape(dt, Shape{6, 5, 1, 4}, to);
    EXPECT_EQ(dist::comm_stats().collectives, 0u) << text(from);
    EXPECT_EQ(max_diff(dist::full_tensor(dy).value(), ey.value()), 0.0) << text(from);
    dist::backward(dist::sum(dist::map(dy, [](const EagerTensor& v) { return sin(v); }) * dy));
    EXPECT_LT(rel(dist::full_tensor(dt.grad()).value(), et.grad().value()), 1e-12) << text(from);
  }
  // Kept in place, then redistributed to the placements asked for: only the
  // all-to-all of the last step (no all-gather of the whole tensor).
  dist::reset_comm_stats();
  const DTensor moved =
      dist::reshape(dist::distribute(runtime()->tensor(t), mesh, {dist::Shard(2)}), Shape{6, 5, 4},
                    {dist::Shard(2)});
  EXPECT_EQ(dist::comm_stats().collectives, world_size() > 1 ? 1u : 0u);
  EXPECT_EQ(
      max_diff(dist::full_tensor(moved).value(), t.reshape(std::vector<std::int64_t>{6, 5, 4})),
      0.0);
  try {
    (void)dist::reshape(d, Shape{5, 5}, {dist::Shard(0)});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ShapeMismatch);
  }
  // A mesh over a sub-communicator: the even and the odd ranks apart.
  const dist::Communicator world = dist::Communicator::world();
  const dist::Communicator half = world.split(world.rank() % 2, world.rank());
  EXPECT_EQ(half.size(), (world.size() + 1 - world.rank() % 2) / 2);
  const dist::Mesh sub = dist::Mesh::line(half);
  const DTensor s = dist::distribute(runtime()->tensor(full), sub, {dist::Shard(0)});
  EXPECT_EQ(max_diff(dist::full_tensor(s).value(), full), 0.0);
  EXPECT_NEAR(dist::item(dist::sum(s)), sum(full, runtime()->backend()).item<double>(), 1e-13);
}
