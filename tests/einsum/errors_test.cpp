// einsum's typed errors: malformed equations (with the byte position), rank
// and extent mismatches (naming the label, operands and extents), operand
// counts, dtypes, and the direct tier's backend.

#include <limits>

#include "einsum_test_util.hpp"

using namespace etest;

namespace {

// The message of the error `f` throws ("" when it does not throw).
template <class F>
std::string message_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::vector<EagerTensor> ops(const std::vector<Shape>& shapes, DType dt = f64) {
  std::vector<EagerTensor> v;
  for (std::size_t k = 0; k < shapes.size(); ++k)
    v.push_back(runtime()->tensor(make(shapes[k], dt, k + 1)));
  return v;
}

}  // namespace

TEST(EinsumErrors, MalformedEquationsNameThePosition) {
  const auto ab = ops({{2, 3}, {3, 4}});
  EXPECT_TF_ERROR(einsum("ij,j1->ik", ab), ErrorKind::InvalidArgument);
  EXPECT_NE(message_of([&] { einsum("ij,j1->ik", ab); }).find("position 4"), std::string::npos);
  EXPECT_TF_ERROR(einsum("ij,jk->i.k", ab), ErrorKind::InvalidArgument);
  EXPECT_NE(message_of([&] { einsum("ij,jk->i.k", ab); }).find("position 8"), std::string::npos);
  EXPECT_TF_ERROR(einsum("ij,jk->ik->i", ab), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(einsum("ij,jk-ik", ab), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(einsum("ij,jk>ik", ab), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(einsum("ij,jk->i,k", ab), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(einsum("......,jk->", ab), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(einsum("ij,jk->iz", ab), ErrorKind::InvalidArgument);
  EXPECT_NE(message_of([&] { einsum("ij,jk->iz", ab); }).find("'z' at position 8"),
            std::string::npos);
  EXPECT_TF_ERROR(einsum("i\xff,jk->", ab), ErrorKind::InvalidArgument);
}

TEST(EinsumErrors, OperandCountAndRank) {
  const auto ab = ops({{2, 3}, {3, 4}});
  EXPECT_TF_ERROR(einsum("ij->ij", ab), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(einsum("ij,jk,kl->il", ab), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(einsum("->", std::vector<EagerTensor>{}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(einsum("ijk,jk->i", ab), ErrorKind::RankMismatch);
  EXPECT_TF_ERROR(einsum("ijk...,jk->i", ab), ErrorKind::RankMismatch);
  EXPECT_TF_ERROR(einsum(EinsumLabels{{{0}, {1, 2}}, std::nullopt}, ab), ErrorKind::RankMismatch);
  EXPECT_TF_ERROR(einsum(EinsumLabels{{{0, 1}, {1, 2}}, std::vector<std::int64_t>{9}}, ab),
                  ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(einsum("ij,jk->ik", std::vector<EagerTensor>{ab[0], EagerTensor{}}),
                  ErrorKind::InvalidArgument);
}

TEST(EinsumErrors, NegativeIntegerLabelsAreNamedAsWritten) {
  // Found by the einsum_labels fuzz target: an integer label was named like a
  // string equation's ellipsis axis, negating INT64_MIN on the way.
  const std::int64_t lowest = std::numeric_limits<std::int64_t>::min();
  const auto ab = ops({{2, 3}});
  EXPECT_TF_ERROR(einsum(EinsumLabels{{{lowest, lowest}}, std::nullopt}, ab),
                  ErrorKind::ShapeMismatch);
  std::string m = message_of([&] { einsum(EinsumLabels{{{lowest, lowest}}, std::nullopt}, ab); });
  EXPECT_NE(m.find("label -9223372036854775808 is repeated"), std::string::npos) << m;
  EXPECT_EQ(m.find("ellipsis"), std::string::npos) << m;
  m = message_of([&] {
    einsum(EinsumLabels{{{-5, 1}, {-5, 2}}, std::nullopt}, ops({{2, 3}, {4, 5}}));
  });
  EXPECT_NE(m.find("label -5 has extent 2 in operand 0 but extent 4 in operand 1"),
            std::string::npos)
      << m;
  m = message_of([&] {
    einsum(EinsumLabels{{{7, 1}, {7, 2}}, std::nullopt}, ops({{2, 3}, {4, 5}}));
  });
  EXPECT_NE(m.find("label 7 has extent"), std::string::npos) << m;
}

TEST(EinsumErrors, ExtentsThatDisagreeNameLabelOperandsAndExtents) {
  const auto ab = ops({{2, 3}, {4, 5}});
  EXPECT_TF_ERROR(einsum("ij,jk->ik", ab), ErrorKind::ShapeMismatch);
  const std::string m = message_of([&] { einsum("ij,jk->ik", ab); });
  EXPECT_NE(m.find("'j'"), std::string::npos) << m;
  EXPECT_NE(m.find("extent 3 in operand 0"), std::string::npos) << m;
  EXPECT_NE(m.find("extent 4 in operand 1"), std::string::npos) << m;
  EXPECT_TF_ERROR(einsum("ii->i", ops({{2, 3}})), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(einsum("...i,...i->", ops({{2, 3}, {2, 4}})), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(einsum_path("ij,jk->ik", {{2, 3}, {4, 5}}), ErrorKind::ShapeMismatch);
}

TEST(EinsumErrors, DTypesAndTraced) {
  const auto a = ops({{2, 3}}, f64)[0];
  const auto b = ops({{3, 4}}, f32)[0];
  EXPECT_TF_ERROR(einsum("ij,jk->ik", {a, b}), ErrorKind::DTypeMismatch);
  const TracedTensor t = placeholder(f64, {2, 3}), u = placeholder(f64, {4, 5});
  EXPECT_TF_ERROR(einsum("ij,jk->ik", {t, u}), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(einsum("ij,jk,->ik", {t, u}), ErrorKind::InvalidArgument);
  // The equation is checked before the dtypes in every tier (the eager plan
  // cache used to check the dtypes first).
  const auto c = ops({{3}}, c128)[0];
  const auto s = ops({{}}, f32)[0];
  EXPECT_TF_ERROR(einsum("m,ij->j", {s, c}), ErrorKind::RankMismatch);
  EXPECT_TF_ERROR(einsum("m,ij->j", {s.value(), c.value()}, runtime()->backend()),
                  ErrorKind::RankMismatch);
  EXPECT_TF_ERROR(einsum("m,ij->j", {placeholder(f32, {}), placeholder(c128, {3})}),
                  ErrorKind::RankMismatch);
  // A cached plan for one dtype does not let operands of two dtypes through.
  const auto p = ops({{3}}, f64)[0];
  EXPECT_EQ(einsum("i,i->", {p, p}).dtype(), f64);
  EXPECT_TF_ERROR(einsum("i,i->", {p, ops({{3}}, f32)[0]}), ErrorKind::DTypeMismatch);
}

// Issue 52 item 5: an unset option is not keyed as -1, and ranks are keyed in
// full, so a cached plan never lets an invalid option or another rank through.
TEST(EinsumErrors, CachedPlansCheckOptionsAndKeyRanksInFull) {
  const auto ab = ops({{2, 3}, {3, 4}});
  Backend& be = runtime()->backend();
  for (int warm = 0; warm < 2; ++warm) {
    if (warm == 1) {
      (void)einsum("ij,jk->ik", ab);  // a plan cached with the default options
      (void)einsum("ij,jk->ik", {ab[0].value(), ab[1].value()}, be);
    }
    EXPECT_TF_ERROR(einsum("ij,jk->ik", ab, {.budget_ms = -1.0}), ErrorKind::InvalidArgument);
    EXPECT_TF_ERROR(einsum("ij,jk->ik", ab, {.memory_limit = -1.0}), ErrorKind::InvalidArgument);
    EXPECT_TF_ERROR(einsum("ij,jk->ik", {ab[0].value(), ab[1].value()}, be, {.budget_ms = -1.0}),
                    ErrorKind::InvalidArgument);
    EXPECT_TF_ERROR(einsum("ij,jk->ik", {ab[0].value(), ab[1].value()}, be, {.memory_limit = -1.0}),
                    ErrorKind::InvalidArgument);
  }
  // Ranks (256, 1) then (0, 257): the second call broadcasts to rank 257.
  const Tensor r256 = ones(Shape(256, 1).span(), f64), r1 = ones(Shape{1}.span(), f64);
  const Tensor r0 = ones(Shape{}.span(), f64), r257 = ones(Shape(257, 1).span(), f64);
  EXPECT_EQ(einsum("...,...->...", {r256, r1}, be).rank(), 256);
  EXPECT_EQ(einsum("...,...->...", {r0, r257}, be).rank(), 257);
}

// Item 7: only valid UTF-8 names a label.
TEST(EinsumErrors, InvalidUtf8IsRefused) {
  const auto a = ops({{3, 3}});
  for (const char* eq : {"a\xC1\xA1->a",             // overlong 'a'
                         "a\xE0\x81\xA1->a",         // overlong, three bytes
                         "a\xED\xA0\x80->a",         // a UTF-16 surrogate
                         "a\xF4\x90\x80\x80->a"}) {  // above U+10FFFF
    EXPECT_TF_ERROR(einsum(eq, a), ErrorKind::InvalidArgument);
    EXPECT_NE(message_of([&] { einsum(eq, a); }).find("UTF-8"), std::string::npos) << eq;
  }
  // Valid multi-byte labels still work: a diagonal of two distinct labels.
  EXPECT_EQ(einsum("\xCE\xB1\xCE\xB2->\xCE\xB2\xCE\xB1", a).shape(), (Shape{3, 3}));
}

// Item 3: the planner's inputs are checked, and an oversized result is
// InvalidArgument before any work.
TEST(EinsumErrors, PlannerChecksExtentsAndSizes) {
  const std::vector<std::vector<std::int64_t>> three = {{0, 1}, {1, 2}, {2, 0}};
  EXPECT_TF_ERROR(plan_contraction(three, {}, {2, std::nan(""), 3}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(plan_contraction(three, {}, {2, -3, 3}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(plan_contraction(three, {}, {2, std::numeric_limits<double>::infinity(), 3}),
                  ErrorKind::InvalidArgument);
  const std::int64_t big = std::int64_t{1} << 40;
  EXPECT_TF_ERROR(einsum_path("i,j->ij", {{big}, {big}}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(EinsumPlan::prepare("i,j->ij", f64, {{big}, {big}}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(einsum_path("ij->", {{-2, 3}}), ErrorKind::InvalidArgument);
  // A prepared plan's peak never wraps: within 2^59 elements it is positive.
  EXPECT_GT(EinsumPlan::prepare("i,j->ij", f64, {{1 << 20}, {1 << 20}}).peak_bytes, 0);
  // 2^64 result elements from four 2^16 vectors: refused before allocating.
  const Tensor v = zeros(Shape{1 << 16}.span(), f64);
  EXPECT_TF_ERROR(einsum("a,b,c,d->abcd", {v, v, v, v}, runtime()->backend()),
                  ErrorKind::InvalidArgument);
}

// Item 4: an infinite or huge budget is no limit (the search still runs).
TEST(EinsumErrors, InfiniteBudgetIsNoLimit) {
  std::vector<std::vector<std::int64_t>> chain;
  std::vector<double> ext;
  for (int i = 0; i < 40; ++i) chain.push_back({i, i + 1});
  for (int i = 0; i <= 40; ++i) ext.push_back(i % 3 == 0 ? 30 : 4);
  const EinsumPlan greedy =
      plan_contraction(chain, {0, 40}, ext, {.strategy = EinsumStrategy::Greedy});
  for (const double budget : {std::numeric_limits<double>::infinity(), 1e13, 1e300}) {
    const EinsumPlan p = plan_contraction(chain, {0, 40}, ext, {.budget_ms = budget});
    EXPECT_FALSE(p.search_cut_short) << budget;
    EXPECT_LE(p.flops, greedy.flops) << budget;
  }
}

// Item 14: errors name the function the user called.
TEST(EinsumErrors, ErrorsNameTheFunctionCalled) {
  const auto ab = ops({{2, 3}, {3, 4}});
  const auto op_of = [](auto f) {
    try {
      f();
    } catch (const Error& e) {
      return e.op();
    }
    return std::string("no error");
  };
  EXPECT_EQ(op_of([&] { einsum("ij,jk->ik", ab, {.budget_ms = -1.0}); }), "einsum");
  EXPECT_EQ(op_of([&] {
              einsum("ij,jk->ik", {ab[0].value(), ab[1].value()}, runtime()->backend(),
                     {.memory_limit = -1.0});
            }),
            "einsum");
  EXPECT_EQ(op_of([&] {
              einsum_path("ij,jk->ik", {{2, 3}, {3, 4}}, {.budget_ms = -1.0});
            }),
            "einsum_path");
  EXPECT_EQ(op_of([&] {
              EinsumPlan::prepare("ij,jk->ik", f64, {{2, 3}, {3, 4}}, {.budget_ms = -1.0});
            }),
            "EinsumPlan::prepare");
  EXPECT_EQ(op_of([&] {
              plan_contraction({{0, 1}, {1, 2}}, {}, {2, 3, 4}, {.budget_ms = -1.0});
            }),
            "plan_contraction");
}
