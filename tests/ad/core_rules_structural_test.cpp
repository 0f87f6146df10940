// Core AD rules of the layout primitives, gathers/scatters, conversions and
// constants: finite differences, adjoint consistency (every transpose rule)
// and declared residuals, f64 and c128; and a rule for every core primitive.

#include "ad/eval_emitter.hpp"
#include "test_util.hpp"

using namespace tenferro;
using adtest::OpHandle;
using adtest::RuleChecker;

namespace {

OpHandle P(prim::Params p) {
  return make_primitive(std::move(p));
}

Tensor idx(const Shape& shape, std::vector<std::int64_t> v) {
  return Tensor::from_col_major(shape, v);
}

constexpr DType kDtypes[] = {DType::F64, DType::C128};

TEST(CoreRulesStructural, LayoutOps) {
  RuleChecker rc;
  int expected = 0;
  for (DType dt : kDtypes) {
    const std::string l(name(dt));
    auto check = [&](prim::Params p, std::vector<Tensor> in) {
      rc.check(P(std::move(p)), in, l);
      ++expected;
    };
    check(prim::Transpose{{2, 0, 1}}, {rc.random({2, 3, 4}, dt)});
    check(prim::Transpose{{-1, 0}}, {rc.random({3, 4}, dt)});
    check(prim::Reshape{{6, 4}}, {rc.random({2, 3, 4}, dt)});
    check(prim::Reshape{{}}, {rc.random({1, 1}, dt)});
    check(prim::BroadcastInDim{{3, 4, 5}, {0, 2}}, {rc.random({3, 5}, dt)});
    check(prim::BroadcastInDim{{3, 4, 5}, {1, 2}}, {rc.random({1, 5}, dt)});
    check(prim::BroadcastInDim{{2, 2}, {}}, {rc.random({}, dt)});
    check(prim::Slice{{1, 0}, {4, 5}, {1, 2}}, {rc.random({5, 6}, dt)});
    check(prim::Slice{{0, 2}, {5, 2}, {3, 1}}, {rc.random({6, 4}, dt)});  // empty on axis 1
    check(prim::Pad{{1, 0}, {2, 1}, {}, Scalar(3.0)}, {rc.random({3, 4}, dt)});
    check(prim::Pad{{-1, 2}, {1, -2}, {1, 2}, Scalar(0.0)}, {rc.random({3, 4}, dt)});
    check(prim::Pad{{-2, 0}, {-1, 0}, {}, Scalar(0.0)}, {rc.random({5, 2}, dt)});
    check(prim::Concatenate{1, 3},
          {rc.random({2, 1}, dt), rc.random({2, 3}, dt), rc.random({2, 2}, dt)});
    check(prim::Concatenate{-1, 2}, {rc.random({2, 1}, DType::F64), rc.random({2, 2}, dt)});
    check(prim::Reverse{{0, 2}}, {rc.random({2, 3, 4}, dt)});
    check(prim::Triangle{true, 0}, {rc.random({3, 4, 2}, dt)});
    check(prim::Triangle{false, -1}, {rc.random({4, 3}, dt)});
    check(prim::Triangle{true, 2}, {rc.random({4, 3}, dt)});
  }
  EXPECT_EQ(rc.checked(), expected);
}

TEST(CoreRulesStructural, ConcatenateWithIntegerPart) {
  RuleChecker rc;
  const Tensor k = idx({2, 2}, {1, 2, 3, 4});
  rc.check(P(prim::Concatenate{1, 2}), {k, rc.random({2, 3}, DType::F64)}, "i64,f64");
  const auto jt = rc.jvp(P(prim::Concatenate{1, 2}), {k, rc.random({2, 3}, DType::F64)},
                         {std::nullopt, ones({2, 3}, DType::F64)});
  EXPECT_EQ(adtest::values(*jt[0], rc.backend()),
            (std::vector<double>{0, 0, 0, 0, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(rc.checked(), 1);
}

TEST(CoreRulesStructural, DiagonalAndDiagEmbed) {
  RuleChecker rc;
  int expected = 0;
  for (DType dt : kDtypes) {
    for (std::int64_t offset : {0, 1, -2, 5}) {
      rc.check(P(prim::Diagonal{offset, 0, 1}), {rc.random({4, 5, 2}, dt)}, "axes 0,1");
      rc.check(P(prim::Diagonal{offset, 2, 0}), {rc.random({3, 2, 4}, dt)}, "axes 2,0");
      rc.check(P(prim::Diagonal{offset, -1, 1}), {rc.random({2, 5, 3}, dt)}, "axes -1,1");
      rc.check(P(prim::DiagEmbed{offset}), {rc.random({3, 2}, dt)}, "diag_embed");
      expected += 4;
    }
  }
  EXPECT_EQ(rc.checked(), expected);
}

TEST(CoreRulesStructural, GatherScatter) {
  RuleChecker rc;
  int expected = 0;
  for (DType dt : kDtypes) {
    const std::string l(name(dt));
    // Repeated and negative indices accumulate in the transpose.
    rc.check(P(prim::IndexSelect{1}), {rc.random({3, 4}, dt), idx({5}, {0, 3, 3, -1, 1})}, l);
    rc.check(P(prim::IndexSelect{0}), {rc.random({3, 4}, dt), idx({2}, {2, 2})}, l);
    rc.check(P(prim::TakeAlongAxis{0}),
             {rc.random({3, 4}, dt), idx({2, 4}, {0, 2, 1, 1, 2, 2, 0, 0})}, l);
    rc.check(P(prim::TakeAlongAxis{-1}),
             {rc.random({2, 3}, dt), idx({2, 4}, {0, 2, 1, 1, 2, 2, 0, 0})}, l);
    rc.check(P(prim::ScatterAdd{0}),
             {rc.random({3, 4}, dt), idx({2, 4}, {0, 2, 1, 1, 2, 2, 0, 0}), rc.random({2, 4}, dt)},
             l);
    // Index shorter than x off the scatter axis: the src transpose slices first.
    rc.check(P(prim::ScatterAdd{1}),
             {rc.random({3, 4}, dt), idx({2, 2}, {3, 0, 3, 1}), rc.random({2, 2}, dt)},
             l + " short index");
    expected += 6;
  }
  // Mixed dtypes: x real, src complex (the result is complex).
  rc.check(P(prim::ScatterAdd{0}),
           {rc.random({3, 2}, DType::F64), idx({1, 2}, {2, 0}), rc.random({1, 2}, DType::C128)},
           "f64 x, c128 src");
  EXPECT_EQ(rc.checked(), expected + 1);
}

TEST(CoreRulesStructural, Conversions) {
  RuleChecker rc;
  rc.check(P(prim::Convert{DType::C128, false}), {rc.random({3, 2}, DType::F64)}, "f64 -> c128");
  rc.check(P(prim::Convert{DType::F64, true}), {rc.random({3, 2}, DType::C128)},
           "cast c128 -> f64");
  adtest::CheckOptions c64;
  c64.fd_step = 1e-2;  // linear: the difference quotient is exact up to c64 rounding
  c64.fd_tol = 1e-4;
  c64.adjoint_tol = 1e-6;
  rc.check(P(prim::Convert{DType::C128, false}), {rc.random({3}, DType::C64)}, "c64 -> c128", c64);
  adtest::CheckOptions f32;
  f32.finite_differences = false;
  f32.adjoint_tol = 1e-5;
  rc.check(P(prim::Convert{DType::F32, true}), {rc.random({4}, DType::F64)}, "cast f64 -> f32",
           f32);
  rc.check(P(prim::Convert{DType::F64, false}), {rc.random({4}, DType::F32)}, "f32 -> f64", f32);
  adtest::CheckOptions nd;
  nd.no_derivative = true;
  rc.check(P(prim::Convert{DType::I64, true}), {rc.random({4}, DType::F64)}, "cast to i64", nd);
  EXPECT_EQ(rc.checked(), 6);
}

TEST(CoreRulesStructural, ConstantsHaveRulesAndNoDerivative) {
  RuleChecker rc;
  const OpHandle full = P(prim::Full{{2, 3}, Scalar(1.5), DType::F64});
  const OpHandle constant = P(prim::Constant{ones({2}, DType::F64)});
  for (const OpHandle& op : {full, constant}) {
    const ad::RuleSet& r = rc.ctx().require(*op, "test");
    EXPECT_TRUE(r.jvp && r.transpose);
    adtest::EvalEmitter em(rc.backend());
    const ad::Val out[1] = {em.put(rc.run(op, {}))};
    EXPECT_FALSE(ad::forward_op(rc.ctx(), em, *op, {}, out, {}, "test")[0].has_value());
    const ad::MaybeVal ct[1] = {em.put(ones({2}, DType::F64))};
    EXPECT_TRUE(ad::backward_op(rc.ctx(), em, *op, {}, {}, out, ct, "test").empty());
  }
}

TEST(CoreRulesStructural, TransposeNeedsStaticExtents) {
  // The slice transpose pads back to the input extent, which must be known.
  RuleChecker rc;
  adtest::EvalEmitter em(rc.backend());
  const OpHandle op = P(prim::Slice{{0}, {2}, {1}});
  const TensorMeta sym{DType::F64, {SymDim::var("n")}};
  const ad::MaybeVal ct[1] = {em.put(ones({2}, DType::F64))};
  const ad::Val in[1] = {ad::Val{}}, out[1] = {ad::Val{}};
  EXPECT_TF_ERROR(
      ad::backward_op(rc.ctx(), em, *op, std::span<const TensorMeta>(&sym, 1), in, out, ct, "test"),
      ErrorKind::Unsupported);
}

TEST(CoreRules, EveryPrimitiveKindHasRules) {
  RuleChecker rc;
  const std::vector<prim::Params> kinds = {
      prim::Unary{UnaryOp::Exp},
      prim::Binary{BinaryOp::Add},
      prim::Select{},
      prim::Clamp{},
      prim::Variance{{0}, 1.0, false, false},
      prim::Variance{{0}, 1.0, false, true},
      prim::ArgReduce{true, 0, false},
      prim::ArgReduce{false, 0, false},
      prim::Cumulative{ReduceOp::Sum, 0, false},
      prim::Cumulative{ReduceOp::Prod, 0, false},
      prim::Argsort{0, false, -1},
      prim::Argsort{0, false, 1},
      prim::DotGeneral{},
      prim::Transpose{},
      prim::Reshape{},
      prim::BroadcastInDim{},
      prim::Slice{},
      prim::Pad{},
      prim::Concatenate{},
      prim::Reverse{},
      prim::IndexSelect{},
      prim::TakeAlongAxis{},
      prim::ScatterAdd{},
      prim::Diagonal{},
      prim::DiagEmbed{},
      prim::Triangle{true, 0},
      prim::Triangle{false, 0},
      prim::Convert{DType::F64, false},
      prim::Convert{DType::F64, true},
      prim::Full{},
      prim::Constant{},
  };
  for (const auto& p : kinds) {
    const OpHandle op = P(p);
    EXPECT_NE(rc.ctx().find(*op), nullptr) << op->name();
  }
  for (int i = 0; i <= static_cast<int>(ReduceOp::LogSumExp); ++i) {
    const OpHandle op = P(prim::Reduce{static_cast<ReduceOp>(i), {}, false});
    EXPECT_NE(rc.ctx().find(*op), nullptr) << op->name();
  }
}

}  // namespace
