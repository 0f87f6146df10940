#pragma once
// Extension ops in the eager tier (the seed's subject): dispatch with the
// documented check order, session and module-factory variants, and the
// in-place protocol.

#include <functional>
#include <variant>

#include "tenferro/ad/eager.hpp"

namespace tenferro {

/// A backend session held on an eager runtime's selected engine.
class EagerSession {
 public:
  explicit EagerSession(const EagerRuntimePtr& rt);
  const EagerRuntimePtr& runtime() const { return rt_; }
  EngineSession& engine_session() { return *session_; }

 private:
  EagerRuntimePtr rt_;
  std::unique_ptr<EngineSession> session_;
};

/// Applies an extension op to eager tensors. Checks, in order: at least one
/// input (InvalidArgument); the input count (InvalidArgument); one runtime
/// (ContextMismatch). Then engine -> signature -> prepare (cached) -> execute
/// in a session (or the erased context); only Unsupported falls back to the
/// op's lowering. Checks the output count, then returns untracked results or
/// records the op with its declared residuals.
std::vector<EagerTensor> apply_eager(const ExtensionOpPtr& op, std::span<const EagerTensor> inputs);
/// apply_eager inside a session the caller holds: never re-enters the
/// backend; an executor without a session form is Unsupported; a session of
/// another runtime is ContextMismatch.
std::vector<EagerTensor> apply_eager_in_session(EagerSession& session, const ExtensionOpPtr& op,
                                                std::span<const EagerTensor> inputs);

/// Which engine the module factory must build for.
struct EagerExtensionTarget {
  EngineId engine;
  BackendKind backend_kind;
};
using ModuleFactory = std::function<ExtensionModulePtr(const EagerExtensionTarget&)>;

/// apply_eager after making sure the family's module is installed: every
/// input's ingress is checked against the selected engine before the factory
/// runs (NoInputIngress); factory errors propagate unchanged; the module is
/// installed once per (family, engine), also under concurrent first calls; a
/// warm call neither calls the factory nor reinstalls.
std::vector<EagerTensor> apply_eager_with_module_factory(const ExtensionOpPtr& op,
                                                         std::span<const EagerTensor> inputs,
                                                         const ModuleFactory& factory);

// ---- in-place protocol ------------------------------------------------------------

/// Throws RuntimeState unless `t` may be mutated in place: it must not require
/// grad, have recorded history, or be used while any capture scope is active
/// (also inside no_grad).
void check_in_place_eligible(const EagerTensor& t, std::string_view op);
/// Takes the value out of `t` when `t` is eligible and the only owner of its
/// storage: the returned Tensor may then be written (mutable_data). Otherwise
/// hands `t` back unchanged. Never copies.
std::variant<Tensor, EagerTensor> take_unique(EagerTensor&& t);
/// Wraps a value (e.g. one mutated in place) as an untracked eager tensor of `rt`.
EagerTensor adopt_untracked(const EagerRuntimePtr& rt, Tensor value);

}  // namespace tenferro
