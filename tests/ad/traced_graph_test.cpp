// Traced graphs: builders, build-time inference, extension apply, compile
// (CSE, dead code, view folding) and fingerprints.

#include "ad/traced_fixtures.hpp"

using namespace ttest;

TEST(TracedGraph, BuildersInferMetadata) {
  auto x = placeholder(f64, {n_dim(), 3}, "x");
  auto b = placeholder(f64, {3});
  EXPECT_TRUE(x.is_placeholder());
  EXPECT_EQ(x.rank(), 2);
  auto y = x * b + 1.0;  // broadcasting over the leading axis
  EXPECT_EQ(y.dtype(), f64);
  EXPECT_EQ(y.shape(), (SymShape{n_dim(), 3}));
  EXPECT_FALSE(y.is_placeholder());
  EXPECT_EQ(y.op()->name(), "add");
  auto s = sum(y, {1});
  EXPECT_EQ(s.shape(), (SymShape{n_dim()}));
  EXPECT_EQ(sum(y).rank(), 0);
  auto w = placeholder(f64, {3, 4});
  EXPECT_EQ(matmul(x, w).shape(), (SymShape{n_dim(), 4}));
  EXPECT_EQ(transpose(x).shape(), (SymShape{3, n_dim()}));
  EXPECT_EQ(reshape(x, {3, n_dim()}).shape(), (SymShape{3, n_dim()}));
  EXPECT_EQ(convert(placeholder(f32, {2}), c128).dtype(), c128);
  EXPECT_EQ(abs(placeholder(c128, {2})).dtype(), f64);
  EXPECT_EQ(lt(x, x).dtype(), bool_);
  auto z = placeholder(i64, {2});
  EXPECT_EQ((z * 2.0).dtype(), f64);  // a real scalar with an integer tensor promotes
  EXPECT_EQ(traced_full({n_dim()}, 1.0, f32).shape(), (SymShape{n_dim()}));
  auto c = constant(Tensor::from_col_major<double>({2}, {1, 2}));
  EXPECT_EQ(c.shape(), (SymShape{2}));
  const TracedTensor parts[2] = {c, c};
  EXPECT_EQ(concatenate(parts, 0).shape(), (SymShape{4}));
}

TEST(TracedGraph, BuildTimeErrorsAreTyped) {
  auto x = placeholder(f64, {2, 3});
  EXPECT_TF_ERROR(x + placeholder(f64, {4}), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(sum(x, {2}), ErrorKind::AxisOutOfBounds);
  EXPECT_TF_ERROR(erf(placeholder(c128, {2})), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(matmul(x, x), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(exp(TracedTensor()), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(placeholder(f64, {-1}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(TracedTensor().meta(), ErrorKind::InvalidArgument);
}

TEST(TracedGraph, ExtensionApplyChecksCountsAndInfers) {
  auto a = placeholder(f64, {n_dim()});
  auto b = placeholder(f64, {m_dim()});
  auto swap = std::make_shared<example::Swap>();
  auto out = extension::apply(swap, {a, b});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), (SymShape{m_dim()}));
  EXPECT_EQ(out[1].shape(), (SymShape{n_dim()}));
  // The symbolic same-shape requirement is kept as a constraint for binding.
  EXPECT_EQ(out[0].node()->constraints.size(), 1u);
  EXPECT_TF_ERROR(extension::apply(swap, {a}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(extension::apply(swap, {a, placeholder(f32, {2})}), ErrorKind::DTypeMismatch);
  auto scale = std::make_shared<example::ScaleBy>(2.0);
  EXPECT_EQ(extension::apply(scale, {a})[0].shape(), (SymShape{n_dim()}));
  EXPECT_TF_ERROR(extension::apply(scale, {placeholder(i64, {2})}), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(extension::apply(nullptr, {a}), ErrorKind::InvalidArgument);
}

TEST(TracedGraph, CompileMergesCommonSubexpressionsAndDropsDeadCode) {
  auto x = placeholder(f64, {n_dim()});
  auto y = placeholder(f64, {n_dim()});
  auto a = x * y;
  auto b = x * y;        // same op, same inputs
  auto unused = exp(a);  // not an output
  (void)unused;
  auto out = a + b;
  Program p = compile({out}, {x, y});
  EXPECT_EQ(p.count_ops("mul"), 1u);
  EXPECT_EQ(p.count_ops("add"), 1u);
  EXPECT_EQ(p.count_ops("exp"), 0u);
  EXPECT_EQ(p.node_count(), 2u);
  EXPECT_EQ(p.input_count(), 2u);
  EXPECT_EQ(p.output_count(), 1u);
  EXPECT_NE(p.to_string().find("mul"), std::string::npos);
  Program q = compile({out}, {x, y}, CompileOptions{false, true});
  EXPECT_EQ(q.count_ops("mul"), 2u);
  // Equal fills merge too (they hold parameters, not data).
  auto f = full_like(x, 2.0) + full_like(x, 2.0);
  EXPECT_EQ(compile({f}, {x}).count_ops("full"), 1u);
}

TEST(TracedGraph, CompileFoldsViews) {
  auto x = placeholder(f64, {2, 3, 4});
  auto r = reshape(reshape(x, {6, 4}), {24});
  Program p = compile({r}, {x});
  EXPECT_EQ(p.count_ops("reshape"), 1u);
  EXPECT_EQ(p.output_meta(0).shape, (SymShape{24}));
  auto back = reshape(reshape(x, {24}), {2, 3, 4});
  EXPECT_EQ(compile({back}, {x}).node_count(), 0u);  // the output is the input
  auto tt = permute(permute(x, {1, 2, 0}), {2, 0, 1});
  EXPECT_EQ(compile({tt}, {x}).count_ops("transpose"), 0u);
  auto t2 = permute(permute(x, {1, 0, 2}), {0, 2, 1});
  Program q = compile({t2}, {x});
  EXPECT_EQ(q.count_ops("transpose"), 1u);
  EXPECT_EQ(q.output_meta(0).shape, (SymShape{3, 4, 2}));
  Program no_fold = compile({r}, {x}, CompileOptions{true, false});
  EXPECT_EQ(no_fold.count_ops("reshape"), 2u);
}

TEST(TracedGraph, CompileSimplifiesExactAlgebra) {
  auto rt = cpu_runtime();
  auto z = placeholder(c128, {3});
  EXPECT_EQ(compile({conj(conj(z)) * z}, {z}).count_ops("conj"), 0u);

  auto x = placeholder(f64, {n_dim(), 3});
  auto one = broadcast_to(scalar_like(x, 1.0), {n_dim(), 3});
  auto y = exp(x) * one + traced_full({3}, 1.0, f64) * x + conj(x);
  Program q = compile({y}, {x});
  EXPECT_EQ(q.count_ops("mul"), 0u);
  EXPECT_EQ(q.count_ops("conj"), 0u);
  CompileOptions off;
  off.simplify_algebra = false;
  Program r = compile({y}, {x}, off);
  EXPECT_EQ(r.count_ops("mul"), 2u);
  EXPECT_EQ(r.count_ops("conj"), 1u);
  const Tensor xv = random({2, 3}, f64, 5);
  EXPECT_TRUE(close(eval(*rt, q, {xv})[0], eval(*rt, r, {xv})[0], 0.0));

  // Kept: a product that promotes, one that broadcasts x larger, complex products.
  auto s = placeholder(f32, {3});
  EXPECT_EQ(compile({s * traced_full({3}, 1.0, f64)}, {s}).count_ops("mul"), 1u);
  auto v = placeholder(f64, {3});
  EXPECT_EQ(compile({v * traced_full({2, 3}, 1.0, f64)}, {v}).count_ops("mul"), 1u);
  EXPECT_EQ(compile({z * traced_full({3}, 1.0, c128)}, {z}).count_ops("mul"), 1u);
  EXPECT_EQ(compile({v * traced_full({3}, 2.0, f64)}, {v}).count_ops("mul"), 1u);
}

TEST(TracedGraph, FingerprintIsStructural) {
  auto build = [](double k, Tensor c) {
    auto x = placeholder(f64, {n_dim()});
    return compile({sum(exp(x) * k + constant(c))}, {x});
  };
  Tensor c1 = Tensor::from_col_major<double>({1}, {1.0});
  Tensor c2 = Tensor::from_col_major<double>({1}, {5.0});
  Tensor c3 = Tensor::from_col_major<double>({2}, {1.0, 2.0});
  const Program a = build(2.0, c1);
  EXPECT_EQ(a.fingerprint(), build(2.0, c1).fingerprint());
  EXPECT_EQ(a.fingerprint(), build(2.0, c2).fingerprint());  // constant values excluded
  EXPECT_NE(a.fingerprint(), build(3.0, c1).fingerprint());  // parameters included
  EXPECT_NE(a.fingerprint(), build(2.0, c3).fingerprint());  // constant shapes included
  EXPECT_EQ(a.constants().size(), 1u);
  auto x = placeholder(f64, {n_dim()});
  EXPECT_NE(compile({exp(x)}, {x}).fingerprint(), compile({sin(x)}, {x}).fingerprint());
}

TEST(TracedGraph, CompileErrors) {
  auto x = placeholder(f64, {2});
  auto y = placeholder(f64, {2}, "y");
  try {
    compile({x + y}, {x});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("'y'"), std::string::npos);
  }
  EXPECT_TF_ERROR(compile({x}, {exp(x)}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(compile({x}, {x, x}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(compile({TracedTensor()}, {x}), ErrorKind::InvalidArgument);
}

TEST(TracedGraph, ProgramCallInlines) {
  auto x = placeholder(f64, {3});
  Program p = compile({x * constant(Tensor::from_col_major<double>({3}, {1, 2, 3}))}, {x});
  auto z = placeholder(f64, {3});
  auto inlined = p.call(std::vector<TracedTensor>{z})[0] + z;
  Program q = compile({inlined}, {z});
  EXPECT_EQ(q.count_ops("mul"), 1u);
  EXPECT_EQ(q.constants().size(), 1u);
  EXPECT_TF_ERROR(p.call(std::vector<TracedTensor>{}), ErrorKind::InvalidArgument);
}
