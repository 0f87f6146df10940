#pragma once
// The traced einsum over symbolic extents: one extension op whose CPU engine
// plans the contraction when the dimensions bind (prepare sees the concrete
// shapes), so a symbolic-size program is prepared once per shape and its
// order is the one for the bound extents, not for a guess. The op carries
// its AD rules (einsum is multilinear: every derivative is an einsum again).
// Private to src/einsum/.

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "einsum/common.hpp"
#include "tenferro/ad/rules.hpp"
#include "tenferro/ad/traced.hpp"
#include "tenferro/ops/extension_op.hpp"
#include "tenferro/runtime/module.hpp"

namespace tenferro::einsum_detail {

class EinsumOp final : public ExtensionOp, public SelfInstallingOp, public ad::RuleCarryingOp {
 public:
  static constexpr std::string_view kFamily = "tenferro.einsum.v1";
  EinsumOp(Spec spec, EinsumOptions options);
  const FamilyId& family_id() const override { return family_; }
  const Spec& spec() const { return spec_; }
  const EinsumOptions& options() const { return options_; }
  std::size_t hash() const override { return hash_; }
  bool equals(const Op& other) const override;
  std::size_t input_count() const override { return spec_.inputs.size(); }
  std::size_t output_count() const override { return 1; }
  std::string describe() const override;
  /// One dtype, the spec's ranks, constant extents checked as einsum() does;
  /// a symbolic extent must equal its label's extent (a constraint checked
  /// when dimensions bind): only a constant 1 broadcasts.
  InferenceResult infer(std::span<const TensorMeta> in) const override;
  /// Any engine: einsum runs on the Backend kernels (gemm, copy, binary,
  /// reduce); one a backend lacks is Unsupported naming it.
  ExtensionModulePtr module_for(const EngineRegistration& engine) const override;
  const ad::RuleSet& ad_rules() const override { return rules(); }
  static const ad::RuleSet& rules();

 private:
  FamilyId family_;
  Spec spec_;
  EinsumOptions options_;
  std::size_t hash_ = 0;
};

/// The reverse pass of an EinsumOp (family tenferro.einsum_pullback.v1):
/// inputs the forward's operands and the output cotangent, outputs every
/// operand's cotangent. Its engine plans the forward for the bound shapes
/// (the same path the forward node runs) and pulls the cotangent back along
/// that tree (pullback_direct). Its jvp is einsum nodes again (the
/// cotangents are multilinear), so every higher order works.
class EinsumPullbackOp final : public ExtensionOp,
                               public SelfInstallingOp,
                               public ad::RuleCarryingOp {
 public:
  static constexpr std::string_view kFamily = "tenferro.einsum_pullback.v1";
  explicit EinsumPullbackOp(std::shared_ptr<const EinsumOp> forward);
  const FamilyId& family_id() const override { return family_; }
  const EinsumOp& forward() const { return *forward_; }
  std::size_t hash() const override { return hash_; }
  bool equals(const Op& other) const override;
  std::size_t input_count() const override { return forward_->input_count() + 1; }
  std::size_t output_count() const override { return forward_->input_count(); }
  std::string describe() const override;
  /// The forward's inference on the operands (its constraints); the
  /// cotangents have the operands' metas.
  InferenceResult infer(std::span<const TensorMeta> in) const override;
  ExtensionModulePtr module_for(const EngineRegistration& engine) const override;
  const ad::RuleSet& ad_rules() const override { return rules(); }
  static const ad::RuleSet& rules();

 private:
  FamilyId family_;
  std::shared_ptr<const EinsumOp> forward_;
  std::size_t hash_ = 0;
};

/// The einsum node on traced operands with some symbolic extent (the spec
/// parsed for their ranks); the options are checked now.
TracedTensor apply_traced(const Spec& spec, const std::vector<TracedTensor>& operands,
                          const EinsumOptions& options);

}  // namespace tenferro::einsum_detail
