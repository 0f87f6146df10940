// The eager tier's fixed_point (tenferro/ad/control_flow.hpp): iterates f on
// eager tensors without recording, then records one op whose rules emit the
// implicit derivatives as traced programs run as eager ops.

#include <cmath>
#include <map>
#include <mutex>

#include "ad/eager/impl.hpp"
#include "ad/program/graph.hpp"
#include "ad/traced/fixed_point_rules.hpp"
#include "tenferro/ad/control_flow.hpp"
#include "tenferro/ad/linearize.hpp"
#include "tenferro/ad/ops.hpp"
#include "tenferro/ad/transforms.hpp"
#include "tenferro/runtime/module.hpp"
#include "tenferro/runtime/runtime.hpp"
#include "tenferro/runtime/simple_family.hpp"

namespace tenferro {

namespace {

constexpr const char* kOp = "fixed_point";

// ---- a traced program as an eager op ---------------------------------------------------

/// Runs a traced program (prepared once, cached in the runtime attached to
/// the backend) as one op. Its derivatives are the program's jvp and vjp
/// transforms, run as ops of the same kind, so they compose to any order.
class ProgramOp final : public ExtensionOp, public SelfInstallingOp, public ad::RuleCarryingOp {
 public:
  static constexpr std::string_view kFamily = "tenferro.program.v1";
  explicit ProgramOp(Program program)
      : family_(std::string(kFamily)), program_(std::move(program)) {}
  const Program& program() const { return program_; }
  const FamilyId& family_id() const override { return family_; }
  std::size_t input_count() const override { return program_.input_count(); }
  std::size_t output_count() const override { return program_.output_count(); }
  std::size_t hash() const override { return hash_combine(0x70726f67, program_.fingerprint()); }
  bool equals(const Op& other) const override {
    const auto* o = dynamic_cast<const ProgramOp*>(&other);
    return o != nullptr && o->program_.graph() == program_.graph() &&
           o->program_.constants_ptr() == program_.constants_ptr();
  }
  std::string describe() const override {
    return "program(" + std::to_string(program_.node_count()) + " ops)";
  }
  InferenceResult infer(std::span<const TensorMeta> inputs) const override {
    for (std::size_t i = 0; i < inputs.size() && i < program_.input_count(); ++i) {
      if (!(inputs[i] == program_.input_meta(i))) {
        fail(ErrorKind::ShapeMismatch, std::string(family_.str()), "input ", i,
             " does not match the program's input ", i);
      }
    }
    InferenceResult r;
    for (std::size_t j = 0; j < program_.output_count(); ++j) {
      r.outputs.push_back(program_.output_meta(j));
    }
    return r;
  }
  ExtensionModulePtr module_for(const EngineRegistration& engine) const override;
  const ad::RuleSet& ad_rules() const override;

  /// The program's jvp and vjp as ops (made once).
  const std::shared_ptr<const ProgramOp>& jvp_op() const {
    std::call_once(jvp_once_, [&] { jvp_ = std::make_shared<const ProgramOp>(jvp(program_)); });
    return jvp_;
  }
  const std::shared_ptr<const ProgramOp>& vjp_op() const {
    std::call_once(vjp_once_, [&] { vjp_ = std::make_shared<const ProgramOp>(vjp(program_)); });
    return vjp_;
  }

 private:
  FamilyId family_;
  Program program_;
  mutable std::once_flag jvp_once_, vjp_once_;
  mutable std::shared_ptr<const ProgramOp> jvp_, vjp_;
};

class ProgramExecutor final : public PlanExecutor {
 public:
  explicit ProgramExecutor(Program program) : program_(std::move(program)) {}
  std::vector<Tensor> execute(ExecutionContext& context, ExtensionCaches&,
                              std::span<const Tensor> inputs) const override {
    const EagerRuntimePtr rt = EagerRuntime::attached(context.backend());
    return run_compiled(*rt->runtime(), program_, inputs);
  }

 private:
  Program program_;
};

class ProgramEngine final : public ExtensionEngine {
 public:
  PrepareOutcome prepare(const PrepareRequest& request) const override {
    const auto* op = dynamic_cast<const ProgramOp*>(&request.op);
    if (op == nullptr) {
      fail(ErrorKind::InvalidArgument, std::string(request.op.name()),
           "invalid payload: the program engine expects a program op");
    }
    return Prepared{std::make_shared<const ProgramExecutor>(op->program())};
  }
};

ExtensionModulePtr ProgramOp::module_for(const EngineRegistration& engine) const {
  static const ModulesByEngine modules([](const EngineId& id) {
    auto module = std::make_shared<SimpleModule>("tenferro.program");
    module->engine(FamilyId{std::string(kFamily)}, id, std::make_shared<const ProgramEngine>());
    return module;
  });
  return modules.get(engine.id());
}

/// The direction for each slot, a zero where none is given.
std::vector<ad::Val> with_zeros(ad::Emitter& em, std::span<const ad::MaybeVal> given,
                                std::span<const TensorMeta> metas) {
  std::vector<ad::Val> r;
  for (std::size_t k = 0; k < given.size(); ++k) {
    r.push_back(given[k] ? *given[k] : em.full(metas[k].shape, Scalar(0.0), metas[k].dtype));
  }
  return r;
}

bool none(std::span<const ad::MaybeVal> vs) {
  for (const auto& v : vs)
    if (v) return false;
  return true;
}

std::vector<ad::MaybeVal> program_jvp(const ad::RuleArgs& a, std::span<const ad::MaybeVal> t) {
  const auto& op = static_cast<const ProgramOp&>(a.op);
  const std::size_t outs = op.output_count();
  if (none(t)) return std::vector<ad::MaybeVal>(outs);
  std::vector<ad::Val> ins(a.inputs.begin(), a.inputs.end());
  for (const ad::Val v : with_zeros(a.emitter, t, a.input_metas)) ins.push_back(v);
  const std::vector<ad::Val> r = a.emitter.emit(op.jvp_op(), ins);
  return std::vector<ad::MaybeVal>(r.begin() + static_cast<std::ptrdiff_t>(outs), r.end());
}

std::vector<ad::MaybeVal> program_vjp(const ad::RuleArgs& a, std::span<const ad::MaybeVal> ct) {
  const auto& op = static_cast<const ProgramOp&>(a.op);
  const std::size_t outs = op.output_count();
  if (none(ct)) return std::vector<ad::MaybeVal>(a.inputs.size());
  std::vector<ad::Val> ins(a.inputs.begin(), a.inputs.end());
  for (const ad::Val v : with_zeros(a.emitter, ct, a.output_metas)) ins.push_back(v);
  const std::vector<ad::Val> r = a.emitter.emit(op.vjp_op(), ins);
  std::vector<ad::MaybeVal> g(r.begin() + static_cast<std::ptrdiff_t>(outs), r.end());
  for (std::size_t k = 0; k < g.size(); ++k) {
    if (!a.wants(k) || !ad::differentiable(a.input_metas[k].dtype)) g[k].reset();
  }
  return g;
}

const ad::RuleSet& ProgramOp::ad_rules() const {
  static const ad::RuleSet r = [] {
    ad::RuleSet s;
    s.jvp = program_jvp;
    s.vjp = program_vjp;
    s.residuals = ad::Residuals{~std::uint64_t{0}, 0};  // the inputs
    return s;
  }();
  return r;
}

// ---- the recorded fixed point ----------------------------------------------------------

/// Records x* = fixed_point(f, ., params): inputs the parameters, outputs the
/// solution. Never run: the eager fixed_point computes x* and records this op
/// over it. Its rules run the implicit derivatives (fixed_point_rules.hpp)
/// as traced programs over (x*, params, directions).
class FixedPointEagerOp final : public ExtensionOp, public ad::RuleCarryingOp {
 public:
  static constexpr std::string_view kFamily = "tenferro.fixed_point.v1";
  FixedPointEagerOp(Program f, std::size_t states, FixedPointOptions options)
      : family_(std::string(kFamily)), f_(std::move(f)), states_(states), options_(options) {}
  const FamilyId& family_id() const override { return family_; }
  std::size_t input_count() const override { return f_.input_count() - states_; }
  std::size_t output_count() const override { return states_; }
  std::size_t hash() const override { return hash_combine(0x66786570, f_.fingerprint()); }
  bool equals(const Op& other) const override { return &other == this; }
  std::string describe() const override {
    return "fixed_point(" + std::to_string(f_.node_count()) + " ops)";
  }
  InferenceResult infer(std::span<const TensorMeta>) const override {
    InferenceResult r;
    for (std::size_t k = 0; k < states_; ++k) r.outputs.push_back(f_.input_meta(k));
    return r;
  }
  const ad::RuleSet& ad_rules() const override;
  std::size_t states() const { return states_; }

  /// The program (x*..., params..., tangents of the parameters in `mask`)
  /// -> the solution's tangents.
  std::shared_ptr<const ProgramOp> tangent_op(std::uint64_t mask) const {
    std::lock_guard lock(mutex_);
    auto& slot = tangents_[mask];
    if (slot) return slot;
    const std::vector<TracedTensor> in = detail::placeholders_for(f_);
    const auto xs = std::span(in).first(states_);
    const auto ps = std::span(in).subspan(states_);
    std::vector<TracedTensor> all = in;
    std::vector<std::optional<TracedTensor>> dps(ps.size());
    for (std::size_t k = 0; k < ps.size(); ++k) {
      if (!((mask >> k) & 1U)) continue;
      dps[k] = placeholder(ps[k].dtype(), ps[k].shape());
      all.push_back(*dps[k]);
    }
    const auto dx = detail::fixed_point_tangent(f_, xs, ps, dps, options_, ad::core_rules());
    std::vector<TracedTensor> outs;
    for (std::size_t k = 0; k < states_; ++k) {
      outs.push_back(dx[k] ? *dx[k] : traced_full(xs[k].shape(), Scalar(0.0), xs[k].dtype()));
    }
    slot = std::make_shared<const ProgramOp>(compile(outs, all));
    return slot;
  }

  /// The program (x*..., params..., cotangents of x*) -> the parameters'
  /// cotangents (zeros where none).
  std::shared_ptr<const ProgramOp> cotangent_op() const {
    std::lock_guard lock(mutex_);
    if (cotangent_) return cotangent_;
    const std::vector<TracedTensor> in = detail::placeholders_for(f_);
    const auto xs = std::span(in).first(states_);
    const auto ps = std::span(in).subspan(states_);
    std::vector<TracedTensor> all = in;
    std::vector<std::optional<TracedTensor>> ybar;
    for (const auto& x : xs) {
      ybar.emplace_back(placeholder(x.dtype(), x.shape()));
      all.push_back(*ybar.back());
    }
    const auto g = detail::fixed_point_cotangent(f_, xs, ps, ybar, options_, ad::core_rules());
    std::vector<TracedTensor> outs;
    for (std::size_t k = 0; k < ps.size(); ++k) {
      outs.push_back(g[k] ? *g[k] : traced_full(ps[k].shape(), Scalar(0.0), ps[k].dtype()));
    }
    cotangent_ = std::make_shared<const ProgramOp>(compile(outs, all));
    return cotangent_;
  }

 private:
  FamilyId family_;
  Program f_;
  std::size_t states_;
  FixedPointOptions options_;
  mutable std::mutex mutex_;
  mutable std::map<std::uint64_t, std::shared_ptr<const ProgramOp>> tangents_;
  mutable std::shared_ptr<const ProgramOp> cotangent_;
};

std::vector<ad::MaybeVal> fixed_point_jvp(const ad::RuleArgs& a, std::span<const ad::MaybeVal> t) {
  const auto& op = static_cast<const FixedPointEagerOp&>(a.op);
  std::uint64_t mask = 0;
  std::vector<ad::Val> ins(a.outputs.begin(), a.outputs.end());
  ins.insert(ins.end(), a.inputs.begin(), a.inputs.end());
  for (std::size_t k = 0; k < t.size(); ++k) {
    if (!t[k] || !ad::differentiable(a.input_metas[k].dtype)) continue;
    if (k >= 64) fail(ErrorKind::Unsupported, kOp, "forward mode takes at most 64 parameters");
    mask |= std::uint64_t{1} << k;
    ins.push_back(*t[k]);
  }
  if (mask == 0) return std::vector<ad::MaybeVal>(op.states());
  const std::vector<ad::Val> r = a.emitter.emit(op.tangent_op(mask), ins);
  return std::vector<ad::MaybeVal>(r.begin(), r.end());
}

std::vector<ad::MaybeVal> fixed_point_vjp(const ad::RuleArgs& a, std::span<const ad::MaybeVal> ct) {
  const auto& op = static_cast<const FixedPointEagerOp&>(a.op);
  if (none(ct)) return std::vector<ad::MaybeVal>(a.inputs.size());
  std::vector<ad::Val> ins(a.outputs.begin(), a.outputs.end());
  ins.insert(ins.end(), a.inputs.begin(), a.inputs.end());
  for (const ad::Val v : with_zeros(a.emitter, ct, a.output_metas)) ins.push_back(v);
  const std::vector<ad::Val> r = a.emitter.emit(op.cotangent_op(), ins);
  std::vector<ad::MaybeVal> g(r.begin(), r.end());
  for (std::size_t k = 0; k < g.size(); ++k) {
    if (!a.wants(k) || !ad::differentiable(a.input_metas[k].dtype)) g[k].reset();
  }
  return g;
}

const ad::RuleSet& FixedPointEagerOp::ad_rules() const {
  static const ad::RuleSet r = [] {
    ad::RuleSet s;
    s.jvp = fixed_point_jvp;
    s.vjp = fixed_point_vjp;
    s.residuals = ad::Residuals::all();
    return s;
  }();
  return r;
}

// ---- iteration ------------------------------------------------------------------------

std::string meta_text(const EagerTensor& t) {
  return std::string(tenferro::name(t.dtype())) + shape_to_string(t.shape().span());
}

double max_abs(const EagerTensor& x) {
  return max(abs(x)).item<double>();
}

template <class T>
EagerTensor scalar_on(const EagerRuntimePtr& rt, T value, DType dtype) {
  Tensor t = rt->backend().empty({}, dtype);
  rt->backend().write(&value, t);
  return rt->tensor(std::move(t));
}

}  // namespace

FixedPointResult<EagerTensor> fixed_point(const EagerFixedPointFn& f, ListRef<EagerTensor> x0,
                                          ListRef<EagerTensor> params,
                                          const FixedPointOptions& options) {
  if (!f) fail(ErrorKind::InvalidArgument, kOp, "the function is empty");
  if (x0.size() == 0) fail(ErrorKind::InvalidArgument, kOp, "no state: pass the initial x0");
  std::vector<EagerTensor> all(x0.begin(), x0.end());
  all.insert(all.end(), params.begin(), params.end());
  for (std::size_t k = 0; k < all.size(); ++k) {
    if (!all[k].defined()) {
      fail(ErrorKind::InvalidArgument, kOp, k < x0.size() ? "state " : "parameter ",
           k < x0.size() ? k : k - x0.size(), " is undefined");
    }
  }
  const EagerRuntimePtr rt = detail::common_runtime(all, kOp);
  const std::size_t m = x0.size();
  for (std::size_t k = 0; k < m; ++k) {
    if (!is_inexact(x0[k].dtype())) {
      fail(ErrorKind::DTypeMismatch, kOp, "state ", k, " is ", meta_text(x0[k]),
           "; a fixed point's state is floating or complex");
    }
  }
  std::vector<TensorMeta> state_metas;
  for (const auto& t : x0) state_metas.push_back({t.dtype(), to_sym_shape(t.shape().span())});
  detail::check_fixed_point_options(options, state_metas);
  std::vector<EagerTensor> x, ps;
  for (const auto& t : x0) x.push_back(t.detach());
  for (const auto& t : params) ps.push_back(t.detach());

  double residual = std::numeric_limits<double>::infinity();
  bool converged = false;
  std::int64_t iterations = 0;
  {
    NoGradGuard no_grad;
    while (iterations < options.max_iter) {
      ++iterations;
      std::vector<EagerTensor> fx = f(x, ps);
      if (fx.size() != m) {
        fail(ErrorKind::InvalidArgument, kOp, "f returns ", fx.size(), " state tensors for ", m,
             "; return one per state tensor");
      }
      double update = 0, size = 0;
      for (std::size_t k = 0; k < m; ++k) {
        if (!fx[k].defined() || fx[k].dtype() != x[k].dtype() || fx[k].shape() != x[k].shape()) {
          fail(fx[k].defined() && fx[k].dtype() != x[k].dtype() ? ErrorKind::DTypeMismatch
                                                                : ErrorKind::ShapeMismatch,
               kOp, "state ", k, " is ", meta_text(x[k]), " but f returns ",
               fx[k].defined() ? meta_text(fx[k]) : std::string("an undefined tensor"),
               "; f must keep each state tensor's dtype and shape");
        }
        update = std::max(update, max_abs(fx[k] - x[k]));
        size = std::max(size, max_abs(x[k]));
        if (std::isnan(update)) break;
      }
      x = std::move(fx);
      residual = update;
      if (std::isnan(residual)) break;
      if (residual <= options.tol * std::max(1.0, size)) {
        converged = true;
        break;
      }
    }
  }
  if (!converged && options.throw_on_failure) {
    detail::fail_no_convergence(detail::FixedPointRole::Solve, iterations, residual, options.tol);
  }

  bool tracked = false;
  for (const auto& p : params) tracked |= p.impl()->node != nullptr;
  if (tracked && grad_recording_enabled()) {
    // f traced once at the solution: the derivatives' programs read it.
    std::vector<EagerTensor> at;
    for (const auto& t : x) at.push_back(t.detach());
    for (const auto& t : params) at.push_back(t.detach());
    Program body;
    {
      CaptureScope capture;
      const std::span<const EagerTensor> s(at);
      const std::vector<EagerTensor> fx = f(s.first(m), s.subspan(m));
      body = from_capture(capture, at, fx);
    }
    auto op = std::make_shared<const FixedPointEagerOp>(std::move(body), m, options);
    std::vector<Tensor> values;
    for (const auto& t : x) values.push_back(t.value());
    const std::vector<EagerTensor> in(params.begin(), params.end());
    x = detail::finish_outputs(rt, op, in, std::move(values));
  }
  FixedPointResult<EagerTensor> r;
  r.value = std::move(x);
  r.iterations = scalar_on(rt, iterations, DType::I64);
  r.residual = scalar_on(rt, residual, DType::F64);
  r.converged = scalar_on(rt, static_cast<unsigned char>(converged), DType::Bool);
  return r;
}

EagerTensor fixed_point(
    const std::function<EagerTensor(const EagerTensor&, std::span<const EagerTensor>)>& f,
    const EagerTensor& x0, ListRef<EagerTensor> params, const FixedPointOptions& options) {
  if (!f) fail(ErrorKind::InvalidArgument, kOp, "the function is empty");
  const EagerTensor start[1] = {x0};
  return fixed_point(
             [&](std::span<const EagerTensor> x, std::span<const EagerTensor> p) {
               return std::vector<EagerTensor>{f(x[0], p)};
             },
             start, params, options)
      .value[0];
}

}  // namespace tenferro
