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
#include <utility>
#include <vector>

#include "tenferro/ad/emitter.hpp"
#include "tenferro/ops/extension_op.hpp"
#include "tenferro/runtime/module.hpp"

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
  /// Reverse mode (vjp): wanted[i] false marks an input whose cotangent
  /// nothing reads (an untracked operand), so the rule may skip it and
  /// return nullopt there; empty: every input is wanted.
  std::span<const bool> wanted = {};
  bool wants(std::size_t i) const { return wanted.empty() || (i < wanted.size() && wanted[i]); }
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
  /// Bit 63 stands for every position from 63 on (ops with more operands,
  /// such as einsum over a network, read all or none of those).
  bool input(std::size_t i) const { return (inputs >> (i < 63 ? i : 63)) & 1u; }
  bool output(std::size_t j) const { return (outputs >> (j < 63 ? j : 63)) & 1u; }
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

/// Implemented, next to ExtensionOp, by the ops of a family that carries its
/// own AD rules (linalg, einsum, FFT): every AdContext finds them after its
/// own table (AdContext::find), so eager recording and traced transforms
/// with any context, the default one included, differentiate the family
/// without registration. The rule set must outlive every op of the family
/// (a static of the family library).
class RuleCarryingOp {
 public:
  virtual ~RuleCarryingOp() = default;
  virtual const RuleSet& ad_rules() const = 0;
};

/// Holds rule sets by op name. Registration and lookup are thread-safe:
/// families may add their rules lazily (on first use) while other threads
/// record and differentiate. Rule sets are never removed, so a pointer from
/// find() stays valid for the context's lifetime.
class AdContext {
 public:
  /// A context with the rules of every core primitive.
  static std::shared_ptr<AdContext> with_core_rules();
  AdContext();
  ~AdContext();
  AdContext(const AdContext&) = delete;
  AdContext& operator=(const AdContext&) = delete;

  /// Ensures rules for an op name (a primitive name or an extension family
  /// id). Returns true when they were added. The same rules again (every
  /// role the same callable type, same residuals and flags) are a no-op that
  /// returns false; different rules under a registered name are
  /// InvalidArgument; a malformed family id is InvalidArgument.
  bool register_rules(const std::string& name, RuleSet rules);
  bool register_family(const FamilyId& family, RuleSet rules) {
    return register_rules(family.str(), std::move(rules));
  }
  /// The rules for `op`, or nullptr: the table's rules under op.name(),
  /// else the rules the op carries (RuleCarryingOp).
  const RuleSet* find(const Op& op) const;
  const RuleSet* find(std::string_view name) const;
  /// The rules for `op`; UnsupportedAdRule naming `transform` and the op when absent.
  const RuleSet& require(const Op& op, std::string_view transform) const;

 private:
  struct Table;
  std::unique_ptr<Table> table_;
};

/// Whether two rule sets are the same rules: each role empty in both or the
/// same callable type (the same lambda or function), and equal residuals
/// and flags. Captured values are not compared.
bool same_rules(const RuleSet& a, const RuleSet& b);

/// Implemented by extension modules that carry their families' AD rules.
/// The eager install-ensure path (and EagerRuntime::install_module,
/// EagerRuntime::make over a runtime with such modules) registers them in the
/// eager runtime's AdContext, so users never register a family's rules.
class RuleProvider {
 public:
  virtual ~RuleProvider() = default;
  /// Registers every family's rules (AdContext::register_rules semantics).
  virtual void register_rules(AdContext& ctx) const = 0;
};

/// Rules per family id, for with_rules.
using FamilyRules = std::vector<std::pair<FamilyId, RuleSet>>;

/// A module that forwards id() and configure() to `module` and carries
/// `rules` (a RuleProvider). `module` may itself be a RuleProvider; its rules
/// are registered too.
ExtensionModulePtr with_rules(ExtensionModulePtr module, FamilyRules rules);

/// Registers the rules `module` carries into `ctx` (nothing when it carries none).
void register_module_rules(const ExtensionModule& module, AdContext& ctx);

/// Registers the rules of every core primitive into `ctx`.
void register_core_rules(AdContext& ctx);

}  // namespace tenferro::ad
