// Core AD rules of the elementwise primitives (unary, binary, select, clamp):
// jvp vs finite differences, adjoint consistency of the reverse rule (the
// direct vjp where the op has one, else linearise-then-transpose), declared
// residuals only, in f64 and c128; boundary conventions (ties, abs at 0,
// clamp bounds, pow at 0) and non-differentiable ops.

#include "ad/eval_emitter.hpp"
#include "test_util.hpp"

using namespace tenferro;
using adtest::OpHandle;
using adtest::RuleChecker;

namespace {

OpHandle U(UnaryOp op) {
  return make_primitive(prim::Unary{op});
}
OpHandle B(BinaryOp op) {
  return make_primitive(prim::Binary{op});
}

// Real parts uniform in [lo, hi); complex values get imaginary parts ~ 0.3 N(0, 1).
Tensor uniform(RuleChecker& rc, const Shape& shape, DType dt, double lo, double hi) {
  Backend& b = rc.backend();
  const Tensor re = add(mul(rand(shape, DType::F64, rc.gen()), Tensor::scalar(hi - lo), b),
                        Tensor::scalar(lo), b);
  if (!is_complex(dt)) return cast(re, dt, b);
  const Tensor im = mul(randn(shape, DType::F64, rc.gen()), Tensor::scalar(0.3), b);
  return cast(complex(re, im), dt, b);
}

struct UnaryCase {
  UnaryOp op;
  double lo, hi;
  bool complex_ok;
};

constexpr UnaryCase kUnary[] = {
    {UnaryOp::Abs, -2, 2, true},       {UnaryOp::Neg, -2, 2, true},
    {UnaryOp::Conj, -2, 2, true},      {UnaryOp::Exp, -1, 1, true},
    {UnaryOp::Exp2, -1, 1, true},      {UnaryOp::Expm1, -1, 1, true},
    {UnaryOp::Log, 0.5, 2, true},      {UnaryOp::Log2, 0.5, 2, true},
    {UnaryOp::Log10, 0.5, 2, true},    {UnaryOp::Log1p, -0.5, 1, true},
    {UnaryOp::Sqrt, 0.5, 2, true},     {UnaryOp::Rsqrt, 0.5, 2, true},
    {UnaryOp::Square, -2, 2, true},    {UnaryOp::Reciprocal, 0.5, 2, true},
    {UnaryOp::Sin, -2, 2, true},       {UnaryOp::Cos, -2, 2, true},
    {UnaryOp::Tan, -1, 1, true},       {UnaryOp::Asin, -0.6, 0.6, true},
    {UnaryOp::Acos, -0.6, 0.6, true},  {UnaryOp::Atan, -1, 1, true},
    {UnaryOp::Sinh, -1.5, 1.5, true},  {UnaryOp::Cosh, -1.5, 1.5, true},
    {UnaryOp::Tanh, -1.5, 1.5, true},  {UnaryOp::Asinh, -1.5, 1.5, true},
    {UnaryOp::Acosh, 1.5, 3, true},    {UnaryOp::Atanh, -0.6, 0.6, true},
    {UnaryOp::Sigmoid, -2, 2, true},   {UnaryOp::Erf, -1.5, 1.5, false},
    {UnaryOp::Erfc, -1.5, 1.5, false}, {UnaryOp::Sgn, 0.5, 2, true},
    {UnaryOp::Real, -2, 2, true},      {UnaryOp::Imag, -2, 2, true},
    {UnaryOp::Angle, 0.5, 2, true},
};

TEST(CoreRulesUnary, EveryDifferentiableOpF64AndC128) {
  RuleChecker rc;
  int expected = 2;
  for (const UnaryCase& c : kUnary) {
    for (DType dt : {DType::F64, DType::C128}) {
      if (dt == DType::C128 && !c.complex_ok) continue;
      rc.check(U(c.op), {uniform(rc, {3, 4}, dt, c.lo, c.hi)}, std::string(name(dt)));
      ++expected;
    }
  }
  // Rank 0 and an empty tensor.
  rc.check(U(UnaryOp::Exp), {Tensor::scalar(0.3)}, "rank 0");
  rc.check(U(UnaryOp::Sin), {zeros({0, 3}, DType::F64)}, "empty");
  EXPECT_EQ(rc.checked(), expected);
}

TEST(CoreRulesUnary, F32UsesItsOwnDtype) {
  RuleChecker rc;
  adtest::CheckOptions opt;
  opt.finite_differences = false;
  opt.adjoint_tol = 1e-4;
  rc.check(U(UnaryOp::Exp), {uniform(rc, {5}, DType::F32, -1, 1)}, "f32", opt);
  rc.check(U(UnaryOp::Abs), {uniform(rc, {5}, DType::C64, -1, 1)}, "c64", opt);
  EXPECT_EQ(rc.checked(), 2);
}

TEST(CoreRulesUnary, NonDifferentiableOps) {
  RuleChecker rc;
  adtest::CheckOptions nd;
  nd.no_derivative = true;
  for (UnaryOp op : {UnaryOp::Sign, UnaryOp::Floor, UnaryOp::Ceil, UnaryOp::Round, UnaryOp::Trunc,
                     UnaryOp::IsFinite, UnaryOp::IsNan}) {
    EXPECT_TRUE(rc.ctx().require(*U(op), "test").non_differentiable);
    rc.check(U(op), {uniform(rc, {3}, DType::F64, -2, 2)}, "f64", nd);
  }
  EXPECT_TRUE(rc.ctx().require(*U(UnaryOp::LogicalNot), "test").non_differentiable);
  // Piecewise-constant for real input: sgn and angle give no tangent.
  for (UnaryOp op : {UnaryOp::Sgn, UnaryOp::Angle, UnaryOp::Imag}) {
    const auto jt =
        rc.jvp(U(op), {uniform(rc, {3}, DType::F64, -2, 2)}, {rc.random({3}, DType::F64)});
    EXPECT_FALSE(jt[0].has_value()) << name(op);
  }
}

TEST(CoreRulesUnary, AbsAtZeroHasZeroDerivative) {
  RuleChecker rc;
  for (DType dt : {DType::F64, DType::C128}) {
    const Tensor x = zeros({4}, dt);
    const auto jt = rc.jvp(U(UnaryOp::Abs), {x}, {rc.random({4}, dt)});
    ASSERT_TRUE(jt[0].has_value());
    for (double v : adtest::values(*jt[0], rc.backend())) EXPECT_EQ(v, 0.0);
    const auto g = rc.vjp(U(UnaryOp::Abs), {x}, ones({4}, DType::F64));
    ASSERT_TRUE(g[0].has_value());
    EXPECT_EQ(adtest::max_abs(*g[0], rc.backend()), 0.0);
  }
  // Complex abs: grad = c * z / |z| (PyTorch).
  const Tensor z = Tensor::from_col_major<c128_t>({1}, std::vector<c128_t>{{3.0, 4.0}});
  const auto g = rc.vjp(U(UnaryOp::Abs), {z}, ones({1}, DType::F64));
  const c128_t v = g[0]->to_vector<c128_t>()[0];
  EXPECT_NEAR(v.real(), 0.6, 1e-15);
  EXPECT_NEAR(v.imag(), 0.8, 1e-15);
}

// ---- binary ------------------------------------------------------------------------

struct BinaryCase {
  BinaryOp op;
  double alo, ahi, blo, bhi;
  bool complex_ok;
};

constexpr BinaryCase kBinary[] = {
    {BinaryOp::Add, -2, 2, -2, 2, true},
    {BinaryOp::Sub, -2, 2, -2, 2, true},
    {BinaryOp::Mul, -2, 2, -2, 2, true},
    {BinaryOp::Div, -2, 2, 0.5, 2, true},
    {BinaryOp::Pow, 0.5, 2, -1.5, 1.5, true},
    {BinaryOp::Maximum, -2, 2, -2, 2, false},
    {BinaryOp::Minimum, -2, 2, -2, 2, false},
    {BinaryOp::Atan2, -2, 2, 0.5, 2, false},
    {BinaryOp::Hypot, 0.5, 2, -2, -0.5, false},
    {BinaryOp::Copysign, 0.5, 2, -2, 2, false},
    {BinaryOp::Copysign, -2, -0.5, 0.5, 2, false},
    {BinaryOp::Fmod, 2.5, 2.7, 1.0, 1.05, false},
    {BinaryOp::Fmod, -2.7, -2.5, 1.0, 1.05, false},
    {BinaryOp::Remainder, -2.7, -2.5, 1.0, 1.05, false},
    {BinaryOp::Remainder, 2.5, 2.7, -1.05, -1.0, false},
};

TEST(CoreRulesBinary, EveryDifferentiableOpWithBroadcasting) {
  RuleChecker rc;
  const std::pair<Shape, Shape> shapes[] = {
      {{3, 1}, {1, 4}}, {{2, 3}, {3}}, {{3, 4}, {3, 4}}, {{}, {2, 2}}};
  int expected = 0;
  for (const BinaryCase& c : kBinary) {
    for (DType dt : {DType::F64, DType::C128}) {
      if (dt == DType::C128 && !c.complex_ok) continue;
      for (const auto& [sa, sb] : shapes) {
        rc.check(B(c.op), {uniform(rc, sa, dt, c.alo, c.ahi), uniform(rc, sb, dt, c.blo, c.bhi)},
                 std::string(name(dt)) + " " + shape_to_string(sa) + " op " + shape_to_string(sb));
        ++expected;
      }
    }
  }
  EXPECT_EQ(rc.checked(), expected);
}

TEST(CoreRulesBinary, MixedDtypes) {
  RuleChecker rc;
  for (BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Pow}) {
    // real with complex: the real operand's cotangent is the real part
    rc.check(B(op),
             {uniform(rc, {3, 1}, DType::F64, 0.5, 2), uniform(rc, {1, 4}, DType::C128, 0.5, 2)},
             "f64,c128");
    rc.check(B(op), {uniform(rc, {3}, DType::C128, 0.5, 2), uniform(rc, {3}, DType::F64, 0.5, 2)},
             "c128,f64");
  }
  // An integer operand carries no tangent and gets no cotangent.
  const Tensor k =
      Tensor::from_col_major<std::int64_t>({4}, std::vector<std::int64_t>{1, -2, 3, 2});
  rc.check(B(BinaryOp::Mul), {uniform(rc, {4}, DType::F64, -2, 2), k}, "f64,i64");
  rc.check(B(BinaryOp::Pow), {uniform(rc, {4}, DType::F64, 0.5, 2), k}, "f64^i64");
  rc.check(B(BinaryOp::Pow), {k.slice(0, 0, 1), uniform(rc, {4}, DType::F64, -1, 1)}, "i64^f64");
  EXPECT_EQ(rc.checked(), 13);
}

TEST(CoreRulesBinary, ComplexFromParts) {
  RuleChecker rc;
  const std::pair<Shape, Shape> shapes[] = {
      {{3, 1}, {1, 4}}, {{2, 3}, {3}}, {{3, 4}, {3, 4}}, {{}, {2, 2}}, {{2, 2}, {}}};
  for (const auto& [sa, sb] : shapes) {
    rc.check(B(BinaryOp::Complex),
             {uniform(rc, sa, DType::F64, -2, 2), uniform(rc, sb, DType::F64, -2, 2)},
             shape_to_string(sa) + " complex " + shape_to_string(sb));
  }
  adtest::CheckOptions f32;
  f32.finite_differences = false;
  f32.adjoint_tol = 1e-5;
  rc.check(B(BinaryOp::Complex),
           {uniform(rc, {4}, DType::F32, -1, 1), uniform(rc, {4}, DType::F32, -1, 1)}, "f32", f32);
  // Mixed f32/f64 parts compute in f64; an integer part gets no cotangent.
  rc.check(B(BinaryOp::Complex),
           {uniform(rc, {3}, DType::F32, -1, 1), uniform(rc, {3}, DType::F64, -1, 1)}, "f32,f64",
           f32);
  const Tensor k =
      Tensor::from_col_major<std::int64_t>({4}, std::vector<std::int64_t>{1, -2, 3, 2});
  rc.check(B(BinaryOp::Complex), {k, uniform(rc, {4}, DType::F64, -2, 2)}, "i64,f64");
  EXPECT_EQ(rc.checked(), 8);

  // Exact values: jvp = complex(ta, tb) (a missing tangent is zero); the
  // cotangent of re is Re(ct) and of im is Im(ct), summed over broadcasting.
  const Tensor re = Tensor::from_col_major<double>({2, 1}, std::vector<double>{1.0, -2.0});
  const Tensor im = Tensor::from_col_major<double>({1, 3}, std::vector<double>{0.5, 3.0, -1.0});
  const Tensor tb = Tensor::from_col_major<double>({1, 3}, std::vector<double>{2.0, -1.0, 4.0});
  const auto jt = rc.jvp(B(BinaryOp::Complex), {re, im}, {std::nullopt, tb});
  ASSERT_TRUE(jt[0].has_value());
  EXPECT_EQ(jt[0]->dtype(), DType::C128);
  EXPECT_EQ(jt[0]->to_vector<c128_t>(),
            (std::vector<c128_t>{{0, 2}, {0, 2}, {0, -1}, {0, -1}, {0, 4}, {0, 4}}));
  const Tensor ct = Tensor::from_col_major<c128_t>(
      {2, 3}, std::vector<c128_t>{{1, 2}, {3, 4}, {5, 6}, {7, 8}, {9, 10}, {11, 12}});
  const auto g = rc.vjp(B(BinaryOp::Complex), {re, im}, ct);
  ASSERT_TRUE(g[0].has_value() && g[1].has_value());
  EXPECT_EQ(g[0]->dtype(), DType::F64);
  EXPECT_EQ(g[0]->to_vector<double>(), (std::vector<double>{1 + 5 + 9, 3 + 7 + 11}));
  EXPECT_EQ(g[1]->to_vector<double>(), (std::vector<double>{2 + 4, 6 + 8, 10 + 12}));
}

TEST(CoreRulesBinary, TiesSplitEvenly) {
  RuleChecker rc;
  const Tensor x = Tensor::from_col_major<double>({3}, std::vector<double>{1.0, -2.0, 0.5});
  const Tensor y = Tensor::from_col_major<double>({3}, std::vector<double>{1.0, 3.0, 0.5});
  for (BinaryOp op : {BinaryOp::Maximum, BinaryOp::Minimum}) {
    const auto jt = rc.jvp(B(op), {x, y}, {ones({3}, DType::F64), std::nullopt});
    const std::vector<double> j = adtest::values(*jt[0], rc.backend());
    EXPECT_EQ(j[0], 0.5);
    EXPECT_EQ(j[1], op == BinaryOp::Maximum ? 0.0 : 1.0);
    EXPECT_EQ(j[2], 0.5);
    const auto g = rc.vjp(B(op), {x, y}, ones({3}, DType::F64));
    const std::vector<double> ga = adtest::values(*g[0], rc.backend()),
                              gb = adtest::values(*g[1], rc.backend());
    for (int i : {0, 2}) {
      EXPECT_EQ(ga[static_cast<std::size_t>(i)], 0.5);
      EXPECT_EQ(gb[static_cast<std::size_t>(i)], 0.5);
    }
  }
}

TEST(CoreRulesBinary, PowAtZeroBase) {
  RuleChecker rc;
  // d/da 0^2 = 0, d/db 0^2 = 0 (PyTorch masks log(0)); d/da 0^0 = 0.
  const Tensor a = zeros({2}, DType::F64);
  const Tensor b = Tensor::from_col_major<double>({2}, std::vector<double>{2.0, 0.0});
  const auto g = rc.vjp(B(BinaryOp::Pow), {a, b}, ones({2}, DType::F64));
  for (double v : adtest::values(*g[0], rc.backend())) EXPECT_EQ(v, 0.0);
  for (double v : adtest::values(*g[1], rc.backend())) EXPECT_EQ(v, 0.0);
}

TEST(CoreRulesBinary, ComparisonsAndLogicalAreNotDifferentiable) {
  RuleChecker rc;
  adtest::CheckOptions nd;
  nd.no_derivative = true;
  for (BinaryOp op :
       {BinaryOp::Eq, BinaryOp::Ne, BinaryOp::Lt, BinaryOp::Le, BinaryOp::Gt, BinaryOp::Ge}) {
    rc.check(B(op), {uniform(rc, {3}, DType::F64, -1, 1), uniform(rc, {3}, DType::F64, -1, 1)},
             "cmp", nd);
  }
  for (BinaryOp op : {BinaryOp::LogicalAnd, BinaryOp::LogicalOr}) {
    EXPECT_TRUE(rc.ctx().require(*B(op), "test").non_differentiable);
  }
  EXPECT_EQ(rc.checked(), 6);
}

// ---- select, clamp -----------------------------------------------------------------

TEST(CoreRulesSelect, BroadcastingAndComplex) {
  RuleChecker rc;
  const Tensor cond = gt(Tensor::from_col_major<double>({3, 1}, std::vector<double>{1, -1, 1}),
                         Tensor::scalar(0.0), rc.backend());
  const OpHandle op = make_primitive(prim::Select{});
  rc.check(op,
           {cond, uniform(rc, {3, 4}, DType::F64, -1, 1), uniform(rc, {1, 4}, DType::F64, -1, 1)},
           "f64");
  rc.check(op, {cond, uniform(rc, {3, 4}, DType::C128, -1, 1), uniform(rc, {4}, DType::F64, -1, 1)},
           "c128,f64");
  rc.check(op, {cond, Tensor::scalar(2.0), uniform(rc, {3, 4}, DType::C128, -1, 1)}, "rank-0 a");
  EXPECT_EQ(rc.checked(), 3);
}

TEST(CoreRulesClamp, InteriorBoundsAndOneSided) {
  RuleChecker rc;
  const OpHandle both = make_primitive(prim::Clamp{Scalar(-0.5), Scalar(0.5)});
  rc.check(both, {uniform(rc, {4, 5}, DType::F64, -2, 2)}, "random");
  rc.check(make_primitive(prim::Clamp{Scalar(0.0), std::nullopt}),
           {uniform(rc, {6}, DType::F64, -2, 2)}, "lo");
  rc.check(make_primitive(prim::Clamp{std::nullopt, Scalar(0.0)}),
           {uniform(rc, {6}, DType::F64, -2, 2)}, "hi");
  rc.check(make_primitive(prim::Clamp{std::nullopt, std::nullopt}),
           {uniform(rc, {6}, DType::F64, -2, 2)}, "none");
  // Gradient passes at the bounds (inclusive, like PyTorch).
  const OpHandle unit = make_primitive(prim::Clamp{Scalar(0.0), Scalar(1.0)});
  const Tensor x =
      Tensor::from_col_major<double>({5}, std::vector<double>{-1.0, 0.0, 0.5, 1.0, 2.0});
  const auto g = rc.vjp(unit, {x}, ones({5}, DType::F64));
  EXPECT_EQ(adtest::values(*g[0], rc.backend()), (std::vector<double>{0, 1, 1, 1, 0}));
  EXPECT_EQ(rc.checked(), 4);
}

TEST(CoreRules, EveryUnaryAndBinaryOpHasRules) {
  RuleChecker rc;
  for (int i = 0; i < kUnaryOpCount; ++i) {
    EXPECT_NE(rc.ctx().find(*U(static_cast<UnaryOp>(i))), nullptr) << i;
  }
  for (int i = 0; i < kBinaryOpCount; ++i) {
    EXPECT_NE(rc.ctx().find(*B(static_cast<BinaryOp>(i))), nullptr) << i;
  }
  // Registering the same rules again is a no-op (ensure semantics).
  ad::AdContext twice;
  ad::register_core_rules(twice);
  const ad::RuleSet* tanh_rules = twice.find("tanh");
  ASSERT_NE(tanh_rules, nullptr);
  EXPECT_NO_THROW(ad::register_core_rules(twice));
  EXPECT_EQ(twice.find("tanh"), tanh_rules);
}

}  // namespace
