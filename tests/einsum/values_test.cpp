// einsum values against a naive reference loop, in the eager, traced and
// direct tiers: matmul, batched, outer, traces, diagonals, transposes,
// ellipsis (with broadcasting), implicit outputs, repeated output labels,
// extent-1 broadcasting, rank 0, zero-size, integer labels.

#include "einsum_test_util.hpp"

using namespace etest;

namespace {

struct Case {
  std::string eq;
  std::vector<std::string> terms;  // the naive reference's labels (ellipsis spelled out)
  std::string out;
  std::vector<Shape> shapes;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {"ij,jk->ik", {"ij", "jk"}, "ik", {{2, 3}, {3, 4}}},
      {"ijb,jkb->ikb", {"ijb", "jkb"}, "ikb", {{2, 3, 2}, {3, 4, 2}}},
      {"i,j->ij", {"i", "j"}, "ij", {{3}, {4}}},
      {"ii->", {"ii"}, "", {{3, 3}}},
      {"ii->i", {"ii"}, "i", {{3, 3}}},
      {"iij->ij", {"iij"}, "ij", {{3, 3, 2}}},
      {"iii->i", {"iii"}, "i", {{3, 3, 3}}},
      {"ijij->ij", {"ijij"}, "ij", {{2, 3, 2, 3}}},
      {"jii->ij", {"jii"}, "ij", {{2, 3, 3}}},
      {"ij->ji", {"ij"}, "ji", {{2, 3}}},
      {"ijk->kji", {"ijk"}, "kji", {{2, 3, 4}}},
      {"ij->", {"ij"}, "", {{2, 3}}},
      {"ij,ij->ij", {"ij", "ij"}, "ij", {{2, 3}, {2, 3}}},
      {"i,i->", {"i", "i"}, "", {{5}, {5}}},
      {"ij,jk,kl->il", {"ij", "jk", "kl"}, "il", {{2, 3}, {3, 4}, {4, 2}}},
      {"ab,bc,cd,da->", {"ab", "bc", "cd", "da"}, "", {{2, 3}, {3, 2}, {2, 4}, {4, 2}}},
      {"bn,anm,bm->ba", {"bn", "anm", "bm"}, "ba", {{2, 3}, {4, 3, 2}, {2, 2}}},
      {"abcd,dbef->acef", {"abcd", "dbef"}, "acef", {{2, 3, 2, 2}, {2, 3, 2, 3}}},
      {"ij...,jk...->ik...", {"ijXY", "jkXY"}, "ikXY", {{2, 3, 4, 2}, {3, 2, 4, 2}}},
      {"...ij,...jk->...ik", {"Xij", "Xjk"}, "Xik", {{2, 2, 3}, {2, 3, 2}}},
      // Ellipsis groups of different lengths broadcast right-aligned.
      {"ij...,jk...->ik...", {"ijY", "jkXY"}, "ikXY", {{2, 3, 4}, {3, 2, 5, 4}}},
      {"...->", {"XY"}, "", {{2, 3}}},
      {"i...->i", {"iXY"}, "i", {{2, 3, 2}}},
      // Extent-1 labels broadcast.
      {"ij,jk->ik", {"ij", "jk"}, "ik", {{2, 1}, {3, 4}}},
      {"ib,ib->ib", {"ib", "ib"}, "ib", {{3, 1}, {3, 4}}},
      {"i,i->i", {"i", "i"}, "i", {{1}, {3}}},
      {"ij,j->", {"ij", "j"}, "", {{1, 1}, {3}}},
      // Implicit outputs: labels seen once, sorted, then the ellipsis.
      {"ij,jk", {"ij", "jk"}, "ik", {{2, 3}, {3, 2}}},
      {"ba", {"ba"}, "ab", {{2, 3}}},
      {"ii", {"ii"}, "", {{3, 3}}},
      {"Ba,aA", {"Ba", "aA"}, "AB", {{2, 3}, {3, 4}}},
      {"ij...,jk...", {"ijX", "jkX"}, "ikX", {{2, 3, 2}, {3, 2, 2}}},
      // Labels repeated in the output: diagonal embedding.
      {"i->ii", {"i"}, "ii", {{3}}},
      {"ij->iji", {"ij"}, "iji", {{3, 2}}},
      {"i->iii", {"i"}, "iii", {{2}}},
      {"ij,jk->kiik", {"ij", "jk"}, "kiik", {{2, 3}, {3, 2}}},
      // Rank 0 and spaces.
      {",->", {"", ""}, "", {{}, {}}},
      {"i, ->i", {"i", ""}, "i", {{3}, {}}},
      {"->", {""}, "", {{}}},
      // Zero-size extents.
      {"ij,jk->ik", {"ij", "jk"}, "ik", {{2, 0}, {0, 3}}},
      {"ij,jk->ik", {"ij", "jk"}, "ik", {{0, 2}, {2, 3}}},
      {"ii->i", {"ii"}, "i", {{0, 0}}},
  };
  return c;
}

std::vector<std::vector<std::int64_t>> label_lists(const Case& c) {
  std::vector<std::vector<std::int64_t>> l;
  for (const auto& t : c.terms) l.push_back(letters(t));
  return l;
}

}  // namespace

TEST(EinsumValues, EveryTierMatchesTheNaiveLoop) {
  CpuBackend& cpu = dynamic_cast<CpuBackend&>(runtime()->backend());
  int checked = 0;
  for (const Case& c : cases()) {
    for (DType dt : {f64, c128, f32}) {
      std::vector<Tensor> ops;
      for (std::size_t k = 0; k < c.shapes.size(); ++k) ops.push_back(make(c.shapes[k], dt, k + 1));
      Shape want_shape;
      const auto want = naive(label_lists(c), ops, letters(c.out), &want_shape);
      const double tol = dt == f32 ? 1e-5 : 1e-12;
      const std::string what = c.eq + " " + std::string(name(dt));
      const EagerTensor e = run_eager(c.eq, ops);
      EXPECT_EQ(e.dtype(), dt) << what;
      EXPECT_EQ(e.shape(), want_shape) << what;
      expect_close(host(e), want, tol, what + " eager");
      const Tensor t = run_traced(c.eq, ops);
      EXPECT_EQ(t.shape(), want_shape) << what;
      expect_close(host(t), want, tol, what + " traced");
      const Tensor d = einsum(c.eq, ops, cpu);
      EXPECT_EQ(d.shape(), want_shape) << what;
      expect_close(host(d), want, tol, what + " direct");
      ++checked;
    }
  }
  EXPECT_EQ(checked, static_cast<int>(3 * cases().size()));
}

TEST(EinsumValues, StrategiesAndUserPathsAgree) {
  const std::vector<Tensor> ops = {make({2, 3}, f64, 1), make({3, 4}, f64, 2), make({4, 2}, f64, 3),
                                   make({2, 5}, f64, 4)};
  const auto want =
      naive({letters("ab"), letters("bc"), letters("cd"), letters("de")}, ops, letters("ae"));
  const std::string eq = "ab,bc,cd,de->ae";
  for (EinsumStrategy s : {EinsumStrategy::Auto, EinsumStrategy::Optimal, EinsumStrategy::Greedy}) {
    expect_close(host(run_eager(eq, ops, {.strategy = s})), want, 1e-12, "strategy");
  }
  for (const EinsumPath& p :
       {EinsumPath{{0, 1}, {0, 1}, {0, 1}}, EinsumPath{{2, 3}, {1, 2}, {0, 1}},
        EinsumPath{{0, 3}, {0, 1}, {0, 1}}}) {
    expect_close(host(run_eager(eq, ops, {.path = p})), want, 1e-12, "user path");
    expect_close(host(run_traced(eq, ops, {.path = p})), want, 1e-12, "user path traced");
  }
}

TEST(EinsumValues, DirectIdentityReturnsAFreshTensor) {
  CpuBackend& cpu = dynamic_cast<CpuBackend&>(runtime()->backend());
  const Tensor a = make({2, 3}, f64, 1);
  const Tensor r = einsum("ij->ij", {a}, cpu);
  EXPECT_NE(r.storage(), a.storage());
  expect_close(host(r), host(a), 0.0, "identity");
}

TEST(EinsumValues, IntegerDtype) {
  const Tensor a = Tensor::from_col_major({2, 2}, std::vector<std::int64_t>{1, 2, 3, 4});
  const Tensor b = Tensor::from_col_major({2, 2}, std::vector<std::int64_t>{5, 6, 7, 8});
  const EagerTensor c = run_eager("ij,jk->ik", {a, b});
  EXPECT_EQ(c.dtype(), i64);
  // [1 3; 2 4] [5 7; 6 8] = [23 31; 34 46], column-major.
  EXPECT_EQ(c.value().to_vector<std::int64_t>(), (std::vector<std::int64_t>{23, 34, 31, 46}));
  EXPECT_EQ(run_eager("ii->", {a}).value().to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{5}));
}

TEST(EinsumValues, UnicodeLabels) {
  const std::vector<Tensor> ops = {make({2, 3}, f64, 1), make({3, 4}, f64, 2)};
  const auto want = naive({letters("ij"), letters("jk")}, ops, letters("ik"));
  expect_close(host(run_eager("αβ,βγ->αγ", ops)), want, 1e-12, "greek labels");
}

TEST(EinsumValues, IntegerLabelsWithSixtyTwoLabels) {
  // A chain of 61 matrices with 62 distinct labels (more than the letters):
  // operand k is [2, 2] with labels (k, k + 1); the result is the product.
  const std::int64_t n = 61;
  EinsumLabels labels;
  std::vector<Tensor> ops;
  std::vector<EagerTensor> eager;
  for (std::int64_t k = 0; k < n; ++k) {
    labels.inputs.push_back({k, k + 1});
    ops.push_back(make({2, 2}, f64, static_cast<std::uint64_t>(k) + 1));
    eager.push_back(runtime()->tensor(ops.back()));
  }
  labels.output = std::vector<std::int64_t>{0, n};
  // Reference: sequential naive 2x2 products (column-major a(i, j) = v[i + 2j]).
  std::vector<double> acc = {1, 0, 0, 1};
  for (const Tensor& t : ops) {
    const auto m = t.to_vector<double>();
    std::vector<double> r(4, 0.0);
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 2; ++j) {
        for (int q = 0; q < 2; ++q) r[i + 2 * j] += acc[i + 2 * q] * m[q + 2 * j];
      }
    }
    acc = r;
  }
  const std::vector<cd> want(acc.begin(), acc.end());
  expect_close(host(einsum(labels, eager)), want, 1e-10, "chain of 61");
  CpuBackend& cpu = dynamic_cast<CpuBackend&>(runtime()->backend());
  expect_close(host(einsum(labels, ops, cpu)), want, 1e-10, "chain of 61, direct");
  // The implicit integer form: labels 0 and 61 appear once.
  labels.output.reset();
  expect_close(host(einsum(labels, eager)), want, 1e-10, "implicit integer output");
  const EinsumPlan plan = einsum_path(labels, std::vector<Shape>(n, Shape{2, 2}));
  EXPECT_EQ(plan.path.size(), static_cast<std::size_t>(n - 1));
  EXPECT_LE(plan.largest_intermediate, 4.0);  // greedy keeps the chain 2 x 2
}

TEST(EinsumValues, IntegerLabelsNegativeAndRepeated) {
  const std::vector<Tensor> ops = {make({3, 3, 2}, c128, 1), make({2, 4}, c128, 2)};
  const EinsumLabels labels{{{-5, -5, 100}, {100, 7}}, std::vector<std::int64_t>{7, -5, 7}};
  const auto want = naive({{-5, -5, 100}, {100, 7}}, ops, {7, -5, 7});
  std::vector<EagerTensor> e;
  for (const Tensor& t : ops) e.push_back(runtime()->tensor(t));
  expect_close(host(einsum(labels, e)), want, 1e-12, "integer labels");
}

TEST(EinsumValues, TracedWithSymbolicExtents) {
  // One program for every n: one einsum node, planned when n binds.
  const TracedTensor a = placeholder(f64, {SymDim::var("n"), 3});
  const TracedTensor b = placeholder(f64, {3, SymDim::var("n")});
  const TracedTensor y = einsum("ij,jk,kl->il", {a, b, a});
  const Program p = compile({y}, {a, b});
  int checked = 0;
  for (std::int64_t n : {2, 4}) {
    const std::vector<Tensor> ops = {make({n, 3}, f64, 1), make({3, n}, f64, 2)};
    const auto want = naive({letters("ij"), letters("jk"), letters("kl")}, {ops[0], ops[1], ops[0]},
                            letters("il"));
    const auto got = run_compiled(*runtime()->runtime(), p, std::span<const Tensor>(ops));
    expect_close(host(got[0]), want, 1e-12, "n = " + std::to_string(n));
    ++checked;
  }
  EXPECT_EQ(checked, 2);
}
