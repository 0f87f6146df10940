// Elementwise fusion planning: chains of elementwise primitives over one
// output shape become one FusedElementwise pass (tenferro/backend/fused.hpp),
// which the backend runs block by block with intermediates in cache-sized
// scratch buffers (assigned here by liveness). The backend computes each step
// with the kernels of the direct ops, so values match the unfused program.

#include "ad/program/exec.hpp"

namespace tenferro::detail {

namespace {

// Whether a node may join a fused group (operands already in the kernel's
// compute dtype, so no conversion hides inside the pass).
bool fusable(const ProgramGraph& g, const ProgramNode& n) {
  if (n.kind != ProgramNode::Kind::Op || n.outputs.size() != 1) return false;
  auto* p = dynamic_cast<const PrimitiveOp*>(n.op.get());
  if (p == nullptr) return false;
  auto in = [&](std::size_t k) { return g.meta(n.inputs[k]).dtype; };
  const DType out = n.outputs[0].dtype;
  if (p->get<prim::Unary>()) return is_inexact(in(0));
  if (auto* b = p->get<prim::Binary>()) {
    if (b->op == BinaryOp::LogicalAnd || b->op == BinaryOp::LogicalOr) return false;
    return in(0) == in(1) && binary_compute_dtype(b->op, in(0), in(1)) == in(0);
  }
  if (p->get<prim::Select>()) return in(0) == DType::Bool && in(1) == out && in(2) == out;
  if (p->get<prim::Clamp>()) return in(0) == out && !is_complex(out) && !is_bool(out);
  if (auto* c = p->get<prim::Convert>()) return !c->lossy && in(0) != out;
  if (p->get<prim::Full>()) return !n.outputs[0].shape.empty();
  return false;
}

// The reduction a node applies when it is a sum, product or mean of an
// inexact value over every element to a scalar (the dtype unchanged).
std::optional<ReduceOp> full_reduction(const ProgramGraph& g, const ProgramNode& n) {
  if (n.kind != ProgramNode::Kind::Op || n.outputs.size() != 1) return std::nullopt;
  auto* p = dynamic_cast<const PrimitiveOp*>(n.op.get());
  const prim::Reduce* r = p == nullptr ? nullptr : p->get<prim::Reduce>();
  if (r == nullptr || r->keepdim || !n.outputs[0].shape.empty()) return std::nullopt;
  if (r->op != ReduceOp::Sum && r->op != ReduceOp::Prod && r->op != ReduceOp::Mean)
    return std::nullopt;
  const DType in = g.meta(n.inputs[0]).dtype;
  if (!is_inexact(in) || n.outputs[0].dtype != in) return std::nullopt;
  return r->op;
}

// The backend step that computes what primitive `p` computes.
FusedElementwise::Step step_of(const PrimitiveOp& p) {
  using Kind = FusedElementwise::Kind;
  FusedElementwise::Step st;
  if (auto* u = p.get<prim::Unary>()) {
    st.kind = Kind::Unary;
    st.unary = u->op;
  } else if (auto* b = p.get<prim::Binary>()) {
    st.kind = Kind::Binary;
    st.binary = b->op;
  } else if (p.get<prim::Select>()) {
    st.kind = Kind::Select;
  } else if (auto* c = p.get<prim::Clamp>()) {
    st.kind = Kind::Clamp;
    st.lo = c->lo;
    st.hi = c->hi;
  } else if (p.get<prim::Convert>()) {
    st.kind = Kind::Convert;
  } else if (auto* f = p.get<prim::Full>()) {
    st.kind = Kind::Fill;
    st.value = f->value;
  } else {
    fail(ErrorKind::Internal, "fusion", "primitive ", p.name(), " is not fusable");
  }
  return st;
}

}  // namespace

std::vector<FusedPlan> plan_fusion(const ProgramGraph& g, std::vector<int>& group_of) {
  const std::size_t n = g.nodes.size();
  std::vector<std::vector<std::uint32_t>> consumers(n);
  for (std::uint32_t i = 0; i < n; ++i)
    for (ValueRef v : g.nodes[i].inputs) consumers[v.node].push_back(i);
  std::vector<char> is_output(n, 0);
  for (ValueRef v : g.outputs) is_output[v.node] = 1;

  // Reverse order: a node joins its consumers' group when every consumer is
  // in that one group (so no value leaves a group except its root).
  std::vector<std::vector<std::uint32_t>> members;
  std::vector<const SymShape*> shapes;
  group_of.assign(n, -1);
  for (std::size_t k = n; k-- > 0;) {
    const auto i = static_cast<std::uint32_t>(k);
    const ProgramNode& node = g.nodes[i];
    if (!fusable(g, node)) continue;
    int target = -1;
    bool join = !is_output[i] && !consumers[i].empty();
    for (std::uint32_t c : consumers[i]) {
      if (!join) break;
      if (group_of[c] < 0 || (target >= 0 && target != group_of[c])) join = false;
      target = group_of[c];
    }
    if (join && *shapes[static_cast<std::size_t>(target)] == node.outputs[0].shape) {
      group_of[i] = target;
      members[static_cast<std::size_t>(target)].push_back(i);
      continue;
    }
    const bool is_full = static_cast<const PrimitiveOp&>(*node.op).get<prim::Full>() != nullptr;
    if (is_full) continue;  // a lone fill is not worth a group
    group_of[i] = static_cast<int>(members.size());
    members.push_back({i});
    shapes.push_back(&node.outputs[0].shape);
  }

  // A group whose root only feeds a sum, product or mean over every element
  // of an inexact dtype takes that reduction in (see FusedPlan).
  std::vector<std::int64_t> reduce_node(members.size(), -1);
  std::vector<ReduceOp> reduce_op(members.size(), ReduceOp::Sum);
  for (std::size_t gi = 0; gi < members.size(); ++gi) {
    const std::uint32_t root = members[gi].front();
    if (is_output[root] || consumers[root].size() != 1) continue;
    const std::uint32_t c = consumers[root][0];
    if (auto op = full_reduction(g, g.nodes[c])) {
      reduce_node[gi] = c;
      reduce_op[gi] = *op;
    }
  }

  std::vector<FusedPlan> plans;
  std::vector<int> renumber(members.size(), -1);
  for (std::size_t gi = 0; gi < members.size(); ++gi) {
    if (members[gi].size() + (reduce_node[gi] >= 0 ? 1 : 0) < 2) continue;
    renumber[gi] = static_cast<int>(plans.size());
    FusedPlan plan;
    FusedElementwise pass;  // one step per elementwise member, in node order
    plan.nodes.assign(members[gi].rbegin(), members[gi].rend());  // ascending node order
    plan.shape = *shapes[gi];
    std::vector<int> member_of(n, -1);
    for (std::size_t m = 0; m < plan.nodes.size(); ++m)
      member_of[plan.nodes[m]] = static_cast<int>(m);
    std::vector<std::size_t> last_use(plan.nodes.size(), 0);
    for (std::size_t m = 0; m < plan.nodes.size(); ++m) {
      const ProgramNode& node = g.nodes[plan.nodes[m]];
      FusedElementwise::Step mem = step_of(static_cast<const PrimitiveOp&>(*node.op));
      mem.dtype = node.outputs[0].dtype;
      for (ValueRef v : node.inputs) {
        FusedElementwise::Operand o;
        if (member_of[v.node] >= 0) {
          o.external = false;
          o.index = static_cast<std::uint32_t>(member_of[v.node]);
          last_use[o.index] = m;
        } else {
          std::size_t e = 0;
          while (e < plan.externals.size() && !(plan.externals[e] == v)) ++e;
          if (e == plan.externals.size()) plan.externals.push_back(v);
          o.index = static_cast<std::uint32_t>(e);
        }
        mem.operands.push_back(o);
      }
      pass.steps.push_back(std::move(mem));
    }
    // Scratch buffers by liveness: released after their last reader has its own.
    std::vector<int> free_list;
    auto& steps = pass.steps;
    for (std::size_t m = 0; m + 1 < steps.size(); ++m) {
      if (free_list.empty()) free_list.push_back(pass.buffer_count++);
      steps[m].buffer = free_list.back();
      free_list.pop_back();
      for (std::size_t q = 0; q < m; ++q)
        if (last_use[q] == m && steps[q].buffer >= 0) free_list.push_back(steps[q].buffer);
    }
    std::optional<ReduceOp> reduce;
    if (reduce_node[gi] >= 0) {
      const auto c = static_cast<std::uint32_t>(reduce_node[gi]);
      plan.nodes.push_back(c);
      reduce = reduce_op[gi];
      group_of[c] = static_cast<int>(gi);
    }
    std::vector<DType> external_dtypes;
    for (ValueRef v : plan.externals) external_dtypes.push_back(g.meta(v).dtype);
    plan.pass.emplace(std::move(pass), std::move(external_dtypes), reduce);
    plans.push_back(std::move(plan));
  }
  for (auto& gidx : group_of)
    if (gidx >= 0) gidx = renumber[static_cast<std::size_t>(gidx)];
  return plans;
}

}  // namespace tenferro::detail
