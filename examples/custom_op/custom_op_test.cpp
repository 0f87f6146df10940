#include <gtest/gtest.h>

#include <cmath>

#include "custom_families.hpp"
#include "tenferro/ad/eager_ops.hpp"
#include "tenferro/ad/grad_check.hpp"

using namespace tenferro;

TEST(CustomOp, SoftSquareBackwardByTransposition) {
  auto rt = EagerRuntime::make_cpu();  // no set-up: the families install themselves
  auto x = rt->variable(Tensor::from_col_major({3}, std::vector<double>{-1.0, 0.5, 2.0}));
  sum(custom::softsquare(x)).backward();
  const auto g = x.grad().value().to_vector<double>();
  const double xs[3] = {-1.0, 0.5, 2.0};
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(g[i], 2 * xs[i] / (1 + xs[i] * xs[i]), 1e-14);
}

TEST(CustomOp, SoftSquareGradientCheck) {
  auto rt = EagerRuntime::make_cpu();  // no set-up: the families install themselves
  Generator gen(3);
  std::vector<EagerTensor> in{rt->tensor(randn({5}, f64, gen))};
  auto r = check_gradients(
      [](std::span<const EagerTensor> z) { return custom::softsquare(z[0]) * z[0]; }, in);
  EXPECT_TRUE(r.ok) << r.detail;
}

TEST(CustomOp, MaxPlusValuesAndSubgradient) {
  auto rt = EagerRuntime::make_cpu();  // no set-up: the families install themselves
  auto a = rt->variable(Tensor::from_row_major({2, 2}, std::vector<double>{0, 3, 1, -1}));
  auto b = rt->variable(Tensor::from_row_major({2, 2}, std::vector<double>{2, 0, 0, 5}));
  auto c = custom::maxplus_matmul(a, b);
  // C = [[max(0+2, 3+0), max(0+0, 3+5)], [max(1+2, -1+0), max(1+0, -1+5)]] = [[3, 8], [3, 4]]
  EXPECT_EQ(c.value().to_vector<double>(), (std::vector<double>{3, 3, 8, 4}));
  sum(c).backward();
  // Winners: C00 via k=1, C01 via k=1, C10 via k=0, C11 via k=1.
  EXPECT_EQ(a.grad().value().to_vector<double>(), (std::vector<double>{0, 1, 2, 1}));
  EXPECT_EQ(b.grad().value().to_vector<double>(), (std::vector<double>{1, 1, 0, 2}));
}

TEST(CustomOp, MaxPlusGradientCheckWithUniqueWinners) {
  auto rt = EagerRuntime::make_cpu();  // no set-up: the families install themselves
  Generator gen(11);
  std::vector<EagerTensor> in{rt->tensor(randn({3, 4}, f64, gen)),
                              rt->tensor(randn({4, 2}, f64, gen))};
  GradCheckOptions opt;
  opt.eps = 1e-7;  // small enough that no winner changes
  auto r = check_gradients(
      [](std::span<const EagerTensor> z) { return custom::maxplus_matmul(z[0], z[1]); }, in, opt);
  EXPECT_TRUE(r.ok) << r.detail;
}

TEST(CustomOp, ShapeConstraintNamesTheFamily) {
  auto rt = EagerRuntime::make_cpu();  // no set-up: the families install themselves
  auto a = rt->tensor(zeros({2, 3})), b = rt->tensor(zeros({4, 2}));
  try {
    custom::maxplus_matmul(a, b);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ShapeMismatch);
    EXPECT_EQ(e.op(), "custom.maxplus_matmul.v1");
  }
}

TEST(CustomOp, FirstCallInstallsModuleAndRulesOnce) {
  auto rt = EagerRuntime::make_cpu();
  EXPECT_FALSE(rt->runtime()->snapshot()->has_module("custom.families"));
  EXPECT_EQ(rt->ad().find("custom.softsquare.v1"), nullptr);
  const std::uint64_t epoch = rt->runtime()->epoch();
  auto x = rt->variable(Tensor::from_col_major({2}, std::vector<double>{1.0, 2.0}));
  sum(custom::softsquare(x)).backward();
  EXPECT_TRUE(rt->runtime()->snapshot()->has_module("custom.families"));
  EXPECT_NE(rt->ad().find("custom.maxplus_matmul.v1"), nullptr);  // the module's rules, all
  EXPECT_EQ(rt->runtime()->epoch(), epoch + 1);
  custom::softsquare(x);  // warm: nothing installed again
  EXPECT_EQ(rt->runtime()->epoch(), epoch + 1);
  EXPECT_NEAR(x.grad().value().to_vector<double>()[0], 1.0, 1e-14);  // 2x / (1 + x^2) at 1
}
