// Calls back into a runtime from code the runtime runs: a module's
// configure() during a cold install, an edit of reconfigure(), and
// self-installing families inside a session the caller holds.

#include <future>
#include <thread>

#include "runtime_fixtures.hpp"
#include "tenferro/tenferro.hpp"

using namespace rtest;
using Mode = ScriptedEngine::Mode;

namespace {

// Runs `f` on another thread; a deadlock fails the test instead of hanging
// ctest: the process exits (the blocked thread cannot be joined).
template <class F>
void finishes_within(F f, std::chrono::seconds limit) {
  auto done = std::async(std::launch::async, std::move(f));
  if (done.wait_for(limit) != std::future_status::ready) {
    ADD_FAILURE() << "deadlock: the call did not return within " << limit.count() << " s";
    std::fflush(nullptr);
    std::_Exit(1);
  }
  done.get();  // rethrows a failure of f
}

// A module whose configure() calls back into `runtime`: it replaces the
// module "t.side" (a different id) every time it is configured. It holds the
// runtime weakly: the runtime holds the module once installed, and a strong
// reference would be a cycle that never frees either (LeakSanitizer).
class CallbackModule final : public ExtensionModule {
 public:
  CallbackModule(const RuntimePtr& runtime, std::string family)
      : runtime_(runtime), family_(std::move(family)) {}
  mutable std::atomic<int> configures{0};
  std::string id() const override { return "t.callback"; }
  void configure(ModuleRegistrar& r) const override {
    ++configures;
    const RuntimePtr runtime = runtime_.lock();
    ASSERT_NE(runtime, nullptr);
    runtime->replace_module(std::make_shared<OneFamilyModule>(
        "t.side", "t.side.v1", std::make_shared<ScriptedEngine>(Mode::Echo)));
    r.register_engine(FamilyId(family_), cpu_engine_id(),
                      std::make_shared<ScriptedEngine>(Mode::Echo));
  }

 private:
  std::weak_ptr<Runtime> runtime_;
  std::string family_;
};

}  // namespace

TEST(RuntimeReentrancy, ConfigureMayCallBackIntoTheRuntimeDuringAColdFactoryCall) {
  auto runtime = make_runtime();
  auto rt = EagerRuntime::make(runtime);
  auto module = std::make_shared<CallbackModule>(runtime, "t.echo.v1");
  auto op = std::make_shared<TestOp>("t.echo.v1", 1, 1);
  int factory_calls = 0;
  ModuleFactory factory = [&](const EagerExtensionTarget&) -> ExtensionModulePtr {
    ++factory_calls;
    return module;
  };
  const std::uint64_t epoch = runtime->epoch();
  finishes_within(
      [&] {
        std::vector<EagerTensor> in{rt->tensor(vec({1, 2}))};
        auto out = apply_eager_with_module_factory(op, in, factory);
        EXPECT_EQ(out[0].value().to_vector<double>(), (std::vector<double>{1, 2}));
      },
      std::chrono::seconds(20));
  // configure() ran once, outside the lock: its replace published, then the
  // install did.
  EXPECT_EQ(module->configures.load(), 1);
  EXPECT_EQ(runtime->epoch(), epoch + 2);
  EXPECT_TRUE(runtime->snapshot()->has_module("t.callback"));
  EXPECT_TRUE(runtime->snapshot()->has_module("t.side"));
  // Warm: a read-only no-op that configures nothing.
  std::vector<EagerTensor> in{rt->tensor(vec({3}))};
  EXPECT_EQ(apply_eager_with_module_factory(op, in, factory)[0].value().to_vector<double>(),
            (std::vector<double>{3}));
  EXPECT_EQ(factory_calls, 2);
  EXPECT_EQ(module->configures.load(), 1);
  EXPECT_EQ(runtime->epoch(), epoch + 2);
}

TEST(RuntimeReentrancy, InstallReplaceAndEnsureConfigureOutsideTheLock) {
  auto runtime = make_runtime();
  const std::uint64_t epoch = runtime->epoch();
  finishes_within(
      [&] {
        auto installed = std::make_shared<CallbackModule>(runtime, "t.echo.v1");
        EXPECT_TRUE(runtime->install_module(installed));
        EXPECT_EQ(installed->configures.load(), 1);
        // Identical again: configured once more for the comparison, no publish.
        EXPECT_FALSE(runtime->install_module(installed));
        EXPECT_EQ(installed->configures.load(), 2);
        auto replacement = std::make_shared<CallbackModule>(runtime, "t.other.v1");
        runtime->replace_module(replacement);
        EXPECT_EQ(replacement->configures.load(), 1);
        auto ensured = std::make_shared<CallbackModule>(runtime, "t.other.v1");
        EXPECT_FALSE(runtime->ensure_module(ensured, "t.other.v1", cpu_engine_id()));
        EXPECT_EQ(ensured->configures.load(), 0);  // warm: read-only
      },
      std::chrono::seconds(20));
  // install: side + module; the identical install: side only; replace: side + module.
  EXPECT_EQ(runtime->epoch(), epoch + 5);
  EXPECT_NE(runtime->snapshot()->family("t.other.v1", cpu_engine_id()), nullptr);
  EXPECT_EQ(runtime->snapshot()->family("t.echo.v1", cpu_engine_id()), nullptr);
}

TEST(RuntimeReentrancy, ReconfigureFromInsideAnEditIsRuntimeStateNotADeadlock) {
  auto runtime = make_runtime();
  const auto before = runtime->snapshot();
  finishes_within(
      [&] {
        // The edit's install runs configure() under the lock; its callback
        // into the same runtime is refused.
        auto module = std::make_shared<CallbackModule>(runtime, "t.echo.v1");
        EXPECT_TF_ERROR(runtime->reconfigure([&](RuntimeEditor& e) { e.install_module(module); }),
                        ErrorKind::RuntimeState);
        EXPECT_EQ(module->configures.load(), 1);
        // So is a direct call from the edit.
        EXPECT_TF_ERROR(runtime->reconfigure([&](RuntimeEditor&) {
          runtime->install_module(example::make_example_module());
        }),
                        ErrorKind::RuntimeState);
      },
      std::chrono::seconds(20));
  EXPECT_EQ(runtime->snapshot(), before);
  EXPECT_EQ(runtime->epoch(), 1u);
  // The lock is free again, and another runtime is never affected.
  EXPECT_TRUE(runtime->install_module(example::make_example_module()));
  EXPECT_EQ(runtime->epoch(), 2u);
}

// ---- self-installing families and held sessions ---------------------------------------

namespace {
// A self-installing family that echoes its input; counts module_for().
class SelfEcho final : public ExtensionOp, public SelfInstallingOp {
 public:
  explicit SelfEcho(std::shared_ptr<std::atomic<int>> calls) : calls_(std::move(calls)) {}
  const FamilyId& family_id() const override { return id_; }
  std::size_t input_count() const override { return 1; }
  std::size_t output_count() const override { return 1; }
  std::size_t hash() const override { return 11; }
  bool equals(const Op& o) const override { return dynamic_cast<const SelfEcho*>(&o) != nullptr; }
  InferenceResult infer(std::span<const TensorMeta> in) const override { return {{in[0]}, {}}; }
  ExtensionModulePtr module_for(const EngineRegistration& engine) const override {
    ++*calls_;
    return std::make_shared<OneFamilyModule>("t.self", "t.self_echo.v1",
                                             std::make_shared<ScriptedEngine>(Mode::Echo),
                                             engine.id().str());
  }

 private:
  FamilyId id_{"t.self_echo.v1"};
  std::shared_ptr<std::atomic<int>> calls_;
};
}  // namespace

TEST(RuntimeReentrancy, SelfInstallingFamilyNeverInstallsInsideAHeldSession) {
  auto runtime = make_runtime();
  auto calls = std::make_shared<std::atomic<int>>(0);
  auto op = std::make_shared<SelfEcho>(calls);
  const std::vector<Tensor> in{vec({1, 2})};
  {
    auto session = runtime->enter_session();
    try {
      runtime->apply_in_session(*session, op, in);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::MissingExtension);
      EXPECT_EQ(e.op(), "t.self_echo.v1");
      EXPECT_NE(std::string(e.what()).find("outside a session"), std::string::npos) << e.what();
    }
    // apply() reuses the held session: the same rule.
    EXPECT_TF_ERROR(runtime->apply(op, in), ErrorKind::MissingExtension);
    EXPECT_TF_ERROR(ensure_self_installing(*runtime, *op), ErrorKind::MissingExtension);
    EXPECT_EQ(calls->load(), 0);
    EXPECT_EQ(runtime->epoch(), 1u);
    EXPECT_TRUE(runtime->snapshot()->modules().empty());
  }
  {
    auto rt = EagerRuntime::make(runtime);
    EagerSession session(rt);
    EXPECT_TF_ERROR(apply_eager_in_session(session, op, {rt->tensor(vec({1}))}),
                    ErrorKind::MissingExtension);
    EXPECT_EQ(calls->load(), 0);
  }
  // Outside the session it installs once; a later session runs it warm.
  EXPECT_EQ(runtime->apply(op, in)[0].storage(), in[0].storage());
  EXPECT_EQ(calls->load(), 1);
  EXPECT_EQ(runtime->epoch(), 2u);
  auto session = runtime->enter_session();
  EXPECT_EQ(runtime->apply_in_session(*session, op, in)[0].storage(), in[0].storage());
  EXPECT_FALSE(ensure_self_installing(*runtime, *op));
  EXPECT_EQ(calls->load(), 1);
  EXPECT_EQ(runtime->epoch(), 2u);
}

TEST(RuntimeReentrancy, TheSessionRuleIsPerThreadAndPerRuntime) {
  auto runtime = make_runtime();
  auto other = make_runtime();
  auto calls = std::make_shared<std::atomic<int>>(0);
  auto op = std::make_shared<SelfEcho>(calls);
  const std::vector<Tensor> in{vec({1})};
  auto session = runtime->enter_session();
  // Another runtime (its own backend) installs on this thread.
  EXPECT_TRUE(ensure_self_installing(*other, *op));
  // Another thread, holding no session, installs on this runtime.
  std::thread([&] { EXPECT_TRUE(ensure_self_installing(*runtime, *op)); }).join();
  EXPECT_EQ(calls->load(), 2);
  EXPECT_EQ(runtime->epoch(), 2u);
  // Now installed: the held session runs it.
  EXPECT_EQ(runtime->apply_in_session(*session, op, in)[0].storage(), in[0].storage());
}

TEST(RuntimeReentrancy, ProgramPreparationInsideAHeldSessionInstallsNothing) {
  auto runtime = make_runtime();
  auto calls = std::make_shared<std::atomic<int>>(0);
  auto op = std::make_shared<SelfEcho>(calls);
  auto t = placeholder(DType::F64, {2});
  Program program = compile({tenferro::apply(op, std::vector<TracedTensor>{t})[0]}, {t});
  const Tensor in[1] = {vec({1, 2})};
  {
    auto session = runtime->enter_session();
    EXPECT_TF_ERROR(prepare(*runtime, program, InputSignature::of(in)),
                    ErrorKind::MissingExtension);
    EXPECT_EQ(calls->load(), 0);
    EXPECT_EQ(runtime->epoch(), 1u);
  }
  auto prepared = prepare(*runtime, program, InputSignature::of(in));
  EXPECT_EQ(calls->load(), 1);
  EXPECT_EQ(runtime->epoch(), 2u);
}
