// Core AD rules of the reductions and dot_general: finite differences,
// adjoint consistency and declared residuals over axes/keepdim variants,
// f64 and c128; ties of max/min, prod with zeros, non-differentiable ops.

#include "ad/eval_emitter.hpp"
#include "tenferro/ad/eager.hpp"
#include "tenferro/ad/eager_ops.hpp"
#include "test_util.hpp"

using namespace tenferro;
using adtest::OpHandle;
using adtest::RuleChecker;

namespace {

OpHandle R(ReduceOp op, Axes axes, bool keepdim) {
  return make_primitive(prim::Reduce{op, std::move(axes), keepdim});
}

const std::vector<Axes> kAxes = {{0}, {1}, {-1}, {0, 2}, {0, 1, 2}, {}};

TEST(CoreRulesReduce, SumMeanProdAllAxesF64AndC128) {
  RuleChecker rc;
  int expected = 0;
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Prod}) {
    for (DType dt : {DType::F64, DType::C128}) {
      for (const Axes& axes : kAxes) {
        for (bool keepdim : {false, true}) {
          rc.check(R(op, axes, keepdim), {rc.random({2, 3, 4}, dt)},
                   std::string(name(dt)) + " axes " + shape_to_string(axes));
          ++expected;
        }
      }
    }
  }
  rc.check(R(ReduceOp::Sum, {0}, false), {zeros({0, 3}, DType::F64)}, "empty axis");
  rc.check(R(ReduceOp::Mean, {}, false), {Tensor::scalar(1.5)}, "rank 0");
  EXPECT_EQ(rc.checked(), expected + 2);
}

TEST(CoreRulesReduce, MaxMinLogsumexpVarStd) {
  RuleChecker rc;
  int expected = 0;
  for (const Axes& axes : kAxes) {
    for (bool keepdim : {false, true}) {
      const std::string label = "axes " + shape_to_string(axes);
      for (ReduceOp op : {ReduceOp::Max, ReduceOp::Min, ReduceOp::LogSumExp}) {
        rc.check(R(op, axes, keepdim), {rc.random({2, 3, 4}, DType::F64)}, label);
        ++expected;
      }
      if (axes.empty()) continue;  // var over no axis divides 0 by 1 - correction
      for (bool take_sqrt : {false, true}) {
        for (double correction : {1.0, 0.0}) {
          for (DType dt : {DType::F64, DType::C128}) {
            rc.check(make_primitive(prim::Variance{axes, correction, keepdim, take_sqrt}),
                     {rc.random({2, 3, 4}, dt)}, label + " " + std::string(name(dt)));
            ++expected;
          }
        }
      }
    }
  }
  EXPECT_EQ(rc.checked(), expected);
}

TEST(CoreRulesReduce, MaxMinTiesSplitEvenly) {
  RuleChecker rc;
  // Columns (axis 0): [1, 3, 3] -> max ties at rows 1, 2; [2, 2, 2] all tie.
  const Tensor x = Tensor::from_col_major<double>({3, 2}, std::vector<double>{1, 3, 3, 2, 2, 2});
  const auto g = rc.vjp(R(ReduceOp::Max, {0}, false), {x}, ones({2}, DType::F64));
  const std::vector<double> v = adtest::values(*g[0], rc.backend());
  const double third = 1.0 / 3.0;
  const std::vector<double> want{0, 0.5, 0.5, third, third, third};
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], want[i], 1e-15) << i;
  const auto gm =
      rc.vjp(R(ReduceOp::Min, {}, false), {x}, ones({3, 2}, DType::F64));  // no axis: identity
  EXPECT_EQ(adtest::values(*gm[0], rc.backend()), std::vector<double>(6, 1.0));
  const auto jt = rc.jvp(R(ReduceOp::Min, {0, 1}, true), {x}, {ones({3, 2}, DType::F64)});
  EXPECT_EQ(jt[0]->shape(), (Shape{1, 1}));
  EXPECT_NEAR(adtest::values(*jt[0], rc.backend())[0], 1.0, 1e-15);  // 1 at row 0 of column 0 only
}

TEST(CoreRulesReduce, ProdWithZeros) {
  RuleChecker rc;
  // Columns: [2, 0, 5] (one zero), [0, 3, 0] (two zeros), [2, 3, 4] (none).
  const Tensor x =
      Tensor::from_col_major<double>({3, 3}, std::vector<double>{2, 0, 5, 0, 3, 0, 2, 3, 4});
  const auto g = rc.vjp(R(ReduceOp::Prod, {0}, false), {x}, ones({3}, DType::F64));
  EXPECT_EQ(adtest::values(*g[0], rc.backend()),
            (std::vector<double>{0, 10, 0, 0, 0, 0, 12, 8, 6}));
  adtest::CheckOptions opt;
  rc.check(R(ReduceOp::Prod, {0}, true), {x}, "zeros", opt);
  const Tensor z = Tensor::from_col_major<c128_t>({2}, std::vector<c128_t>{{0, 0}, {1, 2}});
  const auto gz = rc.vjp(R(ReduceOp::Prod, {0}, false), {z}, Tensor::scalar(c128_t(1, 0)));
  // grad = conj(product of the others) (PyTorch convention).
  const auto gv = gz[0]->to_vector<c128_t>();
  EXPECT_EQ(gv[0], c128_t(1, -2));
  EXPECT_EQ(gv[1], c128_t(0, 0));
}

TEST(CoreRulesReduce, NonDifferentiable) {
  RuleChecker rc;
  adtest::CheckOptions nd;
  nd.no_derivative = true;
  const Tensor x = rc.random({3, 4}, DType::F64);
  rc.check(make_primitive(prim::ArgReduce{true, 1, false}), {x}, "argmax", nd);
  rc.check(make_primitive(prim::ArgReduce{false, 0, true}), {x}, "argmin", nd);
  rc.check(R(ReduceOp::All, {0}, false), {x}, "all", nd);
  rc.check(R(ReduceOp::Any, {0}, false), {x}, "any", nd);
  rc.check(make_primitive(prim::Argsort{1, true, -1}), {x}, "argsort", nd);
  rc.check(make_primitive(prim::Argsort{0, false, 2}), {x}, "topk", nd);
  EXPECT_EQ(rc.checked(), 6);
}

TEST(CoreRulesReduce, CumulativeEveryAxisDirectionAndZeros) {
  // The rules directly: finite differences, adjointness and declared
  // residuals; cumprod also with one and two zeros in a lane.
  RuleChecker rc;
  int expected = 0;
  for (DType dt : {DType::F64, DType::C128}) {
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Prod}) {
      for (std::int64_t axis : {0, 1, -1}) {
        for (bool reverse : {false, true}) {
          const auto P = make_primitive(prim::Cumulative{op, axis, reverse});
          const std::string label = std::string(name(dt)) + " " + std::string(P->describe());
          Tensor x = rc.random({3, 4, 2}, dt);
          rc.check(P, {x}, label);
          Tensor z = x.clone();
          Tensor::copy_into(zeros({1, 1, 1}, dt), z.slice(0, 1, 2).slice(1, 1, 2).slice(2, 0, 1));
          Tensor::copy_into(zeros({1, 1, 2}, dt), z.slice(0, 0, 1).slice(1, 3, 4));
          Tensor::copy_into(zeros({1, 1, 2}, dt), z.slice(0, 2, 3).slice(1, 3, 4));
          rc.check(P, {z}, label + " zeros");
          expected += 2;
        }
      }
    }
  }
  rc.check(make_primitive(prim::Cumulative{ReduceOp::Prod, 0, false}), {Tensor::scalar(1.5)},
           "rank 0");
  rc.check(make_primitive(prim::Cumulative{ReduceOp::Sum, 1, false}), {zeros({2, 0}, DType::F64)},
           "empty");
  EXPECT_EQ(rc.checked(), expected + 2);
}

// ---- dot_general ------------------------------------------------------------------

TEST(CoreRulesDotGeneral, MatmulBatchAndMultipleContractions) {
  RuleChecker rc;
  struct Case {
    Shape a, b;
    DotDims dims;
  };
  const std::vector<Case> cases = {
      {{3, 4}, {4, 5}, {{1}, {0}, {}, {}}},                      // matmul
      {{4, 3}, {4, 5}, {{0}, {0}, {}, {}}},                      // a^T b
      {{3, 4, 2}, {4, 5, 2}, {{1}, {0}, {2}, {2}}},              // batched, batch last
      {{2, 3, 4, 5}, {4, 6, 2, 3}, {{2, 1}, {0, 3}, {0}, {2}}},  // two contractions, out of order
      {{2, 3}, {3, 2}, {{0, 1}, {1, 0}, {}, {}}},                // full contraction (rank 0)
      {{3}, {4}, {{}, {}, {}, {}}},                              // outer product
      {{2, 3, 4}, {3, 2}, {{-2}, {0}, {0}, {-1}}},  // negative axes, batch first in lhs
  };
  int expected = 0;
  for (const Case& c : cases) {
    for (auto [da, db] : {std::pair{DType::F64, DType::F64}, std::pair{DType::C128, DType::C128},
                          std::pair{DType::F64, DType::C128}}) {
      rc.check(make_primitive(prim::DotGeneral{c.dims}), {rc.random(c.a, da), rc.random(c.b, db)},
               shape_to_string(c.a) + " x " + shape_to_string(c.b) + " " + std::string(name(da)) +
                   "," + std::string(name(db)));
      ++expected;
    }
  }
  EXPECT_EQ(rc.checked(), expected);
}

// The rules through the eager tier, including second order (the rules'
// own emitted ops are differentiated again).
TEST(CoreRulesEager, GradientsAndSecondOrder) {
  const EagerRuntimePtr rt = EagerRuntime::make_cpu();
  const Tensor xv =
      Tensor::from_col_major<double>({2, 2}, std::vector<double>{0.5, -1.0, 2.0, 1.5});
  const EagerTensor x = rt->variable(xv);
  const EagerTensor w =
      rt->tensor(Tensor::from_col_major<double>({2}, std::vector<double>{1.0, -2.0}));
  // f(x) = sum(sin(x) * x) + sum(x @ w) + max(x)
  const Axes all{0, 1};
  auto f = [&](const EagerTensor& v) {
    return sum(mul(tenferro::sin(v), v)) + sum(matmul(v, w)) + reduce(ReduceOp::Max, v, all, false);
  };
  const std::vector<double> g = adtest::values(grad(f, x).value(), rt->backend());
  const std::vector<double> xs = xv.to_vector<double>();
  for (std::size_t i = 0; i < 4; ++i) {
    const double want = std::cos(xs[i]) * xs[i] + std::sin(xs[i]) +
                        (i < 2 ? 1.0 : -2.0) /* d sum(x @ w) / dx_ij = w_j */ +
                        (i == 2 ? 1.0 : 0.0);
    EXPECT_NEAR(g[i], want, 1e-12) << i;
  }
  // d/dx sum(grad f) for f = sum(x^3): 6x.
  auto cube = [](const EagerTensor& v) { return sum(mul(mul(v, v), v)); };
  const EagerTensor h = grad([&](const EagerTensor& v) { return sum(grad(cube, v)); }, x);
  const std::vector<double> hv = adtest::values(h.value(), rt->backend());
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(hv[i], 6.0 * xs[i], 1e-12) << i;
  // Forward over reverse: jvp of grad(sum(exp(x))) along ones = exp(x).
  const EagerTensor hvp = jvp_tangent(
      [](const EagerTensor& v) {
        return grad([](const EagerTensor& u) { return sum(tenferro::exp(u)); }, v);
      },
      x, rt->tensor(ones({2, 2}, DType::F64)));
  const std::vector<double> hv2 = adtest::values(hvp.value(), rt->backend());
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(hv2[i], std::exp(xs[i]), 1e-12) << i;
}

}  // namespace
