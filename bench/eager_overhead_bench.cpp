// Per-op overheads of the eager tier on 4-element f64 tensors, one thread:
// untracked add, recorded add, forward+backward of a 1000-add chain (per add),
// grad of sum(A@B) for 2x2, and one eager extension call.

#include <benchmark/benchmark.h>

#include "tenferro/ad/eager_extension.hpp"
#include "tenferro/ad/eager_ops.hpp"
#include "tenferro/backend/cpu/cpu_backend.hpp"
#include "tenferro/einsum/einsum.hpp"
#include "tenferro/runtime/simple_family.hpp"

namespace {

using namespace tenferro;

EagerRuntimePtr make_rt() {
  return EagerRuntime::make_cpu(CpuBackendOptions{1});
}
Tensor four() {
  return Tensor::from_col_major({4}, std::vector<double>{1, 2, 3, 4});
}

void BM_DirectAdd(benchmark::State& state) {
  CpuBackend cpu(CpuBackendOptions{1});
  const Tensor a = four(), b = four();
  for (auto _ : state) benchmark::DoNotOptimize(add(a, b, cpu));
}
BENCHMARK(BM_DirectAdd);

void BM_DirectAddInSession(benchmark::State& state) {
  CpuBackend cpu(CpuBackendOptions{1});
  const Tensor a = four(), b = four();
  auto session = cpu.session();
  for (auto _ : state) benchmark::DoNotOptimize(add(a, b, cpu));
}
BENCHMARK(BM_DirectAddInSession);

void BM_AddUntracked(benchmark::State& state) {
  auto rt = make_rt();
  auto a = rt->tensor(four()), b = rt->tensor(four());
  for (auto _ : state) benchmark::DoNotOptimize(add(a, b));
}
BENCHMARK(BM_AddUntracked);

void BM_AddRecorded(benchmark::State& state) {
  auto rt = make_rt();
  auto a = rt->variable(four()), b = rt->tensor(four());
  for (auto _ : state) benchmark::DoNotOptimize(add(a, b));
}
BENCHMARK(BM_AddRecorded);

void BM_ChainForwardBackward(benchmark::State& state) {
  auto rt = make_rt();
  auto x = rt->variable(four()), one = rt->tensor(four());
  for (auto _ : state) {
    EagerTensor y = x;
    for (int i = 0; i < 1000; ++i) y = add(y, one);
    sum(y).backward();
  }
  state.SetItemsProcessed(state.iterations() * 1000);  // items/s = adds/s
}
BENCHMARK(BM_ChainForwardBackward)->Unit(benchmark::kMicrosecond);

void BM_GradSumMatmul2x2(benchmark::State& state) {
  auto rt = make_rt();
  auto a = rt->variable(Tensor::from_col_major({2, 2}, std::vector<double>{1, 2, 3, 4}));
  auto b = rt->variable(Tensor::from_col_major({2, 2}, std::vector<double>{5, 6, 7, 8}));
  for (auto _ : state) {
    sum(matmul(a, b)).backward();
    a.clear_grad();
    b.clear_grad();
  }
}
BENCHMARK(BM_GradSumMatmul2x2);

class AddOne final : public ExtensionOpWithParams<AddOne, NoParams> {
 public:
  AddOne() : ExtensionOpWithParams("bench.add_one.v1", {}) {}
  std::size_t input_count() const override { return 1; }
  std::size_t output_count() const override { return 1; }
  InferenceResult infer(std::span<const TensorMeta> in) const override { return {{in[0]}, {}}; }
};

void BM_ExtensionCallEager(benchmark::State& state) {
  auto module = std::make_shared<SimpleModule>("bench.families");
  module->family<AddOne>("bench.add_one.v1", [](const AddOne&, ExecutionScope& scope,
                                                ExtensionCaches&, std::span<const Tensor> in) {
    Tensor x = scope.compact(in[0]);
    Tensor y = scope.backend().empty(x.shape(), x.dtype());
    const double* s = x.data<double>();
    double* d = static_cast<double*>(y.raw_data());
    for (std::int64_t i = 0; i < x.numel(); ++i) d[i] = s[i] + 1.0;
    return std::vector<Tensor>{y};
  });
  auto rt = EagerRuntime::make(Runtime::builder()
                                   .backend(std::make_shared<CpuBackend>(CpuBackendOptions{1}))
                                   .module(module)
                                   .build());
  auto op = std::make_shared<AddOne>();
  const EagerTensor in[1] = {rt->tensor(four())};
  for (auto _ : state) benchmark::DoNotOptimize(apply_eager(op, in));
}
BENCHMARK(BM_ExtensionCallEager);

// einsum("ij,jk->ik") on 2x2 against the matmul it performs: eager warm
// (the plan from the runtime's cache), a prepared EinsumPlan, and the direct
// tier (parses and plans every call).
Tensor two_by_two(double first) {
  return Tensor::from_col_major({2, 2}, std::vector<double>{first, 2, 3, 4});
}

void BM_MatmulEager2x2(benchmark::State& state) {
  auto rt = make_rt();
  auto a = rt->tensor(two_by_two(1)), b = rt->tensor(two_by_two(5));
  for (auto _ : state) benchmark::DoNotOptimize(matmul(a, b));
}
BENCHMARK(BM_MatmulEager2x2);

void BM_EinsumEagerWarm2x2(benchmark::State& state) {
  auto rt = make_rt();
  auto a = rt->tensor(two_by_two(1)), b = rt->tensor(two_by_two(5));
  for (auto _ : state) benchmark::DoNotOptimize(einsum("ij,jk->ik", {a, b}));
}
BENCHMARK(BM_EinsumEagerWarm2x2);

void BM_EinsumPlanEager2x2(benchmark::State& state) {
  auto rt = make_rt();
  auto a = rt->tensor(two_by_two(1)), b = rt->tensor(two_by_two(5));
  const EinsumPlan plan = EinsumPlan::prepare("ij,jk->ik", DType::F64, {{2, 2}, {2, 2}});
  const std::vector<EagerTensor> ab{a, b};
  for (auto _ : state) benchmark::DoNotOptimize(plan.run(ab));
}
BENCHMARK(BM_EinsumPlanEager2x2);

void BM_MatmulDirect2x2(benchmark::State& state) {
  CpuBackend cpu(CpuBackendOptions{1});
  const Tensor a = two_by_two(1), b = two_by_two(5);
  for (auto _ : state) benchmark::DoNotOptimize(matmul(a, b, cpu));
}
BENCHMARK(BM_MatmulDirect2x2);

void BM_EinsumDirect2x2(benchmark::State& state) {
  CpuBackend cpu(CpuBackendOptions{1});
  const Tensor a = two_by_two(1), b = two_by_two(5);
  for (auto _ : state) benchmark::DoNotOptimize(einsum("ij,jk->ik", {a, b}, cpu));
}
BENCHMARK(BM_EinsumDirect2x2);

void BM_EinsumPlanDirect2x2(benchmark::State& state) {
  CpuBackend cpu(CpuBackendOptions{1});
  const Tensor a = two_by_two(1), b = two_by_two(5);
  const EinsumPlan plan = EinsumPlan::prepare("ij,jk->ik", DType::F64, {{2, 2}, {2, 2}});
  const std::vector<Tensor> ab{a, b};
  for (auto _ : state) benchmark::DoNotOptimize(plan.run(ab, cpu));
}
BENCHMARK(BM_EinsumPlanDirect2x2);

}  // namespace

BENCHMARK_MAIN();
