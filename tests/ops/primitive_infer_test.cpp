// Core primitives without kernels: names, counts, equality, hashes,
// descriptions and symbolic shape/dtype inference with its errors.

#include <cmath>
#include <limits>
#include <unordered_set>

#include "tenferro/ops/extension_op.hpp"
#include "tenferro/ops/primitives.hpp"
#include "test_util.hpp"

using namespace tenferro;

namespace {

const SymDim n = SymDim::var("n");
const SymDim m = SymDim::var("m");
const SymDim k = SymDim::var("k");

TensorMeta meta(DType dtype, SymShape shape) {
  return {dtype, std::move(shape)};
}

InferenceResult infer(const prim::Params& p, const std::vector<TensorMeta>& in) {
  return PrimitiveOp(p).infer(in);
}

// The single output of an inference without constraints.
TensorMeta infer1(const prim::Params& p, const std::vector<TensorMeta>& in) {
  InferenceResult r = infer(p, in);
  EXPECT_EQ(r.outputs.size(), 1u);
  EXPECT_TRUE(r.constraints.empty()) << "unexpected constraint: " << r.constraints[0].what;
  return r.outputs.at(0);
}

// Asserts the error kind and that the error names the primitive.
void expect_error(const prim::Params& p, const std::vector<TensorMeta>& in, ErrorKind kind) {
  const PrimitiveOp op(p);
  EXPECT_TF_ERROR(op.infer(in), kind);
  try {
    (void)op.infer(in);
  } catch (const Error& e) {
    EXPECT_EQ(e.op(), op.name()) << e.what();
  }
}

class Dummy final : public ExtensionOpWithParams<Dummy, NoParams> {
 public:
  Dummy() : ExtensionOpWithParams("test.dummy.v1", {}) {}
  std::size_t input_count() const override { return 1; }
  std::size_t output_count() const override { return 1; }
  InferenceResult infer(std::span<const TensorMeta> in) const override { return {{in[0]}, {}}; }
};

}  // namespace

TEST(PrimitiveIdentity, NamesAndCounts) {
  struct Case {
    prim::Params p;
    std::string_view name;
    std::size_t count;
  };
  const std::vector<Case> cases{
      {prim::Unary{UnaryOp::Exp}, "exp", 1},
      {prim::Unary{UnaryOp::LogicalNot}, "logical_not", 1},
      {prim::Binary{BinaryOp::Add}, "add", 2},
      {prim::Binary{BinaryOp::LogicalOr}, "logical_or", 2},
      {prim::Select{}, "select", 3},
      {prim::Clamp{}, "clamp", 1},
      {prim::Reduce{ReduceOp::Sum, {}}, "sum", 1},
      {prim::Reduce{ReduceOp::LogSumExp, {}}, "logsumexp", 1},
      {prim::Variance{}, "var", 1},
      {prim::Variance{{}, 1.0, false, true}, "std", 1},
      {prim::ArgReduce{}, "argmax", 1},
      {prim::ArgReduce{false, 0, false}, "argmin", 1},
      {prim::Cumulative{ReduceOp::Sum, 0, false}, "cumsum", 1},
      {prim::Cumulative{ReduceOp::Prod, 0, true}, "cumprod", 1},
      {prim::Argsort{0, false, -1}, "argsort", 1},
      {prim::Argsort{0, true, 2}, "topk", 1},
      {prim::DotGeneral{}, "dot_general", 2},
      {prim::Transpose{}, "transpose", 1},
      {prim::Reshape{}, "reshape", 1},
      {prim::BroadcastInDim{}, "broadcast_in_dim", 1},
      {prim::Slice{}, "slice", 1},
      {prim::Pad{}, "pad", 1},
      {prim::Concatenate{0, 3}, "concatenate", 3},
      {prim::Reverse{}, "reverse", 1},
      {prim::IndexSelect{}, "index_select", 2},
      {prim::TakeAlongAxis{}, "take_along_axis", 2},
      {prim::ScatterAdd{}, "scatter_add", 3},
      {prim::Diagonal{}, "diagonal", 1},
      {prim::DiagEmbed{}, "diag_embed", 1},
      {prim::Triangle{true, 0}, "tril", 1},
      {prim::Triangle{false, 0}, "triu", 1},
      {prim::Convert{}, "convert", 1},
      {prim::Convert{DType::I32, true}, "cast", 1},
      {prim::Full{}, "full", 0},
      {prim::Constant{}, "constant", 0},
  };
  for (const Case& c : cases) {
    auto op = make_primitive(c.p);
    EXPECT_EQ(op->name(), c.name);
    EXPECT_EQ(op->input_count(), c.count) << c.name;
    EXPECT_EQ(op->output_count(), 1u);
    EXPECT_FALSE(op->is_extension());
  }
}

TEST(PrimitiveIdentity, EqualityAndHash) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Each pair differs in one field.
  const std::vector<std::pair<prim::Params, prim::Params>> differing{
      {prim::Unary{UnaryOp::Exp}, prim::Unary{UnaryOp::Log}},
      {prim::Unary{UnaryOp::Abs}, prim::Binary{BinaryOp::Add}},
      {prim::Clamp{Scalar(0.0), std::nullopt}, prim::Clamp{std::nullopt, Scalar(0.0)}},
      {prim::Clamp{Scalar(1.0), {}}, prim::Clamp{Scalar(std::int64_t{1}), {}}},
      {prim::Reduce{ReduceOp::Sum, {0, 1}}, prim::Reduce{ReduceOp::Sum, {1, 0}}},
      {prim::Reduce{ReduceOp::Sum, {0}, false}, prim::Reduce{ReduceOp::Sum, {0}, true}},
      {prim::Variance{{0}, 1.0}, prim::Variance{{0}, 0.0}},
      {prim::ArgReduce{true, 0}, prim::ArgReduce{true, 1}},
      {prim::Cumulative{ReduceOp::Sum, 0, false}, prim::Cumulative{ReduceOp::Sum, 0, true}},
      {prim::Cumulative{ReduceOp::Sum, 0, false}, prim::Cumulative{ReduceOp::Prod, 0, false}},
      {prim::Argsort{0, false, -1}, prim::Argsort{0, true, -1}},
      {prim::Argsort{0, false, 2}, prim::Argsort{0, false, 3}},
      {prim::DotGeneral{{{1}, {0}, {}, {}}}, prim::DotGeneral{{{1}, {0}, {}, {2}}}},
      {prim::DotGeneral{{{1}, {0}, {2}, {2}}}, prim::DotGeneral{{{1}, {0}, {2}, {1}}}},
      {prim::Reshape{{n, 2}}, prim::Reshape{{m, 2}}},
      {prim::BroadcastInDim{{2, 3}, {0}}, prim::BroadcastInDim{{2, 3}, {1}}},
      {prim::Slice{{0}, {2}, {1}}, prim::Slice{{0}, {2}, {2}}},
      {prim::Pad{{1}, {1}, {0}, Scalar(0.0)}, prim::Pad{{1}, {1}, {0}, Scalar(-0.0)}},
      {prim::Concatenate{0, 2}, prim::Concatenate{0, 3}},
      {prim::Diagonal{0, 0, 1}, prim::Diagonal{0, 1, 0}},
      {prim::Triangle{true, 1}, prim::Triangle{false, 1}},
      {prim::Convert{DType::F64, false}, prim::Convert{DType::F64, true}},
      {prim::Full{{n}, Scalar(1.0), DType::F64}, prim::Full{{n}, Scalar(1.0), DType::F32}},
      {prim::Full{{n}, Scalar(1.0), DType::F64}, prim::Full{{n}, Scalar(2.0), DType::F64}},
  };
  for (const auto& [a, b] : differing) {
    const PrimitiveOp x(a), y(b);
    EXPECT_FALSE(x.equals(y)) << x.describe() << " vs " << y.describe();
    EXPECT_FALSE(y.equals(x));
    EXPECT_NE(x.hash(), y.hash()) << x.describe() << " vs " << y.describe();
    EXPECT_TRUE(x.equals(PrimitiveOp(a)));
    EXPECT_EQ(x.hash(), PrimitiveOp(a).hash());
  }
  // Equal parameters built separately, including NaN scalars and symbolic shapes.
  const PrimitiveOp c1(prim::Clamp{Scalar(nan), Scalar(2.0)}),
      c2(prim::Clamp{Scalar(nan), Scalar(2.0)});
  EXPECT_TRUE(c1.equals(c2));
  EXPECT_EQ(c1.hash(), c2.hash());
  const PrimitiveOp r1(prim::Reshape{{SymDim::var("n") * 2}}), r2(prim::Reshape{{n * 2}});
  EXPECT_TRUE(r1.equals(r2));
  EXPECT_EQ(r1.hash(), r2.hash());
  const PrimitiveOp v1(prim::Variance{{0}, 0.0}), v2(prim::Variance{{0}, -0.0});
  EXPECT_TRUE(v1.equals(v2));
  EXPECT_EQ(v1.hash(), v2.hash());

  Dummy dummy;
  EXPECT_FALSE(PrimitiveOp(prim::Unary{UnaryOp::Abs}).equals(dummy));

  std::unordered_set<OpPtr, OpPtrHash, OpPtrEqual> set;
  set.insert(make_primitive(prim::Binary{BinaryOp::Add}));
  set.insert(make_primitive(prim::Binary{BinaryOp::Add}));
  set.insert(make_primitive(prim::Binary{BinaryOp::Mul}));
  set.insert(make_primitive(prim::Reduce{ReduceOp::Sum, {0}}));
  set.insert(make_primitive(prim::Reduce{ReduceOp::Sum, {0}}));
  EXPECT_EQ(set.size(), 3u);
}

TEST(PrimitiveIdentity, SharedElementwisePrimitives) {
  // One instance per op, equal to a freshly made primitive of the same op.
  for (int i = 0; i < kUnaryOpCount; ++i) {
    const auto op = static_cast<UnaryOp>(i);
    const OpPtr& shared = elementwise_primitive(op);
    EXPECT_EQ(shared.get(), elementwise_primitive(op).get());
    EXPECT_TRUE(shared->equals(*make_primitive(prim::Unary{op}))) << name(op);
  }
  for (int i = 0; i < kBinaryOpCount; ++i) {
    const auto op = static_cast<BinaryOp>(i);
    const OpPtr& shared = elementwise_primitive(op);
    EXPECT_EQ(shared.get(), elementwise_primitive(op).get());
    EXPECT_TRUE(shared->equals(*make_primitive(prim::Binary{op}))) << name(op);
  }
  EXPECT_NE(elementwise_primitive(UnaryOp::Exp).get(), elementwise_primitive(UnaryOp::Log).get());
}

TEST(PrimitiveIdentity, ConstantIsIdentityOfTheTensor) {
  const Tensor t = zeros({2, 3});
  const Tensor same = t;
  const PrimitiveOp a(prim::Constant{t});
  EXPECT_TRUE(a.equals(PrimitiveOp(prim::Constant{same})));
  EXPECT_EQ(a.hash(), PrimitiveOp(prim::Constant{same}).hash());
  EXPECT_FALSE(a.equals(PrimitiveOp(prim::Constant{t.clone()})));
  EXPECT_FALSE(a.equals(PrimitiveOp(prim::Constant{t.slice(0, 1, 2)})));  // other offset
  EXPECT_FALSE(a.equals(PrimitiveOp(prim::Constant{t.transpose()})));     // other strides
  EXPECT_FALSE(a.equals(PrimitiveOp(prim::Constant{t.reshape({3, 2})})));
}

TEST(PrimitiveIdentity, Describe) {
  EXPECT_EQ(PrimitiveOp(prim::Binary{BinaryOp::Add}).describe(), "add");
  EXPECT_EQ(PrimitiveOp(prim::Reduce{ReduceOp::Sum, {0, 1}}).describe(),
            "sum(axes=[0, 1], keepdim=false)");
  EXPECT_EQ(PrimitiveOp(prim::Reshape{{n, 3}}).describe(), "reshape(shape=[n, 3])");
  EXPECT_EQ(PrimitiveOp(prim::Convert{DType::I32, true}).describe(), "cast(dtype=i32)");
  EXPECT_EQ(PrimitiveOp(prim::Clamp{Scalar(std::int64_t{2}), std::nullopt}).describe(),
            "clamp(lo=2:i64, hi=none)");
  EXPECT_EQ(PrimitiveOp(prim::DotGeneral{{{1}, {0}, {}, {}}}).describe(),
            "dot_general(lhs_contracting=[1], rhs_contracting=[0], lhs_batch=[], rhs_batch=[])");
}

TEST(PrimitiveInfer, WrongInputCount) {
  expect_error(prim::Binary{BinaryOp::Add}, {meta(f64, {2})}, ErrorKind::InvalidArgument);
  expect_error(prim::Unary{UnaryOp::Exp}, {}, ErrorKind::InvalidArgument);
  expect_error(prim::Full{{2}, Scalar(1.0)}, {meta(f64, {2})}, ErrorKind::InvalidArgument);
  expect_error(prim::Concatenate{0, 2}, {meta(f64, {2})}, ErrorKind::InvalidArgument);
  expect_error(prim::Concatenate{0, 0}, {}, ErrorKind::InvalidArgument);
}

TEST(PrimitiveInfer, UnaryDtypes) {
  auto dt = [](UnaryOp op, DType x) { return infer1(prim::Unary{op}, {meta(x, {2, n})}).dtype; };
  EXPECT_EQ(dt(UnaryOp::Exp, i64), f64);
  EXPECT_EQ(dt(UnaryOp::Exp, f32), f32);
  EXPECT_EQ(dt(UnaryOp::Sqrt, bool_), f64);
  EXPECT_EQ(dt(UnaryOp::Abs, c128), f64);
  EXPECT_EQ(dt(UnaryOp::Abs, i32), i32);
  EXPECT_EQ(dt(UnaryOp::Real, c64), f32);
  EXPECT_EQ(dt(UnaryOp::Angle, i32), f64);
  EXPECT_EQ(dt(UnaryOp::Floor, i64), i64);
  EXPECT_EQ(dt(UnaryOp::Sgn, c128), c128);
  EXPECT_EQ(dt(UnaryOp::IsNan, c64), bool_);
  EXPECT_EQ(dt(UnaryOp::LogicalNot, f64), bool_);
  EXPECT_EQ(dt(UnaryOp::Neg, i32), i32);
  EXPECT_EQ(infer1(prim::Unary{UnaryOp::Exp}, {meta(f64, {2, n})}).shape, (SymShape{2, n}));
  for (UnaryOp op : {UnaryOp::Floor, UnaryOp::Ceil, UnaryOp::Round, UnaryOp::Trunc, UnaryOp::Sign,
                     UnaryOp::Erf, UnaryOp::Erfc}) {
    expect_error(prim::Unary{op}, {meta(c128, {2})}, ErrorKind::DTypeMismatch);
  }
  expect_error(prim::Unary{UnaryOp::Neg}, {meta(bool_, {2})}, ErrorKind::DTypeMismatch);
}

TEST(PrimitiveInfer, BinaryDtypes) {
  auto dt = [](BinaryOp op, DType a, DType b) {
    return infer1(prim::Binary{op}, {meta(a, {3}), meta(b, {3})}).dtype;
  };
  EXPECT_EQ(dt(BinaryOp::Add, i32, f32), f32);
  EXPECT_EQ(dt(BinaryOp::Add, f32, c128), c128);
  EXPECT_EQ(dt(BinaryOp::Mul, bool_, bool_), bool_);
  EXPECT_EQ(dt(BinaryOp::Div, i64, i64), f64);
  EXPECT_EQ(dt(BinaryOp::Eq, c128, c128), bool_);
  EXPECT_EQ(dt(BinaryOp::Lt, i64, f64), bool_);
  EXPECT_EQ(dt(BinaryOp::LogicalAnd, f64, i64), bool_);
  EXPECT_EQ(dt(BinaryOp::Atan2, i64, i32), f64);
  EXPECT_EQ(dt(BinaryOp::Maximum, i64, f32), f32);
  EXPECT_EQ(dt(BinaryOp::Remainder, i32, i64), i64);
  const std::vector<std::tuple<BinaryOp, DType, DType>> rejected{
      {BinaryOp::Lt, c128, f64},     {BinaryOp::Maximum, c64, c64}, {BinaryOp::Sub, bool_, bool_},
      {BinaryOp::Pow, bool_, bool_}, {BinaryOp::Hypot, c128, f64},  {BinaryOp::Fmod, bool_, bool_},
      {BinaryOp::Fmod, c64, f32}};
  for (const auto& [op, a, b] : rejected) {
    expect_error(prim::Binary{op}, {meta(a, {3}), meta(b, {3})}, ErrorKind::DTypeMismatch);
  }
}

TEST(PrimitiveInfer, SymbolicBroadcasting) {
  const prim::Binary add{BinaryOp::Add};
  EXPECT_EQ(infer1(add, {meta(f64, {n, 1}), meta(f64, {1, m})}).shape, (SymShape{n, m}));
  EXPECT_EQ(infer1(add, {meta(f64, {n}), meta(f64, {n})}).shape, (SymShape{n}));
  EXPECT_EQ(infer1(add, {meta(f64, {2, 3}), meta(f64, {3})}).shape, (SymShape{2, 3}));
  EXPECT_EQ(infer1(add, {meta(f64, {}), meta(f64, {n, 4})}).shape, (SymShape{n, 4}));
  expect_error(add, {meta(f64, {3}), meta(f64, {4})}, ErrorKind::ShapeMismatch);

  // Undecidable pairs give a constraint and prefer a constant extent.
  InferenceResult r = infer(add, {meta(f64, {n, 2}), meta(f64, {3, 2})});
  EXPECT_EQ(r.outputs[0].shape, (SymShape{3, 2}));
  ASSERT_EQ(r.constraints.size(), 1u);
  EXPECT_NO_THROW(check_constraints("add", r.constraints, {}, {{"n", 3}}));
  EXPECT_TF_ERROR(check_constraints("add", r.constraints, {}, {{"n", 4}}),
                  ErrorKind::ShapeMismatch);
  r = infer(add, {meta(f64, {n}), meta(f64, {m})});
  EXPECT_EQ(r.outputs[0].shape.size(), 1u);
  ASSERT_EQ(r.constraints.size(), 1u);
  EXPECT_NO_THROW(check_constraints("add", r.constraints, {}, {{"n", 5}, {"m", 5}}));
  EXPECT_TF_ERROR(check_constraints("add", r.constraints, {}, {{"n", 5}, {"m", 6}}),
                  ErrorKind::ShapeMismatch);
}

TEST(PrimitiveInfer, SelectAndClamp) {
  const TensorMeta out =
      infer1(prim::Select{}, {meta(bool_, {n, 1}), meta(i32, {1, m}), meta(f32, {})});
  EXPECT_EQ(out.dtype, f32);
  EXPECT_EQ(out.shape, (SymShape{n, m}));
  expect_error(prim::Select{}, {meta(f64, {2}), meta(f64, {2}), meta(f64, {2})},
               ErrorKind::DTypeMismatch);
  expect_error(prim::Select{}, {meta(bool_, {2}), meta(f64, {3}), meta(f64, {2})},
               ErrorKind::ShapeMismatch);

  const prim::Clamp clamp{Scalar(0.0), Scalar(1.0)};
  EXPECT_EQ(infer1(clamp, {meta(i64, {n})}).dtype, i64);
  expect_error(clamp, {meta(bool_, {2})}, ErrorKind::DTypeMismatch);
  expect_error(clamp, {meta(c128, {2})}, ErrorKind::DTypeMismatch);
  expect_error(prim::Clamp{Scalar(c128_t(1, 1)), {}}, {meta(f64, {2})}, ErrorKind::DTypeMismatch);
}

TEST(PrimitiveInfer, Reductions) {
  const std::vector<TensorMeta> x{meta(i32, {n, m, 4})};
  EXPECT_EQ(infer1(prim::Reduce{ReduceOp::Sum, {0}}, x).shape, (SymShape{m, 4}));
  EXPECT_EQ(infer1(prim::Reduce{ReduceOp::Sum, {0}}, x).dtype, i64);
  EXPECT_EQ(infer1(prim::Reduce{ReduceOp::Prod, {-1}, true}, x).shape, (SymShape{n, m, 1}));
  EXPECT_EQ(infer1(prim::Reduce{ReduceOp::Mean, {0, 2}}, x).dtype, f64);
  EXPECT_EQ(infer1(prim::Reduce{ReduceOp::Max, {1}}, x).dtype, i32);
  EXPECT_EQ(infer1(prim::Reduce{ReduceOp::Any, {}}, x).shape, (SymShape{n, m, 4}));
  EXPECT_EQ(infer1(prim::Reduce{ReduceOp::All, {0, 1, 2}}, x).dtype, bool_);
  EXPECT_EQ(infer1(prim::Reduce{ReduceOp::LogSumExp, {0}}, {meta(f32, {2})}).dtype, f32);
  EXPECT_EQ(infer1(prim::Reduce{ReduceOp::LogSumExp, {0}}, {meta(i32, {2})}).dtype, f64);
  expect_error(prim::Reduce{ReduceOp::LogSumExp, {0}}, {meta(c64, {2})}, ErrorKind::DTypeMismatch);
  EXPECT_EQ(infer1(prim::Reduce{ReduceOp::Sum, {0}}, {meta(c64, {2})}).dtype, c64);
  expect_error(prim::Reduce{ReduceOp::Sum, {0, -3}}, x, ErrorKind::DuplicateAxis);
  expect_error(prim::Reduce{ReduceOp::Sum, {3}}, x, ErrorKind::AxisOutOfBounds);
  expect_error(prim::Reduce{ReduceOp::Max, {0}}, {meta(c128, {2})}, ErrorKind::DTypeMismatch);
  expect_error(prim::Reduce{ReduceOp::Min, {1}}, {meta(f64, {2, 0})}, ErrorKind::InvalidArgument);
  EXPECT_EQ(infer1(prim::Reduce{ReduceOp::Sum, {1}}, {meta(f64, {2, 0})}).shape, (SymShape{2}));

  EXPECT_EQ(infer1(prim::Variance{{0}}, {meta(c128, {n, 3})}).dtype, f64);
  EXPECT_EQ(infer1(prim::Variance{{0}}, {meta(i64, {n, 3})}).dtype, f64);
  EXPECT_EQ(infer1(prim::Variance{{1}, 0.0, true, true}, {meta(f32, {n, 3})}).dtype, f32);
  EXPECT_EQ(infer1(prim::Variance{{1}, 0.0, true}, {meta(f32, {n, 3})}).shape, (SymShape{n, 1}));
  expect_error(prim::Variance{{1, 1}}, {meta(f64, {2, 2})}, ErrorKind::DuplicateAxis);
  expect_error(prim::Variance{{1}, std::nan("")}, {meta(f64, {2, 2})}, ErrorKind::InvalidArgument);

  EXPECT_EQ(infer1(prim::ArgReduce{true, 1}, x).dtype, i64);
  EXPECT_EQ(infer1(prim::ArgReduce{true, 1}, x).shape, (SymShape{n, 4}));
  EXPECT_EQ(infer1(prim::ArgReduce{false, -1, true}, x).shape, (SymShape{n, m, 1}));
  expect_error(prim::ArgReduce{true, 3}, x, ErrorKind::AxisOutOfBounds);
  expect_error(prim::ArgReduce{true, 0}, {meta(c64, {2})}, ErrorKind::DTypeMismatch);
}

TEST(PrimitiveInfer, CumulativeAndArgsort) {
  const std::vector<TensorMeta> x{meta(i32, {n, m, 4})};
  EXPECT_EQ(infer1(prim::Cumulative{ReduceOp::Sum, 1, false}, x).dtype, i64);
  EXPECT_EQ(infer1(prim::Cumulative{ReduceOp::Prod, -1, true}, x).shape, (SymShape{n, m, 4}));
  EXPECT_EQ(infer1(prim::Cumulative{ReduceOp::Sum, 0, false}, {meta(c64, {2})}).dtype, c64);
  EXPECT_EQ(infer1(prim::Cumulative{ReduceOp::Sum, -1, false}, {meta(f32, {})}).shape, SymShape{});
  expect_error(prim::Cumulative{ReduceOp::Sum, 3, false}, x, ErrorKind::AxisOutOfBounds);
  expect_error(prim::Cumulative{ReduceOp::Sum, 1, false}, {meta(f64, {})},
               ErrorKind::AxisOutOfBounds);
  expect_error(prim::Cumulative{ReduceOp::Max, 0, false}, x, ErrorKind::InvalidArgument);

  EXPECT_EQ(infer1(prim::Argsort{1, false, -1}, x).dtype, i64);
  EXPECT_EQ(infer1(prim::Argsort{1, false, -1}, x).shape, (SymShape{n, m, 4}));
  EXPECT_EQ(infer1(prim::Argsort{2, true, 3}, x).shape, (SymShape{n, m, 3}));
  expect_error(prim::Argsort{2, true, 5}, x, ErrorKind::InvalidArgument);
  expect_error(prim::Argsort{0, false, -1}, {meta(c128, {2})}, ErrorKind::DTypeMismatch);
  expect_error(prim::Argsort{0, false, 0}, {meta(f64, {})}, ErrorKind::InvalidArgument);
  // A symbolic extent: k <= n becomes a constraint checked when n binds.
  const InferenceResult r = infer(prim::Argsort{0, true, 3}, x);
  EXPECT_EQ(r.outputs[0].shape, (SymShape{3, m, 4}));
  ASSERT_EQ(r.constraints.size(), 1u);
  EXPECT_NO_THROW(check_constraints("topk", r.constraints, {}, {{"n", 3}}));
  EXPECT_THROW(check_constraints("topk", r.constraints, {}, {{"n", 2}}), Error);
}

TEST(PrimitiveInfer, DotGeneral) {
  const prim::DotGeneral mm{{{1}, {0}, {}, {}}};
  TensorMeta out = infer1(mm, {meta(f64, {n, 3}), meta(c64, {3, m})});
  EXPECT_EQ(out.shape, (SymShape{n, m}));
  EXPECT_EQ(out.dtype, c128);
  // Free axes keep their order; batch axes go last.
  const prim::DotGeneral bmm{{{1}, {0}, {3}, {2}}};
  out = infer1(bmm, {meta(f32, {2, 5, 7, 4}), meta(f32, {5, 6, 4})});
  EXPECT_EQ(out.shape, (SymShape{2, 7, 6, 4}));
  EXPECT_EQ(infer1(prim::DotGeneral{}, {meta(i32, {2}), meta(i64, {3})}).shape, (SymShape{2, 3}));

  InferenceResult r = infer(mm, {meta(f64, {2, k}), meta(f64, {3, 4})});
  EXPECT_EQ(r.outputs[0].shape, (SymShape{2, 4}));
  ASSERT_EQ(r.constraints.size(), 1u);
  EXPECT_NO_THROW(check_constraints("dot_general", r.constraints, {}, {{"k", 3}}));
  EXPECT_TF_ERROR(check_constraints("dot_general", r.constraints, {}, {{"k", 2}}),
                  ErrorKind::ShapeMismatch);
  r = infer(prim::DotGeneral{{{0}, {0}, {1}, {1}}}, {meta(f64, {k, n}), meta(f64, {k, 5})});
  EXPECT_EQ(r.outputs[0].shape, (SymShape{5}));
  EXPECT_EQ(r.constraints.size(), 1u);

  expect_error(mm, {meta(f64, {2, 3}), meta(f64, {4, 5})}, ErrorKind::ShapeMismatch);
  expect_error(mm, {meta(bool_, {2, 3}), meta(f64, {3, 5})}, ErrorKind::DTypeMismatch);
  expect_error(prim::DotGeneral{{{1}, {}, {}, {}}}, {meta(f64, {2, 3}), meta(f64, {3, 5})},
               ErrorKind::InvalidArgument);
  expect_error(prim::DotGeneral{{{1}, {0}, {1}, {1}}}, {meta(f64, {2, 3}), meta(f64, {3, 3})},
               ErrorKind::InvalidArgument);
  expect_error(prim::DotGeneral{{{1, 1}, {0, 1}, {}, {}}}, {meta(f64, {2, 3}), meta(f64, {3, 3})},
               ErrorKind::DuplicateAxis);
  expect_error(prim::DotGeneral{{{2}, {0}, {}, {}}}, {meta(f64, {2, 3}), meta(f64, {3, 3})},
               ErrorKind::AxisOutOfBounds);
}

TEST(PrimitiveInfer, ConvertFullConstant) {
  EXPECT_EQ(infer1(prim::Convert{f64}, {meta(i32, {n})}).dtype, f64);
  EXPECT_EQ(infer1(prim::Convert{i32, true}, {meta(c128, {n})}).dtype, i32);
  expect_error(prim::Convert{i32}, {meta(f64, {2})}, ErrorKind::DTypeMismatch);

  const TensorMeta full = infer1(prim::Full{{n, 3}, Scalar(2.0), c64}, {});
  EXPECT_EQ(full.dtype, c64);
  EXPECT_EQ(full.shape, (SymShape{n, 3}));
  expect_error(prim::Full{{2, -1}, Scalar(0.0)}, {}, ErrorKind::InvalidArgument);
  expect_error(prim::Full{{2}, Scalar(std::numeric_limits<double>::quiet_NaN()), i64}, {},
               ErrorKind::InvalidArgument);
  expect_error(prim::Full{{2}, Scalar(1e300), i32}, {}, ErrorKind::InvalidArgument);

  const TensorMeta c = infer1(prim::Constant{zeros({2, 0, 3}, i32)}, {});
  EXPECT_EQ(c.dtype, i32);
  EXPECT_EQ(c.shape, (SymShape{2, 0, 3}));
  expect_error(prim::Constant{}, {}, ErrorKind::InvalidArgument);
}

TEST(PrimitiveInfer, TransposeReshapeBroadcast) {
  EXPECT_EQ(infer1(prim::Transpose{{2, 0, 1}}, {meta(f64, {n, m, 4})}).shape, (SymShape{4, n, m}));
  EXPECT_EQ(infer1(prim::Transpose{{}}, {meta(f64, {})}).shape, SymShape{});
  expect_error(prim::Transpose{{0}}, {meta(f64, {2, 3})}, ErrorKind::RankMismatch);
  expect_error(prim::Transpose{{0, -2}}, {meta(f64, {2, 3})}, ErrorKind::DuplicateAxis);

  EXPECT_EQ(infer1(prim::Reshape{{3, 2}}, {meta(f64, {2, 3})}).shape, (SymShape{3, 2}));
  EXPECT_EQ(infer1(prim::Reshape{{n}}, {meta(f64, {n})}).shape, (SymShape{n}));
  expect_error(prim::Reshape{{5}}, {meta(f64, {2, 3})}, ErrorKind::ShapeMismatch);
  expect_error(prim::Reshape{{-1, 3}}, {meta(f64, {2, 3})}, ErrorKind::InvalidArgument);
  InferenceResult r = infer(prim::Reshape{{m * n}}, {meta(f64, {n, m})});
  EXPECT_EQ(r.outputs[0].shape, (SymShape{m * n}));
  ASSERT_EQ(r.constraints.size(), 1u);
  EXPECT_NO_THROW(check_constraints("reshape", r.constraints, {}, {{"n", 2}, {"m", 7}}));
  r = infer(prim::Reshape{{6}}, {meta(f64, {n, 2})});
  EXPECT_TF_ERROR(check_constraints("reshape", r.constraints, {}, {{"n", 4}}),
                  ErrorKind::ShapeMismatch);

  const prim::BroadcastInDim b{{2, 3}, {1}};
  EXPECT_EQ(infer1(b, {meta(i64, {3})}).shape, (SymShape{2, 3}));
  EXPECT_EQ(infer1(b, {meta(i64, {1})}).shape, (SymShape{2, 3}));
  EXPECT_EQ(infer1(prim::BroadcastInDim{{n, 4}, {}}, {meta(f64, {})}).shape, (SymShape{n, 4}));
  expect_error(b, {meta(f64, {4})}, ErrorKind::ShapeMismatch);
  expect_error(b, {meta(f64, {3, 1})}, ErrorKind::RankMismatch);
  expect_error(prim::BroadcastInDim{{2, 3}, {2}}, {meta(f64, {3})}, ErrorKind::AxisOutOfBounds);
  expect_error(prim::BroadcastInDim{{2, 2}, {1, 0}}, {meta(f64, {2, 2})},
               ErrorKind::InvalidArgument);
  expect_error(prim::BroadcastInDim{{-2, 3}, {1}}, {meta(f64, {3})}, ErrorKind::InvalidArgument);
  r = infer(prim::BroadcastInDim{{2, m}, {1}}, {meta(f64, {n})});
  ASSERT_EQ(r.constraints.size(), 1u);
  EXPECT_TF_ERROR(check_constraints("broadcast_in_dim", r.constraints, {}, {{"n", 2}, {"m", 3}}),
                  ErrorKind::ShapeMismatch);
}

TEST(PrimitiveInfer, SlicePadReverse) {
  const prim::Slice s{{1, 0}, {8, 4}, {3, 1}};
  InferenceResult r = infer(s, {meta(f64, {10, n})});
  EXPECT_EQ(r.outputs[0].shape, (SymShape{3, 4}));
  ASSERT_EQ(r.constraints.size(), 1u);  // 4 <= n
  EXPECT_NO_THROW(check_constraints("slice", r.constraints, {}, {{"n", 4}}));
  EXPECT_NO_THROW(check_constraints("slice", r.constraints, {}, {{"n", 9}}));
  EXPECT_TF_ERROR(check_constraints("slice", r.constraints, {}, {{"n", 3}}),
                  ErrorKind::ShapeMismatch);
  EXPECT_EQ(infer1(prim::Slice{{2}, {2}, {5}}, {meta(f64, {4})}).shape, (SymShape{0}));
  expect_error(prim::Slice{{0}, {11}, {1}}, {meta(f64, {10})}, ErrorKind::AxisOutOfBounds);
  expect_error(prim::Slice{{-1}, {2}, {1}}, {meta(f64, {10})}, ErrorKind::AxisOutOfBounds);
  expect_error(prim::Slice{{0}, {2}, {0}}, {meta(f64, {10})}, ErrorKind::InvalidArgument);
  expect_error(prim::Slice{{3}, {2}, {1}}, {meta(f64, {10})}, ErrorKind::InvalidArgument);
  expect_error(prim::Slice{{0}, {2}, {1}}, {meta(f64, {10, 2})}, ErrorKind::RankMismatch);

  const prim::Pad p{{1, -1}, {2, 0}, {1, 0}, Scalar(0.0)};
  EXPECT_EQ(infer1(p, {meta(f64, {3, 4})}).shape, (SymShape{8, 3}));
  const TensorMeta sym = infer1(p, {meta(i64, {n, m})});
  EXPECT_EQ(sym.dtype, i64);
  EXPECT_EQ(evaluate(sym.shape, {{"n", 3}, {"m", 4}}), (Shape{8, 3}));
  EXPECT_EQ(evaluate(sym.shape, {{"n", 0}, {"m", 1}}), (Shape{3, 0}));
  EXPECT_EQ(infer1(prim::Pad{{1}, {1}, {}, Scalar(0.0)}, {meta(f64, {n})}).shape,
            (SymShape{n + 2}));
  expect_error(prim::Pad{{-3}, {0}, {}, Scalar(0.0)}, {meta(f64, {2})}, ErrorKind::InvalidArgument);
  expect_error(prim::Pad{{0}, {0}, {-1}, Scalar(0.0)}, {meta(f64, {2})},
               ErrorKind::InvalidArgument);
  expect_error(prim::Pad{{0}, {0}, {}, Scalar(0.0)}, {meta(f64, {2, 2})}, ErrorKind::RankMismatch);
  expect_error(prim::Pad{{0}, {0}, {}, Scalar(std::numeric_limits<double>::infinity())},
               {meta(i32, {2})}, ErrorKind::InvalidArgument);

  EXPECT_EQ(infer1(prim::Reverse{{0, -1}}, {meta(c64, {n, 2})}).shape, (SymShape{n, 2}));
  expect_error(prim::Reverse{{0, -2}}, {meta(f64, {2, 2})}, ErrorKind::DuplicateAxis);
  expect_error(prim::Reverse{{2}}, {meta(f64, {2, 2})}, ErrorKind::AxisOutOfBounds);
}

TEST(PrimitiveInfer, Concatenate) {
  const prim::Concatenate c{0, 2};
  TensorMeta out = infer1(c, {meta(i32, {2, n}), meta(f32, {3, n})});
  EXPECT_EQ(out.shape, (SymShape{5, n}));
  EXPECT_EQ(out.dtype, f32);
  EXPECT_EQ(infer1(c, {meta(f64, {n, 2}), meta(f64, {m, 2})}).shape, (SymShape{n + m, 2}));
  EXPECT_EQ(
      infer1(prim::Concatenate{-1, 3}, {meta(f64, {2, 1}), meta(f64, {2, 0}), meta(f64, {2, 4})})
          .shape,
      (SymShape{2, 5}));
  InferenceResult r = infer(c, {meta(f64, {2, n}), meta(f64, {3, m})});
  EXPECT_EQ(r.constraints.size(), 1u);
  expect_error(c, {meta(f64, {2, 3}), meta(f64, {2, 4})}, ErrorKind::ShapeMismatch);
  expect_error(c, {meta(f64, {2, 3}), meta(f64, {2})}, ErrorKind::RankMismatch);
  expect_error(c, {meta(f64, {}), meta(f64, {})}, ErrorKind::AxisOutOfBounds);
}

TEST(PrimitiveInfer, GatherScatter) {
  const prim::IndexSelect is{1};
  TensorMeta out = infer1(is, {meta(c128, {n, 5}), meta(i64, {k})});
  EXPECT_EQ(out.shape, (SymShape{n, k}));
  EXPECT_EQ(out.dtype, c128);
  expect_error(is, {meta(f64, {2, 5}), meta(f64, {3})}, ErrorKind::DTypeMismatch);
  expect_error(is, {meta(f64, {2, 5}), meta(i32, {3, 1})}, ErrorKind::RankMismatch);
  expect_error(prim::IndexSelect{2}, {meta(f64, {2, 5}), meta(i32, {3})},
               ErrorKind::AxisOutOfBounds);

  const prim::TakeAlongAxis ta{0};
  out = infer1(ta, {meta(f32, {4, n}), meta(i32, {7, n})});
  EXPECT_EQ(out.shape, (SymShape{7, n}));
  EXPECT_EQ(out.dtype, f32);
  expect_error(ta, {meta(f64, {4, 2}), meta(i32, {7, 3})}, ErrorKind::ShapeMismatch);
  expect_error(ta, {meta(f64, {4, 2}), meta(i32, {7})}, ErrorKind::RankMismatch);
  EXPECT_EQ(infer(ta, {meta(f64, {4, n}), meta(i64, {2, m})}).constraints.size(), 1u);

  const prim::ScatterAdd sa{0};
  out = infer1(sa, {meta(i32, {5, 3}), meta(i64, {2, 3}), meta(f64, {2, 3})});
  EXPECT_EQ(out.shape, (SymShape{5, 3}));
  EXPECT_EQ(out.dtype, f64);
  EXPECT_EQ(infer1(sa, {meta(f64, {5, 3}), meta(i64, {9, 2}), meta(f64, {9, 2})}).shape,
            (SymShape{5, 3}));
  expect_error(sa, {meta(f64, {5, 3}), meta(i64, {2, 3}), meta(f64, {2, 2})},
               ErrorKind::ShapeMismatch);
  expect_error(sa, {meta(f64, {5, 3}), meta(i64, {2, 4}), meta(f64, {2, 4})},
               ErrorKind::ShapeMismatch);
  expect_error(sa, {meta(f64, {5, 3}), meta(f32, {2, 3}), meta(f64, {2, 3})},
               ErrorKind::DTypeMismatch);
  expect_error(sa, {meta(f64, {5, 3}), meta(i64, {2, 3}), meta(f64, {6})}, ErrorKind::RankMismatch);
  InferenceResult r = infer(sa, {meta(f64, {5, n}), meta(i64, {2, m}), meta(f64, {2, m})});
  ASSERT_EQ(r.constraints.size(), 1u);  // m <= n
  EXPECT_NO_THROW(check_constraints("scatter_add", r.constraints, {}, {{"n", 3}, {"m", 3}}));
  EXPECT_TF_ERROR(check_constraints("scatter_add", r.constraints, {}, {{"n", 3}, {"m", 4}}),
                  ErrorKind::ShapeMismatch);
}

TEST(PrimitiveInfer, DiagonalAndTriangles) {
  auto diag = [](std::int64_t off, SymShape s) {
    return infer1(prim::Diagonal{off, 0, 1}, {meta(f64, std::move(s))}).shape;
  };
  EXPECT_EQ(diag(0, {3, 4}), (SymShape{3}));
  EXPECT_EQ(diag(2, {3, 4}), (SymShape{2}));
  EXPECT_EQ(diag(-1, {3, 4}), (SymShape{2}));
  EXPECT_EQ(diag(5, {3, 4}), (SymShape{0}));
  EXPECT_EQ(diag(0, {n, n, 7}), (SymShape{n, 7}));
  EXPECT_EQ(evaluate(diag(1, {n, m}), {{"n", 4}, {"m", 3}}), (Shape{2}));
  EXPECT_EQ(evaluate(diag(-5, {n, m}), {{"n", 4}, {"m", 3}}), (Shape{0}));
  EXPECT_EQ(infer1(prim::Diagonal{0, 2, 0}, {meta(f64, {2, 5, 3})}).shape, (SymShape{2, 5}));
  expect_error(prim::Diagonal{0, 1, -1}, {meta(f64, {2, 2})}, ErrorKind::DuplicateAxis);
  expect_error(prim::Diagonal{}, {meta(f64, {2})}, ErrorKind::AxisOutOfBounds);

  EXPECT_EQ(infer1(prim::DiagEmbed{-2}, {meta(c64, {3, n})}).shape, (SymShape{5, 5, n}));
  EXPECT_EQ(infer1(prim::DiagEmbed{0}, {meta(c64, {n})}).shape, (SymShape{n, n}));
  expect_error(prim::DiagEmbed{}, {meta(f64, {})}, ErrorKind::RankMismatch);

  EXPECT_EQ(infer1(prim::Triangle{false, 1}, {meta(i64, {n, m, 2})}).shape, (SymShape{n, m, 2}));
  expect_error(prim::Triangle{true, 0}, {meta(f64, {3})}, ErrorKind::RankMismatch);
}
