// run(): the prepared steps executed (prepare.cpp made them), values released
// at their last use, dynamic sizes bound from the ops that fix them, the
// epoch and the inputs checked.

#include <cstddef>
#include <memory>
#include <new>
#include <typeinfo>

#include "ad/program/exec.hpp"

namespace tenferro {

namespace detail {

namespace {

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
        const BodyRun run{runtime, backend, bindings, counter, stats};
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

std::vector<Tensor> run_body(const BodyRun& run, const PreparedState& body,
                             std::vector<Tensor> inputs) {
  return execute_state(run.runtime, run.backend, body, inputs, run.bindings, run.counter, run.stats,
                       inputs);
}

}  // namespace detail

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
    engine.require_ingress("run", i, p);
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
