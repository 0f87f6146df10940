#pragma once
// Authoring helper for simple families: write "execute on reads" (and
// optionally a prepare check); the helper provides the engine, the prepared
// plan, the executor (session and erased forms) and the module.
//
//   class ScaleBy final : public tenferro::ExtensionOpWithParams<ScaleBy, ScaleParams> {
//    public:
//     static constexpr std::string_view kFamily = "mylib.scale_by.v1";  // the id, once
//     explicit ScaleBy(double k) : ExtensionOpWithParams(ScaleParams{k}) {}
//     ...
//   };
//   auto module = std::make_shared<tenferro::SimpleModule>("mylib.ops");
//   module->family<ScaleBy>([](const ScaleBy& op, tenferro::ExecutionScope& scope,
//                              tenferro::ExtensionCaches&, std::span<const tenferro::Tensor> in) {
//     return std::vector<tenferro::Tensor>{...};
//   });
//   runtime->install_module(module);
//
// An op type without kFamily passes the id to both its constructor and
// family<OpT>(id, ...); nothing can compare the two then, so prefer kFamily.
//
// A hand-written ExtensionEngine stays possible for families that plan.

#include <functional>
#include <optional>
#include <typeinfo>

#include "tenferro/runtime/module.hpp"
#include "tenferro/runtime/runtime.hpp"

namespace tenferro {

template <class OpT>
class SimpleEngine final : public ExtensionEngine {
 public:
  using Execute = std::function<std::vector<Tensor>(const OpT&, ExecutionScope&, ExtensionCaches&,
                                                    std::span<const Tensor>)>;
  /// Returns a reason to answer Unsupported, or nullopt to prepare.
  using Check = std::function<std::optional<std::string>(const OpT&, const PrepareRequest&)>;

  explicit SimpleEngine(Execute execute, Check check = nullptr)
      : execute_(std::move(execute)), check_(std::move(check)) {}

  PrepareOutcome prepare(const PrepareRequest& request) const override {
    const auto* op = dynamic_cast<const OpT*>(&request.op);
    if (op == nullptr) {
      fail(ErrorKind::InvalidArgument, std::string(request.op.name()),
           "invalid payload: the registered engine expects op type ", typeid(OpT).name());
    }
    if (check_) {
      if (auto reason = check_(*op, request)) return Unsupported{*reason};
    }
    return Prepared{std::make_shared<const Executor>(std::make_shared<const OpT>(*op), execute_)};
  }

 private:
  class Executor final : public PlanExecutor {
   public:
    Executor(std::shared_ptr<const OpT> op, Execute execute)
        : op_(std::move(op)), execute_(std::move(execute)) {}
    std::vector<Tensor> execute(ExecutionContext& context, ExtensionCaches& caches,
                                std::span<const Tensor> inputs) const override {
      return execute_(*op_, context, caches, inputs);
    }
    bool supports_session() const override { return true; }
    std::vector<Tensor> execute_in_session(EngineSession& session, ExtensionCaches& caches,
                                           std::span<const Tensor> inputs) const override {
      return execute_(*op_, session, caches, inputs);
    }

   private:
    std::shared_ptr<const OpT> op_;
    Execute execute_;
  };
  Execute execute_;
  Check check_;
};

/// A module assembled from simple families.
class SimpleModule final : public ExtensionModule {
 public:
  explicit SimpleModule(std::string id) : id_(std::move(id)) {}

  /// Registers OpT's family (OpT::kFamily, see HasFamilyId) on `engine`
  /// with `execute`.
  template <HasFamilyId OpT>
  SimpleModule& family(typename SimpleEngine<OpT>::Execute execute,
                       typename SimpleEngine<OpT>::Check check = nullptr,
                       EngineId engine = cpu_engine_id()) {
    return family<OpT>(std::string(OpT::kFamily), std::move(execute), std::move(check),
                       std::move(engine));
  }
  /// Registers family `family_id` (OpT's family) on `engine` with `execute`.
  /// When OpT has a kFamily, an id that differs from it is InvalidArgument
  /// here, at registration, naming both (a typo is not left to surface as a
  /// missing module at the first call).
  template <class OpT>
  SimpleModule& family(std::string family_id, typename SimpleEngine<OpT>::Execute execute,
                       typename SimpleEngine<OpT>::Check check = nullptr,
                       EngineId engine = cpu_engine_id()) {
    if constexpr (HasFamilyId<OpT>) {
      if (family_id != OpT::kFamily) {
        fail(ErrorKind::InvalidArgument, "SimpleModule::family", "family id '", family_id,
             "' differs from the op type's kFamily '", OpT::kFamily,
             "'; drop the id argument to use kFamily");
      }
    }
    entries_.push_back(
        {FamilyId(std::move(family_id)), std::move(engine),
         std::make_shared<const SimpleEngine<OpT>>(std::move(execute), std::move(check))});
    return *this;
  }
  /// Registers a hand-written engine.
  SimpleModule& engine(FamilyId family, EngineId engine,
                       std::shared_ptr<const ExtensionEngine> implementation) {
    entries_.push_back({std::move(family), std::move(engine), std::move(implementation)});
    return *this;
  }
  SimpleModule& cache(FamilyId family, std::string name, ExtensionCacheLimits limits = {}) {
    caches_.push_back({std::move(family), std::move(name), limits});
    return *this;
  }

  std::string id() const override { return id_; }
  void configure(ModuleRegistrar& registrar) const override {
    for (const auto& e : entries_) registrar.register_engine(e.family, e.engine, e.implementation);
    for (const auto& c : caches_) registrar.register_cache(c.family, c.cache, c.limits);
  }

 private:
  std::string id_;
  std::vector<ModuleRegistrar::EngineEntry> entries_;
  std::vector<ModuleRegistrar::CacheEntry> caches_;
};

}  // namespace tenferro
