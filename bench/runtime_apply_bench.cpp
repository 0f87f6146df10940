// Cost of one extension-op call through Runtime::apply on a 4-element tensor:
// warm (prepared plan cached) and cold (plan cache cleared before each call).

#include <benchmark/benchmark.h>

#include "tenferro/backend/cpu/cpu_backend.hpp"
#include "tenferro/runtime/simple_family.hpp"

namespace {

using namespace tenferro;

class AddOne final : public ExtensionOpWithParams<AddOne, NoParams> {
 public:
  AddOne() : ExtensionOpWithParams("bench.add_one.v1", {}) {}
  std::size_t input_count() const override { return 1; }
  std::size_t output_count() const override { return 1; }
  InferenceResult infer(std::span<const TensorMeta> in) const override { return {{in[0]}, {}}; }
};

RuntimePtr make_runtime() {
  auto module = std::make_shared<SimpleModule>("bench.families");
  module->family<AddOne>("bench.add_one.v1", [](const AddOne&, ExecutionScope& scope,
                                                ExtensionCaches&, std::span<const Tensor> in) {
    Tensor x = scope.compact(in[0]);
    Tensor y = scope.backend().empty(x.shape(), x.dtype());
    const double* src = x.data<double>();
    double* dst = static_cast<double*>(y.raw_data());
    for (std::int64_t i = 0; i < x.numel(); ++i) dst[i] = src[i] + 1.0;
    return std::vector<Tensor>{y};
  });
  return Runtime::builder()
      .backend(std::make_shared<CpuBackend>(CpuBackendOptions{1}))
      .module(module)
      .build();
}

void BM_ExtensionApplyWarm(benchmark::State& state) {
  auto rt = make_runtime();
  auto op = std::make_shared<AddOne>();
  const Tensor x = Tensor::from_col_major({4}, std::vector<double>{1, 2, 3, 4});
  const std::vector<Tensor> inputs{x};
  rt->apply(op, inputs);  // prepare once
  for (auto _ : state) benchmark::DoNotOptimize(rt->apply(op, inputs));
}
BENCHMARK(BM_ExtensionApplyWarm);

void BM_ExtensionApplyCold(benchmark::State& state) {
  auto rt = make_runtime();
  auto op = std::make_shared<AddOne>();
  const Tensor x = Tensor::from_col_major({4}, std::vector<double>{1, 2, 3, 4});
  const std::vector<Tensor> inputs{x};
  for (auto _ : state) {
    rt->clear_caches();
    benchmark::DoNotOptimize(rt->apply(op, inputs));
  }
}
BENCHMARK(BM_ExtensionApplyCold);

}  // namespace

BENCHMARK_MAIN();
