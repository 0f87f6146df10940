// cond, while_loop and fixed_point (tenferro/ad/control_flow.hpp): traced
// ops with bodies (ad/program/body_op.hpp). Their derivatives are built from
// the same ops over derived bodies, so derivatives of derivatives work.

#include "tenferro/ad/control_flow.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ad/program/body_op.hpp"
#include "ad/program/graph.hpp"
#include "ad/traced/body_trace.hpp"
#include "ad/traced/fixed_point_rules.hpp"
#include "tenferro/ad/linearize.hpp"
#include "tenferro/ad/ops.hpp"
#include "tenferro/ad/transforms.hpp"

namespace tenferro {

namespace {

using Traced = std::vector<TracedTensor>;
using MaybeTraced = std::vector<std::optional<TracedTensor>>;

/// A body applied to traced values (its graph copied into the caller's).
Traced call(const Program& body, std::span<const TracedTensor> inputs) {
  return detail::instantiate(*body.graph(), inputs, &body.constants());
}

bool same_body(const Program& a, const Program& b) {
  return a.graph() == b.graph() || a.graph()->same_structure(*b.graph());
}

TracedTensor zero_like(const TracedTensor& v) {
  return traced_full(v.shape(), Scalar(0.0), v.dtype());
}

std::string meta_text(const TensorMeta& m) {
  return std::string(tenferro::name(m.dtype)) + to_string(m.shape);
}

Traced concat(std::span<const TracedTensor> a, std::span<const TracedTensor> b) {
  Traced r(a.begin(), a.end());
  r.insert(r.end(), b.begin(), b.end());
  return r;
}

/// Refuses a carry (or state) whose dtype or shape the function changes.
void check_kept(const char* op, const char* what, std::span<const TensorMeta> before,
                const Program& body) {
  if (body.output_count() < before.size()) {
    fail(ErrorKind::InvalidArgument, op, "the function returns ", body.output_count(), " ", what,
         " values but gets ", before.size(), "; return one per ", what);
  }
  for (std::size_t k = 0; k < before.size(); ++k) {
    const TensorMeta& after = body.output_meta(k);
    if (after == before[k]) continue;
    fail(after.dtype != before[k].dtype ? ErrorKind::DTypeMismatch : ErrorKind::ShapeMismatch, op,
         what, " ", k, " is ", meta_text(before[k]), " on entry but the function returns ",
         meta_text(after), "; a ", what, " keeps its dtype and shape");
  }
}

/// What the control-flow ops share: their input and output metadata, checked
/// by infer() like a checkpoint region's.
class ControlOp : public detail::BodyOp {
 public:
  ControlOp(std::vector<TensorMeta> in, std::vector<TensorMeta> out)
      : in_(std::move(in)), out_(std::move(out)) {}
  std::size_t input_count() const override { return in_.size(); }
  std::size_t output_count() const override { return out_.size(); }
  InferenceResult infer(std::span<const TensorMeta> inputs) const override {
    for (std::size_t i = 0; i < inputs.size() && i < in_.size(); ++i) {
      if (!(inputs[i] == in_[i])) {
        fail(ErrorKind::ShapeMismatch, std::string(name()), "input ", i, " was traced as ",
             meta_text(in_[i]), " but gets ", meta_text(inputs[i]), "; trace it again");
      }
    }
    InferenceResult r;
    r.outputs = out_;
    return r;
  }

 protected:
  std::size_t hash_bodies(std::size_t seed) const {
    for (const auto& b : bodies()) seed = hash_combine(seed, b.fingerprint());
    return seed;
  }
  bool same_bodies(const ControlOp& o) const {
    const auto a = bodies();
    const auto b = o.bodies();
    if (a.size() != b.size() || in_ != o.in_ || out_ != o.out_) return false;
    for (std::size_t k = 0; k < a.size(); ++k)
      if (!same_body(a[k], b[k])) return false;
    return true;
  }
  std::vector<TensorMeta> in_, out_;
};

bool read_bool(Backend& backend, const Tensor& t) {
  unsigned char b = 0;
  backend.read(t, &b);
  return b != 0;
}

double read_f64(Backend& backend, const Tensor& t) {
  double v = 0;
  backend.read(t, &v);
  return v;
}

template <class T>
Tensor scalar_tensor(Backend& backend, T value, DType dtype) {
  Tensor t = backend.empty({}, dtype);
  backend.write(&value, t);
  return t;
}

// ---- cond ------------------------------------------------------------------------------

/// Inputs: the predicate, the operands, the then-branch's captured values,
/// the else-branch's. Bodies: then, else (each over operands + its captures).
class CondOp final : public ControlOp {
 public:
  CondOp(Program then_body, Program else_body, std::size_t operands, std::vector<TensorMeta> in,
         std::vector<TensorMeta> out)
      : ControlOp(std::move(in), std::move(out)),
        bodies_{std::move(then_body), std::move(else_body)},
        operands_(operands) {}
  std::string_view name() const override { return "cond"; }
  std::size_t hash() const override { return hash_bodies(0x636f6e64); }
  bool equals(const Op& other) const override {
    const auto* o = dynamic_cast<const CondOp*>(&other);
    return o != nullptr && o->operands_ == operands_ && same_bodies(*o);
  }
  std::string describe() const override {
    return "cond(" + std::to_string(bodies_[0].node_count()) + " | " +
           std::to_string(bodies_[1].node_count()) + " ops)";
  }
  std::span<const Program> bodies() const override { return bodies_; }

  /// The inputs of branch `b` among the op's inputs after the predicate.
  template <class V>
  std::vector<V> branch_inputs(int b, std::span<V> args) const {
    const std::size_t then_caps = bodies_[0].input_count() - operands_;
    const std::size_t first = b == 0 ? operands_ : operands_ + then_caps;
    const std::size_t count = bodies_[b].input_count() - operands_;
    std::vector<V> in;
    for (std::size_t k = 0; k < operands_; ++k) in.push_back(std::move(args[k]));
    for (std::size_t k = 0; k < count; ++k) in.push_back(std::move(args[first + k]));
    return in;
  }

  std::vector<Tensor> run(const detail::BodyRun& run, const detail::PreparedBodies& bodies,
                          std::vector<Tensor> inputs) const override {
    const int b = read_bool(run.backend, inputs[0]) ? 0 : 1;
    std::span<Tensor> args(inputs.data() + 1, inputs.size() - 1);
    return detail::run_body(run, *bodies[b], branch_inputs<Tensor>(b, args));
  }

  MaybeTraced jvp(std::span<const TracedTensor> inputs, std::span<const TracedTensor> outputs,
                  std::span<const std::optional<TracedTensor>> tangents,
                  const ad::AdContext& rules) const override {
    const std::size_t n = inputs.size() - 1;
    Traced args(inputs.begin() + 1, inputs.end());
    std::vector<std::size_t> given;
    for (std::size_t k = 0; k < n; ++k) {
      if (!tangents[k + 1] || !ad::differentiable(inputs[k + 1].dtype())) continue;
      given.push_back(k);
      args.push_back(*tangents[k + 1]);
    }
    MaybeTraced result(outputs.size());
    if (given.empty()) return result;
    const Traced r = derived_cond(inputs[0], args,
                                  [&](std::span<const TracedTensor> prim, const Traced& outs,
                                      std::span<const TracedTensor> dirs) {
                                    Traced wrt;
                                    for (const std::size_t k : given) wrt.push_back(prim[k]);
                                    const MaybeTraced t = jvp_many(outs, wrt, dirs, rules);
                                    Traced d;
                                    for (std::size_t j = 0; j < outs.size(); ++j)
                                      d.push_back(t[j] ? *t[j] : zero_like(outs[j]));
                                    return d;
                                  });
    for (std::size_t j = 0; j < outputs.size(); ++j) {
      if (ad::differentiable(outputs[j].dtype())) result[j] = r[j];
    }
    return result;
  }

  MaybeTraced vjp(std::span<const TracedTensor> inputs, std::span<const TracedTensor> outputs,
                  std::span<const std::optional<TracedTensor>> cotangents,
                  const ad::AdContext& rules) const override {
    const std::size_t n = inputs.size() - 1;
    Traced args(inputs.begin() + 1, inputs.end());
    std::vector<std::size_t> given;
    for (std::size_t j = 0; j < outputs.size(); ++j) {
      if (!cotangents[j] || !ad::differentiable(outputs[j].dtype())) continue;
      given.push_back(j);
      args.push_back(*cotangents[j]);
    }
    MaybeTraced result(inputs.size());
    if (given.empty()) return result;
    const Traced r = derived_cond(inputs[0], args,
                                  [&](std::span<const TracedTensor> prim, const Traced& outs,
                                      std::span<const TracedTensor> cts) {
                                    Traced chosen;
                                    for (const std::size_t j : given) chosen.push_back(outs[j]);
                                    const MaybeTraced g = vjp_many(chosen, cts, prim, rules);
                                    Traced d;
                                    for (std::size_t k = 0; k < n; ++k)
                                      d.push_back(g[k] ? *g[k] : zero_like(prim[k]));
                                    return d;
                                  });
    for (std::size_t k = 0; k < n; ++k) {
      if (ad::differentiable(inputs[k + 1].dtype())) result[k + 1] = r[k];
    }
    return result;
  }

 private:
  /// A derivative of the op as a cond over `args` (the op's inputs after the
  /// predicate, then the directions): each branch applies `derive(primal
  /// inputs, that body's outputs, directions)`.
  using Derive = std::function<Traced(std::span<const TracedTensor>, const Traced&,
                                      std::span<const TracedTensor>)>;
  Traced derived_cond(const TracedTensor& pred, const Traced& args, const Derive& derive) const {
    const std::size_t n = input_count() - 1;
    auto branch = [&](int b) -> TracedFn {
      return [&, b](std::span<const TracedTensor> p) {
        const Traced prim(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(n));
        Traced copy = prim;
        const Traced outs = call(bodies_[b], branch_inputs<TracedTensor>(b, std::span(copy)));
        return derive(prim, outs, p.subspan(n));
      };
    };
    return cond(pred, branch(0), branch(1), args);
  }

  Program bodies_[2];
  std::size_t operands_;
};

// ---- while_loop ------------------------------------------------------------------------

/// Inputs: the initial carries, the predicate's captured values, the body's.
/// Bodies: the predicate and the body (each over carries + its captures).
class WhileOp final : public ControlOp {
 public:
  WhileOp(Program pred, Program body, WhileOptions options, std::vector<TensorMeta> in,
          std::vector<TensorMeta> out)
      : ControlOp(std::move(in), std::move(out)),
        bodies_{std::move(pred), std::move(body)},
        options_(options) {}
  std::string_view name() const override { return "while_loop"; }
  std::size_t hash() const override {
    return hash_bodies(
        hash_combine(0x7768696c, std::hash<std::int64_t>{}(options_.max_iterations)));
  }
  bool equals(const Op& other) const override {
    const auto* o = dynamic_cast<const WhileOp*>(&other);
    return o != nullptr && o->options_.max_iterations == options_.max_iterations && same_bodies(*o);
  }
  std::string describe() const override {
    return "while_loop(" + std::to_string(bodies_[1].node_count()) + " ops)";
  }
  std::span<const Program> bodies() const override { return bodies_; }
  std::size_t carries() const { return out_.size(); }

  std::vector<Tensor> run(const detail::BodyRun& run, const detail::PreparedBodies& bodies,
                          std::vector<Tensor> inputs) const override {
    const std::size_t n = carries();
    const std::size_t pred_caps = bodies_[0].input_count() - n;
    std::vector<Tensor> carry(std::make_move_iterator(inputs.begin()),
                              std::make_move_iterator(inputs.begin() + static_cast<long>(n)));
    const std::span<const Tensor> pred_in(inputs.data() + n, pred_caps);
    const std::span<const Tensor> body_in(inputs.data() + n + pred_caps,
                                          inputs.size() - n - pred_caps);
    for (std::int64_t iteration = 0;; ++iteration) {
      std::vector<Tensor> p = carry;
      p.insert(p.end(), pred_in.begin(), pred_in.end());
      if (!read_bool(run.backend, detail::run_body(run, *bodies[0], std::move(p))[0])) break;
      if (options_.max_iterations >= 0 && iteration >= options_.max_iterations) {
        fail(ErrorKind::NoConvergence, "while_loop", "the predicate still holds after ",
             options_.max_iterations,
             " iterations (WhileOptions::max_iterations); raise the limit or check the predicate");
      }
      carry.insert(carry.end(), body_in.begin(), body_in.end());
      carry = detail::run_body(run, *bodies[1], std::move(carry));
    }
    return carry;
  }

  MaybeTraced jvp(std::span<const TracedTensor> inputs, std::span<const TracedTensor> outputs,
                  std::span<const std::optional<TracedTensor>> tangents,
                  const ad::AdContext& rules) const override {
    const std::size_t n = carries();
    const std::size_t pred_caps = bodies_[0].input_count() - n;
    const std::span<const TracedTensor> pred_in = inputs.subspan(n, pred_caps);
    const std::span<const TracedTensor> body_in = inputs.subspan(n + pred_caps);
    MaybeTraced result(outputs.size());
    bool any = false;
    for (const auto& t : tangents) any |= t.has_value();
    if (!any) return result;
    // The carries gain a tangent each (differentiable ones): zero where none is given.
    std::vector<std::size_t> diff;
    Traced init(inputs.begin(), inputs.begin() + static_cast<std::ptrdiff_t>(n));
    for (std::size_t k = 0; k < n; ++k) {
      if (!ad::differentiable(inputs[k].dtype())) continue;
      diff.push_back(k);
      init.push_back(tangents[k] ? *tangents[k] : zero_like(inputs[k]));
    }
    // The body's captured values with tangents enter the new body from outside.
    Traced cap_wrt, cap_dirs;
    for (std::size_t k = 0; k < body_in.size(); ++k) {
      const auto& t = tangents[n + pred_caps + k];
      if (!t || !ad::differentiable(body_in[k].dtype())) continue;
      cap_wrt.push_back(body_in[k]);
      cap_dirs.push_back(*t);
    }
    auto pred = [&](std::span<const TracedTensor> p) {
      return call(bodies_[0], concat(p.first(n), pred_in))[0];
    };
    auto body = [&](std::span<const TracedTensor> p) {
      const Traced carry(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(n));
      const Traced body_args = concat(carry, body_in);
      Traced wrt, dirs;
      for (std::size_t j = 0; j < diff.size(); ++j) {
        wrt.push_back(carry[diff[j]]);
        dirs.push_back(p[n + j]);
      }
      // Captured values are outer nodes: their tangents apply to them.
      wrt.insert(wrt.end(), cap_wrt.begin(), cap_wrt.end());
      dirs.insert(dirs.end(), cap_dirs.begin(), cap_dirs.end());
      const Traced outs = call(bodies_[1], body_args);
      const MaybeTraced t = jvp_many(outs, wrt, dirs, rules);
      Traced r = outs;
      for (const std::size_t k : diff) r.push_back(t[k] ? *t[k] : zero_like(outs[k]));
      return r;
    };
    const Traced r = while_loop(pred, body, init, options_);
    for (std::size_t j = 0; j < diff.size(); ++j) result[diff[j]] = r[n + j];
    return result;
  }

  MaybeTraced vjp(std::span<const TracedTensor>, std::span<const TracedTensor>,
                  std::span<const std::optional<TracedTensor>>,
                  const ad::AdContext&) const override {
    fail(ErrorKind::UnsupportedAdRule, "while_loop",
         "reverse mode through a loop whose length the data decides is not available: use "
         "fixed_point for an iteration to convergence (implicit derivatives, any mode), scan for "
         "a loop of known length, or forward mode (jvp) through the loop");
  }

 private:
  Program bodies_[2];
  WhileOptions options_;
};

// ---- fixed_point -----------------------------------------------------------------------

FixedPointOptions linear_options(const FixedPointOptions& o) {
  FixedPointOptions l = o;
  if (o.linear_tol >= 0) l.tol = o.linear_tol;
  if (o.linear_max_iter > 0) l.max_iter = o.linear_max_iter;
  l.throw_on_failure = true;
  return l;
}

/// Inputs: the initial state (m tensors), then the parameters: the given
/// ones and the values f captured. Outputs: the solution, the iteration count,
/// the residual and whether it converged. The body run per iteration is f
/// with the update's max norm and the state's max norm as two more outputs.
class FixedPointOp final : public ControlOp {
 public:
  FixedPointOp(Program f, std::size_t states, FixedPointOptions options,
               detail::FixedPointRole role, std::vector<TensorMeta> in, std::vector<TensorMeta> out)
      : ControlOp(std::move(in), std::move(out)),
        f_(std::move(f)),
        states_(states),
        options_(options),
        role_(role) {
    const Traced ps = detail::placeholders_for(f_);
    Traced outs = call(f_, ps);
    std::optional<TracedTensor> update, size;
    for (std::size_t k = 0; k < states_; ++k) {
      const TracedTensor d = convert(max(abs(outs[k] - ps[k])), DType::F64);
      const TracedTensor s = convert(max(abs(ps[k])), DType::F64);
      update = update ? maximum(*update, d) : d;
      size = size ? maximum(*size, s) : s;
    }
    outs.push_back(*update);
    outs.push_back(*size);
    step_ = compile(outs, ps);
  }
  std::string_view name() const override { return "fixed_point"; }
  std::size_t hash() const override {
    std::size_t h = hash_combine(0x66697870, f_.fingerprint());
    h = hash_combine(h, std::hash<double>{}(options_.tol));
    h = hash_combine(h, std::hash<std::int64_t>{}(options_.max_iter));
    h = hash_combine(h, static_cast<std::size_t>(options_.linear_solver));
    return hash_combine(h, states_);
  }
  bool equals(const Op& other) const override {
    const auto* o = dynamic_cast<const FixedPointOp*>(&other);
    const auto& a = options_;
    return o != nullptr && o->states_ == states_ && o->role_ == role_ && o->options_.tol == a.tol &&
           o->options_.max_iter == a.max_iter &&
           o->options_.throw_on_failure == a.throw_on_failure &&
           o->options_.linear_tol == a.linear_tol &&
           o->options_.linear_max_iter == a.linear_max_iter &&
           o->options_.linear_solver == a.linear_solver && same_body(o->f_, f_) && in_ == o->in_;
  }
  std::string describe() const override {
    return "fixed_point(" + std::to_string(f_.node_count()) + " ops)";
  }
  std::span<const Program> bodies() const override { return {&step_, 1}; }

  std::vector<Tensor> run(const detail::BodyRun& run, const detail::PreparedBodies& bodies,
                          std::vector<Tensor> inputs) const override {
    const std::size_t m = states_;
    std::vector<Tensor> x(std::make_move_iterator(inputs.begin()),
                          std::make_move_iterator(inputs.begin() + static_cast<long>(m)));
    const std::span<const Tensor> params(inputs.data() + m, inputs.size() - m);
    double residual = std::numeric_limits<double>::infinity();
    bool converged = false;
    std::int64_t iterations = 0;
    while (iterations < options_.max_iter) {
      ++iterations;
      x.insert(x.end(), params.begin(), params.end());
      std::vector<Tensor> out = detail::run_body(run, *bodies[0], std::move(x));
      residual = read_f64(run.backend, out[m]);
      const double size = read_f64(run.backend, out[m + 1]);
      out.resize(m);
      x = std::move(out);
      if (std::isnan(residual)) break;
      if (residual <= options_.tol * std::max(1.0, size)) {
        converged = true;
        break;
      }
    }
    if (!converged && options_.throw_on_failure) {
      detail::fail_no_convergence(role_, iterations, residual, options_.tol);
    }
    x.push_back(scalar_tensor(run.backend, iterations, DType::I64));
    x.push_back(scalar_tensor(run.backend, residual, DType::F64));
    x.push_back(scalar_tensor(run.backend, static_cast<unsigned char>(converged), DType::Bool));
    return x;
  }

  MaybeTraced jvp(std::span<const TracedTensor> inputs, std::span<const TracedTensor> outputs,
                  std::span<const std::optional<TracedTensor>> tangents,
                  const ad::AdContext& rules) const override {
    MaybeTraced result(outputs.size());
    const MaybeTraced dx =
        detail::fixed_point_tangent(f_, outputs.first(states_), inputs.subspan(states_),
                                    tangents.subspan(states_), options_, rules);
    std::copy(dx.begin(), dx.end(), result.begin());
    return result;
  }

  MaybeTraced vjp(std::span<const TracedTensor> inputs, std::span<const TracedTensor> outputs,
                  std::span<const std::optional<TracedTensor>> cotangents,
                  const ad::AdContext& rules) const override {
    MaybeTraced result(inputs.size());
    const MaybeTraced g =
        detail::fixed_point_cotangent(f_, outputs.first(states_), inputs.subspan(states_),
                                      cotangents.first(states_), options_, rules);
    std::copy(g.begin(), g.end(), result.begin() + static_cast<std::ptrdiff_t>(states_));
    return result;
  }

 private:
  Program f_;
  Program step_;
  std::size_t states_;
  FixedPointOptions options_;
  detail::FixedPointRole role_;
};

void check_defined(const char* op, const char* what, std::span<const TracedTensor> values) {
  for (std::size_t k = 0; k < values.size(); ++k) {
    if (!values[k].defined()) fail(ErrorKind::InvalidArgument, op, what, " ", k, " is undefined");
  }
}

void check_scalar_bool(const char* op, const char* what, const TensorMeta& m) {
  if (m.dtype != DType::Bool) {
    fail(ErrorKind::DTypeMismatch, op, what, " must be a rank-0 bool, got ", meta_text(m),
         "; compare to get one (lt, gt, ...)");
  }
  if (!m.shape.empty()) {
    fail(ErrorKind::ShapeMismatch, op, what, " must be a rank-0 bool, got ", meta_text(m),
         "; reduce it with all() or any()");
  }
}

}  // namespace

std::vector<TracedTensor> cond(const TracedTensor& pred, const TracedFn& then_fn,
                               const TracedFn& else_fn, ListRef<TracedTensor> operands) {
  if (!pred.defined()) fail(ErrorKind::InvalidArgument, "cond", "the predicate is undefined");
  check_scalar_bool("cond", "the predicate", pred.meta());
  check_defined("cond", "operand", operands);
  const std::vector<TensorMeta> metas = detail::metas_of(operands);
  detail::TracedBody t = detail::trace_body(metas, then_fn, "cond");
  detail::TracedBody e = detail::trace_body(metas, else_fn, "cond");
  const Program& tp = t.program;
  const Program& ep = e.program;
  if (tp.output_count() == 0)
    fail(ErrorKind::InvalidArgument, "cond", "the branches return nothing");
  if (tp.output_count() != ep.output_count()) {
    fail(ErrorKind::InvalidArgument, "cond", "the then branch returns ", tp.output_count(),
         " results but the else branch ", ep.output_count(), "; return the same results from both");
  }
  std::vector<TensorMeta> out;
  for (std::size_t j = 0; j < tp.output_count(); ++j) {
    const TensorMeta& a = tp.output_meta(j);
    const TensorMeta& b = ep.output_meta(j);
    if (!(a == b)) {
      fail(a.dtype != b.dtype ? ErrorKind::DTypeMismatch : ErrorKind::ShapeMismatch, "cond",
           "result ", j, " is ", meta_text(a), " in the then branch but ", meta_text(b),
           " in the else branch; both branches return the same dtypes and shapes");
    }
    out.push_back(a);
  }
  Traced ins{pred};
  ins.insert(ins.end(), operands.begin(), operands.end());
  ins.insert(ins.end(), t.captured.begin(), t.captured.end());
  ins.insert(ins.end(), e.captured.begin(), e.captured.end());
  auto op = std::make_shared<CondOp>(std::move(t.program), std::move(e.program), operands.size(),
                                     detail::metas_of(ins), std::move(out));
  return detail::make_traced(op, ins);
}

std::vector<TracedTensor> while_loop(const TracedPredicate& cond_fn, const TracedFn& body,
                                     ListRef<TracedTensor> init, const WhileOptions& options) {
  if (!cond_fn) fail(ErrorKind::InvalidArgument, "while_loop", "the predicate is empty");
  if (init.size() == 0) {
    fail(ErrorKind::InvalidArgument, "while_loop", "no carries: pass the loop's state as init");
  }
  check_defined("while_loop", "carry", init);
  const std::vector<TensorMeta> metas = detail::metas_of(init);
  detail::TracedBody p = detail::trace_body(
      metas, [&](std::span<const TracedTensor> c) { return Traced{cond_fn(c)}; }, "while_loop");
  check_scalar_bool("while_loop", "the predicate's result", p.program.output_meta(0));
  detail::TracedBody b = detail::trace_body(metas, body, "while_loop");
  if (b.program.output_count() != init.size()) {
    fail(ErrorKind::InvalidArgument, "while_loop", "the body returns ", b.program.output_count(),
         " carries but init has ", init.size(), "; return one value per carry");
  }
  check_kept("while_loop", "carry", metas, b.program);
  Traced ins(init.begin(), init.end());
  ins.insert(ins.end(), p.captured.begin(), p.captured.end());
  ins.insert(ins.end(), b.captured.begin(), b.captured.end());
  auto op = std::make_shared<WhileOp>(std::move(p.program), std::move(b.program), options,
                                      detail::metas_of(ins), metas);
  return detail::make_traced(op, ins);
}

FixedPointResult<TracedTensor> fixed_point(const TracedFixedPointFn& f, ListRef<TracedTensor> x0,
                                           ListRef<TracedTensor> params,
                                           const FixedPointOptions& options) {
  return detail::fixed_point_node(f, x0, params, options, detail::FixedPointRole::Solve);
}

namespace detail {

void check_fixed_point_options(const FixedPointOptions& options,
                               std::span<const TensorMeta> states) {
  if (!(options.tol >= 0) || !std::isfinite(options.tol)) {
    fail(ErrorKind::InvalidArgument, "fixed_point", "tol must be finite and >= 0, got ",
         options.tol);
  }
  if (options.max_iter < 1) {
    fail(ErrorKind::InvalidArgument, "fixed_point", "max_iter must be at least 1, got ",
         options.max_iter);
  }
  if (std::isnan(options.linear_tol) || std::isinf(options.linear_tol)) {
    fail(ErrorKind::InvalidArgument, "fixed_point",
         "linear_tol must be finite (negative: tol), got ", options.linear_tol);
  }
  (void)solves_directly(options, states);
}

void fail_no_convergence(FixedPointRole role, std::int64_t iterations, double residual,
                         double tol) {
  const bool nan = std::isnan(residual);
  const std::string what = role == FixedPointRole::Solve
                               ? "the iteration"
                               : std::string("the linear solve of the ") +
                                     (role == FixedPointRole::Tangent ? "tangent" : "adjoint") +
                                     " (a derivative of the fixed point)";
  const std::string advice =
      role == FixedPointRole::Solve
          ? "raise max_iter, loosen tol, start closer to the solution, or pass "
            "throw_on_failure = false to get the last iterate with its residual"
          : "raise linear_max_iter or linear_tol (FixedPointOptions); the solve iterates "
            "the linearised map, which converges only where df/dx is a contraction at the "
            "solution";
  if (nan) {
    fail(ErrorKind::NoConvergence, "fixed_point", what, " produced NaN at iteration ", iterations,
         "; ", advice);
  }
  fail(ErrorKind::NoConvergence, "fixed_point", what, " did not converge after ", iterations,
       " iterations: max |update| = ", residual, " (tol ", tol, "); ", advice);
}

FixedPointResult<TracedTensor> fixed_point_node(const TracedFixedPointFn& f,
                                                ListRef<TracedTensor> x0,
                                                ListRef<TracedTensor> params,
                                                const FixedPointOptions& options,
                                                FixedPointRole role) {
  const char* op = "fixed_point";
  if (!f) fail(ErrorKind::InvalidArgument, op, "the function is empty");
  if (x0.size() == 0) fail(ErrorKind::InvalidArgument, op, "no state: pass the initial x0");
  check_defined(op, "state", x0);
  check_defined(op, "parameter", params);
  for (std::size_t k = 0; k < x0.size(); ++k) {
    if (!is_inexact(x0[k].dtype())) {
      fail(ErrorKind::DTypeMismatch, op, "state ", k, " is ", meta_text(x0[k].meta()),
           "; a fixed point's state is floating or complex");
    }
  }
  const std::size_t m = x0.size();
  std::vector<TensorMeta> metas = detail::metas_of(x0);
  const std::vector<TensorMeta> state_metas = metas;
  check_fixed_point_options(options, state_metas);
  for (const auto& p : params) metas.push_back(p.meta());
  detail::TracedBody body = detail::trace_body(
      metas,
      [&](std::span<const TracedTensor> p) {
        Traced r = f(p.first(m), p.subspan(m));
        if (r.size() != m) {
          fail(ErrorKind::InvalidArgument, op, "f returns ", r.size(), " state tensors for ", m,
               "; return one per state tensor");
        }
        return r;
      },
      op);
  check_kept(op, "state", state_metas, body.program);
  Traced ins(x0.begin(), x0.end());
  ins.insert(ins.end(), params.begin(), params.end());
  ins.insert(ins.end(), body.captured.begin(), body.captured.end());
  std::vector<TensorMeta> out = state_metas;
  out.push_back(TensorMeta{DType::I64, {}});
  out.push_back(TensorMeta{DType::F64, {}});
  out.push_back(TensorMeta{DType::Bool, {}});
  auto node = std::make_shared<FixedPointOp>(std::move(body.program), m, options, role,
                                             detail::metas_of(ins), std::move(out));
  Traced outs = detail::make_traced(node, ins);
  FixedPointResult<TracedTensor> r;
  r.value.assign(outs.begin(), outs.begin() + static_cast<std::ptrdiff_t>(m));
  r.iterations = outs[m];
  r.residual = outs[m + 1];
  r.converged = outs[m + 2];
  return r;
}

}  // namespace detail

TracedTensor fixed_point(
    const std::function<TracedTensor(const TracedTensor&, std::span<const TracedTensor>)>& f,
    const TracedTensor& x0, ListRef<TracedTensor> params, const FixedPointOptions& options) {
  if (!f) fail(ErrorKind::InvalidArgument, "fixed_point", "the function is empty");
  const TracedTensor start[1] = {x0};
  return fixed_point([&](std::span<const TracedTensor> x,
                         std::span<const TracedTensor> p) { return Traced{f(x[0], p)}; },
                     start, params, options)
      .value[0];
}

namespace detail {

std::vector<std::optional<TracedTensor>> fixed_point_tangent(
    const Program& f, std::span<const TracedTensor> xs, std::span<const TracedTensor> ps,
    std::span<const std::optional<TracedTensor>> dps, const FixedPointOptions& options,
    const ad::AdContext& rules) {
  const std::size_t m = xs.size();
  const std::size_t np = ps.size();
  std::vector<std::size_t> given;
  Traced region = concat(xs, ps);
  for (std::size_t k = 0; k < np; ++k) {
    if (!dps[k] || !ad::differentiable(ps[k].dtype())) continue;
    given.push_back(k);
    region.push_back(*dps[k]);
  }
  MaybeTraced result(m);
  if (given.empty()) return result;
  // c = df/dp dp, in a region over (x*, p, dp): inside it x* is a placeholder,
  // so differentiating f does not reach back through the fixed point.
  const Traced drive = checkpoint(
      [&](std::span<const TracedTensor> r) {
        Traced wrt, dirs;
        for (std::size_t j = 0; j < given.size(); ++j) {
          wrt.push_back(r[m + given[j]]);
          dirs.push_back(r[m + np + j]);
        }
        const Traced fx = call(f, r.first(m + np));
        const MaybeTraced c = jvp_many(fx, wrt, dirs, rules);
        Traced out;
        for (std::size_t k = 0; k < m; ++k) out.push_back(c[k] ? *c[k] : zero_like(fx[k]));
        return out;
      },
      region);
  // g(dx; x*, p, c) = df/dx(x*, p) dx + c
  auto g = [&](std::span<const TracedTensor> dx, std::span<const TracedTensor> q) {
    const MaybeTraced t = jvp_many(call(f, q.first(m + np)), q.first(m), dx, rules);
    Traced r;
    for (std::size_t k = 0; k < m; ++k) {
      r.push_back(t[k] ? *t[k] + q[m + np + k] : q[m + np + k]);
    }
    return r;
  };
  if (solves_directly(options, metas_of(xs))) {
    const Traced solved = solve_directly(f, xs, ps, drive, false, rules);
    for (std::size_t k = 0; k < m; ++k) result[k] = solved[k];
    return result;
  }
  const auto solved = fixed_point_node(g, drive, concat(concat(xs, ps), drive),
                                       linear_options(options), FixedPointRole::Tangent);
  for (std::size_t k = 0; k < m; ++k) result[k] = solved.value[k];
  return result;
}

std::vector<std::optional<TracedTensor>> fixed_point_cotangent(
    const Program& f, std::span<const TracedTensor> xs, std::span<const TracedTensor> ps,
    std::span<const std::optional<TracedTensor>> ybar, const FixedPointOptions& options,
    const ad::AdContext& rules) {
  const std::size_t m = xs.size();
  const std::size_t np = ps.size();
  MaybeTraced result(np);
  Traced seed;
  bool any = false;
  for (std::size_t k = 0; k < m; ++k) {
    any |= ybar[k].has_value();
    seed.push_back(ybar[k] ? *ybar[k] : zero_like(xs[k]));
  }
  if (!any || np == 0) return result;
  // h(lambda; x*, p, ybar) = ybar + (df/dx(x*, p))^T lambda
  auto h = [&](std::span<const TracedTensor> lambda, std::span<const TracedTensor> q) {
    const MaybeTraced v = vjp_many(call(f, q.first(m + np)), lambda, q.first(m), rules);
    Traced r;
    for (std::size_t k = 0; k < m; ++k) {
      r.push_back(v[k] ? *v[k] + q[m + np + k] : q[m + np + k]);
    }
    return r;
  };
  const Traced lambda = solves_directly(options, metas_of(xs))
                            ? solve_directly(f, xs, ps, seed, true, rules)
                            : fixed_point_node(h, seed, concat(concat(xs, ps), seed),
                                               linear_options(options), FixedPointRole::Adjoint)
                                  .value;
  // (df/dp)^T lambda in a region over (x*, p, lambda), as in the tangent.
  std::vector<std::size_t> wanted;
  for (std::size_t k = 0; k < np; ++k) {
    if (ad::differentiable(ps[k].dtype())) wanted.push_back(k);
  }
  if (wanted.empty()) return result;
  const Traced g = checkpoint(
      [&](std::span<const TracedTensor> r) {
        Traced wrt;
        for (const std::size_t k : wanted) wrt.push_back(r[m + k]);
        const MaybeTraced v = vjp_many(call(f, r.first(m + np)), r.subspan(m + np), wrt, rules);
        Traced out;
        for (std::size_t j = 0; j < wanted.size(); ++j) {
          out.push_back(v[j] ? *v[j] : zero_like(wrt[j]));
        }
        return out;
      },
      concat(concat(xs, ps), lambda));
  for (std::size_t j = 0; j < wanted.size(); ++j) result[wanted[j]] = g[j];
  return result;
}

}  // namespace detail

}  // namespace tenferro
