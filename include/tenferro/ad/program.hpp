#pragma once
// Compiled programs: compile traced outputs once, prepare for an input
// signature once, run many times, also with named sizes that bind anew on
// every run.
//
//   auto x = placeholder(f64, {SymDim::var("n")});
//   Program p = compile({sum(x * x)}, {x});
//   PreparedProgram plan = prepare(*runtime, p, InputSignature::of(inputs));
//   auto out = run(*runtime, plan, inputs);        // any n, no re-preparation
//   auto out2 = run_compiled(*runtime, p, inputs);  // cached preparation

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tenferro/ad/eager.hpp"
#include "tenferro/ad/traced.hpp"
#include "tenferro/core/list_ref.hpp"
#include "tenferro/runtime/runtime.hpp"

namespace tenferro {

namespace detail {
struct ProgramGraph;
struct PreparedState;
}  // namespace detail

/// A normalised graph: topologically ordered, common subexpressions merged,
/// dead code removed, views folded. Constants are held by the program (not
/// by its structure), so the fingerprint and every structure-keyed cache
/// stay free of tensor data. Cheap to copy.
class Program {
 public:
  Program() = default;
  Program(std::shared_ptr<const detail::ProgramGraph> graph,
          std::shared_ptr<const std::vector<Tensor>> constants);

  bool defined() const { return graph_ != nullptr; }
  std::size_t input_count() const;
  std::size_t output_count() const;
  const TensorMeta& input_meta(std::size_t i) const;
  const TensorMeta& output_meta(std::size_t j) const;
  /// Number of op nodes (inputs and constants not counted).
  std::size_t node_count() const;
  /// Number of op nodes whose op is named `name` ("add", "reshape", a family id).
  std::size_t count_ops(std::string_view name) const;
  /// Hash of ops, parameters, edges and metadata; constant values and dimension
  /// bindings are excluded (constants count by dtype and shape only).
  std::size_t fingerprint() const;
  const std::vector<Tensor>& constants() const;
  /// One line per node, e.g. "%3 = add(%1, %2) : f64[n]".
  std::string to_string() const;
  /// Inlines the program into another graph (constants become constant nodes).
  std::vector<TracedTensor> call(ListRef<TracedTensor> inputs) const;

  const std::shared_ptr<const detail::ProgramGraph>& graph() const { return graph_; }
  const std::shared_ptr<const std::vector<Tensor>>& constants_ptr() const { return constants_; }

 private:
  std::shared_ptr<const detail::ProgramGraph> graph_;
  std::shared_ptr<const std::vector<Tensor>> constants_;
};

struct CompileOptions {
  bool merge_common = true;  // CSE
  bool fold_views = true;    // reshape∘reshape, transpose∘transpose, identities
  /// Algebraic identities that hold exactly: conj(conj(x)) = x, conj(x) = x
  /// for real x, and x * 1 = 1 * x = x for a (broadcast) constant one when the
  /// product has x's dtype and shape (real and integer dtypes only: complex
  /// products with infinite parts are not exact). Gradient graphs are full of
  /// them (the seed of a real loss is a broadcast one).
  bool simplify_algebra = true;
};

/// Compiles `outputs` as a function of `inputs` (placeholders, in order).
/// An output depending on a placeholder not in `inputs` is InvalidArgument.
Program compile(ListRef<TracedTensor> outputs, ListRef<TracedTensor> inputs,
                const CompileOptions& options = {});

struct PrepareOptions {
  /// Chains of elementwise ops run as one blockwise pass over memory.
  bool fuse_elementwise = true;
  /// Elements per block of a fused pass at most (intermediates live in
  /// per-thread buffers of this many elements; the CPU backend takes fewer
  /// where a block's working set would not fit half its L1 data cache); in
  /// [1, kMaxFusionBlock] (2^20), else prepare is InvalidArgument.
  std::int64_t fusion_block = 2048;
  friend bool operator==(const PrepareOptions&, const PrepareOptions&) = default;
};

/// A program prepared for a runtime epoch and an abstract input signature
/// (dtypes, ranks, constant extents, placements); named sizes stay free and
/// bind on each run. Cheap to copy. It holds the engine selected at its
/// epoch (the backend its steps run on) until the last copy is dropped.
class PreparedProgram {
 public:
  PreparedProgram() = default;
  explicit PreparedProgram(std::shared_ptr<const detail::PreparedState> state)
      : state_(std::move(state)) {}
  bool defined() const { return state_ != nullptr; }
  const Program& program() const;
  std::uint64_t runtime_id() const;
  std::uint64_t epoch() const;
  /// Execution steps (a fused group counts once).
  std::size_t step_count() const;
  /// Fused groups and the ops they cover.
  std::size_t fused_group_count() const;
  std::size_t fused_op_count() const;
  const std::shared_ptr<const detail::PreparedState>& state() const { return state_; }

 private:
  std::shared_ptr<const detail::PreparedState> state_;
};

/// Prepares `program` for inputs like `signature` on the runtime's current
/// epoch (counted in runtime.program_counters()). Checks dtypes, ranks, constant extents, ingress,
/// and the shape constraints under the signature's sizes.
PreparedProgram prepare(Runtime& runtime, const Program& program, const InputSignature& signature,
                        const PrepareOptions& options = {});

struct RunStats {
  /// Largest number of values the executor held at once (nested regions included).
  std::size_t peak_live_values = 0;
  /// Steps and fused passes run, those inside ops with bodies included (a
  /// loop's body counts once per iteration).
  std::size_t executed_steps = 0;
  std::size_t fused_passes = 0;
  DimBindings bindings;
};

/// Runs a prepared program. A plan from another runtime is ContextMismatch; a
/// plan from an older epoch is RuntimeState (prepare again, or use
/// run_compiled). Named sizes bind from the inputs; inconsistent sizes and
/// violated shape constraints are ShapeMismatch naming the op or family.
std::vector<Tensor> run(Runtime& runtime, const PreparedProgram& prepared, ListRef<Tensor> inputs,
                        RunStats* stats = nullptr);

/// Binds the program's named sizes from concrete input shapes.
DimBindings bind_dimensions(const Program& program, std::span<const Shape> input_shapes);

/// prepare + run with the preparation cached in the runtime's extension caches
/// (family "tenferro.traced.v1", cache "programs"; bounded LRU, cleared with
/// the runtime's caches), keyed by fingerprint, abstract signature, options
/// and epoch: after a reconfiguration the program is prepared again.
std::vector<Tensor> run_compiled(Runtime& runtime, const Program& program, ListRef<Tensor> inputs,
                                 const PrepareOptions& options = {});
/// Stats of that cache (hits, misses = preparations, evictions, entries).
CacheStats program_cache_stats(Runtime& runtime);
void clear_program_cache(Runtime& runtime);
/// The selector of that cache, for ExtensionCacheStore::set_limits and friends.
inline constexpr const char* kProgramCacheFamily = "tenferro.traced.v1";
inline constexpr const char* kProgramCacheName = "programs";

/// Hands a capture over to the traced tier: the recorded steps become graph
/// nodes, `inputs` become placeholders (concrete shapes), every other value
/// not produced by a step becomes a constant, `outputs` the program outputs.
Program from_capture(const CaptureScope& capture, ListRef<EagerTensor> inputs,
                     ListRef<EagerTensor> outputs);

}  // namespace tenferro
