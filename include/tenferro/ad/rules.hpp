#pragma once
// AD rule sets. An AdContext owns them (no global registry). Roles per op:
//   jvp        tangents out from primals and tangents in (absent = symbolic zero);
//   transpose  for ops linear in some inputs: cotangents in -> cotangents of
//              those linear inputs;
//   vjp        optional direct reverse rule, preferred when present;
//   residuals  which primal inputs/outputs the reverse rule (and the jvp rule
//              used for linearisation) reads; eager recording keeps only those.
// Reverse mode without a vjp rule is linearise-then-transpose: the jvp rule
// runs with symbolic tangent inputs and each linear op it emits is transposed.
//
// Complex convention: jvps are real-linear pushforwards; a vjp returns the
// cotangent under <a, b> = Re(sum conj(a) * b) (PyTorch's convention): for a
// real loss L, grad(z) = dL/dRe(z) + i dL/dIm(z).

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "tenferro/ad/emitter.hpp"
#include "tenferro/ops/extension_op.hpp"

namespace tenferro::ad {

/// Everything a rule sees. Primal inputs/outputs not declared as residuals are
/// invalid Vals when the rule runs in reverse mode (reading one is an error).
struct RuleArgs {
  Emitter& emitter;
  const Op& op;
  std::span<const Val> inputs;   // primal inputs
  std::span<const Val> outputs;  // primal outputs
  /// dtype and shape of every input and output, set by the drivers in every
  /// mode: undeclared residuals (and, in a transpose rule, the linear inputs)
  /// are invalid Vals, yet broadcasting and layout rules need their shapes.
  std::span<const TensorMeta> input_metas = {};
  std::span<const TensorMeta> output_metas = {};
};

using JvpRule =
    std::function<std::vector<MaybeVal>(const RuleArgs&, std::span<const MaybeVal> tangents)>;
/// `linear[i]` marks the inputs the op is being transposed in (their primal
/// Vals are invalid); returns one cotangent per input (nullopt for non-linear
/// inputs or zero contributions).
using TransposeRule = std::function<std::vector<MaybeVal>(
    const RuleArgs&, std::span<const bool> linear, std::span<const MaybeVal> cotangents)>;
using VjpRule =
    std::function<std::vector<MaybeVal>(const RuleArgs&, std::span<const MaybeVal> cotangents)>;

struct Residuals {
  std::uint64_t inputs = ~std::uint64_t{0};   // bit i: input i is read
  std::uint64_t outputs = ~std::uint64_t{0};  // bit j: output j is read
  static Residuals none() { return {0, 0}; }
  static Residuals all() { return {}; }
  static Residuals of(std::initializer_list<int> in, std::initializer_list<int> out);
  bool input(std::size_t i) const { return (inputs >> i) & 1u; }
  bool output(std::size_t j) const { return (outputs >> j) & 1u; }
};

struct RuleSet {
  JvpRule jvp;
  TransposeRule transpose;
  VjpRule vjp;
  Residuals residuals;
  /// Integer/bool-valued ops (comparisons, argmax, floor...) have zero
  /// derivative; such ops set this instead of rules.
  bool non_differentiable = false;
};

class AdContext {
 public:
  /// A context with the rules of every core primitive.
  static std::shared_ptr<AdContext> with_core_rules();
  AdContext() = default;

  /// Registers rules for an op name (a primitive name or an extension family
  /// id). A second registration of the same name is InvalidArgument; a
  /// malformed family id is InvalidArgument.
  void register_rules(const std::string& name, RuleSet rules);
  void register_family(const FamilyId& family, RuleSet rules) {
    register_rules(family.str(), std::move(rules));
  }
  /// The rules for `op`, or nullptr.
  const RuleSet* find(const Op& op) const;
  /// The rules for `op`; UnsupportedAdRule naming `transform` and the op when absent.
  const RuleSet& require(const Op& op, std::string_view transform) const;

 private:
  std::map<std::string, RuleSet, std::less<>> rules_;
};

/// Registers the rules of every core primitive into `ctx`.
void register_core_rules(AdContext& ctx);

}  // namespace tenferro::ad
