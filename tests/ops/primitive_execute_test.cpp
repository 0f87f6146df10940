// Executing core primitives: every kind against its direct operation, result
// metadata against inference, dtype/error agreement between inference and
// execution, and symbolic parameters resolved with bindings.

#include <cmath>
#include <functional>

#include "tenferro/ops/primitives.hpp"
#include "test_util.hpp"

using namespace tenferro;

namespace {

constexpr DType kProbeDTypes[] = {DType::F64, DType::I64, DType::C128, DType::Bool};

// Deterministic values of any dtype: mixed signs, non-trivial imaginary parts,
// integers in [-4, 4], bools with both values.
Tensor sample(const Shape& shape, DType dtype, double phase = 0.0) {
  const auto count = static_cast<std::size_t>(shape_numel(shape));
  std::vector<double> re(count), im(count);
  for (std::size_t i = 0; i < count; ++i) {
    re[i] = 4.0 * std::sin(1.3 * static_cast<double>(i) + 0.4 + phase);
    im[i] = 2.0 * std::cos(0.7 * static_cast<double>(i) + phase);
  }
  const Tensor r = Tensor::from_col_major(shape, re);
  const Tensor src = is_complex(dtype) ? complex(r, Tensor::from_col_major(shape, im)) : r;
  Tensor out = empty(shape, dtype);
  Tensor::copy_into(src, out);
  return out;
}

Tensor index_tensor(const Shape& shape, const std::vector<std::int64_t>& values) {
  return Tensor::from_col_major(shape, values);
}

std::vector<TensorMeta> metas(std::span<const Tensor> xs) {
  std::vector<TensorMeta> out;
  for (const Tensor& x : xs) out.push_back({x.dtype(), to_sym_shape(x.shape())});
  return out;
}

struct Case {
  std::string label;
  prim::Params params;
  std::vector<Tensor> inputs;
  std::function<Tensor(Backend&)> reference;
};

std::vector<Case> cases() {
  const Tensor x = sample({3, 4}, f64);
  const Tensor xs = tftest::strided_copy(x);  // negative strides, same values
  const Tensor y = sample({3, 4}, f64, 1.0);
  const Tensor z = sample({3, 4}, c128);
  const Tensor zi = sample({3, 4}, i64);
  const Tensor cube = sample({2, 3, 5}, f64);
  const Tensor cond = sample({3, 1}, bool_, 2.0);
  const Tensor row = sample({1, 4}, f32);
  const Tensor vec = sample({3}, f64);
  const Tensor scalar = Tensor::scalar(0.75);
  const Tensor empty_rows = sample({0, 3}, f64);
  const Tensor idx = index_tensor({3}, {2, 0, -1});
  const Tensor idx2 = index_tensor({2, 4}, {0, 2, 1, 1, 2, 0, 0, 1});
  const Tensor src = sample({2, 4}, f64, 3.0);
  const Tensor c = sample({2, 3}, i32);
  const DotDims mm{{1}, {0}, {}, {}};
  const DotDims bmm{{1}, {0}, {2}, {2}};
  const Tensor lhs = sample({2, 3, 5}, c128), rhs = sample({3, 4, 5}, c128, 1.0);
  const Tensor mat = sample({4, 2}, f64, 0.5);

  std::vector<Case> out{
      {"exp", prim::Unary{UnaryOp::Exp}, {x}, [=](Backend& b) { return exp(x, b); }},
      {"exp strided", prim::Unary{UnaryOp::Exp}, {xs}, [=](Backend& b) { return exp(x, b); }},
      {"abs c128", prim::Unary{UnaryOp::Abs}, {z}, [=](Backend& b) { return abs(z, b); }},
      {"neg rank0",
       prim::Unary{UnaryOp::Neg},
       {scalar},
       [=](Backend& b) { return neg(scalar, b); }},
      {"add broadcast",
       prim::Binary{BinaryOp::Add},
       {cond, row},
       [=](Backend& b) { return add(cond, row, b); }},
      {"mul c128", prim::Binary{BinaryOp::Mul}, {z, x}, [=](Backend& b) { return mul(z, x, b); }},
      {"lt i64", prim::Binary{BinaryOp::Lt}, {zi, y}, [=](Backend& b) { return lt(zi, y, b); }},
      {"select", prim::Select{}, {cond, x, zi}, [=](Backend& b) { return where(cond, x, zi, b); }},
      {"clamp",
       prim::Clamp{Scalar(-1.0), Scalar(2.0)},
       {xs},
       [=](Backend& b) { return clamp(x, Scalar(-1.0), Scalar(2.0), b); }},
      {"sum keepdim",
       prim::Reduce{ReduceOp::Sum, {0}, true},
       {cube},
       [=](Backend& b) { return sum(cube, {0}, b, true); }},
      {"mean c128",
       prim::Reduce{ReduceOp::Mean, {0, 1}},
       {z},
       [=](Backend& b) {
         return mean(z, {0, 1}, b);
       }},
      {"max",
       prim::Reduce{ReduceOp::Max, {-1}},
       {cube},
       [=](Backend& b) { return max(cube, {-1}, b); }},
      {"sum empty",
       prim::Reduce{ReduceOp::Sum, {0}},
       {empty_rows},
       [=](Backend& b) { return sum(empty_rows, {0}, b); }},
      {"var",
       prim::Variance{{0}, 1.0},
       {x},
       [=](Backend& b) { return var(x, std::vector<std::int64_t>{0}, b, 1.0); }},
      {"std c128",
       prim::Variance{{1}, 0.0, true, true},
       {z},
       [=](Backend& b) {
         return tenferro::std_dev(z, std::vector<std::int64_t>{1}, b, 0.0, true);
       }},
      {"argmax", prim::ArgReduce{true, 1}, {x}, [=](Backend& b) { return argmax(x, 1, b); }},
      {"argmin keepdim",
       prim::ArgReduce{false, 0, true},
       {zi},
       [=](Backend& b) { return argmin(zi, 0, b, true); }},
      {"dot_general mm",
       prim::DotGeneral{mm},
       {x, mat},
       [=](Backend& b) { return dot_general(x, mat, mm, b); }},
      {"dot_general batched",
       prim::DotGeneral{bmm},
       {lhs, rhs},
       [=](Backend& b) { return dot_general(lhs, rhs, bmm, b); }},
      {"transpose",
       prim::Transpose{{2, 0, 1}},
       {cube},
       [=](Backend& b) {
         return permute(cube, std::vector<std::int64_t>{2, 0, 1}, b);
       }},
      {"reshape",
       prim::Reshape{{6, 2}},
       {xs},
       [=](Backend& b) {
         return reshape(x, std::vector<std::int64_t>{6, 2}, b);
       }},
      {"broadcast_in_dim",
       prim::BroadcastInDim{{2, 3}, {1}},
       {vec},
       [=](Backend& b) {
         return broadcast_in_dim(vec, std::vector<std::int64_t>{2, 3}, std::vector<std::int64_t>{1},
                                 b);
       }},
      {"slice",
       prim::Slice{{1, 0}, {3, 4}, {1, 2}},
       {x},
       [=](Backend& b) {
         return slice(x, std::vector<std::int64_t>{1, 0}, std::vector<std::int64_t>{3, 4},
                      std::vector<std::int64_t>{1, 2}, b);
       }},
      {"pad",
       prim::Pad{{1, -1}, {2, 0}, {1, 0}, Scalar(7.0)},
       {x},
       [=](Backend& b) {
         return pad(x, std::vector<std::int64_t>{1, -1}, std::vector<std::int64_t>{2, 0},
                    Scalar(7.0), b, std::vector<std::int64_t>{1, 0});
       }},
      {"concatenate",
       prim::Concatenate{1, 3},
       {x, zi, cond},
       [=](Backend& b) {
         return concatenate(std::vector<Tensor>{x, zi, cond}, 1, b);
       }},
      {"reverse",
       prim::Reverse{{0, -1}},
       {z},
       [=](Backend& b) {
         return reverse(z, std::vector<std::int64_t>{0, -1}, b);
       }},
      {"index_select",
       prim::IndexSelect{1},
       {x, idx},
       [=](Backend& b) { return index_select(x, 1, idx, b); }},
      {"take_along_axis",
       prim::TakeAlongAxis{0},
       {x, idx2},
       [=](Backend& b) { return take_along_axis(x, idx2, 0, b); }},
      {"scatter_add",
       prim::ScatterAdd{0},
       {zi, idx2, src},
       [=](Backend& b) { return scatter_add(zi, 0, idx2, src, b); }},
      {"diagonal",
       prim::Diagonal{1, 0, 1},
       {cube},
       [=](Backend& b) { return diagonal(cube, 1, 0, 1, b); }},
      {"diag_embed", prim::DiagEmbed{-1}, {x}, [=](Backend& b) { return diag_embed(x, -1, b); }},
      {"tril", prim::Triangle{true, 0}, {z}, [=](Backend& b) { return tril(z, 0, b); }},
      {"triu", prim::Triangle{false, 1}, {xs}, [=](Backend& b) { return triu(x, 1, b); }},
      {"convert", prim::Convert{f64}, {c}, [=](Backend& b) { return convert(c, f64, b); }},
      {"cast", prim::Convert{i32, true}, {x}, [=](Backend& b) { return cast(x, i32, b); }},
      {"full",
       prim::Full{{2, 3}, Scalar(1.5), f32},
       {},
       [](Backend&) {
         return full({2, 3}, Scalar(1.5), f32);
       }},
      {"constant", prim::Constant{z}, {}, [=](Backend&) { return z; }},
  };
  return out;
}

struct Outcome {
  bool threw = false;
  ErrorKind kind = ErrorKind::Internal;
  DType dtype = DType::F64;
};

template <class F>
Outcome outcome(F&& f) {
  Outcome o;
  try {
    o.dtype = f();
  } catch (const Error& e) {
    o.threw = true;
    o.kind = e.kind();
  }
  return o;
}

// Inference throws iff execution throws (with the same kind), and otherwise
// predicts the executed dtype.
void expect_agreement(const prim::Params& p, const std::vector<Tensor>& inputs, Backend& b) {
  const PrimitiveOp op(p);
  const Outcome inferred = outcome([&] { return op.infer(metas(inputs)).outputs.at(0).dtype; });
  const Outcome executed = outcome([&] { return execute_primitive(op, inputs, b).dtype(); });
  std::string what = op.describe() + " on";
  for (const Tensor& x : inputs)
    what.append(" ").append(name(x.dtype())).append(shape_to_string(x.shape()));
  EXPECT_EQ(inferred.threw, executed.threw) << what;
  if (inferred.threw && executed.threw) {
    EXPECT_EQ(inferred.kind, executed.kind) << what;
  } else if (!inferred.threw && !executed.threw) {
    EXPECT_EQ(inferred.dtype, executed.dtype) << what;
  }
}

}  // namespace

TEST(PrimitiveExecute, MatchesDirectOpsAndInference) {
  CpuBackend cpu;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.label);
    const PrimitiveOp op(c.params);
    const Tensor out = execute_primitive(op, c.inputs, cpu);
    const Tensor ref = c.reference(cpu);
    EXPECT_EQ(out.dtype(), ref.dtype());
    EXPECT_EQ(out.shape(), ref.shape());
    EXPECT_TRUE(allclose(out, ref, 1e-12, 1e-12, true)) << out << "\nvs\n" << ref;
    const InferenceResult r = op.infer(metas(c.inputs));
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_EQ(r.outputs[0].dtype, out.dtype());
    EXPECT_EQ(try_concrete(r.outputs[0].shape), out.shape());
    EXPECT_TRUE(r.constraints.empty());
  }
}

TEST(PrimitiveExecute, NamesMatchTheDirectOps) {
  for (int i = 0; i < kUnaryOpCount; ++i) {
    const auto op = static_cast<UnaryOp>(i);
    EXPECT_EQ(PrimitiveOp(prim::Unary{op}).name(), name(op));
  }
  for (int i = 0; i < kBinaryOpCount; ++i) {
    const auto op = static_cast<BinaryOp>(i);
    EXPECT_EQ(PrimitiveOp(prim::Binary{op}).name(), name(op));
  }
  for (int i = 0; i <= static_cast<int>(ReduceOp::LogSumExp); ++i) {
    const auto op = static_cast<ReduceOp>(i);
    EXPECT_EQ(PrimitiveOp(prim::Reduce{op, {}}).name(), name(op));
  }
}

TEST(PrimitiveExecute, UnaryBinaryDtypesAgreeWithExecution) {
  CpuBackend cpu;
  for (DType a : kProbeDTypes) {
    const Tensor x = sample({2, 3}, a);
    for (int i = 0; i < kUnaryOpCount; ++i) {
      expect_agreement(prim::Unary{static_cast<UnaryOp>(i)}, {x}, cpu);
    }
    for (DType b : kProbeDTypes) {
      const Tensor y = sample({3}, b, 1.0);
      for (int i = 0; i < kBinaryOpCount; ++i) {
        expect_agreement(prim::Binary{static_cast<BinaryOp>(i)}, {x, y}, cpu);
      }
    }
  }
}

TEST(PrimitiveExecute, OtherDtypeRulesAgreeWithExecution) {
  CpuBackend cpu;
  for (DType a : kProbeDTypes) {
    const Tensor x = sample({2, 3}, a);
    for (int i = 0; i <= static_cast<int>(ReduceOp::LogSumExp); ++i) {
      expect_agreement(prim::Reduce{static_cast<ReduceOp>(i), {0}}, {x}, cpu);
    }
    expect_agreement(prim::Variance{{1}}, {x}, cpu);
    expect_agreement(prim::Variance{{1}, 1.0, false, true}, {x}, cpu);
    expect_agreement(prim::ArgReduce{true, 0}, {x}, cpu);
    expect_agreement(prim::ArgReduce{false, 1}, {x}, cpu);
    expect_agreement(prim::Clamp{Scalar(-1.0), Scalar(1.0)}, {x}, cpu);
    expect_agreement(prim::Select{}, {x, x, x}, cpu);
    for (DType b : kProbeDTypes) {
      const Tensor y = sample({3, 2}, b, 1.0);
      expect_agreement(prim::DotGeneral{{{1}, {0}, {}, {}}}, {x, y}, cpu);
      expect_agreement(prim::Convert{b}, {x}, cpu);
      expect_agreement(prim::Concatenate{0, 2}, {x, sample({1, 3}, b)}, cpu);
      expect_agreement(prim::ScatterAdd{0},
                       {x, index_tensor({1, 3}, {1, 0, 1}), y.reshape({1, 6}).slice(1, 0, 3)}, cpu);
    }
  }
}

TEST(PrimitiveExecute, ValidationErrorsAgreeWithExecution) {
  CpuBackend cpu;
  const Tensor x = sample({3, 4}, f64);
  const Tensor v = sample({4}, f64);
  expect_agreement(prim::Binary{BinaryOp::Add}, {x, sample({3}, f64)}, cpu);
  expect_agreement(prim::Reduce{ReduceOp::Sum, {0, -2}}, {x}, cpu);
  expect_agreement(prim::Reduce{ReduceOp::Max, {0}}, {sample({0, 2}, f64)}, cpu);
  expect_agreement(prim::DotGeneral{{{1}, {0}, {}, {}}}, {x, x}, cpu);
  expect_agreement(prim::Transpose{{0, 0}}, {x}, cpu);
  expect_agreement(prim::Reshape{{5, 2}}, {x}, cpu);
  expect_agreement(prim::BroadcastInDim{{2, 3}, {1}}, {v}, cpu);
  expect_agreement(prim::Slice{{0, 0}, {4, 4}, {1, 1}}, {x}, cpu);
  expect_agreement(prim::Slice{{0, 0}, {3, 4}, {1, 0}}, {x}, cpu);
  expect_agreement(prim::Pad{{-5, 0}, {0, 0}, {}, Scalar(0.0)}, {x}, cpu);
  expect_agreement(prim::Reverse{{1, 1}}, {x}, cpu);
  expect_agreement(prim::IndexSelect{0}, {x, sample({2}, f64)}, cpu);
  expect_agreement(prim::IndexSelect{2}, {x, index_tensor({1}, {0})}, cpu);
  expect_agreement(prim::TakeAlongAxis{0}, {x, index_tensor({2, 3}, {0, 0, 0, 0, 0, 0})}, cpu);
  expect_agreement(prim::Diagonal{0, 1, 1}, {x}, cpu);
  expect_agreement(prim::DiagEmbed{0}, {Tensor::scalar(1.0)}, cpu);
  expect_agreement(prim::Triangle{true, 0}, {v}, cpu);
  expect_agreement(prim::Convert{i64}, {x}, cpu);
  expect_agreement(prim::Variance{{0}, std::nan("")}, {x}, cpu);
  expect_agreement(prim::ArgReduce{true, 0}, {sample({0, 2}, f64)}, cpu);
  expect_agreement(prim::Reduce{ReduceOp::Min, {}}, {sample({0, 2}, f64)}, cpu);
  expect_agreement(prim::Pad{{0}, {1}, {}, Scalar(std::nan(""))}, {sample({2}, i32)}, cpu);
  expect_agreement(prim::ScatterAdd{0},
                   {x, index_tensor({1, 5}, {0, 0, 0, 0, 0}), sample({1, 5}, f64)}, cpu);
  expect_agreement(prim::Concatenate{0, 2}, {x, sample({2, 3}, f64)}, cpu);
  expect_agreement(prim::Select{}, {sample({2}, bool_), x, x}, cpu);
  expect_agreement(prim::Clamp{Scalar(c128_t(0, 1)), {}}, {x}, cpu);
}

TEST(PrimitiveExecute, SymbolicShapesBindAtExecution) {
  CpuBackend cpu;
  const SymDim n = SymDim::var("n");
  const Tensor x = sample({3, 4}, f64);
  const std::vector<Tensor> xs{x};
  const std::vector<Shape> shapes{x.shape()};

  const PrimitiveOp reshape_op(prim::Reshape{{n, 2}});
  const Tensor r = execute_primitive(reshape_op, xs, cpu, {{"n", 6}});
  EXPECT_EQ(r.shape(), (Shape{6, 2}));
  EXPECT_TRUE(allclose(r, x.reshape({6, 2})));
  const InferenceResult inf = reshape_op.infer(metas(xs));
  EXPECT_EQ(evaluate(inf.outputs[0].shape, {{"n", 6}}), r.shape());
  EXPECT_NO_THROW(check_constraints(reshape_op.name(), inf.constraints, shapes, {{"n", 6}}));
  EXPECT_TF_ERROR(check_constraints(reshape_op.name(), inf.constraints, shapes, {{"n", 5}}),
                  ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(execute_primitive(reshape_op, xs, cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(execute_primitive(reshape_op, xs, cpu, {{"n", -6}}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(execute_primitive(reshape_op, xs, cpu, {{"n", 5}}), ErrorKind::ShapeMismatch);

  const PrimitiveOp full_op(prim::Full{{n, n + 1}, Scalar(2.5), f32});
  const Tensor f = execute_primitive(full_op, {}, cpu, {{"n", 2}});
  EXPECT_EQ(f.dtype(), f32);
  EXPECT_EQ(f.shape(), (Shape{2, 3}));
  EXPECT_TRUE(allclose(f, full({2, 3}, Scalar(2.5), f32)));
  EXPECT_EQ(execute_primitive(full_op, {}, cpu, {{"n", 0}}).shape(), (Shape{0, 1}));
  const Tensor fc =
      execute_primitive(PrimitiveOp(prim::Full{{}, Scalar(c128_t(1, -2)), c128}), {}, cpu);
  EXPECT_EQ(fc.rank(), 0);
  EXPECT_EQ(fc.item().to_complex(), c128_t(1, -2));
  EXPECT_TF_ERROR(execute_primitive(full_op, {}, cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(
      execute_primitive(PrimitiveOp(prim::Full{{2}, Scalar(std::nan("")), i64}), {}, cpu),
      ErrorKind::InvalidArgument);

  const PrimitiveOp bcast(prim::BroadcastInDim{{n, 4}, {1}});
  const Tensor b = execute_primitive(bcast, std::vector<Tensor>{sample({4}, f64)}, cpu, {{"n", 3}});
  EXPECT_EQ(b.shape(), (Shape{3, 4}));
  EXPECT_TRUE(allclose(b, sample({4}, f64).reshape({1, 4})));
}

TEST(PrimitiveExecute, ConstantAndInputCount) {
  CpuBackend cpu;
  const Tensor t = sample({2, 2}, c128);
  const Tensor out = execute_primitive(PrimitiveOp(prim::Constant{t}), {}, cpu);
  EXPECT_EQ(out.storage(), t.storage());
  EXPECT_TF_ERROR(execute_primitive(PrimitiveOp(prim::Constant{}), {}, cpu),
                  ErrorKind::InvalidArgument);
  const PrimitiveOp add(prim::Binary{BinaryOp::Add});
  EXPECT_TF_ERROR(execute_primitive(add, std::vector<Tensor>{t}, cpu), ErrorKind::InvalidArgument);
  try {
    (void)execute_primitive(add, std::vector<Tensor>{t}, cpu);
  } catch (const Error& e) {
    EXPECT_EQ(e.op(), "add");
  }
  EXPECT_TF_ERROR(execute_primitive(PrimitiveOp(prim::Concatenate{0, 0}), {}, cpu),
                  ErrorKind::InvalidArgument);
}
