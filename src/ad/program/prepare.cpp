// prepare(): a program's execution steps with liveness and release analysis,
// its fused groups prepared on the engine's backend, the bodies of ops with
// bodies, dimension binding and shape-constraint checks, epoch binding.
// Running the steps is run.cpp.

#include <cstddef>
#include <memory>

#include "ad/program/exec.hpp"

namespace tenferro {

namespace detail {

namespace {

bool uses_dynamic_size(const ProgramGraph& g, const ProgramNode& node) {
  for (ValueRef v : node.inputs)
    if (depends_on_dynamic(g.meta(v).shape)) return true;
  for (const ShapeConstraint& c : node.constraints)
    if (c.lhs_dim.depends_on_dynamic() || c.rhs_dim.depends_on_dynamic()) return true;
  return false;
}

}  // namespace

void check_node_constraints(const ProgramGraph& g, std::uint32_t idx, const DimBindings& bindings) {
  const ProgramNode& n = g.nodes[idx];
  std::vector<Shape> shapes;
  for (ValueRef v : n.inputs) shapes.push_back(evaluate(g.meta(v).shape, bindings));
  check_constraints(n.op->name(), n.constraints, shapes, bindings);
}

DimBindings bind_inputs(const ProgramGraph& graph, std::span<const Shape> shapes,
                        std::span<const DType> dtypes, const char* what) {
  if (shapes.size() != graph.input_nodes.size()) {
    fail(ErrorKind::InvalidArgument, what, "the program takes ", graph.input_nodes.size(),
         " inputs, got ", shapes.size());
  }
  DimBindings bindings;
  std::vector<std::pair<std::size_t, std::size_t>> deferred;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const TensorMeta& m = graph.nodes[graph.input_nodes[i]].outputs[0];
    if (dtypes[i] != m.dtype) {
      fail(ErrorKind::DTypeMismatch, what, "input ", i, " has dtype ", name(dtypes[i]),
           " but the program was compiled for ", name(m.dtype));
    }
    if (shapes[i].size() != m.shape.size()) {
      fail(ErrorKind::RankMismatch, what, "input ", i, " has rank ", shapes[i].size(),
           " but the program expects ", to_string(m.shape));
    }
    shape_numel(shapes[i], what);  // negative or overflowing extents bind nothing
    for (std::size_t d = 0; d < m.shape.size(); ++d) {
      const SymDim& sd = m.shape[d];
      const std::int64_t actual = shapes[i][d];
      if (sd.is_constant()) {
        if (sd.constant() != actual) {
          fail(ErrorKind::ShapeMismatch, what, "input ", i, " has shape ",
               shape_to_string(shapes[i]), " but the program expects ", to_string(m.shape));
        }
      } else if (sd.kind() == SymDim::Kind::Var || sd.is_dynamic()) {
        // A dynamic extent of an input (the cotangent of a truncated factor
        // in a vjp program) binds here; the op that declares it must agree.
        auto [it, fresh] = bindings.emplace(sd.name(), actual);
        if (!fresh && it->second != actual) {
          fail(ErrorKind::ShapeMismatch, what, "size '", it->first, "' is ", it->second,
               " from an earlier input but ", actual, " from input ", i, " axis ", d,
               "; inputs must agree on named sizes");
        }
      } else {
        deferred.emplace_back(i, d);
      }
    }
  }
  for (auto [i, d] : deferred) {
    const SymDim& sd = graph.nodes[graph.input_nodes[i]].outputs[0].shape[d];
    const std::int64_t want = sd.evaluate(bindings);
    if (want != shapes[i][d]) {
      fail(ErrorKind::ShapeMismatch, what, "input ", i, " axis ", d, " has extent ", shapes[i][d],
           " but ", sd.to_string(), " = ", want, " under the bound sizes");
    }
  }
  return bindings;
}

void check_program_constraints(const PreparedState& state, const DimBindings& bindings) {
  const ProgramGraph& g = *state.program.graph();
  for (std::uint32_t idx : state.constrained) check_node_constraints(g, idx, bindings);
  for (const auto& bodies : state.bodies)
    for (const auto& body : bodies) check_program_constraints(*body, bindings);
}

std::shared_ptr<const PreparedState> prepare_state(Runtime& runtime, const Program& program,
                                                   const PrepareOptions& options) {
  if (options.fusion_block < 1 || options.fusion_block > kMaxFusionBlock) {
    fail(ErrorKind::InvalidArgument, "prepare", "fusion_block must be in [1, ", kMaxFusionBlock,
         "], got ", options.fusion_block);
  }
  auto s = std::make_shared<PreparedState>();
  s->program = program;
  s->runtime_id = runtime.id();
  {
    const auto snap = runtime.snapshot();
    s->epoch = snap->epoch();
    s->engine = snap->selected_ptr();
  }
  s->options = options;
  const ProgramGraph& g = *program.graph();
  const std::size_t n = g.nodes.size();
  s->value_base.resize(n);
  std::uint32_t count = 0;
  for (std::size_t i = 0; i < n; ++i) {
    s->value_base[i] = count;
    const ProgramNode& node = g.nodes[i];
    if (node.kind != ProgramNode::Kind::Op) {
      auto& list = node.kind == ProgramNode::Kind::Input ? s->input_values : s->constant_values;
      list.push_back({count, static_cast<std::uint32_t>(node.slot)});
    }
    count += static_cast<std::uint32_t>(node.outputs.size());
  }
  s->value_count = count;
  std::vector<int> group_of(n, -1);
  // Fused passes need a backend that runs them (Backend::runs_fused_passes).
  if (options.fuse_elementwise && s->engine->backend().runs_fused_passes())
    s->groups = plan_fusion(g, group_of);
  for (auto& grp : s->groups) {
    grp.static_shape = try_concrete(grp.shape);
    grp.prepared = s->engine->backend().prepare_fused(*grp.pass);
  }
  std::vector<Shape> input_shapes;
  for (std::uint32_t idx : g.input_nodes) {
    auto shape = try_concrete(g.nodes[idx].outputs[0].shape);
    if (!shape) break;
    input_shapes.push_back(std::move(*shape));
  }
  if (input_shapes.size() == g.input_nodes.size()) s->static_input_shapes = std::move(input_shapes);
  s->bodies.resize(n);
  for (const auto& grp : s->groups) s->fused_ops += grp.nodes.size();

  // Steps in node order; a fused group runs where its root is. Constraints
  // over dynamic sizes are checked by the first step from their node on (the
  // ops that fix those sizes come earlier in node order).
  std::vector<std::vector<ValueRef>> reads;
  std::vector<std::uint32_t> producer_step(count, UINT32_MAX);
  std::vector<std::uint32_t> pending_late;
  for (std::uint32_t i = 0; i < n; ++i) {
    const ProgramNode& node = g.nodes[i];
    if (node.kind != ProgramNode::Kind::Op) continue;
    if (!node.constraints.empty()) {
      if (uses_dynamic_size(g, node)) {
        pending_late.push_back(i);
      } else {
        s->constrained.push_back(i);
      }
    }
    const BodyOp* with_bodies = body_op(node.op.get());
    if (with_bodies != nullptr) s->bodies[i] = with_bodies->prepare(runtime, options);
    const int grp = group_of[i];
    if (grp >= 0 && s->groups[static_cast<std::size_t>(grp)].nodes.back() != i) continue;
    Step step;
    if (grp >= 0) {
      step.fused = true;
      step.index = static_cast<std::uint32_t>(grp);
      reads.push_back(s->groups[static_cast<std::size_t>(grp)].externals);
    } else {
      step.index = i;
      reads.push_back(node.inputs);
      if (node.op->is_extension() && with_bodies == nullptr) {
        for (const TensorMeta& m : node.outputs)
          for (const SymDim& d : m.shape) step.binds_dynamic |= d.is_dynamic();
      }
    }
    step.late_checks = std::move(pending_late);
    pending_late.clear();
    for (std::uint32_t j = 0; j < node.outputs.size(); ++j)
      producer_step[s->value_base[i] + j] = static_cast<std::uint32_t>(s->steps.size());
    s->steps.push_back(std::move(step));
  }
  s->slot_of.assign(count, PreparedState::kNoSlot);
  for (std::uint32_t v = 0; v < count; ++v)
    if (producer_step[v] != UINT32_MAX) s->slot_of[v] = static_cast<std::uint32_t>(s->slot_count++);
  // Steps whose operands are a run of consecutive inputs read them in place;
  // the others gather theirs into the operand slots.
  std::vector<std::int64_t> input_slot(count, -1);
  for (const auto& [v, slot] : s->input_values) input_slot[v] = slot;
  for (std::size_t k = 0; k < reads.size(); ++k) {
    const auto& r = reads[k];
    if (r.empty()) continue;
    const std::int64_t first = input_slot[value_id(*s, r[0])];
    bool run = first >= 0;
    for (std::size_t j = 1; run && j < r.size(); ++j)
      run = input_slot[value_id(*s, r[j])] == first + static_cast<std::int64_t>(j);
    if (run) s->steps[k].first_input = static_cast<std::int32_t>(first);
  }
  for (std::size_t k = 0; k < reads.size(); ++k)
    if (s->steps[k].first_input < 0) s->max_operands = std::max(s->max_operands, reads[k].size());
  // Liveness: a value is freed after the last step reading it; outputs stay.
  std::vector<std::int64_t> last(count, -1);
  for (std::size_t k = 0; k < reads.size(); ++k)
    for (ValueRef v : reads[k]) last[value_id(*s, v)] = static_cast<std::int64_t>(k);
  std::vector<char> is_output(count, 0);
  for (ValueRef v : g.outputs) is_output[value_id(*s, v)] = 1;
  s->output_moves.assign(g.outputs.size(), 0);
  {
    std::vector<char> named_later(count, 0);
    for (std::size_t k = g.outputs.size(); k-- > 0;) {
      const std::uint32_t v = value_id(*s, g.outputs[k]);
      s->output_moves[k] = !named_later[v] && producer_step[v] != UINT32_MAX;
      named_later[v] = 1;
    }
  }
  for (std::uint32_t v = 0; v < count; ++v) {
    if (is_output[v]) continue;
    if (last[v] >= 0) {
      s->steps[static_cast<std::size_t>(last[v])].frees.push_back(v);
    } else if (producer_step[v] != UINT32_MAX) {
      s->steps[producer_step[v]].frees.push_back(v);  // computed, never read
    } else {
      s->dead_on_arrival.push_back(v);
    }
  }
  // Release analysis of the steps of ops with bodies: an operand whose value
  // dies at the step (and appears there for the last time) may be moved in.
  for (std::size_t k = 0; k < reads.size(); ++k) {
    Step& step = s->steps[k];
    if (step.fused || s->bodies[step.index].empty()) continue;
    const auto& r = reads[k];
    step.last_reads.assign(r.size(), 0);
    for (std::size_t j = 0; j < r.size(); ++j) {
      const std::uint32_t v = value_id(*s, r[j]);
      bool again = false;
      for (std::size_t l = j + 1; l < r.size(); ++l) again |= value_id(*s, r[l]) == v;
      step.last_reads[j] = !again && !is_output[v] && last[v] == static_cast<std::int64_t>(k);
    }
  }
  s->input_position_of.assign(count, PreparedState::kNoSlot);
  for (const auto& [v, position] : s->input_values) s->input_position_of[v] = position;
  return s;
}

PreparedBodies BodyOp::prepare(Runtime& runtime, const PrepareOptions& options) const {
  PreparedBodies prepared;
  for (const Program& body : bodies()) prepared.push_back(prepare_state(runtime, body, options));
  return prepared;
}

}  // namespace detail

// ---- public entry points ------------------------------------------------------------------

namespace {
const detail::PreparedState& state_of(const PreparedProgram& p, const char* what) {
  if (!p.defined()) {
    fail(ErrorKind::InvalidArgument, what,
         "the prepared program is empty (default-constructed); get one from prepare()");
  }
  return *p.state();
}
}  // namespace

const Program& PreparedProgram::program() const {
  return state_of(*this, "program").program;
}
std::uint64_t PreparedProgram::runtime_id() const {
  return state_of(*this, "runtime_id").runtime_id;
}
std::uint64_t PreparedProgram::epoch() const {
  return state_of(*this, "epoch").epoch;
}
std::size_t PreparedProgram::step_count() const {
  return state_of(*this, "step_count").steps.size();
}
std::size_t PreparedProgram::fused_group_count() const {
  return state_of(*this, "fused_group_count").groups.size();
}
std::size_t PreparedProgram::fused_op_count() const {
  return state_of(*this, "fused_op_count").fused_ops;
}

DimBindings bind_dimensions(const Program& program, std::span<const Shape> input_shapes) {
  if (!program.defined()) {
    fail(ErrorKind::InvalidArgument, "bind_dimensions",
         "the program is empty (default-constructed); build one with compile()");
  }
  std::vector<DType> dtypes;
  for (std::size_t i = 0; i < program.input_count() && i < input_shapes.size(); ++i)
    dtypes.push_back(program.input_meta(i).dtype);
  dtypes.resize(input_shapes.size(), DType::F64);
  return detail::bind_inputs(*program.graph(), input_shapes, dtypes, "bind_dimensions");
}

namespace {
// Self-installing families (linalg, einsum, FFT) install their modules before
// the plan records the runtime's epoch, so a prepared program never goes
// stale because its own first run installed a family.
void ensure_families(Runtime& runtime, const detail::ProgramGraph& g) {
  for (const auto& node : g.nodes) {
    if (node.kind != detail::ProgramNode::Kind::Op) continue;
    if (const auto* with_bodies = detail::body_op(node.op.get())) {
      for (const Program& body : with_bodies->bodies()) ensure_families(runtime, *body.graph());
    } else if (node.op->is_extension()) {
      ensure_self_installing(runtime, *node.op);
    }
  }
}
}  // namespace

PreparedProgram prepare(Runtime& runtime, const Program& program, const InputSignature& signature,
                        const PrepareOptions& options) {
  if (!program.defined()) fail(ErrorKind::InvalidArgument, "prepare", "the program is empty");
  ensure_families(runtime, *program.graph());
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
  const auto snap = runtime.snapshot();
  for (std::size_t i = 0; i < signature.size(); ++i) {
    shapes.push_back(signature[i].shape);
    dtypes.push_back(signature[i].dtype);
    snap->selected().require_ingress("prepare", i, signature[i].placement);
  }
  const DimBindings bindings = detail::bind_inputs(*program.graph(), shapes, dtypes, "prepare");
  auto state = detail::prepare_state(runtime, program, options);
  detail::check_program_constraints(*state, bindings);
  runtime.count_program_preparation();
  return PreparedProgram(std::move(state));
}

}  // namespace tenferro
