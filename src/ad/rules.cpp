#include "tenferro/ad/rules.hpp"

namespace tenferro::ad {

Residuals Residuals::of(std::initializer_list<int> in, std::initializer_list<int> out) {
  Residuals r{0, 0};
  for (int i : in) r.inputs |= std::uint64_t{1} << i;
  for (int j : out) r.outputs |= std::uint64_t{1} << j;
  return r;
}

std::shared_ptr<AdContext> AdContext::with_core_rules() {
  auto ctx = std::make_shared<AdContext>();
  register_core_rules(*ctx);
  return ctx;
}

void AdContext::register_rules(const std::string& name, RuleSet rules) {
  if (name.empty()) fail(ErrorKind::InvalidArgument, "register_rules", "op name must be non-empty");
  if (name.find('.') != std::string::npos)
    FamilyId validated(name);  // family ids must be well-formed
  if (!rules.jvp && !rules.vjp && !rules.transpose && !rules.non_differentiable) {
    fail(ErrorKind::InvalidArgument, name, "a rule set needs at least one of jvp, vjp, transpose");
  }
  if (!rules_.emplace(name, std::move(rules)).second) {
    fail(ErrorKind::InvalidArgument, name, "AD rules for ", name,
         " are already registered in this context; register each op once");
  }
}

const RuleSet* AdContext::find(const Op& op) const {
  auto it = rules_.find(op.name());
  return it == rules_.end() ? nullptr : &it->second;
}

const RuleSet& AdContext::require(const Op& op, std::string_view transform) const {
  const RuleSet* r = find(op);
  if (r == nullptr) {
    fail(ErrorKind::UnsupportedAdRule, std::string(op.name()), "no AD rules for ", op.name(),
         " (needed by ", transform, "); register a rule set for it in the AdContext");
  }
  return *r;
}

}  // namespace tenferro::ad
