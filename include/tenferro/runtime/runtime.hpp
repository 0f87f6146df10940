#pragma once
// The Runtime: engines and installed extension modules published as an
// immutable snapshot tagged with an epoch; a bounded, single-flight cache of
// prepared plans; runtime-owned extension caches; and apply() for any op.

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "tenferro/core/list_ref.hpp"
#include "tenferro/ops/primitives.hpp"
#include "tenferro/runtime/module.hpp"

namespace tenferro {

/// One registered (family, engine) pair in a snapshot.
struct FamilyRegistration {
  std::string module_id;
  FamilyId family;
  EngineId engine;
  std::shared_ptr<const ExtensionEngine> implementation;
  std::shared_ptr<const PlanningConfig> config;
};

/// Immutable view of a runtime configuration.
class RuntimeSnapshot {
 public:
  std::uint64_t epoch() const { return epoch_; }
  const EngineId& selected_engine() const { return selected_->id(); }
  const EngineRegistration& selected() const { return *selected_; }
  const std::shared_ptr<const EngineRegistration>& selected_ptr() const { return selected_; }
  const std::vector<std::shared_ptr<const EngineRegistration>>& engines() const { return engines_; }
  /// The engine with `id`, or nullptr.
  const EngineRegistration* engine(const EngineId& id) const;
  /// The registration of `family` for `engine`, or nullptr.
  const FamilyRegistration* family(std::string_view family, const EngineId& engine) const;
  /// Ids of installed modules.
  std::vector<std::string> modules() const;
  bool has_module(const std::string& id) const { return modules_.count(id) != 0; }
  /// The installed module with `id`, or nullptr.
  ExtensionModulePtr module(const std::string& id) const;
  /// Whether the installed module `module_id` registers `family` for `engine`.
  bool module_registers(const std::string& module_id, std::string_view family,
                        const EngineId& engine) const;

 private:
  friend class Runtime;
  friend class RuntimeEditor;
  friend class RuntimeBuilder;
  struct ModuleRecord {
    ExtensionModulePtr module;
    ModuleRegistrar registrations;
  };
  std::uint64_t epoch_ = 0;
  std::shared_ptr<const EngineRegistration> selected_;
  std::vector<std::shared_ptr<const EngineRegistration>> engines_;
  std::map<std::string, ModuleRecord> modules_;
  // family id -> its registrations, one per engine.
  std::map<std::string, std::vector<FamilyRegistration>, std::less<>> families_;
};

/// Edits a candidate snapshot inside Runtime::reconfigure, under that
/// runtime's reconfigure lock.
class RuntimeEditor {
 public:
  /// Installs a module; an identical module already installed is a no-op;
  /// a different module with the same id is a RuntimeState error (use replace).
  /// The module's configure() runs here, under the lock (Runtime::install_module
  /// runs it before taking the lock).
  void install_module(ExtensionModulePtr module);
  /// Installs or replaces the module with this id (configure() as above).
  void replace_module(ExtensionModulePtr module);
  /// Removes a module (RuntimeState when absent).
  void remove_module(const std::string& id);
  void register_engine(EngineRegistration engine);
  /// Selects the engine that apply() uses (RuntimeState when unknown).
  void select_engine(const EngineId& id);

 private:
  friend class Runtime;
  friend class RuntimeBuilder;
  explicit RuntimeEditor(RuntimeSnapshot& candidate) : candidate_(candidate) {}
  // The same with the registrations configure() already returned.
  void install_configured(ExtensionModulePtr module, ModuleRegistrar registrations);
  void replace_configured(ExtensionModulePtr module, ModuleRegistrar registrations);
  RuntimeSnapshot& candidate_;
  bool changed_ = false;
  std::vector<std::string> replaced_families_;
};

struct PlanCacheStats {
  std::size_t entries = 0;
  std::size_t capacity = 0;
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t evictions = 0;
  std::uint64_t failures = 0;      // preparations that failed (and were cached)
  std::uint64_t shared_waits = 0;  // callers that waited for another's preparation
  std::uint64_t prepares = 0;      // calls of ExtensionEngine::prepare
};

struct RuntimeCacheStats {
  PlanCacheStats plans;
  CacheStats extensions;
};

/// How often programs were prepared and run on one runtime (monotonic).
struct ProgramCounters {
  std::uint64_t preparations = 0;
  std::uint64_t runs = 0;
};

struct RuntimeOptions {
  std::size_t plan_cache_capacity = 1024;
};

class Runtime;
using RuntimePtr = std::shared_ptr<Runtime>;

class RuntimeBuilder {
 public:
  RuntimeBuilder& engine(EngineRegistration engine);
  /// Registers `backend` as the engine it names (Backend::engine_id(), e.g.
  /// "tenferro.cpu.v1" for a CpuBackend), accepting what it accepts.
  RuntimeBuilder& backend(std::shared_ptr<Backend> backend);
  RuntimeBuilder& module(ExtensionModulePtr module);
  RuntimeBuilder& select(EngineId engine);
  RuntimeBuilder& options(RuntimeOptions options);
  /// Validates and publishes epoch 1. Needs at least one engine.
  RuntimePtr build();

 private:
  std::vector<EngineRegistration> engines_;
  std::vector<ExtensionModulePtr> modules_;
  std::optional<EngineId> selected_;
  RuntimeOptions options_;
};

/// A process-unique id for a runtime object (Runtime, EagerRuntime); never 0.
std::uint64_t next_context_id();

/// When `op` is a SelfInstallingOp whose family the runtime's selected
/// engine lacks, ensures the module it names (Runtime::ensure_module).
/// Returns whether a module was installed; false for every other op.
/// Never inside a session this thread holds on `runtime` (enter_session):
/// there a missing self-installing family is MissingExtension and nothing is
/// installed: a call made in a session never reconfigures the runtime. Run
/// the op, or call this, once before entering the session.
bool ensure_self_installing(Runtime& runtime, const Op& op);

class Runtime : public std::enable_shared_from_this<Runtime> {
 public:
  static RuntimeBuilder builder() { return {}; }
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  /// Process-unique id of this runtime.
  std::uint64_t id() const { return id_; }
  std::shared_ptr<const RuntimeSnapshot> snapshot() const;
  /// The current snapshot's epoch: one atomic load, no lock.
  std::uint64_t epoch() const { return epoch_.load(std::memory_order_acquire); }
  Backend& backend() const;

  /// Builds a candidate from the current snapshot, applies `edit`, validates
  /// and publishes it with one epoch bump. Returns whether anything changed
  /// (an edit that changes nothing publishes nothing). On any error the old
  /// snapshot stays. `edit` runs under this runtime's reconfigure lock: a
  /// call from it (or from a configure() its edits run) that reconfigures
  /// this runtime again is RuntimeState, never a deadlock.
  bool reconfigure(const std::function<void(RuntimeEditor&)>& edit);
  /// Idempotent install: an identical module already installed returns false
  /// without locking or bumping the epoch. Safe to call from many threads.
  /// configure() runs once, before the lock: it may call back into this
  /// runtime (install or replace another module).
  bool install_module(ExtensionModulePtr module);
  /// Explicit replacement of the module with the same id (configure() as
  /// for install_module).
  void replace_module(ExtensionModulePtr module);
  /// Ensures `module` is installed for one (family, engine) pair, keyed on
  /// (module id, family, engine):
  ///  - already installed and registering the pair: a read-only no-op
  ///    (returns false, same epoch; also under concurrent first calls);
  ///  - a module that does not register `family` for `engine`:
  ///    MissingExtension naming module, family and engine; nothing installed;
  ///  - otherwise installed with one epoch bump (returns true).
  /// configure() runs once, outside every lock (it may call back into this
  /// runtime); only the publish is serialised, per runtime.
  bool ensure_module(ExtensionModulePtr module, std::string_view family, const EngineId& engine);

  /// Runs any op (core primitive or extension) on the selected engine without
  /// AD, inside a backend session. Checks the output count.
  std::vector<Tensor> apply(const OpPtr& op, ListRef<Tensor> inputs);
  /// Enters a session on the selected engine (RuntimeState when this thread
  /// already holds one of its backend).
  std::unique_ptr<EngineSession> enter_session();
  /// apply() inside a session the caller holds; never re-enters the backend.
  /// A session of another runtime is ContextMismatch; a session entered on an
  /// engine that is no longer the selected one is RuntimeState. An extension
  /// executor without a session form, or an op with no prepared executor, is
  /// Unsupported (no fallback to the lowering inside a session). A
  /// self-installing family is not installed here (ensure_self_installing).
  std::vector<Tensor> apply_in_session(EngineSession& session, const OpPtr& op,
                                       ListRef<Tensor> inputs);

  /// Resolves and prepares an extension op for a signature (cached).
  /// Returns nullptr when no prepared executor is available: the engine
  /// answered Unsupported, or its plan has no executor (reason in `why`).
  /// MissingExtension when no module registers the family for the engine.
  std::shared_ptr<const PreparedPlan> prepare_extension(const ExtensionOpPtr& op,
                                                        const InputSignature& signature,
                                                        std::string* why = nullptr);
  /// Checks the selected engine's ingress for every input (NoInputIngress).
  void check_ingress(std::string_view op_name, std::span<const Tensor> inputs) const;

  ExtensionCacheStore& extension_caches() { return *extension_caches_; }
  RuntimeCacheStats cache_stats() const;
  /// Clears the prepared-plan cache and every extension cache.
  void clear_caches();
  /// Clears the selected extension caches only.
  void clear_caches(const ExtensionCacheSelector& selector);

  /// Programs prepared for and run on this runtime (see ad/program.hpp).
  ProgramCounters program_counters() const;
  void count_program_preparation() { ++program_preparations_; }
  void count_program_run() { ++program_runs_; }

 private:
  friend class RuntimeBuilder;
  struct PlanCache;
  Runtime(std::shared_ptr<const RuntimeSnapshot> snapshot, RuntimeOptions options);
  void publish(std::shared_ptr<RuntimeSnapshot> candidate,
               const std::vector<std::string>& replaced);
  static void index(RuntimeSnapshot& candidate);
  std::vector<Tensor> run_extension(const OpPtr& op, std::span<const Tensor> inputs,
                                    EngineSession* session);
  std::vector<Tensor> run_lowering(const ExtensionOp& op, std::span<const Tensor> inputs);
  std::vector<Tensor> execute_plan(const PlanExecutor& executor, ExtensionCaches& caches,
                                   std::span<const Tensor> inputs, EngineSession* session);

  std::uint64_t id_;
  mutable std::mutex snapshot_mutex_;
  std::mutex reconfigure_mutex_;
  std::shared_ptr<const RuntimeSnapshot> snapshot_;
  // The selected engine's backend, published with each snapshot: backend()
  // is one load (every eager op asks for it).
  std::atomic<Backend*> backend_{nullptr};
  // The current snapshot's epoch, published with it (epoch() is one load:
  // every run of a prepared program checks it).
  std::atomic<std::uint64_t> epoch_{0};
  std::unique_ptr<PlanCache> plans_;
  std::unique_ptr<ExtensionCacheStore> extension_caches_;
  std::atomic<std::uint64_t> program_preparations_{0};
  std::atomic<std::uint64_t> program_runs_{0};
};

}  // namespace tenferro
