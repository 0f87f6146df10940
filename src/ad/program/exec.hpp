#pragma once
// Internal to the traced tier: prepared programs (execution steps, liveness,
// fused elementwise groups, which the backend runs as FusedElementwise passes).

#include <utility>

#include "ad/program/body_op.hpp"
#include "tenferro/backend/backend.hpp"
#include "tenferro/backend/fused.hpp"

namespace tenferro::detail {

/// A fused group: a chain of elementwise primitives over one shape, and
/// with a reduction when the chain's result is reduced over every element
/// in the same pass (a sum, product or mean to a scalar that is the chain's
/// only reader: its node is the last of `nodes` and has no step in the pass).
struct FusedPlan {
  std::vector<std::uint32_t> nodes;  // program nodes covered, in order
  /// The pass (and reduction), checked once for the externals' dtypes.
  std::optional<CheckedFusedPass> pass;
  /// The pass as the prepared engine's backend runs it (prepare_state).
  std::shared_ptr<const PreparedFusedPass> prepared;
  std::vector<ValueRef> externals;    // values read from outside the group
  SymShape shape;                     // the elementwise chain's shape
  std::optional<Shape> static_shape;  // the shape when no extent is symbolic
};

/// Rethrows `e` (the error being handled) with phase Execute when it has the
/// default build phase: run() and run_compiled() report their errors so.
[[noreturn]] void rethrow_in_execute_phase(const Error& e);

/// Finds fusable groups (>= 2 ops) in `graph`. group_of[node] = group index or -1.
std::vector<FusedPlan> plan_fusion(const ProgramGraph& graph, std::vector<int>& group_of);

struct Step {
  bool fused = false;
  /// The node declares a dynamic size in an output: bind it from the result.
  bool binds_dynamic = false;
  /// Nodes whose shape constraints use a dynamic size: checked just before
  /// this step runs (prepare() and the run's entry check only the others).
  std::vector<std::uint32_t> late_checks;
  std::uint32_t index = 0;  // node index, or fused group index
  /// When the step's operands are the run's inputs first_input, first_input
  /// + 1, ... in order, they are passed in place (no copies); else -1.
  std::int32_t first_input = -1;
  std::vector<std::uint32_t> frees;  // value ids whose last use is this step
  /// A step of an op with bodies: per operand, whether this step is the
  /// value's last reader (its last place among the operands, and no later
  /// step reads it). Such operands are moved into the op when the run owns
  /// them, so the op can release them early (BodyOp::run).
  std::vector<char> last_reads;
};

struct PreparedState {
  Program program;
  std::uint64_t runtime_id = 0;
  std::uint64_t epoch = 0;
  /// The engine selected at `epoch` (its backend runs the steps, its ingress
  /// admits the inputs): while the runtime stays at `epoch` it is the
  /// selected one, so a run needs no snapshot of the runtime.
  std::shared_ptr<const EngineRegistration> engine;
  PrepareOptions options;
  std::vector<Step> steps;
  std::vector<FusedPlan> groups;
  std::vector<std::uint32_t> value_base;       // first value id of each node
  std::vector<std::uint32_t> constrained;      // nodes with shape constraints (no dynamic size)
  std::vector<std::uint32_t> dead_on_arrival;  // values never read (freed at once)
  /// (value id, input position) of every input node and (value id, constant
  /// slot) of every constant node, in node order.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> input_values, constant_values;
  /// Per program output: 1 when the run may move it out of the values it
  /// computed (a step's value, and no later output names it again).
  std::vector<char> output_moves;
  std::size_t fused_ops = 0;
  std::size_t value_count = 0;
  /// Per value id: its place among the values the steps compute (a run holds
  /// slot_count of them), or kNoSlot for inputs, constants and the values
  /// inside fused groups, which a run never holds.
  static constexpr std::uint32_t kNoSlot = UINT32_MAX;
  std::vector<std::uint32_t> slot_of;
  std::size_t slot_count = 0;
  /// The most operands one step gathers (a step reading a run of the inputs
  /// in place gathers none).
  std::size_t max_operands = 0;
  /// The inputs' shapes when none has a symbolic extent: a run whose inputs
  /// have exactly these shapes and the program's dtypes binds nothing and
  /// meets every shape constraint (prepare() checked them), so it skips both.
  std::optional<std::vector<Shape>> static_input_shapes;
  /// Per value id: the input position of an input value, else kNoSlot (a
  /// run whose inputs it owns releases them at their last use).
  std::vector<std::uint32_t> input_position_of;
  /// The prepared bodies of the ops with bodies, by node index (empty for
  /// the other nodes).
  std::vector<PreparedBodies> bodies;
};

std::shared_ptr<const PreparedState> prepare_state(Runtime& runtime, const Program& program,
                                                   const PrepareOptions& options);

/// Live-value accounting shared by nested region executions.
struct LiveCounter {
  std::size_t live = 0;
  std::size_t peak = 0;
  void add(std::size_t n) {
    live += n;
    if (live > peak) peak = live;
  }
};

/// Runs the steps. `bindings` holds the named sizes and gains the dynamic
/// sizes the steps fix. With `owned` (the inputs themselves, which the run
/// may clear) each input is released at its last use, as the steps' values
/// are; otherwise the inputs are the caller's and stay.
std::vector<Tensor> execute_state(Runtime& runtime, Backend& backend, const PreparedState& state,
                                  std::span<const Tensor> inputs, DimBindings& bindings,
                                  LiveCounter& counter, RunStats* stats,
                                  std::span<Tensor> owned = {});

/// The value id of a reference (node outputs are numbered in node order).
inline std::uint32_t value_id(const PreparedState& s, ValueRef v) {
  return s.value_base[v.node] + v.output;
}
/// Checks the shape constraints of node `idx` under `bindings`.
void check_node_constraints(const ProgramGraph& g, std::uint32_t idx, const DimBindings& bindings);

/// Checks inputs against the program's metadata and binds named sizes.
DimBindings bind_inputs(const ProgramGraph& graph, std::span<const Shape> shapes,
                        std::span<const DType> dtypes, const char* what);
/// Checks every shape constraint of the program under `bindings`.
void check_program_constraints(const PreparedState& state, const DimBindings& bindings);

}  // namespace tenferro::detail
