#include "runtime_fixtures.hpp"

using namespace rtest;
using Mode = ScriptedEngine::Mode;

TEST(RuntimeApply, ExampleFamiliesComputeValues) {
  auto rt = make_runtime();
  rt->install_module(example::make_example_module());
  auto x = vec({1, 2, 3});
  auto y = rt->apply(std::make_shared<example::ScaleBy>(2.5), {x});
  ASSERT_EQ(y.size(), 1u);
  EXPECT_EQ(y[0].to_vector<double>(), (std::vector<double>{2.5, 5, 7.5}));
  // Strided input: the executor asks for a compact copy explicitly.
  auto rev = x.slice(0, std::nullopt, std::nullopt, -1);
  EXPECT_EQ(rt->apply(std::make_shared<example::ScaleBy>(2.0), {rev})[0].to_vector<double>(),
            (std::vector<double>{6, 4, 2}));
  auto a = vec({1, 2}), b = vec({3, 4});
  auto s = rt->apply(std::make_shared<example::Swap>(), {a, b});
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].storage(), b.storage());  // borrowed reads, no copy
  EXPECT_EQ(s[1].storage(), a.storage());
}

TEST(RuntimeApply, ArityErrors) {
  auto rt = make_runtime();
  rt->install_module(example::make_example_module());
  auto op = std::make_shared<example::ScaleBy>(2.0);
  EXPECT_TF_ERROR(rt->apply(op, std::span<const Tensor>{}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(rt->apply(op, {vec({1}), vec({2})}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(rt->apply(nullptr, {vec({1})}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(rt->apply(op, {Tensor()}), ErrorKind::InvalidArgument);
}

TEST(RuntimeApply, OutputCountMismatchNamesFamilyAndCounts) {
  auto rt = make_runtime();
  rt->install_module(std::make_shared<OneFamilyModule>(
      "t.mod", "t.bad_count.v1", std::make_shared<ScriptedEngine>(Mode::WrongCount)));
  try {
    rt->apply(std::make_shared<TestOp>("t.bad_count.v1", 1, 1), {vec({1})});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ExtensionContract);
    EXPECT_EQ(e.category(), ErrorCategory::ExtensionContract);
    EXPECT_NE(std::string(e.what()).find("t.bad_count.v1"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("returned 2 outputs"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("declares 1"), std::string::npos);
  }
}

TEST(RuntimeApply, OutputMetaMismatchBlamesTheExtension) {
  auto rt = make_runtime();
  rt->install_module(std::make_shared<OneFamilyModule>(
      "t.mod", "t.bad_meta.v1", std::make_shared<ScriptedEngine>(Mode::WrongMeta)));
  try {
    rt->apply(std::make_shared<TestOp>("t.bad_meta.v1", 1, 1), {vec({1, 2})});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ExtensionContract);
    EXPECT_EQ(e.phase(), ErrorPhase::Execute);
    const std::string what = e.what();
    EXPECT_NE(what.find("t.bad_meta.v1"), std::string::npos);
    EXPECT_NE(what.find("output 0"), std::string::npos);
    EXPECT_NE(what.find("f32[7]"), std::string::npos) << what;  // what it returned
    EXPECT_NE(what.find("f64[2]"), std::string::npos) << what;  // what infer() declares
  }
}

TEST(RuntimeApply, MissingModuleSaysMissingRuntime) {
  auto rt = make_runtime();
  try {
    rt->apply(std::make_shared<TestOp>("t.absent.v1", 1, 1), {vec({1})});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::MissingExtension);
    EXPECT_NE(std::string(e.what()).find("missing runtime"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("t.absent.v1"), std::string::npos);
  }
}

TEST(RuntimeApply, UnsupportedIsTypedAndErrorsAreNotBypassed) {
  auto rt = make_runtime();
  auto unsupported = std::make_shared<ScriptedEngine>(Mode::Unsupported);
  auto throwing = std::make_shared<ScriptedEngine>(Mode::Throw);
  rt->install_module(std::make_shared<OneFamilyModule>("t.u", "t.unsupported.v1", unsupported));
  rt->install_module(std::make_shared<OneFamilyModule>("t.e", "t.throws.v1", throwing));
  EXPECT_TF_ERROR(rt->apply(std::make_shared<TestOp>("t.unsupported.v1", 1, 1), {vec({1})}),
                  ErrorKind::Unsupported);
  // An error from prepare is reported as itself, and cached for this epoch.
  auto op = std::make_shared<TestOp>("t.throws.v1", 1, 1);
  EXPECT_TF_ERROR(rt->apply(op, {vec({1})}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(rt->apply(op, {vec({1})}), ErrorKind::InvalidArgument);
  EXPECT_EQ(throwing->prepares.load(), 1);
  EXPECT_EQ(rt->cache_stats().plans.failures, 1u);
}

namespace {
// An op with a lowering to a primitive-free identity: returns its input
// (or, broken, `outputs` values).
class LoweredOp final : public ExtensionOp {
 public:
  explicit LoweredOp(std::size_t outputs = 1) : outputs_(outputs) {}
  const FamilyId& family_id() const override { return id_; }
  std::size_t input_count() const override { return 2; }
  std::size_t output_count() const override { return 1; }
  std::size_t hash() const override { return 7; }
  bool equals(const Op& o) const override { return dynamic_cast<const LoweredOp*>(&o) != nullptr; }
  InferenceResult infer(std::span<const TensorMeta> in) const override { return {{in[0]}, {}}; }
  bool has_lowering() const override { return true; }
  std::vector<LoweringBuilder::Value> lower(
      LoweringBuilder& b, std::span<const LoweringBuilder::Value> in) const override {
    // swap twice through the example family, then take the first: identity on input 0.
    auto once = b.emit(std::make_shared<example::Swap>(), in);
    auto twice = b.emit(std::make_shared<example::Swap>(), once);
    return std::vector<LoweringBuilder::Value>(outputs_, twice[0]);
  }

 private:
  FamilyId id_{"t.lowered.v1"};
  std::size_t outputs_;
};

// A runtime with the example families and, unless null, `engine` for t.lowered.v1.
RuntimePtr lowering_runtime(std::shared_ptr<const ExtensionEngine> engine) {
  auto rt = make_runtime();
  rt->install_module(example::make_example_module());
  if (engine) rt->install_module(std::make_shared<OneFamilyModule>("t.l", "t.lowered.v1", engine));
  return rt;
}
}  // namespace

// Every outcome without a prepared executor runs the lowering; an error of
// prepare() never does (docs/extensions.md, "Fallback").
TEST(RuntimeApply, NoPreparedExecutorRunsTheLowering) {
  auto a = vec({1, 2}), b = vec({3, 4});
  auto op = std::make_shared<LoweredOp>();
  for (auto engine :
       {std::shared_ptr<ScriptedEngine>{}, std::make_shared<ScriptedEngine>(Mode::Unsupported),
        std::make_shared<ScriptedEngine>(Mode::NoExecutor)}) {
    auto rt = lowering_runtime(engine);
    EXPECT_EQ(rt->apply(op, {a, b})[0].to_vector<double>(), (std::vector<double>{1, 2}));
    if (engine) {
      EXPECT_EQ(engine->prepares.load(), 1);
    }
  }
  auto throwing = std::make_shared<ScriptedEngine>(Mode::Throw);
  EXPECT_TF_ERROR(lowering_runtime(throwing)->apply(op, {a, b}), ErrorKind::InvalidArgument);
  EXPECT_EQ(throwing->prepares.load(), 1);
  // A lowering that breaks the op's output count blames the family.
  EXPECT_TF_ERROR(lowering_runtime(nullptr)->apply(std::make_shared<LoweredOp>(2), {a, b}),
                  ErrorKind::ExtensionContract);
}

TEST(RuntimeApply, UnsupportedInsideASessionNeverRunsTheLowering) {
  auto a = vec({1, 2}), b = vec({3, 4});
  auto engine = std::make_shared<ScriptedEngine>(Mode::Unsupported);
  auto rt = lowering_runtime(engine);
  auto session = rt->enter_session();
  try {
    rt->apply_in_session(*session, std::make_shared<LoweredOp>(), {a, b});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    const std::string what = e.what();
    EXPECT_NE(what.find("no kernel for this signature"), std::string::npos) << what;
    EXPECT_NE(what.find("call apply outside the session"), std::string::npos) << what;
  }
  EXPECT_EQ(engine->prepares.load(), 1);
}

TEST(RuntimeApply, NeedsSpecializationWidensAndTerminates) {
  auto rt = make_runtime();
  auto widening = std::make_shared<ScriptedEngine>(Mode::NeedsStrides);
  auto stuck = std::make_shared<ScriptedEngine>(Mode::NeedsSameAgain);
  rt->install_module(std::make_shared<OneFamilyModule>("t.w", "t.widen.v1", widening));
  rt->install_module(std::make_shared<OneFamilyModule>("t.s", "t.stuck.v1", stuck));
  auto x = vec({1, 2, 3});
  auto out = rt->apply(std::make_shared<TestOp>("t.widen.v1", 1, 1), {x});
  EXPECT_EQ(out[0].storage(), x.storage());
  EXPECT_EQ(widening->prepares.load(), 2);  // coarse request, then with strides
  EXPECT_EQ(widening->last_detail.load(), static_cast<unsigned>(kDetailStrides));
  EXPECT_EQ(widening->last_stride_count.load(), 1u);
  // Asking again for detail it already has is an error, not a loop.
  EXPECT_TF_ERROR(rt->apply(std::make_shared<TestOp>("t.stuck.v1", 1, 1), {x}),
                  ErrorKind::RuntimeState);
  EXPECT_EQ(stuck->prepares.load(), 2);
}

TEST(RuntimeApply, SessionFormsAndContextMismatch) {
  auto rt = make_runtime();
  auto other = make_runtime();
  rt->install_module(std::make_shared<OneFamilyModule>(
      "t.ns", "t.nosession.v1", std::make_shared<ScriptedEngine>(Mode::EchoNoSession)));
  rt->install_module(example::make_example_module());
  auto x = vec({1, 2});
  // Without a session form, the top-level path uses the erased context.
  EXPECT_EQ(rt->apply(std::make_shared<TestOp>("t.nosession.v1", 1, 1), {x})[0].storage(),
            x.storage());
  auto session = rt->enter_session();
  EXPECT_TF_ERROR(rt->enter_session(), ErrorKind::RuntimeState);  // re-entry
  std::vector<Tensor> in{x};
  EXPECT_TF_ERROR(
      rt->apply_in_session(*session, std::make_shared<TestOp>("t.nosession.v1", 1, 1), in),
      ErrorKind::Unsupported);
  auto scaled = rt->apply_in_session(*session, std::make_shared<example::ScaleBy>(3.0), in);
  EXPECT_EQ(scaled[0].to_vector<double>(), (std::vector<double>{3, 6}));
  // apply() inside a held session reuses it instead of re-entering.
  EXPECT_EQ(rt->apply(std::make_shared<example::ScaleBy>(1.0), in)[0].to_vector<double>(),
            (std::vector<double>{1, 2}));
  EXPECT_TF_ERROR(other->apply_in_session(*session, std::make_shared<example::ScaleBy>(3.0), in),
                  ErrorKind::ContextMismatch);
}

TEST(RuntimeApply, ShapeConstraintViolationNamesFamily) {
  auto rt = make_runtime();
  rt->install_module(example::make_example_module());
  try {
    rt->apply(std::make_shared<example::Swap>(), {vec({1, 2}), vec({1, 2, 3})});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ShapeMismatch);
    EXPECT_EQ(e.op(), "example.swap.v1");
  }
  EXPECT_TF_ERROR(rt->apply(std::make_shared<example::ScaleBy>(1.0), {arange(3)}),
                  ErrorKind::DTypeMismatch);
}

TEST(RuntimeApply, NoIngressForForeignPlacement) {
  auto rt = make_runtime();
  rt->install_module(example::make_example_module());
  double data[2] = {1, 2};
  const std::int64_t shape[1] = {2};
  auto device = Tensor::wrap(data, DType::F64, shape, {}, nullptr, Placement{"cuda", 0});
  EXPECT_TF_ERROR(rt->apply(std::make_shared<example::ScaleBy>(1.0), {device}),
                  ErrorKind::NoInputIngress);
}

TEST(RuntimeApply, ErrorsCarryPhaseFamilyAndCause) {
  auto rt = make_runtime();
  rt->install_module(std::make_shared<OneFamilyModule>(
      "t.f", "t.fails.v1", std::make_shared<ScriptedEngine>(Mode::ExecFails)));
  rt->install_module(std::make_shared<OneFamilyModule>(
      "t.e", "t.throws.v1", std::make_shared<ScriptedEngine>(Mode::Throw)));
  try {
    rt->apply(std::make_shared<TestOp>("t.fails.v1", 1, 1), {vec({1})});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Singular);  // the kind is preserved
    EXPECT_EQ(e.category(), ErrorCategory::Numerical);
    EXPECT_EQ(e.phase(), ErrorPhase::Execute);
    EXPECT_EQ(e.op(), "t.fails.v1");
    ASSERT_NE(e.cause(), nullptr);
    EXPECT_EQ(e.cause()->op(), "kernel");
    EXPECT_NE(std::string(e.what()).find("caused by: [kernel] pivot 0 is zero"), std::string::npos);
  }
  try {
    rt->apply(std::make_shared<TestOp>("t.throws.v1", 1, 1), {vec({1})});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_EQ(e.phase(), ErrorPhase::Compile);  // failed while preparing
    ASSERT_NE(e.cause(), nullptr);
    EXPECT_EQ(e.cause()->message(), "engine rejects the payload");
  }
  try {
    rt->apply(std::make_shared<TestOp>("t.absent.v1", 1, 1), {vec({1})});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.phase(), ErrorPhase::Execute);
  }
}
