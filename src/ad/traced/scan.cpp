// scan(): a traced loop over the slices of its scanned inputs, one node with
// a body (ScanOp, scan_op.hpp). The node, its run and its forward mode are
// here; reverse mode is scan_vjp.cpp.

#include <algorithm>
#include <iterator>

#include "ad/program/exec.hpp"
#include "ad/traced/scan_op.hpp"
#include "tenferro/ad/control_flow.hpp"
#include "tenferro/ad/linearize.hpp"
#include "tenferro/ad/transforms.hpp"

namespace tenferro {

namespace detail {

namespace {

std::string meta_text(const TensorMeta& m) {
  return std::string(tenferro::name(m.dtype)) + to_string(m.shape);
}

// Slice t of a scanned tensor (its last axis): a view.
Tensor slice_at(const Tensor& x, std::int64_t t) {
  return x.select(x.rank() - 1, t);
}

}  // namespace

// ---- shared by the scan ops --------------------------------------------------------

void check_scan_operand(const TensorMeta& got, const TensorMeta& traced, bool scanned,
                        const char* what, std::size_t index) {
  if (scanned && got.shape.empty()) {
    fail(ErrorKind::RankMismatch, "scan", what, " ", index,
         " is rank 0; a scanned input needs a last axis to slice");
  }
  TensorMeta slice = got;
  if (scanned) slice.shape.pop_back();
  if (slice == traced) return;
  fail(slice.dtype != traced.dtype ? ErrorKind::DTypeMismatch : ErrorKind::ShapeMismatch, "scan",
       what, " ", index, " is ", meta_text(got), " but the body was traced for ",
       scanned ? "slices " : "", meta_text(traced), "; trace the scan again");
}

SymDim scan_length(std::span<const TensorMeta> scanned, std::int64_t length,
                   InferenceResult& result) {
  if (scanned.empty()) return SymDim(length);
  const SymDim& n = scanned[0].shape.back();
  for (std::size_t k = 1; k < scanned.size(); ++k) {
    const SymDim& m = scanned[k].shape.back();
    if (m == n) continue;
    if (m.is_constant() && n.is_constant()) {
      fail(ErrorKind::ShapeMismatch, "scan", "scanned input ", k, " has ", m.constant(),
           " slices (last extent) but scanned input 0 has ", n.constant(),
           "; every scanned input has one slice per step");
    }
    result.constraints.push_back(ShapeConstraint::dims_equal(
        n, m, "scanned input " + std::to_string(k) + " has one slice per step (last extent)"));
  }
  return n;
}

TensorMeta stacked(TensorMeta meta, const SymDim& n) {
  meta.shape.push_back(n);
  return meta;
}

StackedOutputs::StackedOutputs(const BodyRun& run, std::size_t count, std::int64_t n,
                               bool count_slices)
    : run_(run), n_(n), count_slices_(count_slices), buffers_(count) {}

StackedOutputs::~StackedOutputs() {
  run_.counter.live -= counted_;
}

void StackedOutputs::write(std::size_t k, std::int64_t t, const Tensor& value) {
  Tensor& buffer = buffers_[k];
  if (!buffer.defined()) {
    Shape shape = value.shape();
    shape.push_back(n_);
    buffer = run_.backend.empty(shape, value.dtype());
    if (!count_slices_) {
      run_.counter.add(1);
      ++counted_;
    }
  }
  run_.backend.copy(value, slice_at(buffer, t));
  if (count_slices_) {
    run_.counter.add(1);
    ++counted_;
  }
}

std::vector<Tensor> StackedOutputs::take(std::span<const TensorMeta> metas) {
  for (std::size_t k = 0; k < buffers_.size(); ++k) {
    if (buffers_[k].defined()) continue;
    Shape shape = evaluate(metas[k].shape, run_.bindings);
    shape.push_back(n_);
    buffers_[k] = run_.backend.empty(shape, metas[k].dtype);
  }
  return std::move(buffers_);
}

// ---- ScanOp -------------------------------------------------------------------------

ScanOp::ScanOp(Program body, std::size_t carries, std::size_t xs, ScanConfig config)
    : body_(std::move(body)), carries_(carries), xs_(xs), config_(config) {}

std::size_t ScanOp::output_count() const {
  return body_.output_count() + (config_.stores_carries ? carries_ : 0);
}

std::size_t ScanOp::hash() const {
  std::size_t h = hash_combine(0x7363616e, body_.fingerprint());
  h = hash_combine(h, carries_ * 31 + xs_);
  h = hash_combine(h, static_cast<std::size_t>(config_.checkpoint_every) * 4 +
                          (config_.reverse ? 1 : 0) + (config_.stores_carries ? 2 : 0));
  return hash_combine(h, static_cast<std::size_t>(config_.length));
}

bool ScanOp::equals(const Op& other) const {
  auto* o = dynamic_cast<const ScanOp*>(&other);
  return o != nullptr && o->carries_ == carries_ && o->xs_ == xs_ && o->config_ == config_ &&
         (o->body_.graph() == body_.graph() || o->body_.graph()->same_structure(*body_.graph()));
}

std::string ScanOp::describe() const {
  std::string s = "scan(" + std::to_string(body_.node_count()) + " ops, " +
                  std::to_string(carries_) + " carries, " + std::to_string(xs_) + " xs";
  if (config_.reverse) s += ", reverse";
  if (config_.stores_carries) s += ", stores carries";
  if (config_.checkpoint_every > 1)
    s += ", checkpoint_every=" + std::to_string(config_.checkpoint_every);
  return s + ")";
}

InferenceResult ScanOp::infer(std::span<const TensorMeta> inputs) const {
  InferenceResult r;
  const std::size_t c = carries_, nx = xs_;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const bool scanned = i >= c && i < c + nx;
    const char* what = i < c ? "carry" : scanned ? "xs" : "captured value";
    check_scan_operand(inputs[i], body_.input_meta(i), scanned, what,
                       i < c     ? i
                       : scanned ? i - c
                                 : i - c - nx);
  }
  const SymDim n = scan_length(inputs.subspan(c, nx), config_.length, r);
  for (std::size_t i = 0; i < c; ++i) r.outputs.push_back(body_.input_meta(i));
  for (std::size_t j = c; j < body_.output_count(); ++j)
    r.outputs.push_back(stacked(body_.output_meta(j), n));
  if (config_.stores_carries) {
    for (std::size_t i = 0; i < c; ++i) r.outputs.push_back(stacked(body_.input_meta(i), n));
  }
  return r;
}

// One set of carries at a time: each step's carries are moved into the body,
// which releases them at their last use there; each y is copied into its
// slice of a buffer allocated once.
std::vector<Tensor> ScanOp::run(const BodyRun& run, const PreparedBodies& bodies,
                                std::vector<Tensor> inputs) const {
  const PreparedState& step = *bodies[0];
  const std::size_t c = carries_, nx = xs_, ny = ys();
  const std::int64_t n = nx > 0 ? inputs[c].shape().back() : config_.length;
  std::vector<Tensor> carry(
      std::make_move_iterator(inputs.begin()),
      std::make_move_iterator(inputs.begin() + static_cast<std::ptrdiff_t>(c)));
  StackedOutputs ys_out(run, ny, n);
  StackedOutputs stored(run, config_.stores_carries ? c : 0, n, /*count_slices=*/true);
  for (std::int64_t s = 0; s < n; ++s) {
    const std::int64_t t = config_.reverse ? n - 1 - s : s;
    if (config_.stores_carries) {
      for (std::size_t i = 0; i < c; ++i) stored.write(i, t, carry[i]);
    }
    std::vector<Tensor> args;
    args.reserve(inputs.size());
    for (auto& v : carry) args.push_back(std::move(v));
    for (std::size_t k = 0; k < nx; ++k) args.push_back(slice_at(inputs[c + k], t));
    for (std::size_t q = c + nx; q < inputs.size(); ++q) args.push_back(inputs[q]);
    std::vector<Tensor> outs = run_body(run, step, std::move(args));
    for (std::size_t i = 0; i < c; ++i) carry[i] = std::move(outs[i]);
    for (std::size_t j = 0; j < ny; ++j) ys_out.write(j, t, outs[c + j]);
  }
  std::vector<Tensor> result = std::move(carry);
  std::vector<TensorMeta> metas;
  for (std::size_t j = c; j < body_.output_count(); ++j) metas.push_back(body_.output_meta(j));
  for (auto& y : ys_out.take(metas)) result.push_back(std::move(y));
  if (config_.stores_carries) {
    metas.clear();
    for (std::size_t i = 0; i < c; ++i) metas.push_back(body_.input_meta(i));
    for (auto& v : stored.take(metas)) result.push_back(std::move(v));
  }
  return result;
}

// Forward mode: a scan over (carries, carry tangents) and (xs, xs tangents)
// whose body is the body's jvp. A carry gets a tangent carry when its init
// has a tangent or the body gives its new value one from any other tangent
// (found by tracing the jvp until the set stops growing); the others stay
// symbolic zeros, as do the ys whose tangents do not depend on any tangent.
std::vector<std::optional<TracedTensor>> ScanOp::jvp(
    std::span<const TracedTensor> inputs, std::span<const TracedTensor>,
    std::span<const std::optional<TracedTensor>> tangents, const ad::AdContext& rules) const {
  const std::size_t c = carries_, nx = xs_, ny = ys();
  const std::vector<TracedTensor> ps = placeholders_for(body_);
  const std::vector<TracedTensor> outs = instantiate(*body_.graph(), ps, &body_.constants());
  auto given = [&](std::size_t i) {
    return tangents[i].has_value() && ad::differentiable(inputs[i].dtype());
  };
  std::vector<std::size_t> tc, tx, tp;  // carries, xs and captured values with tangents
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!given(i)) continue;
    (i < c ? tc : i < c + nx ? tx : tp).push_back(i);
  }
  std::vector<TracedTensor> dc, dxp;  // tangent placeholders: carries; xs and captured values
  std::vector<TracedTensor> wrt_xp;
  for (std::size_t i : tx) {
    dxp.push_back(placeholder(ps[i].dtype(), ps[i].shape()));
    wrt_xp.push_back(ps[i]);
  }
  for (std::size_t i : tp) {
    dxp.push_back(placeholder(ps[i].dtype(), ps[i].shape()));
    wrt_xp.push_back(ps[i]);
  }
  std::vector<std::optional<TracedTensor>> touts;
  for (;;) {
    dc.clear();
    std::vector<TracedTensor> wrt, dirs;
    for (std::size_t i : tc) {
      dc.push_back(placeholder(ps[i].dtype(), ps[i].shape()));
      wrt.push_back(ps[i]);
    }
    dirs = dc;
    wrt.insert(wrt.end(), wrt_xp.begin(), wrt_xp.end());
    dirs.insert(dirs.end(), dxp.begin(), dxp.end());
    touts = jvp_many(outs, wrt, dirs, rules);
    bool grew = false;
    for (std::size_t i = 0; i < c; ++i) {
      if (touts[i] && ad::differentiable(ps[i].dtype()) &&
          std::find(tc.begin(), tc.end(), i) == tc.end()) {
        tc.push_back(i);
        grew = true;
      }
    }
    if (!grew) break;
    std::sort(tc.begin(), tc.end());
  }
  std::vector<std::size_t> ty;
  for (std::size_t j = 0; j < ny; ++j)
    if (touts[c + j]) ty.push_back(j);
  std::vector<std::optional<TracedTensor>> result(output_count());
  if (tc.empty() && ty.empty()) return result;

  // The jvp body: carries (c, dc), xs (x, dx), captured (p, dp); it returns
  // carries (c', dc') and ys (y, dy).
  std::vector<TracedTensor> params(ps.begin(), ps.begin() + static_cast<std::ptrdiff_t>(c));
  params.insert(params.end(), dc.begin(), dc.end());
  params.insert(params.end(), ps.begin() + static_cast<std::ptrdiff_t>(c),
                ps.begin() + static_cast<std::ptrdiff_t>(c + nx));
  params.insert(params.end(), dxp.begin(), dxp.begin() + static_cast<std::ptrdiff_t>(tx.size()));
  params.insert(params.end(), ps.begin() + static_cast<std::ptrdiff_t>(c + nx), ps.end());
  params.insert(params.end(), dxp.begin() + static_cast<std::ptrdiff_t>(tx.size()), dxp.end());
  std::vector<TracedTensor> body_outs(outs.begin(), outs.begin() + static_cast<std::ptrdiff_t>(c));
  for (std::size_t i : tc) body_outs.push_back(touts[i] ? *touts[i] : zeros_like(outs[i]));
  body_outs.insert(body_outs.end(), outs.begin() + static_cast<std::ptrdiff_t>(c), outs.end());
  for (std::size_t j : ty) body_outs.push_back(*touts[c + j]);
  TracedBody body = lift_body(params, body_outs);

  std::vector<TracedTensor> args(inputs.begin(), inputs.begin() + static_cast<std::ptrdiff_t>(c));
  for (std::size_t i : tc) args.push_back(given(i) ? *tangents[i] : zeros_like(inputs[i]));
  args.insert(args.end(), inputs.begin() + static_cast<std::ptrdiff_t>(c),
              inputs.begin() + static_cast<std::ptrdiff_t>(c + nx));
  for (std::size_t i : tx) args.push_back(*tangents[i]);
  args.insert(args.end(), inputs.begin() + static_cast<std::ptrdiff_t>(c + nx), inputs.end());
  for (std::size_t i : tp) args.push_back(*tangents[i]);
  args.insert(args.end(), body.captured.begin(), body.captured.end());
  const std::size_t c2 = c + tc.size(), ny2 = ny + ty.size();
  const auto out = make_traced(
      std::make_shared<ScanOp>(std::move(body.program), c2, nx + tx.size(), config_), args);
  for (std::size_t a = 0; a < tc.size(); ++a) {
    result[tc[a]] = out[c + a];
    if (config_.stores_carries) result[c + ny + tc[a]] = out[c2 + ny2 + c + a];
  }
  for (std::size_t b = 0; b < ty.size(); ++b) result[c + ty[b]] = out[c2 + ny + b];
  return result;
}

std::vector<std::optional<TracedTensor>> ScanOp::vjp(
    std::span<const TracedTensor> inputs, std::span<const TracedTensor> outputs,
    std::span<const std::optional<TracedTensor>> cotangents, const ad::AdContext& rules) const {
  return scan_vjp(*this, inputs, outputs, cotangents, rules);
}

}  // namespace detail

ScanResult scan(const ScanFn& body, ListRef<TracedTensor> init, ListRef<TracedTensor> xs,
                const ScanOptions& options) {
  if (!body) fail(ErrorKind::InvalidArgument, "scan", "the body is empty");
  if (options.checkpoint_every < 0) {
    fail(ErrorKind::InvalidArgument, "scan", "checkpoint_every is ", options.checkpoint_every,
         "; use 0 to store every carry for reverse mode, or k > 1 to keep every k-th");
  }
  const std::size_t c = init.size();
  std::vector<TensorMeta> metas;
  for (std::size_t i = 0; i < c; ++i) {
    if (!init[i].defined()) fail(ErrorKind::InvalidArgument, "scan", "init ", i, " is undefined");
    metas.push_back(init[i].meta());
  }
  std::vector<TensorMeta> scanned;
  for (std::size_t k = 0; k < xs.size(); ++k) {
    if (!xs[k].defined()) fail(ErrorKind::InvalidArgument, "scan", "xs ", k, " is undefined");
    if (xs[k].rank() == 0) {
      fail(ErrorKind::RankMismatch, "scan", "xs ", k,
           " is rank 0; a scanned input needs a last axis to slice");
    }
    scanned.push_back(xs[k].meta());
    metas.push_back(xs[k].meta());
    metas.back().shape.pop_back();
  }
  if (xs.size() == 0 && options.length < 0) {
    fail(ErrorKind::InvalidArgument, "scan", "a scan over no xs needs options.length (the step ",
         "count), got ", options.length);
  }
  InferenceResult unused;
  (void)detail::scan_length(scanned, options.length, unused);  // constant extents now

  std::size_t ny = 0;
  auto step = [&](std::span<const TracedTensor> p) {
    ScanStep out = body(p.first(c), p.subspan(c));
    if (out.carry.size() != c) {
      fail(ErrorKind::InvalidArgument, "scan", "the body returns ", out.carry.size(),
           " carries for ", c, " in init; return one new value per carry");
    }
    for (std::size_t i = 0; i < c; ++i) {
      if (!out.carry[i].defined()) {
        fail(ErrorKind::InvalidArgument, "scan", "the body's carry ", i, " is undefined");
      }
      const TensorMeta& got = out.carry[i].meta();
      if (got == metas[i]) continue;
      fail(got.dtype != metas[i].dtype ? ErrorKind::DTypeMismatch : ErrorKind::ShapeMismatch,
           "scan", "carry ", i, " is ", detail::meta_text(metas[i]),
           " in init but the body returns ", detail::meta_text(got),
           "; a carry keeps its dtype and shape");
    }
    ny = out.ys.size();
    std::vector<TracedTensor> flat = std::move(out.carry);
    flat.insert(flat.end(), out.ys.begin(), out.ys.end());
    return flat;
  };
  detail::TracedBody traced = detail::trace_body(metas, step, "scan");
  if (c + ny == 0) {
    fail(ErrorKind::InvalidArgument, "scan", "the body returns no carries and no ys");
  }
  std::vector<TracedTensor> args(init.begin(), init.end());
  args.insert(args.end(), xs.begin(), xs.end());
  args.insert(args.end(), traced.captured.begin(), traced.captured.end());
  const detail::ScanConfig config{options.reverse, options.checkpoint_every,
                                  xs.size() == 0 ? options.length : -1, false};
  auto out = detail::make_traced(
      std::make_shared<detail::ScanOp>(std::move(traced.program), c, xs.size(), config), args);
  ScanResult r;
  r.carry.assign(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(c));
  r.ys.assign(out.begin() + static_cast<std::ptrdiff_t>(c), out.end());
  return r;
}

}  // namespace tenferro
