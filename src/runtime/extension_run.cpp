// Applying ops on a runtime: ingress checks, sessions, primitive execution,
// and extension ops prepared (cached per signature), run on their executor
// or through their lowering. The configuration is configuration.cpp.

#include <atomic>

#include "runtime/plan_cache.hpp"
#include "runtime/sessions.hpp"
#include "tenferro/core/report_as.hpp"
#include "tenferro/runtime/runtime.hpp"

namespace tenferro {

namespace {
// The ops a runtime applies: core primitives and extension ops. Ops that live
// only in traced programs (with bodies, constant slots) run in a prepared one.
void require_primitive(const Op& op) {
  if (op.kind_key() < 0) {
    fail(ErrorKind::Unsupported, std::string(op.name()),
         "this op exists only in traced programs; compile and prepare a program to run it");
  }
}
}  // namespace

void Runtime::check_ingress(std::string_view op_name, std::span<const Tensor> inputs) const {
  auto snap = snapshot();
  const EngineRegistration& engine = snap->selected();
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) {
      fail(ErrorKind::InvalidArgument, std::string(op_name), "input ", i, " is undefined");
    }
    engine.require_ingress(op_name, i, inputs[i].placement());
  }
}

std::unique_ptr<EngineSession> Runtime::enter_session() {
  return detail::make_engine_session(snapshot()->selected_ptr(), id_, /*reuse=*/false);
}

std::vector<Tensor> Runtime::apply(const OpPtr& op, ListRef<Tensor> inputs) {
  if (!op) fail(ErrorKind::InvalidArgument, "apply", "op is null");
  if (inputs.size() != op->input_count()) {
    fail(ErrorKind::InvalidArgument, std::string(op->name()), "expects ", op->input_count(),
         " inputs, got ", inputs.size());
  }
  if (op->is_extension()) return run_extension(op, inputs, nullptr);
  require_primitive(*op);
  check_ingress(op->name(), inputs);
  return {execute_primitive(static_cast<const PrimitiveOp&>(*op), inputs, backend())};
}

std::vector<Tensor> Runtime::apply_in_session(EngineSession& session, const OpPtr& op,
                                              ListRef<Tensor> inputs) {
  if (!op) fail(ErrorKind::InvalidArgument, "apply", "op is null");
  if (session.runtime_id() != id_) {
    fail(ErrorKind::ContextMismatch, std::string(op->name()), "the session belongs to runtime ",
         session.runtime_id(), ", not to runtime ", id_, "; use a session of this runtime");
  }
  if (inputs.size() != op->input_count()) {
    fail(ErrorKind::InvalidArgument, std::string(op->name()), "expects ", op->input_count(),
         " inputs, got ", inputs.size());
  }
  if (const EngineId& selected = snapshot()->selected_engine(); !(session.engine() == selected)) {
    fail_in(ErrorPhase::Execute, ErrorKind::RuntimeState, std::string(op->name()),
            "the session was entered on engine ", session.engine().str(), " but runtime ", id_,
            " now selects engine ", selected.str(), "; leave this session and enter a new one");
  }
  if (op->is_extension()) return run_extension(op, inputs, &session);
  require_primitive(*op);
  check_ingress(op->name(), inputs);
  return {execute_primitive(static_cast<const PrimitiveOp&>(*op), inputs, session.backend())};
}

bool ensure_self_installing(Runtime& runtime, const Op& op) {
  const auto* self = dynamic_cast<const SelfInstallingOp*>(&op);
  if (self == nullptr) return false;
  const auto snap = runtime.snapshot();
  const EngineId& engine = snap->selected_engine();
  if (snap->family(op.name(), engine) != nullptr) return false;  // warm path: read-only
  // A call made in a session the caller holds never reconfigures the runtime.
  if (detail::holds_session(runtime.id())) {
    fail_in(ErrorPhase::Execute, ErrorKind::MissingExtension, std::string(op.name()), "family ",
            op.name(), " is not installed for engine ", engine.str(),
            ", and a self-installing family installs itself only outside a session: this "
            "thread holds a session of runtime ",
            runtime.id(),
            ". Run the op once before entering the session, or call "
            "ensure_self_installing(runtime, op) before entering it");
  }
  ExtensionModulePtr module = self->module_for(snap->selected());
  if (!module) return false;
  return runtime.ensure_module(std::move(module), op.name(), engine);
}

std::shared_ptr<const PreparedPlan> Runtime::prepare_extension(const ExtensionOpPtr& op,
                                                               const InputSignature& signature,
                                                               std::string* why) {
  if (!op) fail(ErrorKind::InvalidArgument, "prepare", "op is null");
  auto snap = snapshot();
  const EngineId& engine = snap->selected_engine();
  const FamilyRegistration* reg = snap->family(op->name(), engine);
  if (reg == nullptr) {
    std::string others;
    if (auto it = snap->families_.find(op->name()); it != snap->families_.end())
      for (const auto& fr : it->second) others += (others.empty() ? "" : ", ") + fr.engine.str();
    fail_in(ErrorPhase::Execute, ErrorKind::MissingExtension, std::string(op->name()),
            "missing runtime extension module for family ", op->name(), " on engine ", engine.str(),
            others.empty() ? std::string("; install a module that registers it")
                           : "; installed modules register it only for " + others);
  }
  const std::uint64_t epoch = snap->epoch();
  detail::PlanKey key{op, signature, epoch,
                      hash_combine(hash_combine(op->hash(), signature.hash()), epoch)};
  detail::PlanResult result = plans_->get_or_prepare(std::move(key), [&]() -> detail::PlanResult {
    // Shape constraints depend only on the signature: check them once here.
    std::vector<TensorMeta> metas;
    std::vector<Shape> shapes;
    for (const auto& e : signature.entries()) {
      metas.push_back(TensorMeta{e.dtype, to_sym_shape(e.shape)});
      shapes.push_back(e.shape);
    }
    InferenceResult inferred = op->infer(metas);
    if (inferred.outputs.size() != op->output_count()) {
      fail(ErrorKind::ExtensionContract, std::string(op->name()), "infer() returned ",
           inferred.outputs.size(), " outputs but the op declares ", op->output_count(),
           "; the family's infer() is wrong, not your call");
    }
    check_constraints(op->name(), inferred.constraints, shapes);
    unsigned detail = kDetailNone;
    PlanBinding binding{id_, epoch, engine};
    for (;;) {
      const InputSignature masked = signature.masked(detail);
      PrepareRequest request{*op, masked, detail, reg->config.get(), binding};
      plans_->count_prepare();
      PrepareOutcome outcome;
      try {
        outcome = reg->implementation->prepare(request);
      } catch (const Error& e) {
        rethrow_with_context(e, ErrorPhase::Compile, std::string(op->name()),
                             "engine " + engine.str() + " failed to prepare " +
                                 std::string(op->name()) + " for " + signature.to_string());
      }
      if (auto* p = std::get_if<Prepared>(&outcome)) {
        // A plan without an executor is "no prepared executor": the caller
        // falls back to the lowering like for Unsupported.
        if (!p->executor) return {nullptr, "engine " + engine.str() + "'s plan has no executor"};
        return {std::make_shared<const PreparedPlan>(p->executor, binding, inferred.outputs), {}};
      }
      if (auto* u = std::get_if<Unsupported>(&outcome)) return {nullptr, u->reason};
      const unsigned wanted = std::get<NeedsSpecialization>(outcome).detail & kDetailAll;
      if ((wanted & ~detail) == 0) {
        fail(ErrorKind::RuntimeState, std::string(op->name()),
             "engine asked for signature detail it already has; NeedsSpecialization must widen "
             "the request strictly");
      }
      detail |= wanted;
    }
  });
  if (!result.plan && why != nullptr) *why = result.unsupported_reason;
  return result.plan;
}

namespace {
// The executor's results against the op's output count and infer().
void check_extension_outputs(const ExtensionOp& op, std::span<const TensorMeta> declared,
                             std::span<const Tensor> outputs, std::string_view engine) {
  const std::string family(op.name());
  if (outputs.size() != op.output_count()) {
    fail_in(ErrorPhase::Execute, ErrorKind::ExtensionContract, family, "executor of engine ",
            engine, " returned ", outputs.size(), " outputs but family ", family, " declares ",
            op.output_count(), "; the family's engine is wrong, not your call");
  }
  for (std::size_t j = 0; j < outputs.size(); ++j) {
    if (!outputs[j].defined()) {
      fail_in(ErrorPhase::Execute, ErrorKind::ExtensionContract, family, "executor of engine ",
              engine, " returned an undefined tensor as output ", j);
    }
    if (j >= declared.size()) continue;
    const TensorMeta& want = declared[j];
    // Per call, so without allocating: constant extents must match, symbolic
    // ones (data-dependent ranks) are not compared.
    const Shape& got = outputs[j].shape();
    bool shape_ok = got.size() == want.shape.size();
    for (std::size_t d = 0; shape_ok && d < got.size(); ++d) {
      const auto c = want.shape[d].try_constant();
      shape_ok = !c || *c == got[d];
    }
    if (outputs[j].dtype() != want.dtype || !shape_ok) {
      fail_in(ErrorPhase::Execute, ErrorKind::ExtensionContract, family, "executor of engine ",
              engine, " returned output ", j, " as ", name(outputs[j].dtype()),
              shape_to_string(outputs[j].shape()), " but the family's infer() declares ",
              name(want.dtype), to_string(want.shape),
              "; the family's engine and infer() disagree");
    }
  }
}

}  // namespace

std::vector<Tensor> Runtime::run_extension(const OpPtr& op_ptr, std::span<const Tensor> inputs,
                                           EngineSession* session) {
  const auto& op = static_cast<const ExtensionOp&>(*op_ptr);
  check_ingress(op.name(), inputs);
  ensure_self_installing(*this, op);
  // No module registers the family for the selected engine: outside a
  // session a family with a lowering still runs through it.
  if (session == nullptr && op.has_lowering()) {
    auto snap = snapshot();
    if (snap->family(op.name(), snap->selected_engine()) == nullptr)
      return run_lowering(op, inputs);
  }
  const InputSignature signature = InputSignature::of(inputs);
  std::string why;
  auto plan =
      prepare_extension(std::static_pointer_cast<const ExtensionOp>(op_ptr), signature, &why);
  if (!plan) {
    if (session == nullptr && op.has_lowering()) return run_lowering(op, inputs);
    fail_in(ErrorPhase::Execute, ErrorKind::Unsupported, std::string(op.name()), "engine ",
            snapshot()->selected_engine().str(), " cannot run this op for ", signature.to_string(),
            ": ", why,
            op.has_lowering() ? " (a lowering exists; call apply outside the session)" : "");
  }
  ExtensionCaches caches(*extension_caches_, std::string(op.name()));
  const PlanExecutor& executor = plan->executor();
  std::vector<Tensor> outputs;
  try {
    outputs = execute_plan(executor, caches, inputs, session);
  } catch (const Error& e) {
    if (e.op() == op.name() && e.phase() == ErrorPhase::Execute) throw;  // already in context
    // Named as the user calls the op: a kernel's own error about it (the
    // library's families name their functions, "solve_triangular") is the
    // error, now of the Execute phase; others get the engine as context.
    const std::string user = user_op_name(op.name());
    // The library's kernels name the function the user called (inv for the
    // LU inside it): their errors pass with that name.
    const bool ours = op.name().starts_with("tenferro.") && !e.op().starts_with("tenferro.") &&
                      e.kind() != ErrorKind::Internal && !e.op().empty();
    if (e.op() == user || ours) {
      if (e.phase() == ErrorPhase::Execute) throw;
      throw Error(e.kind(), e.op(), e.message(), ErrorPhase::Execute, e.cause_ptr());
    }
    rethrow_with_context(e, ErrorPhase::Execute, user,
                         "executing " + std::string(op.name()) + " on engine " +
                             snapshot()->selected_engine().str() + " failed");
  }
  check_extension_outputs(op, plan->declared_outputs(), outputs,
                          snapshot()->selected_engine().str());
  return outputs;
}

std::vector<Tensor> Runtime::execute_plan(const PlanExecutor& executor, ExtensionCaches& caches,
                                          std::span<const Tensor> inputs, EngineSession* session) {
  if (session != nullptr) {
    if (!executor.supports_session()) {
      fail_in(ErrorPhase::Execute, ErrorKind::Unsupported, caches.family(),
              "the prepared executor has no session form; call apply outside the session");
    }
    return executor.execute_in_session(*session, caches, inputs);
  }
  if (executor.supports_session()) {
    auto s = detail::make_engine_session(snapshot()->selected_ptr(), id_, /*reuse=*/true);
    return executor.execute_in_session(*s, caches, inputs);
  }
  const auto snap = snapshot();  // keeps the engine alive while it runs
  detail::BasicExecutionContext context(snap->selected());
  return executor.execute(context, caches, inputs);
}

namespace {
// Runs a lowering immediately: every emitted op is applied on the runtime.
class ImmediateLowering final : public LoweringBuilder {
 public:
  explicit ImmediateLowering(Runtime& rt) : rt_(rt) {}
  Value add(Tensor t) {
    values_.push_back(t);
    return Value{values_.size() - 1, TensorMeta{t.dtype(), to_sym_shape(t.shape())}};
  }
  std::vector<Value> emit(const OpPtr& op, std::span<const Value> inputs) override {
    std::vector<Tensor> in;
    for (const auto& v : inputs) in.push_back(values_.at(v.id));
    std::vector<Value> out;
    for (auto& t : rt_.apply(op, in)) out.push_back(add(std::move(t)));
    return out;
  }
  const Tensor& get(const Value& v) const { return values_.at(v.id); }

 private:
  Runtime& rt_;
  std::vector<Tensor> values_;
};
}  // namespace

std::vector<Tensor> Runtime::run_lowering(const ExtensionOp& op, std::span<const Tensor> inputs) {
  ImmediateLowering builder(*this);
  std::vector<LoweringBuilder::Value> in;
  for (const auto& t : inputs) in.push_back(builder.add(t));
  std::vector<Tensor> outputs;
  for (const auto& v : op.lower(builder, in)) outputs.push_back(builder.get(v));
  if (outputs.size() != op.output_count()) {
    fail_in(ErrorPhase::Execute, ErrorKind::ExtensionContract, std::string(op.name()),
            "the lowering of family ", op.name(), " produced ", outputs.size(),
            " outputs but the family declares ", op.output_count(),
            "; the family's lower() is wrong, not your call");
  }
  return outputs;
}

ProgramCounters Runtime::program_counters() const {
  return {program_preparations_.load(), program_runs_.load()};
}

RuntimeCacheStats Runtime::cache_stats() const {
  return RuntimeCacheStats{plans_->stats(), extension_caches_->stats()};
}

void Runtime::clear_caches() {
  plans_->clear();
  extension_caches_->clear();
}

void Runtime::clear_caches(const ExtensionCacheSelector& selector) {
  extension_caches_->clear(selector);
}

}  // namespace tenferro
