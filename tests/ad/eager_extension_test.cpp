#include "tenferro/ad/eager_extension.hpp"
#include "example_families/example_families.hpp"
#include "tenferro/ad/eager_ops.hpp"
#include "tenferro/ad/grad_check.hpp"
#include "test_util.hpp"

using namespace tenferro;

namespace {
Tensor vec(std::vector<double> v) {
  return Tensor::from_col_major({static_cast<std::int64_t>(v.size())}, v);
}

// scale_by's only AD rule: jvp(t) = k t. Reverse mode comes from transposing it.
void register_scale_rules(ad::AdContext& ctx) {
  ad::RuleSet rs;
  rs.jvp = [](const ad::RuleArgs& a, std::span<const ad::MaybeVal> t) -> std::vector<ad::MaybeVal> {
    if (!t[0]) return {std::nullopt};
    const auto& op = dynamic_cast<const example::ScaleBy&>(a.op);
    return {a.emitter.scale(*t[0], op.k())};
  };
  rs.residuals = ad::Residuals::none();
  ctx.register_family(FamilyId("example.scale_by.v1"), rs);
}

EagerRuntimePtr make_rt(bool with_module = true) {
  auto ctx = ad::AdContext::with_core_rules();
  register_scale_rules(*ctx);
  auto builder = Runtime::builder().backend(std::make_shared<CpuBackend>(CpuBackendOptions{1}));
  if (with_module) builder.module(example::make_example_module());
  return EagerRuntime::make(builder.build(), ctx);
}
}  // namespace

TEST(EagerExtension, CheckOrderAndErrors) {
  auto rt = make_rt();
  auto op = std::make_shared<example::ScaleBy>(2.0);
  // 1. empty inputs
  EXPECT_TF_ERROR(apply_eager(op, {}), ErrorKind::InvalidArgument);
  // 2. count is checked before runtimes are compared
  auto other = make_rt();
  std::vector<EagerTensor> two{rt->tensor(vec({1})), other->tensor(vec({1}))};
  EXPECT_TF_ERROR(apply_eager(op, two), ErrorKind::InvalidArgument);
  // 3. one runtime
  auto swap = std::make_shared<example::Swap>();
  EXPECT_TF_ERROR(apply_eager(swap, two), ErrorKind::ContextMismatch);
  // Missing module: typed, before any backend work.
  auto bare = make_rt(false);
  std::vector<EagerTensor> one{bare->tensor(vec({1}))};
  EXPECT_TF_ERROR(apply_eager(op, one), ErrorKind::MissingExtension);
}

TEST(EagerExtension, UntrackedAndRecordedResults) {
  auto rt = make_rt();
  auto op = std::make_shared<example::ScaleBy>(3.0);
  std::vector<EagerTensor> in{rt->tensor(vec({1, 2}))};
  auto out = apply_eager(op, in);
  EXPECT_FALSE(out[0].requires_grad());
  EXPECT_EQ(out[0].value().to_vector<double>(), (std::vector<double>{3, 6}));
  auto x = rt->variable(vec({1, 2}));
  std::vector<EagerTensor> tracked{x};
  auto y = apply_eager(op, tracked)[0];
  EXPECT_TRUE(y.requires_grad());
  sum(y * y).backward();  // d/dx sum (3x)^2 = 18 x, via transposition of the jvp rule
  EXPECT_EQ(x.grad().value().to_vector<double>(), (std::vector<double>{18, 36}));
}

TEST(EagerExtension, GradientCheckerThroughExtension) {
  auto rt = make_rt();
  Generator gen(5);
  std::vector<EagerTensor> in{rt->tensor(randn({3}, c128, gen))};
  auto r = check_gradients(
      [](std::span<const EagerTensor> z) {
        std::vector<EagerTensor> a{z[0]};
        auto s = apply_eager(std::make_shared<example::ScaleBy>(1.5), a)[0];
        return s * exp(z[0]);
      },
      in);
  EXPECT_TRUE(r.ok) << r.detail;
  EXPECT_LT(r.max_adjoint_error, 1e-8);
}

TEST(EagerExtension, InSessionNeverReenters) {
  auto rt = make_rt();
  auto other = make_rt();
  EagerSession session(rt);
  std::vector<EagerTensor> in{rt->tensor(vec({1, 2}))};
  auto out = apply_eager_in_session(session, std::make_shared<example::ScaleBy>(2.0), in);
  EXPECT_EQ(out[0].value().to_vector<double>(), (std::vector<double>{2, 4}));
  EXPECT_TF_ERROR(EagerSession{rt}, ErrorKind::RuntimeState);  // re-entry on this thread
  std::vector<EagerTensor> foreign{other->tensor(vec({1}))};
  EXPECT_TF_ERROR(apply_eager_in_session(session, std::make_shared<example::ScaleBy>(2.0), foreign),
                  ErrorKind::ContextMismatch);
}

TEST(EagerExtension, InPlaceProtocol) {
  auto rt = make_rt();
  // Refusals leave the value usable.
  auto tracked = rt->variable(vec({1, 2}));
  EXPECT_TF_ERROR(check_in_place_eligible(tracked, "inplace"), ErrorKind::RuntimeState);
  auto history = tracked * 2.0;
  EXPECT_TF_ERROR(check_in_place_eligible(history, "inplace"),
                  ErrorKind::RuntimeState);  // recorded history
  EXPECT_NO_THROW(check_in_place_eligible(history.detach(), "inplace"));
  auto plain = rt->tensor(vec({1, 2}));
  {
    CaptureScope capture;
    NoGradGuard no_grad;
    EXPECT_TF_ERROR(check_in_place_eligible(plain, "inplace"), ErrorKind::RuntimeState);
  }
  EXPECT_EQ(plain.value().to_vector<double>(), (std::vector<double>{1, 2}));
  // Shared storage: handed back unchanged, no copy.
  auto shared = rt->tensor(vec({5, 6}));
  Tensor alias = shared.value();
  auto back = take_unique(std::move(shared));
  ASSERT_TRUE(std::holds_alternative<EagerTensor>(back));
  EXPECT_EQ(std::get<EagerTensor>(back).value().storage(), alias.storage());
  // Unique: mutate and re-adopt.
  auto owned = rt->tensor(vec({7, 8}));
  const void* storage = owned.value().storage().get();
  auto taken = take_unique(std::move(owned));
  ASSERT_TRUE(std::holds_alternative<Tensor>(taken));
  Tensor value = std::get<Tensor>(std::move(taken));
  value.mutable_data<double>()[0] = 70;
  auto adopted = adopt_untracked(rt, std::move(value));
  EXPECT_EQ(adopted.value().storage().get(), storage);  // never a hidden copy
  EXPECT_EQ(adopted.value().to_vector<double>(), (std::vector<double>{70, 8}));
  EXPECT_FALSE(adopted.requires_grad());
}
