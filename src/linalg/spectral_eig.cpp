// The general eigendecomposition (LAPACK geev) and its AD rules (eig,
// eigvals), and the LU solve with V its rules need.

#include "linalg/spectral_common.hpp"
#include "linalg/spectral_lapack.hpp"

namespace tenferro::linalg::detail {
namespace {

DType complex_of(DType d) {
  return (d == DType::F32 || d == DType::C64) ? DType::C64 : DType::C128;
}

// ---- solve with V (LU) -----------------------------------------------------------------

struct SolveParams {
  bool adjoint = false;
  bool operator==(const SolveParams&) const = default;
};
std::size_t hash_value(const SolveParams& p) {
  return p.adjoint ? 1u : 0u;
}

class Solve final : public LinalgOp<Solve, SolveParams> {
 public:
  static constexpr std::string_view kFamily = "tenferro.linalg_eig_solve.v1";
  using LinalgOp::LinalgOp;
  std::size_t input_count() const override { return 2; }
  std::size_t output_count() const override { return 1; }
  InferenceResult infer(std::span<const TensorMeta> in) const override {
    std::vector<ShapeConstraint> cs;
    require_floating("eig", in[0], "V");
    require_floating("eig", in[1], "B");
    require_square("eig", in[0], cs, "V");
    require_matrix("eig", in[1], "B");
    require_same_batch("eig", in[0], in[1], cs);
    if (in[0].dtype != in[1].dtype) {
      fail(ErrorKind::DTypeMismatch, "eig", "V and B must have the same dtype");
    }
    return {{in[1]}, std::move(cs)};
  }
  std::vector<Tensor> execute(Backend& backend, std::span<const Tensor> in,
                              Workspaces&) const override {
    Tensor lu = compact_copy(in[0], backend);
    Tensor x = compact_copy(in[1], backend);
    const std::int64_t n = lu.shape()[0], r = x.shape()[1];
    const std::int64_t batches = batch_count(lu.shape());
    if (n == 0 || r == 0) return {x};
    dispatch_floating(x.dtype(), [&]<class T>() {
      T* A = static_cast<T*>(lu.raw_data());
      T* X = static_cast<T*>(x.raw_data());
      for_each_batch(backend, batches, n * n * n, [&](std::int64_t b) {
        std::vector<lapack::fint> piv(static_cast<std::size_t>(n));
        lapack::fint info = 0;
        const auto fn = static_cast<lapack::fint>(n);
        lapack::getrf(fn, fn, A + b * n * n, fn, piv.data(), &info);
        if (info > 0) {
          numerical_failure(ErrorKind::Singular, "eig", b,
                            "the eigenvector matrix is singular (A is not diagonalisable), so the "
                            "derivative is not defined");
        }
        lapack::getrs(params().adjoint ? 'C' : 'N', fn, static_cast<lapack::fint>(r), A + b * n * n,
                      fn, piv.data(), X + b * n * r, fn, &info);
      });
    });
    return {x};
  }
  const RuleSet& ad_rules() const override { return rules(); }
  static const RuleSet& rules();
};

// X = op(V)^-1 B:  dX = op(V)^-1 (dB - op(dV) X); linear in B with adjoint op(V)^-H.
std::vector<MaybeVal> solve_jvp(const RuleArgs& a, std::span<const MaybeVal> t) {
  Emitter& e = a.emitter;
  const bool adj = static_cast<const Solve&>(a.op).params().adjoint;
  MaybeVal rhs = t[1];
  if (t[0]) {
    const Val prod = mm(e, adj ? mH(e, *t[0]) : *t[0], a.outputs[0]);
    rhs = rhs ? e.sub(*rhs, prod) : e.neg(prod);
  }
  if (!rhs) return {std::nullopt};
  return {emit(e, solve_op(adj), {a.inputs[0], *rhs})[0]};
}

std::vector<MaybeVal> solve_transpose(const RuleArgs& a, std::span<const bool> linear,
                                      std::span<const MaybeVal> ct) {
  if (linear[0]) fail(ErrorKind::UnsupportedAdRule, "eig", "the solve is linear in B only");
  if (!ct[0]) return {std::nullopt, std::nullopt};
  const bool adj = static_cast<const Solve&>(a.op).params().adjoint;
  return {std::nullopt, emit(a.emitter, solve_op(!adj), {a.inputs[0], *ct[0]})[0]};
}

const RuleSet& Solve::rules() {
  static const RuleSet r = [] {
    RuleSet s;
    s.jvp = solve_jvp;
    s.transpose = solve_transpose;
    s.residuals = ad::Residuals::of({0}, {0});
    return s;
  }();
  return r;
}

// ---- eig ------------------------------------------------------------------------------

struct EigParams {
  bool vectors = true;
  AdParams ad;
  bool operator==(const EigParams&) const = default;
};
std::size_t hash_value(const EigParams& p) {
  return hash_combine(hash_value(p.ad), p.vectors ? 1u : 0u);
}

const RuleSet& eig_rules(bool values_only);

template <bool ValuesOnly>
class EigOp final : public LinalgOp<EigOp<ValuesOnly>, EigParams> {
 public:
  static constexpr std::string_view kFamily =
      ValuesOnly ? "tenferro.linalg_eigvals.v1" : "tenferro.linalg_eig.v1";
  using LinalgOp<EigOp<ValuesOnly>, EigParams>::LinalgOp;
  using LinalgOp<EigOp<ValuesOnly>, EigParams>::params;
  std::size_t input_count() const override { return 1; }
  std::size_t output_count() const override { return ValuesOnly ? 1 : 2; }
  const char* op_name() const { return ValuesOnly ? "eigvals" : "eig"; }
  InferenceResult infer(std::span<const TensorMeta> in) const override {
    std::vector<ShapeConstraint> cs;
    require_floating(op_name(), in[0]);
    require_square(op_name(), in[0], cs);
    const DType c = complex_of(in[0].dtype);
    TensorMeta values{c, SymShape(in[0].shape.begin() + 1, in[0].shape.end())};
    if (ValuesOnly) return {{values}, std::move(cs)};
    return {{values, TensorMeta{c, in[0].shape}}, std::move(cs)};
  }
  std::vector<Tensor> execute(Backend& backend, std::span<const Tensor> in,
                              Workspaces&) const override;
  const RuleSet& ad_rules() const override { return rules(); }
  static const RuleSet& rules() { return eig_rules(ValuesOnly); }
};
using Eig = EigOp<false>;
using Eigvals = EigOp<true>;

const EigParams& params_of(const Op& op) {
  if (const auto* v = dynamic_cast<const Eigvals*>(&op)) return v->params();
  return static_cast<const Eig&>(op).params();
}

template <class T>
void geev_batches(const char* op, bool vectors, Tensor& a, Tensor& w, Tensor* v, Backend& backend,
                  Workspaces& workspaces) {
  using C = std::complex<lapack::real_t<T>>;
  const std::int64_t n = a.shape()[0];
  const std::int64_t batches = batch_count(a.shape());
  if (n == 0) return;
  T* A = static_cast<T*>(a.raw_data());
  C* W = static_cast<C*>(w.raw_data());
  C* V = vectors ? static_cast<C*>(v->raw_data()) : nullptr;
  const auto pool = workspaces.pool<lapack::LapackWorkspace<T>>();
  for_each_batch(backend, batches, 10 * n * n * n, [&](std::int64_t b) {
    T* Ab = A + b * n * n;
    if (!lapack::all_finite(Ab, n * n)) {
      numerical_failure(ErrorKind::NoConvergence, op, b,
                        "the input contains NaN or Inf, for which the eigendecomposition is not "
                        "defined; remove them first");
    }
    const auto ws = pool->lease();
    const lapack::fint info = lapack::geev<T>(*ws, vectors, static_cast<lapack::fint>(n), Ab,
                                              W + b * n, vectors ? V + b * n * n : nullptr);
    if (info < 0) fail(ErrorKind::Internal, op, "LAPACK geev rejected argument ", -info);
    if (info > 0) {
      numerical_failure(ErrorKind::NoConvergence, op, b,
                        "the QR algorithm did not converge (LAPACK geev info " +
                            std::to_string(info) + "); rescale the input or use double precision");
    }
  });
}

template <bool ValuesOnly>
std::vector<Tensor> EigOp<ValuesOnly>::execute(Backend& backend, std::span<const Tensor> in,
                                               Workspaces& workspaces) const {
  Tensor a = compact_copy(in[0], backend);
  const DType c = complex_of(a.dtype());
  Tensor w = backend.empty(Shape(a.shape().begin() + 1, a.shape().end()), c);
  Tensor v;
  if (params().vectors) v = backend.empty(a.shape(), c);
  dispatch_floating(a.dtype(), [&]<class T>() {
    geev_batches<T>(op_name(), params().vectors, a, w, params().vectors ? &v : nullptr, backend,
                    workspaces);
  });
  if (!params().vectors) return {w};
  return {w, v};
}

// PyTorch's linalg_eig_jvp / linalg_eig_backward, F(i, j) = 1 / (l_j - l_i):
//   dP = V^-1 dA V, dL = diag(dP), dV = V (F o dP) - V Re diag(V^H V (F o dP));
//   gA = V^-H (conj(F) o (V^H gV - V^H V Re diag(V^H gV)) + diag(gL)) V^H.
// Strict: F is 0 on degenerate pairs, where a non-negligible dP(i, j) (jvp) or
// (V^H gV - V^H V Re diag(V^H gV))(i, j) (vjp) is a GaugeIllDefined error.
std::vector<MaybeVal> eig_jvp(const RuleArgs& a, std::span<const MaybeVal> t) {
  const auto& p = params_of(a.op);
  Emitter& e = a.emitter;
  if (!t[0]) {
    if (!p.vectors) return {std::nullopt};
    return {std::nullopt, std::nullopt};
  }
  std::vector<Val> f;
  if (p.vectors) {
    f = {a.outputs[0], a.outputs[1]};
  } else {
    f = emit(e, eig_op(true), {a.inputs[0]});
  }
  const Val L = f[0], V = f[1];
  const DType dt = e.dtype_of(V);
  const Val dA = as_dtype(e, *t[0], dt);
  const Val dP = emit(e, solve_op(false), {V, mm(e, dA, V)})[0];
  const Val dL = diag(e, dP);
  if (!p.vectors) return {dL};
  const GapFactors g = gap_factors(e, L, p.ad);
  const Val dVx = mm(e, V, e.mul(dP, g.F));
  const Val n = real_part_same(e, diag(e, mm(e, mH(e, V), dVx)));
  const Val dV = e.sub(dVx, e.mul(V, bcast_row(e, n)));
  return {dL, check_degenerate(e, GaugeOwner::Eig, true, dV, {dP}, g, p.ad)};
}

std::vector<MaybeVal> eig_vjp(const RuleArgs& a, std::span<const MaybeVal> ct) {
  const auto& p = params_of(a.op);
  Emitter& e = a.emitter;
  const MaybeVal gL = ct[0];
  const MaybeVal gV = p.vectors ? ct[1] : std::nullopt;
  if (!gL && !gV) return {std::nullopt};
  std::vector<Val> f;
  if (p.vectors) {
    f = {a.outputs[0], a.outputs[1]};
  } else {
    f = emit(e, eig_op(true), {a.inputs[0]});
  }
  const Val L = f[0], V = f[1];
  const DType in_dt = a.input_metas[0].dtype;
  Val ret;
  MaybeVal X, Xp;
  std::optional<GapFactors> g;
  if (gV) {
    X = mm(e, mH(e, V), *gV);
    const Val r = real_part_same(e, diag(e, *X));
    Xp = e.sub(*X, mm(e, mH(e, V), e.mul(V, bcast_row(e, r))));
    g = gap_factors(e, L, p.ad);
    ret = e.mul(*Xp, e.conj(g->F));
    if (gL) ret = e.add(ret, diag_embed(e, *gL));
  } else {
    ret = diag_embed(e, *gL);
  }
  Val gA = emit(e, solve_op(true), {V, mm(e, ret, mH(e, V))})[0];
  if (X) {
    gA = emit(e, gauge_check_op(GaugeOwner::Eig, p.ad.gauge_tolerance), {gA, imag_diag(e, *X)})[0];
    std::vector<Val> c{*Xp};
    if (gL) c.push_back(value_split(e, *gL));
    gA = check_degenerate(e, GaugeOwner::Eig, false, gA, c, *g, p.ad, {}, {*X});
  }
  return {e.to_dtype(gA, in_dt)};
}

const RuleSet& eig_rules(bool values_only) {
  const auto make = [](bool values) {
    RuleSet s;
    s.jvp = eig_jvp;
    s.vjp = eig_vjp;
    // eigvals recomputes the vectors from the input; eig reuses its factors.
    s.residuals = values ? ad::Residuals::of({0}, {}) : ad::Residuals::of({}, {0, 1});
    return s;
  };
  static const RuleSet vectors = make(false), values = make(true);
  return values_only ? values : vectors;
}

}  // namespace

std::shared_ptr<const LinalgOpBase> eig_op(bool vectors, AdParams ad) {
  if (!vectors) return std::make_shared<const Eigvals>(EigParams{vectors, ad});
  return std::make_shared<const Eig>(EigParams{vectors, ad});
}

std::shared_ptr<const LinalgOpBase> solve_op(bool adjoint) {
  return std::make_shared<const Solve>(SolveParams{adjoint});
}

void register_eig(Registry& r) {
  r.add<Eig>();
  r.add<Eigvals>();
  r.add<Solve>();
}

}  // namespace tenferro::linalg::detail
