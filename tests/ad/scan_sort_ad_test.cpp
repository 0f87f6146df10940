// cumsum/cumprod, sort/argsort/topk and the layout composites (kron, trace,
// roll, flip) in the eager and traced tiers: values against the direct tier,
// gradients through the public checker (finite differences and jvp/vjp
// adjointness), cumprod's exact derivative with zeros, second order, traced
// values and vjp equal to eager, and the error kinds of both tiers.

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tenferro/ad/composite.hpp"
#include "tenferro/ad/grad_check.hpp"
#include "tenferro/ad/program.hpp"
#include "tenferro/ad/transforms.hpp"
#include "test_util.hpp"

using namespace tenferro;

namespace {

const EagerRuntimePtr& runtime() {
  static const EagerRuntimePtr rt = EagerRuntime::make_cpu(CpuBackendOptions{1});
  return rt;
}
Backend& backend() {
  return runtime()->backend();
}

std::vector<double> host(const Tensor& t) {
  return cast(t, DType::F64, backend()).to_vector<double>();
}
std::vector<double> host(const EagerTensor& t) {
  return host(t.value());
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want, double tol,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol * (1 + std::abs(want[i]))) << what << " element " << i;
}

void expect_gradients_ok(const EagerFnN& f, const std::vector<Tensor>& inputs,
                         const std::string& what) {
  std::vector<EagerTensor> xs;
  for (const Tensor& t : inputs) xs.push_back(runtime()->variable(t));
  GradCheckOptions opt;
  opt.rtol = 1e-5;
  const GradCheckResult r = check_gradients(f, xs, opt);
  EXPECT_TRUE(r.ok) << what << ": " << r.detail;
}

// The function through the traced tier: values and vjp equal the eager tier's.
template <class F>
void expect_traced_matches_eager(F f, const std::vector<Tensor>& inputs, const std::string& what) {
  std::vector<TracedTensor> ph;
  std::vector<EagerTensor> ev;
  for (const Tensor& t : inputs) {
    ph.push_back(placeholder(t.dtype(), to_sym_shape(t.shape())));
    ev.push_back(runtime()->tensor(t));
  }
  const TracedTensor y = f(std::span<const TracedTensor>(ph));
  const Program p =
      compile(std::span<const TracedTensor>(&y, 1), std::span<const TracedTensor>(ph));
  Runtime& rt = *runtime()->runtime();
  const std::vector<Tensor> out = run_compiled(rt, p, std::span<const Tensor>(inputs));
  const EagerTensor eager_out = f(std::span<const EagerTensor>(ev));
  ASSERT_EQ(out[0].dtype(), eager_out.dtype()) << what;
  ASSERT_EQ(out[0].shape(), eager_out.shape()) << what;
  expect_near(host(out[0]), host(eager_out), 1e-13, what + " value");
  if (!is_inexact(out[0].dtype())) return;
  Generator gen(17);
  const Tensor ct = randn(eager_out.shape(), eager_out.dtype(), gen);
  std::vector<Tensor> vin = inputs;
  vin.push_back(ct);
  const std::vector<Tensor> vj = run_compiled(rt, vjp(p), std::span<const Tensor>(vin));
  const EagerTensor cte = runtime()->tensor(ct);
  auto loss = [&](std::span<const EagerTensor> z) { return real(sum(f(z) * conj(cte))); };
  const auto eg = grad_many(loss, ev);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    ASSERT_TRUE(eg[i].has_value()) << what << " input " << i;
    expect_near(host(real(runtime()->tensor(vj[1 + i]))), host(real(*eg[i])), 1e-12, what + " vjp");
    expect_near(host(imag(runtime()->tensor(vj[1 + i]))), host(imag(*eg[i])), 1e-12, what + " vjp");
  }
}

Tensor with_zeros(Tensor x, std::initializer_list<std::int64_t> at) {
  Tensor c = x.clone();
  for (std::int64_t i : at) {
    if (c.dtype() == DType::C128)
      c.mutable_data<c128_t>()[i] = 0;
    else
      c.mutable_data<double>()[i] = 0;
  }
  return c;
}

}  // namespace

TEST(ScanAd, EagerValuesMatchDirect) {
  Generator gen(1);
  const Tensor x = randn({4, 3}, DType::F64, gen);
  const EagerTensor e = runtime()->tensor(x);
  for (std::int64_t axis : {0, 1, -1}) {
    EXPECT_EQ(host(cumsum(e, axis)), host(cumsum(x, axis, backend())));
    EXPECT_EQ(host(cumprod(e, axis)), host(cumprod(x, axis, backend())));
    EXPECT_EQ(host(argsort(e, axis, true)), host(argsort(x, axis, backend(), true)));
    EXPECT_EQ(host(sort(e, axis).first), host(sort(x, axis, backend()).first));
    EXPECT_EQ(host(topk(e, 2, axis).first), host(topk(x, 2, axis, backend()).first));
    EXPECT_EQ(host(topk(e, 2, axis, false).second),
              host(topk(x, 2, axis, backend(), false).second));
  }
  const Tensor b = randn({2, 2}, DType::F64, gen);
  EXPECT_EQ(host(kron(e, runtime()->tensor(b))), host(kron(x, b, backend())));
  EXPECT_EQ(host(trace(e)), host(trace(x, backend())));
  EXPECT_EQ(host(roll(e, {1, -2}, {0, 1})), host(roll(x, std::vector<std::int64_t>{1, -2},
                                                      std::vector<std::int64_t>{0, 1}, backend())));
  EXPECT_EQ(host(roll(e, 5)), host(roll(x, 5, backend())));
  EXPECT_EQ(host(flip(e, {1})), host(reverse(x, std::vector<std::int64_t>{1}, backend())));
  EXPECT_EQ(cumsum(runtime()->tensor(cast(x, DType::I32, backend())), 0).dtype(), DType::I64);
}

TEST(ScanAd, GradientsF64AndC128) {
  Generator gen(2);
  int checked = 0;
  for (DType dt : {DType::F64, DType::C128}) {
    const Tensor x = randn({4, 3}, dt, gen);
    for (std::int64_t axis : {0, 1}) {
      const std::string what = std::string(name(dt)) + " axis " + std::to_string(axis);
      expect_gradients_ok([=](auto z) { return cumsum(z[0], axis); }, {x}, "cumsum " + what);
      expect_gradients_ok([=](auto z) { return cumprod(z[0], axis); }, {x}, "cumprod " + what);
      // One zero and two zeros in a lane (cumprod is a polynomial: finite
      // differences are exact references there too).
      expect_gradients_ok([=](auto z) { return cumprod(z[0], axis); }, {with_zeros(x, {1})},
                          "cumprod one zero " + what);
      expect_gradients_ok([=](auto z) { return cumprod(z[0], axis); },
                          {with_zeros(x, {0, 4, 5, 8})}, "cumprod zeros " + what);
      expect_gradients_ok([=](auto z) { return roll(z[0], {2}, {axis}); }, {x}, "roll " + what);
      expect_gradients_ok([=](auto z) { return flip(z[0], {axis}); }, {x}, "flip " + what);
      checked += 6;
    }
    const Tensor b = randn({2, 3}, dt, gen);
    expect_gradients_ok([](auto z) { return kron(z[0], z[1]); }, {x, b}, "kron");
    expect_gradients_ok([](auto z) { return trace(z[0]); }, {x}, "trace");
    expect_gradients_ok([](auto z) { return trace(z[0], -1); }, {x}, "trace offset");
    expect_gradients_ok([](auto z) { return roll(z[0], -3); }, {x}, "roll flat");
    // The existing triangle and where ops, checked here in the same way.
    expect_gradients_ok([](auto z) { return tril(z[0], -1); }, {x}, "tril");
    expect_gradients_ok([](auto z) { return triu(z[0], 1); }, {x}, "triu");
    expect_gradients_ok([](auto z) { return where(gt(real(z[0]), real(z[1])), z[0], z[1]); },
                        {x, randn({4, 3}, dt, gen)}, "where");
    checked += 7;
  }
  // Sort values (real only): distinct values, so the order is locally constant.
  const Tensor r = randn({5, 3}, DType::F64, gen);
  for (std::int64_t axis : {0, 1}) {
    expect_gradients_ok([=](auto z) { return sort(z[0], axis).first; }, {r}, "sort");
    expect_gradients_ok([=](auto z) { return sort(z[0], axis, true).first; }, {r}, "sort desc");
    expect_gradients_ok([=](auto z) { return topk(z[0], 2, axis).first; }, {r}, "topk");
    checked += 3;
  }
  EXPECT_EQ(checked, 2 * (2 * 6 + 7) + 6);
}

TEST(ScanAd, CumprodExactWithZerosAndSecondOrder) {
  // d/dx sum(cumprod(x)) at [2, 0, 3]: [1 + x1 + x1 x2, x0 + x0 x2, x0 x1] = [1, 8, 0].
  const EagerTensor x =
      runtime()->tensor(Tensor::from_col_major<double>({3}, std::vector<double>{2, 0, 3}));
  const EagerTensor g = grad([](const EagerTensor& z) { return sum(cumprod(z, 0)); }, x);
  EXPECT_EQ(host(g), (std::vector<double>{1, 8, 0}));
  // Two zeros: [0, 2, 0, 5] -> [1 + x1 (= 3), 0, x0 x1 (= 0), 0]: only x0's first entry survives.
  const EagerTensor x2 =
      runtime()->tensor(Tensor::from_col_major<double>({4}, std::vector<double>{0, 2, 0, 5}));
  const EagerTensor g2 = grad([](const EagerTensor& z) { return sum(cumprod(z, 0)); }, x2);
  EXPECT_EQ(host(g2), (std::vector<double>{3, 0, 0, 0}));
  // Sort routes the cotangent back through the permutation.
  const EagerTensor s =
      runtime()->tensor(Tensor::from_col_major<double>({3}, std::vector<double>{3, 1, 2}));
  const EagerTensor w =
      runtime()->tensor(Tensor::from_col_major<double>({3}, std::vector<double>{1, 2, 3}));
  const EagerTensor gs = grad([&](const EagerTensor& z) { return sum(sort(z, 0).first * w); }, s);
  EXPECT_EQ(host(gs), (std::vector<double>{3, 1, 2}));
  // Second order: the gradient of cumprod and cumsum is itself differentiable.
  Generator gen(4);
  const Tensor r = randn({4, 2}, DType::F64, gen);
  expect_gradients_ok(
      [](auto z) {
        return grad([](const EagerTensor& u) { return sum(cumprod(u, 0) * u); }, z[0]);
      },
      {r}, "cumprod hvp");
  expect_gradients_ok(
      [](auto z) { return grad([](const EagerTensor& u) { return sum(cumsum(u * u, 1)); }, z[0]); },
      {r}, "cumsum hvp");
}

TEST(ScanAd, TracedMatchesEager) {
  Generator gen(6);
  const Tensor x = randn({4, 3}, DType::F64, gen);
  const Tensor z = with_zeros(randn({4, 3}, DType::C128, gen), {1, 6, 7});
  const Tensor b = randn({2, 2}, DType::F64, gen);
  expect_traced_matches_eager([](auto v) { return cumsum(v[0], 1); }, {x}, "cumsum");
  expect_traced_matches_eager([](auto v) { return cumsum(v[0], -1); }, {z}, "cumsum c128");
  expect_traced_matches_eager([](auto v) { return cumprod(v[0], 0); }, {x}, "cumprod");
  expect_traced_matches_eager([](auto v) { return cumprod(v[0], 1); }, {z}, "cumprod c128 zeros");
  expect_traced_matches_eager([](auto v) { return sort(v[0], 0, true).first; }, {x}, "sort");
  expect_traced_matches_eager([](auto v) { return argsort(v[0], 1); }, {x}, "argsort");
  expect_traced_matches_eager([](auto v) { return topk(v[0], 2, 0).first; }, {x}, "topk");
  expect_traced_matches_eager([](auto v) { return topk(v[0], 1, 1, false).second; }, {x},
                              "topk idx");
  expect_traced_matches_eager([](auto v) { return kron(v[0], v[1]); }, {x, b}, "kron");
  expect_traced_matches_eager([](auto v) { return trace(v[0], 1); }, {x}, "trace");
  expect_traced_matches_eager([](auto v) { return roll(v[0], {1, -1}, {0, 1}); }, {x}, "roll");
  expect_traced_matches_eager([](auto v) { return roll(v[0], 7); }, {z}, "roll flat");
  expect_traced_matches_eager([](auto v) { return flip(v[0], {0, 1}); }, {z}, "flip");
  expect_traced_matches_eager([](auto v) { return tril(v[0], 1) + triu(v[0], -1); }, {z}, "tri");
  expect_traced_matches_eager([](auto v) { return where(gt(v[0], v[1]), v[0] * v[1], v[1]); },
                              {x, randn({4, 3}, DType::F64, gen)}, "where");
}

TEST(ScanAd, ErrorsInBothTiers) {
  const EagerTensor e = runtime()->tensor(zeros({4, 3}, DType::F64));
  const EagerTensor c = runtime()->tensor(zeros({4}, DType::C128));
  const TracedTensor t = placeholder(DType::F64, {4, 3});
  EXPECT_TF_ERROR(cumsum(e, 2), ErrorKind::AxisOutOfBounds);
  EXPECT_TF_ERROR(cumprod(t, -3), ErrorKind::AxisOutOfBounds);
  EXPECT_TF_ERROR(argsort(c, 0), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(sort(placeholder(DType::C64, {2}), 0), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(topk(e, 5, 0), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(topk(t, 5, 0), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(topk(t, -1, 0), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(trace(placeholder(DType::F64, {4})), ErrorKind::RankMismatch);
  EXPECT_TF_ERROR(roll(e, {1, 2}, {0}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(roll(placeholder(DType::F64, {SymDim::var("n")}), {1}, {0}),
                  ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(kron(EagerTensor(), e), ErrorKind::InvalidArgument);
  // A symbolic extent: topk's k is checked when the size binds.
  const TracedTensor s = placeholder(DType::F64, {SymDim::var("n")});
  const TracedTensor y = topk(s, 3, 0).first;
  const Program p =
      compile(std::span<const TracedTensor>(&y, 1), std::span<const TracedTensor>(&s, 1));
  const Tensor two = zeros({2}, DType::F64);
  EXPECT_THROW(run_compiled(*runtime()->runtime(), p, std::span<const Tensor>(&two, 1)), Error);
  const Tensor five = zeros({5}, DType::F64);
  EXPECT_EQ(run_compiled(*runtime()->runtime(), p, std::span<const Tensor>(&five, 1))[0].shape(),
            (Shape{3}));
}
