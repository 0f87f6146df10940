// The conformance suite's gradient cases (conformance/grad_cases.hpp) and
// every unary descriptor's derivative, sharded under mpirun -np 1, 2 and 4:
// each case whose function the distributed layer can write, through
// dist::backward on every placement of conformance_layouts.hpp, against the
// one-process loss and gradients (1e-12 relative), and every unary
// descriptor's gradient through dist::grad in traced programs. Each test
// counts what ran, what the layer cannot express and which inputs no
// derivative reaches, asserts them, and prints them on rank 0.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "conformance/grad_cases.hpp"
#include "conformance/value_rows.hpp"
#include "distributed/conformance_layouts.hpp"

using namespace tenferro;
using namespace mpitest;
using dist::DTensor;
using dist::Placements;
using tftest::GradCase;

namespace {

/// A case's function written with the layer's ops.
using DistFn = std::function<DTensor(const std::vector<DTensor>&)>;
using DistForms = std::map<std::string, DistFn, std::less<>>;

// The names in a space-separated list.
std::set<std::string> words(std::string_view list) {
  std::set<std::string> out;
  for (std::size_t at = 0; at < list.size();) {
    const std::size_t end = std::min(list.find(' ', at), list.size());
    out.emplace(list.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

// Placements for a 1-D reshape of x: x's first shard shards the one axis,
// a mesh axis that sharded another is replicated.
Placements on_one_axis(Placements ps) {
  bool sharded = false;
  for (auto& p : ps) {
    if (!p.is_shard()) continue;
    p = sharded ? dist::Replicate() : dist::Shard(0, p.block);
    sharded = true;
  }
  return ps;
}

DTensor mapped(const DTensor& x, EagerTensor (*fn)(const EagerTensor&)) {
  return dist::map(x, [fn](const EagerTensor& t) { return fn(t); });
}

EagerTensor real_part(const EagerTensor& t) {
  return real(t);
}

EagerTensor sqrt_of(const EagerTensor& t) {
  return sqrt(t);
}

EagerTensor conj_of(const EagerTensor& t) {
  return conj(t);
}

// sum(|x - mean(x, axis)|^2, axis) of a [3, 2] x.
DTensor squared_deviations(const DTensor& x, std::int64_t axis, bool keepdim) {
  const double n = static_cast<double>(x.shape()[static_cast<std::size_t>(axis)]);
  const DTensor d = x - dist::sum(x, {axis}, true) * Scalar(1.0 / n);
  const DTensor sq = is_complex(x.dtype()) ? mapped(d * mapped(d, conj_of), real_part) : d * d;
  return dist::sum(sq, {axis}, keepdim);
}

// The forms shared by both tables: the elementwise operators.
DistForms arithmetic_forms() {
  return {{"add", [](const auto& x) { return x[0] + x[1]; }},
          {"sub", [](const auto& x) { return x[0] - x[1]; }},
          {"mul", [](const auto& x) { return x[0] * x[1]; }},
          {"div", [](const auto& x) { return x[0] / x[1]; }}};
}

// conformance/grad_cases.hpp's gradient_cases(), as far as the layer writes them.
DistForms gradient_case_forms() {
  DistForms f = arithmetic_forms();
  f["broadcast_mul"] = [](const auto& x) { return x[0] * dist::sum(x[1], {0}, true); };
  f["sum"] = [](const auto& x) { return dist::sum(x[0], {0}); };
  f["mean"] = [](const auto& x) { return dist::sum(x[0]) * Scalar(1.0 / 6); };
  f["permute"] = [](const auto& x) { return dist::permute(x[0], {1, 0}) * Scalar(2.0); };
  f["reshape"] = [](const auto& x) {
    return dist::reshape(x[0], Shape{2, 3}, x[0].placements()) * Scalar(2.0);
  };
  f["matmul"] = [](const auto& x) { return dist::matmul(x[0], x[1]); };
  f["dot_general"] = [](const auto& x) { return dist::einsum("ki,kj->ij", {x[0], x[1]}); };
  f["einsum"] = [](const auto& x) { return dist::einsum("ij,kj->ik", {x[0], x[1]}); };
  return f;
}

// conformance/grad_cases.hpp's op_grad_cases(), as far as the layer writes them.
DistForms op_grad_case_forms() {
  DistForms f = arithmetic_forms();
  f["broadcast_add"] = [](const auto& x) { return x[0] + dist::sum(x[1], {0}, true); };
  // var(x, {0}) (correction 1) and std_dev(x, {1}, 0, keepdim) by their definitions.
  f["var"] = [](const auto& x) { return squared_deviations(x[0], 0, false) * Scalar(1.0 / 2); };
  f["std"] = [](const auto& x) {
    return mapped(squared_deviations(x[0], 1, true) * Scalar(1.0 / 2), sqrt_of);
  };
  f["sum"] = [](const auto& x) { return dist::sum(x[0], {1}); };
  f["sum_keepdim"] = [](const auto& x) { return dist::sum(x[0], {0}, true) * x[0]; };
  f["mean"] = [](const auto& x) { return dist::sum(x[0], {0, 1}) * Scalar(1.0 / 6); };
  f["matmul"] = [](const auto& x) { return dist::einsum("ij,kj->ik", {x[0], x[1]}); };
  f["dot_general"] = [](const auto& x) { return dist::einsum("ki,kj->ij", {x[0], x[1]}); };
  f["permute"] = [](const auto& x) {
    return dist::permute(x[0], {1, 0}) * dist::permute(x[0], {1, 0});
  };
  f["reshape"] = [](const auto& x) {
    return dist::reshape(x[0], Shape{6}, on_one_axis(x[0].placements()));
  };
  return f;
}

// The case's function with the layer's ops: an elementwise case of one
// input through dist::map, the others from `forms`; empty when the layer
// cannot write it.
bool is_elementwise(const GradCase& c) {
  return c.inputs == 1 &&
         (unary_op_named(c.name).has_value() || one_of(c.name, {"softplus", "clamp"}));
}

DistFn dist_form(const GradCase& c, const DistForms& forms) {
  if (is_elementwise(c)) {
    return [f = c.f](const std::vector<DTensor>& x) {
      return dist::map(x[0], [f](const EagerTensor& t) { return f(std::span(&t, 1)); });
    };
  }
  const auto it = forms.find(c.name);
  return it == forms.end() ? DistFn() : it->second;
}

/// L = Re sum(conj(w) y) for a fixed w (as conformance/gradients_test.cpp).
EagerTensor loss_of(const EagerTensor& y, const Tensor& w) {
  const EagerTensor wt = y.runtime()->tensor(w);
  return sum(is_complex(y.dtype()) ? real(conj(wt) * y) : wt * y);
}

DTensor dist_loss_of(const DTensor& y, const Tensor& w) {
  const Tensor cw = is_complex(w.dtype()) ? conj(w, runtime()->backend()) : w;
  const DTensor wd = dist::distribute(runtime()->tensor(cw), y.mesh(), summed(y.placements()));
  const DTensor prod = y * wd;
  return dist::sum(is_complex(y.dtype()) ? mapped(prod, real_part) : prod);
}

// `f()` raises an Error of `kind`.
template <class F>
void expect_error_kind(F&& f, ErrorKind kind, const std::string& what) {
  try {
    f();
    ADD_FAILURE() << what << ": no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << what << ": " << e.what();
  }
}

/// Gradient comparisons that ran, and the largest relative difference.
struct GradStats {
  int ran = 0;
  int no_gradient = 0;  ///< inputs no derivative reaches, in one process and sharded
  double worst = 0;
};

// One process's loss and gradients of `f` at `inputs`, then the layer's
// through `g` with input k on layout group[(start + k) % size]: the same
// loss, gradients placed like their leaves and equal to 1e-12 relative.
void compare_gradients(const std::string& what,
                       const std::function<EagerTensor(std::span<const EagerTensor>)>& f,
                       const DistFn& g, const std::vector<Tensor>& inputs, std::uint64_t seed,
                       const std::vector<Layout>& group, std::size_t start, GradStats& stats) {
  const auto rt = runtime();
  std::vector<EagerTensor> vars;
  for (const auto& t : inputs) vars.push_back(rt->variable(t));
  const EagerTensor y = f(vars);
  Generator gen(seed);
  const Tensor wr = rand(y.shape(), f64, gen);
  const Tensor w = is_complex(y.dtype()) ? tenferro::complex(wr, rand(y.shape(), f64, gen)) : wr;
  const EagerTensor l = loss_of(y, w);
  // An op that records no derivative (floor, sign, ...) leaves the loss
  // without history: backward refuses, sharded alike on every rank.
  std::optional<ErrorKind> refused;
  try {
    l.backward();
  } catch (const Error& e) {
    refused = e.kind();
  }
  std::vector<DTensor> leaves;
  std::string where;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const Layout& lay = group[(start + k) % group.size()];
    leaves.push_back(put(inputs[k], lay));
    leaves.back().requires_grad_();
    where += (k ? " and " : " on ") + lay.label();
  }
  const DTensor dl = dist_loss_of(g(leaves), w);
  const double lv = l.value().item<double>(), dv = dist::item(dl);
  EXPECT_LE(std::abs(dv - lv), 1e-12 * (1 + std::abs(lv))) << what << where << " loss";
  if (refused) {
    expect_error_kind([&] { dist::backward(dl); }, *refused, what + where);
    stats.no_gradient += static_cast<int>(inputs.size());
    ++stats.ran;
    return;
  }
  dist::backward(dl);
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const DTensor gk = leaves[k].grad();
    if (!vars[k].has_grad()) {
      // No derivative reaches the input (imag of a real tensor, floor, ...):
      // none on any rank, or zeros.
      if (gk.defined()) {
        const Tensor full = dist::full_tensor(gk).value();
        EXPECT_EQ(max_abs_diff(full, zeros(full.shape(), full.dtype())), 0.0) << what << where;
      }
      ++stats.no_gradient;
      continue;
    }
    ASSERT_TRUE(gk.defined()) << what << where << " input " << k << " has no gradient";
    EXPECT_EQ(gk.placements(), summed(leaves[k].placements())) << what << where;
    const double r = rel(dist::full_tensor(gk).value(), vars[k].grad().value());
    EXPECT_LE(r, 1e-12) << what << where << " input " << k;
    stats.worst = std::max(stats.worst, r);
  }
  ++stats.ran;
}

// Every case of `cases` the layer can write, in f64 and (where the case
// takes it) c128, on every layout of each mesh (a case of two inputs with
// the next layout for the second; an elementwise case, whose sharded form
// is the same dist::map for every op, on one layout of each mesh, the
// cases taking turns); the others must be those named in `not_expressible`,
// and the inputs no derivative reaches those of `without_gradient`.
void run_gradient_table(const char* table, const std::vector<GradCase>& cases,
                        const DistForms& forms, const std::set<std::string>& not_expressible,
                        const std::set<std::string>& without_gradient) {
  for (const auto& [nm, fn] : forms) {
    EXPECT_TRUE(
        std::any_of(cases.begin(), cases.end(), [&](const auto& c) { return c.name == nm; }))
        << table << " has no case '" << nm << "' for its sharded form";
  }
  GradStats stats;
  int wanted = 0;
  std::set<std::string> expressed, skipped, no_gradient;
  int elementwise = 0;
  for (std::size_t index = 0; index < cases.size(); ++index) {
    const GradCase& c = cases[index];
    const DistFn g = dist_form(c, forms);
    if (!g) {
      skipped.insert(c.name);
      continue;
    }
    expressed.insert(c.name);
    elementwise += is_elementwise(c);
    for (const DType dt : {f64, c128}) {
      if (is_complex(dt) && !c.complex_ok) continue;
      Generator gen(7);
      std::vector<Tensor> inputs;
      for (int k = 0; k < c.inputs; ++k) inputs.push_back(tftest::random_input(c, dt, gen));
      const std::string what = std::string(c.name) + " " + std::string(name(dt));
      const int none_before = stats.no_gradient;
      for (const dist::Mesh* mesh : meshes()) {
        const std::vector<Layout> group = layouts_on(*mesh);
        for (std::size_t s = 0; s < group.size(); ++s) {
          if (is_elementwise(c) && s != (index + is_complex(dt)) % group.size()) continue;
          ++wanted;
          run_case(std::string(table) + " " + what,
                   [&] { compare_gradients(what, c.f, g, inputs, 11, group, s, stats); });
        }
      }
      if (stats.no_gradient > none_before) no_gradient.insert(what);
    }
  }
  EXPECT_EQ(skipped, not_expressible) << table;
  EXPECT_EQ(no_gradient, without_gradient) << table;
  EXPECT_EQ(expressed.size() + skipped.size(), cases.size()) << table;
  EXPECT_EQ(stats.ran, wanted) << table;
  EXPECT_GT(stats.ran, 0);
  char worst[32];
  std::snprintf(worst, sizeof worst, "%.1e", stats.worst);
  summary(std::string(table) + ": " + std::to_string(expressed.size()) + " of " +
          std::to_string(cases.size()) + " cases expressible (" + std::to_string(elementwise) +
          " elementwise), " + std::to_string(stats.ran) +
          " sharded gradient comparisons (worst relative difference " + worst + ", " +
          std::to_string(stats.no_gradient) + " inputs no derivative reaches), " +
          std::to_string(skipped.size()) + " not expressible");
}

}  // namespace

TEST(ConformanceDist, GradientCasesThroughBackwardEqualOneProcess) {
  run_gradient_table("gradient_cases", tftest::gradient_cases(), gradient_case_forms(),
                     words("maximum where max slice pad concatenate reverse tile diagonal kron"),
                     {});
}

TEST(ConformanceDist, OpGradCasesThroughBackwardEqualOneProcess) {
  run_gradient_table(
      "op_grad_cases", tftest::op_grad_cases(), op_grad_case_forms(),
      words("pow maximum minimum atan2 hypot copysign fmod remainder where prod max min logsumexp "
            "broadcast_in_dim slice pad concatenate stack reverse diagonal diag_embed tril "
            "triu index_select take_along_axis scatter_add"),
      {"angle f64", "imag f64", "sgn f64"});
}

TEST(ConformanceDist, EveryUnaryDescriptorsGradientThroughMapEqualsOneProcess) {
  // Each descriptor with a floating result, in f64 and (unless it refuses
  // it) c128, at points strictly inside its value row's inputs, on one
  // layout of each mesh (the descriptors take turns through the layouts).
  // An op no derivative goes through has none sharded either.
  GradStats stats;
  int wanted = 0;
  std::set<std::string> covered, differentiated, no_float_result, no_derivative;
  for (int i = 0; i < kUnaryOpCount; ++i) {
    const auto op = static_cast<UnaryOp>(i);
    const std::string nm(descriptor(op).name);
    const auto row = tftest::unary_rows().find(nm);
    ASSERT_NE(row, tftest::unary_rows().end()) << nm;
    const auto f = [op](std::span<const EagerTensor> z) { return unary(op, z[0]); };
    const DistFn g = [op](const std::vector<DTensor>& x) {
      return dist::map(x[0], [op](const EagerTensor& t) { return unary(op, t); });
    };
    for (const DType dt : {f64, c128}) {
      if (is_complex(dt) && !descriptor(op).complex_advice.empty()) continue;
      const std::string what = nm + " " + std::string(name(dt));
      covered.insert(nm);
      if (!is_inexact(unary_result_dtype(op, dt))) {
        no_float_result.insert(what);
        continue;
      }
      const Tensor full = row_grid(row->second.a, dt, 500 + static_cast<std::uint64_t>(i), true);
      const int none_before = stats.no_gradient;
      for (const dist::Mesh* mesh : meshes()) {
        const std::vector<Layout> group = layouts_on(*mesh);
        ++wanted;
        run_case(what, [&] {
          compare_gradients(what, f, g, {full}, 600 + static_cast<std::uint64_t>(i), group,
                            static_cast<std::size_t>(i) % group.size(), stats);
        });
      }
      (stats.no_gradient > none_before ? no_derivative : differentiated).insert(what);
    }
  }
  EXPECT_EQ(stats.ran, wanted);
  EXPECT_EQ(static_cast<int>(covered.size()), kUnaryOpCount);
  // Bool and integer results, and the ops without a derivative: a new
  // descriptor in neither list must have a gradient that matches.
  EXPECT_EQ(no_float_result, (std::set<std::string>{"frexp_exponent f64", "isfinite c128",
                                                    "isfinite f64", "isnan c128", "isnan f64",
                                                    "logical_not c128", "logical_not f64"}));
  EXPECT_EQ(no_derivative,
            (std::set<std::string>{"angle f64", "ceil f64", "floor f64", "imag f64", "round f64",
                                   "sgn f64", "sign f64", "trunc f64"}));
  char worst[32];
  std::snprintf(worst, sizeof worst, "%.1e", stats.worst);
  summary("unary gradients: " + std::to_string(differentiated.size()) + " (op, dtype) with a " +
          "derivative, " + std::to_string(stats.ran) + " sharded comparisons (worst " + worst +
          "); " + std::to_string(no_float_result.size()) + " with a bool or integer result, " +
          std::to_string(no_derivative.size()) + " without a derivative (none sharded either)");
}

TEST(ConformanceDist, EveryUnaryDescriptorsGradientInATracedProgramEqualsOneProcess) {
  // The traced tier: per dtype one program holds, for every descriptor with
  // a floating result, L = Re sum(conj(w) op(x)) of its own sharded input
  // (the descriptors taking turns through the layouts) and dist::grad's
  // gradient; each equals one process's eager gradient (zeros where no
  // derivative reaches x).
  const auto rt = runtime();
  const std::size_t n_layouts = layouts().size();
  int compared = 0, expected = 0, zero = 0;
  std::vector<int> per_layout(n_layouts, 0);
  GradStats stats;
  for (const DType dt : {f64, c128}) {
    std::vector<UnaryOp> ops;
    std::vector<Tensor> inputs, weights, wants;
    for (int i = 0; i < kUnaryOpCount; ++i) {
      const auto op = static_cast<UnaryOp>(i);
      if (is_complex(dt) && !descriptor(op).complex_advice.empty()) continue;
      if (!is_inexact(unary_result_dtype(op, dt))) continue;
      const auto row = tftest::unary_rows().find(descriptor(op).name);
      ASSERT_NE(row, tftest::unary_rows().end()) << descriptor(op).name;
      const Tensor x = row_grid(row->second.a, dt, 800 + static_cast<std::uint64_t>(i), true);
      Generator gen(900 + static_cast<std::uint64_t>(i));
      const DType rdt = unary_result_dtype(op, dt);
      const Tensor wr = rand({5, 4}, f64, gen);
      const Tensor w = is_complex(rdt) ? tenferro::complex(wr, rand({5, 4}, f64, gen)) : wr;
      EagerTensor v = rt->variable(x);
      try {
        loss_of(unary(op, v), w).backward();
      } catch (const Error&) {  // no history: no derivative reaches x
      }
      ops.push_back(op);
      inputs.push_back(x);
      weights.push_back(is_complex(rdt) ? conj(w, rt->backend()) : w);
      wants.push_back(v.has_grad() ? v.grad().value() : zeros({5, 4}, dt));
      zero += !v.has_grad();
    }
    const auto layout_of = [&](std::size_t k) { return (k + is_complex(dt)) % n_layouts; };
    expected += static_cast<int>(ops.size());
    run_case(std::string(name(dt)) + " gradient program", [&] {
      std::vector<TracedTensor> xs, ys;
      for (std::size_t k = 0; k < ops.size(); ++k) {
        const UnaryOp op = ops[k];
        const Layout& l = layouts()[layout_of(k)];
        xs.push_back(placeholder(dt, {5, 4}));
        const TracedTensor w = placeholder(weights[k].dtype(), {5, 4});
        const dist::TracedDTensor d = dist::distribute(xs.back(), *l.mesh, l.placements);
        const dist::TracedDTensor y =
            dist::map(d, [op](const TracedTensor& t) { return unary(op, t); });
        dist::TracedDTensor prod = y * dist::distribute(w, *l.mesh, summed(y.placements()));
        if (is_complex(prod.dtype()))
          prod = dist::map(prod, [](const TracedTensor& t) { return real(t); });
        const auto g = dist::grad(dist::sum(prod), {d});
        EXPECT_EQ(g[0].placements(), summed(l.placements));
        ys.push_back(dist::full_tensor(g[0]));
        xs.push_back(w);
      }
      std::vector<Tensor> in;
      for (std::size_t k = 0; k < ops.size(); ++k) {
        in.push_back(inputs[k]);
        in.push_back(weights[k]);
      }
      const std::vector<Tensor> out = run_compiled(*rt->runtime(), compile(ys, xs), in);
      ASSERT_EQ(out.size(), ops.size());
      for (std::size_t k = 0; k < ops.size(); ++k) {
        const double r = rel(out[k], wants[k]);
        EXPECT_LE(r, 1e-12) << name(ops[k]) << " " << name(dt) << " (traced) on "
                            << layouts()[layout_of(k)].label();
        stats.worst = std::max(stats.worst, r);
        ++per_layout[layout_of(k)];
        ++compared;
      }
    });
  }
  EXPECT_EQ(compared, expected);
  EXPECT_EQ(std::count(per_layout.begin(), per_layout.end(), 0), 0);
  EXPECT_EQ(zero, 8);  // the (op, dtype) of the eager test without a derivative
  char worst[32];
  std::snprintf(worst, sizeof worst, "%.1e", stats.worst);
  summary("unary gradients, traced: 2 programs, " + std::to_string(compared) +
          " sharded gradients (worst " + worst + ", " + std::to_string(zero) +
          " (op, dtype) zero)");
}
