// AD of the special functions: first order through the public gradient
// checker (eager, f64 and c128 where complex is supported), second order
// against a finite difference of the first derivative, the PyTorch values at
// singular points, traced jvp/vjp against eager, and the traced wrappers that
// mirror eager functions.

#include <cmath>
#include <functional>
#include <limits>
#include <numbers>

#include "ad/traced_fixtures.hpp"
#include "tenferro/ad/eager_ops.hpp"
#include "tenferro/ad/grad_check.hpp"

using namespace tenferro;

namespace {

using Fn = std::function<EagerTensor(const EagerTensor&)>;

struct Case {
  const char* name;
  Fn f;
  double lo, hi;  // real input range, inside the function's smooth domain
  bool complex_ok = false;
};

std::vector<Case> unary_cases() {
  return {
      {"erfinv", [](const EagerTensor& x) { return erfinv(x); }, -0.8, 0.8},
      {"lgamma", [](const EagerTensor& x) { return lgamma(x); }, 0.3, 3.0},
      {"digamma", [](const EagerTensor& x) { return digamma(x); }, 0.3, 3.0},
      {"polygamma1", [](const EagerTensor& x) { return polygamma(1, x); }, 0.5, 3.0},
      {"polygamma2", [](const EagerTensor& x) { return polygamma(2, x); }, 0.5, 3.0},
      {"mvlgamma", [](const EagerTensor& x) { return mvlgamma(x, 3); }, 1.5, 3.0},
      {"i0", [](const EagerTensor& x) { return i0(x); }, -2.0, 2.0},
      {"i0e", [](const EagerTensor& x) { return i0e(x); }, 0.2, 3.0},
      {"i0e_neg", [](const EagerTensor& x) { return i0e(x); }, -3.0, -0.2},
      {"i1", [](const EagerTensor& x) { return i1(x); }, -2.0, 2.0},
      {"i1e", [](const EagerTensor& x) { return i1e(x); }, 0.2, 3.0},
      {"i1e_neg", [](const EagerTensor& x) { return i1e(x); }, -3.0, -0.2},
      {"erfcx", [](const EagerTensor& x) { return erfcx(x); }, -1.5, 3.0},
      {"ndtr", [](const EagerTensor& x) { return ndtr(x); }, -2.0, 2.0},
      {"ndtri", [](const EagerTensor& x) { return ndtri(x); }, 0.1, 0.9},
      {"log_ndtr", [](const EagerTensor& x) { return log_ndtr(x); }, -6.0, 2.0},
      {"entr", [](const EagerTensor& x) { return entr(x); }, 0.2, 2.0},
      {"logit", [](const EagerTensor& x) { return logit(x); }, 0.1, 0.9},
      {"frac", [](const EagerTensor& x) { return frac(x); }, 1.1, 1.9},
      {"sinc", [](const EagerTensor& x) { return sinc(x); }, 0.2, 1.5, true},
      {"frexp", [](const EagerTensor& x) { return frexp(x).first; }, 1.1, 1.9},
  };
}

EagerTensor input(const EagerRuntimePtr& rt, double lo, double hi, DType dt, std::uint64_t seed,
                  Shape shape = {3, 2}) {
  Generator gen(seed);
  std::vector<double> v = rand(shape, f64, gen).to_vector<double>();
  for (auto& e : v) e = lo + (hi - lo) * e;
  Tensor re = Tensor::from_col_major(shape, v);
  if (!is_complex(dt)) return rt->tensor(re);
  std::vector<double> w = rand(shape, f64, gen).to_vector<double>();
  for (auto& e : w) e = 0.4 * e - 0.2;
  return rt->tensor(complex(re, Tensor::from_col_major(shape, w)));
}

GradCheckOptions options() {
  GradCheckOptions opt;
  opt.eps = 1e-6;
  opt.rtol = 1e-5;
  return opt;
}

// f' elementwise, as a differentiable eager tensor.
EagerTensor first(const Fn& f, const EagerTensor& x) {
  return grad([&](const EagerTensor& y) { return sum(f(y)); }, x);
}

double max_rel_diff(const Tensor& a, const Tensor& b) {
  const auto u = a.to_vector<double>(), w = b.to_vector<double>();
  double m = 0;
  for (std::size_t i = 0; i < u.size(); ++i)
    m = std::max(m, std::abs(u[i] - w[i]) / (1 + std::abs(w[i])));
  return m;
}

}  // namespace

TEST(SpecialAd, FirstOrderGradCheck) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{1});
  for (const auto& c : unary_cases()) {
    for (DType dt : {f64, c128}) {
      if (dt == c128 && !c.complex_ok) continue;
      std::vector<EagerTensor> in = {input(rt, c.lo, c.hi, dt, 7)};
      auto r =
          check_gradients([&](std::span<const EagerTensor> z) { return c.f(z[0]); }, in, options());
      EXPECT_TRUE(r.ok) << c.name << " (" << name(dt) << "): " << r.detail;
    }
  }
}

TEST(SpecialAd, BinaryGradCheck) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{1});
  using FnN = std::function<EagerTensor(std::span<const EagerTensor>)>;
  const std::vector<std::tuple<const char*, FnN, bool>> cases = {
      {"xlogy", [](auto z) { return xlogy(z[0], z[1]); }, false},
      {"xlog1py", [](auto z) { return xlog1py(z[0], z[1]); }, false},
      {"logaddexp", [](auto z) { return logaddexp(z[0], 2.0 * z[1]); }, true},
      {"logaddexp_broadcast", [](auto z) { return logaddexp(z[0], sum(z[1], {0}, true)); }, true},
  };
  for (const auto& [nm, f, complex_ok] : cases) {
    for (DType dt : {f64, c128}) {
      if (dt == c128 && !complex_ok) continue;
      std::vector<EagerTensor> in = {input(rt, 0.3, 1.2, dt, 3), input(rt, 0.3, 1.2, dt, 4)};
      auto r = check_gradients(f, in, options());
      EXPECT_TRUE(r.ok) << nm << " (" << name(dt) << "): " << r.detail;
    }
  }
}

TEST(SpecialAd, SecondDerivativesMatchFiniteDifferences) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{1});
  auto cases = unary_cases();
  cases.push_back({"logaddexp_a",
                   [](const EagerTensor& x) { return logaddexp(x, scalar_like(x, 0.7)); }, -1, 1});
  cases.push_back(
      {"xlogy_y", [](const EagerTensor& x) { return xlogy(scalar_like(x, 1.3), x); }, 0.3, 2});
  cases.push_back({"xlog1py_x", [](const EagerTensor& x) { return xlog1py(x, x); }, 0.3, 2});
  const double h = 1e-5;
  for (const auto& c : cases) {
    const EagerTensor x = input(rt, c.lo, c.hi, f64, 11, {4});
    // frac and frexp have f'' = 0: "no dependence".
    const auto g2 = try_grad([&](const EagerTensor& y) { return sum(first(c.f, y)); }, x);
    const Tensor second = g2 ? g2->copy_value() : zeros(x.shape(), f64);
    const Tensor up = first(c.f, x + h).copy_value(), down = first(c.f, x - h).copy_value();
    CpuBackend cpu;
    const Tensor fd = div(sub(up, down, cpu), Tensor::scalar(2 * h), cpu);
    EXPECT_LT(max_rel_diff(second, fd), 1e-5) << c.name;
  }
}

TEST(SpecialAd, ValuesAtSingularPoints) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{1});
  auto d = [&](const Fn& f, std::vector<double> x) {
    return first(f, rt->tensor(Tensor::from_col_major({static_cast<std::int64_t>(x.size())}, x)))
        .copy_value()
        .to_vector<double>();
  };
  // PyTorch: i1'(0) = i1e'(0) = 1/2, sinc'(0) = 0, logit' NaN outside [0, 1].
  EXPECT_EQ(d([](const EagerTensor& x) { return i1(x); }, {0.0})[0], 0.5);
  EXPECT_EQ(d([](const EagerTensor& x) { return i1e(x); }, {0.0})[0], 0.5);
  EXPECT_EQ(d([](const EagerTensor& x) { return sinc(x); }, {0.0})[0], 0.0);
  const auto lg = d([](const EagerTensor& x) { return logit(x); }, {-0.5, 0.5, 1.5});
  EXPECT_TRUE(std::isnan(lg[0]));
  EXPECT_DOUBLE_EQ(lg[1], 4.0);
  EXPECT_TRUE(std::isnan(lg[2]));
  // xlogy: d/dx is 0 where x == 0 (even at y == 0); d/dy = x / y.
  const EagerTensor zero = rt->tensor(Tensor::from_col_major({2}, std::vector<double>{0.0, 2.0}));
  const EagerTensor y = rt->tensor(Tensor::from_col_major({2}, std::vector<double>{0.0, 4.0}));
  const auto gx = grad([&](const EagerTensor& x) { return sum(xlogy(x, y)); }, zero)
                      .copy_value()
                      .to_vector<double>();
  EXPECT_EQ(gx[0], 0.0);
  EXPECT_DOUBLE_EQ(gx[1], std::log(4.0));
  // log_ndtr' stays finite and accurate far in the lower tail: ~ -x there.
  const auto ln = d([](const EagerTensor& x) { return log_ndtr(x); }, {-40.0, 40.0});
  EXPECT_NEAR(ln[0], 40.02496884720726, 1e-12);  // mpmath: npdf(-40) / ncdf(-40)
  EXPECT_EQ(ln[1], 0.0);
  // frexp_exponent is not differentiable; the mantissa has slope 2^-e.
  EXPECT_DOUBLE_EQ(d([](const EagerTensor& x) { return frexp(x).first; }, {5.0})[0], 0.125);
  EXPECT_FALSE(try_grad([](const EagerTensor& x) { return sum(convert(frexp(x).second, f64)); },
                        rt->tensor(Tensor::from_col_major({1}, std::vector<double>{3.0})))
                   .has_value());
  EXPECT_TF_ERROR(polygamma(-1, zero), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(mvlgamma(zero, 0), ErrorKind::InvalidArgument);
}

TEST(SpecialAd, MvlgammaMatchesPyTorch) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{1});
  const EagerTensor x = rt->tensor(Tensor::from_col_major({2}, std::vector<double>{2.5, 4.0}));
  // torch.special.multigammaln(x, 3) and (x, 1) in float64.
  const auto p3 = mvlgamma(x, 3).copy_value().to_vector<double>();
  EXPECT_NEAR(p3[0], 1.8809954616117743, 1e-13);
  const auto p1 = mvlgamma(x, 1).copy_value().to_vector<double>();
  EXPECT_NEAR(p1[1], 1.791759469228055, 1e-13);
}

TEST(SpecialAd, TracedJvpAndVjpMatchEager) {
  using namespace ttest;
  auto rt = cpu_runtime();
  auto ert = EagerRuntime::make_cpu(CpuBackendOptions{1});
  const Tensor xv = Tensor::from_col_major({4}, std::vector<double>{0.4, 0.9, 1.3, 2.2});
  const Tensor tv = Tensor::from_col_major({4}, std::vector<double>{0.3, -1.0, 0.5, 2.0});
  auto traced_f = [](const TracedTensor& x) {
    return lgamma(x) * erfcx(x) + polygamma(1, x) + logaddexp(x, sinc(x)) + xlogy(x, i0e(x));
  };
  auto eager_f = [](const EagerTensor& x) {
    return lgamma(x) * erfcx(x) + polygamma(1, x) + logaddexp(x, sinc(x)) + xlogy(x, i0e(x));
  };
  auto x = placeholder(f64, {4});
  Program p = compile({traced_f(x)}, {x});
  const auto jv = eval(*rt, jvp(p), {xv, tv});
  const auto vj = eval(*rt, vjp(p), {xv, tv});
  const EagerTensor xe = ert->tensor(xv), te = ert->tensor(tv);
  const Tensor ej = jvp_tangent(eager_f, xe, te).copy_value();
  const Tensor ev = vjp(eager_f, xe, te).cotangent->copy_value();
  EXPECT_LT(max_abs_diff(jv[1], ej), 1e-12);
  EXPECT_LT(max_abs_diff(vj[1], ev), 1e-12);
  EXPECT_LT(max_abs_diff(jv[0], eager_f(xe).copy_value()), 1e-12);
}

TEST(SpecialAd, TracedWrappersMatchTheDirectOps) {
  using namespace ttest;
  auto rt = cpu_runtime();
  CpuBackend cpu;
  const Tensor a = random({3, 2}, f64, 1), b = random({3, 2}, f64, 2);
  auto x = placeholder(f64, {3, 2}), y = placeholder(f64, {3, 2});
  const TracedTensor parts[2] = {x, y};
  const std::vector<TracedTensor> outs = {exp2(x),
                                          log2(abs(x)),
                                          log10(abs(x)),
                                          asinh(x),
                                          acosh(abs(x) + 1.0),
                                          atanh(tanh(x)),
                                          erfc(x),
                                          sgn(x),
                                          ceil(x),
                                          round(x),
                                          trunc(x),
                                          angle(x),
                                          convert(isnan(x), f64),
                                          convert(logical_not(gt(x, y)), f64),
                                          hypot(x, y),
                                          copysign(x, y),
                                          fmod(x, y),
                                          remainder(x, y),
                                          convert(logical_and(gt(x, y), gt(x, 0.0 * x)), f64),
                                          convert(logical_or(gt(x, y), gt(x, 0.0 * x)), f64),
                                          prod(x),
                                          max(x),
                                          min(x),
                                          convert(all(gt(x, y)), f64),
                                          convert(any(gt(x, y), {0}), f64),
                                          logsumexp(x),
                                          std_dev(x, {0}),
                                          cast(argmin(x, 1), f64),
                                          stack(parts, 1),
                                          frexp(x).first,
                                          convert(frexp(x).second, f64),
                                          mvlgamma(abs(x) + 2.0, 2)};
  Program p = compile(outs, parts);
  const auto got = eval(*rt, p, {a, b});
  const std::int64_t ax0[1] = {0}, ax01[2] = {0, 1};
  const std::vector<Tensor> want = {exp2(a, cpu),
                                    log2(abs(a, cpu), cpu),
                                    log10(abs(a, cpu), cpu),
                                    asinh(a, cpu),
                                    acosh(add(abs(a, cpu), Tensor::scalar(1.0), cpu), cpu),
                                    atanh(tanh(a, cpu), cpu),
                                    erfc(a, cpu),
                                    sgn(a, cpu),
                                    ceil(a, cpu),
                                    round(a, cpu),
                                    trunc(a, cpu),
                                    angle(a, cpu),
                                    convert(isnan(a, cpu), f64, cpu),
                                    convert(logical_not(gt(a, b, cpu), cpu), f64, cpu),
                                    hypot(a, b, cpu),
                                    copysign(a, b, cpu),
                                    fmod(a, b, cpu),
                                    remainder(a, b, cpu)};
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_LT(max_abs_diff(got[i], want[i]), 1e-14) << i;
  EXPECT_EQ(got[20].to_vector<double>()[0], prod(a, ax01, cpu).item().real());
  EXPECT_EQ(got[21].item().real(), max(a, ax01, cpu).item().real());
  EXPECT_EQ(got[22].item().real(), min(a, ax01, cpu).item().real());
  EXPECT_LT(max_abs_diff(got[26], std_dev(a, ax0, cpu)), 1e-14);
  EXPECT_EQ(got[28].shape(), Shape({3, 2, 2}));
  EXPECT_LT(max_abs_diff(got[29], frexp(a, cpu).first), 1e-15);
  // mvlgamma(z, 2) = lgamma(z) + lgamma(z - 1/2) + log(pi)/2.
  const Tensor z = add(abs(a, cpu), Tensor::scalar(2.0), cpu);
  const Tensor mv = add(add(lgamma(z, cpu), lgamma(sub(z, Tensor::scalar(0.5), cpu), cpu), cpu),
                        Tensor::scalar(0.5 * std::log(std::numbers::pi)), cpu);
  EXPECT_LT(max_abs_diff(got[31], mv), 1e-13);
  EXPECT_TF_ERROR(polygamma(-2, x), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(lgamma(placeholder(c128, {2})), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(mvlgamma(x, 0), ErrorKind::InvalidArgument);
}
