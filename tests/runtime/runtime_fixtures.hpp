#pragma once
// Test ops and engines with scripted behaviour for the runtime suite.

#include <atomic>
#include <chrono>
#include <thread>

#include "example_families/example_families.hpp"
#include "tenferro/runtime/runtime.hpp"
#include "tenferro/runtime/simple_family.hpp"
#include "test_util.hpp"

namespace rtest {

using namespace tenferro;

/// A parameterless op of any family id with `in` inputs and `out` outputs
/// whose outputs copy the metadata of input 0.
class TestOp final : public ExtensionOp {
 public:
  TestOp(std::string family, std::size_t in, std::size_t out, int tag = 0)
      : family_(std::move(family)), in_(in), out_(out), tag_(tag) {}
  const FamilyId& family_id() const override { return family_; }
  std::size_t input_count() const override { return in_; }
  std::size_t output_count() const override { return out_; }
  std::size_t hash() const override { return std::hash<std::string>{}(family_.str()) ^ tag_; }
  bool equals(const Op& o) const override {
    auto* t = dynamic_cast<const TestOp*>(&o);
    return t && t->family_ == family_ && t->tag_ == tag_;
  }
  InferenceResult infer(std::span<const TensorMeta> inputs) const override {
    return {std::vector<TensorMeta>(out_, inputs.empty() ? TensorMeta{} : inputs[0]), {}};
  }

 private:
  FamilyId family_;
  std::size_t in_, out_;
  int tag_;
};

/// Executor returning `count` copies of input 0 (erased form only unless session).
class EchoExecutor final : public PlanExecutor {
 public:
  EchoExecutor(std::size_t count, bool session) : count_(count), session_(session) {}
  std::vector<Tensor> execute(ExecutionContext&, ExtensionCaches&,
                              std::span<const Tensor> in) const override {
    return std::vector<Tensor>(count_, in[0]);
  }
  bool supports_session() const override { return session_; }
  std::vector<Tensor> execute_in_session(EngineSession&, ExtensionCaches&,
                                         std::span<const Tensor> in) const override {
    return std::vector<Tensor>(count_, in[0]);
  }

 private:
  std::size_t count_;
  bool session_;
};

/// Executor returning an f32 [7] whatever infer() declares (a broken engine).
class WrongMetaExecutor final : public PlanExecutor {
 public:
  std::vector<Tensor> execute(ExecutionContext&, ExtensionCaches&,
                              std::span<const Tensor>) const override {
    return {zeros({7}, DType::F32)};
  }
};

/// Executor whose kernel fails numerically.
class FailingExecutor final : public PlanExecutor {
 public:
  std::vector<Tensor> execute(ExecutionContext&, ExtensionCaches&,
                              std::span<const Tensor>) const override {
    fail_in(ErrorPhase::Execute, ErrorKind::Singular, "kernel", "pivot 0 is zero");
  }
};

/// Engine whose prepare() follows a script; records what it saw.
class ScriptedEngine final : public ExtensionEngine {
 public:
  enum class Mode {
    Echo,
    EchoNoSession,
    WrongCount,
    WrongMeta,
    Unsupported,
    Throw,
    NeedsStrides,
    NeedsSameAgain,
    Slow,
    ExecFails,
    NoExecutor
  };
  explicit ScriptedEngine(Mode mode) : mode_(mode) {}
  mutable std::atomic<int> prepares{0};
  mutable std::atomic<unsigned> last_detail{0};
  mutable std::atomic<std::size_t> last_stride_count{0};

  PrepareOutcome prepare(const PrepareRequest& r) const override {
    ++prepares;
    last_detail = r.detail;
    last_stride_count = r.signature[0].strides.size();
    switch (mode_) {
      case Mode::Echo:
        return Prepared{std::make_shared<EchoExecutor>(r.op.output_count(), true)};
      case Mode::EchoNoSession:
        return Prepared{std::make_shared<EchoExecutor>(r.op.output_count(), false)};
      case Mode::WrongCount:
        return Prepared{std::make_shared<EchoExecutor>(r.op.output_count() + 1, true)};
      case Mode::WrongMeta:
        return Prepared{std::make_shared<WrongMetaExecutor>()};
      case Mode::Unsupported:
        return tenferro::Unsupported{"no kernel for this signature"};
      case Mode::Throw:
        fail(ErrorKind::InvalidArgument, std::string(r.op.name()), "engine rejects the payload");
      case Mode::NeedsStrides:
        if (!(r.detail & kDetailStrides)) return NeedsSpecialization{kDetailStrides};
        return Prepared{std::make_shared<EchoExecutor>(r.op.output_count(), true)};
      case Mode::NeedsSameAgain:
        return NeedsSpecialization{kDetailLayout};
      case Mode::ExecFails:
        return Prepared{std::make_shared<FailingExecutor>()};
      case Mode::NoExecutor:
        return Prepared{nullptr};
      case Mode::Slow:
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        return Prepared{std::make_shared<EchoExecutor>(r.op.output_count(), true)};
    }
    return tenferro::Unsupported{"unreachable"};
  }

 private:
  Mode mode_;
};

/// A module registering one engine for one family on `engine`.
class OneFamilyModule final : public ExtensionModule {
 public:
  OneFamilyModule(std::string id, std::string family, std::shared_ptr<const ExtensionEngine> engine,
                  std::string engine_id = "tenferro.cpu.v1")
      : id_(std::move(id)),
        family_(std::move(family)),
        engine_(std::move(engine)),
        engine_id_(std::move(engine_id)) {}
  std::string id() const override { return id_; }
  void configure(ModuleRegistrar& r) const override {
    r.register_engine(FamilyId(family_), EngineId(engine_id_), engine_);
  }

 private:
  std::string id_, family_;
  std::shared_ptr<const ExtensionEngine> engine_;
  std::string engine_id_;
};

inline RuntimePtr make_runtime(RuntimeOptions options = {}) {
  return Runtime::builder()
      .backend(std::make_shared<CpuBackend>(CpuBackendOptions{1}))
      .options(options)
      .build();
}

inline Tensor vec(std::vector<double> v) {
  const std::int64_t n = static_cast<std::int64_t>(v.size());
  return Tensor::from_col_major({n}, v);
}

}  // namespace rtest
