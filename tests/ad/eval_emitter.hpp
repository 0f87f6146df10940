#pragma once
// Test-only emitter whose values are concrete tensors (emit runs the
// primitive on a CpuBackend), and a checker for core AD rules:
//   jvp against central finite differences along the tangent direction;
//   Re<c, J t> == Re<J^T c, t> with J^T c from backward_op
//     (linearise-then-transpose, so every transpose rule is exercised);
//   both drivers run with only the declared residuals valid.

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tenferro/ad/linearize.hpp"
#include "tenferro/ops/primitives.hpp"
#include "tenferro/tenferro.hpp"

namespace adtest {

using namespace tenferro;
using ad::MaybeVal;
using ad::Val;

class EvalEmitter final : public ad::Emitter {
 public:
  explicit EvalEmitter(Backend& backend) : backend_(backend) {}

  Val put(Tensor t) {
    values_.push_back(std::move(t));
    return Val{static_cast<std::int64_t>(values_.size() - 1)};
  }
  const Tensor& get(Val v) const {
    if (!v.valid()) throw std::runtime_error("EvalEmitter: read of an invalid Val");
    return values_.at(static_cast<std::size_t>(v.id));
  }
  std::vector<Val> emit(const OpPtr& op, std::span<const Val> inputs) override {
    const auto* prim = dynamic_cast<const PrimitiveOp*>(op.get());
    if (prim == nullptr) throw std::runtime_error("EvalEmitter: only core primitives");
    std::vector<Tensor> in;
    for (Val v : inputs) in.push_back(get(v));
    ++emitted_;
    return {put(execute_primitive(*prim, in, backend_))};
  }
  TensorMeta meta(Val v) const override {
    const Tensor& t = get(v);
    return {t.dtype(), to_sym_shape(t.shape())};
  }
  std::size_t emitted() const { return emitted_; }

 private:
  Backend& backend_;
  std::vector<Tensor> values_;
  std::size_t emitted_ = 0;
};

/// Re(sum conj(a) * b) over all elements (any dtypes, equal shapes).
inline double re_inner(const Tensor& a, const Tensor& b, Backend& backend) {
  const auto va = cast(a, DType::C128, backend).to_vector<c128_t>();
  const auto vb = cast(b, DType::C128, backend).to_vector<c128_t>();
  double s = 0.0;
  for (std::size_t i = 0; i < va.size(); ++i) s += (std::conj(va[i]) * vb[i]).real();
  return s;
}

inline double max_abs(const Tensor& a, Backend& backend) {
  double m = 0.0;
  for (c128_t v : cast(a, DType::C128, backend).to_vector<c128_t>()) m = std::max(m, std::abs(v));
  return m;
}

using OpHandle = std::shared_ptr<const PrimitiveOp>;

struct CheckOptions {
  bool finite_differences = true;
  double fd_step = 1e-6;
  double fd_tol = 1e-6;  // relative to 1 + max |jvp|
  double adjoint_tol = 1e-10;
  bool no_derivative = false;  // expect zero derivative (no tangent/cotangent at all)
};

class RuleChecker {
 public:
  explicit RuleChecker(std::uint64_t seed = 7) : gen_(seed) {}

  Backend& backend() { return cpu_; }
  const ad::AdContext& ctx() const { return *ctx_; }
  Generator& gen() { return gen_; }

  Tensor run(const OpHandle& op, const std::vector<Tensor>& in) {
    return execute_primitive(*op, in, cpu_);
  }

  Tensor random(const Shape& shape, DType dtype) { return randn(shape, dtype, gen_); }

  static std::vector<TensorMeta> metas(const std::vector<Tensor>& xs) {
    std::vector<TensorMeta> out;
    for (const Tensor& x : xs) out.push_back({x.dtype(), to_sym_shape(x.shape())});
    return out;
  }

  /// forward_op with only the declared residuals valid.
  std::vector<std::optional<Tensor>> jvp(const OpHandle& op, const std::vector<Tensor>& in,
                                         const std::vector<std::optional<Tensor>>& tangents) {
    const ad::RuleSet& rules = ctx_->require(*op, "test");
    const Tensor y = run(op, in);
    EvalEmitter em(cpu_);
    std::vector<Val> ins(in.size()), outs(1);
    std::vector<MaybeVal> tv(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) {
      if (rules.residuals.input(i)) ins[i] = em.put(in[i]);
      if (tangents[i]) tv[i] = em.put(*tangents[i]);
    }
    if (rules.residuals.output(0)) outs[0] = em.put(y);
    const auto m = metas(in);
    std::vector<MaybeVal> r = ad::forward_op(*ctx_, em, *op, ins, outs, tv, "test", m);
    std::vector<std::optional<Tensor>> out;
    for (const auto& v : r) out.push_back(v ? std::optional<Tensor>(em.get(*v)) : std::nullopt);
    return out;
  }

  /// backward_op (J^T c) with only the declared residuals valid; `wanted`
  /// as RuleArgs::wanted (empty: every input).
  std::vector<std::optional<Tensor>> vjp(const OpHandle& op, const std::vector<Tensor>& in,
                                         const Tensor& c, std::span<const bool> wanted = {}) {
    const ad::RuleSet& rules = ctx_->require(*op, "test");
    const Tensor y = run(op, in);
    EvalEmitter em(cpu_);
    std::vector<Val> ins(in.size()), outs(1);
    for (std::size_t i = 0; i < in.size(); ++i) {
      if (rules.residuals.input(i)) ins[i] = em.put(in[i]);
    }
    if (rules.residuals.output(0)) outs[0] = em.put(y);
    const MaybeVal ct[1] = {em.put(c)};
    const auto m = metas(in);
    std::vector<MaybeVal> r = ad::backward_op(*ctx_, em, *op, m, ins, outs, ct, "test", {}, wanted);
    std::vector<std::optional<Tensor>> out;
    for (const auto& v : r) out.push_back(v ? std::optional<Tensor>(em.get(*v)) : std::nullopt);
    return out;
  }

  /// The three checks on one op application with random tangents/cotangent.
  void check(const OpHandle& op, const std::vector<Tensor>& in, const std::string& label,
             CheckOptions opt = {}) {
    SCOPED_TRACE(label + ": " + op->describe());
    const Tensor y = run(op, in);
    std::vector<std::optional<Tensor>> t(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) {
      if (ad::differentiable(in[i].dtype())) t[i] = random(in[i].shape(), in[i].dtype());
    }
    std::vector<std::optional<Tensor>> jt;
    ASSERT_NO_THROW(jt = jvp(op, in, t));
    ASSERT_EQ(jt.size(), 1u);
    const Tensor c =
        ad::differentiable(y.dtype()) ? random(y.shape(), y.dtype()) : zeros(y.shape(), y.dtype());
    std::vector<std::optional<Tensor>> g;
    ASSERT_NO_THROW(g = vjp(op, in, c));
    ASSERT_EQ(g.size(), in.size());
    if (opt.no_derivative) {
      EXPECT_FALSE(jt[0].has_value());
      for (const auto& gi : g) EXPECT_FALSE(gi.has_value());
      ++checked_;
      return;
    }
    if (jt[0]) {
      EXPECT_EQ(jt[0]->dtype(), y.dtype());
      EXPECT_EQ(jt[0]->shape(), y.shape());
    }
    if (opt.finite_differences) {
      std::vector<Tensor> plus, minus;
      for (std::size_t i = 0; i < in.size(); ++i) {
        if (!t[i]) {
          plus.push_back(in[i]);
          minus.push_back(in[i]);
          continue;
        }
        const Tensor step = mul(*t[i], Tensor::scalar(opt.fd_step, in[i].dtype()), cpu_);
        plus.push_back(add(in[i], step, cpu_));
        minus.push_back(sub(in[i], step, cpu_));
      }
      const Tensor fd = div(sub(run(op, plus), run(op, minus), cpu_),
                            Tensor::scalar(2.0 * opt.fd_step, y.dtype()), cpu_);
      const Tensor j = jt[0] ? *jt[0] : zeros(y.shape(), y.dtype());
      const double scale = 1.0 + max_abs(j, cpu_);
      EXPECT_LE(max_abs(sub(fd, j, cpu_), cpu_), opt.fd_tol * scale) << "jvp vs finite differences";
    }
    // Adjoint consistency.
    const double lhs = jt[0] ? re_inner(c, *jt[0], cpu_) : 0.0;
    double rhs = 0.0;
    for (std::size_t i = 0; i < in.size(); ++i) {
      if (!g[i]) continue;
      EXPECT_TRUE(t[i].has_value()) << "cotangent for a non-differentiable input " << i;
      EXPECT_EQ(g[i]->dtype(), in[i].dtype()) << "input " << i;
      EXPECT_EQ(g[i]->shape(), in[i].shape()) << "input " << i;
      if (t[i]) rhs += re_inner(*g[i], *t[i], cpu_);
    }
    EXPECT_NEAR(lhs, rhs, opt.adjoint_tol * (1.0 + std::abs(lhs))) << "Re<c, J t> vs Re<J^T c, t>";
    // One input wanted at a time (an untracked operand beside a tracked
    // one): that input's cotangent is the full one, the others are skipped.
    if (in.size() > 1) {
      for (std::size_t i = 0; i < in.size(); ++i) {
        auto wanted = std::make_unique<bool[]>(in.size());  // all false
        wanted[i] = true;
        std::vector<std::optional<Tensor>> gi;
        ASSERT_NO_THROW(gi = vjp(op, in, c, std::span<const bool>(wanted.get(), in.size())));
        ASSERT_EQ(gi.size(), in.size());
        for (std::size_t q = 0; q < in.size(); ++q) {
          if (q != i) {
            EXPECT_FALSE(gi[q].has_value()) << "input " << q << " was not wanted";
          } else if (!g[i]) {
            EXPECT_FALSE(gi[i].has_value()) << "input " << i << " alone";
          } else {
            ASSERT_TRUE(gi[i].has_value()) << "input " << i << " alone";
            const double scale = 1.0 + max_abs(*g[i], cpu_);
            EXPECT_LE(max_abs(sub(*gi[i], *g[i], cpu_), cpu_), 1e-12 * scale)
                << "input " << i << " alone vs all inputs";
          }
        }
      }
    }
    ++checked_;
  }

  int checked() const { return checked_; }

 private:
  CpuBackend cpu_;
  std::shared_ptr<ad::AdContext> ctx_ = ad::AdContext::with_core_rules();
  Generator gen_;
  int checked_ = 0;
};

/// Values of any tensor as doubles (real part), for value assertions.
inline std::vector<double> values(const Tensor& t, Backend& backend) {
  return cast(t, DType::F64, backend).to_vector<double>();
}

}  // namespace adtest
