// The install-ensure, session, fallback and rule semantics of eager extension
// dispatch, point by point as the seed (shared/seed/extension.rs) behaves.

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <future>
#include <thread>

#include "example_families/example_families.hpp"
#include "tenferro/ad/eager_extension.hpp"
#include "tenferro/ad/eager_ops.hpp"
#include "test_util.hpp"

using namespace tenferro;

namespace {

Tensor vec(std::vector<double> v) {
  return Tensor::from_col_major({static_cast<std::int64_t>(v.size())}, v);
}

std::vector<double> values(const EagerTensor& t) {
  return t.value().to_vector<double>();
}

// y = k x on f64, written as a plain loop (no nested backend entry).
std::vector<Tensor> scale_f64(const example::ScaleBy& op, ExecutionScope& scope, ExtensionCaches&,
                              std::span<const Tensor> in) {
  Tensor x = scope.compact(in[0]);
  Tensor y = scope.backend().empty(x.shape(), x.dtype());
  for (std::int64_t i = 0; i < x.numel(); ++i)
    y.mutable_data<double>()[i] = op.k() * x.data<double>()[i];
  return {y};
}

ad::RuleSet scale_rules() {
  ad::RuleSet rs;
  rs.jvp = [](const ad::RuleArgs& a, std::span<const ad::MaybeVal> t) -> std::vector<ad::MaybeVal> {
    if (!t[0]) return {std::nullopt};
    return {a.emitter.scale(*t[0], dynamic_cast<const example::ScaleBy&>(a.op).k())};
  };
  rs.residuals = ad::Residuals::none();
  return rs;
}

// A module "test.scale" registering scale_by for the given engines.
std::shared_ptr<SimpleModule> scale_module(std::vector<EngineId> engines,
                                           std::string id = "test.scale") {
  auto m = std::make_shared<SimpleModule>(std::move(id));
  for (auto& e : engines) m->family<example::ScaleBy>("example.scale_by.v1", scale_f64, nullptr, e);
  return m;
}

EagerRuntimePtr bare_rt() {
  return EagerRuntime::make(
      Runtime::builder().backend(std::make_shared<CpuBackend>(CpuBackendOptions{1})).build());
}

const EngineId kSecondEngine("test.cpu2.v1");

// Two CPU engines; the default selection is the first.
EagerRuntimePtr two_engine_rt(ExtensionModulePtr module) {
  auto builder = Runtime::builder()
                     .backend(std::make_shared<CpuBackend>(CpuBackendOptions{1}))
                     .engine(EngineRegistration(kSecondEngine,
                                                std::make_shared<CpuBackend>(CpuBackendOptions{1}),
                                                [](const Placement& p) { return p.is_host(); }));
  if (module) builder.module(std::move(module));
  return EagerRuntime::make(builder.build());
}

// Runs `f` on another thread; a deadlock fails the test instead of hanging.
template <class F>
void finishes_within(F f, std::chrono::seconds limit) {
  auto done = std::async(std::launch::async, std::move(f));
  if (done.wait_for(limit) != std::future_status::ready) {
    ADD_FAILURE() << "deadlock: the call did not return within " << limit.count() << " s";
    std::fflush(nullptr);
    std::_Exit(1);  // the blocked thread cannot be joined
  }
  done.get();  // rethrows a failure of f
}

// A family with a lowering (y = x + x) and, optionally, engines that cannot run it.
class Twice final : public ExtensionOpWithParams<Twice, NoParams> {
 public:
  Twice() : ExtensionOpWithParams("test.twice.v1", {}) {}
  std::size_t input_count() const override { return 1; }
  std::size_t output_count() const override { return 1; }
  InferenceResult infer(std::span<const TensorMeta> in) const override { return {{in[0]}, {}}; }
  bool has_lowering() const override { return true; }
  std::vector<LoweringBuilder::Value> lower(
      LoweringBuilder& b, std::span<const LoweringBuilder::Value> in) const override {
    static const OpPtr add = make_primitive(prim::Binary{BinaryOp::Add});
    const LoweringBuilder::Value xs[2] = {in[0], in[0]};
    return b.emit(add, xs);
  }
};

// Answers Prepared with no executor ("no prepared executor").
class NoExecutorEngine final : public ExtensionEngine {
 public:
  PrepareOutcome prepare(const PrepareRequest&) const override { return Prepared{nullptr}; }
};

// An executor with only the erased-context form.
class ContextOnlyExecutor final : public PlanExecutor {
 public:
  std::vector<Tensor> execute(ExecutionContext&, ExtensionCaches&,
                              std::span<const Tensor> in) const override {
    return {in[0]};
  }
};
class ContextOnlyEngine final : public ExtensionEngine {
 public:
  PrepareOutcome prepare(const PrepareRequest&) const override {
    return Prepared{std::make_shared<const ContextOnlyExecutor>()};
  }
};

}  // namespace

// ---- install-ensure -------------------------------------------------------------

TEST(EagerExtensionInstall, FactoryRunsOutsideLocksNoDeadlockAcrossRuntimes) {
  auto outer = bare_rt();
  auto inner = bare_rt();
  auto op = std::make_shared<example::ScaleBy>(2.0);
  // The outer family's factory makes a cold factory call on another runtime
  // and, for a second family, on its own runtime.
  auto factory = [&](const EagerExtensionTarget&) -> ExtensionModulePtr {
    std::vector<EagerTensor> in{inner->tensor(vec({1}))};
    EXPECT_EQ(
        values(apply_eager_with_module_factory(
            op, in, [](const EagerExtensionTarget& t) { return scale_module({t.engine}); })[0]),
        (std::vector<double>{2}));
    std::vector<EagerTensor> own{outer->tensor(vec({1}))};
    apply_eager_with_module_factory(
        std::make_shared<Twice>(), own, [](const EagerExtensionTarget& t) -> ExtensionModulePtr {
          auto m = std::make_shared<SimpleModule>("test.twice");
          m->family<Twice>(
              "test.twice.v1",
              [](const Twice&, ExecutionScope&, ExtensionCaches&, std::span<const Tensor> in) {
                return std::vector<Tensor>{in[0]};
              },
              nullptr, t.engine);
          return m;
        });
    return scale_module({cpu_engine_id()}, "test.scale.outer");
  };
  finishes_within(
      [&] {
        std::vector<EagerTensor> in{outer->tensor(vec({3}))};
        EXPECT_EQ(values(apply_eager_with_module_factory(op, in, factory)[0]),
                  (std::vector<double>{6}));
      },
      std::chrono::seconds(60));
  EXPECT_TRUE(outer->runtime()->snapshot()->has_module("test.scale.outer"));
  EXPECT_TRUE(outer->runtime()->snapshot()->has_module("test.twice"));
  EXPECT_TRUE(inner->runtime()->snapshot()->has_module("test.scale"));
}

TEST(EagerExtensionInstall, ModuleThatDoesNotRegisterIsRejectedAndNothingInstalled) {
  auto rt = bare_rt();
  auto op = std::make_shared<example::ScaleBy>(2.0);
  std::vector<EagerTensor> in{rt->tensor(vec({1}))};
  const std::uint64_t epoch = rt->runtime()->epoch();
  // Registers the family for another engine only.
  auto wrong_engine = [](const EagerExtensionTarget&) -> ExtensionModulePtr {
    return scale_module({kSecondEngine}, "test.elsewhere");
  };
  // Registers another family only.
  auto wrong_family = [](const EagerExtensionTarget&) -> ExtensionModulePtr {
    auto m = std::make_shared<SimpleModule>("test.swap_only");
    m->family<example::Swap>("example.swap.v1", [](const example::Swap&, ExecutionScope&,
                                                   ExtensionCaches&, std::span<const Tensor> in) {
      return std::vector<Tensor>{in[1], in[0]};
    });
    return m;
  };
  for (const ModuleFactory& f : {ModuleFactory(wrong_engine), ModuleFactory(wrong_family)}) {
    try {
      apply_eager_with_module_factory(op, in, f);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::MissingExtension);
      const std::string msg = e.what();
      EXPECT_NE(msg.find("example.scale_by.v1"), std::string::npos) << msg;
      EXPECT_NE(msg.find("tenferro.cpu.v1"), std::string::npos) << msg;
      EXPECT_NE(msg.find("module '"), std::string::npos) << msg;
    }
    EXPECT_EQ(rt->runtime()->epoch(), epoch);
    EXPECT_TRUE(rt->runtime()->snapshot()->modules().empty());
  }
  // apply_eager_with_module takes the same ensure step.
  EXPECT_TF_ERROR(apply_eager_with_module(op, in, scale_module({kSecondEngine}, "test.elsewhere")),
                  ErrorKind::MissingExtension);
  EXPECT_EQ(rt->runtime()->epoch(), epoch);
  EXPECT_EQ(values(apply_eager_with_module(op, in, scale_module({cpu_engine_id()}))[0]),
            (std::vector<double>{2}));
  EXPECT_EQ(rt->runtime()->epoch(), epoch + 1);
}

TEST(EagerExtensionInstall, EnsureIsKeyedAndReadOnlyWhenInstalledUnderConcurrency) {
  auto rt = bare_rt();
  auto op = std::make_shared<example::ScaleBy>(2.0);
  auto module = scale_module({cpu_engine_id()});
  std::atomic<int> calls{0};
  auto factory = [&](const EagerExtensionTarget& target) -> ExtensionModulePtr {
    EXPECT_EQ(target.engine, cpu_engine_id());
    EXPECT_EQ(target.backend_kind, "cpu");
    ++calls;
    return module;
  };
  const std::uint64_t epoch = rt->runtime()->epoch();
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      while (!go.load()) std::this_thread::yield();
      std::vector<EagerTensor> in{rt->tensor(vec({1, 2}))};
      if (values(apply_eager_with_module_factory(op, in, factory)[0]) == std::vector<double>{2, 4})
        ++ok;
    });
  }
  go = true;
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 8);
  EXPECT_EQ(calls.load(), 8);                    // the seed calls the factory every time
  EXPECT_EQ(rt->runtime()->epoch(), epoch + 1);  // one install, one bump
  // Warm: the factory runs, the ensure is a read-only no-op.
  std::vector<EagerTensor> in{rt->tensor(vec({1}))};
  apply_eager_with_module_factory(op, in, factory);
  EXPECT_EQ(calls.load(), 9);
  EXPECT_EQ(rt->runtime()->epoch(), epoch + 1);
  EXPECT_FALSE(rt->runtime()->ensure_module(module, "example.scale_by.v1", cpu_engine_id()));
  // A null module from the factory is a typed error.
  EXPECT_TF_ERROR(apply_eager_with_module_factory(
                      op, in, [](const EagerExtensionTarget&) { return ExtensionModulePtr{}; }),
                  ErrorKind::InvalidArgument);
}

TEST(EagerExtensionInstall, ChecksComeBeforeTheFactory) {
  auto rt = bare_rt();
  auto op = std::make_shared<example::ScaleBy>(2.0);
  int calls = 0;
  ModuleFactory factory = [&](const EagerExtensionTarget& t) -> ExtensionModulePtr {
    ++calls;
    return scale_module({t.engine});
  };
  EXPECT_TF_ERROR(apply_eager_with_module_factory(op, {}, factory), ErrorKind::InvalidArgument);
  auto other = bare_rt();
  std::vector<EagerTensor> mixed{rt->tensor(vec({1})), other->tensor(vec({1}))};
  EXPECT_TF_ERROR(
      apply_eager_with_module_factory(std::make_shared<example::Swap>(), mixed, factory),
      ErrorKind::ContextMismatch);
  double data[1] = {1};
  const std::int64_t shape[1] = {1};
  std::vector<EagerTensor> device{
      rt->tensor(Tensor::wrap(data, DType::F64, shape, {}, nullptr, Placement{"cuda", 0}))};
  try {
    apply_eager_with_module_factory(op, device, factory);
    ADD_FAILURE() << "no error";
  } catch (const NoInputIngressError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::NoInputIngress);
    EXPECT_EQ(e.input_index(), 0u);
    EXPECT_EQ(e.placement().device, "cuda");
    EXPECT_EQ(e.engine(), cpu_engine_id());
  }
  EXPECT_EQ(calls, 0);
  // Factory errors pass through unchanged.
  std::vector<EagerTensor> host{rt->tensor(vec({1}))};
  EXPECT_TF_ERROR(
      apply_eager_with_module_factory(op, host,
                                      [](const EagerExtensionTarget&) -> ExtensionModulePtr {
                                        fail(ErrorKind::Singular, "factory", "boom");
                                      }),
      ErrorKind::Singular);
}

TEST(EagerExtensionInstall, FactoryInsideSessionChecksFirstAndNeverNests) {
  auto rt = bare_rt();
  auto other = bare_rt();
  int calls = 0;
  auto ctx_only = [&](const EagerExtensionTarget& t) -> ExtensionModulePtr {
    ++calls;
    auto m = std::make_shared<SimpleModule>("test.context_only");
    m->engine(FamilyId("test.twice.v1"), t.engine, std::make_shared<const ContextOnlyEngine>());
    return m;
  };
  auto op = std::make_shared<Twice>();
  EagerSession session(rt);
  std::vector<EagerTensor> foreign{other->tensor(vec({1}))};
  EXPECT_TF_ERROR(apply_eager_with_module_factory_in_session(session, op, foreign, ctx_only),
                  ErrorKind::ContextMismatch);
  EXPECT_EQ(calls, 0);
  std::vector<EagerTensor> in{rt->tensor(vec({1, 2}))};
  // Installed, but its executor has only the context form: Unsupported, and
  // no fallback to the lowering inside a session.
  EXPECT_TF_ERROR(apply_eager_with_module_factory_in_session(session, op, in, ctx_only),
                  ErrorKind::Unsupported);
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(rt->runtime()->snapshot()->has_module("test.context_only"));
  // A session-capable family runs in the held session.
  auto scale = std::make_shared<example::ScaleBy>(3.0);
  auto out = apply_eager_with_module_factory_in_session(
      session, scale, in, [](const EagerExtensionTarget& t) { return scale_module({t.engine}); });
  EXPECT_EQ(values(out[0]), (std::vector<double>{3, 6}));
}

// ---- in-place prepare -------------------------------------------------------------

TEST(EagerExtensionInstall, InPlacePrepareOrderAndRefusalsLeaveInputUsable) {
  auto rt = bare_rt();
  int calls = 0;
  ModuleFactory factory = [&](const EagerExtensionTarget& t) -> ExtensionModulePtr {
    ++calls;
    return scale_module({t.engine});
  };
  auto tracked = rt->variable(vec({1, 2}));
  EXPECT_TF_ERROR(prepare_eager_in_place_input(tracked, "example.scale_by.v1", factory),
                  ErrorKind::RuntimeState);
  auto plain = rt->tensor(vec({1, 2}));
  {
    CaptureScope capture;
    NoGradGuard no_grad;
    EXPECT_TF_ERROR(prepare_eager_in_place_input(plain, "example.scale_by.v1", factory),
                    ErrorKind::RuntimeState);
  }
  double data[2] = {1, 2};
  const std::int64_t shape[1] = {2};
  auto device =
      rt->tensor(Tensor::wrap(data, DType::F64, shape, {}, nullptr, Placement{"cuda", 0}));
  EXPECT_TF_ERROR(prepare_eager_in_place_input(device, "example.scale_by.v1", factory),
                  ErrorKind::NoInputIngress);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(values(tracked), (std::vector<double>{1, 2}));
  EXPECT_EQ(values(plain), (std::vector<double>{1, 2}));
  // Accepted: the module is ensured, then the caller mutates the unique value.
  prepare_eager_in_place_input(plain, "example.scale_by.v1", factory);
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(rt->runtime()->snapshot()->has_module("test.scale"));
  const void* storage = plain.value().storage().get();
  auto taken = take_unique(std::move(plain));
  ASSERT_TRUE(std::holds_alternative<Tensor>(taken));
  Tensor value = std::get<Tensor>(std::move(taken));
  value.mutable_data<double>()[1] = 20;
  auto adopted = adopt_untracked(rt, std::move(value));
  EXPECT_EQ(adopted.value().storage().get(), storage);
  EXPECT_EQ(values(adopted), (std::vector<double>{1, 20}));
}

// ---- sessions -----------------------------------------------------------------------

TEST(EagerExtensionInstall, SessionMustBeOnTheSelectedEngine) {
  auto rt = two_engine_rt(scale_module({cpu_engine_id(), kSecondEngine}));
  auto op = std::make_shared<example::ScaleBy>(2.0);
  std::vector<EagerTensor> in{rt->tensor(vec({1}))};
  EagerSession session(rt);
  EXPECT_EQ(session.engine(), cpu_engine_id());
  EXPECT_EQ(values(apply_eager_in_session(session, op, in)[0]), (std::vector<double>{2}));
  Backend* const first = &rt->runtime()->backend();
  EXPECT_EQ(first, &rt->runtime()->snapshot()->selected().backend());
  rt->runtime()->reconfigure([](RuntimeEditor& e) { e.select_engine(kSecondEngine); });
  // backend() follows the selection (it is published with the snapshot).
  EXPECT_EQ(&rt->runtime()->backend(), &rt->runtime()->snapshot()->selected().backend());
  EXPECT_NE(&rt->runtime()->backend(), first);
  EXPECT_TF_ERROR(apply_eager_in_session(session, op, in), ErrorKind::RuntimeState);
  EXPECT_TF_ERROR(
      rt->runtime()->apply_in_session(session.engine_session(), op, std::vector<Tensor>{vec({1})}),
      ErrorKind::RuntimeState);
  // Outside the session the newly selected engine runs it.
  EXPECT_EQ(values(apply_eager(op, in)[0]), (std::vector<double>{2}));
}

// ---- fallback ------------------------------------------------------------------------

TEST(EagerExtensionInstall, NoPreparedExecutorFallsBackToTheLowering) {
  auto op = std::make_shared<Twice>();
  // 1. No module registers the family at all.
  auto rt = bare_rt();
  std::vector<EagerTensor> in{rt->tensor(vec({1, 2}))};
  EXPECT_EQ(values(apply_eager(op, in)[0]), (std::vector<double>{2, 4}));
  // 2. Registered only for another engine.
  auto rt2 = two_engine_rt(nullptr);
  auto m = std::make_shared<SimpleModule>("test.other_engine");
  m->engine(FamilyId("test.twice.v1"), kSecondEngine, std::make_shared<const NoExecutorEngine>());
  m->engine(FamilyId("test.twice.v1"), cpu_engine_id(), std::make_shared<const NoExecutorEngine>());
  rt2->install_module(m);
  // 3. The engine's plan has no executor.
  std::vector<EagerTensor> in2{rt2->tensor(vec({3}))};
  EXPECT_EQ(values(apply_eager(op, in2)[0]), (std::vector<double>{6}));
  // Inside a session nothing falls back.
  EagerSession session(rt2);
  EXPECT_TF_ERROR(apply_eager_in_session(session, op, in2), ErrorKind::Unsupported);
  // Without a lowering a missing family stays MissingExtension.
  std::vector<EagerTensor> plain{rt->tensor(vec({1}))};
  EXPECT_TF_ERROR(apply_eager(std::make_shared<example::ScaleBy>(2.0), plain),
                  ErrorKind::MissingExtension);
  // The fallback records like any call: the family's rules are required.
  auto x = rt->variable(vec({1, 2}));
  std::vector<EagerTensor> tx{x};
  EXPECT_TF_ERROR(apply_eager(op, tx), ErrorKind::UnsupportedAdRule);
  ad::RuleSet twice;
  twice.jvp = [](const ad::RuleArgs& a,
                 std::span<const ad::MaybeVal> t) -> std::vector<ad::MaybeVal> {
    if (!t[0]) return {std::nullopt};
    return {a.emitter.scale(*t[0], 2.0)};
  };
  twice.residuals = ad::Residuals::none();
  rt->ad().register_family(FamilyId("test.twice.v1"), twice);
  sum(apply_eager(op, tx)[0]).backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{2, 2}));
}

// ---- rules and capture -------------------------------------------------------------

TEST(EagerExtensionInstall, RulesEnsureSemanticsAndThreadSafety) {
  ad::AdContext ctx;
  const ad::RuleSet a = scale_rules();
  EXPECT_TRUE(ctx.register_family(FamilyId("example.scale_by.v1"), a));
  EXPECT_FALSE(ctx.register_family(FamilyId("example.scale_by.v1"), a));  // same: no-op
  ad::RuleSet different;
  different.non_differentiable = true;
  EXPECT_TF_ERROR(ctx.register_family(FamilyId("example.scale_by.v1"), different),
                  ErrorKind::InvalidArgument);
  EXPECT_TRUE(ad::same_rules(a, scale_rules()));
  EXPECT_FALSE(ad::same_rules(a, different));
  // Concurrent registration while other threads look rules up and record.
  auto rt = bare_rt();
  rt->install_module(scale_module({cpu_engine_id()}));
  std::atomic<int> added{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      for (int k = 0; k < 50; ++k) {
        if (rt->ad().register_family(FamilyId("test.family" + std::to_string(k) + ".v1"),
                                     scale_rules()))
          ++added;
        if (i % 2 == 0) {
          auto x = rt->variable(vec({1, 2}));
          auto y = sum(exp(x) * 2.0);
          y.backward();
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(added.load(), 50);
}

TEST(EagerExtensionInstall, ModuleCarriesItsRules) {
  auto rt = bare_rt();
  auto op = std::make_shared<example::ScaleBy>(3.0);
  ModuleFactory factory = [](const EagerExtensionTarget& t) {
    return ad::with_rules(scale_module({t.engine}),
                          {{FamilyId("example.scale_by.v1"), scale_rules()}});
  };
  auto x = rt->variable(vec({1, 2}));
  std::vector<EagerTensor> in{x};
  auto y = apply_eager_with_module_factory(op, in, factory)[0];
  sum(y * y).backward();  // d/dx sum (3x)^2 = 18 x
  EXPECT_EQ(values(x.grad()), (std::vector<double>{18, 36}));
  EXPECT_NE(rt->ad().find("example.scale_by.v1"), nullptr);
  // A runtime built with such a module gets the rules with EagerRuntime::make.
  auto built = EagerRuntime::make(
      Runtime::builder()
          .backend(std::make_shared<CpuBackend>())
          .module(factory(EagerExtensionTarget{cpu_engine_id(), "cpu", Placement{}}))
          .build());
  EXPECT_NE(built->ad().find("example.scale_by.v1"), nullptr);
}

TEST(EagerExtensionInstall, RecordingWithoutRulesIsRefusedAtTheCall) {
  auto rt = bare_rt();
  rt->install_module(scale_module({cpu_engine_id()}));
  auto op = std::make_shared<example::ScaleBy>(2.0);
  auto x = rt->variable(vec({1, 2}));
  std::vector<EagerTensor> tracked{x};
  try {
    apply_eager(op, tracked);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::UnsupportedAdRule);
    EXPECT_EQ(e.op(), "example.scale_by.v1");
  }
  // Untracked, detached or inside no_grad, nothing is recorded: it runs.
  std::vector<EagerTensor> detached{x.detach()};
  EXPECT_EQ(values(apply_eager(op, detached)[0]), (std::vector<double>{2, 4}));
  NoGradGuard no_grad;
  EXPECT_EQ(values(apply_eager(op, tracked)[0]), (std::vector<double>{2, 4}));
}

TEST(EagerExtensionInstall, CaptureRecordsUntrackedCallsButNothingInsideNoGrad) {
  auto rt = bare_rt();
  rt->install_module(scale_module({cpu_engine_id()}));
  auto op = std::make_shared<example::ScaleBy>(2.0);
  std::vector<EagerTensor> in{rt->tensor(vec({1}))};
  CaptureScope capture;
  auto out = apply_eager(op, in);  // untracked input, capture on: recorded as a step
  EXPECT_FALSE(out[0].requires_grad());
  ASSERT_EQ(capture.steps().size(), 1u);
  EXPECT_EQ(capture.steps()[0].op->name(), "example.scale_by.v1");
  {
    NoGradGuard no_grad;
    apply_eager(op, in);
    auto z = exp(in[0]);
    EXPECT_EQ(capture.steps().size(), 1u);  // nothing recorded inside no_grad
  }
  auto w = exp(in[0]);
  EXPECT_EQ(capture.steps().size(), 2u);
}

// ---- errors ----------------------------------------------------------------------------

TEST(EagerExtensionInstall, EagerRuntimesOverOneRuntimeHaveDistinctIds) {
  auto runtime = Runtime::builder().backend(std::make_shared<CpuBackend>()).build();
  auto a = EagerRuntime::make(runtime);
  auto b = EagerRuntime::make(runtime);
  EXPECT_NE(a->id(), b->id());
  EXPECT_EQ(a->runtime(), b->runtime());
  std::vector<EagerTensor> mixed{a->tensor(vec({1})), b->tensor(vec({1}))};
  try {
    apply_eager(std::make_shared<example::Swap>(), mixed);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ContextMismatch);
    const std::string msg = e.what();
    EXPECT_NE(msg.find("runtime " + std::to_string(a->id())), std::string::npos) << msg;
    EXPECT_NE(msg.find("runtime " + std::to_string(b->id())), std::string::npos) << msg;
  }
}
