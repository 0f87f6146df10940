#pragma once
// Two extension families defined outside tenferro with only its public API:
//   custom.softsquare.v1        y = log(1 + x^2), elementwise; AD: a jvp rule only
//                               (reverse mode comes from transposing it);
//   custom.maxplus_matmul.v1    tropical product C[i,j] = max_k A[i,k] + B[k,j];
//                               AD: the subgradient through the unique winner k.

#include "tenferro/ad/eager_extension.hpp"
#include "tenferro/runtime/simple_family.hpp"

namespace custom {

class SoftSquare final : public tenferro::ExtensionOpWithParams<SoftSquare, tenferro::NoParams> {
 public:
  static constexpr std::string_view kFamily = "custom.softsquare.v1";
  SoftSquare() : ExtensionOpWithParams(tenferro::NoParams{}) {}
  std::size_t input_count() const override { return 1; }
  std::size_t output_count() const override { return 1; }
  tenferro::InferenceResult infer(std::span<const tenferro::TensorMeta> in) const override;
};

class MaxPlusMatmul final
    : public tenferro::ExtensionOpWithParams<MaxPlusMatmul, tenferro::NoParams> {
 public:
  static constexpr std::string_view kFamily = "custom.maxplus_matmul.v1";
  MaxPlusMatmul() : ExtensionOpWithParams(tenferro::NoParams{}) {}
  std::size_t input_count() const override { return 2; }
  std::size_t output_count() const override { return 1; }
  /// [m, k] x [k, n] -> [m, n], f64; the k extents must agree (a constraint).
  tenferro::InferenceResult infer(std::span<const tenferro::TensorMeta> in) const override;
};

/// The module with both kernels on the CPU engine; it carries both
/// families' AD rules (ad::with_rules). One shared instance.
tenferro::ExtensionModulePtr make_module();
/// Both families' AD rules.
tenferro::ad::FamilyRules family_rules();

/// The families install themselves on a runtime's first call (module and
/// rules, through apply_eager_with_module_factory): no set-up, any eager
/// runtime with a CPU engine.

tenferro::EagerTensor softsquare(const tenferro::EagerTensor& x);
tenferro::EagerTensor maxplus_matmul(const tenferro::EagerTensor& a,
                                     const tenferro::EagerTensor& b);

}  // namespace custom
