// Contracts a new user relies on: braces wherever a list of tensors is taken,
// typed item<T>(), backward() on complex losses and twice on one graph, what
// grad() says before any backward, extension executors that break infer(),
// and the phase of errors raised inside a traced run().

#include <complex>
#include <vector>

#include "example_families/example_families.hpp"
#include "tenferro/ad/eager_extension.hpp"
#include "tenferro/ad/eager_ops.hpp"
#include "tenferro/ad/grad_check.hpp"
#include "tenferro/ad/ops.hpp"
#include "tenferro/ad/program.hpp"
#include "tenferro/ad/transforms.hpp"
#include "test_util.hpp"

using namespace tenferro;

namespace {

Tensor vec(std::vector<double> v) {
  return Tensor::from_col_major({static_cast<std::int64_t>(v.size())}, v);
}

EagerRuntimePtr make_rt() {
  auto ctx = ad::AdContext::with_core_rules();
  ad::RuleSet rs;
  rs.jvp = [](const ad::RuleArgs& a, std::span<const ad::MaybeVal> t) -> std::vector<ad::MaybeVal> {
    if (!t[0]) return {std::nullopt};
    return {a.emitter.scale(*t[0], dynamic_cast<const example::ScaleBy&>(a.op).k())};
  };
  rs.residuals = ad::Residuals::none();
  ctx->register_family(FamilyId("example.scale_by.v1"), rs);
  auto runtime = Runtime::builder()
                     .backend(std::make_shared<CpuBackend>(CpuBackendOptions{1}))
                     .module(example::make_example_module())
                     .build();
  return EagerRuntime::make(runtime, ctx);
}

}  // namespace

TEST(UserContract, BracesAreAcceptedWhereverAListOfTensorsIsTaken) {
  auto rt = make_rt();
  const EagerTensor x = rt->variable(vec({1, 2, 3}));
  auto op = std::make_shared<example::ScaleBy>(2.0);
  // Eager extension apply, gradient checks and grad_many with braces.
  const auto y = apply_eager(op, {x});
  ASSERT_EQ(y.size(), 1u);
  EXPECT_EQ(y[0].value().to_vector<double>(), (std::vector<double>{2, 4, 6}));
  const auto r =
      check_gradients([](std::span<const EagerTensor> z) { return sum(exp(z[0])); }, {x});
  EXPECT_TRUE(r.ok) << r.detail;
  const auto g = grad_many([](std::span<const EagerTensor> z) { return sum(z[0] * z[0]); }, {x});
  ASSERT_TRUE(g[0].has_value());
  EXPECT_EQ(g[0]->value().to_vector<double>(), (std::vector<double>{2, 4, 6}));
  // Runtime, direct and traced entry points with braces.
  Runtime& runtime = *rt->runtime();
  EXPECT_EQ(runtime.apply(op, {vec({1})})[0].to_vector<double>(), (std::vector<double>{2}));
  EXPECT_EQ(concatenate({vec({1}), vec({2, 3})}, 0, runtime.backend()).numel(), 3);
  const TracedTensor t = placeholder(f64, {3}, "t");
  const TracedTensor s = sum(extension::apply(op, {t})[0]);
  const Program p = compile({s}, {t});
  EXPECT_DOUBLE_EQ(run_compiled(runtime, p, {vec({1, 2, 3})})[0].item<double>(), 12.0);
  const TracedTensor q = sum(t * t);
  const auto ct = vjp_many({q}, {ones_like(q)}, {t});
  ASSERT_TRUE(ct[0].has_value());
}

TEST(UserContract, TypedItem) {
  auto rt = make_rt();
  const Tensor t = vec({2.5});
  const double d = t.item<double>();
  EXPECT_EQ(d, 2.5);
  EXPECT_EQ(t.item<std::int64_t>(), 2);
  const EagerTensor e = rt->tensor(t);
  const double loss = sum(e * e).item<double>();
  EXPECT_EQ(loss, 6.25);
  const Tensor z = Tensor::scalar(Scalar(c128_t(1.0, -2.0)), c128);
  EXPECT_EQ(z.item<std::complex<double>>(), std::complex<double>(1.0, -2.0));
  EXPECT_TF_ERROR(z.item<double>(), ErrorKind::DTypeMismatch);  // take real() or abs() first
  EXPECT_TF_ERROR(vec({1, 2}).item<double>(), ErrorKind::ShapeMismatch);
}

TEST(UserContract, BackwardOnAComplexLossIsRefusedAsInPyTorch) {
  auto rt = make_rt();
  EagerTensor z = rt->variable(Tensor::from_col_major<c128_t>({2}, {{1, 1}, {2, -1}}));
  const EagerTensor loss = sum(z * z);
  try {
    loss.backward();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::DTypeMismatch);
    EXPECT_NE(std::string(e.what()).find("real()"), std::string::npos);
  }
  EXPECT_FALSE(z.has_grad());
  // A real loss of complex inputs works; so does an explicit seed.
  sum(abs(z)).backward();
  EXPECT_TRUE(z.has_grad());
  z.clear_grad();
  loss.backward(rt->tensor(Tensor::scalar(Scalar(c128_t(1, 0)), c128)));
  EXPECT_TRUE(z.has_grad());
}

TEST(UserContract, BackwardTwiceAccumulatesTwiceAndGradBeforeBackwardExplainsItself) {
  auto rt = make_rt();
  EagerTensor x = rt->variable(vec({1, 2}));
  EXPECT_FALSE(x.has_grad());
  try {
    (void)x.grad().value();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("no gradient has been accumulated"), std::string::npos);
  }
  const EagerTensor loss = sum(x * x);
  loss.backward();
  EXPECT_EQ(x.grad().value().to_vector<double>(), (std::vector<double>{2, 4}));
  // The graph is kept (retain_graph = true): a second backward adds the same again.
  loss.backward();
  EXPECT_EQ(x.grad().value().to_vector<double>(), (std::vector<double>{4, 8}));
  x.clear_grad();
  EXPECT_FALSE(x.has_grad());
}

TEST(UserContract, ErrorsInsideATracedRunReportTheExecutePhase) {
  auto rt = make_rt();
  Runtime& runtime = *rt->runtime();
  const TracedTensor x = placeholder(f64, {SymDim::var("n")}, "x");
  const TracedTensor y = placeholder(f64, {SymDim::var("n")}, "y");
  const Program p = compile({x + y}, {x, y});
  try {
    (void)run_compiled(runtime, p, {vec({1, 2}), vec({1, 2, 3})});  // n bound twice
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ShapeMismatch);
    EXPECT_EQ(e.phase(), ErrorPhase::Execute);
  }
  const Tensor in[2] = {vec({1, 2}), vec({3, 4})};
  PreparedProgram plan = prepare(runtime, p, InputSignature::of(in));
  try {
    (void)run(runtime, plan, {vec({1, 2}), Tensor()});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_EQ(e.phase(), ErrorPhase::Execute);
  }
  // Building the graph still reports the build phase.
  try {
    (void)(placeholder(f64, {3}) + placeholder(f64, {4}));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.phase(), ErrorPhase::Build);
  }
}

TEST(UserContract, FamilyIdIsWrittenOnceAndCheckedAtRegistration) {
  // The id comes from the op type's kFamily, for the op and for the module.
  EXPECT_EQ(example::ScaleBy(2.0).family_id().str(), "example.scale_by.v1");
  EXPECT_EQ(example::Swap().family_id().str(), std::string(example::Swap::kFamily));
  auto echo = [](const example::ScaleBy&, ExecutionScope&, ExtensionCaches&,
                 std::span<const Tensor> in) { return std::vector<Tensor>{in[0]}; };
  auto module = std::make_shared<SimpleModule>("t.typo");
  // A typo in an explicit id is refused at registration, naming both ids.
  try {
    module->family<example::ScaleBy>("example.scale_by.v2", echo);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("example.scale_by.v2"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("example.scale_by.v1"), std::string::npos);
  }
  // Nothing was registered by the refused call; the id-free form registers.
  auto rt = Runtime::builder().backend(std::make_shared<CpuBackend>(CpuBackendOptions{1})).build();
  rt->install_module(module);
  EXPECT_TF_ERROR(rt->apply(std::make_shared<example::ScaleBy>(2.0), {vec({1})}),
                  ErrorKind::MissingExtension);
  auto good = std::make_shared<SimpleModule>("t.good");
  good->family<example::ScaleBy>(echo);
  rt->install_module(good);
  EXPECT_EQ(rt->apply(std::make_shared<example::ScaleBy>(2.0), {vec({3})})[0].item<double>(), 3.0);
}
