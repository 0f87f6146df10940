// einsum's derivatives (from the composed ops): gradient checks (jvp and vjp
// against finite differences and each other) for real and complex operands,
// traced == eager for values and gradients, and a Hessian-vector product.

#include "einsum_test_util.hpp"

using namespace etest;

namespace {

void expect_gradients_ok(const std::string& eq, const std::vector<Shape>& shapes, DType dt) {
  std::vector<EagerTensor> in;
  for (std::size_t k = 0; k < shapes.size(); ++k)
    in.push_back(runtime()->tensor(make(shapes[k], dt, k + 3)));
  GradCheckOptions opt;
  opt.rtol = 1e-5;
  const auto r = check_gradients(
      [eq](std::span<const EagerTensor> v) {
        return einsum(eq, std::vector<EagerTensor>(v.begin(), v.end()));
      },
      in, opt);
  EXPECT_TRUE(r.ok) << eq << " " << name(dt) << ": " << r.detail;
}

// Value and gradient of sum(re(y)) agree between the traced and eager tiers.
void expect_traced_matches_eager(const std::string& eq, const std::vector<Tensor>& inputs) {
  std::vector<TracedTensor> ph;
  std::vector<EagerTensor> ev;
  for (const Tensor& t : inputs) {
    ph.push_back(placeholder(t.dtype(), to_sym_shape(t.shape().span())));
    ev.push_back(runtime()->tensor(t));
  }
  const TracedTensor y = einsum(eq, ph);
  const TracedTensor loss = is_complex(y.dtype()) ? sum(real(y)) : sum(y);
  const auto tg = grad_many(loss, ph);
  std::vector<TracedTensor> outs{y};
  for (const auto& g : tg) outs.push_back(*g);
  const Program p = compile(outs, std::span<const TracedTensor>(ph));
  const auto traced = run_compiled(*runtime()->runtime(), p, std::span<const Tensor>(inputs));
  expect_close(host(traced[0]), host(einsum(eq, ev)), 1e-12, eq + " value");
  const auto eg = grad_many(
      [&](std::span<const EagerTensor> z) {
        const EagerTensor v = einsum(eq, std::vector<EagerTensor>(z.begin(), z.end()));
        return is_complex(v.dtype()) ? sum(real(v)) : sum(v);
      },
      ev);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    ASSERT_TRUE(eg[i].has_value());
    expect_close(host(traced[i + 1]), host(*eg[i]), 1e-12, eq + " gradient");
  }
}

const std::vector<std::pair<std::string, std::vector<Shape>>>& equations() {
  static const std::vector<std::pair<std::string, std::vector<Shape>>> e = {
      {"ij,jk->ik", {{2, 3}, {3, 2}}},
      {"ijb,jkb->ikb", {{2, 3, 2}, {3, 2, 2}}},
      {"ii->", {{3, 3}}},
      {"iij->ji", {{2, 2, 3}}},
      {"ij,jk,kl->il", {{2, 3}, {3, 2}, {2, 2}}},
      {"bn,anm,bm->ba", {{2, 3}, {2, 3, 2}, {2, 2}}},
      {"i->ii", {{3}}},
      {"ij...,jk...->ik...", {{2, 2, 2}, {2, 3, 2}}},
      {"ij,jk->ik", {{2, 1}, {3, 2}}},
  };
  return e;
}

}  // namespace

TEST(EinsumAd, GradientChecks) {
  int checked = 0;
  for (const auto& [eq, shapes] : equations()) {
    for (DType dt : {f64, c128}) {
      expect_gradients_ok(eq, shapes, dt);
      ++checked;
    }
  }
  EXPECT_EQ(checked, static_cast<int>(2 * equations().size()));
}

TEST(EinsumAd, TracedMatchesEager) {
  for (const auto& [eq, shapes] : equations()) {
    for (DType dt : {f64, c128}) {
      std::vector<Tensor> in;
      for (std::size_t k = 0; k < shapes.size(); ++k) in.push_back(make(shapes[k], dt, k + 5));
      expect_traced_matches_eager(eq, in);
    }
  }
}

TEST(EinsumAd, SecondOrderThroughAQuadraticForm) {
  // f(x) = x^T A x: the gradient is (A + A^T) x, the Hessian A + A^T.
  const Tensor a = make({3, 3}, f64, 1), x = make({3}, f64, 2), v = make({3}, f64, 3);
  const EagerTensor ea = runtime()->tensor(a), ev = runtime()->tensor(v);
  EagerFn f = [&](const EagerTensor& z) { return einsum("i,ij,j->", {z, ea, z}); };
  const auto av = a.to_vector<double>(), xv = x.to_vector<double>(), vv = v.to_vector<double>();
  std::vector<cd> want_g(3), want_h(3);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      const double s = av[i + 3 * j] + av[j + 3 * i];
      want_g[i] += s * xv[j];
      want_h[i] += s * vv[j];
    }
  }
  expect_close(host(grad(f, runtime()->tensor(x))), want_g, 1e-12, "gradient");
  // Hessian-vector product: the gradient of <grad f(x), v> (grad is differentiable).
  EagerFn gv = [&](const EagerTensor& z) { return sum(mul(grad(f, z), ev)); };
  expect_close(host(grad(gv, runtime()->tensor(x))), want_h, 1e-12, "hvp");
  // The same through the traced tier's hvp transform.
  const TracedTensor tx = placeholder(f64, {3}), tv = placeholder(f64, {3});
  const TracedTensor ta = placeholder(f64, {3, 3});
  const TracedTensor hv = hvp(einsum("i,ij,j->", {tx, ta, tx}), tx, tv);
  const Program p = compile({hv}, {tx, ta, tv});
  const auto out = run_compiled(*runtime()->runtime(), p, {x, a, v});
  expect_close(host(out[0]), want_h, 1e-12, "traced hvp");
}
