#include "custom_families.hpp"

#include <cmath>
#include <limits>

namespace custom {

using tenferro::ErrorKind;
using tenferro::Tensor;
using tenferro::ad::MaybeVal;
using tenferro::ad::RuleArgs;
using tenferro::ad::Val;

tenferro::InferenceResult SoftSquare::infer(std::span<const tenferro::TensorMeta> in) const {
  if (in[0].dtype != tenferro::f64)
    tenferro::fail(ErrorKind::DTypeMismatch, std::string(name()), "needs f64 input");
  return {{in[0]}, {}};
}

tenferro::InferenceResult MaxPlusMatmul::infer(std::span<const tenferro::TensorMeta> in) const {
  if (in[0].dtype != tenferro::f64 || in[1].dtype != tenferro::f64) {
    tenferro::fail(ErrorKind::DTypeMismatch, std::string(name()), "needs f64 inputs");
  }
  if (in[0].rank() != 2 || in[1].rank() != 2) {
    tenferro::fail(ErrorKind::RankMismatch, std::string(name()), "needs two matrices");
  }
  tenferro::TensorMeta out{tenferro::f64, {in[0].shape[0], in[1].shape[1]}};
  return {{out},
          {tenferro::ShapeConstraint::dims_equal(in[0].shape[1], in[1].shape[0],
                                                 "inner extents must agree")}};
}

namespace {
std::shared_ptr<tenferro::SimpleModule> make_kernels() {
  auto module = std::make_shared<tenferro::SimpleModule>("custom.families");
  module->family<SoftSquare>([](const SoftSquare&, tenferro::ExecutionScope& scope,
                                tenferro::ExtensionCaches&, std::span<const Tensor> in) {
    Tensor x = scope.compact(in[0]);
    Tensor y = scope.backend().empty(x.shape(), x.dtype());
    const double* xs = x.data<double>();
    double* ys = static_cast<double*>(y.raw_data());
    for (std::int64_t i = 0; i < x.numel(); ++i) ys[i] = std::log1p(xs[i] * xs[i]);
    return std::vector<Tensor>{y};
  });
  module->family<MaxPlusMatmul>([](const MaxPlusMatmul&, tenferro::ExecutionScope& scope,
                                   tenferro::ExtensionCaches&, std::span<const Tensor> in) {
    Tensor a = scope.compact(in[0]), b = scope.compact(in[1]);
    const std::int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
    Tensor c = scope.backend().empty({m, n}, tenferro::f64);
    const double* A = a.data<double>();
    const double* B = b.data<double>();
    double* C = static_cast<double*>(c.raw_data());
    for (std::int64_t j = 0; j < n; ++j) {
      for (std::int64_t i = 0; i < m; ++i) {
        double best = -std::numeric_limits<double>::infinity();
        for (std::int64_t p = 0; p < k; ++p) best = std::max(best, A[i + p * m] + B[p + j * k]);
        C[i + j * m] = best;
      }
    }
    return std::vector<Tensor>{c};
  });
  return module;
}
}  // namespace

tenferro::ExtensionModulePtr make_module() {
  // Built once: the install-ensure path calls the factory on every call.
  static const tenferro::ExtensionModulePtr module =
      tenferro::ad::with_rules(make_kernels(), family_rules());
  return module;
}

tenferro::ad::FamilyRules family_rules() {
  // softsquare: dy = 2x / (1 + x^2) dx. Only a jvp rule: backward transposes it.
  tenferro::ad::RuleSet soft;
  soft.residuals = tenferro::ad::Residuals::of({0}, {});
  soft.jvp = [](const RuleArgs& a, std::span<const MaybeVal> t) -> std::vector<MaybeVal> {
    if (!t[0]) return {std::nullopt};
    auto& e = a.emitter;
    const Val x = a.inputs[0];
    const Val slope = e.div(e.scale(x, 2.0), e.add(e.ones_like(x), e.mul(x, x)));
    return {e.mul(slope, *t[0])};
  };

  // maxplus: dC[i,j] = dA[i,k*] + dB[k*,j] at the unique winner k* (a
  // subgradient; ties are assumed away). The winner mask comes from the primal
  // values; the tangent part is linear, so reverse mode is its transpose.
  tenferro::ad::RuleSet maxplus;
  maxplus.residuals = tenferro::ad::Residuals::of({0, 1}, {0});
  maxplus.jvp = [](const RuleArgs& a, std::span<const MaybeVal> t) -> std::vector<MaybeVal> {
    auto& e = a.emitter;
    const auto sa = e.meta(a.inputs[0]).shape, sb = e.meta(a.inputs[1]).shape;
    const tenferro::SymShape cube{sa[0], sa[1], sb[1]};  // [i, k, j]
    const Val s = e.add(e.broadcast_in_dim(a.inputs[0], cube, {0, 1}),
                        e.broadcast_in_dim(a.inputs[1], cube, {1, 2}));
    const Val winner = e.convert(
        e.binary(tenferro::BinaryOp::Eq, s, e.broadcast_in_dim(a.outputs[0], cube, {0, 2})),
        tenferro::f64);
    std::optional<Val> tsum;
    if (t[0]) tsum = e.broadcast_in_dim(*t[0], cube, {0, 1});
    if (t[1]) {
      const Val tb = e.broadcast_in_dim(*t[1], cube, {1, 2});
      tsum = tsum ? e.add(*tsum, tb) : tb;
    }
    if (!tsum) return {std::nullopt};
    return {e.sum(e.mul(winner, *tsum), {1})};
  };
  return {{tenferro::FamilyId(std::string(SoftSquare::kFamily)), soft},
          {tenferro::FamilyId(std::string(MaxPlusMatmul::kFamily)), maxplus}};
}

namespace {
// The family installs itself (module and rules) on a runtime's first call.
tenferro::ExtensionModulePtr module_for(const tenferro::EagerExtensionTarget& target) {
  if (!(target.engine == tenferro::cpu_engine_id())) {
    tenferro::fail(ErrorKind::Unsupported, "custom.families",
                   "only the CPU engine is supported, not ", target.engine.str());
  }
  return make_module();
}
}  // namespace

tenferro::EagerTensor softsquare(const tenferro::EagerTensor& x) {
  const tenferro::EagerTensor in[1] = {x};
  return tenferro::apply_eager_with_module_factory(std::make_shared<SoftSquare>(), in,
                                                   module_for)[0];
}

tenferro::EagerTensor maxplus_matmul(const tenferro::EagerTensor& a,
                                     const tenferro::EagerTensor& b) {
  const tenferro::EagerTensor in[2] = {a, b};
  return tenferro::apply_eager_with_module_factory(std::make_shared<MaxPlusMatmul>(), in,
                                                   module_for)[0];
}

}  // namespace custom
