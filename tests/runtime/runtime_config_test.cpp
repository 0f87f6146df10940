#include <thread>

#include "runtime_fixtures.hpp"

using namespace rtest;
using Mode = ScriptedEngine::Mode;

TEST(RuntimeConfig, IdsAreValidated) {
  EXPECT_EQ(FamilyId("mylib.scale_by.v1").library(), "mylib");
  EXPECT_EQ(FamilyId("mylib.sub.op.v12").version(), 12);
  for (const char* bad :
       {"", "scale", "mylib.scale", "mylib.scale.v0", "mylib.scale.1", "MyLib.scale.v1",
        "mylib..v1", "mylib.sca-le.v1", "mylib.scale.v", "1lib.op.v1", "mylib.op.v01"}) {
    EXPECT_TF_ERROR(FamilyId(bad), ErrorKind::InvalidArgument);
  }
  EXPECT_TF_ERROR(EngineId("cpu"), ErrorKind::InvalidArgument);
  EXPECT_EQ(cpu_engine_id().str(), "tenferro.cpu.v1");
}

TEST(RuntimeConfig, BuilderPublishesEpochOne) {
  auto rt = make_runtime();
  EXPECT_EQ(rt->epoch(), 1u);
  EXPECT_EQ(rt->snapshot()->selected_engine(), cpu_engine_id());
  EXPECT_TF_ERROR(Runtime::builder().build(), ErrorKind::RuntimeState);
  auto other = make_runtime();
  EXPECT_NE(rt->id(), other->id());
}

TEST(RuntimeConfig, IdenticalInstallIsReadOnlyNoOp) {
  auto rt = make_runtime();
  EXPECT_TRUE(rt->install_module(example::make_example_module()));
  auto snap = rt->snapshot();
  EXPECT_EQ(rt->epoch(), 2u);
  EXPECT_FALSE(rt->install_module(example::make_example_module()));  // a fresh but identical module
  EXPECT_EQ(rt->epoch(), 2u);
  EXPECT_EQ(rt->snapshot(), snap);  // same snapshot object
  EXPECT_EQ(snap->modules(), (std::vector<std::string>{"example.families"}));
}

TEST(RuntimeConfig, ConcurrentInstallConvergesOnOneBump) {
  auto rt = make_runtime();
  std::vector<std::thread> threads;
  std::atomic<int> installed{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      if (rt->install_module(example::make_example_module())) ++installed;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(installed.load(), 1);
  EXPECT_EQ(rt->epoch(), 2u);
}

TEST(RuntimeConfig, DifferentModuleSameIdNeedsExplicitReplace) {
  auto rt = make_runtime();
  rt->install_module(std::make_shared<OneFamilyModule>(
      "t.m", "t.one.v1", std::make_shared<ScriptedEngine>(Mode::Echo)));
  auto replacement = std::make_shared<OneFamilyModule>(
      "t.m", "t.two.v1", std::make_shared<ScriptedEngine>(Mode::Echo));
  EXPECT_TF_ERROR(rt->install_module(replacement), ErrorKind::RuntimeState);
  EXPECT_EQ(rt->epoch(), 2u);
  rt->replace_module(replacement);
  EXPECT_EQ(rt->epoch(), 3u);
  EXPECT_EQ(rt->snapshot()->family("t.one.v1", cpu_engine_id()), nullptr);
  EXPECT_NE(rt->snapshot()->family("t.two.v1", cpu_engine_id()), nullptr);
}

TEST(RuntimeConfig, ModuleWithoutSelectedEngineIsRejectedBeforeAnyWork) {
  auto rt = make_runtime();
  auto engine = std::make_shared<ScriptedEngine>(Mode::Echo);
  auto gpu_only =
      std::make_shared<OneFamilyModule>("t.gpu", "t.gpu_op.v1", engine, "tenferro.cuda.v1");
  try {
    rt->install_module(gpu_only);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::MissingExtension);
    const std::string msg = e.what();
    EXPECT_NE(msg.find("t.gpu"), std::string::npos);
    EXPECT_NE(msg.find("t.gpu_op.v1"), std::string::npos);
    EXPECT_NE(msg.find("tenferro.cpu.v1"), std::string::npos);
  }
  EXPECT_EQ(engine->prepares.load(), 0);
  EXPECT_EQ(rt->epoch(), 1u);
}

namespace {
class OtherEngine final : public ExtensionEngine {
 public:
  PrepareOutcome prepare(const PrepareRequest&) const override {
    return tenferro::Unsupported{"x"};
  }
};
class ConfigOnlyModule final : public ExtensionModule {
 public:
  std::string id() const override { return "t.cfg"; }
  void configure(ModuleRegistrar& r) const override {
    r.register_engine(FamilyId("t.a.v1"), cpu_engine_id(), std::make_shared<OtherEngine>());
    r.register_planning_config(FamilyId("t.b.v1"), cpu_engine_id(),
                               std::make_shared<PlanningConfigOf<int>>(4));
  }
};
}  // namespace

TEST(RuntimeConfig, ConflictsAndConfigsWithoutEngineAreTypedErrors) {
  auto rt = make_runtime();
  rt->install_module(std::make_shared<OneFamilyModule>(
      "t.first", "t.shared.v1", std::make_shared<ScriptedEngine>(Mode::Echo)));
  auto snap = rt->snapshot();
  try {
    rt->install_module(std::make_shared<OneFamilyModule>("t.second", "t.shared.v1",
                                                         std::make_shared<OtherEngine>()));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("t.first"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("t.second"), std::string::npos);
  }
  EXPECT_TF_ERROR(rt->install_module(std::make_shared<ConfigOnlyModule>()),
                  ErrorKind::InvalidArgument);
  EXPECT_EQ(rt->snapshot(), snap);  // failed edits leave the old snapshot
}

TEST(RuntimeConfig, FailedReconfigureLeavesSnapshot) {
  auto rt = make_runtime();
  auto before = rt->snapshot();
  EXPECT_TF_ERROR(rt->reconfigure([](RuntimeEditor& e) {
    e.install_module(example::make_example_module());
    e.select_engine(EngineId("tenferro.nowhere.v1"));
  }),
                  ErrorKind::RuntimeState);
  EXPECT_EQ(rt->snapshot(), before);
  EXPECT_EQ(rt->epoch(), 1u);
  EXPECT_FALSE(rt->snapshot()->has_module("example.families"));
  // An edit that changes nothing publishes nothing.
  EXPECT_FALSE(rt->reconfigure([](RuntimeEditor&) {}));
  EXPECT_EQ(rt->epoch(), 1u);
}

TEST(RuntimeConfig, ReconfigureStalesPlansOfOldEpoch) {
  auto rt = make_runtime();
  auto engine = std::make_shared<ScriptedEngine>(Mode::Echo);
  rt->install_module(std::make_shared<OneFamilyModule>("t.m", "t.echo.v1", engine));
  auto op = std::make_shared<TestOp>("t.echo.v1", 1, 1);
  rt->apply(op, {vec({1})});
  rt->apply(op, {vec({2})});
  EXPECT_EQ(engine->prepares.load(), 1);
  rt->install_module(example::make_example_module());  // epoch bump
  rt->apply(op, {vec({3})});
  EXPECT_EQ(engine->prepares.load(), 2);  // re-prepared for the new epoch
}
