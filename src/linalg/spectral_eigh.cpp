// The Hermitian eigendecomposition (LAPACK syevd / heevd) and its AD rules:
// eigh and eigvalsh (values only), one template, two families so each
// declares the residuals its rules read.

#include "linalg/spectral_common.hpp"
#include "linalg/spectral_lapack.hpp"

namespace tenferro::linalg::detail {
namespace {

struct EighParams {
  bool lower = true;
  bool vectors = true;
  AdParams ad;
  bool operator==(const EighParams&) const = default;
};
std::size_t hash_value(const EighParams& p) {
  return hash_combine(hash_value(p.ad), (p.lower ? 1u : 0u) | (p.vectors ? 2u : 0u));
}

const RuleSet& eigh_rules(bool values_only);

template <bool ValuesOnly>
class EighOp final : public LinalgOp<EighOp<ValuesOnly>, EighParams> {
 public:
  static constexpr std::string_view kFamily =
      ValuesOnly ? "tenferro.linalg_eigvalsh.v1" : "tenferro.linalg_eigh.v1";
  using LinalgOp<EighOp<ValuesOnly>, EighParams>::LinalgOp;
  using LinalgOp<EighOp<ValuesOnly>, EighParams>::params;
  std::size_t input_count() const override { return 1; }
  std::size_t output_count() const override { return ValuesOnly ? 1 : 2; }
  const char* op_name() const { return ValuesOnly ? "eigvalsh" : "eigh"; }
  // eigvalsh is eigh's w (same triangle, same AD policy).
  std::optional<std::vector<std::size_t>> outputs_within(const Op& other) const override {
    if constexpr (ValuesOnly) {
      const auto* o = dynamic_cast<const EighOp<false>*>(&other);
      if (o != nullptr && o->params().lower == params().lower && o->params().ad == params().ad)
        return std::vector<std::size_t>{0};
    }
    return std::nullopt;
  }
  InferenceResult infer(std::span<const TensorMeta> in) const override {
    std::vector<ShapeConstraint> cs;
    require_floating(op_name(), in[0]);
    require_square(op_name(), in[0], cs);
    SymShape w(in[0].shape.begin() + 1, in[0].shape.end());
    TensorMeta values{real_of(in[0].dtype), w};
    if (ValuesOnly) return {{values}, std::move(cs)};
    return {{values, in[0]}, std::move(cs)};
  }
  std::vector<Tensor> execute(Backend& backend, std::span<const Tensor> in,
                              Workspaces&) const override;
  const RuleSet& ad_rules() const override { return rules(); }
  static const RuleSet& rules() { return eigh_rules(ValuesOnly); }
};
using Eigh = EighOp<false>;
using EigvalsH = EighOp<true>;

const EighParams& params_of(const Op& op) {
  if (const auto* v = dynamic_cast<const EigvalsH*>(&op)) return v->params();
  return static_cast<const Eigh&>(op).params();
}

template <class T>
void heevd_batches(const EighParams& p, const char* op, Tensor& a, Tensor& w, Backend& backend,
                   Workspaces& workspaces) {
  using R = lapack::real_t<T>;
  const std::int64_t n = a.shape()[0];
  const std::int64_t batches = batch_count(a.shape());
  if (n == 0) return;
  T* A = static_cast<T*>(a.raw_data());
  R* W = static_cast<R*>(w.raw_data());
  const auto pool = workspaces.pool<lapack::LapackWorkspace<T>>();
  for_each_batch(backend, batches, n * n * n, [&](std::int64_t b) {
    T* Ab = A + b * n * n;
    // Only the used triangle must be finite (the other one is never read).
    for (std::int64_t j = 0; j < n; ++j) {
      for (std::int64_t i = 0; i < n; ++i) {
        if ((p.lower ? i >= j : i <= j) && !lapack::all_finite(Ab + i + j * n, 1)) {
          numerical_failure(
              ErrorKind::NoConvergence, op, b,
              "the input contains NaN or Inf, for which the eigendecomposition is not "
              "defined; remove them first");
        }
      }
    }
    const auto ws = pool->lease();
    const lapack::fint info = lapack::heevd<T>(*ws, p.vectors ? 'V' : 'N', p.lower ? 'L' : 'U',
                                               static_cast<lapack::fint>(n), Ab, W + b * n);
    if (info < 0) fail(ErrorKind::Internal, op, "LAPACK syevd/heevd rejected argument ", -info);
    if (info > 0) {
      numerical_failure(ErrorKind::NoConvergence, op, b,
                        "the eigensolver did not converge (LAPACK info " + std::to_string(info) +
                            "); rescale the input or use double precision");
    }
  });
}

template <bool ValuesOnly>
std::vector<Tensor> EighOp<ValuesOnly>::execute(Backend& backend, std::span<const Tensor> in,
                                                Workspaces& workspaces) const {
  Tensor a = compact_copy(in[0], backend);
  const Shape w_shape(a.shape().begin() + 1, a.shape().end());
  Tensor w = backend.empty(w_shape, real_of(a.dtype()));
  dispatch_floating(a.dtype(), [&]<class T>() {
    heevd_batches<T>(params(), op_name(), a, w, backend, workspaces);
  });
  if (!params().vectors) return {w};
  return {w, a};
}

// ---- AD rules ------------------------------------------------------------------------
// The op reads one triangle: it computes h(P(A)) with P(A) the Hermitian
// matrix built from that triangle (real diagonal). Rules of h are PyTorch's
// (dL = Re diag(V^H dA V), dV = V (F o V^H dA V), F(i, j) = 1 / (l_j - l_i);
// gA = V (F o skew(V^H gV) / 2 + diag(gL)) V^H), composed with P and its
// adjoint P*(G) = tril(G + G^H, -1) + Re diag(G) ('L'; triu for 'U').
// Strict: F is 0 on degenerate pairs, where a non-negligible dP(i, j) (jvp) or
// skew(V^H gV)(i, j) (vjp) is a GaugeIllDefined error (check_degenerate).

Val hermitian_from(Emitter& e, Val x, bool lower) {
  const Val t = lower ? tril(e, x, -1) : triu(e, x, 1);
  return e.add(e.add(t, mH(e, t)), diag_embed(e, real_part_same(e, diag(e, x))));
}

Val hermitian_adjoint(Emitter& e, Val g, bool lower) {
  const Val s = sym2(e, g);
  const Val t = lower ? tril(e, s, -1) : triu(e, s, 1);
  return e.add(t, diag_embed(e, real_part_same(e, diag(e, g))));
}

std::vector<MaybeVal> eigh_jvp(const RuleArgs& a, std::span<const MaybeVal> t) {
  const auto& p = params_of(a.op);
  Emitter& e = a.emitter;
  if (!t[0]) {
    if (!p.vectors) return {std::nullopt};
    return {std::nullopt, std::nullopt};
  }
  const Val dA = hermitian_from(e, *t[0], p.lower);
  if (!p.vectors) {
    const Val V = emit(e, eigh_op(p.lower, true), {a.inputs[0]})[1];
    return {e.real(diag(e, mm(e, mH(e, V), mm(e, dA, V))))};
  }
  const Val L = a.outputs[0], V = a.outputs[1];
  const DType dt = e.dtype_of(V);
  const Val dP = mm(e, mH(e, V), mm(e, dA, V));
  const Val dL = e.real(diag(e, dP));
  const GapFactors g = gap_factors(e, L, p.ad);
  const Val F = as_dtype(e, g.F, dt);
  return {dL, check_degenerate(e, GaugeOwner::Eigh, true, mm(e, V, e.mul(dP, F)), {dP}, g, p.ad)};
}

std::vector<MaybeVal> eigh_vjp(const RuleArgs& a, std::span<const MaybeVal> ct) {
  const auto& p = params_of(a.op);
  Emitter& e = a.emitter;
  const MaybeVal gL = ct[0];
  const MaybeVal gV = p.vectors ? ct[1] : std::nullopt;
  if (!gL && !gV) return {std::nullopt};
  const Val V = p.vectors ? a.outputs[1] : emit(e, eigh_op(p.lower, true), {a.inputs[0]})[1];
  const DType dt = e.dtype_of(V);
  if (!gV) {
    const Val G = mm(e, e.mul(V, bcast_row(e, as_dtype(e, *gL, dt))), mH(e, V));
    return {hermitian_adjoint(e, G, p.lower)};
  }
  const Val X = mm(e, mH(e, V), *gV);
  const GapFactors g = gap_factors(e, a.outputs[0], p.ad);
  const Val F = as_dtype(e, g.F, dt);
  const Val N = e.scale(skew2(e, X), 0.5);
  Val ret = e.mul(N, F);
  if (gL) ret = e.add(ret, diag_embed(e, as_dtype(e, *gL, dt)));
  Val gA = hermitian_adjoint(e, mm(e, V, mm(e, ret, mH(e, V))), p.lower);
  if (is_complex(dt)) {
    gA = emit(e, gauge_check_op(GaugeOwner::Eigh, p.ad.gauge_tolerance), {gA, imag_diag(e, X)})[0];
  }
  // Strict: on a degenerate pair the loss must not depend on a rotation (N) nor on how
  // the pair splits (gL).
  std::vector<Val> c{N};
  if (gL) c.push_back(value_split(e, *gL));
  return {check_degenerate(e, GaugeOwner::Eigh, false, gA, c, g, p.ad, {}, {X})};
}

const RuleSet& eigh_rules(bool values_only) {
  const auto make = [](bool values) {
    RuleSet s;
    s.jvp = eigh_jvp;
    s.vjp = eigh_vjp;
    // eigvalsh recomputes the vectors from the input; eigh reuses its factors.
    s.residuals = values ? ad::Residuals::of({0}, {}) : ad::Residuals::of({}, {0, 1});
    return s;
  };
  static const RuleSet vectors = make(false), values = make(true);
  return values_only ? values : vectors;
}

}  // namespace

std::shared_ptr<const LinalgOpBase> eigh_op(bool lower, bool vectors, AdParams ad) {
  if (!vectors) return std::make_shared<const EigvalsH>(EighParams{lower, vectors, ad});
  return std::make_shared<const Eigh>(EighParams{lower, vectors, ad});
}

void register_eigh(Registry& r) {
  r.add<Eigh>();
  r.add<EigvalsH>();
}

}  // namespace tenferro::linalg::detail
