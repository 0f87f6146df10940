#include <algorithm>
#include <cstdint>
#include <memory>
#include <unordered_map>

#include "ad/eager/impl.hpp"
#include "tenferro/backend/elementwise.hpp"
#include "tenferro/core/report_as.hpp"

namespace tenferro {

using detail::EagerImpl;
using detail::GradNode;
using detail::NodeKind;

namespace detail {

namespace {

// A saved residual as an eager tensor that keeps its place in the graph, so
// derivatives computed from it are themselves differentiable.
EagerTensor unpack(const EagerRuntimePtr& rt, const SavedValue& s) {
  auto impl = detail::make_pooled<EagerImpl>(s.value, rt);
  impl->node = s.node ? s.node : s.self.lock();
  impl->output_index = s.index;
  impl->requires_grad = impl->node != nullptr;
  return EagerTensor(std::move(impl));
}

// Every node reachable from the roots through input edges, each once. The
// nodes seen are kept in an open-addressing table (Fibonacci hashing, at
// most half full), so a traversal allocates per graph, not per node.
PooledVector<GradNode*> collect(const PooledVector<GradNode*>& roots) {
  PooledVector<GradNode*> order;
  PooledVector<GradNode*> seen;
  unsigned bits = 0;
  auto insert = [&](GradNode* n) {  // false: already there
    const std::size_t mask = seen.size() - 1;
    std::size_t h = (reinterpret_cast<std::uintptr_t>(n) * 0x9E3779B97F4A7C15ull) >> (64 - bits);
    for (; seen[h] != nullptr; h = (h + 1) & mask)
      if (seen[h] == n) return false;
    seen[h] = n;
    return true;
  };
  auto grow = [&] {
    bits = bits == 0 ? 6 : bits + 1;
    seen.assign(std::size_t{1} << bits, nullptr);
    for (GradNode* o : order) insert(o);
  };
  grow();
  PooledVector<GradNode*> stack(roots.begin(), roots.end());
  while (!stack.empty()) {
    GradNode* n = stack.back();
    stack.pop_back();
    if (n == nullptr || !insert(n)) continue;
    order.push_back(n);
    if (2 * order.size() > seen.size()) grow();
    for (const auto& e : n->inputs) stack.push_back(e.node.get());
  }
  return order;
}

// Traversal order: ascending seq (inputs before their users); the pointer
// breaks ties between runtimes' counters.
bool recorded_before(const GradNode* a, const GradNode* b) {
  return a->seq != b->seq ? a->seq < b->seq : std::less<const GradNode*>{}(a, b);
}

// The position of n in `nodes` (sorted by recorded_before), or nodes.size():
// per-node state of a traversal lives in vectors, not hash maps.
std::size_t position(const PooledVector<GradNode*>& nodes, const GradNode* n) {
  const auto it = std::lower_bound(nodes.begin(), nodes.end(), n, recorded_before);
  return it != nodes.end() && *it == n ? static_cast<std::size_t>(it - nodes.begin())
                                       : nodes.size();
}

EagerTensor accumulate(const std::optional<EagerTensor>& acc, const EagerTensor& add) {
  if (!acc) return add;
  static const OpPtr op = make_primitive(prim::Binary{BinaryOp::Add});
  const EagerTensor in[2] = {*acc, add};
  return eager_dispatch1(add.runtime(), op, in);
}

}  // namespace

const EagerTensor* find_cotangent(const TargetCotangents& cts, const GradNode* node) {
  const auto it =
      std::lower_bound(cts.begin(), cts.end(), node, [](const auto& entry, const GradNode* n) {
        return std::less<const GradNode*>{}(entry.first, n);
      });
  return it != cts.end() && it->first == node ? &it->second : nullptr;
}

TargetCotangents run_reverse(const EagerRuntimePtr& rt,
                             const std::vector<std::pair<EagerTensor, EagerTensor>>& roots,
                             const TargetNodes* targets, bool create_graph,
                             std::string_view transform) {
  auto is_target = [&](const GradNode* n) {
    return targets != nullptr &&
           std::binary_search(targets->begin(), targets->end(), n, std::less<const GradNode*>{});
  };
  std::optional<NoGradGuard> no_grad;
  if (!create_graph) no_grad.emplace();

  PooledVector<GradNode*> root_nodes;
  for (const auto& [out, seed] : roots) root_nodes.push_back(out.impl()->node.get());
  PooledVector<GradNode*> nodes = collect(root_nodes);
  std::sort(nodes.begin(), nodes.end(), recorded_before);
  const std::size_t count = nodes.size();
  // Per node: where its output cotangents start in `cts`, how many outputs
  // it has, and whether it leads to a target (or to a live leaf in
  // backward()). Flat, so a traversal allocates per graph, not per node.
  struct NodeState {
    std::size_t first = 0;
    std::uint32_t outputs = 0;
    bool needed = false;
  };
  PooledVector<NodeState> state(count);
  auto is_needed = [&](const GradNode* n) {
    if (n == nullptr) return false;
    const std::size_t k = position(nodes, n);
    return k < count && state[k].needed;
  };
  std::size_t slots = 0;
  for (std::size_t k = 0; k < count; ++k) {  // ascending: inputs before users
    const GradNode* n = nodes[k];
    const bool target = is_target(n);
    bool need = targets ? target : (n->kind == NodeKind::Leaf && !n->leaf.expired());
    if (!target) {
      for (const auto& e : n->inputs) need = need || (e.node && is_needed(e.node.get()));
    }
    const std::size_t outputs =
        n->kind == NodeKind::Op ? std::max<std::size_t>(n->op->output_count(), 1) : 1;
    state[k] = NodeState{slots, static_cast<std::uint32_t>(outputs), need};
    slots += outputs;
  }

  // cts[state[k].first + j]: the cotangent delivered to node k's output j so far.
  PooledVector<std::optional<EagerTensor>> cts(slots);
  auto deliver = [&](const GradNode* n, std::uint32_t index, const EagerTensor& ct) {
    const NodeState& st = state[position(nodes, n)];
    if (index >= st.outputs) {
      fail(ErrorKind::Internal, "autodiff", "a cotangent reached output ", index,
           " of a node with ", st.outputs, " outputs");
    }
    auto& slot = cts[st.first + index];
    slot = accumulate(slot, ct);
  };
  for (const auto& [out, seed] : roots) {
    const GradNode* n = out.impl()->node.get();
    if (is_needed(n)) deliver(n, out.impl()->output_index, seed);
  }

  TargetCotangents results;
  // One emitter and operand lists for every node: cleared, not reallocated.
  EagerEmitter em(rt);
  PooledVector<ad::Val> ins, outs;
  PooledVector<ad::MaybeVal> ct_vals;
  PooledVector<TensorMeta> metas;
  PooledVector<std::optional<EagerTensor>> out_ct;
  // wanted[i]: input i of the node leads somewhere (its cotangent is read);
  // the rules skip the others (an untracked operand's share).
  std::unique_ptr<bool[]> wanted;
  std::size_t wanted_capacity = 0;
  for (std::size_t k = count; k-- > 0;) {
    GradNode* n = nodes[k];
    if (!state[k].needed) continue;
    // Take the node's cotangents out of the table (released with the node's step).
    const auto first = cts.begin() + static_cast<std::ptrdiff_t>(state[k].first);
    const auto last = first + state[k].outputs;
    if (std::none_of(first, last, [](const auto& c) { return c.has_value(); })) continue;
    out_ct.assign(std::make_move_iterator(first), std::make_move_iterator(last));
    std::for_each(first, last, [](auto& c) { c.reset(); });
    if (is_target(n)) {
      if (!out_ct.empty() && out_ct[0]) results.emplace_back(n, *out_ct[0]);
      continue;
    }
    if (n->kind == NodeKind::Leaf) {
      auto leaf = n->leaf.lock();
      if (!leaf || out_ct.empty() || !out_ct[0]) continue;
      std::lock_guard<std::mutex> lock(leaf->grad_mutex);
      std::optional<EagerTensor> have;
      if (leaf->grad) have = EagerTensor(leaf->grad);
      EagerTensor sum = accumulate(have, *out_ct[0]);
      leaf->grad = create_graph ? sum.impl() : sum.detach().impl();
      continue;
    }
    if (n->kind == NodeKind::Alias) {
      if (!out_ct.empty() && out_ct[0] && n->inputs[0].node && is_needed(n->inputs[0].node.get())) {
        deliver(n->inputs[0].node.get(), n->inputs[0].index, *out_ct[0]);
      }
      continue;
    }
    em.clear();
    ins.assign(n->inputs.size(), ad::Val{});
    outs.assign(n->recorded_outputs(), ad::Val{});
    for (std::size_t i = 0; i < n->saved_inputs.size(); ++i)
      if (n->saved_inputs[i].present) ins[i] = em.add_value(unpack(rt, n->saved_inputs[i]));
    for (std::size_t j = 0; j < n->saved_outputs.size(); ++j)
      if (n->saved_outputs[j].present) outs[j] = em.add_value(unpack(rt, n->saved_outputs[j]));
    ct_vals.assign(n->op->output_count(), std::nullopt);
    for (std::size_t j = 0; j < out_ct.size() && j < ct_vals.size(); ++j)
      if (out_ct[j]) ct_vals[j] = em.add_value(*out_ct[j]);
    n->symbolic_metas(metas);
    const std::span<const TensorMeta> all(metas);
    if (wanted_capacity < n->inputs.size()) {
      wanted_capacity = std::max<std::size_t>(8, n->inputs.size());
      wanted = std::make_unique<bool[]>(wanted_capacity);
    }
    for (std::size_t i = 0; i < n->inputs.size(); ++i)
      wanted[i] = n->inputs[i].node && is_needed(n->inputs[i].node.get());
    std::vector<ad::MaybeVal> in_ct;
    try {
      in_ct = ad::backward_op(rt->ad(), em, *n->op, all.first(n->inputs.size()), ins, outs, ct_vals,
                              transform, all.subspan(n->inputs.size()),
                              std::span<const bool>(wanted.get(), n->inputs.size()));
    } catch (const Error& e) {
      // Named as what the user called (backward, grad, ...) and the op whose
      // derivative failed; the cause chain keeps the inner error.
      if (e.op() == transform) throw;
      rethrow_with_context(e, e.phase(), std::string(transform),
                           "the derivative of " + user_op_name(n->op->name()) + " failed");
    }
    for (std::size_t i = 0; i < n->inputs.size() && i < in_ct.size(); ++i) {
      if (!in_ct[i] || !wanted[i]) continue;
      const Edge& e = n->inputs[i];
      deliver(e.node.get(), e.index, em.get(*in_ct[i]));
    }
    em.clear();  // the rule's temporaries are not held past its node
  }
  std::sort(results.begin(), results.end(), [](const auto& a, const auto& b) {
    return std::less<const GradNode*>{}(a.first, b.first);
  });
  return results;
}

std::optional<EagerTensor> run_forward(const EagerRuntimePtr& rt, const GradNode* source,
                                       const EagerTensor& v, const EagerTensor& output,
                                       std::string_view transform) {
  const GradNode* out_node = output.impl()->node.get();
  if (out_node == nullptr) return std::nullopt;
  PooledVector<GradNode*> nodes = collect({output.impl()->node.get()});
  std::sort(nodes.begin(), nodes.end(), recorded_before);
  std::unordered_map<const GradNode*, std::vector<std::optional<EagerTensor>>> tangents;
  tangents[source] = {v};
  auto tangent_of = [&](const Edge& e) -> std::optional<EagerTensor> {
    if (!e.node) return std::nullopt;
    auto it = tangents.find(e.node.get());
    if (it == tangents.end() || it->second.size() <= e.index) return std::nullopt;
    return it->second[e.index];
  };
  for (GradNode* n : nodes) {
    if (n == source || n->kind == NodeKind::Leaf) continue;
    if (n->kind == NodeKind::Alias) {
      if (auto t = tangent_of(n->inputs[0])) tangents[n] = {*t};
      continue;
    }
    std::vector<ad::MaybeVal> tin(n->inputs.size());
    EagerEmitter em(rt);
    bool any = false;
    for (std::size_t i = 0; i < n->inputs.size(); ++i) {
      if (auto t = tangent_of(n->inputs[i])) {
        tin[i] = em.add_value(*t);
        any = true;
      }
    }
    if (!any) continue;
    PooledVector<TensorMeta> metas;
    n->symbolic_metas(metas);
    std::vector<ad::Val> ins(n->inputs.size()), outs(n->recorded_outputs());
    for (std::size_t i = 0; i < n->saved_inputs.size(); ++i)
      if (n->saved_inputs[i].present) ins[i] = em.add_value(unpack(rt, n->saved_inputs[i]));
    for (std::size_t j = 0; j < n->saved_outputs.size(); ++j)
      if (n->saved_outputs[j].present) outs[j] = em.add_value(unpack(rt, n->saved_outputs[j]));
    std::vector<ad::MaybeVal> tout;
    try {
      tout = ad::forward_op(rt->ad(), em, *n->op, ins, outs, tin, transform,
                            std::span<const TensorMeta>(metas).first(n->inputs.size()));
    } catch (const Error& e) {
      if (e.op() == transform) throw;
      rethrow_with_context(e, e.phase(), std::string(transform),
                           "the derivative of " + user_op_name(n->op->name()) + " failed");
    }
    auto& slot = tangents[n];
    slot.resize(tout.size());
    for (std::size_t j = 0; j < tout.size(); ++j)
      if (tout[j]) slot[j] = em.get(*tout[j]);
  }
  auto it = tangents.find(out_node);
  if (it == tangents.end() || it->second.size() <= output.impl()->output_index) return std::nullopt;
  return it->second[output.impl()->output_index];
}

}  // namespace detail

// ---- backward ----------------------------------------------------------------------------

void EagerTensor::backward() const {
  if (!defined()) fail(ErrorKind::InvalidArgument, "backward", "eager tensor is undefined");
  if (numel() != 1) {
    fail(ErrorKind::ShapeMismatch, "backward",
         "backward() needs a scalar (one element), got shape ", shape_to_string(shape()),
         "; pass a seed: backward(seed)");
  }
  if (is_complex(dtype())) {
    // As PyTorch: the implicit seed 1 is defined for real losses only.
    fail(ErrorKind::DTypeMismatch, "backward",
         "backward() without a seed needs a real scalar loss, got ", name(dtype()),
         "; take real() or abs() of it first, or pass a seed: backward(seed)");
  }
  backward(runtime()->tensor(full(shape(), Scalar(1.0), dtype(), runtime()->backend())));
}

void EagerTensor::backward(const EagerTensor& seed) const {
  if (!defined() || !seed.defined())
    fail(ErrorKind::InvalidArgument, "backward", "tensor or seed is undefined");
  if (seed.runtime() != runtime()) {
    fail(ErrorKind::ContextMismatch, "backward",
         "the seed belongs to another eager runtime; detach_into() it first");
  }
  if (seed.dtype() != dtype()) {
    fail(ErrorKind::DTypeMismatch, "backward", "seed dtype ", name(seed.dtype()),
         " differs from output dtype ", name(dtype()));
  }
  if (!(seed.shape() == shape())) {
    fail(ErrorKind::ShapeMismatch, "backward", "seed shape ", shape_to_string(seed.shape()),
         " differs from output shape ", shape_to_string(shape()));
  }
  if (!impl()->node) {
    fail(ErrorKind::RuntimeState, "backward",
         "this tensor does not require grad and has no recorded history; mark an input with "
         "requires_grad_() before computing it");
  }
  detail::run_reverse(runtime(), {{*this, seed.detach()}}, nullptr, /*create_graph=*/false,
                      "backward");
}

// ---- functional transforms -------------------------------------------------------------------

namespace {
template <class F>
void require_function(const F& f, const char* transform) {
  if (!f) fail(ErrorKind::InvalidArgument, transform, "the function is empty; pass a callable");
}
}  // namespace

namespace {

// A tracked alias of x that the current transform differentiates with respect
// to; it forwards derivatives to x's own history for outer transforms.
EagerTensor make_alias(const EagerTensor& x) {
  auto impl = detail::make_pooled<EagerImpl>();
  impl->value = x.value();
  impl->rt = x.runtime();
  impl->requires_grad = true;
  auto node = detail::make_pooled<GradNode>();
  node->kind = NodeKind::Alias;
  node->seq = x.runtime()->next_node_seq();
  node->inputs.push_back(detail::Edge{x.impl()->node, x.impl()->output_index});
  node->runtime = x.runtime();
  impl->node = std::move(node);
  return EagerTensor(std::move(impl));
}

void require_differentiable(const EagerTensor& x, const char* what) {
  if (!x.defined()) fail(ErrorKind::InvalidArgument, what, "input is undefined");
  if (!is_inexact(x.dtype())) {
    fail(ErrorKind::DTypeMismatch, what, "cannot differentiate with respect to a ", name(x.dtype()),
         " input; convert it to a floating or complex dtype");
  }
}

EagerTensor finish(const EagerTensor& result, bool keep_graph) {
  return keep_graph ? result : result.detach();
}

std::vector<std::optional<EagerTensor>> reverse_many(const EagerFnN& f,
                                                     std::span<const EagerTensor> xs,
                                                     const EagerTensor* seed, EagerTensor* out,
                                                     const char* what) {
  if (xs.empty()) fail(ErrorKind::InvalidArgument, what, "at least one input is required");
  std::vector<EagerTensor> aliases;
  detail::TargetNodes targets;
  bool any_tracked = false;
  for (const auto& x : xs) {
    require_differentiable(x, what);
    aliases.push_back(make_alias(x));
    targets.push_back(aliases.back().impl()->node.get());
    any_tracked |= x.impl()->node != nullptr;
  }
  detail::common_runtime(xs, what);
  EagerTensor y = f(aliases);
  if (!y.defined())
    fail(ErrorKind::InvalidArgument, what, "the function returned an undefined tensor");
  const bool keep = any_tracked && grad_recording_enabled();
  if (out) *out = finish(y, keep);
  std::vector<std::optional<EagerTensor>> result(xs.size());
  if (!y.impl()->node) return result;  // no dependence at all
  EagerTensor s;
  if (seed) {
    if (seed->dtype() != y.dtype() || !(seed->shape() == y.shape())) {
      fail(ErrorKind::ShapeMismatch, what, "cotangent has ", name(seed->dtype()),
           shape_to_string(seed->shape()), " but the output is ", name(y.dtype()),
           shape_to_string(y.shape()));
    }
    s = *seed;
  } else {
    // The same rule and kinds as the traced grad and backward().
    if (y.numel() != 1) {
      fail(ErrorKind::ShapeMismatch, what, "grad needs a scalar function, got output shape ",
           shape_to_string(y.shape()), "; use vjp for non-scalar outputs");
    }
    if (!is_floating(y.dtype())) {
      fail(ErrorKind::DTypeMismatch, what, "grad needs a real floating output, got ",
           name(y.dtype()), "; take real() or abs() first, or use vjp with a cotangent");
    }
    s = y.runtime()->tensor(full(y.shape(), Scalar(1.0), y.dtype(), y.runtime()->backend()));
  }
  std::sort(targets.begin(), targets.end(), std::less<const GradNode*>{});
  const auto cts =
      detail::run_reverse(y.runtime(), {{y, s}}, &targets, grad_recording_enabled(), what);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    if (const EagerTensor* ct = detail::find_cotangent(cts, aliases[i].impl()->node.get()))
      result[i] = finish(*ct, keep);
  }
  return result;
}

}  // namespace

std::optional<EagerTensor> try_grad(const EagerFn& f, const EagerTensor& x) {
  require_function(f, "try_grad");
  auto r = reverse_many([&](std::span<const EagerTensor> a) { return f(a[0]); }, std::span(&x, 1),
                        nullptr, nullptr, "grad");
  return r[0];
}

EagerTensor grad(const EagerFn& f, const EagerTensor& x, const GradOptions& options) {
  require_function(f, "grad");
  auto g = try_grad(f, x);
  if (!g && options.allow_unused) return x.runtime()->tensor(zeros(x.shape().span(), x.dtype()));
  if (!g) {
    fail(ErrorKind::InvalidArgument, "grad",
         "the function does not depend on its input; pass GradOptions{.allow_unused = true} for "
         "zeros, or use try_grad to get \"no dependence\" (nullopt)");
  }
  return *g;
}

std::vector<std::optional<EagerTensor>> grad_many(const EagerFnN& f, ListRef<EagerTensor> xs) {
  require_function(f, "grad_many");
  return reverse_many(f, xs, nullptr, nullptr, "grad");
}

VjpResult vjp(const EagerFn& f, const EagerTensor& x, const EagerTensor& ct) {
  require_function(f, "vjp");
  VjpResult r;
  if (!ct.defined()) fail(ErrorKind::InvalidArgument, "vjp", "cotangent is undefined");
  auto cts = reverse_many([&](std::span<const EagerTensor> a) { return f(a[0]); }, std::span(&x, 1),
                          &ct, &r.output, "vjp");
  r.cotangent = cts[0];
  return r;
}

JvpResult jvp(const EagerFn& f, const EagerTensor& x, const EagerTensor& v) {
  require_function(f, "jvp");
  require_differentiable(x, "jvp");
  if (!v.defined()) fail(ErrorKind::InvalidArgument, "jvp", "tangent is undefined");
  if (v.runtime() != x.runtime()) {
    fail(ErrorKind::ContextMismatch, "jvp",
         "the tangent belongs to another eager runtime; detach_into() it first");
  }
  if (v.dtype() != x.dtype() || !(v.shape() == x.shape())) {
    fail(ErrorKind::ShapeMismatch, "jvp", "tangent has ", name(v.dtype()),
         shape_to_string(v.shape()), " but the input is ", name(x.dtype()),
         shape_to_string(x.shape()));
  }
  EagerTensor alias = make_alias(x);
  EagerTensor y = f(alias);
  if (!y.defined())
    fail(ErrorKind::InvalidArgument, "jvp", "the function returned an undefined tensor");
  const bool keep =
      (x.impl()->node != nullptr || v.impl()->node != nullptr) && grad_recording_enabled();
  JvpResult r;
  r.output = finish(y, keep);
  auto t = detail::run_forward(x.runtime(), alias.impl()->node.get(), v, y, "jvp");
  if (t) r.tangent = finish(*t, keep);
  return r;
}

EagerTensor jvp_tangent(const EagerFn& f, const EagerTensor& x, const EagerTensor& v) {
  require_function(f, "jvp_tangent");
  auto r = jvp(f, x, v);
  if (!r.tangent) {
    fail(ErrorKind::InvalidArgument, "jvp",
         "the function does not depend on its input; use jvp() to get "
         "\"no dependence\" instead of an error");
  }
  return *r.tangent;
}

}  // namespace tenferro
