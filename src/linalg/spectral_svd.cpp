// The singular value decomposition (LAPACK gesdd) and its AD rules: svd
// (reduced or full) and svdvals (values only), one template, two families so
// each declares the residuals its rules read.

#include "linalg/spectral_common.hpp"
#include "linalg/spectral_lapack.hpp"

namespace tenferro::linalg::detail {
namespace {

struct SvdParams {
  SvdMode mode = SvdMode::Reduced;
  AdParams ad;
  bool operator==(const SvdParams&) const = default;
};
std::size_t hash_value(const SvdParams& p) {
  return hash_combine(static_cast<std::size_t>(p.mode), hash_value(p.ad));
}

const char* op_name_of(SvdMode mode) {
  return mode == SvdMode::Values ? "svdvals" : "svd";
}

const RuleSet& svd_rules(bool values_only);

template <bool ValuesOnly>
class SvdOp final : public LinalgOp<SvdOp<ValuesOnly>, SvdParams> {
 public:
  static constexpr std::string_view kFamily =
      ValuesOnly ? "tenferro.linalg_svdvals.v1" : "tenferro.linalg_svd.v1";
  using LinalgOp<SvdOp<ValuesOnly>, SvdParams>::LinalgOp;
  using LinalgOp<SvdOp<ValuesOnly>, SvdParams>::params;
  std::size_t input_count() const override { return 1; }
  std::size_t output_count() const override { return ValuesOnly ? 1 : 3; }
  InferenceResult infer(std::span<const TensorMeta> in) const override;
  std::vector<Tensor> execute(Backend& backend, std::span<const Tensor> in,
                              Workspaces&) const override;
  const RuleSet& ad_rules() const override { return rules(); }
  static const RuleSet& rules() { return svd_rules(ValuesOnly); }
  const char* op_name() const { return op_name_of(params().mode); }
  // svdvals is svd's S (reduced or full) under the same AD policy.
  std::optional<std::vector<std::size_t>> outputs_within(const Op& other) const override {
    if constexpr (ValuesOnly) {
      const auto* o = dynamic_cast<const SvdOp<false>*>(&other);
      if (o != nullptr && o->params().ad == params().ad) return std::vector<std::size_t>{1};
    }
    return std::nullopt;
  }
};
using Svd = SvdOp<false>;
using SvdVals = SvdOp<true>;

const SvdParams& params_of(const Op& op) {
  if (const auto* v = dynamic_cast<const SvdVals*>(&op)) return v->params();
  return static_cast<const Svd&>(op).params();
}

template <bool ValuesOnly>
InferenceResult SvdOp<ValuesOnly>::infer(std::span<const TensorMeta> in) const {
  require_floating(op_name(), in[0]);
  require_matrix(op_name(), in[0]);
  const SymShape& s = in[0].shape;
  const SymDim m = s[0], n = s[1], k = min(m, n);
  const SymShape batch(s.begin() + 2, s.end());
  const auto with = [&](SymShape head) {
    head.insert(head.end(), batch.begin(), batch.end());
    return head;
  };
  TensorMeta S{real_of(in[0].dtype), with({k})};
  if (params().mode == SvdMode::Values) return {{S}, {}};
  const bool full = params().mode == SvdMode::Full;
  TensorMeta U{in[0].dtype, with({m, full ? m : k})};
  TensorMeta Vh{in[0].dtype, with({full ? n : k, n})};
  return {{U, S, Vh}, {}};
}

template <class T>
void gesdd_batches(SvdMode mode, const Tensor& a, Tensor& s, Tensor* u, Tensor* vh,
                   Backend& backend, Workspaces& workspaces) {
  using R = lapack::real_t<T>;
  const std::int64_t m = a.shape()[0], n = a.shape()[1], k = std::min(m, n);
  const std::int64_t batches = batch_count(a.shape());
  const bool vectors = mode != SvdMode::Values, full = mode == SvdMode::Full;
  const std::int64_t ucols = full ? m : k, vrows = full ? n : k;
  T* A = static_cast<T*>(a.raw_data());
  R* S = static_cast<R*>(s.raw_data());
  T* U = vectors ? static_cast<T*>(u->raw_data()) : nullptr;
  T* V = vectors ? static_cast<T*>(vh->raw_data()) : nullptr;
  const char jobz = mode == SvdMode::Values ? 'N' : (full ? 'A' : 'S');
  const auto pool = workspaces.pool<lapack::LapackWorkspace<T>>();
  for_each_batch(backend, batches, m * n * k, [&](std::int64_t b) {
    T* Ab = A + b * m * n;
    if (k == 0) {
      if (full) {  // the empty decomposition completed with identity bases
        T* Ub = U + b * m * m;
        T* Vb = V + b * n * n;
        for (std::int64_t i = 0; i < m * m; ++i) Ub[i] = T(i % (m + 1) == 0 ? 1 : 0);
        for (std::int64_t i = 0; i < n * n; ++i) Vb[i] = T(i % (n + 1) == 0 ? 1 : 0);
      }
      return;
    }
    if (!lapack::all_finite(Ab, m * n)) {
      numerical_failure(ErrorKind::NoConvergence, op_name_of(mode), b,
                        "the input contains NaN or Inf, for which the SVD is not defined; remove "
                        "them first");
    }
    T dummy{};
    const auto ws = pool->lease();
    const lapack::fint info = lapack::gesdd<T>(
        *ws, jobz, static_cast<lapack::fint>(m), static_cast<lapack::fint>(n), Ab, S + b * k,
        vectors ? U + b * m * ucols : &dummy, static_cast<lapack::fint>(vectors ? m : 1),
        vectors ? V + b * vrows * n : &dummy, static_cast<lapack::fint>(vectors ? vrows : 1));
    if (info < 0)
      fail(ErrorKind::Internal, op_name_of(mode), "LAPACK gesdd rejected argument ", -info);
    if (info > 0) {
      numerical_failure(ErrorKind::NoConvergence, op_name_of(mode), b,
                        "the SVD did not converge (LAPACK gesdd info " + std::to_string(info) +
                            "); rescale the input or use double precision");
    }
  });
}

template <bool ValuesOnly>
std::vector<Tensor> SvdOp<ValuesOnly>::execute(Backend& backend, std::span<const Tensor> in,
                                               Workspaces& workspaces) const {
  const InferenceResult r =
      infer(std::vector<TensorMeta>{TensorMeta{in[0].dtype(), to_sym_shape(in[0].shape().span())}});
  const auto concrete = [](const TensorMeta& t) { return *try_concrete(t.shape); };
  Tensor a = compact_copy(in[0], backend);
  const bool vectors = params().mode != SvdMode::Values;
  std::vector<Tensor> out;
  for (const auto& m : r.outputs) out.push_back(backend.empty(concrete(m), m.dtype));
  Tensor& s = vectors ? out[1] : out[0];
  dispatch_floating(a.dtype(), [&]<class T>() {
    gesdd_batches<T>(params().mode, a, s, vectors ? &out[0] : nullptr, vectors ? &out[2] : nullptr,
                     backend, workspaces);
  });
  return out;
}

// ---- AD rules ------------------------------------------------------------------------
// PyTorch's linalg_svd_jvp and svd_backward, on the leading k = min(m, n)
// columns of U (rows of Vh). With F(i, j) = 1 / (s_j^2 - s_i^2) off the
// diagonal and dP = U^H dA V:
//   dS = Re diag(dP),  dU = U (F o (dP' S + S dP'^H)) + U diag(i Im dP_ii / s_i),
//   dVh = -(F o (S dP' + dP'^H S)) Vh,  dP' = dP - diag(dS),
// plus the (I - U U^H) dA V S^-1 (m > k) or S^-1 U^H dA (I - V V^H) (n > k)
// completions; the reverse rule is their adjoint, guarded by the gauge check.
// Strict: F is 0 on degenerate pairs, and a (co)tangent component that F would
// multiply there is a GaugeIllDefined error (check_degenerate).

struct Factors {
  Val U, S, Vh;
  std::int64_t m = 0, n = 0, k = 0;
  bool known = false;  // m, n constant
};

Factors leading(const RuleArgs& a, bool full) {
  Factors f{a.outputs[0], a.outputs[1], a.outputs[2]};
  const TensorMeta& in = a.input_metas[0];
  const auto m = in.shape[0].try_constant(), n = in.shape[1].try_constant();
  f.known = m && n;
  if (f.known) {
    f.m = *m;
    f.n = *n;
    f.k = std::min(f.m, f.n);
  }
  if (full) {
    f.m = constant_extent("svd", in.shape[0]);
    f.n = constant_extent("svd", in.shape[1]);
    f.k = std::min(f.m, f.n);
    if (f.m > f.k) f.U = first_cols(a.emitter, f.U, f.k);
    if (f.n > f.k) f.Vh = first_rows(a.emitter, f.Vh, f.k);
  }
  return f;
}

std::vector<MaybeVal> svd_jvp(const RuleArgs& a, std::span<const MaybeVal> t) {
  const auto& p = params_of(a.op);
  Emitter& e = a.emitter;
  if (p.mode == SvdMode::Values) {
    if (!t[0]) return {std::nullopt};
    const auto f = emit(e, svd_op(SvdMode::Reduced), {a.inputs[0]});
    const Val dP = mm(e, mH(e, f[0]), mm(e, *t[0], mH(e, f[2])));
    return {e.real(diag(e, dP))};
  }
  if (!t[0]) return {std::nullopt, std::nullopt, std::nullopt};
  const bool full = p.mode == SvdMode::Full;
  const Factors f = leading(a, full);
  const DType dt = e.dtype_of(f.U);
  const bool cplx = is_complex(dt);
  const Val dA = *t[0];
  const Val V = mH(e, f.Vh);
  const Val dP = mm(e, mH(e, f.U), mm(e, dA, V));
  const Val dS = e.real(diag(e, dP));
  const Val dPc = e.sub(dP, diag_embed(e, as_dtype(e, dS, dt)));
  const Val Sc = as_dtype(e, f.S, dt);
  const GapFactors gi = inverse_factors(e, f.S, p.ad);
  const Val Sinv = as_dtype(e, gi.F, dt);
  std::vector<Val> zc, zsq;  // what the (zeroed) 1 / s of zero singular values multiplies
  Val omU, omV;              // dU = U omU (+ ...), dVh = -omV Vh (+ ...)
  std::optional<GapFactors> g1, g2;
  std::optional<Val> H, K;
  if (p.ad.regularised) {
    const Val F = as_dtype(e, gap_factors(e, e.mul(f.S, f.S), p.ad).F, dt);
    omU = e.mul(F, sym2(e, e.mul(dPc, bcast_row(e, Sc))));
    omV = e.mul(F, sym2(e, e.mul(bcast_col(e, Sc), dPc)));
  } else {
    // (s_j dP_ij + s_i conj dP_ji) / (s_j^2 - s_i^2) = H_ij / (s_j - s_i) + K_ij / (s_j + s_i)
    // with H, K the Hermitian and skew-Hermitian parts of dP: only H meets a 1 / gap (K only
    // on pairs of zero singular values).
    g1 = gap_factors(e, f.S, p.ad);
    g2 = gap_factors(e, f.S, p.ad, std::nullopt, true);
    H = e.scale(sym2(e, dPc), 0.5);
    K = e.scale(skew2(e, dPc), 0.5);
    const Val x = e.mul(as_dtype(e, g1->F, dt), *H), y = e.mul(as_dtype(e, g2->F, dt), *K);
    omU = e.add(x, y);
    omV = e.sub(x, y);
  }
  if (cplx) {
    omU = e.add(omU, diag_embed(e, e.mul(diag(e, dPc), Sinv)));
    zc.push_back(diag_embed(e, diag(e, dPc)));
  }
  Val dU = mm(e, f.U, omU);
  Val dVh = e.neg(mm(e, omV, f.Vh));
  if (!f.known || f.m > f.k) {
    // dU += (I - U U^H) dA V S^-1 (zero when m == k: U U^H = I)
    const Val y = mm(e, dA, V);
    const Val c = e.sub(y, mm(e, f.U, mm(e, mH(e, f.U), y)));
    dU = e.add(dU, e.mul(c, bcast_row(e, Sinv, c)));
    zsq.push_back(diag_embed(e, sum_squares(e, c, 0)));
    if (full && f.m > f.k) dU = pad_cols(e, dU, f.m - f.k);
  }
  if (!f.known || f.n > f.k) {
    const Val y = mm(e, mH(e, f.U), dA);
    const Val c = e.sub(y, mm(e, mm(e, y, V), f.Vh));
    dVh = e.add(dVh, e.mul(bcast_col(e, Sinv, c), c));
    zsq.push_back(diag_embed(e, sum_squares(e, c, 1)));
    if (full && f.n > f.k) dVh = pad_rows(e, dVh, f.n - f.k);
  }
  // Strict: a tangent that splits a degenerate pair makes dU, dVh undefined.
  if (g1) {
    for (Val* x : {&dU, &dVh}) {
      *x = check_degenerate(e, GaugeOwner::Svd, true, *x, {*H}, *g1, p.ad, {}, {*K});
      *x = check_degenerate(e, GaugeOwner::Svd, true, *x, {*K}, *g2, p.ad, {}, {*H});
      *x = check_degenerate(e, GaugeOwner::Svd, true, *x, zc, gi, p.ad, zsq, {*H, *K});
    }
  }
  return {dU, dS, dVh};
}

std::vector<MaybeVal> svd_vjp(const RuleArgs& a, std::span<const MaybeVal> ct) {
  const auto& p = params_of(a.op);
  Emitter& e = a.emitter;
  if (p.mode == SvdMode::Values) {
    if (!ct[0]) return {std::nullopt};
    const auto f = emit(e, svd_op(SvdMode::Reduced), {a.inputs[0]});
    const DType dt = e.dtype_of(f[0]);
    return {mm(e, e.mul(f[0], bcast_row(e, as_dtype(e, *ct[0], dt), f[0])), f[2])};
  }
  MaybeVal gU = ct[0], gS = ct[1], gVh = ct[2];
  if (!gU && !gS && !gVh) return {std::nullopt};
  const bool full = p.mode == SvdMode::Full;
  const Factors f = leading(a, full);
  if (full && gU && f.m > f.k) gU = first_cols(e, *gU, f.k);
  if (full && gVh && f.n > f.k) gVh = first_rows(e, *gVh, f.k);
  const DType dt = e.dtype_of(f.U);
  const bool cplx = is_complex(dt);
  if (!gU && !gVh) return {mm(e, e.mul(f.U, bcast_row(e, as_dtype(e, *gS, dt), f.U)), f.Vh)};
  const Val Sc = as_dtype(e, f.S, dt);
  const GapFactors gi = inverse_factors(e, f.S, p.ad);
  const Val Sinv = as_dtype(e, gi.F, dt);
  std::vector<Val> zc, zsq;  // what the (zeroed) 1 / s of zero singular values multiplies
  MaybeVal UhgU, VhgV;
  if (gU) UhgU = skew2(e, mm(e, mH(e, f.U), *gU));
  if (gVh) VhgV = skew2(e, mm(e, f.Vh, mH(e, *gVh)));
  Val ret;
  std::optional<GapFactors> g1, g2;
  MaybeVal Ksum, Kdiff;
  if (p.ad.regularised) {
    const Val F = as_dtype(e, gap_factors(e, e.mul(f.S, f.S), p.ad).F, dt);
    if (UhgU && VhgV) {
      ret = e.mul(e.add(e.mul(*UhgU, bcast_row(e, Sc)), e.mul(bcast_col(e, Sc), *VhgV)), F);
    } else if (UhgU) {
      ret = e.mul(e.mul(*UhgU, F), bcast_row(e, Sc));
    } else {
      ret = e.mul(bcast_col(e, Sc), e.mul(*VhgV, F));
    }
  } else {
    // (UhgU s_j + s_i VhgV) / (s_j^2 - s_i^2) = Ksum / (s_j - s_i) + Kdiff / (s_j + s_i) with
    // Ksum = (UhgU + VhgV) / 2, the derivative of the loss along a joint rotation of the pair
    // (which leaves A unchanged), and Kdiff = (UhgU - VhgV) / 2.
    const Val u = UhgU ? *UhgU : e.zeros_like(*VhgV), v = VhgV ? *VhgV : e.zeros_like(*UhgU);
    Ksum = e.scale(e.add(u, v), 0.5);
    Kdiff = e.scale(e.sub(u, v), 0.5);
    g1 = gap_factors(e, f.S, p.ad);
    g2 = gap_factors(e, f.S, p.ad, std::nullopt, true);
    ret = e.add(e.mul(*Ksum, as_dtype(e, g1->F, dt)), e.mul(*Kdiff, as_dtype(e, g2->F, dt)));
  }
  if (gS) ret = e.add(ret, diag_embed(e, as_dtype(e, *gS, dt)));
  if (cplx && UhgU) {
    const Val h = e.scale(diag(e, *UhgU), 0.5);
    ret = e.add(ret, diag_embed(e, e.mul(h, Sinv)));
    zc.push_back(diag_embed(e, h));
  }
  // gA = U ret Vh + (I - U U^H) gU S^-1 Vh + U S^-1 gVh (I - V Vh); the completions
  // vanish when U (Vh) is square.
  Val gA = mm(e, f.U, mm(e, ret, f.Vh));
  if (gU && (!f.known || f.m > f.k)) {
    const Val c = e.sub(*gU, mm(e, f.U, mm(e, mH(e, f.U), *gU)));
    gA = e.add(gA, mm(e, e.mul(c, bcast_row(e, Sinv, c)), f.Vh));
    zsq.push_back(diag_embed(e, sum_squares(e, c, 0)));
  }
  if (gVh && (!f.known || f.n > f.k)) {
    const Val c = e.sub(*gVh, mm(e, mm(e, *gVh, mH(e, f.Vh)), f.Vh));
    gA = e.add(gA, mm(e, f.U, e.mul(bcast_col(e, Sinv, c), c)));
    zsq.push_back(diag_embed(e, sum_squares(e, c, 1)));
  }
  if (cplx) {
    // PyTorch's check: Im diag(U^H gU) must equal -Im diag(V^H gV).
    Val g = UhgU ? imag_diag(e, *UhgU) : imag_diag(e, *VhgV);
    if (UhgU && VhgV) g = e.add(g, imag_diag(e, *VhgV));
    g = e.scale(g, 0.5);
    gA = emit(e, gauge_check_op(GaugeOwner::Svd, p.ad.gauge_tolerance), {gA, g})[0];
  }
  if (g1) {
    // Strict: on a degenerate pair the loss must not depend on a joint rotation (Ksum), on
    // how the pair splits (gS), nor, for a pair of zero values, on separate rotations.
    std::vector<Val> c{*Ksum};
    if (gS) c.push_back(value_split(e, *gS));
    gA = check_degenerate(e, GaugeOwner::Svd, false, gA, c, *g1, p.ad, {}, {*Kdiff});
    gA = check_degenerate(e, GaugeOwner::Svd, false, gA, {*Kdiff}, *g2, p.ad, {}, {*Ksum});
    // A zero singular value is not differentiable (it grows like |t|): with a 1 / s term
    // in the rule, a loss depending on it (e.g. U diag(S) Vh) needs the joint limit of
    // s_i and its vectors, which the rule cannot form.
    if (gS && (!zc.empty() || !zsq.empty())) zc.push_back(diag_embed(e, *gS));
    gA = check_degenerate(e, GaugeOwner::Svd, false, gA, zc, gi, p.ad, zsq, {*Ksum, *Kdiff});
  }
  return {gA};
}

const RuleSet& svd_rules(bool values_only) {
  const auto make = [](bool values) {
    RuleSet s;
    s.jvp = svd_jvp;
    s.vjp = svd_vjp;
    // svdvals recomputes the vectors from the input; svd reuses its factors.
    s.residuals = values ? ad::Residuals::of({0}, {}) : ad::Residuals::of({}, {0, 1, 2});
    return s;
  };
  static const RuleSet vectors = make(false), values = make(true);
  return values_only ? values : vectors;
}

}  // namespace

std::shared_ptr<const LinalgOpBase> svd_op(SvdMode mode, AdParams ad) {
  if (mode == SvdMode::Values) return std::make_shared<const SvdVals>(SvdParams{mode, ad});
  return std::make_shared<const Svd>(SvdParams{mode, ad});
}

void register_svd(Registry& r) {
  r.add<Svd>();
  r.add<SvdVals>();
}

}  // namespace tenferro::linalg::detail
