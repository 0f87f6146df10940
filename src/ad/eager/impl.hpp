#pragma once
// Internal state of eager tensors and the recorded graph.

#include <atomic>
#include <mutex>

#include "tenferro/ad/eager.hpp"
#include "tenferro/ad/linearize.hpp"
#include "tensor/object_pool.hpp"

namespace tenferro::detail {

struct Edge {
  std::shared_ptr<GradNode> node;
  std::uint32_t index = 0;
};

/// A residual kept for the reverse rule. Output residuals refer to their own
/// node weakly, so a node never owns itself.
struct SavedValue {
  bool present = false;
  Tensor value;
  std::shared_ptr<GradNode> node;  // inputs: the producer's node (may be null)
  std::weak_ptr<GradNode> self;    // outputs: this node
  std::uint32_t index = 0;
};

enum class NodeKind : unsigned char { Op, Leaf, Alias };

/// A recorded value's dtype and concrete shape.
struct RecordedMeta {
  DType dtype;
  Shape shape;
};

struct GradNode {
  GradNode() = default;
  GradNode(const GradNode&) = delete;
  GradNode& operator=(const GradNode&) = delete;
  /// Releases the graph behind this node iteratively: a chain of millions of
  /// recorded ops must not recurse once per node through the shared_ptrs.
  ~GradNode();

  NodeKind kind = NodeKind::Op;
  std::uint64_t seq = 0;
  OpPtr op;
  PooledVector<Edge> inputs;
  /// Op nodes: the inputs' dtypes and shapes, then the outputs' (inline
  /// shapes: one allocation per node). Leaf and alias nodes have none.
  PooledVector<RecordedMeta> metas;
  std::size_t recorded_outputs() const {
    return metas.size() < inputs.size() ? 0 : metas.size() - inputs.size();
  }
  /// The rules' symbolic metadata, built when a rule runs (a forward pass
  /// that is never differentiated builds none): inputs, then outputs.
  void symbolic_metas(PooledVector<TensorMeta>& out) const {
    if (metas.size() < inputs.size()) {
      fail(ErrorKind::Internal, "autodiff", "a recorded op node has no metadata for its inputs");
    }
    // Reuses the list's shapes (a traversal keeps one list for every node).
    out.resize(metas.size());
    for (std::size_t i = 0; i < metas.size(); ++i) {
      out[i].dtype = metas[i].dtype;
      out[i].shape.assign(metas[i].shape.begin(), metas[i].shape.end());
    }
  }
  PooledVector<SavedValue> saved_inputs;
  PooledVector<SavedValue> saved_outputs;
  std::weak_ptr<EagerImpl> leaf;  // Leaf kind: the tensor owning the grad slot
  std::weak_ptr<EagerRuntime> runtime;
};

struct EagerImpl {
  EagerImpl() = default;
  EagerImpl(Tensor v, const EagerRuntimePtr& r) : value(std::move(v)), rt(r) {}
  Tensor value;
  EagerRuntimePtr rt;
  bool requires_grad = false;
  std::shared_ptr<GradNode> node;  // null: untracked
  std::uint32_t output_index = 0;
  std::mutex grad_mutex;
  std::shared_ptr<EagerImpl> grad;  // leaf grad slot
};

EagerTensor make_eager(const EagerRuntimePtr& rt, Tensor value);
std::shared_ptr<GradNode> make_leaf_node(const std::shared_ptr<EagerImpl>& impl);

/// Runs `op` on eager inputs of runtime `rt` and records it when an input is
/// tracked and recording is on. Checks that every input belongs to `rt`.
std::vector<EagerTensor> eager_dispatch(const EagerRuntimePtr& rt, const OpPtr& op,
                                        std::span<const EagerTensor> inputs);
/// eager_dispatch for a one-output primitive without intermediate vectors
/// (the hot path of every eager elementwise op).
EagerTensor eager_dispatch1(const EagerRuntimePtr& rt, const OpPtr& op,
                            std::span<const EagerTensor> inputs);
/// Records already computed outputs of `op` (used by extension dispatch).
std::vector<EagerTensor> finish_outputs(const EagerRuntimePtr& rt, const OpPtr& op,
                                        std::span<const EagerTensor> inputs,
                                        std::vector<Tensor> outputs);
/// UnsupportedAdRule for a call of `op` that would be recorded (an input
/// requires grad) without rules for it in rt's AD context.
[[noreturn]] void throw_missing_rules(const EagerRuntime& rt, const Op& op,
                                      std::span<const EagerTensor> inputs);
/// Throws that error before any work when the call would be recorded.
void require_rules_if_recorded(const EagerRuntime& rt, const Op& op,
                               std::span<const EagerTensor> inputs);
/// The runtime shared by `inputs` (ContextMismatch otherwise).
const EagerRuntimePtr& common_runtime(std::span<const EagerTensor> inputs, std::string_view op);

/// An emitter whose values are eager tensors of one runtime.
class EagerEmitter final : public ad::Emitter {
 public:
  explicit EagerEmitter(EagerRuntimePtr rt) : rt_(std::move(rt)) {
    values_.reserve(8);  // one rule's residuals, cotangents and results
  }
  ad::Val add_value(EagerTensor t);
  /// Forgets every value (keeping the list's capacity) for the next rule.
  void clear() { values_.clear(); }
  const EagerTensor& get(ad::Val v) const;
  std::vector<ad::Val> emit(const OpPtr& op, std::span<const ad::Val> inputs) override;
  ad::Val emit1(const OpPtr& op, std::span<const ad::Val> inputs) override;
  TensorMeta meta(ad::Val v) const override;
  DType dtype_of(ad::Val v) const override { return get(v).value().dtype(); }
  bool has_shape(ad::Val v, const SymShape& shape) const override;

 private:
  EagerRuntimePtr rt_;
  std::vector<EagerTensor> values_;
};

/// The nodes a functional transform differentiates with respect to, sorted
/// by address (a lookup is a binary search; no hash set per call).
using TargetNodes = PooledVector<const GradNode*>;
/// Cotangents reached per target node, sorted by node address.
using TargetCotangents = PooledVector<std::pair<const GradNode*, EagerTensor>>;

/// Reverse traversal. `targets` null: accumulate into the grad slots of the
/// leaves reached (backward()); otherwise deliver only to those nodes (sorted,
/// distinct) and return their cotangents (functional transforms).
TargetCotangents run_reverse(const EagerRuntimePtr& rt,
                             const std::vector<std::pair<EagerTensor, EagerTensor>>& roots,
                             const TargetNodes* targets, bool create_graph,
                             std::string_view transform);
/// The cotangent of `node` in a run_reverse result (null: none reached it).
const EagerTensor* find_cotangent(const TargetCotangents& cts, const GradNode* node);

/// Forward replay of the recorded graph from `source` with tangent `v`;
/// returns the tangent of `output` (nullopt when it does not depend on source).
std::optional<EagerTensor> run_forward(const EagerRuntimePtr& rt, const GradNode* source,
                                       const EagerTensor& v, const EagerTensor& output,
                                       std::string_view transform);

}  // namespace tenferro::detail
