// Sliced execution (EinsumOptions::memory_limit): the plan slices summed
// labels so every intermediate fits, and the sliced run gives the unsliced
// values and gradients in every tier.

#include "einsum_test_util.hpp"

using namespace etest;

namespace {

// Four 3 x 3 x 3 tensors in a closed loop: unsliced, some intermediate has
// four labels (81 elements).
const std::string kLoop = "abc,cde,efa,bdf->";
const std::vector<Shape> kLoopShapes = {{3, 3, 3}, {3, 3, 3}, {3, 3, 3}, {3, 3, 3}};

EinsumOptions limited(double elements, DType dt) {
  EinsumOptions o;
  o.memory_limit = elements * static_cast<double>(itemsize(dt));
  return o;
}

}  // namespace

TEST(EinsumSlicing, ThePlanFitsTheLimit) {
  const EinsumPlan whole = einsum_path(kLoop, kLoopShapes);
  ASSERT_GT(whole.largest_intermediate, 9.0);
  const EinsumPlan p = einsum_path(kLoop, kLoopShapes, limited(9, f64));
  EXPECT_LE(p.sliced_largest_intermediate, 9.0);
  ASSERT_FALSE(p.sliced_labels.empty());
  // einsum_path names the sliced labels by their letters.
  for (std::int64_t l : p.sliced_labels) EXPECT_TRUE(l >= 'a' && l <= 'f') << l;
  EXPECT_DOUBLE_EQ(p.slices, std::pow(3.0, static_cast<double>(p.sliced_labels.size())));
  EXPECT_GT(p.sliced_flops, 0.0);
}

TEST(EinsumSlicing, SlicedValuesEqualUnslicedInEveryTier) {
  int compared = 0;
  for (DType dt : {f64, c128}) {
    std::vector<Tensor> ops;
    for (std::size_t k = 0; k < kLoopShapes.size(); ++k)
      ops.push_back(make(kLoopShapes[k], dt, k + 11));
    const auto want = host(run_eager(kLoop, ops));
    for (double elements : {27.0, 9.0, 3.0}) {
      const EinsumOptions o = limited(elements, dt);
      const std::string what = std::string(name(dt)) + " limit " + std::to_string(elements);
      expect_close(host(run_eager(kLoop, ops, o)), want, 1e-12, what + " eager");
      expect_close(host(run_traced(kLoop, ops, o)), want, 1e-12, what + " traced");
      CpuBackend& cpu = dynamic_cast<CpuBackend&>(runtime()->backend());
      expect_close(host(einsum(kLoop, ops, cpu, o)), want, 1e-12, what + " direct");
      ++compared;
    }
  }
  EXPECT_EQ(compared, 6);
}

TEST(EinsumSlicing, SlicedGradientsEqualUnsliced) {
  // An output label too: slices add into the same [3] result.
  const std::string eq = "abc,cde,efa,bdf->a";
  std::vector<EagerTensor> in;
  for (std::size_t k = 0; k < kLoopShapes.size(); ++k) {
    in.push_back(runtime()->tensor(make(kLoopShapes[k], f64, k + 21)));
  }
  auto loss = [&](const EinsumOptions& o) {
    return [eq, o](std::span<const EagerTensor> z) {
      return sum(einsum(eq, std::vector<EagerTensor>(z.begin(), z.end()), o));
    };
  };
  const EinsumOptions o = limited(3, f64);
  const auto plain = grad_many(loss({}), in);
  const auto sliced = grad_many(loss(o), in);
  ASSERT_FALSE(einsum_path(eq, kLoopShapes, o).sliced_labels.empty());
  for (std::size_t k = 0; k < in.size(); ++k) {
    ASSERT_TRUE(plain[k].has_value() && sliced[k].has_value());
    expect_close(host(*sliced[k]), host(*plain[k]), 1e-12, "gradient " + std::to_string(k));
  }
  // And against finite differences.
  GradCheckOptions gc;
  gc.rtol = 1e-5;
  const auto r = check_gradients(
      [eq, o](std::span<const EagerTensor> v) {
        return einsum(eq, std::vector<EagerTensor>(v.begin(), v.end()), o);
      },
      in, gc);
  EXPECT_TRUE(r.ok) << r.detail;
}

TEST(EinsumSlicing, AnUnreachableLimitIsATypedError) {
  // The output alone is 3 x 3: no summed label can shrink it.
  std::vector<Tensor> ops = {make({3, 3}, f64, 1), make({3, 3}, f64, 2)};
  EXPECT_TF_ERROR(run_eager("ij,jk->ik", ops, limited(4, f64)), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(run_eager("ij,jk->ik", ops, limited(0, f64)), ErrorKind::InvalidArgument);
}

TEST(EinsumSlicing, SlicesRunInParallelWithinTheLimit) {
  // Unsliced, the largest intermediate has 81 elements; slicing one label
  // leaves 27, and a limit of 54 elements holds two of those.
  const EinsumPlan plan = EinsumPlan::prepare(kLoop, f64, kLoopShapes, limited(54, f64));
  ASSERT_GT(plan.slices, 1.0);
  ASSERT_GT(plan.sliced_largest_intermediate, 0.0);
  EXPECT_LE(plan.sliced_largest_intermediate, 27.0);
  EXPECT_EQ(plan.concurrent_slices,
            static_cast<std::int64_t>(
                std::min(plan.slices, std::floor(54.0 / plan.sliced_largest_intermediate))));
  EXPECT_GE(plan.concurrent_slices, 2);
  // Slices whose steps reach 64^3 multiply-adds run one after another (BLAS
  // threads each step): one label of 20 or 40 sliced from a 3-cycle leaves
  // steps of 20^4 (below) and 40^4 (above) multiply-adds.
  for (const std::int64_t n : {20, 40}) {
    EinsumOptions o;
    o.memory_limit = 2.0 * static_cast<double>(n * n * n) * 8.0;
    const EinsumPlan q =
        EinsumPlan::prepare("cba,edc,afe->fdb", f64, {{n, n, n}, {n, n, n}, {n, n, n}}, o);
    EXPECT_EQ(q.slices, static_cast<double>(n));
    EXPECT_EQ(q.concurrent_slices, n == 20 ? 2 : 1) << n;
  }
  // Unsliced, the limit has no effect on concurrency.
  EXPECT_EQ(EinsumPlan::prepare(kLoop, f64, kLoopShapes).concurrent_slices, 1);
  std::vector<Tensor> ops;
  for (std::size_t k = 0; k < kLoopShapes.size(); ++k)
    ops.push_back(make(kLoopShapes[k], f64, k + 21));
  const auto want =
      naive({letters("abc"), letters("cde"), letters("efa"), letters("bdf")}, ops, {});
  CpuBackend two(CpuBackendOptions{.num_threads = 2});
  const Tensor first = plan.run(ops, two);
  expect_close(host(first), want, 1e-12, "two threads");
  int same = 0;
  for (int run = 0; run < 5; ++run) {
    same += plan.run(ops, two).to_vector<double>() == first.to_vector<double>() ? 1 : 0;
  }
  EXPECT_EQ(same, 5);
  CpuBackend& one = dynamic_cast<CpuBackend&>(runtime()->backend());
  ASSERT_EQ(one.num_threads(), 1);
  // The slices' results added in slice order: the bits of a one-thread run.
  EXPECT_EQ(plan.run(ops, one).to_vector<double>(), first.to_vector<double>());
}
