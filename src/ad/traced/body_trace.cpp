// Tracing functions into bodies (body_trace.hpp).

#include "ad/traced/body_trace.hpp"

#include <unordered_map>
#include <unordered_set>

#include "ad/program/graph.hpp"

namespace tenferro::detail {

TracedBody lift_body(std::span<const TracedTensor> params, std::span<const TracedTensor> outs) {
  std::unordered_set<const TracedNode*> param_nodes;
  for (const auto& p : params) param_nodes.insert(p.node().get());
  std::unordered_map<const TracedNode*, bool> depends;
  std::unordered_map<const TracedNode*, std::vector<TracedTensor>> rebuilt;
  std::vector<TracedTensor> captured_outer, captured_params;
  auto lift = [&](const TracedTensor& t) {
    for (std::size_t k = 0; k < captured_outer.size(); ++k)
      if (captured_outer[k] == t) return captured_params[k];
    TracedTensor p = placeholder(t.dtype(), t.shape());
    captured_outer.push_back(t);
    captured_params.push_back(p);
    return p;
  };
  for (const auto& shared : topo_order(outs)) {
    const TracedNode* n = shared.get();
    bool dep = param_nodes.count(n) != 0;
    for (const auto& t : n->inputs) dep |= depends.at(t.node().get());
    depends[n] = dep;
    const bool is_fill = n->op && n->inputs.empty() && n->op->name() == "full";
    if (param_nodes.count(n) || (!dep && is_fill)) {
      rebuilt[n] = {};  // used as is
      continue;
    }
    if (!dep) continue;  // lifted lazily where a dependent node reads it
    std::vector<TracedTensor> ins;
    for (const auto& t : n->inputs) {
      const TracedNode* src = t.node().get();
      auto it = rebuilt.find(src);
      if (it != rebuilt.end() && it->second.empty()) {
        ins.push_back(t);
      } else if (it != rebuilt.end()) {
        ins.push_back(it->second[t.index()]);
      } else {
        ins.push_back(lift(t));  // an outside value: a body input
      }
    }
    rebuilt[n] = make_traced(n->op, ins);
  }
  std::vector<TracedTensor> body_outs;
  for (const auto& t : outs) {
    auto it = rebuilt.find(t.node().get());
    if (it != rebuilt.end()) {
      body_outs.push_back(it->second.empty() ? t : it->second[t.index()]);
    } else {
      body_outs.push_back(lift(t));
    }
  }
  std::vector<TracedTensor> body_inputs(params.begin(), params.end());
  body_inputs.insert(body_inputs.end(), captured_params.begin(), captured_params.end());
  return TracedBody{compile(body_outs, body_inputs), std::move(captured_outer)};
}

TracedBody trace_body(
    std::span<const TensorMeta> metas,
    const std::function<std::vector<TracedTensor>(std::span<const TracedTensor>)>& fn,
    const char* op) {
  if (!fn) fail(ErrorKind::InvalidArgument, op, "the function is empty");
  std::vector<TracedTensor> params;
  for (const auto& m : metas) params.push_back(placeholder(m.dtype, m.shape));
  const std::vector<TracedTensor> outs = fn(params);
  for (std::size_t j = 0; j < outs.size(); ++j) {
    if (!outs[j].defined()) fail(ErrorKind::InvalidArgument, op, "result ", j, " is undefined");
  }
  return lift_body(params, outs);
}

std::vector<TensorMeta> metas_of(std::span<const TracedTensor> values) {
  std::vector<TensorMeta> m;
  m.reserve(values.size());
  for (const auto& v : values) m.push_back(v.meta());
  return m;
}

}  // namespace tenferro::detail
