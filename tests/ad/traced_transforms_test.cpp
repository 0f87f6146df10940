// Traced transforms against finite differences: grad, vjp, jvp and HVP (both
// orders) for core ops in f64 and c128, extension families with a jvp-only
// rule (reverse by transposition), "no dependence", missing rules, grad of
// grad, named sizes, and the structure-keyed transform cache.

#include "ad/traced_fixtures.hpp"

using namespace ttest;

namespace {

using Fn = std::function<TracedTensor(const TracedTensor&)>;

Program scalar_program(DType dt, std::initializer_list<std::int64_t> shape, const Fn& f) {
  SymShape s;
  for (auto e : shape) s.push_back(e);
  auto x = placeholder(dt, s);
  return compile({f(x)}, {x});
}

void check_grad(Runtime& rt, const Program& p, const Tensor& x, double tol = 1e-6) {
  Program g = grad(p);
  auto got = eval(rt, g, {x})[0];
  EXPECT_TRUE(close(got, fd_grad(rt, p, {x}, 0), tol)) << p.to_string();
}

}  // namespace

TEST(TracedTransforms, GradOfCoreOpsMatchesFiniteDifferences) {
  auto rt = cpu_runtime();
  const Tensor w = random({3, 4}, f64, 11);
  const Tensor idx = Tensor::from_col_major<std::int64_t>({3}, {2, 0, 2});
  const std::vector<Fn> fns = {
      [](auto& x) { return sum(exp(x) * sin(x) + x / (x * x + 1.0)); },
      [&](auto& x) { return sum(tanh(matmul(x, constant(w)))); },
      [](auto& x) {
        return logsumexp(x, {0, 1}) + sum(sigmoid(x) * cos(x));
      },
      [](auto& x) {
        return sum(transpose(x) * reshape(x, {3, 2})) + sum(square(x));
      },
      [](auto& x) {
        return sum(pad(slice(x, {0, 1}, {2, 3}), {1, 0}, {0, 2}, 0.5) * 3.0);
      },
      [](auto& x) {
        const TracedTensor parts[2] = {x, reverse(x, {0})};
        return sum(exp(concatenate(parts, 1)) * 0.5);
      },
      [&](auto& x) { return sum(index_select(x, 1, constant(idx)) * x); },
      [](auto& x) { return sum(where(gt(x, zeros_like(x)), x * x, -x) + maximum(x, x * 0.5)); },
      [](auto& x) { return sum(clamp(x, -0.5, 0.5) * x); },
      [](auto& x) { return sum(var(x, {1})) + sum(prod(x, {0})) + sum(mean(x, {1})); },
      [](auto& x) { return sum(pow(x * x + 1.0, x)); },
      [](auto& x) { return sum(sqrt(x * x + 2.0) * log(x * x + 1.0)); },
      [](auto& x) {
        return sum(dot_general(x, exp(x), DotDims{{1}, {1}, {}, {}}));
      },
  };
  const Tensor x = random({2, 3}, f64, 5);
  for (const auto& f : fns) check_grad(*rt, scalar_program(f64, {2, 3}, f), x);
  // Square matrices: diagonal, diag_embed, tril/triu.
  const std::vector<Fn> square_fns = {
      [](auto& x) { return sum(diagonal(x) * diagonal(exp(x))); },
      [](auto& x) { return sum(diag_embed(diagonal(x)) * x) + sum(tril(x) * triu(x, -1)); },
      [](auto& x) { return sum(matmul(x, x) * x); },
  };
  const Tensor sq = random({3, 3}, f64, 6);
  for (const auto& f : square_fns) check_grad(*rt, scalar_program(f64, {3, 3}, f), sq);
}

TEST(TracedTransforms, ComplexInputsFollowTheRealInnerProductConvention) {
  auto rt = cpu_runtime();
  const Tensor z = random({4}, c128, 3);
  const std::vector<Fn> fns = {
      [](auto& x) { return sum(real(conj(x) * x)); },
      [](auto& x) { return sum(real(exp(x) * x)) + sum(imag(sin(x))); },
      [](auto& x) { return sum(abs(x * x + 1.0)); },
      [](auto& x) {
        return sum(real(matmul(reshape(x, {2, 2}), reshape(conj(x), {2, 2}))));
      },
  };
  for (const auto& f : fns) check_grad(*rt, scalar_program(c128, {4}, f), z);
}

TEST(TracedTransforms, VjpAndJvpMatchFiniteDifferencesAndEachOther) {
  auto rt = cpu_runtime();
  for (DType dt : {f64, c128}) {
    auto x = placeholder(dt, {3});
    auto y = placeholder(dt, {3});
    auto out = exp(x) * y + sin(x * y);
    auto out2 = sum(x * x);
    Program p = compile({out, out2}, {x, y});
    std::vector<Tensor> in = {random({3}, dt, 1), random({3}, dt, 2)};
    std::vector<Tensor> dirs = {random({3}, dt, 3), random({3}, dt, 4)};
    // jvp program: (x, y, tx, ty) -> (out, out2, tout, tout2)
    auto jv = eval(*rt, jvp(p), {in[0], in[1], dirs[0], dirs[1]});
    auto fd = fd_jvp(*rt, p, in, dirs);
    EXPECT_TRUE(close(jv[2], fd[0]));
    EXPECT_TRUE(close(jv[3], fd[1]));
    // vjp program: (x, y, c, c2) -> (out, out2, cx, cy); Re<c, J t> = Re<J^T c, t>.
    const Tensor c = random({3}, dt, 7), c2 = random({}, dt, 8);
    auto vj = eval(*rt, vjp(p), {in[0], in[1], c, c2});
    Backend& cpu = rt->backend();
    auto inner = [&](const Tensor& a, const Tensor& b) {
      return sum(real(mul(conj(a, cpu), b, cpu), cpu), cpu).item().real();
    };
    const double lhs = inner(c, jv[2]) + inner(c2, jv[3]);
    const double rhs = inner(vj[2], dirs[0]) + inner(vj[3], dirs[1]);
    EXPECT_NEAR(lhs, rhs, 1e-10 * (1 + std::abs(lhs)));
  }
}

TEST(TracedTransforms, HvpBothOrdersAgreeWithFiniteDifferences) {
  auto rt = cpu_runtime();
  const Tensor a = random({3, 3}, f64, 9);
  const std::vector<Fn> fns = {
      [](auto& x) { return sum(x * x * x); }, [](auto& x) { return sum(exp(sin(x))); },
      [&](auto& x) {
        return sum(x * matmul(constant(a), reshape(x, {3, 1})));
      },  // x^T A x
  };
  for (const auto& f : fns) {
    auto x = placeholder(f64, {3});
    auto v = placeholder(f64, {3});
    auto y = f(x);
    Program both = compile({hvp(y, x, v, HvpMode::ForwardOverReverse),
                            hvp(y, x, v, HvpMode::ReverseOverReverse), grad(y, x)},
                           {x, v});
    const Tensor xv = random({3}, f64, 1), vv = random({3}, f64, 2);
    auto out = eval(*rt, both, {xv, vv});
    EXPECT_TRUE(close(out[0], out[1], 1e-10));
    // Finite differences of the gradient along v.
    Program gp = compile({grad(y, x)}, {x});
    auto fd = fd_jvp(*rt, gp, {xv}, {vv});
    EXPECT_TRUE(close(out[0], fd[0], 1e-5));
    // Program-level HVP, both orders.
    Program p = compile({y}, {x});
    auto h1 = eval(*rt, hvp(p, HvpMode::ForwardOverReverse), {xv, vv})[0];
    auto h2 = eval(*rt, hvp(p, HvpMode::ReverseOverReverse), {xv, vv})[0];
    EXPECT_TRUE(close(h1, out[0], 1e-10));
    EXPECT_TRUE(close(h2, out[0], 1e-10));
  }
  // Complex input, real loss: both orders agree and match differences of the gradient.
  auto z = placeholder(c128, {3});
  auto v = placeholder(c128, {3});
  auto y = sum(real(exp(sin(z)) * conj(z)));
  Program both = compile({hvp(y, z, v), hvp(y, z, v, HvpMode::ReverseOverReverse)}, {z, v});
  const Tensor zv = random({3}, c128, 4), vv = random({3}, c128, 5);
  auto out = eval(*rt, both, {zv, vv});
  EXPECT_TRUE(close(out[0], out[1], 1e-10));
  auto fd = fd_jvp(*rt, compile({grad(y, z)}, {z}), {zv}, {vv});
  EXPECT_TRUE(close(out[0], fd[0], 1e-5));
}

TEST(TracedTransforms, GradOfGradAndNamedSizes) {
  auto rt = cpu_runtime();
  auto x = placeholder(f64, {n_dim()});
  auto y = sum(sin(x) * x);
  auto g = grad(y, x);
  auto gg = grad(sum(g * g), x);  // differentiate a gradient graph again
  Program p = compile({y, g, gg}, {x});
  Program gp = compile({sum(g * g)}, {x});
  const Tensor x3 = random({3}, f64, 1);
  PreparedProgram plan = prepare(*rt, p, InputSignature::of(std::span<const Tensor>(&x3, 1)));
  for (std::int64_t n : {3, 6, 11}) {
    const Tensor xv = random({n}, f64, static_cast<std::uint64_t>(n));
    const ProgramCounters before = rt->program_counters();
    auto out = run(*rt, plan, {xv});
    EXPECT_EQ(rt->program_counters().preparations, before.preparations);
    EXPECT_EQ(rt->program_counters().runs, before.runs + 1);
    Backend& cpu = rt->backend();
    Tensor ref = add(sin(xv, cpu), mul(xv, cos(xv, cpu), cpu), cpu);
    EXPECT_TRUE(close(out[1], ref, 1e-12));
    EXPECT_TRUE(close(out[2], fd_grad(*rt, gp, {xv}, 0), 1e-5));
  }
}

TEST(TracedTransforms, NoDependenceAndSharedGraphs) {
  auto x = placeholder(f64, {3});
  auto y = placeholder(f64, {3});
  auto k = placeholder(i64, {3});
  auto unused = placeholder(f64, {2});
  auto out = sum(exp(x) * y) + sum(cast(k, f64));
  const TracedTensor wrt[4] = {x, y, k, unused};
  auto g = grad_many(out, wrt);
  ASSERT_EQ(g.size(), 4u);
  EXPECT_TRUE(g[0].has_value());
  EXPECT_TRUE(g[1].has_value());
  EXPECT_FALSE(g[2].has_value());  // integer input: not differentiable
  EXPECT_FALSE(g[3].has_value());  // unreachable: no dependence, not an error
  // One derivative graph: exp(x) is computed once for both gradients.
  Program p = compile({*g[0], *g[1]}, {x, y, k});
  EXPECT_EQ(p.count_ops("exp"), 1u);
  EXPECT_FALSE(jvp(sum(y), x, ones_like(x)).has_value());
  // grad(y, x) of an unused x: InvalidArgument as in the eager tier, zeros
  // with allow_unused.
  EXPECT_TF_ERROR(grad(sum(y), x), ErrorKind::InvalidArgument);
  EXPECT_EQ(compile({grad(sum(y), x, GradOptions{.allow_unused = true})}, {x, y}).count_ops("full"),
            1u);
  // The eager tier agrees: an error by default, zeros with allow_unused.
  {
    auto ert = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
    const EagerTensor ex = ert->tensor(Tensor::from_col_major({3}, std::vector<double>{1, 2, 3}));
    const EagerTensor ey = ert->tensor(Tensor::from_col_major({3}, std::vector<double>{4, 5, 6}));
    const EagerFn f = [&](const EagerTensor&) { return sum(ey); };
    EXPECT_TF_ERROR(grad(f, ex), ErrorKind::InvalidArgument);
    const EagerTensor z = grad(f, ex, GradOptions{.allow_unused = true});
    EXPECT_EQ(z.value().to_vector<double>(), (std::vector<double>{0, 0, 0}));
    EXPECT_FALSE(try_grad(f, ex).has_value());
  }
  // Argument errors.
  EXPECT_TF_ERROR(grad(exp(x), x), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(grad(sum(convert(x, c128)), x), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(vjp(exp(x), ones_like(unused), x), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(jvp(exp(x), x, placeholder(f32, {3})), ErrorKind::DTypeMismatch);
}

TEST(TracedTransforms, ExtensionFamiliesMissingRulesAndJvpOnlyRules) {
  auto rt = cpu_runtime();
  auto scale = std::make_shared<example::ScaleBy>(2.5);
  auto x = placeholder(f64, {3});
  auto y = sum(extension::apply(scale, {exp(x)})[0]);
  try {
    grad(y, x);  // core rules only: no rule for the family
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::UnsupportedAdRule);
    EXPECT_EQ(e.op(), "example.scale_by.v1");
  }
  // A jvp rule only: jvp(t) = k t. Reverse mode comes from transposing it.
  auto rules = ad::AdContext::with_core_rules();
  ad::RuleSet scale_rules;
  scale_rules.jvp = [](const ad::RuleArgs& args, std::span<const ad::MaybeVal> t) {
    const double k = static_cast<const example::ScaleBy&>(args.op).k();
    return std::vector<ad::MaybeVal>{args.emitter.scale(*t[0], k)};
  };
  scale_rules.residuals = ad::Residuals::none();
  rules->register_family(FamilyId("example.scale_by.v1"), scale_rules);
  ad::RuleSet swap_rules;
  swap_rules.jvp = [](const ad::RuleArgs&, std::span<const ad::MaybeVal> t) {
    return std::vector<ad::MaybeVal>{t[1], t[0]};
  };
  swap_rules.residuals = ad::Residuals::none();
  rules->register_family(FamilyId("example.swap.v1"), swap_rules);

  auto z = placeholder(f64, {3});
  auto sw = extension::apply(std::make_shared<example::Swap>(), {x * x, z});
  auto loss = sum(extension::apply(scale, {sw[0]})[0] * sin(sw[1]));
  Program p = compile({loss}, {x, z});
  const std::vector<Tensor> in = {random({3}, f64, 1), random({3}, f64, 2)};
  auto g = eval(*rt, grad(p, {}, *rules), in);
  EXPECT_TRUE(close(g[0], fd_grad(*rt, p, in, 0)));
  EXPECT_TRUE(close(g[1], fd_grad(*rt, p, in, 1)));
  // jvp and hvp through the families as well.
  auto v = placeholder(f64, {3});
  Program hv = compile({hvp(loss, z, v, HvpMode::ForwardOverReverse, *rules),
                        hvp(loss, z, v, HvpMode::ReverseOverReverse, *rules)},
                       {x, z, v});
  auto h = eval(*rt, hv, {in[0], in[1], random({3}, f64, 3)});
  EXPECT_TRUE(close(h[0], h[1], 1e-10));
  // c128 through scale_by.
  auto c = placeholder(c128, {2});
  Program pc = compile({sum(real(extension::apply(scale, {c * c})[0]))}, {c});
  const Tensor cv = random({2}, c128, 4);
  EXPECT_TRUE(close(eval(*rt, grad(pc, {}, *rules), {cv})[0], fd_grad(*rt, pc, {cv}, 0)));
}

TEST(TracedTransforms, TransformCacheIsStructuralAndHoldsNoTensors) {
  auto rt = cpu_runtime();
  auto build = [](double c) {
    auto x = placeholder(f64, {n_dim()});
    return compile({sum(exp(x) * constant(Tensor::scalar(c)))}, {x});
  };
  const Program p1 = build(2.0), p2 = build(3.0);
  TransformCache cache(4);
  Program g1 = grad(p1, {}, ad::core_rules(), &cache);
  Program g2 = grad(p2, {}, ad::core_rules(), &cache);
  TransformCacheStats s = cache.stats();
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.entries, 1u);
  EXPECT_EQ(g1.graph(), g2.graph());  // one cached structure ...
  // ... bound to each program's own constants (referenced, not copied).
  EXPECT_EQ(g1.constants_ptr(), p1.constants_ptr());
  EXPECT_EQ(g2.constants_ptr(), p2.constants_ptr());
  const Tensor x = random({4}, f64, 1);
  EXPECT_TRUE(close(eval(*rt, g2, {x})[0],
                    mul(exp(x, rt->backend()), Tensor::scalar(3.0), rt->backend()), 1e-12));
  // Different transforms and arguments are different entries; the bound holds.
  vjp(p1, ad::core_rules(), &cache);
  jvp(p1, ad::core_rules(), &cache);
  hvp(p1, HvpMode::ForwardOverReverse, ad::core_rules(), &cache);
  hvp(p1, HvpMode::ReverseOverReverse, ad::core_rules(), &cache);
  s = cache.stats();
  EXPECT_EQ(s.entries, 4u);
  EXPECT_EQ(s.evictions, 1u);
  EXPECT_EQ(s.misses, 5u);
  cache.clear();
  EXPECT_EQ(cache.stats().entries, 0u);
  EXPECT_EQ(cache.stats().clears, 1u);
}
