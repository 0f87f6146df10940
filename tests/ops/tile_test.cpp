// The tile primitive (numpy.tile in column-major terms), the primitive the
// recipe of CONTRIBUTING.md ("Adding a primitive") was counted on: values
// against a naive loop in every tier and dtype, NumPy's rules for reps of
// another length, symbolic inference, gradients, the catalog entry, errors.

#include "tenferro/ad/grad_check.hpp"
#include "tenferro/ops/catalog.hpp"
#include "test_util.hpp"

using namespace tenferro;

namespace {

// out[i] = x[i mod x_d on every axis d], by index arithmetic.
Tensor naive_tile(const Tensor& x, const Shape& reps, CpuBackend& cpu) {
  Shape out_shape;
  for (std::size_t d = 0; d < reps.size(); ++d) out_shape.push_back(x.shape()[d] * reps[d]);
  const Tensor xc = x.contiguous();
  Tensor out = zeros(out_shape, DType::C128);
  const Tensor x128 = zeros(x.shape(), DType::C128);
  Tensor::copy_into(xc, x128);
  const auto xv = x128.to_vector<c128_t>();
  std::vector<c128_t> ov(static_cast<std::size_t>(out.numel()));
  for (std::int64_t i = 0; i < out.numel(); ++i) {
    Shape idx = tftest::unravel(i, out_shape);
    std::int64_t src = 0, stride = 1;
    for (std::size_t d = 0; d < idx.size(); ++d) {
      src += (idx[d] % x.shape()[d]) * stride;
      stride *= x.shape()[d];
    }
    ov[static_cast<std::size_t>(i)] = xv[static_cast<std::size_t>(src)];
  }
  Tensor want = Tensor::from_col_major(out_shape, ov);
  return cast(want, x.dtype(), cpu);
}

}  // namespace

TEST(Tile, MatchesTheNaiveLoopInEveryDTypeAndLayout) {
  CpuBackend cpu({.num_threads = 1});
  Generator gen(3);
  for (DType dt : {f64, c128, f32, i64, bool_}) {
    const Tensor base = cast(randn({3, 2}, is_complex(dt) ? c128 : f64, gen), dt, cpu);
    for (const Tensor& x : {base, tftest::strided_copy(base)}) {
      for (const Shape& reps : {Shape{2, 3}, Shape{1, 1}, Shape{0, 2}, Shape{3, 1}}) {
        const std::int64_t r[2] = {reps[0], reps[1]};
        const Tensor got = tile(x, r, cpu);
        EXPECT_EQ(got.dtype(), dt);
        EXPECT_EQ(max_abs_diff(got, naive_tile(x, reps, cpu)), 0.0) << name(dt);
      }
    }
  }
  // Rank 0 and zero-size inputs.
  EXPECT_EQ(tile(Tensor::scalar(2.5), std::span<const std::int64_t>(), cpu).item<double>(), 2.5);
  const std::int64_t two[1] = {2};
  EXPECT_EQ(tile(zeros({0}), two, cpu).shape(), Shape{0});
}

TEST(Tile, FollowsNumpyForRepsOfAnotherLength) {
  CpuBackend cpu({.num_threads = 1});
  const Tensor x = Tensor::from_col_major({2}, std::vector<double>{1, 2});
  // Longer reps: x gains trailing unit axes (NumPy's leading ones).
  const std::int64_t r2[2] = {2, 3};
  const Tensor y = tile(x, r2, cpu);
  EXPECT_EQ(y.shape(), (Shape{4, 3}));
  EXPECT_EQ(y.to_vector<double>(), (std::vector<double>{1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2}));
  // Shorter reps: padded with 1s.
  const Tensor m = Tensor::from_col_major({2, 2}, std::vector<double>{1, 2, 3, 4});
  const std::int64_t r1[1] = {2};
  EXPECT_EQ(tile(m, r1, cpu).shape(), (Shape{4, 2}));
  // The eager and traced tiers give the same values.
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{1});
  EXPECT_EQ(max_abs_diff(tile(rt->tensor(x), Shape{2, 3}).value(), y), 0.0);
  auto t = placeholder(f64, {2});
  const Tensor in[1] = {x};
  auto out = run_compiled(*rt->runtime(), compile({tile(t, Shape{2, 3})}, {t}), in);
  EXPECT_EQ(max_abs_diff(out[0], y), 0.0);
}

TEST(Tile, InfersSymbolicShapesAndRefusesBadReps) {
  const SymDim n = SymDim::var("n");
  const std::vector<TensorMeta> meta{TensorMeta{c64, {n, 4}}};
  const auto out = PrimitiveOp(prim::Tile{{2, 3}}).infer(meta);
  ASSERT_EQ(out.outputs.size(), 1u);
  EXPECT_EQ(out.outputs[0].dtype, c64);
  EXPECT_EQ(out.outputs[0].shape, (SymShape{n * 2, 12}));
  EXPECT_TF_ERROR(PrimitiveOp(prim::Tile{{2}}).infer(meta), ErrorKind::RankMismatch);
  EXPECT_TF_ERROR(PrimitiveOp(prim::Tile{{2, -1}}).infer(meta), ErrorKind::InvalidArgument);
  CpuBackend cpu({.num_threads = 1});
  const std::int64_t negative[2] = {1, -2};
  EXPECT_TF_ERROR(tile(zeros({2, 2}), negative, cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(tile(Tensor(), negative, cpu), ErrorKind::InvalidArgument);
  const std::int64_t huge[2] = {std::int64_t{1} << 40, std::int64_t{1} << 40};
  EXPECT_TF_ERROR(tile(zeros({2, 2}), huge, cpu), ErrorKind::InvalidArgument);
}

TEST(Tile, GradientsSumTheRepeats) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{1});
  Generator gen(5);
  for (DType dt : {f64, c128}) {
    std::vector<EagerTensor> in{rt->tensor(randn({3, 2}, dt, gen))};
    auto r = check_gradients([](auto z) { return tile(z[0], Shape{2, 3}); }, in);
    EXPECT_TRUE(r.ok) << name(dt) << ": " << r.detail;
  }
  // The cotangent of each input element is the sum over its copies.
  auto x = rt->variable(Tensor::from_col_major({2}, std::vector<double>{1, 2}));
  sum(tile(x, Shape{3}) * tile(x, Shape{3})).backward();
  EXPECT_EQ(x.grad().value().to_vector<double>(), (std::vector<double>{6, 12}));
}

TEST(Tile, IsACatalogEntry) {
  const prim::PrimitiveInfo* info = prim::find_primitive("tile");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->params, "Tile");
  EXPECT_EQ(info->arity, 1);
  ASSERT_EQ(info->fields.size(), 1u);
  EXPECT_EQ(info->fields[0].name, "reps");
  EXPECT_EQ(info->functions, (std::vector<std::string_view>{"tile"}));
  const prim::NamedParam reps[] = {{"reps", std::vector<std::int64_t>{2, 1}}};
  EXPECT_EQ(make_primitive("tile", reps)->describe(), "tile(reps=[2, 1])");
}
