// The eager fixed_point: the same solution and implicit derivatives as the
// traced one (backward, functional grad, jvp, and an HVP as jvp of grad), no
// recording when no parameter requires grad, and the same refusals.

#include "ad/traced_fixtures.hpp"
#include "tenferro/ad/control_flow.hpp"

using namespace ttest;

namespace {

using Eager = std::vector<EagerTensor>;
using Traced = std::vector<TracedTensor>;

// x = 0.5 tanh(A x + b), written once for both tiers.
template <class T>
std::vector<T> contraction(std::span<const T> x, std::span<const T> p) {
  return {tanh(matmul(p[0], x[0]) + p[1]) * 0.5};
}

template <class T>
T loss_of(const T& x) {
  return sum(sin(x) * x);
}

struct Inputs {
  Tensor a, b, x0;
};

Inputs inputs(Backend& cpu) {
  return {mul(random({4, 4}, f64, 11), Tensor::scalar(0.4), cpu), random({4, 1}, f64, 12),
          random({4, 1}, f64, 13)};
}

const FixedPointOptions kTight{1e-14, 1000};

// The traced reference: loss, its gradients, a jvp along (va, vb) and an HVP in b.
struct Reference {
  std::vector<Tensor> out;
  Reference(Runtime& rt, const Inputs& in, const Tensor& va, const Tensor& vb) {
    const TracedTensor a = placeholder(f64, {4, 4}), b = placeholder(f64, {4, 1});
    const TracedTensor x0 = placeholder(f64, {4, 1});
    const TracedTensor pa = placeholder(f64, {4, 4}), pb = placeholder(f64, {4, 1});
    const TracedTensor x = fixed_point(contraction<TracedTensor>, {x0}, {a, b}, kTight).value[0];
    const TracedTensor loss = loss_of(x);
    const auto g = grad_many(loss, {a, b});
    const auto t = jvp_many({loss}, {a, b}, {pa, pb});
    Program p = compile({x, loss, *g[0], *g[1], *t[0], hvp(loss, b, pb)}, {a, b, x0, pa, pb});
    out = run_compiled(rt, p, {in.a, in.b, in.x0, va, vb});
  }
};

}  // namespace

TEST(EagerFixedPoint, SolutionAndBackwardEqualTheTracedImplicitOnes) {
  auto rt = EagerRuntime::make_cpu();
  const Inputs in = inputs(rt->backend());
  const Reference ref(*rt->runtime(), in, random({4, 4}, f64, 21), random({4, 1}, f64, 22));
  EagerTensor a = rt->variable(in.a), b = rt->variable(in.b);
  const EagerTensor x0 = rt->tensor(in.x0);
  auto r = fixed_point(contraction<EagerTensor>, {x0}, {a, b}, kTight);
  EXPECT_TRUE(r.converged.item<bool>());
  EXPECT_GT(r.iterations.item<std::int64_t>(), 5);
  EXPECT_LE(r.residual.item<double>(), 1e-14);
  EXPECT_TRUE(close(r.value[0].value(), ref.out[0], 1e-13));
  EXPECT_TRUE(r.value[0].requires_grad());
  const EagerTensor loss = loss_of(r.value[0]);
  EXPECT_NEAR(loss.item<double>(), ref.out[1].item<double>(), 1e-13);
  loss.backward();
  EXPECT_TRUE(close(a.grad().value(), ref.out[2], 1e-11));
  EXPECT_TRUE(close(b.grad().value(), ref.out[3], 1e-11));
}

TEST(EagerFixedPoint, JvpAndHvpEqualTheTracedOnes) {
  auto rt = EagerRuntime::make_cpu();
  const Inputs in = inputs(rt->backend());
  const Tensor va = zeros({4, 4}, f64), vb = random({4, 1}, f64, 22);
  const Reference ref(*rt->runtime(), in, va, vb);
  const EagerTensor a = rt->tensor(in.a), x0 = rt->tensor(in.x0);
  auto loss_in_b = [&](const EagerTensor& b) {
    return loss_of(fixed_point(contraction<EagerTensor>, {x0}, {a, b}, kTight).value[0]);
  };
  const EagerTensor b = rt->tensor(in.b);
  const JvpResult j = jvp(loss_in_b, b, rt->tensor(vb));
  ASSERT_TRUE(j.tangent.has_value());
  EXPECT_NEAR(j.tangent->item<double>(), ref.out[4].item<double>(),
              1e-11 * (1 + std::abs(ref.out[4].item<double>())));
  // Second order: the jvp of the gradient (forward over reverse).
  const EagerTensor h =
      jvp_tangent([&](const EagerTensor& bb) { return grad(loss_in_b, bb); }, b, rt->tensor(vb));
  EXPECT_TRUE(close(h.value(), ref.out[5], 1e-9));
}

TEST(EagerFixedPoint, NothingIsRecordedWithoutTrackedParameters) {
  auto rt = EagerRuntime::make_cpu();
  const Inputs in = inputs(rt->backend());
  auto r = fixed_point(contraction<EagerTensor>, {rt->tensor(in.x0)},
                       {rt->tensor(in.a), rt->tensor(in.b)}, kTight);
  EXPECT_FALSE(r.value[0].requires_grad());
  EagerTensor b = rt->variable(in.b);
  {
    NoGradGuard off;
    auto q =
        fixed_point(contraction<EagerTensor>, {rt->tensor(in.x0)}, {rt->tensor(in.a), b}, kTight);
    EXPECT_FALSE(q.value[0].requires_grad());
    EXPECT_TRUE(close(q.value[0].value(), r.value[0].value(), 0));
  }
}

TEST(EagerFixedPoint, NonConvergenceAndRefusals) {
  auto rt = EagerRuntime::make_cpu();
  const Inputs in = inputs(rt->backend());
  const EagerTensor a = rt->tensor(in.a), b = rt->tensor(in.b), x0 = rt->tensor(in.x0);
  FixedPointOptions few{1e-14, 2};
  try {
    fixed_point(contraction<EagerTensor>, {x0}, {a, b}, few);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::NoConvergence);
    EXPECT_NE(std::string(e.what()).find("after 2 iterations"), std::string::npos) << e.what();
  }
  few.throw_on_failure = false;
  auto r = fixed_point(contraction<EagerTensor>, {x0}, {a, b}, few);
  EXPECT_FALSE(r.converged.item<bool>());
  EXPECT_EQ(r.iterations.item<std::int64_t>(), 2);
  EXPECT_GT(r.residual.item<double>(), 1e-14);
  try {
    fixed_point(
        [](std::span<const EagerTensor> x, std::span<const EagerTensor>) {
          return Eager{concatenate({x[0], x[0]}, 0)};
        },
        {x0}, {}, few);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ShapeMismatch);
    EXPECT_NE(std::string(e.what()).find("state 0"), std::string::npos) << e.what();
  }
  try {
    fixed_point([](std::span<const EagerTensor>, std::span<const EagerTensor>) { return Eager{}; },
                {x0}, {}, few);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
  }
  const EagerTensor ints = rt->tensor(Tensor::from_col_major({2}, std::vector<std::int64_t>{1, 2}));
  try {
    fixed_point([](const EagerTensor& x, std::span<const EagerTensor>) { return x; }, ints, {});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::DTypeMismatch);
  }
}

TEST(EagerFixedPoint, DirectLinearSolveEqualsTheIteratedOne) {
  auto rt = EagerRuntime::make_cpu();
  const Inputs in = inputs(rt->backend());
  const Tensor vb = random({4, 1}, f64, 22);
  const Reference ref(*rt->runtime(), in, zeros({4, 4}, f64), vb);  // Auto: direct here
  FixedPointOptions iterate = kTight, direct = kTight;
  iterate.linear_solver = FixedPointLinearSolver::Iterate;
  direct.linear_solver = FixedPointLinearSolver::Direct;
  const EagerTensor a = rt->tensor(in.a), x0 = rt->tensor(in.x0), b = rt->tensor(in.b);
  std::vector<std::vector<Tensor>> out;
  for (const FixedPointOptions& options : {iterate, direct}) {
    auto loss_in_b = [&](const EagerTensor& bb) {
      return loss_of(fixed_point(contraction<EagerTensor>, {x0}, {a, bb}, options).value[0]);
    };
    EagerTensor bv = rt->variable(in.b);
    loss_in_b(bv).backward();
    const JvpResult j = jvp(loss_in_b, b, rt->tensor(vb));
    const EagerTensor h =
        jvp_tangent([&](const EagerTensor& bb) { return grad(loss_in_b, bb); }, b, rt->tensor(vb));
    out.push_back({bv.grad().value(), j.tangent->value(), h.value()});
  }
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_TRUE(close(out[1][k], out[0][k], 1e-12)) << k;
    EXPECT_TRUE(close(out[1][k], ref.out[3 + k], k == 2 ? 1e-9 : 1e-11)) << k;
  }
}
