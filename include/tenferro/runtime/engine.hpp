#pragma once
// Engines and the prepare/execute protocol of extension families.
//
// An engine registration names an engine id ("tenferro.cpu.v1"), its backend
// kind and which input placements it accepts. For each (family, engine) a
// module registers an ExtensionEngine, whose prepare() sees the op and a
// value-free InputSignature and answers Prepared(plan), NeedsSpecialization
// (ask for more signature detail) or Unsupported(reason). A prepared plan
// carries an executor that runs on borrowed inputs.

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "tenferro/backend/backend.hpp"
#include "tenferro/ops/extension_op.hpp"
#include "tenferro/runtime/extension_cache.hpp"
#include "tenferro/runtime/signature.hpp"

namespace tenferro {

/// The NoInputIngress error with its facts as fields: which input the
/// selected engine refused and where that input lives.
class NoInputIngressError final : public Error {
 public:
  NoInputIngressError(std::string op, std::string message, std::size_t input_index,
                      Placement placement, EngineId engine)
      : Error(ErrorKind::NoInputIngress, std::move(op), std::move(message), ErrorPhase::Execute),
        input_index_(input_index),
        placement_(placement),
        engine_(std::move(engine)) {}
  std::size_t input_index() const noexcept { return input_index_; }
  const Placement& placement() const noexcept { return placement_; }
  /// The engine that does not accept the input.
  const EngineId& engine() const noexcept { return engine_; }
  std::shared_ptr<const Error> share() const override {
    return std::make_shared<const NoInputIngressError>(*this);
  }

 private:
  std::size_t input_index_;
  Placement placement_;
  EngineId engine_;
};

/// What executors run in. Both forms expose the backend; `compact()` is the one
/// explicit way to obtain compact data (it copies only when needed and counts).
class ExecutionScope {
 public:
  virtual ~ExecutionScope() = default;
  virtual Backend& backend() = 0;
  virtual const EngineId& engine() const = 0;
  /// `t` itself when compact column-major, otherwise one compact copy.
  Tensor compact(const Tensor& t);
  std::size_t compact_copies() const { return compact_copies_; }

 private:
  std::size_t compact_copies_ = 0;
};

/// The erased execution context: the executor may enter backend sessions
/// itself (direct ops do so automatically).
class ExecutionContext : public ExecutionScope {};

/// A backend session already entered by the caller; an executor running in it
/// must not re-enter the backend.
class EngineSession : public ExecutionScope {
 public:
  /// The runtime whose engine entered this session.
  virtual std::uint64_t runtime_id() const = 0;
};

class PlanExecutor {
 public:
  virtual ~PlanExecutor() = default;
  /// Mandatory form: runs through the erased context.
  virtual std::vector<Tensor> execute(ExecutionContext& context, ExtensionCaches& caches,
                                      std::span<const Tensor> inputs) const = 0;
  virtual bool supports_session() const { return false; }
  /// Optional form, inside a session the caller already holds.
  virtual std::vector<Tensor> execute_in_session(EngineSession& session, ExtensionCaches& caches,
                                                 std::span<const Tensor> inputs) const;
};

/// Which runtime, epoch and engine a plan was prepared for.
struct PlanBinding {
  std::uint64_t runtime_id = 0;
  std::uint64_t epoch = 0;
  EngineId engine{"tenferro.none.v1"};
};

class PreparedPlan {
 public:
  PreparedPlan(std::shared_ptr<const PlanExecutor> executor, PlanBinding binding,
               std::vector<TensorMeta> declared_outputs = {})
      : executor_(std::move(executor)),
        binding_(std::move(binding)),
        declared_outputs_(std::move(declared_outputs)) {}
  const PlanExecutor& executor() const { return *executor_; }
  std::shared_ptr<const PlanExecutor> executor_ptr() const { return executor_; }
  const PlanBinding& binding() const { return binding_; }
  /// What the op's infer() declares for the signature the plan was prepared
  /// for; the runtime checks every executor result against it (extents that
  /// stay symbolic, such as data-dependent ranks, are not checked).
  const std::vector<TensorMeta>& declared_outputs() const { return declared_outputs_; }

 private:
  std::shared_ptr<const PlanExecutor> executor_;
  PlanBinding binding_;
  std::vector<TensorMeta> declared_outputs_;
};

/// Per-(family, engine) planning configuration (tile sizes, algorithm choices).
class PlanningConfig {
 public:
  virtual ~PlanningConfig() = default;
  virtual bool equals(const PlanningConfig& other) const = 0;
};

/// A planning config holding a value with operator==.
template <class T>
class PlanningConfigOf final : public PlanningConfig {
 public:
  explicit PlanningConfigOf(T value) : value_(std::move(value)) {}
  const T& value() const { return value_; }
  bool equals(const PlanningConfig& other) const override {
    auto* o = dynamic_cast<const PlanningConfigOf*>(&other);
    return o != nullptr && o->value_ == value_;
  }

 private:
  T value_;
};

struct PrepareRequest {
  const ExtensionOp& op;
  /// Masked to `detail`: fields not requested are defaulted.
  const InputSignature& signature;
  unsigned detail = kDetailNone;
  const PlanningConfig* config = nullptr;  // null when none is registered
  PlanBinding binding;
};

struct Prepared {
  std::shared_ptr<const PlanExecutor> executor;
};
struct NeedsSpecialization {
  unsigned detail = kDetailNone;  // SignatureDetail bits wanted
};
struct Unsupported {
  std::string reason;
};
using PrepareOutcome = std::variant<Prepared, NeedsSpecialization, Unsupported>;

class ExtensionEngine {
 public:
  virtual ~ExtensionEngine() = default;
  /// Invalid payloads (an op of the wrong type) are errors, not Unsupported.
  virtual PrepareOutcome prepare(const PrepareRequest& request) const = 0;
};

class EngineRegistration {
 public:
  /// `backend` under the engine id it names (Backend::engine_id()), accepting
  /// the placements it accepts (Backend::accepts).
  explicit EngineRegistration(std::shared_ptr<Backend> backend);
  /// `accepts` decides input ingress; by default what the backend accepts.
  EngineRegistration(EngineId id, std::shared_ptr<Backend> backend,
                     std::function<bool(const Placement&)> accepts = nullptr);
  const EngineId& id() const { return id_; }
  /// The backend's kind ("cpu"), for messages.
  std::string_view kind() const { return backend_->kind(); }
  Backend& backend() const { return *backend_; }
  const std::shared_ptr<Backend>& backend_ptr() const { return backend_; }
  bool accepts(const Placement& p) const { return accepts_(p); }
  /// NoInputIngressError naming `op` and input `index` when this engine does
  /// not accept `placement`.
  void require_ingress(std::string_view op, std::size_t index, const Placement& placement) const;

 private:
  EngineId id_;
  std::shared_ptr<Backend> backend_;
  std::function<bool(const Placement&)> accepts_;
};

}  // namespace tenferro
