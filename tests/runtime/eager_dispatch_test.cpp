// Eager extension dispatch against the seed (shared/seed/extension.rs): the
// checks each variant makes before it installs, calls the factory or runs,
// sessions with tracked inputs and Unsupported engines, broken engines, and
// adopt_untracked. docs/extensions.md lists where we differ from the seed.

#include "runtime_fixtures.hpp"
#include "tenferro/tenferro.hpp"

using namespace rtest;
using Mode = ScriptedEngine::Mode;

namespace {

const EngineId kSecondEngine("test.cpu2.v1");

// Counts the kernel's runs and the module's configure() calls.
struct Counters {
  std::atomic<int> runs{0};
  std::atomic<int> configures{0};
  std::atomic<int> factory_calls{0};
};

// A module "test.scale" registering example.scale_by.v1 (y = k x, f64) and
// example.swap.v1 on `engine`, counting runs and configure() calls.
class ScaleModule final : public ExtensionModule {
 public:
  ScaleModule(std::shared_ptr<Counters> counters, EngineId engine = cpu_engine_id())
      : counters_(counters), inner_("test.scale") {
    inner_.family<example::ScaleBy>(
        [counters](const example::ScaleBy& op, ExecutionScope& scope, ExtensionCaches&,
                   std::span<const Tensor> in) {
          ++counters->runs;
          Tensor x = scope.compact(in[0]);
          Tensor y = scope.backend().empty(x.shape(), x.dtype());
          for (std::int64_t i = 0; i < x.numel(); ++i)
            y.mutable_data<double>()[i] = op.k() * x.data<double>()[i];
          return std::vector<Tensor>{y};
        },
        nullptr, engine);
    inner_.family<example::Swap>(
        [](const example::Swap&, ExecutionScope&, ExtensionCaches&, std::span<const Tensor> in) {
          return std::vector<Tensor>{in[1], in[0]};
        },
        nullptr, engine);
  }
  std::string id() const override { return inner_.id(); }
  void configure(ModuleRegistrar& r) const override {
    ++counters_->configures;
    inner_.configure(r);
  }

 private:
  std::shared_ptr<Counters> counters_;
  SimpleModule inner_;
};

ad::RuleSet scale_rules() {
  ad::RuleSet rs;
  rs.jvp = [](const ad::RuleArgs& a, std::span<const ad::MaybeVal> t) -> std::vector<ad::MaybeVal> {
    if (!t[0]) return {std::nullopt};
    return {a.emitter.scale(*t[0], dynamic_cast<const example::ScaleBy&>(a.op).k())};
  };
  rs.residuals = ad::Residuals::none();
  return rs;
}

EagerRuntimePtr bare_rt() {
  return EagerRuntime::make(make_runtime());
}

// Two CPU engines; the first is selected.
EagerRuntimePtr two_engine_rt() {
  return EagerRuntime::make(
      Runtime::builder()
          .backend(std::make_shared<CpuBackend>(CpuBackendOptions{1}))
          .engine(EngineRegistration(kSecondEngine,
                                     std::make_shared<CpuBackend>(CpuBackendOptions{1}),
                                     [](const Placement& p) { return p.is_host(); }))
          .build());
}

Tensor device_vec() {
  static double data[2] = {1, 2};
  static const std::int64_t shape[1] = {2};
  return Tensor::wrap(data, DType::F64, shape, {}, nullptr, Placement{"cuda", 0});
}

std::vector<double> values(const EagerTensor& t) {
  return t.value().to_vector<double>();
}

}  // namespace

// ---- checks before the install, the factory and the run ---------------------------

TEST(EagerDispatch, ApplyWithModuleRefusesInputErrorsBeforeTheInstall) {
  auto rt = bare_rt();
  auto counters = std::make_shared<Counters>();
  auto module = std::make_shared<ScaleModule>(counters);
  auto scale = std::make_shared<example::ScaleBy>(2.0);
  const std::uint64_t epoch = rt->runtime()->epoch();
  auto other = bare_rt();
  EXPECT_TF_ERROR(apply_eager_with_module(nullptr, {rt->tensor(vec({1}))}, module),
                  ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(apply_eager_with_module(scale, std::vector<EagerTensor>{}, module),
                  ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(
      apply_eager_with_module(scale, {rt->tensor(vec({1})), rt->tensor(vec({1}))}, module),
      ErrorKind::InvalidArgument);  // the op's input count
  EXPECT_TF_ERROR(apply_eager_with_module(scale, {EagerTensor()}, module),
                  ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(apply_eager_with_module(std::make_shared<example::Swap>(),
                                          {rt->tensor(vec({1})), other->tensor(vec({1}))}, module),
                  ErrorKind::ContextMismatch);
  EXPECT_TF_ERROR(apply_eager_with_module(scale, {rt->tensor(device_vec())}, module),
                  ErrorKind::NoInputIngress);
  EXPECT_TF_ERROR(apply_eager_with_module(scale, {rt->tensor(vec({1}))}, nullptr),
                  ErrorKind::InvalidArgument);
  EXPECT_EQ(rt->runtime()->epoch(), epoch);
  EXPECT_TRUE(rt->runtime()->snapshot()->modules().empty());
  EXPECT_EQ(counters->configures.load(), 0);
  EXPECT_EQ(counters->runs.load(), 0);
  // Accepted: one install, one bump, one run.
  EXPECT_EQ(values(apply_eager_with_module(scale, {rt->tensor(vec({1, 2}))}, module)[0]),
            (std::vector<double>{2, 4}));
  EXPECT_EQ(rt->runtime()->epoch(), epoch + 1);
  EXPECT_EQ(counters->configures.load(), 1);
  EXPECT_EQ(counters->runs.load(), 1);
}

TEST(EagerDispatch, WrongInputCountIsRefusedBeforeTheFactory) {
  auto rt = bare_rt();
  auto counters = std::make_shared<Counters>();
  ModuleFactory factory = [&](const EagerExtensionTarget& t) -> ExtensionModulePtr {
    ++counters->factory_calls;
    return std::make_shared<ScaleModule>(counters, t.engine);
  };
  auto scale = std::make_shared<example::ScaleBy>(2.0);
  const std::vector<EagerTensor> two{rt->tensor(vec({1})), rt->tensor(vec({2}))};
  EXPECT_TF_ERROR(apply_eager_with_module_factory(scale, two, factory), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(apply_eager_with_module_factory(std::make_shared<example::Swap>(),
                                                  {rt->tensor(vec({1}))}, factory),
                  ErrorKind::InvalidArgument);
  {
    EagerSession session(rt);
    EXPECT_TF_ERROR(apply_eager_with_module_factory_in_session(session, scale, two, factory),
                    ErrorKind::InvalidArgument);
  }
  EXPECT_EQ(counters->factory_calls.load(), 0);
  EXPECT_EQ(rt->runtime()->epoch(), 1u);
}

TEST(EagerDispatch, FactoryInSessionChecksIngressAndTheSessionEngineBeforeTheFactory) {
  auto rt = two_engine_rt();
  auto counters = std::make_shared<Counters>();
  ModuleFactory factory = [&](const EagerExtensionTarget& t) -> ExtensionModulePtr {
    ++counters->factory_calls;
    return std::make_shared<ScaleModule>(counters, t.engine);
  };
  auto scale = std::make_shared<example::ScaleBy>(2.0);
  EagerSession session(rt);
  try {
    apply_eager_with_module_factory_in_session(session, scale, {rt->tensor(device_vec())}, factory);
    ADD_FAILURE() << "no error";
  } catch (const NoInputIngressError& e) {
    EXPECT_EQ(e.input_index(), 0u);
    EXPECT_EQ(e.placement().device, "cuda");
    EXPECT_EQ(e.engine(), cpu_engine_id());
  }
  EXPECT_EQ(counters->factory_calls.load(), 0);
  // The runtime now selects another engine than the one the session holds.
  rt->runtime()->reconfigure([](RuntimeEditor& e) { e.select_engine(kSecondEngine); });
  const std::uint64_t epoch = rt->runtime()->epoch();
  EXPECT_TF_ERROR(
      apply_eager_with_module_factory_in_session(session, scale, {rt->tensor(vec({1}))}, factory),
      ErrorKind::RuntimeState);
  EXPECT_EQ(counters->factory_calls.load(), 0);
  EXPECT_EQ(rt->runtime()->epoch(), epoch);
  EXPECT_TRUE(rt->runtime()->snapshot()->modules().empty());
}

// ---- in-place preparation ---------------------------------------------------------

TEST(EagerDispatch, InPlacePrepareRefusesCaptureNonLeavesFactoryErrorsAndRejections) {
  auto rt = bare_rt();
  auto counters = std::make_shared<Counters>();
  ModuleFactory factory = [&](const EagerExtensionTarget& t) -> ExtensionModulePtr {
    ++counters->factory_calls;
    return std::make_shared<ScaleModule>(counters, t.engine);
  };
  const std::string family = "example.scale_by.v1";
  auto plain = rt->tensor(vec({1, 2}));
  {
    CaptureScope capture;  // outside no_grad
    EXPECT_TF_ERROR(prepare_eager_in_place_input(plain, family, factory), ErrorKind::RuntimeState);
    EXPECT_EQ(capture.steps().size(), 0u);
  }
  auto x = rt->variable(vec({1, 2}));
  auto non_leaf = exp(x);
  EXPECT_TF_ERROR(prepare_eager_in_place_input(non_leaf, family, factory), ErrorKind::RuntimeState);
  {
    NoGradGuard no_grad;  // still recorded history
    EXPECT_TF_ERROR(prepare_eager_in_place_input(non_leaf, family, factory),
                    ErrorKind::RuntimeState);
  }
  EXPECT_EQ(counters->factory_calls.load(), 0);
  // The factory's own error passes through unchanged.
  EXPECT_TF_ERROR(
      prepare_eager_in_place_input(plain, family,
                                   [](const EagerExtensionTarget&) -> ExtensionModulePtr {
                                     fail(ErrorKind::Singular, "factory", "boom");
                                   }),
      ErrorKind::Singular);
  // A module without the family is rejected by the ensure: nothing installed.
  EXPECT_TF_ERROR(prepare_eager_in_place_input(plain, "test.absent.v1", factory),
                  ErrorKind::MissingExtension);
  EXPECT_EQ(counters->factory_calls.load(), 1);
  EXPECT_EQ(counters->configures.load(), 1);  // configured once to see what it registers
  EXPECT_EQ(rt->runtime()->epoch(), 1u);
  EXPECT_TRUE(rt->runtime()->snapshot()->modules().empty());
  // Every refusal left the input usable, and it is still the sole owner.
  EXPECT_EQ(values(plain), (std::vector<double>{1, 2}));
  EXPECT_NEAR(values(non_leaf)[0], std::exp(1.0), 1e-15);
  prepare_eager_in_place_input(plain, family, factory);
  EXPECT_EQ(rt->runtime()->epoch(), 2u);
  EXPECT_TRUE(std::holds_alternative<Tensor>(take_unique(std::move(plain))));
}

// ---- sessions ---------------------------------------------------------------------

TEST(EagerDispatch, TrackedInputInsideASessionIsRecorded) {
  auto rt = bare_rt();
  auto counters = std::make_shared<Counters>();
  rt->install_module(ad::with_rules(std::make_shared<ScaleModule>(counters),
                                    {{FamilyId("example.scale_by.v1"), scale_rules()}}));
  auto op = std::make_shared<example::ScaleBy>(3.0);
  auto x = rt->variable(vec({1, 2}));
  EagerSession session(rt);
  auto y = apply_eager_in_session(session, op, {x})[0];
  EXPECT_TRUE(y.requires_grad());
  EXPECT_EQ(values(y), (std::vector<double>{3, 6}));
  sum(y * y).backward();  // inside the session: its ops reuse it
  EXPECT_EQ(values(x.grad()), (std::vector<double>{18, 36}));
  EXPECT_EQ(counters->runs.load(), 1);
}

TEST(EagerDispatch, TrackedInputInsideASessionWithoutRulesIsRefusedBeforeTheRun) {
  auto rt = bare_rt();
  auto counters = std::make_shared<Counters>();
  rt->install_module(std::make_shared<ScaleModule>(counters));
  auto op = std::make_shared<example::ScaleBy>(3.0);
  EagerSession session(rt);
  EXPECT_TF_ERROR(apply_eager_in_session(session, op, {rt->variable(vec({1}))}),
                  ErrorKind::UnsupportedAdRule);
  EXPECT_TF_ERROR(apply_eager(op, {rt->variable(vec({1}))}), ErrorKind::UnsupportedAdRule);
  EXPECT_EQ(counters->runs.load(), 0);  // the seed runs the kernel, then fails to record
  EXPECT_EQ(values(apply_eager_in_session(session, op, {rt->tensor(vec({1}))})[0]),
            (std::vector<double>{3}));
  EXPECT_EQ(counters->runs.load(), 1);
}

TEST(EagerDispatch, EngineAnsweringUnsupportedInsideASessionIsUnsupported) {
  auto rt = bare_rt();
  auto engine = std::make_shared<ScriptedEngine>(Mode::Unsupported);
  rt->install_module(std::make_shared<OneFamilyModule>("t.u", "t.unsupported.v1", engine));
  auto op = std::make_shared<TestOp>("t.unsupported.v1", 1, 1);
  const Tensor x = vec({1, 2});
  EagerSession session(rt);
  try {
    apply_eager_in_session(session, op, {rt->tensor(x)});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.what()).find("no kernel for this signature"), std::string::npos)
        << e.what();  // the engine's reason
  }
  EXPECT_TF_ERROR(
      rt->runtime()->apply_in_session(session.engine_session(), op, std::vector<Tensor>{x}),
      ErrorKind::Unsupported);
  EXPECT_EQ(engine->prepares.load(), 1);  // the answer is cached for this signature and epoch
}

// ---- broken engines -------------------------------------------------------------------

TEST(EagerDispatch, WrongOutputCountIsExtensionContractInEveryEagerVariant) {
  auto rt = bare_rt();
  rt->install_module(std::make_shared<OneFamilyModule>(
      "t.mod", "t.bad_count.v1", std::make_shared<ScriptedEngine>(Mode::WrongCount)));
  auto op = std::make_shared<TestOp>("t.bad_count.v1", 1, 1);
  try {
    apply_eager(op, {rt->tensor(vec({1}))});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ExtensionContract);  // the seed: Internal
    EXPECT_NE(std::string(e.what()).find("returned 2 outputs"), std::string::npos) << e.what();
  }
  EagerSession session(rt);
  EXPECT_TF_ERROR(apply_eager_in_session(session, op, {rt->tensor(vec({1}))}),
                  ErrorKind::ExtensionContract);
}

// ---- adopt_untracked ------------------------------------------------------------------

TEST(EagerDispatch, AdoptUntrackedErrorsAreArgumentAndIngressErrors) {
  auto rt = bare_rt();
  EXPECT_TF_ERROR(adopt_untracked(nullptr, vec({1})), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(adopt_untracked(rt, Tensor()), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(adopt_untracked(rt, device_vec()), ErrorKind::NoInputIngress);
  auto adopted = adopt_untracked(rt, vec({4}));
  EXPECT_FALSE(adopted.requires_grad());
  EXPECT_EQ(values(adopted), (std::vector<double>{4}));
}
