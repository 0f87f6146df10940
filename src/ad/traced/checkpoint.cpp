// checkpoint(): a traced region run as one step whose intermediates are
// recomputed, not stored, for reverse mode.

#include <unordered_map>
#include <unordered_set>

#include "ad/program/graph.hpp"

namespace tenferro {

std::vector<TracedTensor> checkpoint(const TracedFn& fn, ListRef<TracedTensor> inputs) {
  if (!fn) fail(ErrorKind::InvalidArgument, "checkpoint", "the function is empty");
  std::vector<TracedTensor> params;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) {
      fail(ErrorKind::InvalidArgument, "checkpoint", "input ", i, " is undefined");
    }
    params.push_back(placeholder(inputs[i].dtype(), inputs[i].shape()));
  }
  const std::vector<TracedTensor> outs = fn(params);
  if (outs.empty()) fail(ErrorKind::InvalidArgument, "checkpoint", "the function returned nothing");

  // Values the function captured from outside (they depend on no parameter)
  // become extra region inputs, so the region body holds no tensor data.
  std::unordered_set<const detail::TracedNode*> param_nodes;
  for (const auto& p : params) param_nodes.insert(p.node().get());
  std::unordered_map<const detail::TracedNode*, bool> depends;
  std::unordered_map<const detail::TracedNode*, std::vector<TracedTensor>> rebuilt;
  std::vector<TracedTensor> captured_outer, captured_params;
  auto lift = [&](const TracedTensor& t) {
    for (std::size_t k = 0; k < captured_outer.size(); ++k)
      if (captured_outer[k] == t) return captured_params[k];
    TracedTensor p = placeholder(t.dtype(), t.shape());
    captured_outer.push_back(t);
    captured_params.push_back(p);
    return p;
  };
  for (const auto& shared : detail::topo_order(outs)) {
    const detail::TracedNode* n = shared.get();
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
      const detail::TracedNode* src = t.node().get();
      auto it = rebuilt.find(src);
      if (it != rebuilt.end() && it->second.empty()) {
        ins.push_back(t);
      } else if (it != rebuilt.end()) {
        ins.push_back(it->second[t.index()]);
      } else {
        ins.push_back(lift(t));  // an outside value: a region input
      }
    }
    rebuilt[n] = detail::make_traced(n->op, ins);
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
  std::vector<TracedTensor> body_inputs = params;
  body_inputs.insert(body_inputs.end(), captured_params.begin(), captured_params.end());
  Program body = compile(body_outs, body_inputs);
  std::vector<TracedTensor> call_inputs(inputs.begin(), inputs.end());
  call_inputs.insert(call_inputs.end(), captured_outer.begin(), captured_outer.end());
  return detail::make_traced(std::make_shared<detail::RegionOp>(std::move(body)), call_inputs);
}

TracedTensor checkpoint(const std::function<TracedTensor(const TracedTensor&)>& fn,
                        const TracedTensor& x) {
  if (!fn) fail(ErrorKind::InvalidArgument, "checkpoint", "the function is empty");
  const TracedTensor in[1] = {x};
  return checkpoint(
      [&](std::span<const TracedTensor> p) { return std::vector<TracedTensor>{fn(p[0])}; }, in)[0];
}

}  // namespace tenferro
