// Graph nodes: placeholders, constants and op application with build-time
// inference.

#include <unordered_set>

#include "ad/program/graph.hpp"

namespace tenferro {

namespace {
const detail::TracedNode& node_of(const TracedTensor& t, const char* what) {
  if (!t.defined()) {
    fail(ErrorKind::InvalidArgument, what, "the traced tensor is undefined; build it first");
  }
  return *t.node();
}
}  // namespace

const TensorMeta& TracedTensor::meta() const {
  return node_of(*this, "TracedTensor").outputs.at(index_);
}

bool TracedTensor::is_placeholder() const {
  return defined() && node_->op == nullptr;
}

const OpPtr& TracedTensor::op() const {
  return node_of(*this, "TracedTensor").op;
}

namespace detail {

TracedNode::~TracedNode() {
  std::vector<std::shared_ptr<const TracedNode>> pending;
  auto take_inputs = [&](std::vector<TracedTensor>& in) {
    for (auto& t : in)
      if (t.node_) pending.push_back(std::move(t.node_));
  };
  take_inputs(inputs);
  while (!pending.empty()) {
    std::shared_ptr<const TracedNode> n = std::move(pending.back());
    pending.pop_back();
    // Nodes are built non-const (make_shared<TracedNode>) and immutable only
    // through their handles; the last owner may empty one before it dies.
    if (n.use_count() == 1) take_inputs(const_cast<TracedNode&>(*n).inputs);
  }
}

std::vector<TracedTensor> make_traced(const OpPtr& op, std::span<const TracedTensor> inputs) {
  if (!op) fail(ErrorKind::InvalidArgument, "apply", "op is null");
  const std::string name(op->name());
  if (inputs.size() != op->input_count()) {
    fail(ErrorKind::InvalidArgument, name, "expects ", op->input_count(), " input(s), got ",
         inputs.size());
  }
  std::vector<TensorMeta> metas;
  metas.reserve(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) {
      fail(ErrorKind::InvalidArgument, name, "input ", i, " is an undefined traced tensor");
    }
    metas.push_back(inputs[i].meta());
  }
  InferenceResult inferred = op->infer(metas);
  if (inferred.outputs.size() != op->output_count()) {
    fail(ErrorKind::Internal, name, "infer() returned ", inferred.outputs.size(),
         " outputs but the op declares ", op->output_count());
  }
  auto node = std::make_shared<TracedNode>();
  node->op = op;
  node->inputs.assign(inputs.begin(), inputs.end());
  node->outputs = std::move(inferred.outputs);
  node->constraints = std::move(inferred.constraints);
  std::shared_ptr<const TracedNode> shared = std::move(node);
  std::vector<TracedTensor> out;
  out.reserve(shared->outputs.size());
  for (std::size_t j = 0; j < shared->outputs.size(); ++j) {
    out.emplace_back(shared, static_cast<std::uint32_t>(j));
  }
  return out;
}

std::vector<std::shared_ptr<const TracedNode>> topo_order(std::span<const TracedTensor> roots) {
  std::vector<std::shared_ptr<const TracedNode>> order;
  std::unordered_set<const TracedNode*> seen;
  std::vector<std::pair<const std::shared_ptr<const TracedNode>*, std::size_t>> stack;
  for (const TracedTensor& r : roots) {
    if (!r.defined() || !seen.insert(r.node().get()).second) continue;
    stack.emplace_back(&r.node(), 0);
    while (!stack.empty()) {
      auto [n, next] = stack.back();
      if (next < (*n)->inputs.size()) {
        ++stack.back().second;
        const std::shared_ptr<const TracedNode>& child = (*n)->inputs[next].node();
        if (seen.insert(child.get()).second) stack.emplace_back(&child, 0);
        continue;
      }
      order.push_back(*n);
      stack.pop_back();
    }
  }
  return order;
}

TracedTensor make_traced1(const OpPtr& op, std::span<const TracedTensor> inputs) {
  auto out = make_traced(op, inputs);
  if (out.size() != 1) {
    fail(ErrorKind::InvalidArgument, std::string(op->name()), "has ", out.size(),
         " outputs; use apply() for multi-output ops");
  }
  return out[0];
}

}  // namespace detail

TracedTensor placeholder(DType dtype, SymShape shape, std::string label) {
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (auto c = shape[i].try_constant(); c && *c < 0) {
      fail(ErrorKind::InvalidArgument, "placeholder", "extent ", i, " is ", *c,
           "; extents must be >= 0 or named sizes");
    }
  }
  Shape constants;  // constant extents whose product overflows are refused now
  for (const SymDim& d : shape) {
    if (d.is_constant()) constants.push_back(d.constant());
  }
  if (constants.size() == shape.size()) shape_numel(constants, "placeholder");
  auto node = std::make_shared<detail::TracedNode>();
  node->outputs.push_back(TensorMeta{dtype, std::move(shape)});
  node->label = std::move(label);
  return TracedTensor(std::move(node), 0);
}

TracedTensor constant(const Tensor& value) {
  if (!value.defined()) {
    fail(ErrorKind::InvalidArgument, "constant", "the tensor is undefined; pass a tensor");
  }
  return detail::make_traced1(make_primitive(prim::Constant{value}), {});
}

TracedTensor traced_full(const SymShape& shape, Scalar value, DType dtype) {
  return detail::make_traced1(make_primitive(prim::Full{shape, value, dtype}), {});
}

namespace extension {
std::vector<TracedTensor> apply(const ExtensionOpPtr& op, ListRef<TracedTensor> inputs) {
  if (!op) fail(ErrorKind::InvalidArgument, "apply", "extension op is null");
  return detail::make_traced(op, inputs);
}
}  // namespace extension

}  // namespace tenferro
