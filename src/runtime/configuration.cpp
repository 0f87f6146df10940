// The runtime's configuration: the immutable snapshot (engines, installed
// modules, the family index), the editor that builds a candidate, the
// builder, and publishing with one epoch bump. Applying ops and running
// extension plans is extension_run.cpp.

#include "tenferro/runtime/runtime.hpp"

#include <algorithm>
#include <atomic>
#include <typeinfo>

#include "runtime/plan_cache.hpp"

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
  install_configured(std::move(module), std::move(reg));
}

void RuntimeEditor::replace_module(ExtensionModulePtr module) {
  ModuleRegistrar reg = configure_module(module);
  replace_configured(std::move(module), std::move(reg));
}

void RuntimeEditor::install_configured(ExtensionModulePtr module, ModuleRegistrar reg) {
  auto it = candidate_.modules_.find(module->id());
  if (it != candidate_.modules_.end()) {
    if (same_registrations(it->second.registrations, reg)) return;  // identical: no-op
    fail(ErrorKind::RuntimeState, "install_module", "module '", module->id(),
         "' is already installed with different registrations; call replace_module to swap it");
  }
  candidate_.modules_.emplace(module->id(), RuntimeSnapshot::ModuleRecord{module, std::move(reg)});
  changed_ = true;
}

void RuntimeEditor::replace_configured(ExtensionModulePtr module, ModuleRegistrar reg) {
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
    fail(ErrorKind::RuntimeState, "runtime",
         "no engine is registered; add a backend (builder().backend(b)) or an engine");
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

RuntimeBuilder& RuntimeBuilder::engine(EngineRegistration engine) {
  engines_.push_back(std::move(engine));
  return *this;
}
RuntimeBuilder& RuntimeBuilder::backend(std::shared_ptr<Backend> backend) {
  return engine(EngineRegistration(std::move(backend)));
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

namespace {
// The runtimes this thread is reconfiguring: a second reconfigure of one of
// them from inside the first (an edit, or a configure() the edit runs) would
// wait for its own lock.
thread_local std::vector<const Runtime*> t_reconfiguring;

class ReconfigureScope {
 public:
  explicit ReconfigureScope(const Runtime& runtime) : runtime_(runtime) {
    for (const Runtime* r : t_reconfiguring) {
      if (r == &runtime) {
        fail(ErrorKind::RuntimeState, "reconfigure", "runtime ", runtime.id(),
             " is reconfigured from inside its own reconfigure() (its edit, or a module "
             "configure() that the edit runs, calls back into it); install or replace the "
             "module outside the edit: Runtime::install_module runs configure() before the lock");
      }
    }
    t_reconfiguring.push_back(&runtime);
  }
  ~ReconfigureScope() {
    t_reconfiguring.erase(std::find(t_reconfiguring.begin(), t_reconfiguring.end(), &runtime_));
  }
  ReconfigureScope(const ReconfigureScope&) = delete;
  ReconfigureScope& operator=(const ReconfigureScope&) = delete;

 private:
  const Runtime& runtime_;
};
}  // namespace

bool Runtime::reconfigure(const std::function<void(RuntimeEditor&)>& edit) {
  ReconfigureScope scope(*this);
  std::lock_guard<std::mutex> lock(reconfigure_mutex_);
  auto candidate = std::make_shared<RuntimeSnapshot>(*snapshot());
  RuntimeEditor editor(*candidate);
  edit(editor);
  if (!editor.changed_) return false;
  index(*candidate);
  publish(std::move(candidate), editor.replaced_families_);
  return true;
}

// install_module, replace_module and ensure_module run configure() once,
// before the reconfigure lock, so a configure() may call back into the
// runtime; the edit only inserts what it returned.
bool Runtime::install_module(ExtensionModulePtr module) {
  ModuleRegistrar reg = configure_module(module);
  {
    // Read-only fast path: an identical module is already installed.
    auto snap = snapshot();
    auto it = snap->modules_.find(module->id());
    if (it != snap->modules_.end() && same_registrations(it->second.registrations, reg))
      return false;
  }
  return reconfigure([&](RuntimeEditor& e) { e.install_configured(module, std::move(reg)); });
}

void Runtime::replace_module(ExtensionModulePtr module) {
  ModuleRegistrar reg = configure_module(module);
  reconfigure([&](RuntimeEditor& e) { e.replace_configured(module, std::move(reg)); });
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
  return reconfigure([&](RuntimeEditor& e) { e.install_configured(module, std::move(reg)); });
}

}  // namespace tenferro
