// checkpoint(): a traced region run as one step whose intermediates are
// recomputed, not stored, for reverse mode: an op with one body
// (ad/program/body_op.hpp).

#include "ad/program/body_op.hpp"
#include "ad/traced/body_trace.hpp"
#include "tenferro/ad/transforms.hpp"

namespace tenferro {

namespace {

/// A checkpointed region: a body program without constants, run as one step.
/// The body's intermediates are freed when the step ends; reverse mode emits
/// another region that recomputes them and runs the body's vjp, so they are
/// never stored between the passes; forward mode a region running its jvp.
class RegionOp final : public detail::BodyOp {
 public:
  explicit RegionOp(Program body) : body_(std::move(body)) {}
  std::string_view name() const override { return "checkpoint"; }
  std::size_t input_count() const override { return body_.input_count(); }
  std::size_t output_count() const override { return body_.output_count(); }
  std::size_t hash() const override { return hash_combine(0x6368656b, body_.fingerprint()); }
  bool equals(const Op& other) const override {
    auto* o = dynamic_cast<const RegionOp*>(&other);
    return o != nullptr &&
           (o->body_.graph() == body_.graph() || o->body_.graph()->same_structure(*body_.graph()));
  }
  InferenceResult infer(std::span<const TensorMeta> inputs) const override;
  std::string describe() const override {
    return "checkpoint(" + std::to_string(body_.node_count()) + " ops)";
  }

  std::span<const Program> bodies() const override { return {&body_, 1}; }
  std::vector<Tensor> run(const detail::BodyRun& run, const detail::PreparedBodies& bodies,
                          std::vector<Tensor> inputs) const override {
    return detail::run_body(run, *bodies[0], std::move(inputs));
  }
  std::vector<std::optional<TracedTensor>> jvp(
      std::span<const TracedTensor> inputs, std::span<const TracedTensor> outputs,
      std::span<const std::optional<TracedTensor>> tangents,
      const ad::AdContext& rules) const override;
  std::vector<std::optional<TracedTensor>> vjp(
      std::span<const TracedTensor> inputs, std::span<const TracedTensor> outputs,
      std::span<const std::optional<TracedTensor>> cotangents,
      const ad::AdContext& rules) const override;

 private:
  Program body_;
};

InferenceResult RegionOp::infer(std::span<const TensorMeta> inputs) const {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!(inputs[i] == body_.input_meta(i))) {
      fail(ErrorKind::ShapeMismatch, "checkpoint", "region input ", i, " was traced as ",
           tenferro::name(body_.input_meta(i).dtype), to_string(body_.input_meta(i).shape),
           " but gets ", tenferro::name(inputs[i].dtype), to_string(inputs[i].shape),
           "; trace the region again");
    }
  }
  InferenceResult r;
  for (std::size_t j = 0; j < body_.output_count(); ++j) r.outputs.push_back(body_.output_meta(j));
  return r;
}

// The entries of `values` whose direction (a cotangent or tangent) is given:
// each gets a placeholder of its dtype and shape, appended to the region's
// inputs, with the given direction appended to the call's arguments.
struct Directions {
  std::vector<TracedTensor> chosen, placeholders;
};
Directions add_directions(std::span<const TracedTensor> values,
                          std::span<const std::optional<TracedTensor>> given,
                          std::vector<TracedTensor>& region_inputs,
                          std::vector<TracedTensor>& call_args) {
  Directions d;
  for (std::size_t k = 0; k < values.size(); ++k) {
    if (!given[k]) continue;
    TracedTensor p = placeholder(values[k].dtype(), values[k].shape());
    d.chosen.push_back(values[k]);
    d.placeholders.push_back(p);
    region_inputs.push_back(p);
    call_args.push_back(*given[k]);
  }
  return d;
}

// One region computing the defined entries of `body_outs` from
// `region_inputs`, called on `call_args`; its outputs go back to the slots
// they came from (the others stay empty).
std::vector<std::optional<TracedTensor>> call_region(
    std::span<const std::optional<TracedTensor>> body_outs,
    std::span<const TracedTensor> region_inputs, std::span<const TracedTensor> call_args) {
  std::vector<TracedTensor> defined;
  std::vector<std::size_t> which;
  for (std::size_t k = 0; k < body_outs.size(); ++k) {
    if (!body_outs[k]) continue;
    defined.push_back(*body_outs[k]);
    which.push_back(k);
  }
  std::vector<std::optional<TracedTensor>> result(body_outs.size());
  if (defined.empty()) return result;
  auto out =
      detail::make_traced(std::make_shared<RegionOp>(compile(defined, region_inputs)), call_args);
  for (std::size_t k = 0; k < which.size(); ++k) result[which[k]] = out[k];
  return result;
}

// Reverse mode: a region over the body's inputs and the outputs' cotangents
// that recomputes the body and returns the inputs' cotangents.
std::vector<std::optional<TracedTensor>> RegionOp::vjp(
    std::span<const TracedTensor> call_inputs, std::span<const TracedTensor>,
    std::span<const std::optional<TracedTensor>> cotangents, const ad::AdContext& rules) const {
  std::vector<TracedTensor> ps = detail::placeholders_for(body_);
  std::vector<TracedTensor> outs = detail::instantiate(*body_.graph(), ps, &body_.constants());
  std::vector<TracedTensor> inputs = ps;
  std::vector<TracedTensor> call_args(call_inputs.begin(), call_inputs.end());
  const Directions seeds = add_directions(outs, cotangents, inputs, call_args);
  return call_region(vjp_many(seeds.chosen, seeds.placeholders, ps, rules), inputs, call_args);
}

// Forward mode: a region over the body's inputs and their tangents that
// returns the outputs' tangents.
std::vector<std::optional<TracedTensor>> RegionOp::jvp(
    std::span<const TracedTensor> call_inputs, std::span<const TracedTensor>,
    std::span<const std::optional<TracedTensor>> tangents, const ad::AdContext& rules) const {
  std::vector<TracedTensor> ps = detail::placeholders_for(body_);
  std::vector<TracedTensor> outs = detail::instantiate(*body_.graph(), ps, &body_.constants());
  std::vector<TracedTensor> inputs = ps;
  std::vector<TracedTensor> call_args(call_inputs.begin(), call_inputs.end());
  const Directions dirs = add_directions(ps, tangents, inputs, call_args);
  return call_region(jvp_many(outs, dirs.chosen, dirs.placeholders, rules), inputs, call_args);
}

}  // namespace

std::vector<TracedTensor> checkpoint(const TracedFn& fn, ListRef<TracedTensor> inputs) {
  if (!fn) fail(ErrorKind::InvalidArgument, "checkpoint", "the function is empty");
  std::vector<TracedTensor> params;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) {
      fail(ErrorKind::InvalidArgument, "checkpoint", "input ", i, " is undefined");
    }
    params.push_back(placeholder(inputs[i].dtype(), inputs[i].shape()));
  }
  const std::vector<TracedTensor> outs = fn(params);
  if (outs.empty()) fail(ErrorKind::InvalidArgument, "checkpoint", "the function returned nothing");

  // Values the function captured from outside (they depend on no parameter)
  // become extra region inputs, so the region body holds no tensor data.
  detail::TracedBody body = detail::lift_body(params, outs);
  std::vector<TracedTensor> call_inputs(inputs.begin(), inputs.end());
  call_inputs.insert(call_inputs.end(), body.captured.begin(), body.captured.end());
  return detail::make_traced(std::make_shared<RegionOp>(std::move(body.program)), call_inputs);
}

TracedTensor checkpoint(const std::function<TracedTensor(const TracedTensor&)>& fn,
                        const TracedTensor& x) {
  if (!fn) fail(ErrorKind::InvalidArgument, "checkpoint", "the function is empty");
  const TracedTensor in[1] = {x};
  return checkpoint(
      [&](std::span<const TracedTensor> p) { return std::vector<TracedTensor>{fn(p[0])}; }, in)[0];
}

}  // namespace tenferro
