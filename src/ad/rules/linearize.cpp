#include "tenferro/ad/linearize.hpp"

#include <variant>

namespace tenferro::ad {

namespace {

[[noreturn]] void missing_role(const Op& op, std::string_view role, std::string_view transform) {
  fail(ErrorKind::UnsupportedAdRule, std::string(op.name()), "no ", role, " rule for ", op.name(),
       " (needed by ", transform, "); register one in the AdContext");
}

// Runs a jvp rule with symbolic tangent inputs over an outer emitter: ops that
// touch no tangent go straight to the outer emitter; ops on tangents are
// recorded on a linear tape, which is then transposed op by op.
class LinearizeEmitter final : public Emitter {
 public:
  LinearizeEmitter(Emitter& outer, std::string_view transform)
      : outer_(outer), transform_(transform) {}

  Val wrap_outer(Val v) {
    if (!v.valid()) return v;  // keeps undeclared residuals invalid
    entries_.push_back(Entry{v, -1, {}});
    return Val{static_cast<std::int64_t>(entries_.size() - 1)};
  }
  Val linear_input(TensorMeta meta) {
    entries_.push_back(Entry{Val{}, next_linear_++, std::move(meta)});
    return Val{static_cast<std::int64_t>(entries_.size() - 1)};
  }
  bool is_linear(Val v) const { return entry(v).linear >= 0; }

  std::vector<Val> emit(const OpPtr& op, std::span<const Val> inputs) override {
    bool any_linear = false;
    for (Val v : inputs) any_linear |= is_linear(v);
    if (!any_linear) {
      std::vector<Val> outer_in;
      for (Val v : inputs) outer_in.push_back(entry(v).outer);
      std::vector<Val> out;
      for (Val r : outer_.emit(op, outer_in)) out.push_back(wrap_outer(r));
      return out;
    }
    std::vector<TensorMeta> metas;
    for (Val v : inputs) metas.push_back(meta(v));
    InferenceResult inferred = op->infer(metas);
    TapeOp t{op, std::vector<Val>(inputs.begin(), inputs.end()), {}};
    for (auto& m : inferred.outputs) t.outputs.push_back(linear_input(std::move(m)));
    tape_.push_back(t);
    return t.outputs;
  }

  TensorMeta meta(Val v) const override {
    const Entry& e = entry(v);
    return e.linear >= 0 ? e.meta : outer_.meta(e.outer);
  }

  // Transposes the tape: cotangents of `outputs` (local Vals) -> cotangents of
  // `inputs` (local linear Vals), as outer Vals.
  std::vector<MaybeVal> transpose(const AdContext& ctx, std::span<const MaybeVal> tangent_outputs,
                                  std::span<const MaybeVal> cotangents,
                                  std::span<const Val> linear_inputs) {
    std::vector<MaybeVal> ct(entries_.size());
    for (std::size_t j = 0; j < tangent_outputs.size(); ++j) {
      if (!tangent_outputs[j] || !cotangents[j]) continue;
      const Val t = *tangent_outputs[j];
      if (!is_linear(t)) continue;  // a tangent output independent of the tangents
      accumulate(ct, t, *cotangents[j]);
    }
    for (auto it = tape_.rbegin(); it != tape_.rend(); ++it) {
      std::vector<MaybeVal> out_ct;
      bool any = false;
      for (Val o : it->outputs) {
        out_ct.push_back(ct[static_cast<std::size_t>(o.id)]);
        any |= out_ct.back().has_value();
      }
      if (!any) continue;
      const RuleSet& rules = ctx.require(*it->op, transform_);
      if (!rules.transpose) missing_role(*it->op, "transpose", transform_);
      std::vector<Val> primal_in;
      std::vector<bool> linear_mask;
      for (Val v : it->inputs) {
        const bool lin = is_linear(v);
        linear_mask.push_back(lin);
        primal_in.push_back(lin ? Val{} : entry(v).outer);
      }
      std::vector<Val> no_outputs(it->outputs.size());
      std::vector<TensorMeta> in_metas, out_metas;
      for (Val v : it->inputs) in_metas.push_back(meta(v));
      for (Val o : it->outputs) out_metas.push_back(meta(o));
      RuleArgs args{outer_, *it->op, primal_in, no_outputs, in_metas, out_metas};
      std::unique_ptr<bool[]> mask(new bool[linear_mask.size()]);
      for (std::size_t i = 0; i < linear_mask.size(); ++i) mask[i] = linear_mask[i];
      std::vector<MaybeVal> in_ct =
          rules.transpose(args, std::span<const bool>(mask.get(), linear_mask.size()), out_ct);
      for (std::size_t i = 0; i < it->inputs.size() && i < in_ct.size(); ++i) {
        if (linear_mask[i] && in_ct[i]) accumulate(ct, it->inputs[i], *in_ct[i]);
      }
    }
    std::vector<MaybeVal> result;
    for (Val v : linear_inputs)
      result.push_back(v.valid() ? ct[static_cast<std::size_t>(v.id)] : std::nullopt);
    return result;
  }

 private:
  struct Entry {
    Val outer;            // valid for outer values
    std::int64_t linear;  // >= 0 for linear values
    TensorMeta meta;      // linear values only
  };
  struct TapeOp {
    OpPtr op;
    std::vector<Val> inputs;
    std::vector<Val> outputs;
  };
  const Entry& entry(Val v) const {
    if (!v.valid()) {
      fail(ErrorKind::Internal, std::string(transform_),
           "an AD rule read a primal value it did not declare as a residual");
    }
    return entries_.at(static_cast<std::size_t>(v.id));
  }
  void accumulate(std::vector<MaybeVal>& ct, Val at, Val value) {
    MaybeVal& slot = ct[static_cast<std::size_t>(at.id)];
    slot = slot ? outer_.add(*slot, value) : value;
  }

  Emitter& outer_;
  std::string_view transform_;
  std::vector<Entry> entries_;
  std::vector<TapeOp> tape_;
  std::int64_t next_linear_ = 0;
};

// Output metas: from the outputs where they are valid, else inferred.
std::vector<TensorMeta> output_metas_of(const Emitter& emitter, const Op& op,
                                        std::span<const TensorMeta> input_metas,
                                        std::span<const Val> outputs) {
  bool all_valid = outputs.size() == op.output_count();
  for (Val o : outputs) all_valid &= o.valid();
  std::vector<TensorMeta> metas;
  if (all_valid) {
    for (Val o : outputs) metas.push_back(emitter.meta(o));
    return metas;
  }
  return op.infer(input_metas).outputs;
}

}  // namespace

std::vector<MaybeVal> forward_op(const AdContext& ctx, Emitter& emitter, const Op& op,
                                 std::span<const Val> inputs, std::span<const Val> outputs,
                                 std::span<const MaybeVal> tangents, std::string_view transform,
                                 std::span<const TensorMeta> input_metas) {
  bool any = false;
  for (const auto& t : tangents) any |= t.has_value();
  if (!any) return std::vector<MaybeVal>(op.output_count());
  const RuleSet& rules = ctx.require(op, transform);
  if (rules.non_differentiable) return std::vector<MaybeVal>(op.output_count());
  if (!rules.jvp) missing_role(op, "jvp", transform);
  std::vector<TensorMeta> in_metas(input_metas.begin(), input_metas.end());
  if (in_metas.empty()) {
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].valid()) {
        in_metas.push_back(emitter.meta(inputs[i]));
      } else if (i < tangents.size() && tangents[i]) {
        in_metas.push_back(emitter.meta(*tangents[i]));
      } else {
        fail(ErrorKind::Internal, std::string(transform), "forward_op on ", op.name(), ": input ",
             i, " has neither a value nor a tangent; pass input_metas");
      }
    }
  }
  const std::vector<TensorMeta> out_metas = output_metas_of(emitter, op, in_metas, outputs);
  RuleArgs args{emitter, op, inputs, outputs, in_metas, out_metas};
  std::vector<MaybeVal> out = rules.jvp(args, tangents);
  out.resize(op.output_count());
  for (std::size_t j = 0; j < out.size(); ++j) {
    if (out[j] && !differentiable(out_metas[j].dtype)) out[j].reset();
  }
  return out;
}

std::vector<MaybeVal> backward_op(const AdContext& ctx, Emitter& emitter, const Op& op,
                                  std::span<const TensorMeta> input_metas,
                                  std::span<const Val> inputs, std::span<const Val> outputs,
                                  std::span<const MaybeVal> cotangents, std::string_view transform,
                                  std::span<const TensorMeta> output_metas,
                                  std::span<const bool> wanted) {
  const std::size_t n = inputs.size();
  bool any = false;
  for (const auto& c : cotangents) any |= c.has_value();
  if (!any) return std::vector<MaybeVal>(n);
  const RuleSet& rules = ctx.require(op, transform);
  if (rules.non_differentiable) return std::vector<MaybeVal>(n);
  std::vector<MaybeVal> result;
  // Recorded metadata is used in place; otherwise infer it once.
  std::vector<TensorMeta> inferred;
  if (output_metas.size() != op.output_count()) {
    inferred = output_metas_of(emitter, op, input_metas, outputs);
  }
  const std::span<const TensorMeta> out_metas =
      inferred.empty() && output_metas.size() == op.output_count()
          ? output_metas
          : std::span<const TensorMeta>(inferred);
  if (rules.vjp) {
    // Integer/bool outputs carry no derivative: drop their cotangents (the
    // linearised path drops them through the jvp rule).
    std::vector<MaybeVal> cts(cotangents.begin(), cotangents.end());
    bool live = false;
    for (std::size_t j = 0; j < cts.size(); ++j) {
      if (j < out_metas.size() && !differentiable(out_metas[j].dtype)) cts[j].reset();
      live |= cts[j].has_value();
    }
    if (!live) return std::vector<MaybeVal>(n);
    RuleArgs args{emitter, op, inputs, outputs, input_metas, out_metas, wanted};
    result = rules.vjp(args, cts);
  } else {
    if (!rules.jvp) missing_role(op, "vjp or jvp", transform);
    LinearizeEmitter lin(emitter, transform);
    std::vector<Val> local_in, local_out, tangent_vals;
    std::vector<MaybeVal> tangents;
    for (std::size_t i = 0; i < n; ++i) {
      local_in.push_back(lin.wrap_outer(inputs[i]));
      const bool want = wanted.empty() || (i < wanted.size() && wanted[i]);
      if (want && differentiable(input_metas[i].dtype)) {
        Val t = lin.linear_input(input_metas[i]);
        tangents.push_back(t);
        tangent_vals.push_back(t);
      } else {
        tangents.push_back(std::nullopt);
        tangent_vals.push_back(Val{});
      }
    }
    for (Val o : outputs) local_out.push_back(lin.wrap_outer(o));
    RuleArgs args{lin, op, local_in, local_out, input_metas, out_metas};
    std::vector<MaybeVal> tangent_out = rules.jvp(args, tangents);
    tangent_out.resize(outputs.size());
    result = lin.transpose(ctx, tangent_out, cotangents, tangent_vals);
  }
  result.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (!result[i]) continue;
    if (!differentiable(input_metas[i].dtype)) {
      result[i].reset();
    } else {
      result[i] = emitter.to_dtype(*result[i], input_metas[i].dtype);
    }
  }
  return result;
}

}  // namespace tenferro::ad
