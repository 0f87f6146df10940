#pragma once
// Extension ops in the eager tier (the seed's subject): dispatch with the
// documented check order, session and module-factory variants, and the
// in-place protocol.

#include <functional>
#include <variant>

#include "tenferro/ad/eager.hpp"
#include "tenferro/core/list_ref.hpp"

namespace tenferro {

/// A backend session held on an eager runtime's selected engine. Entering it
/// on a thread that already holds a session of the same backend is
/// RuntimeState (never a deadlock).
class EagerSession {
 public:
  explicit EagerSession(const EagerRuntimePtr& rt);
  const EagerRuntimePtr& runtime() const { return rt_; }
  /// The engine the session was entered on.
  const EngineId& engine() const;
  EngineSession& engine_session() { return *session_; }

 private:
  EagerRuntimePtr rt_;
  std::unique_ptr<EngineSession> session_;
};

// Every variant checks before it acts, in this order (see docs/extensions.md):
// inputs (at least one: InvalidArgument; the op's count: InvalidArgument; one
// eager runtime: ContextMismatch), then the session where there is one, then
// the module, then the rules, then the run.

/// Applies an extension op to eager tensors: engine -> signature -> prepare
/// (cached) -> execute in a session, or through the erased context when the
/// executor has no session form. When no prepared executor is available (no
/// module registers the family for the selected engine, the engine answers
/// Unsupported, or its plan has no executor) an op with a lowering runs
/// through it; otherwise MissingExtension or Unsupported. Checks the output
/// count, then returns untracked results (recording off, or no input
/// requires grad and no capture) or records the op with its declared
/// residuals. A call that would be recorded without AD rules for the family
/// is UnsupportedAdRule before any work.
std::vector<EagerTensor> apply_eager(const ExtensionOpPtr& op, ListRef<EagerTensor> inputs);

/// apply_eager inside a session the caller holds; never re-enters the
/// backend. A session of another eager runtime is ContextMismatch; a session
/// entered on an engine the runtime no longer selects is RuntimeState; an
/// executor without a session form, or no prepared executor at all, is
/// Unsupported (no fallback to the lowering inside a session).
std::vector<EagerTensor> apply_eager_in_session(EagerSession& session, const ExtensionOpPtr& op,
                                                ListRef<EagerTensor> inputs);

/// Which engine the module factory must build for.
struct EagerExtensionTarget {
  EngineId engine;
  /// The engine's backend, in a word (Backend::kind(): "cpu").
  std::string backend_kind;
  /// Where the engine's backend keeps its tensors (Backend::placement()): a
  /// family whose kernels read host memory checks it.
  Placement placement;
};
/// The eager runtime's selected engine and its backend.
EagerExtensionTarget eager_extension_target(const EagerRuntime& rt);

/// Builds a family's module for a target. Called on every factory call
/// (after the checks, outside any lock), so return a cached module when
/// building one is not cheap. Its errors pass through unchanged.
using ModuleFactory = std::function<ExtensionModulePtr(const EagerExtensionTarget&)>;

/// Checks the inputs and every input's ingress (NoInputIngressError), then
/// ensures `module` (EagerRuntime::ensure_module: keyed on module id, the
/// op's family and the selected engine; MissingExtension when the module
/// does not register that pair; the rules it carries are registered), then
/// apply_eager.
std::vector<EagerTensor> apply_eager_with_module(const ExtensionOpPtr& op,
                                                 ListRef<EagerTensor> inputs,
                                                 const ExtensionModulePtr& module);

/// The install-ensure path a family calls on first use: checks the inputs,
/// resolves the target (selected engine, backend kind), checks every input's
/// ingress (NoInputIngressError), calls the factory outside any lock, ensures
/// the module as apply_eager_with_module does, then apply_eager. Concurrent
/// first calls on one runtime converge on one install and one epoch bump;
/// cold installs on different runtimes never wait for each other.
std::vector<EagerTensor> apply_eager_with_module_factory(const ExtensionOpPtr& op,
                                                         ListRef<EagerTensor> inputs,
                                                         const ModuleFactory& factory);

/// The factory form inside a session the caller holds: every check (inputs,
/// session runtime and engine, target, ingress) before the factory, then
/// ensure, then apply_eager_in_session.
std::vector<EagerTensor> apply_eager_with_module_factory_in_session(EagerSession& session,
                                                                    const ExtensionOpPtr& op,
                                                                    ListRef<EagerTensor> inputs,
                                                                    const ModuleFactory& factory);

// ---- in-place protocol ------------------------------------------------------------

/// Throws RuntimeState unless `t` may be mutated in place: it must not require
/// grad, have recorded history, or be used while any capture scope is active
/// (also inside no_grad).
void check_in_place_eligible(const EagerTensor& t, std::string_view op);
/// The whole preparation of an in-place call, in this order: eligibility
/// (check_in_place_eligible), the selected engine's ingress of `input`,
/// the factory, ensure of its module for `family`. On any refusal `input` is
/// unchanged and usable. Then take_unique, mutate, adopt_untracked.
void prepare_eager_in_place_input(const EagerTensor& input, std::string_view family,
                                  const ModuleFactory& factory);
/// Takes the value out of `t` when `t` is eligible and the only owner of its
/// storage: the returned Tensor may then be written (mutable_data), and `t`
/// is left undefined. Otherwise hands `t` back unchanged. Never copies.
std::variant<Tensor, EagerTensor> take_unique(EagerTensor&& t);
/// Wraps a value (e.g. one mutated in place) as an untracked eager tensor of `rt`.
EagerTensor adopt_untracked(const EagerRuntimePtr& rt, Tensor value);

}  // namespace tenferro
