#include "tenferro/ad/eager_extension.hpp"

#include "ad/eager_impl.hpp"

namespace tenferro {

EagerSession::EagerSession(const EagerRuntimePtr& rt) : rt_(rt) {
  if (!rt_) fail(ErrorKind::InvalidArgument, "EagerSession", "runtime is null");
  session_ = rt_->runtime()->enter_session();
}

namespace {
const EagerRuntimePtr& validate(const ExtensionOpPtr& op, std::span<const EagerTensor> inputs) {
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

std::vector<Tensor> values_of(std::span<const EagerTensor> inputs) {
  std::vector<Tensor> values;
  values.reserve(inputs.size());
  for (const auto& t : inputs) values.push_back(t.value());
  return values;
}
}  // namespace

std::vector<EagerTensor> apply_eager(const ExtensionOpPtr& op,
                                     std::span<const EagerTensor> inputs) {
  const EagerRuntimePtr& rt = validate(op, inputs);
  std::vector<Tensor> outputs = rt->runtime()->apply(op, values_of(inputs));
  return detail::finish_outputs(rt, op, inputs, std::move(outputs));
}

std::vector<EagerTensor> apply_eager_in_session(EagerSession& session, const ExtensionOpPtr& op,
                                                std::span<const EagerTensor> inputs) {
  const EagerRuntimePtr& rt = validate(op, inputs);
  if (session.runtime() != rt) {
    fail(ErrorKind::ContextMismatch, std::string(op->name()),
         "the session belongs to eager runtime ", session.runtime()->id(),
         " but the inputs to runtime ", rt->id(), "; use a session of the inputs' runtime");
  }
  std::vector<Tensor> outputs =
      rt->runtime()->apply_in_session(session.engine_session(), op, values_of(inputs));
  return detail::finish_outputs(rt, op, inputs, std::move(outputs));
}

std::vector<EagerTensor> apply_eager_with_module_factory(const ExtensionOpPtr& op,
                                                         std::span<const EagerTensor> inputs,
                                                         const ModuleFactory& factory) {
  const EagerRuntimePtr& rt = validate(op, inputs);
  const RuntimePtr& runtime = rt->runtime();
  runtime->check_ingress(op->name(), values_of(inputs));
  auto snap = runtime->snapshot();
  if (snap->family(op->name(), snap->selected_engine()) == nullptr) {
    // Serialise first installs so the factory runs once per (family, engine).
    static std::mutex install_mutex;
    std::lock_guard<std::mutex> lock(install_mutex);
    snap = runtime->snapshot();
    if (snap->family(op->name(), snap->selected_engine()) == nullptr) {
      ExtensionModulePtr module =
          factory(EagerExtensionTarget{snap->selected_engine(), snap->selected().kind()});
      if (!module)
        fail(ErrorKind::InvalidArgument, std::string(op->name()),
             "the module factory returned null");
      runtime->install_module(module);
    }
  }
  return apply_eager(op, inputs);
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
  return value;
}

EagerTensor adopt_untracked(const EagerRuntimePtr& rt, Tensor value) {
  if (!rt) fail(ErrorKind::InvalidArgument, "adopt_untracked", "runtime is null");
  if (!value.defined()) fail(ErrorKind::InvalidArgument, "adopt_untracked", "value is undefined");
  rt->runtime()->check_ingress("adopt_untracked", std::span<const Tensor>(&value, 1));
  return detail::make_eager(rt, std::move(value));
}

}  // namespace tenferro
