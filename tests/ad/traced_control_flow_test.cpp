// cond, while_loop and fixed_point in traced programs: values against the
// same computations unrolled in flat graphs, derivatives against unrolled AD
// and finite differences, refusals of changing carries, non-convergence, and
// memory that does not grow with the iteration count.

#include <limits>

#include "ad/traced_fixtures.hpp"
#include "tenferro/ad/control_flow.hpp"
#include "tenferro/linalg/linalg.hpp"

using namespace ttest;

namespace {

using Traced = std::vector<TracedTensor>;

TracedTensor num(const TracedTensor& like, double v) {
  return scalar_like(like, Scalar(v));
}

TracedTensor inum(const TracedTensor& like, std::int64_t v) {
  return scalar_like(like, Scalar(v));
}

Tensor scalar_f64(double v) {
  return Tensor::scalar(v);
}

// ---- cond ----

struct CondNet {
  TracedTensor x = placeholder(f64, {n_dim()});
  TracedTensor w = placeholder(f64, {});
  TracedTensor y;
  CondNet() {
    const TracedTensor pred = gt(sum(x), num(w, 0.0));
    const TracedTensor ws = w;
    y = cond(
        pred, [&](std::span<const TracedTensor> o) { return Traced{o[0] * o[0] * ws}; },
        [&](std::span<const TracedTensor> o) { return Traced{sin(o[0]) + ws}; }, {x})[0];
  }
};

}  // namespace

TEST(TracedCond, RunsTheBranchTheDataChooses) {
  auto rt = cpu_runtime();
  CondNet net;
  Program p = compile({net.y}, {net.x, net.w});
  EXPECT_EQ(p.count_ops("cond"), 1u);
  const Tensor pos = Tensor::from_col_major({3}, std::vector<double>{1.0, 2.0, 0.5});
  const Tensor neg = Tensor::from_col_major({2}, std::vector<double>{-1.0, 0.25});
  auto a = eval(*rt, p, {pos, scalar_f64(3.0)});
  auto b = eval(*rt, p, {neg, scalar_f64(3.0)});
  EXPECT_TRUE(
      close(a[0], Tensor::from_col_major({3}, std::vector<double>{3.0, 12.0, 0.75}), 1e-15));
  EXPECT_TRUE(close(
      b[0],
      Tensor::from_col_major({2}, std::vector<double>{std::sin(-1.0) + 3.0, std::sin(0.25) + 3.0}),
      1e-15));
}

TEST(TracedCond, DerivativesFollowTheBranchTaken) {
  auto rt = cpu_runtime();
  CondNet net;
  const TracedTensor loss = sum(net.y * net.y);
  Program value = compile({loss}, {net.x, net.w});
  const auto g = grad_many(loss, {net.x, net.w});
  Program grads = compile({*g[0], *g[1]}, {net.x, net.w});
  const TracedTensor vx = placeholder(f64, {n_dim()});
  const TracedTensor vw = placeholder(f64, {});
  const auto t = jvp_many({loss}, {net.x, net.w}, {vx, vw});
  Program tangent = compile({*t[0]}, {net.x, net.w, vx, vw});
  for (const double sign : {1.0, -1.0}) {
    const Tensor x = mul(random({4}, f64, 7), scalar_f64(sign), rt->backend());
    const Tensor w = scalar_f64(0.7);
    auto gv = eval(*rt, grads, {x, w});
    EXPECT_TRUE(close(gv[0], fd_grad(*rt, value, {x, w}, 0), 1e-7)) << sign;
    EXPECT_TRUE(close(gv[1], fd_grad(*rt, value, {x, w}, 1), 1e-7)) << sign;
    // Adjoint consistency: <grad, v> equals the jvp along v.
    const Tensor v = random({4}, f64, 9);
    const Tensor u = scalar_f64(-0.3);
    const double jv = eval(*rt, tangent, {x, w, v, u})[0].item<double>();
    const double gdot = sum(mul(gv[0], v, rt->backend()), rt->backend()).item<double>() +
                        gv[1].item<double>() * -0.3;
    EXPECT_NEAR(jv, gdot, 1e-12 * (1 + std::abs(jv))) << sign;
  }
}

TEST(TracedCond, RefusesBranchesThatDisagree) {
  const TracedTensor x = placeholder(f64, {3});
  const TracedTensor pred = gt(sum(x), num(x, 0.0));
  try {
    cond(
        pred, [](std::span<const TracedTensor> o) { return Traced{o[0]}; },
        [](std::span<const TracedTensor> o) {
          return Traced{concatenate({o[0], o[0]}, 0)};
        },
        {x});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ShapeMismatch);
    EXPECT_NE(std::string(e.what()).find("result 0"), std::string::npos) << e.what();
  }
  try {
    cond(
        pred, [](std::span<const TracedTensor> o) { return Traced{o[0]}; },
        [](std::span<const TracedTensor> o) { return Traced{convert(o[0], f32)}; }, {x});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::DTypeMismatch);
  }
  try {
    cond(
        sum(x), [](std::span<const TracedTensor> o) { return Traced{o[0]}; },
        [](std::span<const TracedTensor> o) { return Traced{o[0]}; }, {x});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::DTypeMismatch);
    EXPECT_NE(std::string(e.what()).find("rank-0 bool"), std::string::npos) << e.what();
  }
}

// ---- while_loop ----

namespace {

// x <- a * x + 1 while the step counter is below `steps` (an input).
struct Loop {
  TracedTensor x = placeholder(f64, {n_dim()});
  TracedTensor a = placeholder(f64, {});
  TracedTensor steps = placeholder(i64, {});
  TracedTensor out;
  explicit Loop(WhileOptions options = {}) {
    const TracedTensor zero = steps * inum(steps, 0);
    const TracedTensor limit = steps;
    const TracedTensor rate = a;
    out = while_loop([&](std::span<const TracedTensor> c) { return lt(c[1], limit); },
                     [&](std::span<const TracedTensor> c) {
                       return Traced{c[0] * rate + 1.0, c[1] + inum(c[1], 1)};
                     },
                     {x, zero}, options)[0];
  }
};

Tensor steps_tensor(std::int64_t n) {
  return Tensor::from_col_major({}, std::vector<std::int64_t>{n});
}

}  // namespace

TEST(TracedWhileLoop, ValuesEqualTheUnrolledLoop) {
  auto rt = cpu_runtime();
  Loop loop;
  Program p = compile({loop.out}, {loop.x, loop.a, loop.steps});
  EXPECT_EQ(p.count_ops("while_loop"), 1u);
  const Tensor x = random({5}, f64, 1);
  for (const std::int64_t n : {0, 1, 7}) {
    // Unrolled reference in a flat graph.
    const TracedTensor xu = placeholder(f64, {5});
    const TracedTensor au = placeholder(f64, {});
    TracedTensor y = xu;
    for (std::int64_t k = 0; k < n; ++k) y = y * au + 1.0;
    Program ref = compile({y}, {xu, au});
    EXPECT_TRUE(close(eval(*rt, p, {x, scalar_f64(0.8), steps_tensor(n)})[0],
                      eval(*rt, ref, {x, scalar_f64(0.8)})[0], 1e-15))
        << n;
  }
}

TEST(TracedWhileLoop, ForwardModeEqualsUnrolledForwardMode) {
  auto rt = cpu_runtime();
  Loop loop;
  const TracedTensor vx = placeholder(f64, {n_dim()});
  const TracedTensor va = placeholder(f64, {});
  const auto t = jvp_many({loop.out}, {loop.x, loop.a}, {vx, va});
  Program tangent = compile({*t[0]}, {loop.x, loop.a, loop.steps, vx, va});
  const Tensor x = random({3}, f64, 2), v = random({3}, f64, 3);
  const TracedTensor xu = placeholder(f64, {3});
  const TracedTensor au = placeholder(f64, {});
  TracedTensor y = xu;
  for (int k = 0; k < 6; ++k) y = y * au + 1.0;
  const TracedTensor vxu = placeholder(f64, {3});
  const TracedTensor vau = placeholder(f64, {});
  Program ref = compile({*jvp_many({y}, {xu, au}, {vxu, vau})[0]}, {xu, au, vxu, vau});
  const Tensor a = scalar_f64(0.9), va_t = scalar_f64(0.4);
  EXPECT_TRUE(close(eval(*rt, tangent, {x, a, steps_tensor(6), v, va_t})[0],
                    eval(*rt, ref, {x, a, v, va_t})[0], 1e-14));
  // And finite differences of the loop itself.
  Program value = compile({loop.out}, {loop.x, loop.a, loop.steps});
  auto fd = fd_jvp(*rt, value, {x, a, steps_tensor(6)}, {v, va_t, steps_tensor(0)});
  EXPECT_TRUE(close(eval(*rt, tangent, {x, a, steps_tensor(6), v, va_t})[0], fd[0], 1e-7));
}

TEST(TracedWhileLoop, ReverseModeIsRefusedWithAdvice) {
  Loop loop;
  try {
    (void)grad(sum(loop.out), loop.a);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::UnsupportedAdRule);
    EXPECT_NE(std::string(e.what()).find("fixed_point"), std::string::npos) << e.what();
  }
}

TEST(TracedWhileLoop, RefusesACarryThatChangesShapeOrDtype) {
  const TracedTensor x = placeholder(f64, {3});
  auto pred = [](std::span<const TracedTensor> c) { return lt(sum(c[0]), num(c[0], 10.0)); };
  try {
    while_loop(pred,
               [](std::span<const TracedTensor> c) {
                 return Traced{concatenate({c[0], c[0]}, 0)};
               },
               {x});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ShapeMismatch);
    EXPECT_NE(std::string(e.what()).find("carry 0 is f64[3]"), std::string::npos) << e.what();
  }
  try {
    while_loop(pred, [](std::span<const TracedTensor> c) { return Traced{convert(c[0], f32)}; },
               {x});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::DTypeMismatch);
  }
  try {
    while_loop([](std::span<const TracedTensor> c) { return sum(c[0]); },
               [](std::span<const TracedTensor> c) { return Traced{c[0]}; }, {x});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::DTypeMismatch);
  }
}

TEST(TracedWhileLoop, IterationLimitIsNoConvergence) {
  auto rt = cpu_runtime();
  Loop loop(WhileOptions{5});
  Program p = compile({loop.out}, {loop.x, loop.a, loop.steps});
  const Tensor x = random({2}, f64, 1);
  EXPECT_NO_THROW(eval(*rt, p, {x, scalar_f64(0.5), steps_tensor(5)}));
  try {
    eval(*rt, p, {x, scalar_f64(0.5), steps_tensor(6)});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::NoConvergence);
  }
}

TEST(TracedWhileLoop, MemoryDoesNotGrowWithIterations) {
  auto rt = cpu_runtime();
  Loop loop;
  Program p = compile({loop.out}, {loop.x, loop.a, loop.steps});
  const Tensor x = random({64}, f64, 1);
  std::vector<Tensor> in3 = {x, scalar_f64(0.5), steps_tensor(3)};
  std::vector<Tensor> in300 = {x, scalar_f64(0.5), steps_tensor(300)};
  PreparedProgram plan = prepare(*rt, p, InputSignature::of(in3));
  RunStats s3, s300;
  run(*rt, plan, in3, &s3);
  run(*rt, plan, in300, &s300);
  EXPECT_GT(s3.peak_live_values, 0u);
  EXPECT_EQ(s3.peak_live_values, s300.peak_live_values);
}

// ---- fixed_point ----

namespace {

// x = 0.5 tanh(A x + b): a contraction (|A| small).
Traced contraction(std::span<const TracedTensor> x, std::span<const TracedTensor> p) {
  return Traced{tanh(matmul(p[0], x[0]) + p[1]) * 0.5};
}

struct FixedNet {
  TracedTensor a = placeholder(f64, {4, 4});
  TracedTensor b = placeholder(f64, {4, 1});
  TracedTensor x0 = placeholder(f64, {4, 1});
  TracedTensor x;
  explicit FixedNet(FixedPointOptions options = {}, bool unrolled = false) {
    if (unrolled) {
      Traced s{x0};
      const Traced p{a, b};
      for (int k = 0; k < 120; ++k) s = contraction(s, p);
      x = s[0];
    } else {
      x = fixed_point(contraction, {x0}, {a, b}, options).value[0];
    }
  }
  TracedTensor loss() const { return sum(sin(x) * x); }
};

std::vector<Tensor> fixed_inputs(Backend& cpu) {
  Tensor a = mul(random({4, 4}, f64, 11), scalar_f64(0.4), cpu);
  return {a, random({4, 1}, f64, 12), random({4, 1}, f64, 13)};
}

}  // namespace

TEST(TracedFixedPoint, SolutionEqualsTheUnrolledIteration) {
  auto rt = cpu_runtime();
  FixedNet fp({1e-14, 1000}, false), un({}, true);
  Program p = compile({fp.x}, {fp.a, fp.b, fp.x0});
  Program u = compile({un.x}, {un.a, un.b, un.x0});
  const auto in = fixed_inputs(rt->backend());
  EXPECT_TRUE(close(eval(*rt, p, in)[0], eval(*rt, u, in)[0], 1e-12));
}

TEST(TracedFixedPoint, GradientsAreImplicitAndEqualUnrolledAd) {
  auto rt = cpu_runtime();
  FixedPointOptions iterate{1e-14, 1000};
  iterate.linear_solver = FixedPointLinearSolver::Iterate;
  FixedNet fp(iterate, false), un({}, true);
  const auto gf = grad_many(fp.loss(), {fp.a, fp.b, fp.x0});
  const auto gu = grad_many(un.loss(), {un.a, un.b});
  EXPECT_FALSE(gf[2].has_value());  // x* does not depend on x0
  Program pf = compile({*gf[0], *gf[1]}, {fp.a, fp.b, fp.x0});
  Program pu = compile({*gu[0], *gu[1]}, {un.a, un.b, un.x0});
  // The gradient program holds fixed points (the adjoint solve), no unrolled chain.
  EXPECT_GE(pf.count_ops("fixed_point"), 2u);
  const auto in = fixed_inputs(rt->backend());
  auto a = eval(*rt, pf, in), b = eval(*rt, pu, in);
  EXPECT_TRUE(close(a[0], b[0], 1e-11));
  EXPECT_TRUE(close(a[1], b[1], 1e-11));
  Program value = compile({fp.loss()}, {fp.a, fp.b, fp.x0});
  EXPECT_TRUE(close(a[0], fd_grad(*rt, value, in, 0), 1e-7));
  EXPECT_TRUE(close(a[1], fd_grad(*rt, value, in, 1), 1e-7));
}

TEST(TracedFixedPoint, JvpEqualsUnrolledAndIsAdjointToVjp) {
  auto rt = cpu_runtime();
  FixedNet fp({1e-14, 1000}, false), un({}, true);
  const TracedTensor va = placeholder(f64, {4, 4}), vb = placeholder(f64, {4, 1});
  Program jf = compile({*jvp_many({fp.x}, {fp.a, fp.b}, {va, vb})[0]}, {fp.a, fp.b, fp.x0, va, vb});
  Program ju = compile({*jvp_many({un.x}, {un.a, un.b}, {va, vb})[0]}, {un.a, un.b, un.x0, va, vb});
  const TracedTensor ct = placeholder(f64, {4, 1});
  const auto vj = vjp_many({fp.x}, {ct}, {fp.a, fp.b});
  Program vf = compile({*vj[0], *vj[1]}, {fp.a, fp.b, fp.x0, ct});
  auto in = fixed_inputs(rt->backend());
  const Tensor dva = random({4, 4}, f64, 21), dvb = random({4, 1}, f64, 22);
  const Tensor w = random({4, 1}, f64, 23);
  std::vector<Tensor> jin = in;
  jin.push_back(dva);
  jin.push_back(dvb);
  const Tensor tf = eval(*rt, jf, jin)[0];
  EXPECT_TRUE(close(tf, eval(*rt, ju, jin)[0], 1e-11));
  std::vector<Tensor> vin = in;
  vin.push_back(w);
  auto g = eval(*rt, vf, vin);
  Backend& cpu = rt->backend();
  const double lhs = sum(mul(w, tf, cpu), cpu).item<double>();
  const double rhs =
      sum(mul(g[0], dva, cpu), cpu).item<double>() + sum(mul(g[1], dvb, cpu), cpu).item<double>();
  EXPECT_NEAR(lhs, rhs, 1e-11 * (1 + std::abs(lhs)));
}

TEST(TracedFixedPoint, SecondOrderEqualsUnrolled) {
  auto rt = cpu_runtime();
  FixedNet fp({1e-14, 1000}, false), un({}, true);
  const TracedTensor v = placeholder(f64, {4, 1});
  Program hf =
      compile({hvp(fp.loss(), fp.b, v), hvp(fp.loss(), fp.b, v, HvpMode::ReverseOverReverse)},
              {fp.a, fp.b, fp.x0, v});
  Program hu = compile({hvp(un.loss(), un.b, v)}, {un.a, un.b, un.x0, v});
  auto in = fixed_inputs(rt->backend());
  in.push_back(random({4, 1}, f64, 31));
  auto a = eval(*rt, hf, in);
  const Tensor b = eval(*rt, hu, in)[0];
  EXPECT_TRUE(close(a[0], b, 1e-10));
  EXPECT_TRUE(close(a[1], b, 1e-10));
}

TEST(TracedFixedPoint, NonConvergenceIsAnErrorOrAFlag) {
  auto rt = cpu_runtime();
  FixedNet strict({1e-14, 3}, false);
  Program p = compile({strict.x}, {strict.a, strict.b, strict.x0});
  const auto in = fixed_inputs(rt->backend());
  try {
    eval(*rt, p, in);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::NoConvergence);
    EXPECT_NE(std::string(e.what()).find("after 3 iterations"), std::string::npos) << e.what();
  }
  FixedPointOptions lenient{1e-14, 3};
  lenient.throw_on_failure = false;
  FixedNet soft(lenient, false);
  const TracedTensor x0 = soft.x0;
  auto r = fixed_point(contraction, {x0}, {soft.a, soft.b}, lenient);
  Program q = compile({r.iterations, r.residual, r.converged}, {soft.a, soft.b, soft.x0});
  auto out = eval(*rt, q, in);
  EXPECT_EQ(out[0].item<std::int64_t>(), 3);
  EXPECT_GT(out[1].item<double>(), 1e-14);
  EXPECT_FALSE(out[2].item<bool>());
}

TEST(TracedFixedPoint, RefusesAStateThatChangesAndBadOptions) {
  const TracedTensor x = placeholder(f64, {3});
  try {
    fixed_point(
        [](std::span<const TracedTensor> s, std::span<const TracedTensor>) {
          return Traced{concatenate({s[0], s[0]}, 0)};
        },
        {x}, {});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ShapeMismatch);
    EXPECT_NE(std::string(e.what()).find("state 0"), std::string::npos) << e.what();
  }
  FixedPointOptions bad;
  bad.max_iter = 0;
  EXPECT_THROW(
      {
        try {
          fixed_point([](const TracedTensor& s, std::span<const TracedTensor>) { return s; }, x, {},
                      bad);
        } catch (const Error& e) {
          EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
          throw;
        }
      },
      Error);
}

TEST(TracedFixedPoint, MemoryDoesNotGrowWithIterations) {
  auto rt = cpu_runtime();
  // Same map at two tolerances: many more iterations, the same peak (the
  // adjoint's linear solve iterated too).
  FixedPointOptions lo{1e-3, 1000}, hi{1e-15, 1000};
  lo.linear_solver = hi.linear_solver = FixedPointLinearSolver::Iterate;
  FixedNet loose(lo, false), tight(hi, false);
  auto it_loose = fixed_point(contraction, {loose.x0}, {loose.a, loose.b}, lo);
  auto it_tight = fixed_point(contraction, {tight.x0}, {tight.a, tight.b}, hi);
  Program pl =
      compile({grad(loose.loss(), loose.b), it_loose.iterations}, {loose.a, loose.b, loose.x0});
  Program pt =
      compile({grad(tight.loss(), tight.b), it_tight.iterations}, {tight.a, tight.b, tight.x0});
  const auto in = fixed_inputs(rt->backend());
  RunStats sl, st;
  auto ol = run(*rt, prepare(*rt, pl, InputSignature::of(in)), in, &sl);
  auto ot = run(*rt, prepare(*rt, pt, InputSignature::of(in)), in, &st);
  EXPECT_GT(ot[1].item<std::int64_t>(), 2 * ol[1].item<std::int64_t>());
  EXPECT_EQ(sl.peak_live_values, st.peak_live_values);
}

TEST(TracedFixedPoint, SeveralStateTensorsAndSymbolicSizes) {
  auto rt = cpu_runtime();
  // (u, v) <- (0.5 cos(v) + c, 0.5 sin(u)) elementwise, with n bound at run time.
  const TracedTensor u0 = placeholder(f64, {n_dim()}), v0 = placeholder(f64, {n_dim()});
  const TracedTensor c = placeholder(f64, {n_dim()});
  auto f = [](std::span<const TracedTensor> s, std::span<const TracedTensor> p) {
    return Traced{cos(s[1]) * 0.5 + p[0], sin(s[0]) * 0.5};
  };
  auto r = fixed_point(f, {u0, v0}, {c}, {1e-14, 1000});
  const TracedTensor loss = sum(r.value[0] * r.value[1]);
  Program p = compile({loss, grad(loss, c)}, {u0, v0, c});
  Program value = compile({loss}, {u0, v0, c});
  for (const std::int64_t n : {2, 5}) {
    Tensor z = zeros({n}, f64);
    Tensor cv = n == 2 ? random({2}, f64, 3) : random({5}, f64, 4);
    auto out = eval(*rt, p, {z, z, cv});
    // The solution satisfies both equations.
    std::vector<double> cc = cv.to_vector<double>();
    double u = 0, v = 0, expect = 0;
    for (std::int64_t k = 0; k < n; ++k) {
      u = 0, v = 0;
      for (int it = 0; it < 200; ++it) {
        const double un = 0.5 * std::cos(v) + cc[k];
        v = 0.5 * std::sin(u);
        u = un;
      }
      expect += u * v;
    }
    EXPECT_NEAR(out[0].item<double>(), expect, 1e-12) << n;
    EXPECT_TRUE(close(out[1], fd_grad(*rt, value, {z, z, cv}, 2), 1e-7)) << n;
  }
}

TEST(TracedWhileLoop, BodiesArePreparedOnceWithFusedPasses) {
  auto rt = cpu_runtime();
  Loop loop;
  Program p = compile({loop.out}, {loop.x, loop.a, loop.steps});
  const Tensor x = random({1000}, f64, 1);
  std::vector<Tensor> in = {x, scalar_f64(0.5), steps_tensor(10)};
  const auto before = rt->program_counters();
  PreparedProgram plan = prepare(*rt, p, InputSignature::of(in));
  RunStats stats;
  run(*rt, plan, in, &stats);
  run(*rt, plan, in);
  // One preparation for the program and its bodies, none per run.
  EXPECT_EQ(rt->program_counters().preparations - before.preparations, 1u);
  // The body's x * a + 1 runs as one fused pass per iteration.
  EXPECT_GE(stats.fused_passes, 10u);
}

TEST(TracedFixedPoint, AFailedDerivativeSolveSaysWhichAndWhatToChange) {
  auto rt = cpu_runtime();
  FixedPointOptions options{1e-14, 1000};
  options.linear_max_iter = 2;  // too few for the adjoint's linear solve
  options.linear_solver = FixedPointLinearSolver::Iterate;
  FixedNet net(options, false);
  Program g = compile({grad(net.loss(), net.b)}, {net.a, net.b, net.x0});
  const auto in = fixed_inputs(rt->backend());
  try {
    eval(*rt, g, in);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::NoConvergence);
    const std::string what = e.what();
    EXPECT_NE(what.find("linear solve of the adjoint"), std::string::npos) << what;
    EXPECT_NE(what.find("linear_max_iter"), std::string::npos) << what;
  }
}

// ---- fixed_point: the derivatives' direct linear solve ----

namespace {

FixedPointOptions with_solver(FixedPointLinearSolver solver, double tol = 1e-14,
                              std::int64_t max_iter = 1000) {
  FixedPointOptions o{tol, max_iter};
  o.linear_solver = solver;
  return o;
}

constexpr FixedPointLinearSolver kIterate = FixedPointLinearSolver::Iterate;
constexpr FixedPointLinearSolver kDirect = FixedPointLinearSolver::Direct;
constexpr FixedPointLinearSolver kAuto = FixedPointLinearSolver::Auto;

/// Outputs: the gradients in A and b, the jvp along (va, vb), and the HVP in
/// b along vb in both modes; inputs (A, b, x0, va, vb).
Program derivative_program(const FixedNet& net) {
  const TracedTensor va = placeholder(f64, {4, 4}), vb = placeholder(f64, {4, 1});
  const auto g = grad_many(net.loss(), {net.a, net.b});
  const auto t = jvp_many({net.x}, {net.a, net.b}, {va, vb});
  return compile({*g[0], *g[1], *t[0], hvp(net.loss(), net.b, vb),
                  hvp(net.loss(), net.b, vb, HvpMode::ReverseOverReverse)},
                 {net.a, net.b, net.x0, va, vb});
}

/// The gradient program of sum(x* x*) for f(x, c) = 0.5 cos(x) + c on a
/// state of `shape` (dtype `dtype`).
Program cosine_gradient(DType dtype, SymShape shape, FixedPointLinearSolver solver) {
  const TracedTensor x0 = placeholder(dtype, shape), c = placeholder(dtype, shape);
  const TracedTensor x = fixed_point(
      [](const TracedTensor& s, std::span<const TracedTensor> p) { return cos(s) * 0.5 + p[0]; },
      x0, {c}, with_solver(solver));
  const TracedTensor ct = placeholder(dtype, shape);
  return compile({*vjp_many({x}, {ct}, {c})[0]}, {x0, c, ct});
}

}  // namespace

TEST(TracedFixedPointDirect, DerivativesEqualIterateAndUnrolled) {
  auto rt = cpu_runtime();
  FixedNet iterate(with_solver(kIterate), false), direct(with_solver(kDirect), false);
  FixedNet un({}, true);
  Program pi = derivative_program(iterate), pd = derivative_program(direct);
  Program pu = derivative_program(un);
  // The direct derivatives hold no fixed point but the solution's.
  EXPECT_EQ(pd.count_ops("fixed_point"), 1u);
  EXPECT_GE(pi.count_ops("fixed_point"), 3u);
  auto in = fixed_inputs(rt->backend());
  in.push_back(random({4, 4}, f64, 21));
  in.push_back(random({4, 1}, f64, 22));
  const auto i = eval(*rt, pi, in), d = eval(*rt, pd, in), u = eval(*rt, pu, in);
  const double tol[] = {1e-11, 1e-11, 1e-11, 1e-10, 1e-10};
  for (std::size_t k = 0; k < d.size(); ++k) {
    EXPECT_TRUE(close(d[k], u[k], tol[k])) << k;
    EXPECT_TRUE(close(d[k], i[k], 1e-12)) << k;
  }
}

TEST(TracedFixedPointDirect, SolvesWhereTheIterationIsTooSlow) {
  auto rt = cpu_runtime();
  Backend& cpu = rt->backend();
  // x = A x + b with A upper triangular: spectral radius 0.99 (the iterated
  // linear solve needs ~3000 steps).
  const Tensor a = Tensor::from_col_major(
      {4, 4}, std::vector<double>{0.99, 0, 0, 0, 0.1, 0.5, 0, 0, 0, 0.2, -0.3, 0, 0, 0, 0.05, 0.2});
  const Tensor b = random({4, 1}, f64, 5);
  const std::vector<Tensor> in = {a, b, zeros({4, 1}, f64)};
  auto gradients = [&](FixedPointLinearSolver solver) {
    FixedPointOptions o = with_solver(solver, 1e-15, 100000);
    o.linear_max_iter = 100;
    const TracedTensor pa = placeholder(f64, {4, 4}), pb = placeholder(f64, {4, 1});
    const TracedTensor x0 = placeholder(f64, {4, 1});
    const TracedTensor x =
        fixed_point([](const TracedTensor& s,
                       std::span<const TracedTensor> p) { return matmul(p[0], s) + p[1]; },
                    x0, {pa, pb}, o);
    const auto g = grad_many(sum(x * x), {pa, pb});
    return eval(*rt, compile({x, *g[0], *g[1]}, {pa, pb, x0}), in);
  };
  try {
    gradients(kIterate);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::NoConvergence);
    EXPECT_NE(std::string(e.what()).find("linear solve of the adjoint"), std::string::npos)
        << e.what();
  }
  const auto d = gradients(kDirect);
  // Reference: x* = (I - A)^-1 b, lambda = (I - A)^-T 2 x*, gA = lambda x*^T, gb = lambda.
  auto transposed = [&](const Tensor& v) {
    const std::int64_t perm[] = {1, 0};
    return permute(v, perm, cpu);
  };
  const Tensor m = sub(eye(4), a, cpu);
  const Tensor x = linalg::solve(m, b, true, cpu);
  const Tensor lambda = linalg::solve(transposed(m), mul(x, Tensor::scalar(2.0), cpu), true, cpu);
  EXPECT_TRUE(close(d[0], x, 1e-11));
  EXPECT_TRUE(close(d[1], matmul(lambda, transposed(x), cpu), 1e-10));
  EXPECT_TRUE(close(d[2], lambda, 1e-10));
}

TEST(TracedFixedPointDirect, AutoSolvesSmallConstantStatesDirectly) {
  auto rt = cpu_runtime();
  // At most 64 real unknowns with constant extents: direct (one fixed point,
  // the solution's); else iterated (a second one, the adjoint's).
  EXPECT_EQ(cosine_gradient(f64, {64}, kAuto).count_ops("fixed_point"), 1u);
  EXPECT_EQ(cosine_gradient(f64, {65}, kAuto).count_ops("fixed_point"), 2u);
  EXPECT_EQ(cosine_gradient(f64, {8, 8}, kAuto).count_ops("fixed_point"), 1u);
  EXPECT_EQ(cosine_gradient(c128, {32}, kAuto).count_ops("fixed_point"), 1u);
  EXPECT_EQ(cosine_gradient(c128, {33}, kAuto).count_ops("fixed_point"), 2u);
  EXPECT_EQ(cosine_gradient(f64, {n_dim()}, kAuto).count_ops("fixed_point"), 2u);
  // The 64 unknowns solved both ways agree.
  const std::vector<Tensor> in = {zeros({64}, f64), random({64}, f64, 3), random({64}, f64, 4)};
  EXPECT_TRUE(close(eval(*rt, cosine_gradient(f64, {64}, kAuto), in)[0],
                    eval(*rt, cosine_gradient(f64, {64}, kIterate), in)[0], 1e-12));
}

TEST(TracedFixedPointDirect, ComplexStatesAreTwoRealUnknownsEach) {
  auto rt = cpu_runtime();
  Backend& cpu = rt->backend();
  // A map that is only real-linear in x (conj): its derivative is no complex matrix.
  auto f = [](const TracedTensor& s, std::span<const TracedTensor> p) {
    return matmul(p[0], s) * 0.5 + conj(s) * 0.2 + p[1];
  };
  const std::vector<Tensor> in = {mul(random({3, 3}, c128, 41), Tensor::scalar(0.3), cpu),
                                  random({3, 1}, c128, 42), zeros({3, 1}, c128),
                                  random({3, 1}, c128, 43)};
  std::vector<std::vector<Tensor>> out;
  for (const auto solver : {kIterate, kDirect}) {
    const TracedTensor a = placeholder(c128, {3, 3}), b = placeholder(c128, {3, 1});
    const TracedTensor x0 = placeholder(c128, {3, 1}), vb = placeholder(c128, {3, 1});
    const TracedTensor x = fixed_point(f, x0, {a, b}, with_solver(solver));
    const TracedTensor loss = real(sum(x * conj(x))) + sum(imag(x));
    const auto g = grad_many(loss, {a, b});
    Program p = compile({*g[0], *g[1], *jvp_many({x}, {b}, {vb})[0]}, {a, b, x0, vb});
    EXPECT_EQ(p.count_ops("fixed_point"), solver == kDirect ? 1u : 3u);
    out.push_back(eval(*rt, p, in));
    if (solver == kDirect) {
      Program value = compile({loss}, {a, b, x0, vb});
      EXPECT_TRUE(close(out.back()[1], fd_grad(*rt, value, in, 1), 1e-7));
    }
  }
  for (std::size_t k = 0; k < 3; ++k) EXPECT_TRUE(close(out[1][k], out[0][k], 1e-12)) << k;
}

TEST(TracedFixedPointDirect, RefusesOptionsItCannotServe) {
  auto identity = [](const TracedTensor& s, std::span<const TracedTensor>) { return s * 0.5; };
  auto refused = [&](const TracedTensor& x, const FixedPointOptions& o, const char* words) {
    try {
      fixed_point(identity, x, {}, o);
      ADD_FAILURE() << "no error for " << words;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  refused(placeholder(f64, {n_dim()}), with_solver(kDirect), "constant state extents");
  refused(placeholder(f64, {1025}), with_solver(kDirect), "at most 1024 unknowns");
  refused(placeholder(c128, {513}), with_solver(kDirect), "at most 1024 unknowns");
  refused(placeholder(f64, {3}), with_solver(static_cast<FixedPointLinearSolver>(7)),
          "none of Iterate, Direct, Auto");
  FixedPointOptions nan_tol;
  nan_tol.linear_tol = std::numeric_limits<double>::quiet_NaN();
  refused(placeholder(f64, {3}), nan_tol, "linear_tol");
  // Symbolic extents and large states are fine for Iterate and Auto.
  EXPECT_NO_THROW(fixed_point(identity, placeholder(f64, {n_dim()}), {}, with_solver(kAuto)));
  EXPECT_NO_THROW(fixed_point(identity, placeholder(f64, {4096}), {}, with_solver(kIterate)));
}
