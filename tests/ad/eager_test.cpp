#include <thread>

#include "tenferro/ad/eager_ops.hpp"
#include "test_util.hpp"

using namespace tenferro;

namespace {
EagerRuntimePtr make_rt() {
  return EagerRuntime::make_cpu(CpuBackendOptions{1});
}
Tensor vec(std::vector<double> v) {
  return Tensor::from_col_major({static_cast<std::int64_t>(v.size())}, v);
}
std::vector<double> values(const EagerTensor& t) {
  return t.value().to_vector<double>();
}
}  // namespace

TEST(Eager, UntrackedOpsRecordNothing) {
  auto rt = make_rt();
  auto a = rt->tensor(vec({1, 2})), b = rt->tensor(vec({3, 4}));
  auto c = a * b + 1.0;
  EXPECT_FALSE(c.requires_grad());
  EXPECT_TRUE(c.is_leaf());
  EXPECT_EQ(values(c), (std::vector<double>{4, 9}));
  EXPECT_TF_ERROR(c.backward(), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(sum(c).backward(), ErrorKind::RuntimeState);
}

TEST(Eager, BackwardAccumulatesUntilCleared) {
  auto rt = make_rt();
  auto x = rt->variable(vec({1, 2, 3}));
  auto loss = sum(x * x);
  loss.backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{2, 4, 6}));
  sum(x * x).backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{4, 8, 12}));
  x.clear_grad();
  EXPECT_FALSE(x.grad().defined());
  sum(3.0 * x).backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{3, 3, 3}));
  std::vector<EagerTensor> all{x};
  clear_grads(all);
  EXPECT_FALSE(x.grad().defined());
}

TEST(Eager, BackwardWithSeedIsChecked) {
  auto rt = make_rt();
  auto x = rt->variable(vec({1, 2}));
  auto y = x * x;
  y.backward(rt->tensor(vec({1, 10})));
  EXPECT_EQ(values(x.grad()), (std::vector<double>{2, 40}));
  EXPECT_TF_ERROR(y.backward(rt->tensor(vec({1}))), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(y.backward(rt->tensor(zeros({2}, f32))), ErrorKind::DTypeMismatch);
  auto other = make_rt();
  EXPECT_TF_ERROR(y.backward(other->tensor(vec({1, 1}))), ErrorKind::ContextMismatch);
}

TEST(Eager, ConcurrentBackwardAccumulatesSafely) {
  auto rt = make_rt();
  auto x = rt->variable(vec({1, 2}));
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      for (int r = 0; r < 10; ++r) sum(x * 2.0).backward();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{80, 80}));
}

TEST(Eager, NoGradAndDetach) {
  auto rt = make_rt();
  auto x = rt->variable(vec({1, 2}));
  {
    NoGradGuard guard;
    EXPECT_FALSE(grad_recording_enabled());
    {
      NoGradGuard nested;
      EXPECT_FALSE((x * x).requires_grad());
    }
    EXPECT_FALSE((x * x).requires_grad());
  }
  EXPECT_TRUE(grad_recording_enabled());
  EXPECT_TRUE((x * x).requires_grad());
  auto d = (x * x).detach();
  EXPECT_FALSE(d.requires_grad());
  EXPECT_EQ(d.value().storage(), d.value().storage());
  EXPECT_TF_ERROR((x * x).requires_grad_(), ErrorKind::RuntimeState);
  EXPECT_TF_ERROR(rt->variable(arange(3)), ErrorKind::DTypeMismatch);
}

TEST(Eager, CaptureScopeLogsOpsEvenUntracked) {
  auto rt = make_rt();
  auto a = rt->tensor(vec({1, 2}));
  CaptureScope capture;
  EXPECT_TRUE(capture_active());
  auto b = exp(a) + a;
  ASSERT_EQ(capture.steps().size(), 2u);
  EXPECT_EQ(capture.steps()[0].op->name(), "exp");
  EXPECT_EQ(capture.steps()[1].op->name(), "add");
  EXPECT_EQ(capture.steps()[1].outputs[0].value().storage(), b.value().storage());
}

TEST(Eager, CrossRuntimeMixingIsContextMismatch) {
  auto rt1 = make_rt(), rt2 = make_rt();
  auto a = rt1->tensor(vec({1})), b = rt2->tensor(vec({2}));
  try {
    (void)(a + b);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ContextMismatch);
    EXPECT_NE(std::string(e.what()).find("detach_into"), std::string::npos);
  }
  auto moved = b.detach_into(rt1);
  EXPECT_EQ(values(a + moved), (std::vector<double>{3}));
}

TEST(EagerFunctional, GradVjpJvpLeaveGradSlotsAlone) {
  auto rt = make_rt();
  auto x = rt->variable(vec({1, 2}));
  auto f = [](const EagerTensor& z) { return sum(z * z * z); };
  auto g = grad(f, x);
  EXPECT_EQ(values(g), (std::vector<double>{3, 12}));
  EXPECT_FALSE(x.grad().defined());
  auto v = vjp([](const EagerTensor& z) { return z * z; }, x, rt->tensor(vec({1, 1})));
  EXPECT_EQ(values(v.output), (std::vector<double>{1, 4}));
  EXPECT_EQ(values(*v.cotangent), (std::vector<double>{2, 4}));
  auto j = jvp([](const EagerTensor& z) { return z * z; }, x, rt->tensor(vec({1, 0})));
  EXPECT_EQ(values(*j.tangent), (std::vector<double>{2, 0}));
  EXPECT_FALSE(x.grad().defined());
}

TEST(EagerFunctional, NoDependenceFormsAndErrors) {
  auto rt = make_rt();
  auto x = rt->tensor(vec({1, 2}));
  auto c = rt->tensor(vec({5, 5}));
  auto constant = [&](const EagerTensor&) { return sum(c); };
  EXPECT_FALSE(try_grad(constant, x).has_value());
  EXPECT_TF_ERROR(grad(constant, x), ErrorKind::InvalidArgument);
  EXPECT_FALSE(jvp([&](const EagerTensor&) { return c; }, x, x).tangent.has_value());
  EXPECT_TF_ERROR(jvp_tangent([&](const EagerTensor&) { return c; }, x, x),
                  ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(grad([](const EagerTensor& z) { return z * z; }, x), ErrorKind::ShapeMismatch);
  // A complex output is refused as in the traced tier (and backward()).
  EXPECT_TF_ERROR(grad([](const EagerTensor& z) { return sum(convert(z, c128)); }, x),
                  ErrorKind::DTypeMismatch);
  std::vector<EagerTensor> xs{x, c};
  auto gs = grad_many([](std::span<const EagerTensor> z) { return sum(z[0] * z[0]); }, xs);
  ASSERT_TRUE(gs[0].has_value());
  EXPECT_FALSE(gs[1].has_value());
  EXPECT_EQ(values(*gs[0]), (std::vector<double>{2, 4}));
}

namespace {
// H v computed both ways.
std::pair<Tensor, Tensor> hvp_both(const EagerFn& f, const EagerTensor& x, const EagerTensor& v) {
  auto fwd_over_rev = jvp_tangent([&](const EagerTensor& z) { return grad(f, z); }, x, v);
  auto rev_over_rev = grad([&](const EagerTensor& z) { return sum(grad(f, z) * v); }, x);
  return {fwd_over_rev.value(), rev_over_rev.value()};
}
}  // namespace

TEST(EagerFunctional, HvpBothOrdersAgree) {
  auto rt = make_rt();
  Generator gen(3);
  auto x = rt->tensor(randn({4}, f64, gen));
  auto v = rt->tensor(randn({4}, f64, gen));
  // x^3: H = diag(6x).
  auto [a1, b1] = hvp_both([](const EagerTensor& z) { return sum(z * z * z); }, x, v);
  auto expect1 = (6.0 * x * v).value();
  EXPECT_TRUE(allclose(a1, expect1, 1e-12, 1e-12));
  EXPECT_TRUE(allclose(b1, expect1, 1e-12, 1e-12));
  // exp(sin x): H = diag(exp(sin x) (cos^2 x - sin x)).
  auto [a2, b2] = hvp_both([](const EagerTensor& z) { return sum(exp(sin(z))); }, x, v);
  auto expect2 = (exp(sin(x)) * (cos(x) * cos(x) - sin(x)) * v).value();
  EXPECT_TRUE(allclose(a2, expect2, 1e-10, 1e-12));
  EXPECT_TRUE(allclose(b2, expect2, 1e-10, 1e-12));
  // Quadratic form x^T A x: H = A + A^T.
  auto A = rt->tensor(randn({4, 4}, f64, gen));
  auto [a3, b3] = hvp_both([&](const EagerTensor& z) { return sum(z * matmul(A, z)); }, x, v);
  auto expect3 = (matmul(A, v) + matmul(transpose(A), v)).value();
  EXPECT_TRUE(allclose(a3, expect3, 1e-10, 1e-12));
  EXPECT_TRUE(allclose(b3, expect3, 1e-10, 1e-12));
}

TEST(EagerFunctional, GradOfGradIsDifferentiable) {
  auto rt = make_rt();
  auto x = rt->tensor(vec({0.5}));
  // d^3/dx^3 x^4 = 24 x.
  auto third = grad(
      [](const EagerTensor& z) {
        return sum(grad(
            [](const EagerTensor& w) {
              return sum(grad([](const EagerTensor& u) { return sum(u * u * u * u); }, w));
            },
            z));
      },
      x);
  EXPECT_NEAR(values(third)[0], 12.0, 1e-12);
}

TEST(EagerFunctional, ComplexGradFollowsPytorchConvention) {
  auto rt = make_rt();
  auto z = rt->tensor(complex(vec({1, -2}), vec({3, 0.5})));
  // L = sum |z|^2 = sum conj(z) z; grad = dL/dRe + i dL/dIm = 2 z.
  auto g = grad([](const EagerTensor& w) { return sum(real(conj(w) * w)); }, z);
  EXPECT_TRUE(allclose(g.value(), (2.0 * z).value()));
}

TEST(EagerAd, MissingRuleIsUnsupportedAdRule) {
  auto rt = EagerRuntime::make(
      Runtime::builder().backend(std::make_shared<CpuBackend>(CpuBackendOptions{1})).build(),
      std::make_shared<ad::AdContext>());  // no rules at all
  auto x = rt->variable(vec({1, 2}));
  try {
    sum(exp(x)).backward();  // refused where exp would be recorded, not at backward()
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::UnsupportedAdRule);
    EXPECT_EQ(e.op(), "exp");
  }
  EXPECT_TF_ERROR(jvp([](const EagerTensor& z) { return exp(z); }, x, x),
                  ErrorKind::UnsupportedAdRule);
  auto ctx = std::make_shared<ad::AdContext>();
  ad::RuleSet rs;
  rs.non_differentiable = true;
  EXPECT_TRUE(ctx->register_rules("floor", rs));
  EXPECT_FALSE(ctx->register_rules("floor", rs));  // the same rules again: a no-op
  ad::RuleSet other;
  other.jvp = [](const ad::RuleArgs&, std::span<const ad::MaybeVal>) {
    return std::vector<ad::MaybeVal>{std::nullopt};
  };
  EXPECT_TF_ERROR(ctx->register_rules("floor", other), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(ctx->register_rules("bad..id", rs), ErrorKind::InvalidArgument);
}

TEST(EagerAd, ResidualMasksCoverOperandsPastSixtyFour) {
  // Bit 63 stands for every position from 63 on (einsum over a network has
  // hundreds of operands); no shift past the mask's width.
  const ad::Residuals all = ad::Residuals::all(), none = ad::Residuals::none();
  const ad::Residuals low{std::uint64_t{1} << 5, 0}, high{std::uint64_t{1} << 63, 0};
  int checked = 0;
  for (std::size_t i : {std::size_t{0}, std::size_t{5}, std::size_t{62}, std::size_t{63},
                        std::size_t{64}, std::size_t{200}}) {
    EXPECT_TRUE(all.input(i) && all.output(i)) << i;
    EXPECT_FALSE(none.input(i) || none.output(i)) << i;
    EXPECT_EQ(low.input(i), i == 5) << i;
    EXPECT_EQ(high.input(i), i >= 63) << i;
    ++checked;
  }
  EXPECT_EQ(checked, 6);
}

TEST(EagerAd, OnlyDeclaredResidualsStayAlive) {
  auto rt = make_rt();
  auto x = rt->variable(vec({1, 2, 3}));
  std::weak_ptr<Storage> intermediate;
  EagerTensor y;
  {
    auto t = x * 2.0;  // mul reads its inputs
    intermediate = t.value().storage();
    y = sum(exp(t) + 1.0);  // exp reads only its output; add reads nothing
  }
  // t's buffer is not a residual of exp or add: it is gone after the forward pass.
  EXPECT_TRUE(intermediate.expired());
  y.backward();
  auto expect = (2.0 * exp(rt->tensor(vec({2, 4, 6})))).value();
  EXPECT_TRUE(allclose(x.grad().value(), expect));
}

// A graph of a few hundred nodes where every step reads both values of the
// step before (a diamond per step): each node must be visited once however
// many paths reach it, also past the traversal's first table of 64 nodes.
TEST(Eager, SharedSubgraphsAreTraversedOnce) {
  auto rt = make_rt();
  auto x = rt->variable(vec({1, 2}));
  EagerTensor a = x, b = x * 2.0;
  double ca = 1, cb = 2;                   // a = ca * x, b = cb * x
  for (int step = 0; step < 60; ++step) {  // 120 op nodes
    EagerTensor next_a = a + b, next_b = a - b;
    a = next_a;
    b = next_b;
    const double na = ca + cb, nb = ca - cb;
    ca = na;
    cb = nb;
  }
  sum(a).backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{ca, ca}));
  x.clear_grad();
  sum(a * b).backward();  // d/dx sum(ca cb x^2) = 2 ca cb x
  EXPECT_EQ(values(x.grad()), (std::vector<double>{2 * ca * cb * 1, 2 * ca * cb * 2}));
}
