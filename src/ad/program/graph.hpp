#pragma once
// Internal to the traced tier: the compiled graph behind Program, the op
// that exists only in traced graphs to refer to constants (constant slots),
// and the compile/instantiate entry points the transforms build on. Ops with
// bodies are ad/program/body_op.hpp.

#include "tenferro/ad/program.hpp"

namespace tenferro::detail {

struct ValueRef {
  std::uint32_t node = 0;
  std::uint32_t output = 0;
  friend bool operator==(const ValueRef&, const ValueRef&) = default;
};

struct ProgramNode {
  enum class Kind : unsigned char { Input, Constant, Op };
  Kind kind = Kind::Op;
  std::size_t slot = 0;  // Input: position; Constant: constant slot
  OpPtr op;              // Op only
  std::vector<ValueRef> inputs;
  std::vector<TensorMeta> outputs;
  std::vector<ShapeConstraint> constraints;
};

struct ProgramGraph {
  std::vector<ProgramNode> nodes;  // inputs first, then topological order
  std::vector<ValueRef> outputs;
  std::vector<std::uint32_t> input_nodes;  // node of each input position
  std::size_t constant_count = 0;
  std::size_t fingerprint = 0;

  const TensorMeta& meta(ValueRef v) const { return nodes[v.node].outputs[v.output]; }
  /// Same nodes, ops (equals), edges, metadata and outputs.
  bool same_structure(const ProgramGraph& other) const;
};

/// A reference to constant `slot` of the program a graph is instantiated
/// from: lets transforms build derived graphs that hold no tensor data.
class ConstantSlotOp final : public Op {
 public:
  ConstantSlotOp(std::size_t slot, TensorMeta meta) : slot_(slot), meta_(std::move(meta)) {}
  std::size_t slot() const { return slot_; }
  std::string_view name() const override { return "constant_slot"; }
  std::size_t input_count() const override { return 0; }
  std::size_t output_count() const override { return 1; }
  std::size_t hash() const override;
  bool equals(const Op& other) const override;
  InferenceResult infer(std::span<const TensorMeta>) const override { return {{meta_}, {}}; }

 private:
  std::size_t slot_;
  TensorMeta meta_;
};

/// compile() with constant slots resolved against `base` (may be null when
/// the graph has no ConstantSlotOp nodes). New constant tensors are appended.
Program compile_graph(std::span<const TracedTensor> outputs, std::span<const TracedTensor> inputs,
                      const std::shared_ptr<const std::vector<Tensor>>& base,
                      const CompileOptions& options);

/// Replays a program graph over traced inputs. With `constants` null, constant
/// nodes become ConstantSlotOp nodes; otherwise constant nodes holding them.
std::vector<TracedTensor> instantiate(const ProgramGraph& graph,
                                      std::span<const TracedTensor> inputs,
                                      const std::vector<Tensor>* constants);

/// Fresh placeholders with the program's input metadata.
std::vector<TracedTensor> placeholders_for(const Program& program);

/// Nodes reachable from `roots`, inputs before users (iterative post-order,
/// deterministic: inputs in order).
std::vector<std::shared_ptr<const TracedNode>> topo_order(std::span<const TracedTensor> roots);

std::size_t hash_meta(const TensorMeta& m);

}  // namespace tenferro::detail
