// prepare/run: values, named sizes bound per run without re-preparation,
// shape constraints at binding, stale plans, run_compiled cache.

#include "ad/traced_fixtures.hpp"
#include "tenferro/ad/ops.hpp"

using namespace ttest;

namespace {
// y = sum(x * w, axis 1) + exp(b) for x [n, k], w [k], b [n].
struct Model {
  TracedTensor x = placeholder(f64, {n_dim(), SymDim::var("k")}, "x");
  TracedTensor w = placeholder(f64, {SymDim::var("k")}, "w");
  TracedTensor b = placeholder(f64, {n_dim()}, "b");
  Program program = compile({sum(x * w, {1}) + exp(b)}, {x, w, b});
};

Tensor reference(const Tensor& x, const Tensor& w, const Tensor& b, Backend& cpu) {
  return add(sum(mul(x, w, cpu), {1}, cpu), exp(b, cpu), cpu);
}
}  // namespace

TEST(TracedRun, SymbolicSizesBindPerRunWithoutRecompiling) {
  auto rt = cpu_runtime();
  Model m;
  const ProgramCounters before = rt->program_counters();
  Tensor x0 = random({3, 2}, f64, 1), w0 = random({2}, f64, 2), b0 = random({3}, f64, 3);
  const Tensor sig_inputs[3] = {x0, w0, b0};
  PreparedProgram plan = prepare(*rt, m.program, InputSignature::of(sig_inputs));
  for (std::int64_t n : {3, 5, 1, 17}) {
    for (std::int64_t k : {2, 4}) {
      Tensor x = random({n, k}, f64, 10 + n), w = random({k}, f64, 20 + k),
             b = random({n}, f64, 30);
      RunStats stats;
      const Tensor in[3] = {x, w, b};
      auto out = run(*rt, plan, in, &stats);
      ASSERT_EQ(out.size(), 1u);
      EXPECT_TRUE(allclose(out[0], reference(x, w, b, rt->backend()), 1e-12, 1e-12));
      EXPECT_EQ(stats.bindings.at("n"), n);
      EXPECT_EQ(stats.bindings.at("k"), k);
    }
  }
  const ProgramCounters after = rt->program_counters();
  EXPECT_EQ(after.preparations, before.preparations + 1);  // prepared once, run 8 times
  EXPECT_EQ(after.runs, before.runs + 8);
  EXPECT_EQ(after.runs, before.runs + 8);
}

TEST(TracedRun, BindingErrorsAreTyped) {
  auto rt = cpu_runtime();
  Model m;
  const Tensor ok[3] = {random({3, 2}, f64, 1), random({2}, f64, 2), random({3}, f64, 3)};
  PreparedProgram plan = prepare(*rt, m.program, InputSignature::of(ok));
  // n is 3 from x but 4 from b.
  EXPECT_TF_ERROR(run(*rt, plan, {ok[0], ok[1], random({4}, f64, 3)}), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(run(*rt, plan, {ok[0], ok[1], random({3}, f32, 3)}), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(run(*rt, plan, {ok[0], ok[1], random({3, 1}, f64, 3)}), ErrorKind::RankMismatch);
  EXPECT_TF_ERROR(run(*rt, plan, {ok[0], ok[1]}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(run(*rt, plan, {ok[0], ok[1], Tensor()}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(run(*rt, PreparedProgram(), ok), ErrorKind::InvalidArgument);
  // Constant extents must match exactly.
  auto x = placeholder(f64, {2});
  Program p = compile({exp(x)}, {x});
  const Tensor three[1] = {random({3}, f64, 1)};
  EXPECT_TF_ERROR(prepare(*rt, p, InputSignature::of(three)), ErrorKind::ShapeMismatch);
  // A derived extent (2n) is checked after binding.
  auto a = placeholder(f64, {n_dim()});
  auto a2 = placeholder(f64, {n_dim() * 2});
  Program q = compile({sum(a) + sum(a2)}, {a, a2});
  const Tensor good[2] = {random({3}, f64, 1), random({6}, f64, 2)};
  PreparedProgram qp = prepare(*rt, q, InputSignature::of(good));
  EXPECT_NO_THROW(run(*rt, qp, good));
  EXPECT_TF_ERROR(run(*rt, qp, {good[0], random({5}, f64, 2)}), ErrorKind::ShapeMismatch);
}

TEST(TracedRun, ExtensionNodesRunAndConstraintsBindWithFamilyName) {
  auto rt = cpu_runtime();
  auto a = placeholder(f64, {n_dim()});
  auto b = placeholder(f64, {m_dim()});
  auto swapped = extension::apply(std::make_shared<example::Swap>(), {a, b});
  auto scaled = extension::apply(std::make_shared<example::ScaleBy>(3.0), {swapped[0]})[0];
  Program p = compile({scaled, swapped[1]}, {a, b});
  const Tensor in[2] = {Tensor::from_col_major<double>({2}, {1, 2}),
                        Tensor::from_col_major<double>({2}, {5, 7})};
  PreparedProgram plan = prepare(*rt, p, InputSignature::of(in));
  auto out = run(*rt, plan, in);
  EXPECT_EQ(out[0].to_vector<double>(), (std::vector<double>{15, 21}));
  EXPECT_EQ(out[1].to_vector<double>(), (std::vector<double>{1, 2}));
  // n != m violates the family's same-shape constraint: at prepare and at run.
  const Tensor bad[2] = {in[0], Tensor::from_col_major<double>({3}, {1, 2, 3})};
  for (int pass = 0; pass < 2; ++pass) {
    try {
      if (pass == 0) prepare(*rt, p, InputSignature::of(bad));
      if (pass == 1) run(*rt, plan, bad);
      FAIL() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::ShapeMismatch);
      EXPECT_EQ(e.op(), "example.swap.v1");
    }
  }
}

TEST(TracedRun, StalePlansAfterReconfigure) {
  auto rt = cpu_runtime();
  auto x = placeholder(f64, {n_dim()});
  Program p = compile({exp(x) * 2.0}, {x});
  const Tensor in[1] = {random({4}, f64, 1)};
  PreparedProgram plan = prepare(*rt, p, InputSignature::of(in));
  EXPECT_EQ(plan.epoch(), rt->epoch());
  const auto expected = run(*rt, plan, in)[0];
  clear_program_cache(*rt);
  run_compiled(*rt, p, in);
  EXPECT_EQ(program_cache_stats(*rt).misses, 1u);
  // Any reconfiguration bumps the epoch: the explicit path reports it ...
  auto other = std::make_shared<tenferro::SimpleModule>("test.other");
  ASSERT_TRUE(rt->install_module(other));
  EXPECT_EQ(rt->epoch(), plan.epoch() + 1);
  EXPECT_EQ(rt->epoch(), rt->snapshot()->epoch());  // published with the snapshot
  EXPECT_TF_ERROR(run(*rt, plan, in), ErrorKind::RuntimeState);
  // ... the convenience path prepares again.
  expect_identical(run_compiled(*rt, p, in)[0], expected);
  EXPECT_EQ(program_cache_stats(*rt).misses, 2u);
  expect_identical(run_compiled(*rt, p, in)[0], expected);
  EXPECT_EQ(program_cache_stats(*rt).hits, 1u);
  // A plan from another runtime is a context error.
  auto rt2 = cpu_runtime();
  EXPECT_TF_ERROR(run(*rt2, prepare(*rt, p, InputSignature::of(in)), in),
                  ErrorKind::ContextMismatch);
}

TEST(TracedRun, RunCompiledCachesByStructureAndServesAnySize) {
  auto rt = cpu_runtime();
  clear_program_cache(*rt);
  auto build = [](double c) {
    auto x = placeholder(f64, {n_dim()});
    return compile({x * constant(Tensor::scalar(c))}, {x});
  };
  const Program p1 = build(2.0), p2 = build(5.0);
  ASSERT_EQ(p1.fingerprint(), p2.fingerprint());
  const ProgramCounters before = rt->program_counters();
  for (std::int64_t n : {2, 3, 9}) {
    Tensor x = random({n}, f64, static_cast<std::uint64_t>(n));
    EXPECT_TRUE(
        allclose(run_compiled(*rt, p1, {x})[0], mul(x, Tensor::scalar(2.0), rt->backend())));
    // Same structure, other constant: the cached preparation runs with p2's constant.
    EXPECT_TRUE(
        allclose(run_compiled(*rt, p2, {x})[0], mul(x, Tensor::scalar(5.0), rt->backend())));
  }
  const CacheStats stats = program_cache_stats(*rt);
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.hits, 5u);
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(rt->program_counters().preparations, before.preparations + 1);
  // Another dtype is another signature.
  run_compiled(*rt, build(1.0), {random({2}, f64, 1)});
  EXPECT_TF_ERROR(run_compiled(*rt, p1, {random({2}, f32, 1)}), ErrorKind::DTypeMismatch);
  rt->clear_caches();
  EXPECT_EQ(program_cache_stats(*rt).entries, 0u);
}

TEST(TracedRun, StridedInputsZeroSizeAndRankZero) {
  auto rt = cpu_runtime();
  auto x = placeholder(f64, {n_dim(), 2});
  Program p = compile({transpose(x) * 2.0, sum(x)}, {x});
  Tensor v = random({3, 2}, f64, 4);
  auto out = run_compiled(*rt, p, {tftest::strided_copy(v)});
  EXPECT_TRUE(allclose(
      out[0], mul(permute(v, Axes{1, 0}, rt->backend()), Tensor::scalar(2.0), rt->backend())));
  EXPECT_NEAR(out[1].item().real(), sum(v, rt->backend()).item().real(), 1e-12);
  auto empty = run_compiled(*rt, p, {zeros({0, 2})});
  EXPECT_EQ(empty[0].shape(), (Shape{2, 0}));
  EXPECT_EQ(empty[1].item().real(), 0.0);
  auto s = placeholder(c128, {});
  Program ps = compile({s * s}, {s});
  Tensor z = Tensor::scalar(c128_t(1.0, 2.0));
  EXPECT_EQ(run_compiled(*rt, ps, {z})[0].item().to_complex(), c128_t(-3.0, 4.0));
}

// Outputs leave a run by move only where no later output names them again:
// a value named twice, an input and a fused group's result returned as
// outputs all come back with their values; operands that are a run of the
// inputs in order are read in place (the same values as gathered ones).
TEST(TracedRun, RepeatedInputAndFusedOutputsAllComeBack) {
  auto rt = cpu_runtime();
  auto x = placeholder(f64, {SymDim::var("n")}, "x");
  auto w = placeholder(f64, {SymDim::var("n")}, "w");
  const TracedTensor y = exp(x) * w + x;  // one fused group over (x, w): in place
  const TracedTensor z = w * x;           // operands (w, x): not in input order
  const Program p = compile({y, z, y, x, sum(y)}, {x, w});
  const Tensor xv = random({5}, f64, 1), wv = random({5}, f64, 2);
  const Tensor in[2] = {xv, wv};
  for (bool fuse : {true, false}) {
    const PreparedProgram plan =
        prepare(*rt, p, InputSignature::of(in), PrepareOptions{fuse, 2048});
    auto& cpu = rt->backend();
    const Tensor want_y = add(mul(exp(xv, cpu), wv, cpu), xv, cpu);
    for (int repeat = 0; repeat < 2; ++repeat) {
      const auto out = run(*rt, plan, in);
      ASSERT_EQ(out.size(), 5u);
      EXPECT_TRUE(allclose(out[0], want_y, 1e-14, 1e-14)) << fuse;
      EXPECT_TRUE(allclose(out[1], mul(wv, xv, cpu), 0.0, 0.0)) << fuse;
      EXPECT_TRUE(allclose(out[2], want_y, 1e-14, 1e-14)) << fuse;
      EXPECT_EQ(out[0].raw_data(), out[2].raw_data()) << fuse;  // one value, named twice
      EXPECT_EQ(out[3].raw_data(), xv.raw_data()) << fuse;      // the input itself
      EXPECT_NEAR(out[4].item().real(), sum(want_y, cpu).item().real(), 1e-13) << fuse;
    }
  }
}
