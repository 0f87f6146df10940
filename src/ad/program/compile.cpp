// compile(): traced graph -> normalised Program (topological order, CSE,
// view folding, dead-code removal, structural fingerprint).

#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "ad/program/graph.hpp"

namespace tenferro {

namespace detail {

namespace {

bool is_identity(std::span<const std::int64_t> perm) {
  for (std::size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<std::int64_t>(i)) return false;
  return true;
}

bool same_tensor(const Tensor& a, const Tensor& b) {
  return a.storage() == b.storage() && a.offset() == b.offset() && a.dtype() == b.dtype() &&
         a.shape() == b.shape() && a.strides() == b.strides();
}

class GraphBuilder {
 public:
  GraphBuilder(const std::shared_ptr<const std::vector<Tensor>>& base,
               const CompileOptions& options)
      : base_(base), options_(options) {}

  ProgramGraph graph;
  std::vector<Tensor> new_constants;

  ValueRef add_input(std::size_t position, const TensorMeta& meta) {
    ProgramNode n;
    n.kind = ProgramNode::Kind::Input;
    n.slot = position;
    n.outputs.push_back(meta);
    return push(std::move(n))[0];
  }

  std::vector<ValueRef> add_op(const OpPtr& op, std::vector<ValueRef> ins) {
    if (auto* slot = dynamic_cast<const ConstantSlotOp*>(op.get())) {
      if (!base_ || slot->slot() >= base_->size()) {
        fail(ErrorKind::Internal, "compile", "constant slot ", slot->slot(),
             " has no constant to refer to");
      }
      return {add_constant(slot->slot(), op->infer({}).outputs[0])};
    }
    if (auto* prim = dynamic_cast<const PrimitiveOp*>(op.get())) {
      if (auto* c = prim->get<prim::Constant>()) return {add_tensor(c->value)};
      if (options_.fold_views) {
        if (auto folded = fold(*prim, ins)) return {*folded};
      }
      if (options_.simplify_algebra) {
        if (auto simplified = simplify(*prim, ins)) return {*simplified};
      }
    }
    return add_generic(op, std::move(ins));
  }

 private:
  std::vector<ValueRef> push(ProgramNode n) {
    const auto id = static_cast<std::uint32_t>(graph.nodes.size());
    std::vector<ValueRef> out;
    for (std::uint32_t j = 0; j < n.outputs.size(); ++j) out.push_back({id, j});
    graph.nodes.push_back(std::move(n));
    return out;
  }

  ValueRef add_constant(std::size_t slot, const TensorMeta& meta) {
    if (auto it = constant_nodes_.find(slot); it != constant_nodes_.end()) return it->second;
    ProgramNode n;
    n.kind = ProgramNode::Kind::Constant;
    n.slot = slot;
    n.outputs.push_back(meta);
    ValueRef r = push(std::move(n))[0];
    constant_nodes_.emplace(slot, r);
    return r;
  }

  ValueRef add_tensor(const Tensor& t) {
    const std::size_t offset = base_ ? base_->size() : 0;
    std::size_t slot = offset + new_constants.size();
    for (std::size_t i = 0; i < new_constants.size(); ++i) {
      if (same_tensor(new_constants[i], t)) slot = offset + i;
    }
    if (slot == offset + new_constants.size()) new_constants.push_back(t);
    return add_constant(slot, TensorMeta{t.dtype(), to_sym_shape(t.shape())});
  }

  const ProgramNode* producer(ValueRef v, const char* kind) const {
    const ProgramNode& n = graph.nodes[v.node];
    if (n.kind != ProgramNode::Kind::Op) return nullptr;
    auto* p = dynamic_cast<const PrimitiveOp*>(n.op.get());
    return p != nullptr && p->name() == kind ? &n : nullptr;
  }

  // Folds a view-like op into its producer or away; nullopt keeps it.
  std::optional<ValueRef> fold(const PrimitiveOp& op, std::vector<ValueRef>& ins) {
    const auto& in_meta = [&]() -> const TensorMeta& { return graph.meta(ins[0]); };
    if (auto* r = op.get<prim::Reshape>()) {
      if (in_meta().shape == r->shape) return ins[0];
      if (const ProgramNode* p = producer(ins[0], "reshape")) {
        const ValueRef src = p->inputs[0];
        if (graph.meta(src).shape == r->shape) return src;
        return add_generic(make_primitive(*r), {src})[0];
      }
    } else if (auto* t = op.get<prim::Transpose>()) {
      if (is_identity(t->perm)) return ins[0];
      if (const ProgramNode* p = producer(ins[0], "transpose")) {
        const auto& inner = static_cast<const PrimitiveOp&>(*p->op).get<prim::Transpose>()->perm;
        Axes composed;
        for (std::int64_t a : t->perm) composed.push_back(inner[static_cast<std::size_t>(a)]);
        const ValueRef src = p->inputs[0];
        if (is_identity(composed)) return src;
        return add_generic(make_primitive(prim::Transpose{composed}), {src})[0];
      }
    } else if (auto* c = op.get<prim::Convert>()) {
      if (in_meta().dtype == c->dtype) return ins[0];
    } else if (auto* b = op.get<prim::BroadcastInDim>()) {
      if (in_meta().shape == b->shape && is_identity(b->dims)) return ins[0];
    }
    return std::nullopt;
  }

  // A constant one: a fill of 1, possibly broadcast, reshaped or converted.
  bool is_one(ValueRef v, int depth = 0) const {
    const ProgramNode& n = graph.nodes[v.node];
    if (n.kind != ProgramNode::Kind::Op || depth > 8) return false;
    auto* p = dynamic_cast<const PrimitiveOp*>(n.op.get());
    if (p == nullptr) return false;
    if (auto* f = p->get<prim::Full>()) return f->value.real() == 1.0 && f->value.imag() == 0.0;
    if (p->get<prim::BroadcastInDim>() || p->get<prim::Reshape>() || p->get<prim::Convert>())
      return is_one(n.inputs[0], depth + 1);
    return false;
  }

  // Exact algebraic identities (CompileOptions::simplify_algebra); nullopt keeps the op.
  std::optional<ValueRef> simplify(const PrimitiveOp& op, const std::vector<ValueRef>& ins) {
    if (auto* u = op.get<prim::Unary>(); u && u->op == UnaryOp::Conj) {
      if (!is_complex(graph.meta(ins[0]).dtype)) return ins[0];
      const ProgramNode& n = graph.nodes[ins[0].node];
      if (n.kind == ProgramNode::Kind::Op) {
        auto* p = dynamic_cast<const PrimitiveOp*>(n.op.get());
        auto* inner = p != nullptr ? p->get<prim::Unary>() : nullptr;
        if (inner != nullptr && inner->op == UnaryOp::Conj) return n.inputs[0];
      }
    } else if (auto* b = op.get<prim::Binary>(); b && b->op == BinaryOp::Mul) {
      std::vector<TensorMeta> metas{graph.meta(ins[0]), graph.meta(ins[1])};
      const TensorMeta out = op.infer(metas).outputs[0];
      if (is_complex(out.dtype)) return std::nullopt;
      for (int k = 0; k < 2; ++k) {
        const ValueRef x = ins[static_cast<std::size_t>(k)];
        const ValueRef other = ins[static_cast<std::size_t>(1 - k)];
        const TensorMeta& m = graph.meta(x);
        if (is_one(other) && m.dtype == out.dtype && m.shape == out.shape) return x;
      }
    }
    return std::nullopt;
  }

  std::vector<ValueRef> add_generic(const OpPtr& op, std::vector<ValueRef> ins) {
    std::size_t key = op->hash();
    for (ValueRef v : ins) key = hash_combine(key, (std::size_t{v.node} << 8) ^ v.output);
    if (options_.merge_common) {
      auto [lo, hi] = cse_.equal_range(key);
      for (auto it = lo; it != hi; ++it) {
        const ProgramNode& n = graph.nodes[it->second];
        if (n.inputs == ins && (n.op == op || n.op->equals(*op))) {
          std::vector<ValueRef> out;
          for (std::uint32_t j = 0; j < n.outputs.size(); ++j) out.push_back({it->second, j});
          return out;
        }
      }
    }
    std::vector<TensorMeta> metas;
    for (ValueRef v : ins) metas.push_back(graph.meta(v));
    InferenceResult inferred = op->infer(metas);
    ProgramNode n;
    n.kind = ProgramNode::Kind::Op;
    n.op = op;
    n.inputs = std::move(ins);
    n.outputs = std::move(inferred.outputs);
    n.constraints = std::move(inferred.constraints);
    auto out = push(std::move(n));
    cse_.emplace(key, out[0].node);
    return out;
  }

  std::shared_ptr<const std::vector<Tensor>> base_;
  CompileOptions options_;
  std::unordered_multimap<std::size_t, std::uint32_t> cse_;
  std::unordered_map<std::size_t, ValueRef> constant_nodes_;
};

// Extension ops on the same inputs where one computes the other's outputs
// (Op::outputs_within) run once: the earlier node becomes the larger op and
// the uses of both point at it; the later node is left unused (remove_dead
// drops it). The earlier position keeps the order topological, since both
// read the same inputs.
void merge_subsumed(ProgramGraph& g) {
  std::vector<std::uint32_t> ext;
  for (std::uint32_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].kind == ProgramNode::Kind::Op && g.nodes[i].op->is_extension()) ext.push_back(i);
  if (ext.size() < 2) return;
  auto redirect = [&g](std::uint32_t from, std::uint32_t to, const std::vector<std::size_t>* map) {
    auto move = [&](ValueRef& v) {
      if (v.node != from) return;
      v = ValueRef{to, map ? static_cast<std::uint32_t>((*map)[v.output]) : v.output};
    };
    for (ProgramNode& n : g.nodes)
      for (ValueRef& v : n.inputs) move(v);
    for (ValueRef& v : g.outputs) move(v);
  };
  // The relation holds only where the metadata agree too.
  auto fits = [&g](std::uint32_t small, std::uint32_t big, const std::vector<std::size_t>& m) {
    const ProgramNode &s = g.nodes[small], &l = g.nodes[big];
    if (m.size() != s.outputs.size()) return false;
    for (std::size_t k = 0; k < m.size(); ++k)
      if (m[k] >= l.outputs.size() || !(s.outputs[k] == l.outputs[m[k]])) return false;
    return true;
  };
  std::vector<char> gone(g.nodes.size(), 0);
  for (std::size_t x = 0; x < ext.size(); ++x) {
    for (std::size_t y = x + 1; y < ext.size(); ++y) {
      const std::uint32_t a = ext[x], b = ext[y];
      if (gone[a] || gone[b] || g.nodes[a].inputs != g.nodes[b].inputs) continue;
      if (auto m = g.nodes[b].op->outputs_within(*g.nodes[a].op); m && fits(b, a, *m)) {
        redirect(b, a, &*m);
        gone[b] = 1;
      } else if (auto m2 = g.nodes[a].op->outputs_within(*g.nodes[b].op); m2 && fits(a, b, *m2)) {
        redirect(a, a, &*m2);
        g.nodes[a].op = g.nodes[b].op;
        g.nodes[a].outputs = g.nodes[b].outputs;
        g.nodes[a].constraints = g.nodes[b].constraints;
        redirect(b, a, nullptr);
        gone[b] = 1;
      }
    }
  }
}

// Drops nodes no output reaches (inputs stay) and renumbers.
void remove_dead(ProgramGraph& g) {
  std::vector<char> live(g.nodes.size(), 0);
  for (ValueRef v : g.outputs) live[v.node] = 1;
  for (std::size_t i = g.nodes.size(); i-- > 0;) {
    if (g.nodes[i].kind == ProgramNode::Kind::Input) live[i] = 1;
    if (!live[i]) continue;
    for (ValueRef v : g.nodes[i].inputs) live[v.node] = 1;
  }
  std::vector<std::uint32_t> renumber(g.nodes.size(), 0);
  std::vector<ProgramNode> kept;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    if (!live[i]) continue;
    renumber[i] = static_cast<std::uint32_t>(kept.size());
    kept.push_back(std::move(g.nodes[i]));
  }
  for (auto& n : kept)
    for (auto& v : n.inputs) v.node = renumber[v.node];
  for (auto& v : g.outputs) v.node = renumber[v.node];
  for (auto& v : g.input_nodes) v = renumber[v];
  g.nodes = std::move(kept);
}

std::size_t fingerprint_of(const ProgramGraph& g) {
  std::size_t h = 0x74726163;
  for (const ProgramNode& n : g.nodes) {
    h = hash_combine(h, static_cast<std::size_t>(n.kind));
    h = hash_combine(h, n.slot);
    if (n.op) h = hash_combine(h, n.op->hash());
    for (ValueRef v : n.inputs) h = hash_combine(h, (std::size_t{v.node} << 8) ^ v.output);
    for (const TensorMeta& m : n.outputs) h = hash_combine(h, hash_meta(m));
  }
  for (ValueRef v : g.outputs) h = hash_combine(h, (std::size_t{v.node} << 8) ^ v.output);
  return h;
}

}  // namespace

std::size_t hash_meta(const TensorMeta& m) {
  std::size_t h = static_cast<std::size_t>(m.dtype);
  for (const SymDim& d : m.shape) h = hash_combine(h, d.hash());
  return hash_combine(h, m.shape.size());
}

bool ProgramGraph::same_structure(const ProgramGraph& o) const {
  if (fingerprint != o.fingerprint || nodes.size() != o.nodes.size() || outputs != o.outputs ||
      input_nodes != o.input_nodes)
    return false;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const ProgramNode& a = nodes[i];
    const ProgramNode& b = o.nodes[i];
    if (a.kind != b.kind || a.slot != b.slot || a.inputs != b.inputs || a.outputs != b.outputs)
      return false;
    if ((a.op == nullptr) != (b.op == nullptr)) return false;
    if (a.op && a.op != b.op && !a.op->equals(*b.op)) return false;
  }
  return true;
}

std::size_t ConstantSlotOp::hash() const {
  return hash_combine(0x736c6f74 + slot_, hash_meta(meta_));
}
bool ConstantSlotOp::equals(const Op& other) const {
  auto* o = dynamic_cast<const ConstantSlotOp*>(&other);
  return o != nullptr && o->slot_ == slot_ && o->meta_ == meta_;
}

Program compile_graph(std::span<const TracedTensor> outputs, std::span<const TracedTensor> inputs,
                      const std::shared_ptr<const std::vector<Tensor>>& base,
                      const CompileOptions& options) {
  std::unordered_map<const TracedNode*, std::size_t> input_pos;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined() || !inputs[i].is_placeholder()) {
      fail(ErrorKind::InvalidArgument, "compile", "input ", i,
           " is not a placeholder; programs take placeholders as inputs");
    }
    if (!input_pos.emplace(inputs[i].node().get(), i).second) {
      fail(ErrorKind::InvalidArgument, "compile", "input ", i, " is listed twice");
    }
  }
  for (std::size_t j = 0; j < outputs.size(); ++j) {
    if (!outputs[j].defined()) {
      fail(ErrorKind::InvalidArgument, "compile", "output ", j, " is an undefined traced tensor");
    }
  }
  const auto order = topo_order(outputs);
  GraphBuilder b(base, options);
  std::unordered_map<const TracedNode*, std::vector<ValueRef>> mapped;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    mapped[inputs[i].node().get()] = {b.add_input(i, inputs[i].meta())};
    b.graph.input_nodes.push_back(mapped[inputs[i].node().get()][0].node);
  }
  for (const auto& shared : order) {
    const TracedNode* n = shared.get();
    if (n->op == nullptr) {
      if (input_pos.count(n) == 0) {
        fail(ErrorKind::InvalidArgument, "compile", "an output depends on placeholder ",
             n->label.empty() ? std::string("(unnamed)") : "'" + n->label + "'", " of type ",
             name(n->outputs[0].dtype), to_string(n->outputs[0].shape),
             ", which is not among the inputs; pass it in `inputs`");
      }
      continue;
    }
    std::vector<ValueRef> ins;
    for (const TracedTensor& t : n->inputs) ins.push_back(mapped.at(t.node().get())[t.index()]);
    mapped[n] = b.add_op(n->op, std::move(ins));
  }
  for (const TracedTensor& t : outputs)
    b.graph.outputs.push_back(mapped.at(t.node().get())[t.index()]);
  if (options.merge_common) merge_subsumed(b.graph);
  remove_dead(b.graph);
  std::shared_ptr<const std::vector<Tensor>> constants = base;
  if (!b.new_constants.empty() || !base) {
    auto all = std::make_shared<std::vector<Tensor>>(base ? *base : std::vector<Tensor>{});
    all->insert(all->end(), b.new_constants.begin(), b.new_constants.end());
    constants = std::move(all);
  }
  b.graph.constant_count = constants->size();
  b.graph.fingerprint = fingerprint_of(b.graph);
  return Program(std::make_shared<const ProgramGraph>(std::move(b.graph)), std::move(constants));
}

std::vector<TracedTensor> instantiate(const ProgramGraph& graph,
                                      std::span<const TracedTensor> inputs,
                                      const std::vector<Tensor>* constants) {
  std::vector<std::vector<TracedTensor>> vals(graph.nodes.size());
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    const ProgramNode& n = graph.nodes[i];
    switch (n.kind) {
      case ProgramNode::Kind::Input:
        vals[i] = {inputs[n.slot]};
        break;
      case ProgramNode::Kind::Constant:
        vals[i] = {constants != nullptr
                       ? tenferro::constant((*constants)[n.slot])
                       : make_traced1(std::make_shared<ConstantSlotOp>(n.slot, n.outputs[0]), {})};
        break;
      case ProgramNode::Kind::Op: {
        std::vector<TracedTensor> ins;
        for (ValueRef v : n.inputs) ins.push_back(vals[v.node][v.output]);
        vals[i] = make_traced(n.op, ins);
        break;
      }
    }
  }
  std::vector<TracedTensor> out;
  for (ValueRef v : graph.outputs) out.push_back(vals[v.node][v.output]);
  return out;
}

std::vector<TracedTensor> placeholders_for(const Program& program) {
  std::vector<TracedTensor> ps;
  for (std::size_t i = 0; i < program.input_count(); ++i) {
    const TensorMeta& m = program.input_meta(i);
    ps.push_back(placeholder(m.dtype, m.shape));
  }
  return ps;
}

}  // namespace detail

// ---- Program ---------------------------------------------------------------------------

Program::Program(std::shared_ptr<const detail::ProgramGraph> graph,
                 std::shared_ptr<const std::vector<Tensor>> constants)
    : graph_(std::move(graph)), constants_(std::move(constants)) {}

namespace {
// The graph of a program, or InvalidArgument for a default-constructed one.
const detail::ProgramGraph& graph_of(const Program& p, const char* what) {
  if (!p.defined()) {
    fail(ErrorKind::InvalidArgument, what,
         "the program is empty (default-constructed); build one with compile()");
  }
  return *p.graph();
}
}  // namespace

std::size_t Program::input_count() const {
  return graph_of(*this, "input_count").input_nodes.size();
}
std::size_t Program::output_count() const {
  return graph_of(*this, "output_count").outputs.size();
}
const TensorMeta& Program::input_meta(std::size_t i) const {
  const auto& g = graph_of(*this, "input_meta");
  if (i >= g.input_nodes.size()) {
    fail(ErrorKind::AxisOutOfBounds, "input_meta", "input ", i, " of a program with ",
         g.input_nodes.size(), " inputs");
  }
  return g.nodes[g.input_nodes[i]].outputs[0];
}
const TensorMeta& Program::output_meta(std::size_t j) const {
  const auto& g = graph_of(*this, "output_meta");
  if (j >= g.outputs.size()) {
    fail(ErrorKind::AxisOutOfBounds, "output_meta", "output ", j, " of a program with ",
         g.outputs.size(), " outputs");
  }
  return g.meta(g.outputs[j]);
}
std::size_t Program::node_count() const {
  std::size_t n = 0;
  for (const auto& node : graph_of(*this, "node_count").nodes)
    n += node.kind == detail::ProgramNode::Kind::Op;
  return n;
}
std::size_t Program::count_ops(std::string_view op_name) const {
  std::size_t n = 0;
  for (const auto& node : graph_of(*this, "count_ops").nodes)
    n += node.op && node.op->name() == op_name;
  return n;
}
std::size_t Program::fingerprint() const {
  return graph_of(*this, "fingerprint").fingerprint;
}
const std::vector<Tensor>& Program::constants() const {
  graph_of(*this, "constants");
  return *constants_;
}

std::string Program::to_string() const {
  graph_of(*this, "to_string");
  std::ostringstream os;
  for (std::size_t i = 0; i < graph_->nodes.size(); ++i) {
    const auto& n = graph_->nodes[i];
    os << '%' << i << " = ";
    if (n.kind == detail::ProgramNode::Kind::Input) {
      os << "input " << n.slot;
    } else if (n.kind == detail::ProgramNode::Kind::Constant) {
      os << "constant " << n.slot;
    } else {
      os << n.op->describe() << '(';
      for (std::size_t k = 0; k < n.inputs.size(); ++k) {
        os << (k ? ", %" : "%") << n.inputs[k].node;
        if (n.inputs[k].output) os << '.' << n.inputs[k].output;
      }
      os << ')';
    }
    os << " :";
    for (const auto& m : n.outputs) os << ' ' << name(m.dtype) << tenferro::to_string(m.shape);
    os << '\n';
  }
  os << "return";
  for (const auto& v : graph_->outputs) {
    os << " %" << v.node;
    if (v.output) os << '.' << v.output;
  }
  return os.str();
}

std::vector<TracedTensor> Program::call(ListRef<TracedTensor> inputs) const {
  graph_of(*this, "call");
  if (inputs.size() != input_count()) {
    fail(ErrorKind::InvalidArgument, "call", "the program takes ", input_count(), " inputs, got ",
         inputs.size());
  }
  return detail::instantiate(*graph_, inputs, constants_.get());
}

Program compile(ListRef<TracedTensor> outputs, ListRef<TracedTensor> inputs,
                const CompileOptions& options) {
  return detail::compile_graph(outputs, inputs, nullptr, options);
}

}  // namespace tenferro
