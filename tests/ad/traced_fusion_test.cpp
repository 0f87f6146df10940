// Elementwise fusion: fused programs give the same values as unfused ones
// (bit for bit: the same kernels run block by block), across dtypes,
// broadcasting, strided inputs, block remainders and the parallel path.

#include <cstring>

#include "ad/traced_fixtures.hpp"

using namespace ttest;

namespace {

const PrepareOptions kUnfused{false, 2048};

std::vector<Tensor> run_with(Runtime& rt, const Program& p, std::span<const Tensor> in,
                             const PrepareOptions& options, PreparedProgram* keep = nullptr) {
  PreparedProgram plan = prepare(rt, p, InputSignature::of(in), options);
  if (keep) *keep = plan;
  return run(rt, plan, in);
}

void expect_fused_equals_unfused(Runtime& rt, const Program& p, std::span<const Tensor> in,
                                 std::size_t min_fused_ops, std::int64_t block = 2048) {
  PreparedProgram fused_plan;
  auto fused = run_with(rt, p, in, PrepareOptions{true, block}, &fused_plan);
  auto plain = run_with(rt, p, in, kUnfused);
  EXPECT_GE(fused_plan.fused_op_count(), min_fused_ops);
  ASSERT_EQ(fused.size(), plain.size());
  for (std::size_t j = 0; j < fused.size(); ++j) expect_identical(fused[j], plain[j]);
}

}  // namespace

TEST(TracedFusion, ChainFusesIntoOnePass) {
  auto rt = cpu_runtime();
  auto t = placeholder(f64, {n_dim()});
  auto a = placeholder(f64, {n_dim()});
  auto b = placeholder(f64, {n_dim()});
  TracedTensor y = t;
  for (int i = 0; i < 8; ++i) y = tanh(y * a + b);
  Program p = compile({y}, {t, a, b});
  const Tensor in[3] = {random({5000}, f64, 1), random({5000}, f64, 2), random({5000}, f64, 3)};
  PreparedProgram plan;
  RunStats stats;
  auto fused = run_with(*rt, p, in, {}, &plan);
  run(*rt, plan, in, &stats);
  EXPECT_EQ(plan.fused_group_count(), 1u);
  EXPECT_EQ(plan.fused_op_count(), 24u);
  EXPECT_EQ(plan.step_count(), 1u);
  EXPECT_EQ(stats.fused_passes, 1u);
  EXPECT_EQ(stats.peak_live_values, 4u);  // three inputs and the result
  PreparedProgram unfused_plan;
  auto plain = run_with(*rt, p, in, kUnfused, &unfused_plan);
  EXPECT_EQ(unfused_plan.step_count(), 24u);
  expect_identical(fused[0], plain[0]);
}

TEST(TracedFusion, DtypesBroadcastingScalarsAndRemainders) {
  auto rt = cpu_runtime();
  for (DType dt : {f64, c128, f32, c64}) {
    auto x = placeholder(dt, {n_dim(), 3});
    auto row = placeholder(dt, {3});  // broadcast along axis 0 (right-aligned)
    auto col = placeholder(dt, {n_dim(), 1});
    auto y = exp(x * row - col) / (x * x + 2.0) + sin(row);
    Program p = compile({y, y * 3.0}, {x, row, col});
    for (std::int64_t n : {1, 7, 1500}) {  // block 256: partial final blocks
      const Tensor in[3] = {random({n, 3}, dt, 1), random({3}, dt, 2), random({n, 1}, dt, 3)};
      expect_fused_equals_unfused(*rt, p, in, 5, 256);
    }
  }
}

TEST(TracedFusion, SelectClampConvertAndStridedInputs) {
  auto rt = cpu_runtime();
  auto x = placeholder(f64, {n_dim(), m_dim()});
  auto z = placeholder(f32, {n_dim(), m_dim()});
  auto pos = gt(x, zeros_like(x));
  auto y = where(pos, clamp(x * 2.0, -1.0, 1.0), exp(x)) + convert(z, f64) * x;
  Program p = compile({y}, {x, z});
  Tensor xv = random({40, 30}, f64, 5), zv = random({40, 30}, f32, 6);
  const Tensor plain[2] = {xv, zv};
  const Tensor strided[2] = {tftest::strided_copy(xv), tftest::strided_copy(zv)};
  expect_fused_equals_unfused(*rt, p, plain, 4, 128);
  expect_fused_equals_unfused(*rt, p, strided, 4, 128);
  // Strided and compact inputs agree too.
  expect_identical(run_with(*rt, p, plain, {})[0], run_with(*rt, p, strided, {})[0]);
}

TEST(TracedFusion, ParallelBlocksAboveThreshold) {
  CpuBackendOptions options;
  options.num_threads = 4;
  options.parallel_threshold = 1024;
  auto rt = cpu_runtime(options);
  auto x = placeholder(c128, {n_dim()});
  auto y = conj(x) * exp(x) + x;
  Program p = compile({y}, {x});
  const Tensor in[1] = {random({100003}, c128, 9)};
  expect_fused_equals_unfused(*rt, p, in, 3, 512);
}

TEST(TracedFusion, BoundariesReductionsOutputsAndExtensions) {
  auto rt = cpu_runtime();
  auto x = placeholder(f64, {n_dim()});
  auto e = exp(x);
  auto s = sum(e);          // a reduction reads e: e is materialised
  auto y = e * s + sin(x);  // broadcasting a rank-0 value
  auto scaled = extension::apply(std::make_shared<example::ScaleBy>(2.0), {cos(x) + 1.0})[0];
  auto z = scaled * y;               // the extension op is a fusion boundary
  Program p = compile({z, e}, {x});  // e is also an output
  const Tensor in[1] = {random({300}, f64, 2)};
  PreparedProgram plan;
  auto fused = run_with(*rt, p, in, PrepareOptions{true, 64}, &plan);
  auto plain = run_with(*rt, p, in, kUnfused);
  expect_identical(fused[0], plain[0]);
  expect_identical(fused[1], plain[1]);
  EXPECT_GE(plan.fused_group_count(), 2u);
  auto& cpu = rt->backend();
  Tensor xv = in[0];
  Tensor ev = exp(xv, cpu);
  Tensor ref = mul(mul(add(cos(xv, cpu), Tensor::scalar(1.0), cpu), Tensor::scalar(2.0), cpu),
                   add(mul(ev, sum(ev, cpu), cpu), sin(xv, cpu), cpu), cpu);
  EXPECT_TRUE(allclose(fused[0], ref, 1e-12, 1e-12));
}

TEST(TracedFusion, ZeroSizeAndBadBlock) {
  auto rt = cpu_runtime();
  auto x = placeholder(f64, {n_dim()});
  Program p = compile({exp(x) + x * x}, {x});
  const Tensor in[1] = {zeros({0})};
  EXPECT_EQ(run_with(*rt, p, in, {})[0].shape(), (Shape{0}));
  EXPECT_TF_ERROR(prepare(*rt, p, InputSignature::of(in), PrepareOptions{true, 0}),
                  ErrorKind::InvalidArgument);
}

TEST(TracedFusion, ComplexFromPartsJoinsTheChain) {
  // BinaryOp::Complex reads real operands and writes a complex result inside
  // the fused pass (like real/abs the other way).
  auto rt = cpu_runtime();
  for (DType dt : {f64, f32}) {
    auto x = placeholder(dt, {n_dim()});
    auto a = placeholder(dt, {n_dim()});
    auto z = binary(BinaryOp::Complex, sin(x) * a, x * x);
    auto y = abs(z * z + conj(z)) + real(z);
    Program p = compile({y}, {x, a});
    const Tensor in[2] = {random({1500}, dt, 4), random({1500}, dt, 5)};
    PreparedProgram plan;
    auto fused = run_with(*rt, p, in, PrepareOptions{true, 256}, &plan);
    EXPECT_EQ(plan.step_count(), 1u);
    EXPECT_EQ(plan.fused_group_count(), 1u);
    expect_fused_equals_unfused(*rt, p, in, 10, 256);
    auto& cpu = rt->backend();
    const Tensor zv = complex(mul(sin(in[0], cpu), in[1], cpu), mul(in[0], in[0], cpu), cpu);
    const Tensor ref = add(abs(add(mul(zv, zv, cpu), conj(zv, cpu), cpu), cpu), real(zv, cpu), cpu);
    EXPECT_EQ(max_abs_diff(fused[0], ref), 0.0) << name(dt);
  }
}

namespace {
// Bit-for-bit equality of two rank-0 results (max_abs_diff cannot tell -0 from +0).
void expect_same_bits(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.shape(), b.shape());
  ASSERT_EQ(a.numel(), 1);
  EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), itemsize(a.dtype())), 0) << max_abs_diff(a, b);
}
}  // namespace

// A sum, product or mean over every element of a chain's result joins the
// chain's pass: one step, no materialised chain, the unfused result bit for
// bit (the fused reduction follows the reduction kernel's order, including
// its split into parts above twice the parallel threshold, on two threads).
TEST(TracedFusion, FullReductionsJoinTheChain) {
  CpuBackendOptions options;
  options.num_threads = 2;
  options.parallel_threshold = 1000;
  auto rt = cpu_runtime(options);
  int compared = 0;
  for (DType dt : {f64, f32, c128}) {
    auto x = placeholder(dt, {n_dim(), 3});
    auto w = placeholder(dt, {n_dim(), 3});
    Program small = compile({sum(exp(x) * w + x)}, {x, w});
    Program others = compile({mean(cos(x) * w), prod(x * 0.001 + 1.0)}, {x, w});
    for (std::int64_t n : {1, 5, 341, 342, 700, 5000}) {  // 3n: below/above 1024, parts
      const Tensor in[2] = {random({n, 3}, dt, 1), random({n, 3}, dt, 2)};
      for (const Program* p : {&small, &others}) {
        PreparedProgram plan;
        auto fused = run_with(*rt, *p, in, {}, &plan);
        auto plain = run_with(*rt, *p, in, kUnfused);
        // One pass per output (and a step per scalar constant: 0.001 and 1.0).
        EXPECT_EQ(plan.step_count(), p == &small ? 1u : 4u);
        EXPECT_EQ(plan.fused_op_count(), p == &small ? 4u : 6u);
        for (std::size_t j = 0; j < fused.size(); ++j) expect_same_bits(fused[j], plain[j]);
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 3 * 6 * 2);
  // The reference: the direct ops.
  auto& cpu = rt->backend();
  const Tensor xv = random({700, 3}, f64, 3), wv = random({700, 3}, f64, 4);
  auto x = placeholder(f64, {n_dim(), 3});
  auto w = placeholder(f64, {n_dim(), 3});
  const Tensor in[2] = {xv, wv};
  const auto got = run_with(*rt, compile({sum(exp(x) * w + x)}, {x, w}), in, {});
  expect_same_bits(got[0], sum(add(mul(exp(xv, cpu), wv, cpu), xv, cpu), cpu));
}

// Reductions that do not join: over some axes, keepdim, a chain result that
// is also an output or read elsewhere, max, and integer sums.
TEST(TracedFusion, OtherReductionsStayOutOfThePass) {
  auto rt = cpu_runtime();
  auto x = placeholder(f64, {n_dim(), 3});
  auto c = exp(x) * 2.0;
  const Tensor in[1] = {random({50, 3}, f64, 7)};
  auto check = [&](const Program& p, std::size_t steps, std::size_t fused_ops) {
    PreparedProgram plan;
    auto fused = run_with(*rt, p, in, {}, &plan);
    auto plain = run_with(*rt, p, in, kUnfused);
    EXPECT_EQ(plan.step_count(), steps);
    EXPECT_EQ(plan.fused_op_count(), fused_ops);
    for (std::size_t j = 0; j < fused.size(); ++j) expect_identical(fused[j], plain[j]);
  };
  // Steps: the scalar constant 2.0 (and 1.0), the pass, the reduction.
  check(compile({sum(c, {0})}, {x}), 3, 2);
  check(compile({sum(c, {0, 1}, true)}, {x}), 3, 2);
  check(compile({sum(c), c}, {x}), 3, 2);
  check(compile({sum(c), c + 1.0}, {x}), 5, 2);  // c is read twice: no reduction joins
  check(compile({max(c)}, {x}), 3, 2);
  auto k = placeholder(i64, {n_dim()});
  auto& cpu = rt->backend();
  const Tensor kin[1] = {cast(mul(random({9}, f64, 8), Tensor::scalar(100.0), cpu), i64, cpu)};
  PreparedProgram plan;
  auto prog = compile({sum(k * k + k)}, {k});
  auto fused = run_with(*rt, prog, kin, {}, &plan);
  EXPECT_EQ(plan.step_count(), 2u);
  expect_identical(fused[0], run_with(*rt, prog, kin, kUnfused)[0]);
}
