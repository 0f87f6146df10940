#include "tenferro/runtime/runtime.hpp"

#include <atomic>
#include <typeinfo>

#include "runtime/plan_cache.hpp"
#include "runtime/sessions.hpp"

namespace tenferro {

namespace {

ModuleRegistrar configure_module(const ExtensionModulePtr& module) {
  if (!module) fail(ErrorKind::InvalidArgument, "install_module", "module is null");
  if (module->id().empty())
    fail(ErrorKind::InvalidArgument, "install_module", "module id must be non-empty");
  ModuleRegistrar registrar;
  module->configure(registrar);
  return registrar;
}

bool same_registrations(const ModuleRegistrar& a, const ModuleRegistrar& b) {
  if (a.engines().size() != b.engines().size() || a.configs().size() != b.configs().size() ||
      a.caches().size() != b.caches().size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.engines().size(); ++i) {
    const auto &x = a.engines()[i], &y = b.engines()[i];
    if (!(x.family == y.family) || !(x.engine == y.engine) ||
        typeid(*x.implementation) != typeid(*y.implementation)) {
      return false;
    }
  }
  for (std::size_t i = 0; i < a.configs().size(); ++i) {
    const auto &x = a.configs()[i], &y = b.configs()[i];
    if (!(x.family == y.family) || !(x.engine == y.engine) || !x.config->equals(*y.config))
      return false;
  }
  for (std::size_t i = 0; i < a.caches().size(); ++i) {
    const auto &x = a.caches()[i], &y = b.caches()[i];
    if (!(x.family == y.family) || x.cache != y.cache || !(x.limits == y.limits)) return false;
  }
  return true;
}
}  // namespace

struct Runtime::PlanCache : detail::PlanCacheImpl {
  using detail::PlanCacheImpl::PlanCacheImpl;
};

// ---- snapshot ---------------------------------------------------------------------

const EngineRegistration* RuntimeSnapshot::engine(const EngineId& id) const {
  for (const auto& e : engines_)
    if (e->id() == id) return e.get();
  return nullptr;
}

const FamilyRegistration* RuntimeSnapshot::family(std::string_view family,
                                                  const EngineId& engine) const {
  auto it = families_.find(family);
  if (it == families_.end()) return nullptr;
  for (const auto& reg : it->second)
    if (reg.engine == engine) return &reg;
  return nullptr;
}

ExtensionModulePtr RuntimeSnapshot::module(const std::string& id) const {
  auto it = modules_.find(id);
  return it == modules_.end() ? nullptr : it->second.module;
}

bool RuntimeSnapshot::module_registers(const std::string& module_id, std::string_view family,
                                       const EngineId& engine) const {
  auto it = modules_.find(module_id);
  if (it == modules_.end()) return false;
  for (const auto& e : it->second.registrations.engines())
    if (e.family.str() == family && e.engine == engine) return true;
  return false;
}

std::vector<std::string> RuntimeSnapshot::modules() const {
  std::vector<std::string> ids;
  for (const auto& [id, rec] : modules_) ids.push_back(id);
  return ids;
}

// ---- editor ---------------------------------------------------------------------------

void RuntimeEditor::install_module(ExtensionModulePtr module) {
  ModuleRegistrar reg = configure_module(module);
  auto it = candidate_.modules_.find(module->id());
  if (it != candidate_.modules_.end()) {
    if (same_registrations(it->second.registrations, reg)) return;  // identical: no-op
    fail(ErrorKind::RuntimeState, "install_module", "module '", module->id(),
         "' is already installed with different registrations; call replace_module to swap it");
  }
  candidate_.modules_.emplace(module->id(), RuntimeSnapshot::ModuleRecord{module, std::move(reg)});
  changed_ = true;
}

void RuntimeEditor::replace_module(ExtensionModulePtr module) {
  ModuleRegistrar reg = configure_module(module);
  auto it = candidate_.modules_.find(module->id());
  if (it != candidate_.modules_.end()) {
    for (const auto& e : it->second.registrations.engines())
      replaced_families_.push_back(e.family.str());
    it->second = RuntimeSnapshot::ModuleRecord{module, std::move(reg)};
  } else {
    candidate_.modules_.emplace(module->id(),
                                RuntimeSnapshot::ModuleRecord{module, std::move(reg)});
  }
  changed_ = true;
}

void RuntimeEditor::remove_module(const std::string& id) {
  auto it = candidate_.modules_.find(id);
  if (it == candidate_.modules_.end()) {
    fail(ErrorKind::RuntimeState, "remove_module", "module '", id, "' is not installed");
  }
  for (const auto& e : it->second.registrations.engines())
    replaced_families_.push_back(e.family.str());
  candidate_.modules_.erase(it);
  changed_ = true;
}

void RuntimeEditor::register_engine(EngineRegistration engine) {
  if (candidate_.engine(engine.id()) != nullptr) {
    fail(ErrorKind::InvalidArgument, "register_engine", "engine ", engine.id().str(),
         " is already registered");
  }
  auto shared = std::make_shared<const EngineRegistration>(std::move(engine));
  candidate_.engines_.push_back(shared);
  if (!candidate_.selected_) candidate_.selected_ = shared;
  changed_ = true;
}

void RuntimeEditor::select_engine(const EngineId& id) {
  for (const auto& e : candidate_.engines_) {
    if (e->id() == id) {
      if (candidate_.selected_ != e) changed_ = true;
      candidate_.selected_ = e;
      return;
    }
  }
  fail(ErrorKind::RuntimeState, "select_engine", "engine ", id.str(), " is not registered");
}

// Validates a candidate and rebuilds its (family, engine) index.
void Runtime::index(RuntimeSnapshot& c) {
  if (!c.selected_)
    fail(ErrorKind::RuntimeState, "runtime", "no engine is registered; add one (e.g. cpu())");
  c.families_.clear();
  for (const auto& [module_id, rec] : c.modules_) {
    const ModuleRegistrar& reg = rec.registrations;
    for (const auto& e : reg.engines()) {
      FamilyRegistration fr{module_id, e.family, e.engine, e.implementation, nullptr};
      for (const auto& cfg : reg.configs())
        if (cfg.family == e.family && cfg.engine == e.engine) fr.config = cfg.config;
      auto& regs = c.families_[e.family.str()];
      const FamilyRegistration* existing = nullptr;
      for (const auto& r : regs)
        if (r.engine == e.engine) existing = &r;
      if (existing != nullptr) {
        const bool same_type = typeid(*existing->implementation) == typeid(*e.implementation);
        const bool same_config =
            (!existing->config && !fr.config) ||
            (existing->config && fr.config && existing->config->equals(*fr.config));
        if (!same_type || !same_config) {
          fail(ErrorKind::InvalidArgument, e.family.str(), "conflicting registrations for family ",
               e.family.str(), " on engine ", e.engine.str(), ": module '", existing->module_id,
               "' and module '", module_id, "' register different engines or configs");
        }
        continue;  // identical duplicate: the first one serves
      }
      regs.push_back(std::move(fr));
    }
    for (const auto& cfg : reg.configs()) {
      bool has_engine = false;
      for (const auto& e : reg.engines())
        has_engine |= (e.family == cfg.family && e.engine == cfg.engine);
      if (!has_engine) {
        fail(ErrorKind::InvalidArgument, cfg.family.str(), "module '", module_id,
             "' registers a planning config for family ", cfg.family.str(), " on engine ",
             cfg.engine.str(), " without an engine for that pair");
      }
    }
    // Every family of the module must run on the engine this runtime selected.
    for (const auto& e : reg.engines()) {
      bool has_selected = false;
      for (const auto& f : reg.engines())
        has_selected |= (f.family == e.family && f.engine == c.selected_->id());
      if (!has_selected) {
        fail(ErrorKind::MissingExtension, e.family.str(), "module '", module_id,
             "' does not register family ", e.family.str(), " for engine ", c.selected_->id().str(),
             ", which this runtime selected; add an engine for it to the module");
      }
    }
  }
}

// ---- builder --------------------------------------------------------------------------

std::uint64_t next_context_id() {
  // Ids only name objects in messages and bindings; one atomic, no lock.
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

const EngineId& cpu_engine_id() {
  static const EngineId id("tenferro.cpu.v1");
  return id;
}

EngineRegistration cpu_engine(std::shared_ptr<CpuBackend> backend) {
  return EngineRegistration(cpu_engine_id(), std::move(backend),
                            [](const Placement& p) { return p.is_host(); });
}

RuntimeBuilder& RuntimeBuilder::engine(EngineRegistration engine) {
  engines_.push_back(std::move(engine));
  return *this;
}
RuntimeBuilder& RuntimeBuilder::cpu(std::shared_ptr<CpuBackend> backend) {
  return engine(cpu_engine(std::move(backend)));
}
RuntimeBuilder& RuntimeBuilder::module(ExtensionModulePtr module) {
  modules_.push_back(std::move(module));
  return *this;
}
RuntimeBuilder& RuntimeBuilder::select(EngineId engine) {
  selected_ = std::move(engine);
  return *this;
}
RuntimeBuilder& RuntimeBuilder::options(RuntimeOptions options) {
  options_ = options;
  return *this;
}

RuntimePtr RuntimeBuilder::build() {
  auto snap = std::make_shared<RuntimeSnapshot>();
  RuntimeEditor editor(*snap);
  for (auto& e : engines_) editor.register_engine(e);
  if (selected_) editor.select_engine(*selected_);
  for (auto& m : modules_) editor.install_module(m);
  Runtime::index(*snap);
  snap->epoch_ = 1;
  RuntimePtr rt(new Runtime(snap, options_));
  for (const auto& [id, rec] : snap->modules_)
    for (const auto& c : rec.registrations.caches())
      rt->extension_caches_->set_limits(c.family.str(), c.cache, c.limits);
  return rt;
}

// ---- runtime ----------------------------------------------------------------------------

Runtime::Runtime(std::shared_ptr<const RuntimeSnapshot> snapshot, RuntimeOptions options)
    : id_(next_context_id()),
      snapshot_(std::move(snapshot)),
      backend_(&snapshot_->selected().backend()),
      epoch_(snapshot_->epoch()),
      plans_(std::make_unique<PlanCache>(options.plan_cache_capacity)),
      extension_caches_(std::make_unique<ExtensionCacheStore>()) {}

Runtime::~Runtime() = default;

std::shared_ptr<const RuntimeSnapshot> Runtime::snapshot() const {
  std::lock_guard<std::mutex> lock(snapshot_mutex_);
  return snapshot_;
}

Backend& Runtime::backend() const {
  return *backend_.load(std::memory_order_acquire);
}

void Runtime::publish(std::shared_ptr<RuntimeSnapshot> candidate,
                      const std::vector<std::string>& replaced) {
  for (const auto& [id, rec] : candidate->modules_)
    for (const auto& c : rec.registrations.caches())
      extension_caches_->set_limits(c.family.str(), c.cache, c.limits);
  for (const auto& family : replaced)
    extension_caches_->clear(ExtensionCacheSelector::family(family));
  {
    std::lock_guard<std::mutex> lock(snapshot_mutex_);
    candidate->epoch_ = snapshot_->epoch_ + 1;
    snapshot_ = std::move(candidate);
    backend_.store(&snapshot_->selected().backend(), std::memory_order_release);
    epoch_.store(snapshot_->epoch_, std::memory_order_release);
  }
  plans_->retain_epoch(snapshot()->epoch());
}

bool Runtime::reconfigure(const std::function<void(RuntimeEditor&)>& edit) {
  std::lock_guard<std::mutex> lock(reconfigure_mutex_);
  auto candidate = std::make_shared<RuntimeSnapshot>(*snapshot());
  RuntimeEditor editor(*candidate);
  edit(editor);
  if (!editor.changed_) return false;
  index(*candidate);
  publish(std::move(candidate), editor.replaced_families_);
  return true;
}

bool Runtime::install_module(ExtensionModulePtr module) {
  {
    // Read-only fast path: an identical module is already installed.
    ModuleRegistrar reg = configure_module(module);
    auto snap = snapshot();
    auto it = snap->modules_.find(module->id());
    if (it != snap->modules_.end() && same_registrations(it->second.registrations, reg))
      return false;
  }
  return reconfigure([&](RuntimeEditor& e) { e.install_module(module); });
}

void Runtime::replace_module(ExtensionModulePtr module) {
  reconfigure([&](RuntimeEditor& e) { e.replace_module(module); });
}

bool Runtime::ensure_module(ExtensionModulePtr module, std::string_view family,
                            const EngineId& engine) {
  if (!module) {
    fail(ErrorKind::InvalidArgument, std::string(family),
         "the module to ensure is null; return a module from the factory");
  }
  const std::string id = module->id();
  if (snapshot()->module_registers(id, family, engine)) return false;  // warm: read-only
  ModuleRegistrar reg = configure_module(module);                      // outside every lock
  bool registers = false;
  for (const auto& e : reg.engines()) registers |= (e.family.str() == family && e.engine == engine);
  if (!registers) {
    fail_in(ErrorPhase::Execute, ErrorKind::MissingExtension, std::string(family), "module '", id,
            "' does not register family ", family, " for engine ", engine.str(),
            "; nothing was installed. Register the family for that engine in the module's "
            "configure()");
  }
  // Concurrent first calls serialise on this runtime's reconfigure lock; the
  // later ones find the identical module installed and publish nothing.
  return reconfigure([&](RuntimeEditor& e) { e.install_module(module); });
}

void Runtime::check_ingress(std::string_view op_name, std::span<const Tensor> inputs) const {
  auto snap = snapshot();
  const EngineRegistration& engine = snap->selected();
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) {
      fail(ErrorKind::InvalidArgument, std::string(op_name), "input ", i, " is undefined");
    }
    if (!engine.accepts(inputs[i].placement())) {
      throw NoInputIngressError(
          std::string(op_name),
          detail::cat("input ", i, " lives on ", to_string(inputs[i].placement()),
                      ", which engine ", engine.id().str(),
                      " does not accept; move it there explicitly first"),
          i, inputs[i].placement(), engine.id());
    }
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
  check_ingress(op->name(), inputs);
  return {execute_primitive(static_cast<const PrimitiveOp&>(*op), inputs, session.backend())};
}

bool ensure_self_installing(Runtime& runtime, const Op& op) {
  const auto* self = dynamic_cast<const SelfInstallingOp*>(&op);
  if (self == nullptr) return false;
  const auto snap = runtime.snapshot();
  const EngineId& engine = snap->selected_engine();
  if (snap->family(op.name(), engine) != nullptr) return false;  // warm path: read-only
  ExtensionModulePtr module = self->module_for(engine);
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
      fail(ErrorKind::Internal, std::string(op->name()), "infer() returned ",
           inferred.outputs.size(), " outputs but the op declares ", op->output_count());
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
    rethrow_with_context(e, ErrorPhase::Execute, std::string(op.name()),
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
    fail(ErrorKind::Internal, std::string(op.name()), "lowering produced ", outputs.size(),
         " outputs but family ", op.name(), " declares ", op.output_count());
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
