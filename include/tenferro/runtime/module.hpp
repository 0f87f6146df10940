#pragma once
// Extension modules: the unit a family library installs into a runtime.

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tenferro/runtime/engine.hpp"

namespace tenferro {

/// What configure() registers; collected by the runtime and validated.
class ModuleRegistrar {
 public:
  struct EngineEntry {
    FamilyId family;
    EngineId engine;
    std::shared_ptr<const ExtensionEngine> implementation;
  };
  struct ConfigEntry {
    FamilyId family;
    EngineId engine;
    std::shared_ptr<const PlanningConfig> config;
  };
  struct CacheEntry {
    FamilyId family;
    std::string cache;
    ExtensionCacheLimits limits;
  };

  void register_engine(FamilyId family, EngineId engine,
                       std::shared_ptr<const ExtensionEngine> implementation);
  void register_planning_config(FamilyId family, EngineId engine,
                                std::shared_ptr<const PlanningConfig> config);
  void register_cache(FamilyId family, std::string cache, ExtensionCacheLimits limits = {});

  const std::vector<EngineEntry>& engines() const { return engines_; }
  const std::vector<ConfigEntry>& configs() const { return configs_; }
  const std::vector<CacheEntry>& caches() const { return caches_; }

 private:
  std::vector<EngineEntry> engines_;
  std::vector<ConfigEntry> configs_;
  std::vector<CacheEntry> caches_;
};

class ExtensionModule {
 public:
  virtual ~ExtensionModule() = default;
  /// Non-empty, stable id, e.g. "mylib.ops".
  virtual std::string id() const = 0;
  virtual void configure(ModuleRegistrar& registrar) const = 0;
};

using ExtensionModulePtr = std::shared_ptr<const ExtensionModule>;

/// Implemented, next to ExtensionOp, by the ops of a family that installs
/// itself on first use (linalg, einsum, FFT): Runtime::apply and program
/// preparation ensure the module the op names for the selected engine before
/// resolving its family (Runtime::ensure_module semantics: once per runtime,
/// thread-safe, a read-only no-op when installed), so such an op runs on any
/// runtime and in any traced program without set-up. Not inside a session
/// the caller holds: see ensure_self_installing.
class SelfInstallingOp {
 public:
  virtual ~SelfInstallingOp() = default;
  /// The module registering this op's family for `engine` (its id and its
  /// backend), or nullptr when the family has none for that engine (then
  /// MissingExtension as usual). A family whose kernels cannot run on the
  /// engine's backend throws Unsupported naming what is missing.
  virtual ExtensionModulePtr module_for(const EngineRegistration& engine) const = 0;
};

/// A family library's modules, one per engine id, each built by
/// `build(engine)` on first use and kept (thread-safe): a family whose
/// kernels run on any backend that implements what they call registers for
/// whichever engine it is asked for.
class ModulesByEngine {
 public:
  using Build = std::function<ExtensionModulePtr(const EngineId&)>;
  explicit ModulesByEngine(Build build) : build_(std::move(build)) {}
  ExtensionModulePtr get(const EngineId& engine) const;

 private:
  Build build_;
  mutable std::mutex mutex_;
  mutable std::map<EngineId, ExtensionModulePtr> modules_;
};

}  // namespace tenferro
