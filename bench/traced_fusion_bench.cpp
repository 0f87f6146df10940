// The traced tier against direct ops on "8 x tanh(t * a + b)" over 2^20 f64
// elements (fused: one pass over memory; direct: 24 passes, 24 temporaries),
// and the prepare/run costs of a small and a large program. The chain
// benchmarks take the thread count (0: one per core).

#include <benchmark/benchmark.h>

#include "tenferro/ad/program.hpp"
#include "tenferro/backend/cpu/cpu_backend.hpp"

namespace {

using namespace tenferro;

constexpr std::int64_t kSize = std::int64_t{1} << 20;
constexpr int kLayers = 8;

struct ChainInputs {
  Tensor t, a, b;
  ChainInputs() {
    Generator gen(7);
    t = randn({kSize}, f64, gen);
    a = randn({kSize}, f64, gen);
    b = randn({kSize}, f64, gen);
  }
};

Program chain_program() {
  auto t = placeholder(f64, {SymDim::var("n")});
  auto a = placeholder(f64, {SymDim::var("n")});
  auto b = placeholder(f64, {SymDim::var("n")});
  TracedTensor y = t;
  for (int i = 0; i < kLayers; ++i) y = tanh(y * a + b);
  return compile({y}, {t, a, b});
}

void BM_ChainDirectOps(benchmark::State& state) {
  auto cpu = std::make_shared<CpuBackend>(CpuBackendOptions{static_cast<int>(state.range(0))});
  ChainInputs in;
  ScopedCpuSession session(*cpu);
  for (auto _ : state) {
    Tensor y = in.t;
    for (int i = 0; i < kLayers; ++i) y = tanh(add(mul(y, in.a, *cpu), in.b, *cpu), *cpu);
    benchmark::DoNotOptimize(y.raw_data());
  }
  state.SetItemsProcessed(state.iterations() * kSize);
}

void chain_traced(benchmark::State& state, bool fuse) {
  auto rt = Runtime::builder()
                .backend(std::make_shared<CpuBackend>(
                    CpuBackendOptions{static_cast<int>(state.range(0))}))
                .build();
  ChainInputs in;
  const Tensor inputs[3] = {in.t, in.a, in.b};
  Program p = chain_program();
  PreparedProgram plan = prepare(*rt, p, InputSignature::of(inputs), PrepareOptions{fuse, 2048});
  for (auto _ : state) {
    auto out = run(*rt, plan, inputs);
    benchmark::DoNotOptimize(out[0].raw_data());
  }
  state.SetItemsProcessed(state.iterations() * kSize);
}
void BM_ChainTracedFused(benchmark::State& state) {
  chain_traced(state, true);
}
void BM_ChainTracedUnfused(benchmark::State& state) {
  chain_traced(state, false);
}

// Small: a few ops on 8-element vectors. Large: 64 layers of matmul + tanh
// with 64 x 64 weights (about 200 nodes).
Program small_program() {
  auto x = placeholder(f64, {SymDim::var("n")});
  auto w = placeholder(f64, {SymDim::var("n")});
  return compile({sum(exp(x) * w + x)}, {x, w});
}
std::vector<Tensor> small_inputs() {
  Generator gen(1);
  return {randn({8}, f64, gen), randn({8}, f64, gen)};
}
Program large_program(std::vector<Tensor>* inputs) {
  Generator gen(2);
  const std::int64_t d = 64;
  auto x = placeholder(f64, {d, SymDim::var("batch")});
  TracedTensor h = x;
  for (int l = 0; l < 64; ++l) {
    Tensor w = randn({d, d}, f64, gen);
    Tensor b = randn({d, 1}, f64, gen);
    h = tanh(matmul(constant(w), h) * (1.0 / 8.0) + constant(b));
  }
  if (inputs) *inputs = {randn({d, 32}, f64, gen)};
  return compile({sum(h)}, {x});
}

void BM_PrepareSmall(benchmark::State& state) {
  auto rt = Runtime::builder().backend(std::make_shared<CpuBackend>()).build();
  Program p = small_program();
  auto in = small_inputs();
  for (auto _ : state) benchmark::DoNotOptimize(prepare(*rt, p, InputSignature::of(in)));
}
void BM_RunSmall(benchmark::State& state) {
  auto rt = Runtime::builder().backend(std::make_shared<CpuBackend>()).build();
  Program p = small_program();
  auto in = small_inputs();
  PreparedProgram plan = prepare(*rt, p, InputSignature::of(in));
  for (auto _ : state) benchmark::DoNotOptimize(run(*rt, plan, in));
}
// The suite's overhead_small_program rows: the same program with static
// shapes on 4 elements, one thread, and the same four ops as direct calls
// (eager, untracked).
void BM_RunSmallStatic(benchmark::State& state) {
  auto rt = Runtime::builder().backend(std::make_shared<CpuBackend>(CpuBackendOptions{1})).build();
  auto x = placeholder(f64, {4});
  auto w = placeholder(f64, {4});
  Program p = compile({sum(exp(x) * w + x)}, {x, w});
  Generator gen(1);
  const std::vector<Tensor> in{randn({4}, f64, gen), randn({4}, f64, gen)};
  PreparedProgram plan = prepare(*rt, p, InputSignature::of(in));
  for (auto _ : state) benchmark::DoNotOptimize(run(*rt, plan, in));
}
void BM_SmallDirectOps(benchmark::State& state) {
  CpuBackend cpu(CpuBackendOptions{1});
  Generator gen(1);
  const std::vector<Tensor> in{randn({4}, f64, gen), randn({4}, f64, gen)};
  for (auto _ : state)
    benchmark::DoNotOptimize(sum(add(mul(exp(in[0], cpu), in[1], cpu), in[0], cpu), cpu));
}
void BM_PrepareLarge(benchmark::State& state) {
  auto rt = Runtime::builder().backend(std::make_shared<CpuBackend>()).build();
  std::vector<Tensor> in;
  Program p = large_program(&in);
  for (auto _ : state) benchmark::DoNotOptimize(prepare(*rt, p, InputSignature::of(in)));
}
void BM_RunLarge(benchmark::State& state) {
  auto rt = Runtime::builder().backend(std::make_shared<CpuBackend>()).build();
  std::vector<Tensor> in;
  Program p = large_program(&in);
  PreparedProgram plan = prepare(*rt, p, InputSignature::of(in));
  for (auto _ : state) benchmark::DoNotOptimize(run(*rt, plan, in));
}
void BM_CompileLarge(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(large_program(nullptr));
}

}  // namespace

BENCHMARK(BM_ChainDirectOps)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ChainTracedFused)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ChainTracedUnfused)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PrepareSmall)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RunSmall)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RunSmallStatic)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SmallDirectOps)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PrepareLarge)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RunLarge)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CompileLarge)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
