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

// ---- symbolic extents: one node that plans when the dimensions bind ------------------

namespace {

// `shape` with every extent other than 1 a named size ("d2", "d3", ...):
// labels of equal extent share a name, so the program binds them together.
SymShape symbolic(const Shape& shape) {
  SymShape s;
  for (const std::int64_t e : shape.span()) {
    std::string size_name = "d";
    size_name.append(std::to_string(e));
    s.push_back(e == 1 ? SymDim(1) : SymDim::var(size_name));
  }
  return s;
}

std::uint64_t prepares() {
  return runtime()->runtime()->cache_stats().plans.prepares;
}

}  // namespace

TEST(EinsumSymbolic, ValuesGradientsAndTangentsMatchEager) {
  int checked = 0;
  for (const auto& [eq, shapes] : equations()) {
    for (DType dt : {f64, c128}) {
      std::vector<Tensor> in;
      std::vector<TracedTensor> ph, tangents;
      std::vector<EagerTensor> ev;
      for (std::size_t k = 0; k < shapes.size(); ++k) {
        in.push_back(make(shapes[k], dt, k + 11));
        ph.push_back(placeholder(dt, symbolic(shapes[k])));
        ev.push_back(runtime()->tensor(in.back()));
      }
      for (std::size_t k = 0; k < shapes.size(); ++k) {
        in.push_back(make(shapes[k], dt, k + 31));  // the tangents
        tangents.push_back(placeholder(dt, symbolic(shapes[k])));
      }
      const TracedTensor y = einsum(eq, ph);
      const TracedTensor loss = is_complex(dt) ? sum(real(y)) : sum(y);
      const auto g = grad_many(loss, ph);
      const auto t = jvp_many({y}, ph, tangents);
      std::vector<TracedTensor> outs{y, *t[0]};
      for (const auto& gi : g) outs.push_back(*gi);
      std::vector<TracedTensor> all = ph;
      all.insert(all.end(), tangents.begin(), tangents.end());
      const Program p = compile(outs, std::span<const TracedTensor>(all));
      const auto got = run_compiled(*runtime()->runtime(), p, std::span<const Tensor>(in));
      expect_close(host(got[0]), host(einsum(eq, ev)), 1e-12, eq + " value");
      // The tangent: the sum over k of einsum with operand k replaced by its tangent.
      std::vector<cd> want_t(host(got[0]).size());
      for (std::size_t k = 0; k < shapes.size(); ++k) {
        std::vector<EagerTensor> sub = ev;
        sub[k] = runtime()->tensor(in[shapes.size() + k]);
        const auto part = host(einsum(eq, sub));
        for (std::size_t i = 0; i < part.size(); ++i) want_t[i] += part[i];
      }
      expect_close(host(got[1]), want_t, 1e-12, eq + " tangent");
      const auto eg = grad_many(
          [&](std::span<const EagerTensor> z) {
            const EagerTensor v = einsum(eq, std::vector<EagerTensor>(z.begin(), z.end()));
            return is_complex(v.dtype()) ? sum(real(v)) : sum(v);
          },
          ev);
      for (std::size_t k = 0; k < shapes.size(); ++k) {
        ASSERT_TRUE(eg[k].has_value());
        expect_close(host(got[2 + k]), host(*eg[k]), 1e-12, eq + " gradient");
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, static_cast<int>(2 * equations().size()));
}

TEST(EinsumSymbolic, PreparedOncePerShapeAndPlannedForTheBoundExtents) {
  // (a b) c costs n^2 (m + k) and a (b c) costs m k (n + n): the order
  // depends on the bound extents, so each shape gets its own plan.
  const SymDim n = SymDim::var("n"), m = SymDim::var("m");
  const TracedTensor a = placeholder(f64, {n, m}), b = placeholder(f64, {m, n}),
                     c = placeholder(f64, {n, 2});
  const Program p = compile({einsum("ij,jk,kl->il", {a, b, c})}, {a, b, c});
  int checked = 0;
  for (const auto& [nv, mv] :
       std::vector<std::pair<std::int64_t, std::int64_t>>{{2, 40}, {40, 2}}) {
    const std::vector<Tensor> ops = {make({nv, mv}, f64, 1), make({mv, nv}, f64, 2),
                                     make({nv, 2}, f64, 3)};
    const auto want = naive({letters("ij"), letters("jk"), letters("kl")}, ops, letters("il"));
    const std::uint64_t before = prepares();
    const auto first = run_compiled(*runtime()->runtime(), p, std::span<const Tensor>(ops));
    EXPECT_EQ(prepares(), before + 1) << "n = " << nv;  // planned when the extents bound
    const auto again = run_compiled(*runtime()->runtime(), p, std::span<const Tensor>(ops));
    EXPECT_EQ(prepares(), before + 1) << "n = " << nv;  // and not again
    expect_close(host(first[0]), want, 1e-12, "first run");
    expect_close(host(again[0]), want, 1e-12, "second run");
    // The bound plan is the eager one for these shapes: the same order.
    const EinsumPlan bound = einsum_path("ij,jk,kl->il", {{nv, mv}, {mv, nv}, {nv, 2}});
    EXPECT_EQ(bound.path, (nv < mv ? EinsumPath{{0, 1}, {0, 1}} : EinsumPath{{1, 2}, {0, 1}}));
    ++checked;
  }
  EXPECT_EQ(checked, 2);
}

TEST(EinsumSymbolic, HessianVectorProductsInBothModes) {
  const Tensor a = make({3, 3}, f64, 1), x = make({3}, f64, 2), v = make({3}, f64, 3);
  const auto av = a.to_vector<double>(), vv = v.to_vector<double>();
  std::vector<cd> want(3);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) want[i] += (av[i + 3 * j] + av[j + 3 * i]) * vv[j];
  }
  const SymDim n = SymDim::var("n");
  int checked = 0;
  for (HvpMode mode : {HvpMode::ForwardOverReverse, HvpMode::ReverseOverReverse}) {
    const TracedTensor tx = placeholder(f64, {n}), tv = placeholder(f64, {n});
    const TracedTensor ta = placeholder(f64, {n, n});
    const TracedTensor hv = hvp(einsum("i,ij,j->", {tx, ta, tx}), tx, tv, mode);
    const Program p = compile({hv}, {tx, ta, tv});
    const auto out = run_compiled(*runtime()->runtime(), p, {x, a, v});
    expect_close(host(out[0]), want, 1e-12, "hvp");
    ++checked;
  }
  EXPECT_EQ(checked, 2);
}

TEST(EinsumSymbolic, MemoryLimitSlicesWhenTheExtentsBind) {
  // The trace of a product of four: every pairwise result is n x n; at
  // n = 6 a limit of 18 elements slices a label.
  const SymDim n = SymDim::var("n");
  std::vector<TracedTensor> ph;
  for (int k = 0; k < 4; ++k) ph.push_back(placeholder(f64, {n, n}));
  EinsumOptions o;
  o.memory_limit = 8.0 * 18;
  const Program p = compile({einsum("ij,jk,kl,li->", ph, o)}, ph);
  std::vector<Tensor> ops;
  for (int k = 0; k < 4; ++k) ops.push_back(make({6, 6}, f64, k + 1));
  EXPECT_GT(einsum_path("ij,jk,kl,li->", {{6, 6}, {6, 6}, {6, 6}, {6, 6}}, o).slices, 1.0);
  const auto got = run_compiled(*runtime()->runtime(), p, std::span<const Tensor>(ops));
  expect_close(host(got[0]),
               naive({letters("ij"), letters("jk"), letters("kl"), letters("li")}, ops, {}), 1e-12,
               "sliced");
  // The gradient's pullback runs the same slices: each slice's operand
  // cotangents land in their slice of the whole. Equal to the unsliced eager
  // gradient.
  const auto g = grad_many(einsum("ij,jk,kl,li->", ph, o), ph);
  const Program pg = compile({*g[0], *g[1], *g[2], *g[3]}, ph);
  EXPECT_EQ(pg.count_ops("tenferro.einsum_pullback.v1"), 1u);
  const auto sliced = run_compiled(*runtime()->runtime(), pg, std::span<const Tensor>(ops));
  std::vector<EagerTensor> ev;
  for (const Tensor& t : ops) ev.push_back(runtime()->tensor(t));
  const auto eg = grad_many(
      [&](std::span<const EagerTensor> z) {
        return einsum("ij,jk,kl,li->", std::vector<EagerTensor>(z.begin(), z.end()));
      },
      ev);
  for (std::size_t k = 0; k < 4; ++k) {
    ASSERT_TRUE(eg[k].has_value());
    expect_close(host(sliced[k]), host(*eg[k]), 1e-12, "sliced gradient");
  }
}

TEST(EinsumSymbolic, ExtentsThatDisagreeWhenBoundAreShapeMismatch) {
  const TracedTensor a = placeholder(f64, {SymDim::var("n"), SymDim::var("m")});
  const TracedTensor b = placeholder(f64, {SymDim::var("k"), 3});
  const Program p = compile({einsum("ij,jk->ik", {a, b})}, {a, b});
  const std::vector<Tensor> good = {make({2, 4}, f64, 1), make({4, 3}, f64, 2)};
  EXPECT_EQ(run_compiled(*runtime()->runtime(), p, std::span<const Tensor>(good))[0].numel(), 6);
  const std::vector<Tensor> bad = {make({2, 4}, f64, 1), make({5, 3}, f64, 2)};
  EXPECT_TF_ERROR(run_compiled(*runtime()->runtime(), p, std::span<const Tensor>(bad)),
                  ErrorKind::ShapeMismatch);
  // Options are checked when the node is traced, not at the first run.
  EinsumOptions o;
  o.path = EinsumPath{{0, 5}};
  EXPECT_TF_ERROR(einsum("ij,jk->ik", {a, b}, o), ErrorKind::InvalidArgument);
}

// Issue 52 item 8: the gradient's einsum inherits the forward's memory limit,
// which its own result may exceed ([4, 5] here, over a limit of 8 elements
// that the scalar forward meets): every tier gives the gradient.
TEST(EinsumSymbolic, GradientUnderAMemoryLimitItsResultExceeds) {
  const std::string eq = "ij,jk->";
  const Tensor a = make({4, 5}, f64, 3), b = make({5, 3}, f64, 4);
  EinsumOptions o;
  o.memory_limit = 8.0 * 8.0;  // 8 f64 elements
  const auto eg = grad_many(
      [&](std::span<const EagerTensor> z) {
        return einsum(eq, std::vector<EagerTensor>(z.begin(), z.end()), o);
      },
      std::vector<EagerTensor>{runtime()->tensor(a), runtime()->tensor(b)});
  ASSERT_TRUE(eg[0].has_value() && eg[1].has_value());
  const auto plain = grad_many(
      [&](std::span<const EagerTensor> z) {
        return einsum(eq, std::vector<EagerTensor>(z.begin(), z.end()));
      },
      std::vector<EagerTensor>{runtime()->tensor(a), runtime()->tensor(b)});
  expect_close(host(*eg[0]), host(*plain[0]), 1e-12, "eager gradient a");
  int tiers = 0;
  for (const bool sym : {false, true}) {
    const TracedTensor pa =
        placeholder(f64, sym ? symbolic(a.shape()) : to_sym_shape(a.shape().span()));
    const TracedTensor pb =
        placeholder(f64, sym ? symbolic(b.shape()) : to_sym_shape(b.shape().span()));
    const TracedTensor y = einsum(eq, {pa, pb}, o);
    const auto g = grad_many(y, {pa, pb});
    const Program p = compile({*g[0], *g[1]}, {pa, pb});
    const auto got = run_compiled(*runtime()->runtime(), p, {a, b});
    expect_close(host(got[0]), host(*plain[0]), 1e-12, sym ? "symbolic a" : "constant a");
    expect_close(host(got[1]), host(*plain[1]), 1e-12, sym ? "symbolic b" : "constant b");
    ++tiers;
  }
  EXPECT_EQ(tiers, 2);
  // The forward alone still refuses a limit its own result exceeds.
  EXPECT_TF_ERROR(einsum("ij,jk->ik", {runtime()->tensor(a), runtime()->tensor(b)}, o),
                  ErrorKind::InvalidArgument);
}

// Issue 51: one prepared program with symbolic bond dimensions plans its
// einsum for each binding, and its gradient is one pullback node that runs
// along the same planned tree: values and gradients equal the eager ones at
// two bindings whose best paths differ.
TEST(EinsumSymbolic, OnePreparedProgramPlansEachBindingAndPullsBackAlongThatPath) {
  // (Letters no other test of this runtime uses: its plans are new here.)
  const std::string eq = "ab,bc,cd->ad";
  const SymDim n = SymDim::var("n"), m = SymDim::var("m");
  const std::vector<std::pair<std::int64_t, std::int64_t>> bindings = {{2, 40}, {40, 2}};
  // (a b) c for n < m, a (b c) for n > m: the two bindings plan differently.
  const EinsumPlan small_n = einsum_path(eq, {{2, 40}, {40, 2}, {2, 2}});
  const EinsumPlan large_n = einsum_path(eq, {{40, 2}, {2, 40}, {40, 2}});
  ASSERT_EQ(small_n.path, (EinsumPath{{0, 1}, {0, 1}}));
  ASSERT_EQ(large_n.path, (EinsumPath{{1, 2}, {0, 1}}));
  int checked = 0;
  for (DType dt : {f64, c128}) {
    const TracedTensor a = placeholder(dt, {n, m}), b = placeholder(dt, {m, n}),
                       c = placeholder(dt, {n, 2}), w = placeholder(dt, {n, 2});
    const TracedTensor y = einsum(eq, {a, b, c});
    const TracedTensor yw = y * w;
    const auto g = grad_many(is_complex(dt) ? sum(real(yw)) : sum(yw), {a, b, c});
    const Program p = compile({y, *g[0], *g[1], *g[2]}, {a, b, c, w});
    EXPECT_EQ(p.count_ops("tenferro.einsum.v1"), 1u);
    EXPECT_EQ(p.count_ops("tenferro.einsum_pullback.v1"), 1u);  // one reverse pass
    const auto first = [&](std::int64_t nv, std::int64_t mv) {
      return std::vector<Tensor>{make({nv, mv}, dt, 1), make({mv, nv}, dt, 2), make({nv, 2}, dt, 3),
                                 make({nv, 2}, dt, 4)};
    };
    const std::vector<Tensor> sig = first(bindings[0].first, bindings[0].second);
    const PreparedProgram prepared =
        prepare(*runtime()->runtime(), p, InputSignature::of(std::span<const Tensor>(sig)));
    for (const auto& [nv, mv] : bindings) {
      const std::vector<Tensor> in = first(nv, mv);
      const std::uint64_t before = prepares();
      const auto got = run(*runtime()->runtime(), prepared, in);
      // The forward node and the pullback node, each planned for this binding.
      EXPECT_EQ(prepares(), before + 2) << "n = " << nv;
      const auto again = run(*runtime()->runtime(), prepared, in);
      EXPECT_EQ(prepares(), before + 2) << "n = " << nv;  // cached per bound shape
      std::vector<EagerTensor> ev;
      for (std::size_t k = 0; k < 3; ++k) ev.push_back(runtime()->tensor(in[k]));
      const EagerTensor ew = runtime()->tensor(in[3]);
      const auto eg = grad_many(
          [&](std::span<const EagerTensor> z) {
            const EagerTensor v = einsum(eq, std::vector<EagerTensor>(z.begin(), z.end())) * ew;
            return is_complex(dt) ? sum(real(v)) : sum(v);
          },
          ev);
      const std::string at = std::string(name(dt)) + " n = " + std::to_string(nv);
      expect_close(host(got[0]), host(einsum(eq, ev)), 1e-12, at + " value");
      expect_close(host(again[0]), host(got[0]), 0, at + " second run");
      for (std::size_t k = 0; k < 3; ++k) {
        ASSERT_TRUE(eg[k].has_value());
        expect_close(host(got[1 + k]), host(*eg[k]), 1e-12, at + " gradient");
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 4);
}
