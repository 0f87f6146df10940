// Reverse mode of scan (scan_op.hpp). Without checkpoints it is a
// composition of scans, so it is differentiable again: a forward scan that
// also stacks the carry before each step, then a reverse scan whose body is
// the body's vjp. With checkpoint_every = k > 1 it is one "scan_backward"
// op that keeps every k-th carry and recomputes the steps between.

#include <algorithm>
#include <array>
#include <iterator>

#include "ad/program/exec.hpp"
#include "ad/traced/scan_op.hpp"
#include "tenferro/ad/linearize.hpp"
#include "tenferro/ad/transforms.hpp"

namespace tenferro::detail {

namespace {

using Span = std::span<const TracedTensor>;
using MaybeSpan = std::span<const std::optional<TracedTensor>>;

std::ptrdiff_t at(std::size_t i) {
  return static_cast<std::ptrdiff_t>(i);
}

// One step of the reverse pass, as a scan body:
//   carries  the cotangents of the differentiable carries, then the
//            accumulated cotangents of the differentiable captured values;
//   xs       the carry before the step (every carry), the step's x slices,
//            the given ys' cotangent slices, the given stored carries'
//            cotangent slices;
//   captured the forward body's captured values, then what this body lifts;
//   ys       the cotangents of the differentiable xs' slices.
// The step is recomputed from the stored carry inside the body, so nothing
// but the carries is kept between the passes.
struct ReverseBody {
  TracedBody body;
  std::vector<std::size_t> carry_cts, x_cts, captured_cts;  // inputs given cotangents
  std::vector<std::size_t> y_seeds, stored_seeds;           // outputs bringing cotangents
  std::size_t carries() const { return carry_cts.size() + captured_cts.size(); }
  std::size_t extras() const { return y_seeds.size() + stored_seeds.size(); }
};

ReverseBody reverse_body(const ScanOp& op, Span inputs, MaybeSpan cotangents,
                         const ad::AdContext& rules) {
  const std::size_t c = op.carries(), nx = op.xs(), ny = op.ys();
  const Program& fwd = op.body();
  const std::vector<TracedTensor> ps = placeholders_for(fwd);
  const std::vector<TracedTensor> outs = instantiate(*fwd.graph(), ps, &fwd.constants());
  ReverseBody rb;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!ad::differentiable(inputs[i].dtype())) continue;
    (i < c ? rb.carry_cts : i < c + nx ? rb.x_cts : rb.captured_cts).push_back(i);
  }
  for (std::size_t j = 0; j < ny; ++j)
    if (cotangents[c + j]) rb.y_seeds.push_back(j);
  if (op.config().stores_carries) {
    for (std::size_t i : rb.carry_cts)
      if (cotangents[c + ny + i]) rb.stored_seeds.push_back(i);
  }
  auto like = [](const TracedTensor& t) { return placeholder(t.dtype(), t.shape()); };
  std::vector<TracedTensor> cbar, pbar, ybar, sbar, seeds, seed_cts, wrt;
  for (std::size_t i : rb.carry_cts) {
    cbar.push_back(like(ps[i]));
    seeds.push_back(outs[i]);
    seed_cts.push_back(cbar.back());
  }
  for (std::size_t i : rb.captured_cts) pbar.push_back(like(ps[i]));
  for (std::size_t j : rb.y_seeds) {
    ybar.push_back(like(outs[c + j]));
    seeds.push_back(outs[c + j]);
    seed_cts.push_back(ybar.back());
  }
  for (std::size_t i : rb.stored_seeds) sbar.push_back(like(ps[i]));
  for (std::size_t i : rb.carry_cts) wrt.push_back(ps[i]);
  for (std::size_t i : rb.x_cts) wrt.push_back(ps[i]);
  for (std::size_t i : rb.captured_cts) wrt.push_back(ps[i]);
  const auto cts = vjp_many(seeds, seed_cts, wrt, rules);

  std::vector<TracedTensor> body_outs;
  for (std::size_t a = 0; a < rb.carry_cts.size(); ++a) {
    const std::size_t i = rb.carry_cts[a];
    TracedTensor v = cts[a] ? *cts[a] : zeros_like(ps[i]);
    for (std::size_t b = 0; b < rb.stored_seeds.size(); ++b)
      if (rb.stored_seeds[b] == i) v = v + sbar[b];
    body_outs.push_back(v);
  }
  const std::size_t captured_at = rb.carry_cts.size() + rb.x_cts.size();
  for (std::size_t a = 0; a < rb.captured_cts.size(); ++a) {
    const auto& ct = cts[captured_at + a];
    body_outs.push_back(ct ? pbar[a] + *ct : pbar[a]);
  }
  for (std::size_t a = 0; a < rb.x_cts.size(); ++a) {
    const auto& ct = cts[rb.carry_cts.size() + a];
    body_outs.push_back(ct ? *ct : zeros_like(ps[rb.x_cts[a]]));
  }
  std::vector<TracedTensor> params = cbar;
  params.insert(params.end(), pbar.begin(), pbar.end());
  params.insert(params.end(), ps.begin(), ps.begin() + at(c + nx));
  params.insert(params.end(), ybar.begin(), ybar.end());
  params.insert(params.end(), sbar.begin(), sbar.end());
  params.insert(params.end(), ps.begin() + at(c + nx), ps.end());
  rb.body = lift_body(params, body_outs);
  return rb;
}

// The reverse pass's carries at its start: the final carries' cotangents
// (zeros where none is given) and zero accumulators for the captured values.
std::vector<TracedTensor> reverse_init(const ReverseBody& rb, Span inputs, MaybeSpan cotangents) {
  std::vector<TracedTensor> init;
  for (std::size_t i : rb.carry_cts)
    init.push_back(cotangents[i] ? *cotangents[i] : zeros_like(inputs[i]));
  for (std::size_t i : rb.captured_cts) init.push_back(zeros_like(inputs[i]));
  return init;
}

// The given cotangents of the ys and of the stored carries (scanned by the
// reverse pass).
std::vector<TracedTensor> reverse_extras(const ScanOp& op, const ReverseBody& rb,
                                         MaybeSpan cotangents) {
  const std::size_t c = op.carries(), ny = op.ys();
  std::vector<TracedTensor> extras;
  for (std::size_t j : rb.y_seeds) extras.push_back(*cotangents[c + j]);
  for (std::size_t i : rb.stored_seeds) extras.push_back(*cotangents[c + ny + i]);
  return extras;
}

// The reverse pass's outputs (carries, then the xs' cotangents) as the
// cotangents of the scan's inputs.
std::vector<std::optional<TracedTensor>> input_cotangents(const ReverseBody& rb, Span inputs,
                                                          const std::vector<TracedTensor>& out) {
  std::vector<std::optional<TracedTensor>> result(inputs.size());
  std::size_t k = 0;
  for (std::size_t i : rb.carry_cts) result[i] = out[k++];
  for (std::size_t i : rb.captured_cts) result[i] = out[k++];
  for (std::size_t i : rb.x_cts) result[i] = out[k++];
  return result;
}

// ---- the checkpointed reverse pass ------------------------------------------------

// Carries the pass holds outside its bodies' runs (checkpoints, a
// segment's recomputed carries), counted in the run's LiveCounter.
class HeldValues {
 public:
  explicit HeldValues(LiveCounter& counter) : counter_(counter) {}
  ~HeldValues() { counter_.live -= held_; }
  HeldValues(const HeldValues&) = delete;
  HeldValues& operator=(const HeldValues&) = delete;
  void add(std::size_t n) {
    counter_.add(n);
    held_ += n;
  }
  void drop(std::size_t n) {
    counter_.live -= n;
    held_ -= n;
  }

 private:
  LiveCounter& counter_;
  std::size_t held_ = 0;
};

/// Reverse mode of a scan with checkpoint_every = k > 1, as one op with two
/// bodies, the forward step and the reverse step (ReverseBody). Inputs:
/// (init carries..., xs..., reverse init carries..., reverse extras
/// (scanned)..., reverse captured...), the forward body's captured values
/// being the first of the reverse ones. Outputs: the reverse carries at the
/// end, then the xs' cotangents stacked.
///
/// A run steps forward keeping the carries at steps 0, k, 2k, ...; then, for
/// each segment from the last, recomputes the segment's carries from its
/// checkpoint and runs the reverse steps over them, so it holds about n/k +
/// k carries where the plain reverse pass holds n.
class ScanBackwardOp final : public BodyOp {
 public:
  ScanBackwardOp(Program forward, Program reverse, std::size_t carries, std::size_t xs,
                 std::size_t reverse_carries, std::size_t extras, ScanConfig config)
      : bodies_{std::move(forward), std::move(reverse)},
        c_(carries),
        nx_(xs),
        rc_(reverse_carries),
        extras_(extras),
        config_(config) {}
  std::string_view name() const override { return "scan_backward"; }
  // As many as the reverse body's: init and xs take the places of its
  // stored carries and x slices.
  std::size_t input_count() const override { return bodies_[1].input_count(); }
  std::size_t output_count() const override { return bodies_[1].output_count(); }
  std::size_t hash() const override {
    std::size_t h = hash_combine(0x7363626b, bodies_[0].fingerprint());
    h = hash_combine(h, bodies_[1].fingerprint());
    h = hash_combine(h, ((c_ * 31 + nx_) * 31 + rc_) * 31 + extras_);
    return hash_combine(
        h, static_cast<std::size_t>(config_.checkpoint_every) * 2 + (config_.reverse ? 1 : 0));
  }
  bool equals(const Op& other) const override {
    auto* o = dynamic_cast<const ScanBackwardOp*>(&other);
    if (o == nullptr || o->c_ != c_ || o->nx_ != nx_ || o->rc_ != rc_ || o->extras_ != extras_ ||
        !(o->config_ == config_))
      return false;
    for (std::size_t b = 0; b < 2; ++b) {
      const auto& g = bodies_[b].graph();
      if (o->bodies_[b].graph() != g && !o->bodies_[b].graph()->same_structure(*g)) return false;
    }
    return true;
  }
  InferenceResult infer(std::span<const TensorMeta> inputs) const override;
  std::string describe() const override {
    return "scan_backward(checkpoint_every=" + std::to_string(config_.checkpoint_every) + ")";
  }

  std::span<const Program> bodies() const override { return bodies_; }
  std::vector<Tensor> run(const BodyRun& run, const PreparedBodies& bodies,
                          std::vector<Tensor> inputs) const override;
  std::vector<std::optional<TracedTensor>> jvp(Span, Span, MaybeSpan,
                                               const ad::AdContext&) const override {
    unsupported();
  }
  std::vector<std::optional<TracedTensor>> vjp(Span, Span, MaybeSpan,
                                               const ad::AdContext&) const override {
    unsupported();
  }

 private:
  [[noreturn]] void unsupported() const {
    fail(ErrorKind::UnsupportedAdRule, "scan",
         "second-order derivatives through a checkpointed scan (checkpoint_every = ",
         config_.checkpoint_every,
         ") are not available: its reverse pass recomputes carries outside the graph; use "
         "checkpoint_every = 0 for a scan you differentiate twice");
  }
  // Operand positions: init, xs, reverse carries, extras, reverse captured.
  std::size_t rcarry_at() const { return c_ + nx_; }
  std::size_t extras_at() const { return c_ + nx_ + rc_; }
  std::size_t rcaptured_at() const { return c_ + nx_ + rc_ + extras_; }
  std::size_t forward_captured() const { return bodies_[0].input_count() - c_ - nx_; }

  std::array<Program, 2> bodies_;
  std::size_t c_, nx_, rc_, extras_;
  ScanConfig config_;
};

InferenceResult ScanBackwardOp::infer(std::span<const TensorMeta> inputs) const {
  const Program& rev = bodies_[1];
  InferenceResult r;
  std::vector<TensorMeta> scanned;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    // The reverse body's input fed by operand i (init and xs feed the
    // forward body, whose metadata the reverse body's carry and x slots share).
    const std::size_t slot = i < c_ + nx_ ? rc_ + i : i < extras_at() ? i - c_ - nx_ : i;
    const bool is_scanned = (i >= c_ && i < c_ + nx_) || (i >= extras_at() && i < rcaptured_at());
    check_scan_operand(inputs[i], rev.input_meta(slot), is_scanned, "operand", i);
    if (is_scanned) scanned.push_back(inputs[i]);
  }
  const SymDim n = scan_length(scanned, config_.length, r);
  for (std::size_t i = 0; i < rc_; ++i) r.outputs.push_back(rev.input_meta(i));
  for (std::size_t j = rc_; j < rev.output_count(); ++j)
    r.outputs.push_back(stacked(rev.output_meta(j), n));
  return r;
}

std::vector<Tensor> ScanBackwardOp::run(const BodyRun& run, const PreparedBodies& bodies,
                                        std::vector<Tensor> inputs) const {
  const PreparedState& fwd = *bodies[0];
  const PreparedState& rev = *bodies[1];
  const std::size_t c = c_, nx = nx_, m = forward_captured();
  const std::int64_t n = nx > 0        ? inputs[c].shape().back()
                         : extras_ > 0 ? inputs[extras_at()].shape().back()
                                       : config_.length;
  const std::int64_t k = config_.checkpoint_every;
  auto slice_of = [&](std::int64_t s) { return config_.reverse ? n - 1 - s : s; };
  auto slice = [](const Tensor& x, std::int64_t t) { return x.select(x.rank() - 1, t); };
  // One forward step from `carry` at step s: the new carries.
  auto forward = [&](std::vector<Tensor> carry, std::int64_t s) {
    const std::int64_t t = slice_of(s);
    std::vector<Tensor> args = std::move(carry);
    for (std::size_t q = 0; q < nx; ++q) args.push_back(slice(inputs[c + q], t));
    for (std::size_t q = 0; q < m; ++q) args.push_back(inputs[rcaptured_at() + q]);
    std::vector<Tensor> outs = run_body(run, fwd, std::move(args));
    outs.resize(c);
    return outs;
  };
  HeldValues held(run.counter);
  const std::int64_t segments = (n + k - 1) / k;
  std::vector<std::vector<Tensor>> checkpoints(static_cast<std::size_t>(segments));
  {
    std::vector<Tensor> carry(std::make_move_iterator(inputs.begin()),
                              std::make_move_iterator(inputs.begin() + at(c)));
    for (std::int64_t g = 0; g < segments; ++g) {
      checkpoints[static_cast<std::size_t>(g)] = carry;
      held.add(c);
      if (g + 1 == segments) break;
      for (std::int64_t s = g * k; s < (g + 1) * k; ++s) carry = forward(std::move(carry), s);
    }
  }
  std::vector<Tensor> rcarry(std::make_move_iterator(inputs.begin() + at(rcarry_at())),
                             std::make_move_iterator(inputs.begin() + at(extras_at())));
  StackedOutputs xbar(run, rev.program.output_count() - rc_, n);
  for (std::int64_t g = segments - 1; g >= 0; --g) {
    const std::int64_t start = g * k, end = std::min(n, start + k);
    std::vector<std::vector<Tensor>> segment(static_cast<std::size_t>(end - start));
    segment[0] = std::move(checkpoints[static_cast<std::size_t>(g)]);
    for (std::int64_t s = start + 1; s < end; ++s) {
      const auto i = static_cast<std::size_t>(s - start);
      segment[i] = forward(segment[i - 1], s - 1);
      held.add(c);
    }
    for (std::int64_t s = end - 1; s >= start; --s) {
      const std::int64_t t = slice_of(s);
      std::vector<Tensor> args = std::move(rcarry);
      for (auto& v : segment[static_cast<std::size_t>(s - start)]) args.push_back(std::move(v));
      held.drop(c);
      for (std::size_t q = 0; q < nx; ++q) args.push_back(slice(inputs[c + q], t));
      for (std::size_t q = 0; q < extras_; ++q) args.push_back(slice(inputs[extras_at() + q], t));
      for (std::size_t q = rcaptured_at(); q < inputs.size(); ++q) args.push_back(inputs[q]);
      std::vector<Tensor> outs = run_body(run, rev, std::move(args));
      for (std::size_t j = rc_; j < outs.size(); ++j) xbar.write(j - rc_, t, outs[j]);
      outs.resize(rc_);
      rcarry = std::move(outs);
    }
  }
  std::vector<TensorMeta> metas;
  for (std::size_t j = rc_; j < rev.program.output_count(); ++j)
    metas.push_back(rev.program.output_meta(j));
  std::vector<Tensor> result = std::move(rcarry);
  for (auto& v : xbar.take(metas)) result.push_back(std::move(v));
  return result;
}

}  // namespace

std::vector<std::optional<TracedTensor>> scan_vjp(const ScanOp& op, Span inputs, Span outputs,
                                                  MaybeSpan cotangents,
                                                  const ad::AdContext& rules) {
  const std::size_t c = op.carries(), nx = op.xs(), ny = op.ys();
  ReverseBody rb = reverse_body(op, inputs, cotangents, rules);
  if (rb.carry_cts.empty() && rb.x_cts.empty() && rb.captured_cts.empty())
    return std::vector<std::optional<TracedTensor>>(inputs.size());
  const std::vector<TracedTensor> init = reverse_init(rb, inputs, cotangents);
  const std::vector<TracedTensor> extras = reverse_extras(op, rb, cotangents);
  const Span captured = inputs.subspan(c + nx);
  ScanConfig config = op.config();
  if (config.checkpoint_every > 1) {
    std::vector<TracedTensor> args(inputs.begin(), inputs.begin() + at(c + nx));
    args.insert(args.end(), init.begin(), init.end());
    args.insert(args.end(), extras.begin(), extras.end());
    args.insert(args.end(), captured.begin(), captured.end());
    args.insert(args.end(), rb.body.captured.begin(), rb.body.captured.end());
    config.stores_carries = false;
    auto op_b = std::make_shared<ScanBackwardOp>(op.body(), rb.body.program, c, nx, rb.carries(),
                                                 rb.extras(), config);
    return input_cotangents(rb, inputs, make_traced(op_b, args));
  }
  // The carries before each step: the scan's own when it stores them, else
  // those of a scan like it that does.
  std::vector<TracedTensor> stored;
  if (op.config().stores_carries) {
    stored.assign(outputs.begin() + at(c + ny), outputs.begin() + at(c + ny + c));
  } else if (c > 0) {
    ScanConfig storing = config;
    storing.stores_carries = true;
    const auto fwd = make_traced(std::make_shared<ScanOp>(op.body(), c, nx, storing), inputs);
    stored.assign(fwd.begin() + at(c + ny), fwd.end());
  }
  std::vector<TracedTensor> args = init;
  args.insert(args.end(), stored.begin(), stored.end());
  args.insert(args.end(), inputs.begin() + at(c), inputs.begin() + at(c + nx));
  args.insert(args.end(), extras.begin(), extras.end());
  args.insert(args.end(), captured.begin(), captured.end());
  args.insert(args.end(), rb.body.captured.begin(), rb.body.captured.end());
  ScanConfig backward = config;
  backward.reverse = !config.reverse;
  backward.stores_carries = false;
  const std::size_t scanned = c + nx + rb.extras();
  auto rev = std::make_shared<ScanOp>(std::move(rb.body.program), rb.carries(), scanned, backward);
  return input_cotangents(rb, inputs, make_traced(rev, args));
}

}  // namespace tenferro::detail
