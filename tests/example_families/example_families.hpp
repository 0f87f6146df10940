#pragma once
// Two example families in a separate library that uses only public headers,
// as an out-of-tree family library would: scale_by (y = k * x) and swap (two
// inputs, two outputs, returned swapped without copying).

#include "tenferro/runtime/simple_family.hpp"

namespace example {

struct ScaleParams {
  double k = 1.0;
  bool operator==(const ScaleParams&) const = default;
};
std::size_t hash_value(const ScaleParams& p);

class ScaleBy final : public tenferro::ExtensionOpWithParams<ScaleBy, ScaleParams> {
 public:
  static constexpr std::string_view kFamily = "example.scale_by.v1";
  explicit ScaleBy(double k) : ExtensionOpWithParams(ScaleParams{k}) {}
  double k() const { return params().k; }
  std::size_t input_count() const override { return 1; }
  std::size_t output_count() const override { return 1; }
  tenferro::InferenceResult infer(std::span<const tenferro::TensorMeta> inputs) const override;
};

class Swap final : public tenferro::ExtensionOpWithParams<Swap, tenferro::NoParams> {
 public:
  static constexpr std::string_view kFamily = "example.swap.v1";
  Swap() : ExtensionOpWithParams(tenferro::NoParams{}) {}
  std::size_t input_count() const override { return 2; }
  std::size_t output_count() const override { return 2; }
  /// Declares "inputs 0 and 1 must have the same shape".
  tenferro::InferenceResult infer(std::span<const tenferro::TensorMeta> inputs) const override;
};

/// Module "example.families" with both families on the CPU engine; scale_by
/// also owns a cache "scales" (one entry per k, counting how often it ran).
std::shared_ptr<tenferro::SimpleModule> make_example_module();

}  // namespace example
