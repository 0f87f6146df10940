// Graph-level transforms: forward and reverse sweeps over traced graphs that
// run the AdContext rules through an emitter whose values are graph nodes.
// Ops with bodies (checkpoint regions, control flow) are differentiated by
// their own jvp and vjp hooks.

#include <map>
#include <unordered_map>

#include "ad/program/body_op.hpp"
#include "tenferro/ad/linearize.hpp"
#include "tenferro/ad/transforms.hpp"

namespace tenferro {

namespace {

using detail::TracedNode;
using NodePtr = std::shared_ptr<const TracedNode>;

class GraphEmitter final : public ad::Emitter {
 public:
  ad::Val add_value(const TracedTensor& t) {
    values_.push_back(t);
    return ad::Val{static_cast<std::int64_t>(values_.size() - 1)};
  }
  const TracedTensor& get(ad::Val v) const {
    if (!v.valid()) {
      fail(ErrorKind::Internal, "transform", "an AD rule used an invalid value");
    }
    return values_.at(static_cast<std::size_t>(v.id));
  }
  std::vector<ad::Val> emit(const OpPtr& op, std::span<const ad::Val> inputs) override {
    std::vector<TracedTensor> ins;
    for (ad::Val v : inputs) ins.push_back(get(v));
    std::vector<ad::Val> out;
    for (const auto& t : detail::make_traced(op, ins)) out.push_back(add_value(t));
    return out;
  }
  TensorMeta meta(ad::Val v) const override { return get(v).meta(); }

 private:
  std::vector<TracedTensor> values_;
};

using Key = std::pair<const TracedNode*, std::uint32_t>;

void check_like(const TracedTensor& value, const TracedTensor& like, const char* what,
                const char* transform, std::size_t i) {
  if (!value.defined() || !like.defined()) {
    fail(ErrorKind::InvalidArgument, transform, what, " ", i, " is undefined");
  }
  if (value.dtype() != like.dtype()) {
    fail(ErrorKind::DTypeMismatch, transform, what, " ", i, " has dtype ", name(value.dtype()),
         " but must match ", name(like.dtype()));
  }
  if (!(value.shape() == like.shape())) {
    fail(ErrorKind::ShapeMismatch, transform, what, " ", i, " has shape ", to_string(value.shape()),
         " but must match ", to_string(like.shape()));
  }
}

// Which nodes depend on a wrt value (wrt values cut the graph: their own
// producers are not differentiated through).
struct Dependence {
  std::map<Key, std::size_t> wrt;  // value -> first wrt position
  std::unordered_map<const TracedNode*, bool> node;
  bool value(const TracedTensor& t) const {
    return wrt.count({t.node().get(), t.index()}) || node.at(t.node().get());
  }
};

Dependence analyse(const std::vector<NodePtr>& order, std::span<const TracedTensor> wrt) {
  Dependence d;
  for (std::size_t i = 0; i < wrt.size(); ++i)
    d.wrt.emplace(Key{wrt[i].node().get(), wrt[i].index()}, i);
  for (const auto& n : order) {
    bool dep = false;
    for (const auto& t : n->inputs) dep |= d.value(t);
    d.node[n.get()] = dep;
  }
  return d;
}

// An op with bodies is differentiated by its own hooks (ad/program/body_op.hpp)
// over the traced values the emitter holds.
std::vector<TracedTensor> node_outputs(const NodePtr& n) {
  std::vector<TracedTensor> outs;
  for (std::uint32_t j = 0; j < n->outputs.size(); ++j) outs.emplace_back(n, j);
  return outs;
}

std::vector<ad::MaybeVal> body_backward(GraphEmitter& em, const NodePtr& node,
                                        const detail::BodyOp& op, std::span<const ad::MaybeVal> cts,
                                        const ad::AdContext& rules) {
  const TracedNode& n = *node;
  std::vector<std::optional<TracedTensor>> out_ct;
  for (const auto& c : cts) out_ct.push_back(c ? std::optional(em.get(*c)) : std::nullopt);
  std::vector<ad::MaybeVal> result;
  for (const auto& c : op.vjp(n.inputs, node_outputs(node), out_ct, rules))
    result.push_back(c ? ad::MaybeVal(em.add_value(*c)) : std::nullopt);
  return result;
}

std::vector<ad::MaybeVal> body_forward(GraphEmitter& em, const NodePtr& node,
                                       const detail::BodyOp& op,
                                       std::span<const ad::MaybeVal> tangents,
                                       const ad::AdContext& rules) {
  const TracedNode& n = *node;
  std::vector<std::optional<TracedTensor>> in_t;
  for (const auto& t : tangents) in_t.push_back(t ? std::optional(em.get(*t)) : std::nullopt);
  std::vector<ad::MaybeVal> result;
  for (const auto& t : op.jvp(n.inputs, node_outputs(node), in_t, rules))
    result.push_back(t ? ad::MaybeVal(em.add_value(*t)) : std::nullopt);
  return result;
}

TracedTensor real_scalar_check(const TracedTensor& y, const char* transform) {
  if (!y.defined()) fail(ErrorKind::InvalidArgument, transform, "the output is undefined");
  // The same rule and kinds as the eager grad and backward().
  if (y.rank() != 0) {
    fail(ErrorKind::ShapeMismatch, transform, "needs a scalar (rank-0) output, got shape ",
         to_string(y.shape()), "; reduce it first or use vjp with a cotangent");
  }
  if (!is_floating(y.dtype())) {
    fail(ErrorKind::DTypeMismatch, transform, "needs a real floating output, got ", name(y.dtype()),
         "; take real() or abs() first, or use vjp with a cotangent");
  }
  return full_like(y, 1.0);
}

}  // namespace

std::vector<std::optional<TracedTensor>> vjp_many(ListRef<TracedTensor> outputs,
                                                  ListRef<TracedTensor> cotangents,
                                                  ListRef<TracedTensor> wrt,
                                                  const ad::AdContext& rules) {
  if (cotangents.size() != outputs.size()) {
    fail(ErrorKind::InvalidArgument, "vjp", "got ", cotangents.size(), " cotangents for ",
         outputs.size(), " outputs; pass one per output");
  }
  for (std::size_t j = 0; j < outputs.size(); ++j)
    check_like(cotangents[j], outputs[j], "cotangent", "vjp", j);
  for (std::size_t i = 0; i < wrt.size(); ++i) {
    if (!wrt[i].defined())
      fail(ErrorKind::InvalidArgument, "vjp", "wrt value ", i, " is undefined");
  }
  const std::vector<NodePtr> order = detail::topo_order(outputs);
  const Dependence dep = analyse(order, wrt);
  GraphEmitter em;
  std::unordered_map<const TracedNode*, std::vector<ad::MaybeVal>> cts;
  auto accumulate = [&](const TracedTensor& at, ad::Val v) {
    auto& slots = cts[at.node().get()];
    slots.resize(at.node()->outputs.size());
    ad::MaybeVal& s = slots[at.index()];
    s = s ? em.add(*s, v) : v;
  };
  for (std::size_t j = 0; j < outputs.size(); ++j) {
    if (dep.value(outputs[j])) accumulate(outputs[j], em.add_value(cotangents[j]));
  }
  std::vector<std::optional<TracedTensor>> result(wrt.size());
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const TracedNode& n = **it;
    auto found = cts.find(&n);
    if (found == cts.end()) continue;
    std::vector<ad::MaybeVal> out_ct = std::move(found->second);
    out_ct.resize(n.outputs.size());
    bool cut = false;
    for (std::uint32_t j = 0; j < n.outputs.size(); ++j) {
      auto w = dep.wrt.find({&n, j});
      if (w == dep.wrt.end()) continue;
      cut = true;
      if (out_ct[j]) {
        for (std::size_t i = 0; i < wrt.size(); ++i) {
          if (wrt[i].node().get() == &n && wrt[i].index() == j) result[i] = em.get(*out_ct[j]);
        }
      }
    }
    if (cut || !dep.node.at(&n) || n.op == nullptr) continue;
    std::vector<ad::MaybeVal> in_ct;
    if (const auto* body = detail::body_op(n.op.get())) {
      in_ct = body_backward(em, *it, *body, out_ct, rules);
    } else {
      std::vector<ad::Val> ins, outs;
      std::vector<TensorMeta> metas;
      for (const auto& t : n.inputs) {
        ins.push_back(em.add_value(t));
        metas.push_back(t.meta());
      }
      for (std::uint32_t j = 0; j < n.outputs.size(); ++j)
        outs.push_back(em.add_value(TracedTensor(*it, j)));
      in_ct = ad::backward_op(rules, em, *n.op, metas, ins, outs, out_ct, "vjp");
    }
    for (std::size_t i = 0; i < n.inputs.size() && i < in_ct.size(); ++i) {
      if (in_ct[i] && dep.value(n.inputs[i])) accumulate(n.inputs[i], *in_ct[i]);
    }
  }
  return result;
}

std::vector<std::optional<TracedTensor>> jvp_many(ListRef<TracedTensor> outputs,
                                                  ListRef<TracedTensor> wrt,
                                                  ListRef<TracedTensor> tangents,
                                                  const ad::AdContext& rules) {
  if (tangents.size() != wrt.size()) {
    fail(ErrorKind::InvalidArgument, "jvp", "got ", tangents.size(), " tangents for ", wrt.size(),
         " inputs; pass one per input");
  }
  for (std::size_t i = 0; i < wrt.size(); ++i) check_like(tangents[i], wrt[i], "tangent", "jvp", i);
  for (std::size_t j = 0; j < outputs.size(); ++j) {
    if (!outputs[j].defined())
      fail(ErrorKind::InvalidArgument, "jvp", "output ", j, " is undefined");
  }
  const std::vector<NodePtr> order = detail::topo_order(outputs);
  GraphEmitter em;
  std::map<Key, ad::Val> tan;
  for (std::size_t i = 0; i < wrt.size(); ++i) {
    if (ad::differentiable(wrt[i].dtype()))
      tan[{wrt[i].node().get(), wrt[i].index()}] = em.add_value(tangents[i]);
  }
  for (const auto& sp : order) {
    const TracedNode& n = *sp;
    if (n.op == nullptr) continue;
    bool cut = false;
    for (std::uint32_t j = 0; j < n.outputs.size(); ++j) cut |= tan.count({&n, j}) != 0;
    if (cut) continue;  // a wrt value: its tangent is given
    std::vector<ad::MaybeVal> in_t;
    bool any = false;
    for (const auto& t : n.inputs) {
      auto f = tan.find({t.node().get(), t.index()});
      in_t.push_back(f == tan.end() ? ad::MaybeVal{} : ad::MaybeVal{f->second});
      any |= f != tan.end();
    }
    if (!any) continue;
    std::vector<ad::MaybeVal> out_t;
    if (const auto* body = detail::body_op(n.op.get())) {
      out_t = body_forward(em, sp, *body, in_t, rules);
    } else {
      std::vector<ad::Val> ins, outs;
      for (const auto& t : n.inputs) ins.push_back(em.add_value(t));
      for (std::uint32_t j = 0; j < n.outputs.size(); ++j)
        outs.push_back(em.add_value(TracedTensor(sp, j)));
      out_t = ad::forward_op(rules, em, *n.op, ins, outs, in_t, "jvp");
    }
    for (std::uint32_t j = 0; j < out_t.size() && j < n.outputs.size(); ++j) {
      if (out_t[j]) tan[{&n, j}] = *out_t[j];
    }
  }
  std::vector<std::optional<TracedTensor>> result(outputs.size());
  for (std::size_t j = 0; j < outputs.size(); ++j) {
    auto f = tan.find({outputs[j].node().get(), outputs[j].index()});
    if (f != tan.end()) result[j] = em.get(f->second);
  }
  return result;
}

std::optional<TracedTensor> vjp(const TracedTensor& y, const TracedTensor& cotangent,
                                const TracedTensor& x, const ad::AdContext& rules) {
  const TracedTensor ys[1] = {y}, cs[1] = {cotangent}, xs[1] = {x};
  return vjp_many(ys, cs, xs, rules)[0];
}

std::optional<TracedTensor> jvp(const TracedTensor& y, const TracedTensor& x,
                                const TracedTensor& tangent, const ad::AdContext& rules) {
  const TracedTensor ys[1] = {y}, xs[1] = {x}, ts[1] = {tangent};
  return jvp_many(ys, xs, ts, rules)[0];
}

std::vector<std::optional<TracedTensor>> grad_many(const TracedTensor& y, ListRef<TracedTensor> wrt,
                                                   const ad::AdContext& rules) {
  const TracedTensor seed = real_scalar_check(y, "grad");
  const TracedTensor ys[1] = {y}, cs[1] = {seed};
  return vjp_many(ys, cs, wrt, rules);
}

TracedTensor grad(const TracedTensor& y, const TracedTensor& x, const ad::AdContext& rules) {
  return grad(y, x, GradOptions{}, rules);
}

TracedTensor grad(const TracedTensor& y, const TracedTensor& x, const GradOptions& options,
                  const ad::AdContext& rules) {
  const TracedTensor xs[1] = {x};
  auto g = grad_many(y, xs, rules)[0];
  if (g) return *g;
  if (!options.allow_unused) {
    fail(ErrorKind::InvalidArgument, "grad",
         "the result does not depend on this input; pass GradOptions{.allow_unused = true} for "
         "zeros, or use grad_many for \"no dependence\" (nullopt)");
  }
  return zeros_like(x);
}

TracedTensor hvp(const TracedTensor& y, const TracedTensor& x, const TracedTensor& v, HvpMode mode,
                 const ad::AdContext& rules) {
  check_like(v, x, "direction", "hvp", 0);
  const TracedTensor g = grad(y, x, GradOptions{.allow_unused = true}, rules);
  if (mode == HvpMode::ForwardOverReverse) {
    auto t = jvp(g, x, v, rules);
    return t ? *t : zeros_like(x);
  }
  // <g, v> under the real inner product; its gradient is H v (H is symmetric).
  TracedTensor inner = is_complex(g.dtype()) ? sum(real(conj(g) * v)) : sum(g * v);
  return grad(inner, x, GradOptions{.allow_unused = true}, rules);
}

}  // namespace tenferro
