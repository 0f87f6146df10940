#include "tenferro/ad/eager_extension.hpp"

#include "ad/eager/impl.hpp"

namespace tenferro {

EagerSession::EagerSession(const EagerRuntimePtr& rt) : rt_(rt) {
  if (!rt_) fail(ErrorKind::InvalidArgument, "EagerSession", "runtime is null");
  session_ = rt_->runtime()->enter_session();
}

const EngineId& EagerSession::engine() const {
  return session_->engine();
}

namespace {
const EagerRuntimePtr& validate(const ExtensionOpPtr& op, ListRef<EagerTensor> inputs) {
  if (!op) fail(ErrorKind::InvalidArgument, "apply_eager", "op is null");
  if (inputs.empty()) {
    fail(ErrorKind::InvalidArgument, std::string(op->name()),
         "at least one input tensor is required");
  }
  if (inputs.size() != op->input_count()) {
    fail(ErrorKind::InvalidArgument, std::string(op->name()), "family ", op->name(), " expects ",
         op->input_count(), " inputs, got ", inputs.size());
  }
  return detail::common_runtime(inputs, op->name());
}

std::vector<Tensor> values_of(ListRef<EagerTensor> inputs) {
  std::vector<Tensor> values;
  values.reserve(inputs.size());
  for (const auto& t : inputs) values.push_back(t.value());
  return values;
}
}  // namespace

std::vector<EagerTensor> apply_eager(const ExtensionOpPtr& op, ListRef<EagerTensor> inputs) {
  const EagerRuntimePtr& rt = validate(op, inputs);
  detail::require_rules_if_recorded(*rt, *op, inputs);
  std::vector<Tensor> outputs = rt->runtime()->apply(op, values_of(inputs));
  return detail::finish_outputs(rt, op, inputs, std::move(outputs));
}

namespace {
// The session must belong to the inputs' eager runtime (ContextMismatch) and
// to the engine the runtime selects now (RuntimeState).
void check_session(const EagerSession& session, const EagerRuntimePtr& rt, const Op& op) {
  if (session.runtime() != rt) {
    fail(ErrorKind::ContextMismatch, std::string(op.name()),
         "the session belongs to eager runtime ", session.runtime()->id(),
         " but the inputs to eager runtime ", rt->id(), "; use a session of the inputs' runtime");
  }
  const EngineId& selected = rt->runtime()->snapshot()->selected_engine();
  if (!(session.engine() == selected)) {
    fail_in(ErrorPhase::Execute, ErrorKind::RuntimeState, std::string(op.name()),
            "the session was entered on engine ", session.engine().str(), " but eager runtime ",
            rt->id(), " now selects engine ", selected.str(),
            "; leave this session and enter a new one");
  }
}

// The factory protocol after the input checks: target, ingress of every
// input, factory (outside any lock; its errors pass through unchanged),
// ensure of the module and the rules it carries.
void ensure_for(const EagerRuntimePtr& rt, std::string_view family, std::span<const Tensor> values,
                const ModuleFactory& factory) {
  const EagerExtensionTarget target = eager_extension_target(*rt);
  rt->runtime()->check_ingress(family, values);
  if (!factory)
    fail(ErrorKind::InvalidArgument, std::string(family), "the module factory is empty");
  ExtensionModulePtr module = factory(target);
  if (!module) {
    fail(ErrorKind::InvalidArgument, std::string(family),
         "the module factory returned null; return the family's module");
  }
  rt->ensure_module(module, family, target.engine);
}
}  // namespace

std::vector<EagerTensor> apply_eager_in_session(EagerSession& session, const ExtensionOpPtr& op,
                                                ListRef<EagerTensor> inputs) {
  const EagerRuntimePtr& rt = validate(op, inputs);
  check_session(session, rt, *op);
  detail::require_rules_if_recorded(*rt, *op, inputs);
  std::vector<Tensor> outputs =
      rt->runtime()->apply_in_session(session.engine_session(), op, values_of(inputs));
  return detail::finish_outputs(rt, op, inputs, std::move(outputs));
}

EagerExtensionTarget eager_extension_target(const EagerRuntime& rt) {
  auto snap = rt.runtime()->snapshot();
  const EngineRegistration& engine = snap->selected();
  return EagerExtensionTarget{engine.id(), std::string(engine.kind()),
                              engine.backend().placement()};
}

std::vector<EagerTensor> apply_eager_with_module(const ExtensionOpPtr& op,
                                                 ListRef<EagerTensor> inputs,
                                                 const ExtensionModulePtr& module) {
  const EagerRuntimePtr& rt = validate(op, inputs);
  // Every input error comes before the install, ingress too (as with a factory).
  rt->runtime()->check_ingress(op->name(), values_of(inputs));
  rt->ensure_module(module, op->name(), eager_extension_target(*rt).engine);
  return apply_eager(op, inputs);
}

std::vector<EagerTensor> apply_eager_with_module_factory(const ExtensionOpPtr& op,
                                                         ListRef<EagerTensor> inputs,
                                                         const ModuleFactory& factory) {
  const EagerRuntimePtr& rt = validate(op, inputs);
  ensure_for(rt, op->name(), values_of(inputs), factory);
  return apply_eager(op, inputs);
}

std::vector<EagerTensor> apply_eager_with_module_factory_in_session(EagerSession& session,
                                                                    const ExtensionOpPtr& op,
                                                                    ListRef<EagerTensor> inputs,
                                                                    const ModuleFactory& factory) {
  const EagerRuntimePtr& rt = validate(op, inputs);
  check_session(session, rt, *op);
  ensure_for(rt, op->name(), values_of(inputs), factory);
  return apply_eager_in_session(session, op, inputs);
}

void prepare_eager_in_place_input(const EagerTensor& input, std::string_view family,
                                  const ModuleFactory& factory) {
  check_in_place_eligible(input, family);
  const Tensor& value = input.value();
  ensure_for(input.runtime(), family, std::span<const Tensor>(&value, 1), factory);
}

void check_in_place_eligible(const EagerTensor& t, std::string_view op) {
  if (!t.defined()) fail(ErrorKind::InvalidArgument, std::string(op), "tensor is undefined");
  if (t.requires_grad() || t.impl()->node) {
    fail(ErrorKind::RuntimeState, std::string(op),
         "in-place execution needs an untracked value without recorded history; detach() it first");
  }
  if (capture_active()) {
    fail(ErrorKind::RuntimeState, std::string(op),
         "in-place execution is not allowed while a capture scope is active (also inside no_grad)");
  }
}

std::variant<Tensor, EagerTensor> take_unique(EagerTensor&& t) {
  check_in_place_eligible(t, "take_unique");
  // The eager handle must be the only one, and its value the only handle to
  // the storage once moved out.
  if (t.impl().use_count() != 1 || t.impl()->value.storage().use_count() != 1) return std::move(t);
  Tensor value = std::move(t.impl()->value);
  t = EagerTensor();  // the moved-from handle is undefined, not a husk without a value
  return value;
}

EagerTensor adopt_untracked(const EagerRuntimePtr& rt, Tensor value) {
  if (!rt) fail(ErrorKind::InvalidArgument, "adopt_untracked", "runtime is null");
  if (!value.defined()) fail(ErrorKind::InvalidArgument, "adopt_untracked", "value is undefined");
  rt->runtime()->check_ingress("adopt_untracked", std::span<const Tensor>(&value, 1));
  return detail::make_eager(rt, std::move(value));
}

}  // namespace tenferro
