#include "tenferro/runtime/engine.hpp"

#include "tenferro/runtime/module.hpp"

namespace tenferro {

Tensor ExecutionScope::compact(const Tensor& t) {
  if (t.is_contiguous()) return t;
  ++compact_copies_;
  return copy(t, backend());
}

std::vector<Tensor> PlanExecutor::execute_in_session(EngineSession&, ExtensionCaches& caches,
                                                     std::span<const Tensor>) const {
  fail(ErrorKind::Unsupported, caches.family(),
       "this executor has no session form; call it through the runtime's top-level apply");
}

namespace {
std::shared_ptr<Backend> require_backend(std::shared_ptr<Backend> backend) {
  if (!backend) fail(ErrorKind::InvalidArgument, "engine", "the backend is null; pass one");
  return backend;
}
}  // namespace

EngineRegistration::EngineRegistration(std::shared_ptr<Backend> backend)
    : EngineRegistration(require_backend(backend)->engine_id(), backend) {}

EngineRegistration::EngineRegistration(EngineId id, std::shared_ptr<Backend> backend,
                                       std::function<bool(const Placement&)> accepts)
    : id_(std::move(id)), backend_(std::move(backend)), accepts_(std::move(accepts)) {
  if (!backend_)
    fail(ErrorKind::InvalidArgument, "engine", "engine ", id_.str(), " has no backend");
  if (!accepts_) {
    const Backend* b = backend_.get();  // kept alive by backend_, as long as this registration
    accepts_ = [b](const Placement& q) { return b->accepts(q); };
  }
}

void EngineRegistration::require_ingress(std::string_view op, std::size_t index,
                                         const Placement& placement) const {
  if (accepts(placement)) return;
  throw NoInputIngressError(
      std::string(op),
      detail::cat("input ", index, " lives on ", to_string(placement), ", which engine ", id_.str(),
                  " does not accept; move it there explicitly first"),
      index, placement, id_);
}

void ModuleRegistrar::register_engine(FamilyId family, EngineId engine,
                                      std::shared_ptr<const ExtensionEngine> implementation) {
  if (!implementation) {
    fail(ErrorKind::InvalidArgument, family.str(), "null engine implementation for ", engine.str());
  }
  engines_.push_back({std::move(family), std::move(engine), std::move(implementation)});
}

void ModuleRegistrar::register_planning_config(FamilyId family, EngineId engine,
                                               std::shared_ptr<const PlanningConfig> config) {
  if (!config)
    fail(ErrorKind::InvalidArgument, family.str(), "null planning config for ", engine.str());
  configs_.push_back({std::move(family), std::move(engine), std::move(config)});
}

void ModuleRegistrar::register_cache(FamilyId family, std::string cache,
                                     ExtensionCacheLimits limits) {
  if (cache.empty()) fail(ErrorKind::InvalidArgument, family.str(), "cache name must be non-empty");
  caches_.push_back({std::move(family), std::move(cache), limits});
}

ExtensionModulePtr ModulesByEngine::get(const EngineId& engine) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = modules_.find(engine);
  if (it == modules_.end()) it = modules_.emplace(engine, build_(engine)).first;
  return it->second;
}

}  // namespace tenferro
