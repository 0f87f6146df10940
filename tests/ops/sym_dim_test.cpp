// Symbolic dimensions (folding, simplification, evaluation, identity) and
// checking of shape constraints against bound sizes.

#include <unordered_set>

#include "tenferro/ops/op.hpp"
#include "test_util.hpp"

using namespace tenferro;

namespace {
const SymDim n = SymDim::var("n");
const SymDim m = SymDim::var("m");
}  // namespace

TEST(SymDim, ConstantsFold) {
  EXPECT_TRUE((SymDim(3) + SymDim(4)).is_constant());
  EXPECT_EQ((SymDim(3) + 4).constant(), 7);
  EXPECT_EQ((SymDim(3) - 5).constant(), -2);
  EXPECT_EQ((SymDim(3) * 5).constant(), 15);
  EXPECT_EQ(min(SymDim(3), SymDim(5)).constant(), 3);
  EXPECT_EQ(max(SymDim(3), SymDim(5)).constant(), 5);
  EXPECT_EQ(SymDim().constant(), 0);
  EXPECT_EQ(SymDim(std::int64_t{1} << 40).try_constant(), std::int64_t{1} << 40);
  EXPECT_EQ(SymDim(7).kind(), SymDim::Kind::Const);
  EXPECT_EQ(n.kind(), SymDim::Kind::Var);
  EXPECT_EQ((n + 1).kind(), SymDim::Kind::Add);
  EXPECT_EQ(floordiv(n, 2).kind(), SymDim::Kind::FloorDiv);
  EXPECT_FALSE(n.try_constant().has_value());
}

TEST(SymDim, FloorDivRoundsTowardMinusInfinity) {
  EXPECT_EQ(floordiv(SymDim(7), SymDim(2)).constant(), 3);
  EXPECT_EQ(floordiv(SymDim(-7), SymDim(2)).constant(), -4);
  EXPECT_EQ(floordiv(SymDim(7), SymDim(-2)).constant(), -4);
  EXPECT_EQ(floordiv(SymDim(-7), SymDim(-2)).constant(), 3);
  EXPECT_EQ(floordiv(SymDim(-6), SymDim(2)).constant(), -3);
  EXPECT_EQ(floordiv(SymDim(0), SymDim(-3)).constant(), 0);
  EXPECT_EQ(floordiv(n - 10, 3).evaluate({{"n", 3}}), -3);  // floor(-7 / 3)
  EXPECT_TF_ERROR(floordiv(SymDim(1), SymDim(0)), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(floordiv(n, 0), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(floordiv(n, m).evaluate({{"n", 4}, {"m", 0}}), ErrorKind::InvalidArgument);
}

TEST(SymDim, Simplifies) {
  EXPECT_EQ(n + 0, n);
  EXPECT_EQ(0 + n, n);
  EXPECT_EQ(n - 0, n);
  EXPECT_EQ(n * 1, n);
  EXPECT_EQ(1 * n, n);
  EXPECT_EQ(n * 0, SymDim(0));
  EXPECT_TRUE((n * 0).is_constant());
  EXPECT_TRUE((n - n).is_constant());
  EXPECT_EQ((n - n).constant(), 0);
  EXPECT_EQ(floordiv(n, 1), n);
  EXPECT_EQ(min(n, n), n);
  EXPECT_EQ(max(n + 1, n + 1), n + 1);
}

TEST(SymDim, EvaluatesWithBindings) {
  const DimBindings b{{"n", 3}, {"m", 4}};
  EXPECT_EQ(n.evaluate(b), 3);
  EXPECT_EQ((n * m + 2).evaluate(b), 14);
  EXPECT_EQ((n - m).evaluate(b), -1);
  EXPECT_EQ(min(n, m).evaluate(b), 3);
  EXPECT_EQ(max(n, m).evaluate(b), 4);
  EXPECT_EQ(floordiv(n * m, 5).evaluate(b), 2);
  EXPECT_EQ(SymDim(9).evaluate({}), 9);
}

TEST(SymDim, UnboundNameIsAnError) {
  EXPECT_TF_ERROR((n + m).evaluate({{"n", 3}}), ErrorKind::InvalidArgument);
  try {
    (void)(n + m).evaluate({{"n", 3}});
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.message()).find("'m'"), std::string::npos) << e.what();
  }
  EXPECT_TF_ERROR(SymDim::var(""), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(n.constant(), ErrorKind::InvalidArgument);
}

TEST(SymDim, FreeNamesAreSortedAndUnique) {
  EXPECT_EQ(((m + n) * n).free_names(), (std::vector<std::string>{"m", "n"}));
  EXPECT_EQ(SymDim(4).free_names(), std::vector<std::string>{});
  EXPECT_EQ(floordiv(SymDim::var("z") + 1, n).free_names(), (std::vector<std::string>{"n", "z"}));
}

TEST(SymDim, StructuralEqualityAndHash) {
  const SymDim n2 = SymDim::var("n");
  EXPECT_EQ(n, n2);
  EXPECT_EQ(n.hash(), n2.hash());
  EXPECT_EQ(n * m + 1, n2 * m + 1);
  EXPECT_EQ((n * m + 1).hash(), (n2 * m + 1).hash());
  EXPECT_NE(n, m);
  EXPECT_NE(n + 1, n + 2);
  EXPECT_NE(n + m, m + n);  // structural, not algebraic
  EXPECT_NE(n, SymDim(3));
  EXPECT_EQ(SymDim(3), SymDim(1) + 2);
  EXPECT_EQ(SymDim(3).hash(), (SymDim(1) + 2).hash());
  EXPECT_NE(min(n, m), max(n, m));
  std::unordered_set<std::size_t> hashes{n.hash(), n2.hash(), (n + 1).hash()};
  EXPECT_EQ(hashes.size(), 2u);
}

TEST(SymDim, ToString) {
  EXPECT_EQ(SymDim(-3).to_string(), "-3");
  EXPECT_EQ(n.to_string(), "n");
  EXPECT_EQ((n + 1).to_string(), "(n + 1)");
  EXPECT_EQ(((n + 1) * m).to_string(), "((n + 1)*m)");
  EXPECT_EQ(floordiv(n, 2).to_string(), "(n // 2)");
  EXPECT_EQ(min(n, 3).to_string(), "min(n, 3)");
  EXPECT_EQ(max(n - m, 0).to_string(), "max((n - m), 0)");
}

TEST(SymShape, Helpers) {
  const std::int64_t raw[] = {2, 3};
  SymShape s = to_sym_shape(raw);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(try_concrete(s), (Shape{2, 3}));
  EXPECT_EQ(numel(s).constant(), 6);
  s.push_back(n);
  EXPECT_FALSE(try_concrete(s).has_value());
  EXPECT_EQ(evaluate(s, {{"n", 5}}), (Shape{2, 3, 5}));
  EXPECT_EQ(numel(s).evaluate({{"n", 5}}), 30);
  EXPECT_EQ(to_string(s), "[2, 3, n]");
  EXPECT_EQ(to_string(SymShape{}), "[]");
  EXPECT_EQ(numel(SymShape{}).constant(), 1);
  EXPECT_EQ(numel(SymShape{n, 0}).constant(), 0);
  EXPECT_TF_ERROR(evaluate(s, {}), ErrorKind::InvalidArgument);
}

TEST(ShapeConstraints, SameShape) {
  const std::vector<ShapeConstraint> cs{ShapeConstraint::same_shape(0, 1)};
  const std::vector<Shape> ok{{2, 3}, {2, 3}};
  EXPECT_NO_THROW(check_constraints("myop", cs, ok));
  const std::vector<Shape> bad{{2, 3}, {3, 2}};
  EXPECT_TF_ERROR(check_constraints("myop", cs, bad), ErrorKind::ShapeMismatch);
  try {
    check_constraints("myop", cs, bad);
  } catch (const Error& e) {
    EXPECT_EQ(e.op(), "myop");
  }
  const std::vector<Shape> one{{2, 3}};
  EXPECT_TF_ERROR(check_constraints("myop", cs, one), ErrorKind::Internal);
}

TEST(ShapeConstraints, DimsEqual) {
  const std::vector<ShapeConstraint> cs{ShapeConstraint::dims_equal(n * 2, m, "n*2 vs m"),
                                        ShapeConstraint::dims_equal(n, 3, "n vs 3")};
  EXPECT_EQ(cs[0].kind, ShapeConstraint::Kind::DimEqual);
  EXPECT_EQ(cs[0].what, "n*2 vs m");
  EXPECT_NO_THROW(check_constraints("myop", cs, {}, {{"n", 3}, {"m", 6}}));
  EXPECT_TF_ERROR(check_constraints("myop", cs, {}, {{"n", 3}, {"m", 7}}),
                  ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(check_constraints("myop", cs, {}, {{"n", 4}, {"m", 8}}),
                  ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(check_constraints("myop", cs, {}, {{"n", 3}}), ErrorKind::InvalidArgument);
  EXPECT_NO_THROW(check_constraints("myop", {}, {}));
}

TEST(SymDim, DynamicSizes) {
  const SymDim r = SymDim::dynamic("r", min(n, SymDim(8)));
  EXPECT_EQ(r.kind(), SymDim::Kind::Dynamic);
  EXPECT_TRUE(r.is_dynamic());
  EXPECT_TRUE(r.depends_on_dynamic());
  EXPECT_TRUE((r + 1).depends_on_dynamic());
  EXPECT_FALSE((r + 1).is_dynamic());
  EXPECT_FALSE((n + 1).depends_on_dynamic());
  EXPECT_EQ(r.name(), "r");
  EXPECT_EQ(r.upper_bound(), min(n, SymDim(8)));
  EXPECT_EQ(r.to_string(), "r");
  EXPECT_EQ((n - r).free_names(), (std::vector<std::string>{"n", "r"}));
  EXPECT_EQ(r, SymDim::dynamic("r", min(n, SymDim(8))));
  EXPECT_FALSE(r == SymDim::var("r"));  // a named size is not a dynamic one
  EXPECT_FALSE(r == SymDim::dynamic("s", min(n, SymDim(8))));
  EXPECT_EQ((n - r).evaluate({{"n", 10}, {"r", 3}}), 7);
  EXPECT_EQ(r - r, SymDim(0));
  EXPECT_TRUE(depends_on_dynamic(SymShape{4, r}));
  EXPECT_FALSE(depends_on_dynamic(SymShape{4, n}));
  EXPECT_TF_ERROR(r.evaluate({{"n", 10}}), ErrorKind::InvalidArgument);  // not bound yet
  EXPECT_TF_ERROR(SymDim::dynamic("", 3), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(SymDim::dynamic("r", -1), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(n.upper_bound(), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR((n + 1).name(), ErrorKind::InvalidArgument);
  EXPECT_EQ(n.name(), "n");
}
