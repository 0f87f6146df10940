// einsum over semirings (docs/tropical.md): values against a naive semiring
// einsum over every label assignment (max-plus, min-plus, or-and; f32, f64,
// i64, bool), slicing, counting, the tropical derivatives (finite
// differences, jvp/vjp adjointness, traced == eager, a configuration read off
// the gradient) and the errors.

#include <cmath>
#include <limits>

#include "einsum_test_util.hpp"

using namespace etest;

namespace {

using Labels = std::vector<std::vector<std::int64_t>>;

struct Reference {
  std::vector<double> value;
  std::vector<double> count;
};

// Every assignment of the labels: per output position the best term (max or
// min of the sums, or of the ands) and how many terms attain it.
Reference naive_semiring(Semiring s, const Labels& labels, const std::vector<Tensor>& ops,
                         const std::vector<std::int64_t>& out) {
  std::map<std::int64_t, std::int64_t> ext;
  std::vector<std::vector<double>> data;
  for (std::size_t k = 0; k < ops.size(); ++k) {
    data.push_back(cast(ops[k], f64, runtime()->backend()).to_vector<double>());
    for (std::size_t i = 0; i < labels[k].size(); ++i) {
      auto [it, fresh] = ext.emplace(labels[k][i], ops[k].shape()[i]);
      if (!fresh && it->second == 1) it->second = ops[k].shape()[i];
    }
  }
  std::int64_t total = 1, outn = 1;
  for (const auto& [id, e] : ext) total *= e;
  for (const std::int64_t l : out) outn *= ext[l];
  const double zero = s == Semiring::MinPlus ? std::numeric_limits<double>::infinity()
                      : s == Semiring::OrAnd ? 0.0
                                             : -std::numeric_limits<double>::infinity();
  Reference r{std::vector<double>(static_cast<std::size_t>(outn), zero),
              std::vector<double>(static_cast<std::size_t>(outn), 0.0)};
  std::map<std::int64_t, std::int64_t> val;
  for (std::int64_t t = 0; t < total; ++t) {
    std::int64_t rest = t;
    for (const auto& [id, e] : ext) val[id] = rest % e, rest /= e;
    double term = s == Semiring::OrAnd ? 1.0 : 0.0;
    for (std::size_t k = 0; k < ops.size(); ++k) {
      std::int64_t off = 0, stride = 1;
      for (std::size_t i = 0; i < labels[k].size(); ++i) {
        const auto e = ops[k].shape()[i];
        off += (e == 1 ? 0 : val[labels[k][i]]) * stride;
        stride *= e;
      }
      const double x = data[k][static_cast<std::size_t>(off)];
      term = s == Semiring::OrAnd ? (term != 0 && x != 0 ? 1.0 : 0.0) : term + x;
    }
    std::int64_t off = 0, stride = 1;
    for (std::size_t i = 0; i < out.size(); ++i) {
      off += val[out[i]] * stride;
      stride *= ext[out[i]];
    }
    double& best = r.value[static_cast<std::size_t>(off)];
    double& count = r.count[static_cast<std::size_t>(off)];
    const bool better = s == Semiring::MinPlus ? term < best
                        : s == Semiring::OrAnd ? term > best
                                               : term > best;
    if (better) {
      best = term, count = 1;
    } else if (term == best) {
      count += 1;
    }
  }
  return r;
}

// Small integers as values (exact in every dtype, with ties).
Tensor ints(const Shape& shape, DType dt, std::uint64_t seed, int range = 5) {
  const auto v = values(numel(shape), seed);
  std::vector<double> x;
  for (const auto z : v) x.push_back(std::floor((z.real() + 1) * range / 2));
  return cast(Tensor::from_col_major(shape, x), dt, runtime()->backend());
}

struct Case {
  std::string what;
  Labels labels;
  std::vector<std::int64_t> out;
  std::vector<Shape> shapes;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {"matmul", {{0, 1}, {1, 2}}, {0, 2}, {{3, 4}, {4, 5}}},
      {"batched", {{0, 1, 3}, {1, 2, 3}}, {0, 2, 3}, {{2, 3, 2}, {3, 4, 2}}},
      {"chain of four", {{0, 1}, {1, 2}, {2, 3}, {3, 0}}, {}, {{3, 2}, {2, 4}, {4, 3}, {3, 3}}},
      {"hyperedge", {{0, 1}, {0, 2}, {0, 3}, {1, 2, 3}}, {0}, {{3, 2}, {3, 2}, {3, 2}, {2, 2, 2}}},
      {"diagonal and own sum", {{0, 0, 1}, {1, 2}}, {2}, {{3, 3, 2}, {2, 4}}},
      {"own sums of two axes", {{0, 1, 2, 3}, {1, 2}}, {2}, {{2, 3, 2, 3}, {3, 2}}},
      {"repeated output", {{0, 1}}, {0, 0}, {{3, 2}}},
      {"broadcast", {{0, 1}, {1, 2}}, {0, 2}, {{3, 1}, {4, 2}}},
      {"outer", {{0}, {1}}, {0, 1}, {{3}, {2}}},
  };
  return c;
}

EinsumLabels labels_of(const Case& c) {
  return EinsumLabels{c.labels, c.out};
}

std::vector<Tensor> operands(const Case& c, DType dt, std::uint64_t seed) {
  std::vector<Tensor> ops;
  for (std::size_t k = 0; k < c.shapes.size(); ++k) ops.push_back(ints(c.shapes[k], dt, seed + k));
  return ops;
}

void expect_equal(const Tensor& got, const std::vector<double>& want, const std::string& what) {
  const auto g = cast(got, f64, runtime()->backend()).to_vector<double>();
  ASSERT_EQ(g.size(), want.size()) << what;
  for (std::size_t i = 0; i < want.size(); ++i) {
    double w = want[i];
    // i64's semiring zeros are INT64_MIN / INT64_MAX (+-2^63 as doubles).
    if (got.dtype() == i64 && std::isinf(w)) w = std::copysign(0x1p63, w);
    EXPECT_EQ(g[i], w) << what << " element " << i;
  }
}

Backend& cpu() {
  return runtime()->backend();
}

}  // namespace

TEST(EinsumSemiring, TropicalValuesMatchEveryAssignment) {
  int checked = 0;
  for (const Semiring s : {Semiring::MaxPlus, Semiring::MinPlus}) {
    for (const DType dt : {f64, f32, i64}) {
      for (const Case& c : cases()) {
        const auto ops = operands(c, dt, 11);
        const Tensor got = einsum(labels_of(c), ops, cpu(), {.semiring = s});
        EXPECT_EQ(got.dtype(), dt);
        expect_equal(got, naive_semiring(s, c.labels, ops, c.out).value,
                     c.what + " " + name(s) + " " + std::string(name(dt)));
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 54);
}

TEST(EinsumSemiring, OrAndOverBool) {
  for (const Case& c : cases()) {
    std::vector<Tensor> ops;
    for (std::size_t k = 0; k < c.shapes.size(); ++k) {
      ops.push_back(cast(ints(c.shapes[k], f64, 3 + k, 2), DType::Bool, cpu()));
    }
    const Tensor got = einsum(labels_of(c), ops, cpu(), {.semiring = Semiring::OrAnd});
    EXPECT_EQ(got.dtype(), DType::Bool);
    expect_equal(got, naive_semiring(Semiring::OrAnd, c.labels, ops, c.out).value, c.what);
  }
}

TEST(EinsumSemiring, StringEquationsPlansAndTheEagerTier) {
  const Tensor a = ints({3, 4}, f64, 1), b = ints({4, 2}, f64, 2);
  const auto want = naive_semiring(Semiring::MaxPlus, {{0, 1}, {1, 2}}, {a, b}, {0, 2}).value;
  expect_equal(einsum("ij,jk->ik", {a, b}, cpu(), {.semiring = Semiring::MaxPlus}), want, "string");
  const EinsumPlan plan = EinsumPlan::prepare("ij,jk->ik", f64, {a.shape(), b.shape()},
                                              {.semiring = Semiring::MaxPlus});
  expect_equal(plan.run({a, b}, cpu()), want, "prepared plan");
  const EagerTensor e = einsum("ij,jk->ik", {runtime()->tensor(a), runtime()->tensor(b)},
                               {.semiring = Semiring::MaxPlus});
  expect_equal(e.value(), want, "eager");
  // The same equation without the semiring is the ordinary contraction.
  EXPECT_NE(
      einsum("ij,jk->ik", {a, b}, cpu()).to_vector<double>(),
      einsum("ij,jk->ik", {a, b}, cpu(), {.semiring = Semiring::MaxPlus}).to_vector<double>());
}

TEST(EinsumSemiring, SlicesCombineByTheSemiringAddition) {
  // A ring of six 4 x 4 matrices with the memory limit below its
  // intermediates: sliced, with the same value and count as unsliced.
  Labels ring;
  std::vector<Tensor> ops;
  for (std::int64_t k = 0; k < 6; ++k) {
    ring.push_back({k, (k + 1) % 6});
    ops.push_back(ints({4, 4}, f64, 20 + static_cast<std::uint64_t>(k)));
  }
  const EinsumLabels labels{ring, std::vector<std::int64_t>{0}};
  for (const Semiring s : {Semiring::MaxPlus, Semiring::MinPlus}) {
    const EinsumOptions whole{.semiring = s};
    EinsumOptions sliced{.memory_limit = 8.0 * 4, .semiring = s};
    const EinsumPlan plan = EinsumPlan::prepare(labels, f64,
                                                {ops[0].shape(), ops[1].shape(), ops[2].shape(),
                                                 ops[3].shape(), ops[4].shape(), ops[5].shape()},
                                                sliced);
    ASSERT_GT(plan.slices, 1.0);
    const auto ref = naive_semiring(s, ring, ops, {0});
    expect_equal(einsum(labels, ops, cpu(), whole), ref.value, "whole");
    expect_equal(einsum(labels, ops, cpu(), sliced), ref.value, "sliced");
    const CountedTensor c = einsum_count(labels, ops, cpu(), sliced);
    expect_equal(c.value, ref.value, "sliced counting value");
    expect_equal(c.count, ref.count, "sliced counting count");
  }
}

TEST(EinsumSemiring, CountingMatchesEveryAssignment) {
  int checked = 0;
  for (const Semiring s : {Semiring::MaxPlus, Semiring::MinPlus}) {
    for (const DType dt : {f64, i64, f32}) {
      for (const Case& c : cases()) {
        const auto ops = operands(c, dt, 5);
        const CountedTensor got = einsum_count(labels_of(c), ops, cpu(), {.semiring = s});
        const auto ref = naive_semiring(s, c.labels, ops, c.out);
        EXPECT_EQ(got.count.dtype(), f64);
        expect_equal(got.value, ref.value, c.what + " value");
        expect_equal(got.count, ref.count,
                     c.what + " count " + name(s) + " " + std::string(name(dt)));
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 54);
}

TEST(EinsumSemiring, GradientsMatchFiniteDifferencesAndAreAdjoint) {
  // Distinct continuous values: no ties, so the tropical function is linear
  // near the point and finite differences see its derivative.
  for (const Semiring s : {Semiring::MaxPlus, Semiring::MinPlus}) {
    for (const Case& c : cases()) {
      if (c.what == "repeated output") continue;  // -inf off the diagonal
      std::vector<EagerTensor> in;
      for (std::size_t k = 0; k < c.shapes.size(); ++k) {
        in.push_back(runtime()->tensor(make(c.shapes[k], f64, 40 + k)));
      }
      const EinsumLabels labels = labels_of(c);
      GradCheckOptions opt;
      opt.eps = 1e-7;
      const auto r = check_gradients(
          [&](std::span<const EagerTensor> v) {
            return einsum(labels, std::vector<EagerTensor>(v.begin(), v.end()), {.semiring = s});
          },
          in, opt);
      EXPECT_TRUE(r.ok) << c.what << " " << name(s) << ": " << r.detail;
    }
  }
}

TEST(EinsumSemiring, TracedMatchesEager) {
  const Case& c = cases()[2];  // the chain of four
  const EinsumLabels labels = labels_of(c);
  std::vector<Tensor> inputs;
  std::vector<TracedTensor> ph;
  std::vector<EagerTensor> ev;
  for (std::size_t k = 0; k < c.shapes.size(); ++k) {
    inputs.push_back(make(c.shapes[k], f64, 60 + k));
    ph.push_back(placeholder(f64, to_sym_shape(inputs.back().shape().span())));
    ev.push_back(runtime()->tensor(inputs.back()));
  }
  const EinsumOptions o{.semiring = Semiring::MaxPlus};
  const TracedTensor y = einsum(labels, ph, o);
  const auto tg = grad_many(sum(y), ph);
  std::vector<TracedTensor> outs{y};
  for (const auto& g : tg) outs.push_back(*g);
  const Program p = compile(outs, std::span<const TracedTensor>(ph));
  const auto traced = run_compiled(*runtime()->runtime(), p, std::span<const Tensor>(inputs));
  expect_close(host(traced[0]), host(einsum(labels, ev, o)), 0, "value");
  const auto eg = grad_many(
      [&](std::span<const EagerTensor> z) {
        return sum(einsum(labels, std::vector<EagerTensor>(z.begin(), z.end()), o));
      },
      ev);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    ASSERT_TRUE(eg[i].has_value());
    expect_close(host(traced[i + 1]), host(*eg[i]), 0, "gradient");
  }
}

TEST(EinsumSemiring, TheGradientMarksAnOptimalConfiguration) {
  // A 3 x 3 spin glass: E(s) = -sum J s_i s_j - sum h s_i. max-plus over
  // vertex vectors w_i(s) = h_i s and edge matrices J s_i s_j gives -E_min;
  // the gradient with respect to w_i is one-hot at an optimal s_i.
  const std::int64_t L = 3, n = L * L;
  Labels labels;
  std::vector<EagerTensor> ops;
  std::vector<double> h;
  std::vector<std::tuple<std::int64_t, std::int64_t, double>> edges;
  const auto v = values(64, 99);
  for (std::int64_t i = 0; i < n; ++i) {
    h.push_back(std::round(v[static_cast<std::size_t>(i)].real() * 3));
    labels.push_back({i});
    EagerTensor w = runtime()->tensor(
        Tensor::from_col_major(Shape{2}, std::vector<double>{-h.back(), h.back()}));
    w.requires_grad_();
    ops.push_back(w);
  }
  std::size_t q = 20;
  for (std::int64_t r = 0; r < L; ++r) {
    for (std::int64_t c = 0; c < L; ++c) {
      const std::int64_t i = r * L + c;
      for (const std::int64_t j : {c + 1 < L ? i + 1 : -1, r + 1 < L ? i + L : -1}) {
        if (j < 0) continue;
        const double J = v[q++].real() > 0 ? 1.0 : -1.0;
        edges.emplace_back(i, j, J);
        labels.push_back({i, j});
        ops.push_back(runtime()->tensor(
            Tensor::from_col_major(Shape{2, 2}, std::vector<double>{J, -J, -J, J})));
      }
    }
  }
  auto energy = [&](const std::vector<int>& s) {
    double e = 0;
    for (const auto& [i, j, J] : edges)
      e -= J * s[static_cast<std::size_t>(i)] * s[static_cast<std::size_t>(j)];
    for (std::int64_t i = 0; i < n; ++i)
      e -= h[static_cast<std::size_t>(i)] * s[static_cast<std::size_t>(i)];
    return e;
  };
  double best = std::numeric_limits<double>::infinity();
  double degeneracy = 0;
  for (std::int64_t t = 0; t < (1 << n); ++t) {
    std::vector<int> s;
    for (std::int64_t i = 0; i < n; ++i) s.push_back((t >> i) & 1 ? 1 : -1);
    const double e = energy(s);
    if (e < best) {
      best = e, degeneracy = 1;
    } else if (e == best) {
      degeneracy += 1;
    }
  }
  const EinsumLabels net{labels, std::vector<std::int64_t>{}};
  const EagerTensor value = einsum(net, ops, {.semiring = Semiring::MaxPlus});
  EXPECT_EQ(-value.value().to_vector<double>()[0], best);
  std::vector<Tensor> plain;
  for (const EagerTensor& o : ops) plain.push_back(o.value());
  EXPECT_EQ(
      einsum_count(net, plain, cpu(), {.semiring = Semiring::MaxPlus}).count.to_vector<double>()[0],
      degeneracy);
  value.backward();
  std::vector<int> config;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto g = ops[static_cast<std::size_t>(i)].grad().value().to_vector<double>();
    ASSERT_EQ(g.size(), 2u);
    EXPECT_EQ(g[0] + g[1], 1.0) << "spin " << i << " is marked once";
    config.push_back(g[1] == 1.0 ? 1 : -1);
  }
  EXPECT_EQ(energy(config), best);
}

TEST(EinsumSemiring, ErrorsAreTyped) {
  const Tensor a = ints({2, 3}, f64, 1), b = ints({3, 2}, f64, 2);
  const Tensor ba = cast(a, DType::Bool, cpu()), bb = cast(b, DType::Bool, cpu());
  EXPECT_TF_ERROR(einsum("ij,jk->ik", {ba, bb}, cpu(), {.semiring = Semiring::MaxPlus}),
                  ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(einsum("ij,jk->ik", {a, b}, cpu(), {.semiring = Semiring::OrAnd}),
                  ErrorKind::DTypeMismatch);
  const Tensor c = cast(a, c128, cpu());
  EXPECT_TF_ERROR(
      einsum("ij,jk->ik", {c, cast(b, c128, cpu())}, cpu(), {.semiring = Semiring::MinPlus}),
      ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(einsum_count("ij,jk->ik", {a, b}, cpu(), {}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(einsum_count("ij,jk->ik", {ba, bb}, cpu(), {.semiring = Semiring::OrAnd}),
                  ErrorKind::InvalidArgument);
  // The usual einsum checks come first.
  EXPECT_TF_ERROR(einsum("ij,jk->ik", {a, a}, cpu(), {.semiring = Semiring::MaxPlus}),
                  ErrorKind::ShapeMismatch);
  // Second derivatives of a tropical contraction are not defined here.
  const EagerTensor x = runtime()->tensor(make({2, 3}, f64, 7)), y = runtime()->tensor(b);
  const EagerFn inner = [&](const EagerTensor& w) {
    return sum(einsum("ij,jk->ik", {w, y}, {.semiring = Semiring::MaxPlus}));
  };
  EXPECT_EQ(grad(inner, x).value().numel(), 6);  // first order works
  EXPECT_TF_ERROR(grad([&](const EagerTensor& z) { return sum(grad(inner, z)); }, x),
                  ErrorKind::UnsupportedAdRule);
}

TEST(EinsumSemiring, SlicedDerivativesEqualUnsliced) {
  // The ring of six with distinct values: the cotangent goes to the slice
  // that won each element, the tangent comes from it.
  Labels ring;
  std::vector<EagerTensor> ops;
  for (std::int64_t k = 0; k < 6; ++k) {
    ring.push_back({k, (k + 1) % 6});
    ops.push_back(runtime()->tensor(make({4, 4}, f64, 70 + static_cast<std::uint64_t>(k))));
  }
  const EinsumLabels labels{ring, std::vector<std::int64_t>{0}};
  for (const Semiring s : {Semiring::MaxPlus, Semiring::MinPlus}) {
    const EinsumOptions whole{.semiring = s};
    const EinsumOptions sliced{.memory_limit = 8.0 * 4, .semiring = s};
    ASSERT_GT(einsum_path(labels, std::vector<Shape>(6, Shape{4, 4}), sliced).slices, 1.0);
    auto f = [&](const EinsumOptions& o) {
      return [&labels, o](std::span<const EagerTensor> v) {
        const EagerTensor y = einsum(labels, std::vector<EagerTensor>(v.begin(), v.end()), o);
        return sum(y * y);  // a cotangent that differs per element
      };
    };
    const auto g_whole = grad_many(f(whole), ops);
    const auto g_sliced = grad_many(f(sliced), ops);
    for (std::size_t k = 0; k < ops.size(); ++k) {
      ASSERT_TRUE(g_whole[k].has_value() && g_sliced[k].has_value());
      expect_close(host(*g_sliced[k]), host(*g_whole[k]), 1e-12, "gradient " + std::to_string(k));
    }
    const EagerTensor t = runtime()->tensor(make({4, 4}, f64, 90));
    auto one_operand = [&](const EinsumOptions& o) {
      return [&, o](const EagerTensor& x) {
        std::vector<EagerTensor> v = ops;
        v[2] = x;
        return einsum(labels, v, o);
      };
    };
    expect_close(host(jvp_tangent(one_operand(sliced), ops[2], t)),
                 host(jvp_tangent(one_operand(whole), ops[2], t)), 1e-12, "tangent");
  }
}
