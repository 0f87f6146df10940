// Optimisers: update rules against hand-computed steps, convergence on
// problems with known minima (Rosenbrock, a complex least-squares fit),
// L-BFGS's iteration counts against torch.optim.LBFGS, the leaf update
// (EagerTensor::assign_) and every error.

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdio>

#include "tenferro/tenferro.hpp"

namespace tf = tenferro;
namespace optim = tenferro::optim;

namespace {

template <class F>
tf::ErrorKind error_kind(F&& f) {
  try {
    f();
  } catch (const tf::Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "no tenferro::Error was thrown";
  return tf::ErrorKind::Internal;
}

tf::EagerTensor rosenbrock(const tf::EagerTensor& x) {
  const auto a = tf::slice(x, {0}, {1});
  const auto b = tf::slice(x, {1}, {2});
  return tf::sum(tf::square(1.0 - a) + 100.0 * tf::square(b - tf::square(a)));
}

double rosenbrock_distance(const tf::EagerTensor& x) {
  const auto v = x.value().to_vector<double>();
  return std::hypot(v[0] - 1.0, v[1] - 1.0);
}

TEST(Assign, KeepsTheLeafAndItsGradSlotAndOldGraphsKeepTheOldValue) {
  auto rt = tf::EagerRuntime::make_cpu();
  tf::EagerTensor x = rt->variable(tf::Tensor::from_col_major({2}, std::vector<double>{1.0, 2.0}));
  tf::EagerTensor alias = x;
  tf::EagerTensor y = tf::sum(x * x);  // saves x = (1, 2) for its backward
  x.assign_(tf::Tensor::from_col_major({2}, std::vector<double>{5.0, 7.0}));
  EXPECT_EQ(alias.value().to_vector<double>(), (std::vector<double>{5.0, 7.0}));
  EXPECT_TRUE(x.requires_grad());
  EXPECT_TRUE(x.is_leaf());
  y.backward();  // d/dx sum(x^2) at the recorded (1, 2)
  EXPECT_EQ(alias.grad().value().to_vector<double>(), (std::vector<double>{2.0, 4.0}));
  x.clear_grad();
  tf::sum(x * x).backward();  // at the new value
  EXPECT_EQ(x.grad().value().to_vector<double>(), (std::vector<double>{10.0, 14.0}));

  EXPECT_EQ(error_kind([&] { x.assign_(tf::zeros({3})); }), tf::ErrorKind::ShapeMismatch);
  EXPECT_EQ(error_kind([&] { x.assign_(tf::zeros({2}, tf::f32)); }), tf::ErrorKind::DTypeMismatch);
  EXPECT_EQ(error_kind([&] { y.assign_(tf::Tensor::scalar(1.0)); }), tf::ErrorKind::RuntimeState);
  EXPECT_EQ(error_kind([&] { x.assign_(tf::Tensor()); }), tf::ErrorKind::InvalidArgument);
  EXPECT_EQ(x.value().to_vector<double>(),
            (std::vector<double>{5.0, 7.0}));  // unchanged by the errors
}

TEST(Sgd, StepsMatchTheUpdateRuleWithMomentumAndNesterov) {
  auto rt = tf::EagerRuntime::make_cpu();
  for (bool nesterov : {false, true}) {
    tf::EagerTensor p = rt->variable(tf::Tensor::scalar(1.0));
    optim::Sgd opt({p}, {.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01, .nesterov = nesterov});
    double value = 1.0, buffer = 0.0;
    for (int step = 0; step < 3; ++step) {
      opt.zero_grad();
      tf::square(p * 3.0).backward();  // f = 9 p^2, f' = 18 p
      double g = 18.0 * value + 0.01 * value;
      buffer = step == 0 ? g : 0.9 * buffer + g;
      g = nesterov ? g + 0.9 * buffer : buffer;
      value -= 0.1 * g;
      opt.step();
      EXPECT_NEAR(p.item<double>(), value, 1e-12) << "nesterov " << nesterov << " step " << step;
    }
    EXPECT_EQ(opt.step_count(), 3);
  }
}

TEST(Sgd, MinimisesAComplexQuadraticAlongTheConjugateGradient) {
  auto rt = tf::EagerRuntime::make_cpu();
  const std::complex<double> target(2.0, -1.0);
  tf::EagerTensor z = rt->variable(tf::Tensor::scalar(std::complex<double>(0.0, 0.0)));
  optim::Sgd opt({z}, {.lr = 0.1, .momentum = 0.5});
  const auto c = rt->tensor(tf::Tensor::scalar(target));
  for (int i = 0; i < 200; ++i) {
    opt.zero_grad();
    tf::sum(tf::square(tf::abs(z - c))).backward();  // |z - c|^2, grad 2 (z - c)
    opt.step();
  }
  const auto v = z.item<std::complex<double>>();
  EXPECT_NEAR(v.real(), 2.0, 1e-9);
  EXPECT_NEAR(v.imag(), -1.0, 1e-9);
}

TEST(Adam, FirstStepsMatchTheUpdateRuleAndAdamWDecaysTheWeights) {
  auto rt = tf::EagerRuntime::make_cpu();
  tf::EagerTensor p = rt->variable(tf::Tensor::from_col_major({2}, std::vector<double>{1.0, -2.0}));
  optim::Adam opt({p}, {.lr = 0.1});
  double m[2] = {0, 0}, v[2] = {0, 0}, x[2] = {1.0, -2.0};
  for (int t = 1; t <= 3; ++t) {
    opt.zero_grad();
    tf::sum(tf::square(p) * p).backward();  // grad 3 p^2
    opt.step();
    for (int k = 0; k < 2; ++k) {
      const double g = 3.0 * x[k] * x[k];
      m[k] = 0.9 * m[k] + 0.1 * g;
      v[k] = 0.999 * v[k] + 0.001 * g * g;
      const double mhat = m[k] / (1 - std::pow(0.9, t));
      const double vhat = v[k] / (1 - std::pow(0.999, t));
      x[k] -= 0.1 * mhat / (std::sqrt(vhat) + 1e-8);
    }
    const auto got = p.value().to_vector<double>();
    EXPECT_NEAR(got[0], x[0], 1e-12);
    EXPECT_NEAR(got[1], x[1], 1e-12);
  }

  tf::EagerTensor w = rt->variable(tf::Tensor::scalar(2.0));
  optim::AdamW decayed({w}, {.lr = 0.1, .weight_decay = 0.5});
  decayed.zero_grad();
  (w * 0.0).backward();  // zero gradient: only the decoupled decay moves w
  decayed.step();
  EXPECT_NEAR(w.item<double>(), 2.0 * (1.0 - 0.1 * 0.5), 1e-15);
}

TEST(Adam, FitsAComplexLeastSquaresProblem) {
  auto rt = tf::EagerRuntime::make_cpu();
  tf::Generator gen(7);
  const tf::Tensor a = tf::randn({6, 3}, tf::c128, gen);
  const tf::Tensor z_true = tf::randn({3}, tf::c128, gen);
  tf::CpuBackend cpu;
  const tf::Tensor b = tf::matmul(a, z_true, cpu);  // consistent system: the minimum is z_true
  tf::EagerTensor z = rt->variable(tf::zeros({3}, tf::c128));
  const auto ea = rt->tensor(a), eb = rt->tensor(b);
  const auto loss = [&] { return tf::sum(tf::square(tf::abs(tf::matmul(ea, z) - eb))); };
  optim::Adam adam({z}, {.lr = 0.05});
  for (int i = 0; i < 1500; ++i) {
    adam.zero_grad();
    loss().backward();
    adam.step();
  }
  EXPECT_LT(loss().item<double>(), 1e-8);
  EXPECT_TRUE(tf::allclose(z.value(), z_true, 1e-4, 1e-4));

  // L-BFGS solves the same problem in a few iterations.
  tf::EagerTensor z2 = rt->variable(tf::zeros({3}, tf::c128));
  const auto loss2 = [&] { return tf::sum(tf::square(tf::abs(tf::matmul(ea, z2) - eb))); };
  optim::Lbfgs lbfgs({z2}, {.max_iter = 50,
                            .tolerance_grad = 1e-12,
                            .tolerance_change = 1e-20,
                            .line_search = optim::LineSearch::StrongWolfe});
  lbfgs.step(loss2);
  EXPECT_LT(loss2().item<double>(), 1e-16);
  EXPECT_TRUE(tf::allclose(z2.value(), z_true, 1e-8, 1e-8));
  EXPECT_LE(lbfgs.iterations(), 20);
}

// References: torch.optim.LBFGS (torch 1.13.1, Debian's python3-torch) on the
// same problem, lr = 1, history_size = 10, tolerance_grad = 1e-10,
// tolerance_change = 1e-14, max_iter = 200, max_eval = 400, float64:
// state["n_iter"] and state["func_evals"] after one step() (script:
// tests/optim/reference_lbfgs.py).
struct LbfgsReference {
  double x0, y0;
  optim::LineSearch search;
  std::int64_t iterations, evaluations;
};

TEST(Lbfgs, RosenbrockIterationCountsMatchTorch) {
  const LbfgsReference refs[] = {
      {-1.5, 2.0, optim::LineSearch::StrongWolfe, 42, 52},
      {-1.2, 1.0, optim::LineSearch::StrongWolfe, 37, 45},
      {-1.5, 2.0, optim::LineSearch::None, 91, 91},
      {-1.2, 1.0, optim::LineSearch::None, 89, 89},
  };
  auto rt = tf::EagerRuntime::make_cpu();
  for (const auto& ref : refs) {
    tf::EagerTensor x =
        rt->variable(tf::Tensor::from_col_major({2}, std::vector<double>{ref.x0, ref.y0}));
    optim::Lbfgs opt({x}, {.lr = 1.0,
                           .max_iter = 200,
                           .max_eval = 400,
                           .tolerance_grad = 1e-10,
                           .tolerance_change = 1e-14,
                           .history_size = 10,
                           .line_search = ref.search});
    const double first = opt.step([&] { return rosenbrock(x); });
    EXPECT_NEAR(
        first,
        rosenbrock(rt->tensor(tf::Tensor::from_col_major({2}, std::vector<double>{ref.x0, ref.y0})))
            .item<double>(),
        1e-12);
    std::printf("L-BFGS from (%g, %g): %lld iterations, %lld evaluations (torch: %lld, %lld)\n",
                ref.x0, ref.y0, static_cast<long long>(opt.iterations()),
                static_cast<long long>(opt.evaluations()), static_cast<long long>(ref.iterations),
                static_cast<long long>(ref.evaluations));
    EXPECT_LT(rosenbrock_distance(x), 1e-6) << "start " << ref.x0 << ", " << ref.y0;
    // Same algorithm and stopping rules: the counts agree up to rounding
    // differences late in the run.
    EXPECT_NEAR(static_cast<double>(opt.iterations()), static_cast<double>(ref.iterations), 3)
        << "start " << ref.x0 << ", " << ref.y0;
    EXPECT_NEAR(static_cast<double>(opt.evaluations()), static_cast<double>(ref.evaluations), 4)
        << "start " << ref.x0 << ", " << ref.y0;
  }
}

TEST(Optimisers, F32ParametersAndParametersWithoutGradients) {
  auto rt = tf::EagerRuntime::make_cpu();
  tf::EagerTensor used = rt->variable(tf::full({2}, 1.0, tf::f32));
  tf::EagerTensor unused = rt->variable(tf::full({2}, 3.0, tf::f32));
  optim::Sgd opt({used, unused}, {.lr = 0.25});
  opt.zero_grad();
  tf::sum(used * used).backward();
  opt.step();
  EXPECT_EQ(used.dtype(), tf::f32);
  EXPECT_EQ(used.value().to_vector<float>(), (std::vector<float>{0.5f, 0.5f}));
  EXPECT_EQ(unused.value().to_vector<float>(), (std::vector<float>{3.0f, 3.0f}));
  opt.zero_grad();
  EXPECT_FALSE(used.has_grad());
}

TEST(Optimisers, BadParametersAndOptionsAreTypedErrors) {
  auto rt = tf::EagerRuntime::make_cpu();
  tf::EagerTensor p = rt->variable(tf::zeros({2}));
  EXPECT_EQ(error_kind([] { optim::Sgd({}); }), tf::ErrorKind::InvalidArgument);
  EXPECT_EQ(error_kind([&] { optim::Sgd({p, p}); }), tf::ErrorKind::InvalidArgument);
  EXPECT_EQ(error_kind([&] { optim::Sgd({rt->tensor(tf::zeros({2}))}); }),
            tf::ErrorKind::RuntimeState);
  EXPECT_EQ(error_kind([&] { optim::Sgd({p * 2.0}); }), tf::ErrorKind::RuntimeState);
  EXPECT_EQ(error_kind([&] { optim::Sgd({tf::EagerTensor()}); }), tf::ErrorKind::InvalidArgument);
  EXPECT_EQ(error_kind([&] { optim::Sgd({p}, {.lr = -1.0}); }), tf::ErrorKind::InvalidArgument);
  EXPECT_EQ(error_kind([&] { optim::Sgd({p}, {.nesterov = true}); }),
            tf::ErrorKind::InvalidArgument);
  EXPECT_EQ(error_kind([&] { optim::Adam({p}, {.beta1 = 1.0}); }), tf::ErrorKind::InvalidArgument);
  EXPECT_EQ(error_kind([&] { optim::Lbfgs({p}, {.max_iter = 0}); }),
            tf::ErrorKind::InvalidArgument);
  optim::Lbfgs lbfgs({p});
  EXPECT_EQ(error_kind([&] { lbfgs.step([&] { return tf::sum(p) * tf::sum(p) + p; }); }),
            tf::ErrorKind::InvalidArgument);  // not a scalar
  EXPECT_EQ(error_kind([&] { lbfgs.step(nullptr); }), tf::ErrorKind::InvalidArgument);
}

}  // namespace
