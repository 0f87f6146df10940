#pragma once
// Traced tier: graphs of TracedTensor nodes, built once and compiled to a
// Program (tenferro/ad/program.hpp), transformed with grad/vjp/jvp
// (tenferro/ad/transforms.hpp), prepared once and run many times.
//
// A TracedTensor is a cheap handle to one output of a graph node: the op, its
// inputs and the output's TensorMeta (dtype and a possibly symbolic shape).
// Building a node runs the op's inference, so dtype, rank and constant-extent
// errors surface at build time; requirements that depend on symbolic extents
// become shape constraints, checked when dimensions bind at run time.

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tenferro/ad/ops.hpp"
#include "tenferro/core/list_ref.hpp"
#include "tenferro/ops/extension_op.hpp"
#include "tenferro/ops/primitives.hpp"

namespace tenferro {

class TracedTensor;

namespace detail {
struct TracedNode;
}  // namespace detail

class TracedTensor {
 public:
  /// Undefined (defined() == false); builders reject it.
  TracedTensor() = default;
  TracedTensor(std::shared_ptr<const detail::TracedNode> node, std::uint32_t index)
      : node_(std::move(node)), index_(index) {}

  bool defined() const { return node_ != nullptr; }
  const TensorMeta& meta() const;
  DType dtype() const { return meta().dtype; }
  const SymShape& shape() const { return meta().shape; }
  std::int64_t rank() const { return meta().rank(); }
  bool is_placeholder() const;
  /// The op producing this value (null for a placeholder).
  const OpPtr& op() const;

  const std::shared_ptr<const detail::TracedNode>& node() const { return node_; }
  std::uint32_t index() const { return index_; }
  /// Same node and output (identity, not structure).
  friend bool operator==(const TracedTensor& a, const TracedTensor& b) {
    return a.node_ == b.node_ && a.index_ == b.index_;
  }

 private:
  friend struct detail::TracedNode;
  std::shared_ptr<const detail::TracedNode> node_;
  std::uint32_t index_ = 0;
};

namespace detail {
/// One graph node. Immutable once built; shared by every handle to it.
struct TracedNode {
  TracedNode() = default;
  TracedNode(const TracedNode&) = delete;
  TracedNode& operator=(const TracedNode&) = delete;
  /// Releases the graph behind this node iteratively (deep graphs must not
  /// recurse once per node through the shared_ptrs).
  ~TracedNode();

  OpPtr op;  // null for a placeholder
  std::vector<TracedTensor> inputs;
  std::vector<TensorMeta> outputs;
  std::vector<ShapeConstraint> constraints;
  std::string label;  // placeholder name (for messages)
};
/// Builds a node for `op` on `inputs`: checks the count and definedness, runs
/// inference and checks the output count. Throws naming the op.
std::vector<TracedTensor> make_traced(const OpPtr& op, std::span<const TracedTensor> inputs);
TracedTensor make_traced1(const OpPtr& op, std::span<const TracedTensor> inputs);
}  // namespace detail

// ---- sources ---------------------------------------------------------------------

/// A program input. Extents may be constants or named sizes
/// ({SymDim::var("n"), 3}); named sizes bind from the actual input at run time.
TracedTensor placeholder(DType dtype, SymShape shape, std::string label = {});
/// A constant holding `value` (no copy; the program keeps the tensor).
TracedTensor constant(const Tensor& value);
/// A filled tensor of a (possibly symbolic) shape; holds no data.
TracedTensor traced_full(const SymShape& shape, Scalar value, DType dtype);

// Every operation (elementwise, reductions, contractions, structural) is in
// tenferro/ad/ops.hpp, written once for both tiers.

namespace extension {
/// An extension op on traced inputs: one TracedTensor per declared output.
/// The input count and the metadata from op->infer() are checked now; its
/// shape constraints are checked when dimensions bind.
std::vector<TracedTensor> apply(const ExtensionOpPtr& op, ListRef<TracedTensor> inputs);
}  // namespace extension

// ---- checkpointing ------------------------------------------------------------------

using TracedFn = std::function<std::vector<TracedTensor>(std::span<const TracedTensor>)>;

/// Runs `fn` on `inputs` as one marked region: the forward pass keeps only the
/// region's outputs, and reverse mode recomputes the region's intermediates
/// from its inputs instead of storing them. Values and derivatives equal those
/// of fn(inputs). Values fn captures from outside become extra region inputs.
std::vector<TracedTensor> checkpoint(const TracedFn& fn, ListRef<TracedTensor> inputs);
/// Single-input, single-output form.
TracedTensor checkpoint(const std::function<TracedTensor(const TracedTensor&)>& fn,
                        const TracedTensor& x);

}  // namespace tenferro
