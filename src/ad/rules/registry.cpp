#include "tenferro/ad/rules.hpp"

#include <atomic>
#include <shared_mutex>
#include <vector>

#include "tenferro/ops/primitives.hpp"

namespace tenferro::ad {

Residuals Residuals::of(std::initializer_list<int> in, std::initializer_list<int> out) {
  Residuals r{0, 0};
  for (int i : in) r.inputs |= std::uint64_t{1} << i;
  for (int j : out) r.outputs |= std::uint64_t{1} << j;
  return r;
}

struct AdContext::Table {
  mutable std::shared_mutex mutex;
  // std::map never moves its nodes and nothing is erased: find() may hand
  // out pointers that outlive its shared lock.
  std::map<std::string, RuleSet, std::less<>> rules;
  // The rules of each core primitive kind (Op::kind_key()), filled on the
  // first find of that kind: a rule set once registered never changes, so
  // the entry stays right; null until then.
  std::vector<std::atomic<const RuleSet*>> by_kind =
      std::vector<std::atomic<const RuleSet*>>(static_cast<std::size_t>(primitive_kind_count()));
};

AdContext::AdContext() : table_(std::make_unique<Table>()) {}
AdContext::~AdContext() = default;

std::shared_ptr<AdContext> AdContext::with_core_rules() {
  auto ctx = std::make_shared<AdContext>();
  register_core_rules(*ctx);
  return ctx;
}

namespace {
template <class F>
bool same_callable(const F& a, const F& b) {
  if (static_cast<bool>(a) != static_cast<bool>(b)) return false;
  if (!a) return true;
  if (a.target_type() != b.target_type()) return false;
  // Plain function pointers share one type: compare the pointers.
  using Ptr = typename F::result_type (*)(const RuleArgs&, std::span<const MaybeVal>);
  if (const auto* pa = a.template target<Ptr>()) return *pa == *b.template target<Ptr>();
  return true;
}
}  // namespace

bool same_rules(const RuleSet& a, const RuleSet& b) {
  return same_callable(a.jvp, b.jvp) && same_callable(a.vjp, b.vjp) &&
         static_cast<bool>(a.transpose) == static_cast<bool>(b.transpose) &&
         (!a.transpose || a.transpose.target_type() == b.transpose.target_type()) &&
         a.residuals.inputs == b.residuals.inputs && a.residuals.outputs == b.residuals.outputs &&
         a.non_differentiable == b.non_differentiable;
}

bool AdContext::register_rules(const std::string& name, RuleSet rules) {
  if (name.empty()) fail(ErrorKind::InvalidArgument, "register_rules", "op name must be non-empty");
  if (name.find('.') != std::string::npos)
    FamilyId validated(name);  // family ids must be well-formed
  if (!rules.jvp && !rules.vjp && !rules.transpose && !rules.non_differentiable) {
    fail(ErrorKind::InvalidArgument, name, "a rule set needs at least one of jvp, vjp, transpose");
  }
  std::unique_lock<std::shared_mutex> lock(table_->mutex);
  auto [it, added] = table_->rules.try_emplace(name, std::move(rules));
  if (added) return true;
  if (same_rules(it->second, rules)) return false;  // ensure: the same rules again
  fail(ErrorKind::InvalidArgument, name, "different AD rules for ", name,
       " are already registered in this context; a name has one rule set (registering the same "
       "rules again is a no-op)");
}

const RuleSet* AdContext::find(std::string_view name) const {
  std::shared_lock<std::shared_mutex> lock(table_->mutex);
  auto it = table_->rules.find(name);
  return it == table_->rules.end() ? nullptr : &it->second;
}

const RuleSet* AdContext::find(const Op& op) const {
  const std::int32_t key = op.kind_key();
  if (key >= 0 && key < primitive_kind_count()) {
    std::atomic<const RuleSet*>& slot = table_->by_kind[static_cast<std::size_t>(key)];
    if (const RuleSet* r = slot.load(std::memory_order_acquire)) return r;
    const RuleSet* r = find(op.name());
    if (r != nullptr) slot.store(r, std::memory_order_release);
    return r;
  }
  if (const RuleSet* r = find(op.name())) return r;
  if (const auto* carrier = dynamic_cast<const RuleCarryingOp*>(&op)) return &carrier->ad_rules();
  return nullptr;
}

const RuleSet& AdContext::require(const Op& op, std::string_view transform) const {
  const RuleSet* r = find(op);
  if (r == nullptr) {
    fail(ErrorKind::UnsupportedAdRule, std::string(op.name()), "no AD rules for ", op.name(),
         " (needed by ", transform,
         "); register a rule set for it in the AdContext, or install "
         "a module that carries its rules (ad::with_rules)");
  }
  return *r;
}

namespace {
class ModuleWithRules final : public ExtensionModule, public RuleProvider {
 public:
  ModuleWithRules(ExtensionModulePtr inner, FamilyRules rules)
      : inner_(std::move(inner)), rules_(std::move(rules)) {}
  std::string id() const override { return inner_->id(); }
  void configure(ModuleRegistrar& registrar) const override { inner_->configure(registrar); }
  void register_rules(AdContext& ctx) const override {
    register_module_rules(*inner_, ctx);
    for (const auto& [family, rules] : rules_) ctx.register_family(family, rules);
  }

 private:
  ExtensionModulePtr inner_;
  FamilyRules rules_;
};
}  // namespace

ExtensionModulePtr with_rules(ExtensionModulePtr module, FamilyRules rules) {
  if (!module) fail(ErrorKind::InvalidArgument, "with_rules", "module is null");
  for (const auto& [family, set] : rules) {
    if (!set.jvp && !set.vjp && !set.transpose && !set.non_differentiable) {
      fail(ErrorKind::InvalidArgument, family.str(),
           "a rule set needs at least one of jvp, vjp, transpose");
    }
  }
  return std::make_shared<const ModuleWithRules>(std::move(module), std::move(rules));
}

void register_module_rules(const ExtensionModule& module, AdContext& ctx) {
  if (const auto* provider = dynamic_cast<const RuleProvider*>(&module))
    provider->register_rules(ctx);
}

}  // namespace tenferro::ad
