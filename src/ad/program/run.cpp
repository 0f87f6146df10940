// prepare() and run(): execution steps with liveness, dimension binding,
// shape-constraint checks, epoch binding.

#include <cstddef>
#include <memory>
#include <new>
#include <typeinfo>

#include "ad/program/exec.hpp"

namespace tenferro {

namespace detail {

namespace {

std::uint32_t value_id(const PreparedState& s, ValueRef v) {
  return s.value_base[v.node] + v.output;
}

bool uses_dynamic_size(const ProgramGraph& g, const ProgramNode& node) {
  for (ValueRef v : node.inputs)
    if (depends_on_dynamic(g.meta(v).shape)) return true;
  for (const ShapeConstraint& c : node.constraints)
    if (c.lhs_dim.depends_on_dynamic() || c.rhs_dim.depends_on_dynamic()) return true;
  return false;
}

void check_node_constraints(const ProgramGraph& g, std::uint32_t idx, const DimBindings& bindings) {
  const ProgramNode& n = g.nodes[idx];
  std::vector<Shape> shapes;
  for (ValueRef v : n.inputs) shapes.push_back(evaluate(g.meta(v).shape, bindings));
  check_constraints(n.op->name(), n.constraints, shapes, bindings);
}

// Binds the dynamic sizes an extension op declares in its outputs from what
// it returned: each at most its upper bound, and equal to an earlier binding
// of the same name.
void bind_dynamic_sizes(const ProgramNode& n, std::span<const Tensor> outs, DimBindings& bindings) {
  for (std::size_t j = 0; j < outs.size() && j < n.outputs.size(); ++j) {
    const SymShape& declared = n.outputs[j].shape;
    const Shape& got = outs[j].shape();
    if (got.size() != declared.size()) continue;  // the contract check below names it
    for (std::size_t d = 0; d < got.size(); ++d) {
      const SymDim& sd = declared[d];
      if (!sd.is_dynamic()) continue;
      const std::int64_t bound = sd.upper_bound().evaluate(bindings);
      if (got[d] > bound) {
        fail_in(ErrorPhase::Execute, ErrorKind::ExtensionContract, std::string(n.op->name()),
                "output ", j, " axis ", d, " has extent ", got[d], " but dynamic size '", sd.name(),
                "' is declared at most ", sd.upper_bound().to_string(), " = ", bound,
                "; the family's engine and infer() disagree");
      }
      auto [it, fresh] = bindings.emplace(sd.name(), got[d]);
      if (!fresh && it->second != got[d]) {
        fail_in(ErrorPhase::Execute, ErrorKind::ShapeMismatch, std::string(n.op->name()),
                "dynamic size '", sd.name(), "' was fixed to ", it->second,
                " earlier (by an input or an earlier op) but this op produced ", got[d],
                "; inputs with that extent must match the op's result, and different "
                "data-dependent sizes need different names");
      }
    }
  }
}

}  // namespace

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

namespace {

// `n` default (undefined) tensors: in place for small programs, else one
// allocation; only the n are constructed and destroyed.
class TensorSlots {
 public:
  explicit TensorSlots(std::size_t n) : n_(n) {
    data_ = n <= kLocal ? reinterpret_cast<Tensor*>(local_)
                        : static_cast<Tensor*>(::operator new(n * sizeof(Tensor)));
    std::uninitialized_default_construct_n(data_, n);
  }
  TensorSlots(const TensorSlots&) = delete;
  TensorSlots& operator=(const TensorSlots&) = delete;
  ~TensorSlots() {
    std::destroy_n(data_, n_);
    if (n_ > kLocal) ::operator delete(data_);
  }
  std::span<Tensor> span() const { return {data_, n_}; }

 private:
  static constexpr std::size_t kLocal = 8;
  alignas(Tensor) std::byte local_[kLocal * sizeof(Tensor)];
  std::size_t n_;
  Tensor* data_;
};

}  // namespace

std::vector<Tensor> execute_state(Runtime& runtime, Backend& backend, const PreparedState& state,
                                  std::span<const Tensor> inputs, DimBindings& bindings,
                                  LiveCounter& counter, RunStats* stats,
                                  std::span<Tensor> owned_inputs) {
  const ProgramGraph& g = *state.program.graph();
  const auto& constants = state.program.constants();
  // Where each value lives: the caller's input, the program's constant, or
  // `owned` (what the steps compute). Inputs and constants are not copied.
  SmallVector<const Tensor*, 32> at(state.value_count, nullptr);
  // The computed values by slot (state.slot_of), then the operand list the
  // gathering steps fill (its tail): on the stack for small programs, else
  // one allocation.
  TensorSlots slot_store(state.slot_count + state.max_operands);
  const std::span<Tensor> owned = slot_store.span();
  const std::span<Tensor> operand_slots(owned.data() + state.slot_count, state.max_operands);
  // The slot holding value v, when v is a computed value the run holds now.
  auto held = [&](std::uint32_t v) -> Tensor* {
    const std::uint32_t slot = state.slot_of[v];
    if (slot == PreparedState::kNoSlot || at[v] != &owned[slot]) return nullptr;
    return &owned[slot];
  };
  auto gather_operands = [&](std::span<const ValueRef> refs) {
    for (std::size_t k = 0; k < refs.size(); ++k) operand_slots[k] = *at[value_id(state, refs[k])];
    return std::span<const Tensor>(operand_slots.data(), refs.size());
  };
  // A step's operands: a run of the inputs in place, else copies in the
  // operand slots, which are not held past the step.
  auto operands_of = [&](const Step& step, std::span<const ValueRef> refs) {
    if (step.first_input >= 0)
      return inputs.subspan(static_cast<std::size_t>(step.first_input), refs.size());
    return gather_operands(refs);
  };
  auto drop_operands = [&](const Step& step, std::size_t count) {
    if (step.first_input >= 0) return;
    for (std::size_t k = 0; k < count; ++k) operand_slots[k] = Tensor();
  };
  auto set = [&](std::uint32_t v, Tensor&& t) {
    Tensor& slot = owned[state.slot_of[v]];  // a step's value: it has a slot
    slot = std::move(t);
    at[v] = &slot;
    counter.add(1);
  };
  for (const auto& [v, slot] : state.input_values) at[v] = &inputs[slot];
  for (const auto& [v, slot] : state.constant_values) at[v] = &constants.at(slot);
  counter.add(state.input_values.size() + state.constant_values.size());
  // The tensor holding value v that this run may clear or move: a step's
  // value it holds, or an input it owns.
  auto clearable = [&](std::uint32_t v) -> Tensor* {
    if (at[v] == nullptr) return nullptr;
    if (Tensor* slot = held(v)) return slot;
    const std::uint32_t position = state.input_position_of[v];
    if (owned_inputs.empty() || position == PreparedState::kNoSlot) return nullptr;
    return &owned_inputs[position];
  };
  auto release = [&](std::uint32_t v) {
    if (at[v] == nullptr) return;
    if (Tensor* t = clearable(v)) *t = Tensor();
    at[v] = nullptr;
    --counter.live;
  };
  // An op with bodies owns its operands: those it reads last are moved in.
  auto owned_operands = [&](const Step& step, std::span<const ValueRef> refs) {
    std::vector<Tensor> ins;
    ins.reserve(refs.size());
    for (std::size_t k = 0; k < refs.size(); ++k) {
      const std::uint32_t v = value_id(state, refs[k]);
      Tensor* t = step.last_reads[k] ? clearable(v) : nullptr;
      if (t == nullptr) {
        ins.push_back(*at[v]);
        continue;
      }
      ins.push_back(std::move(*t));
      at[v] = nullptr;
      --counter.live;
    }
    return ins;
  };
  for (std::uint32_t v : state.dead_on_arrival) release(v);
  for (const Step& step : state.steps) {
    for (std::uint32_t idx : step.late_checks) check_node_constraints(g, idx, bindings);
    if (step.fused) {
      const FusedPlan& plan = state.groups[step.index];
      const auto ext = operands_of(step, plan.externals);
      const std::int64_t block = state.options.fusion_block;
      // Static shapes: the run checked the inputs against the prepared
      // signature and inference fixed every intermediate, so the pass's own
      // per-call checks would repeat them. Bound shapes are checked.
      if (plan.static_shape) {
        set(state.value_base[plan.nodes.back()],
            plan.prepared->run(ext, plan.static_shape->span(), block));
      } else {
        const Shape shape = evaluate(plan.shape, bindings);
        plan.pass->check(ext, shape.span(), backend, block);
        set(state.value_base[plan.nodes.back()], plan.prepared->run(ext, shape.span(), block));
      }
      drop_operands(step, ext.size());
      if (stats) ++stats->fused_passes;
    } else {
      const ProgramNode& n = g.nodes[step.index];
      const PreparedBodies& bodies = state.bodies[step.index];
      if (!bodies.empty()) {
        const BodyRun run{runtime, backend, bindings, counter};
        auto outs =
            static_cast<const BodyOp&>(*n.op).run(run, bodies, owned_operands(step, n.inputs));
        if (outs.size() != n.outputs.size()) {
          fail_in(ErrorPhase::Execute, ErrorKind::Internal, std::string(n.op->name()), "returned ",
                  outs.size(), " outputs but declares ", n.outputs.size());
        }
        for (std::uint32_t j = 0; j < outs.size(); ++j)
          set(state.value_base[step.index] + j, std::move(outs[j]));
        if (stats) ++stats->executed_steps;
        for (std::uint32_t v : step.frees) release(v);
        continue;
      }
      const auto ins = operands_of(step, n.inputs);
      if (n.op->is_extension()) {
        auto outs = runtime.apply(n.op, ins);
        if (outs.size() != n.outputs.size()) {
          fail_in(ErrorPhase::Execute, ErrorKind::ExtensionContract, std::string(n.op->name()),
                  "returned ", outs.size(), " outputs but the family declares ", n.outputs.size());
        }
        if (step.binds_dynamic) bind_dynamic_sizes(n, outs, bindings);
        for (std::size_t j = 0; j < outs.size(); ++j) {
          const Shape want = evaluate(n.outputs[j].shape, bindings);
          if (outs[j].dtype() != n.outputs[j].dtype || outs[j].shape() != want) {
            fail_in(ErrorPhase::Execute, ErrorKind::ExtensionContract, std::string(n.op->name()),
                    "output ", j, " is ", name(outs[j].dtype()), shape_to_string(outs[j].shape()),
                    " but the family's infer() declares ", name(n.outputs[j].dtype),
                    shape_to_string(want), "; the family's engine and infer() disagree");
          }
        }
        for (std::uint32_t j = 0; j < outs.size(); ++j)
          set(state.value_base[step.index] + j, std::move(outs[j]));
      } else {  // a core primitive: one output
        set(state.value_base[step.index],
            execute_primitive(static_cast<const PrimitiveOp&>(*n.op), ins, backend, bindings));
      }
      drop_operands(step, ins.size());
    }
    if (stats) ++stats->executed_steps;
    for (std::uint32_t v : step.frees) release(v);
  }
  std::vector<Tensor> out;
  out.reserve(g.outputs.size());
  for (std::size_t k = 0; k < g.outputs.size(); ++k) {
    const std::uint32_t v = value_id(state, g.outputs[k]);
    Tensor* slot = held(v);
    if (state.output_moves[k] && slot != nullptr) {
      out.push_back(std::move(*slot));
    } else {
      out.push_back(*at[v]);
    }
  }
  for (const Tensor* t : at)
    if (t != nullptr) --counter.live;
  return out;
}

PreparedBodies BodyOp::prepare(Runtime& runtime, const PrepareOptions& options) const {
  PreparedBodies prepared;
  for (const Program& body : bodies()) prepared.push_back(prepare_state(runtime, body, options));
  return prepared;
}

std::vector<Tensor> run_body(const BodyRun& run, const PreparedState& body,
                             std::vector<Tensor> inputs) {
  return execute_state(run.runtime, run.backend, body, inputs, run.bindings, run.counter, nullptr,
                       inputs);
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
// An input the runtime's selected engine does not accept is NoInputIngressError.
void require_ingress(const EngineRegistration& engine, const char* what, std::size_t i,
                     const Placement& placement) {
  if (engine.accepts(placement)) return;
  throw NoInputIngressError(
      what,
      detail::cat("input ", i, " lives on ", to_string(placement), ", which engine ",
                  engine.id().str(), " does not accept; move it there explicitly first"),
      i, placement, engine.id());
}

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
    require_ingress(snap->selected(), "prepare", i, signature[i].placement);
  }
  const DimBindings bindings = detail::bind_inputs(*program.graph(), shapes, dtypes, "prepare");
  auto state = detail::prepare_state(runtime, program, options);
  detail::check_program_constraints(*state, bindings);
  runtime.count_program_preparation();
  return PreparedProgram(std::move(state));
}

namespace {

// Whether the inputs have exactly the static shapes and the dtypes the
// program was prepared for (then they bind nothing and need no checks).
bool matches_static_signature(const detail::PreparedState& state, std::span<const Tensor> inputs) {
  if (!state.static_input_shapes) return false;
  const auto& shapes = *state.static_input_shapes;
  const detail::ProgramGraph& g = *state.program.graph();
  if (inputs.size() != shapes.size()) return false;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined() || inputs[i].shape() != shapes[i] ||
        inputs[i].dtype() != g.nodes[g.input_nodes[i]].outputs[0].dtype)
      return false;
  }
  return true;
}

std::vector<Tensor> run_checked(Runtime& runtime, const PreparedProgram& prepared,
                                std::span<const Tensor> inputs, RunStats* stats) {
  if (!prepared.defined()) fail(ErrorKind::InvalidArgument, "run", "the prepared program is empty");
  const detail::PreparedState& state = *prepared.state();
  if (state.runtime_id != runtime.id()) {
    fail(ErrorKind::ContextMismatch, "run", "the program was prepared on runtime ",
         state.runtime_id, ", not on runtime ", runtime.id(), "; prepare it on this runtime");
  }
  // One load for the epoch check; at the prepared epoch, the engine the
  // program was prepared for is the selected one (ingress, backend).
  const std::uint64_t epoch = runtime.epoch();
  if (state.epoch != epoch) {
    fail(ErrorKind::RuntimeState, "run", "the program was prepared at runtime epoch ", state.epoch,
         " but the runtime was reconfigured (epoch ", epoch,
         "); prepare it again, or use run_compiled, which does");
  }
  const EngineRegistration& engine = *state.engine;
  DimBindings bindings;
  if (!matches_static_signature(state, inputs)) {
    std::vector<Shape> shapes;
    std::vector<DType> dtypes;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].defined())
        fail(ErrorKind::InvalidArgument, "run", "input ", i, " is undefined");
      shapes.push_back(inputs[i].shape());
      dtypes.push_back(inputs[i].dtype());
    }
    bindings = detail::bind_inputs(*state.program.graph(), shapes, dtypes, "run");
    detail::check_program_constraints(state, bindings);
  }
  // Inputs are defined: the signature or binding check above saw to it. The
  // engine's answer for a placement is asked once (inputs mostly share one).
  Placement accepted;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Placement p = inputs[i].placement();
    if (i > 0 && p == accepted) continue;
    require_ingress(engine, "run", i, p);
    accepted = p;
  }
  detail::LiveCounter counter;
  if (stats) *stats = RunStats{};
  auto out =
      detail::execute_state(runtime, engine.backend(), state, inputs, bindings, counter, stats);
  if (stats) {
    stats->peak_live_values = counter.peak;
    stats->bindings = std::move(bindings);
  }
  runtime.count_program_run();
  return out;
}

}  // namespace

std::vector<Tensor> run(Runtime& runtime, const PreparedProgram& prepared, ListRef<Tensor> inputs,
                        RunStats* stats) {
  try {
    return run_checked(runtime, prepared, inputs, stats);
  } catch (const Error& e) {
    detail::rethrow_in_execute_phase(e);
  }
}

namespace detail {
void rethrow_in_execute_phase(const Error& e) {
  // Whatever fails inside a run fails while executing: errors raised with the
  // default (build) phase by the checks and kernels it calls report Execute.
  // Derived errors (NoInputIngressError) keep their type and phase.
  if (e.phase() != ErrorPhase::Build || typeid(e) != typeid(Error)) throw;
  throw Error(e.kind(), e.op(), e.message(), ErrorPhase::Execute, e.cause_ptr());
}
}  // namespace detail

}  // namespace tenferro
