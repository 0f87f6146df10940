// Determinants (det, slogdet) from an LU factorisation, with AD rules.

#include <algorithm>
#include <cmath>
#include <limits>

#include "linalg/balance.hpp"
#include "linalg/factor.hpp"
#include "linalg/lapack.hpp"
#include "linalg/spectral_lapack.hpp"

namespace tenferro::linalg::detail {
namespace {

struct NoParams {
  bool operator==(const NoParams&) const = default;
};
std::size_t hash_value(const NoParams&) {
  return 0;
}
// det() and slogdet() are one op (the same outputs) with different AD rules:
// det's derivative holds at singular matrices too (through the adjugate).
struct DetParams {
  bool slogdet = false;
  bool operator==(const DetParams&) const = default;
};
std::size_t hash_value(const DetParams& p) {
  return p.slogdet ? 1 : 0;
}

// Outputs: det (A's dtype), sign (A's dtype: +-1, a unit complex number, or 0
// for a singular matrix) and logabsdet (real; -inf when singular), each
// [batch...].
class Det final : public LinalgOp<Det, DetParams> {
 public:
  static constexpr std::string_view kFamily = "tenferro.linalg_det.v1";
  using LinalgOp::LinalgOp;
  std::size_t input_count() const override { return 1; }
  std::size_t output_count() const override { return 3; }
  InferenceResult infer(std::span<const TensorMeta> in) const override {
    std::vector<ShapeConstraint> cs;
    require_floating("det", in[0], "A");
    require_square("det", in[0], cs, "A");
    SymShape batch(in[0].shape.begin() + 2, in[0].shape.end());
    const DType d = in[0].dtype;
    return {{TensorMeta{d, batch}, TensorMeta{d, batch}, TensorMeta{real_of(d), batch}},
            std::move(cs)};
  }
  std::vector<Tensor> execute(Backend& backend, std::span<const Tensor> in,
                              Workspaces&) const override;
  const RuleSet& ad_rules() const override { return rules(); }
  static const RuleSet& rules();
};

template <class T>
void det_batches(Tensor& lu, Tensor& det, Tensor& sign, Tensor& logabs, Backend& backend) {
  using R = decltype(std::abs(T(0)));
  const std::int64_t n = lu.shape()[0];
  const std::int64_t batches = batch_count(lu.shape());
  T* A = static_cast<T*>(lu.raw_data());
  T* D = static_cast<T*>(det.raw_data());
  T* S = static_cast<T*>(sign.raw_data());
  R* L = static_cast<R*>(logabs.raw_data());
  for_each_batch(backend, batches, n * n * n, [&](std::int64_t b) {
    T* Ab = A + b * n * n;
    std::vector<lapack::fint> piv(static_cast<std::size_t>(n));
    lapack::fint res = 0;
    // Factored balanced (balance.hpp) and kept scaled: the factors of 2^e A,
    // whose determinant is 2^(n e) det(A), so that subnormal or huge entries
    // give the right sign and logabsdet instead of NaN.
    const int e = balance::exponent(Ab, n, n, n);
    if (e != 0) balance::scale(Ab, n, n, n, e);
    if (n > 0) {
      lapack::getrf(static_cast<lapack::fint>(n), static_cast<lapack::fint>(n), Ab,
                    static_cast<lapack::fint>(n), piv.data(), &res);
    }
    if (res < 0) fail(ErrorKind::Internal, "det", "LAPACK getrf rejected argument ", -res);
    T s(1), d(1);
    R la(0);
    for (std::int64_t i = 0; i < n; ++i) {
      const T u = Ab[i + i * n];
      if (piv[i] != i + 1) {
        s = -s;
        d = -d;
      }
      d *= u;
      const R au = std::abs(u);
      if (au == R(0)) {
        s = T(0);
        la = -std::numeric_limits<R>::infinity();
      } else if (s != T(0)) {
        s *= u / au;
        la += std::log(au);
      }
    }
    if (s == T(0)) d = T(0);
    if (e != 0 && s != T(0)) {
      // det(A) = 2^(-n e) det(2^e A); the exponent is clamped where the
      // result under- or overflows anyway.
      const long shift = std::clamp<long>(-static_cast<long>(n) * e, -100000, 100000);
      d = balance::scaled(d, static_cast<int>(shift));
      la -= static_cast<R>(n) * static_cast<R>(e) * std::log(R(2));
    }
    D[b] = d;
    S[b] = s;
    L[b] = la;
  });
}

std::vector<Tensor> Det::execute(Backend& backend, std::span<const Tensor> in, Workspaces&) const {
  Tensor lu = compact_copy(in[0], backend);
  const Shape batch(lu.shape().begin() + 2, lu.shape().end());
  Tensor det = backend.empty(batch, lu.dtype());
  Tensor sign = backend.empty(batch, lu.dtype());
  Tensor logabs = backend.empty(batch, real_of(lu.dtype()));
  dispatch_floating(lu.dtype(), [&]<class T>() { det_batches<T>(lu, det, sign, logabs, backend); });
  return {det, sign, logabs};
}

// adj(A) [n, n, batch...], the transposed cofactor matrix: d det = tr(adj(A) dA).
// Invertible A: det(A) A^{-1} (one LU). Singular A (an exactly zero pivot):
// with the SVD A = U S V^H, adj(A) = adj(V^H) adj(S) adj(U) = det(U) det(V^H)
// V diag(p) U^H, p_i = prod_{j != i} s_j (prefix and suffix products, no
// division), which is finite and exact in rank (zero below rank n - 1).
class Adjugate final : public LinalgOp<Adjugate, NoParams> {
 public:
  static constexpr std::string_view kFamily = "tenferro.linalg_adjugate.v1";
  using LinalgOp::LinalgOp;
  std::size_t input_count() const override { return 1; }
  std::size_t output_count() const override { return 1; }
  InferenceResult infer(std::span<const TensorMeta> in) const override {
    std::vector<ShapeConstraint> cs;
    require_floating("det", in[0], "A");
    require_square("det", in[0], cs, "A");
    return {{in[0]}, std::move(cs)};
  }
  std::vector<Tensor> execute(Backend& backend, std::span<const Tensor> in,
                              Workspaces&) const override;
  const RuleSet& ad_rules() const override { return rules(); }
  static const RuleSet& rules();
};

// det of an LU-factored matrix (pivots 1-based).
template <class T>
T lu_det(const T* lu, const lapack::fint* piv, std::int64_t n) {
  T d(1);
  for (std::int64_t i = 0; i < n; ++i) {
    d *= lu[i + i * n];
    if (piv[i] != i + 1) d = -d;
  }
  return d;
}

template <class T>
void adjugate_batches(const Tensor& a, Tensor& out, Backend& backend, Workspaces& workspaces) {
  using R = lapack::real_t<T>;
  using lapack::fint;
  const std::int64_t n = a.shape()[0];
  const fint nf = static_cast<fint>(n);
  const std::int64_t batches = batch_count(a.shape());
  const T* A = static_cast<const T*>(a.raw_data());
  T* O = static_cast<T*>(out.raw_data());
  const auto pool = workspaces.pool<lapack::LapackWorkspace<T>>();
  for_each_batch(backend, batches, n * n * n, [&](std::int64_t b) {
    if (n == 0) return;
    const T* Ab = A + b * n * n;
    T* Ob = O + b * n * n;
    std::vector<T> lu(Ab, Ab + n * n);
    std::vector<fint> piv(static_cast<std::size_t>(n));
    fint info = 0;
    balance::getrf(n, n, lu.data(), n, piv.data(), &info);
    if (info < 0) fail(ErrorKind::Internal, "det", "LAPACK getrf rejected argument ", -info);
    if (info == 0) {  // det(A) A^{-1}
      const T d = lu_det(lu.data(), piv.data(), n);
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < n; ++i) Ob[i + j * n] = i == j ? d : T(0);
      balance::getrs('N', n, n, lu.data(), n, piv.data(), Ob, n, &info);
      return;
    }
    std::vector<T> c(Ab, Ab + n * n), u(n * n), vt(n * n);
    std::vector<R> s(static_cast<std::size_t>(n));
    if (!lapack::all_finite(Ab, n * n) ||
        lapack::gesdd(*pool->lease(), 'A', nf, nf, c.data(), s.data(), u.data(), nf, vt.data(),
                      nf) != 0) {
      numerical_failure(ErrorKind::NoConvergence, "det", b,
                        "the SVD for the derivative at a singular matrix did not converge");
    }
    // det(U) det(V^H): LUs of the unitary factors.
    T phase(1);
    for (std::vector<T>* f : {&u, &vt}) {
      std::vector<T> g = *f;
      lapack::getrf(nf, nf, g.data(), nf, piv.data(), &info);
      phase *= lu_det(g.data(), piv.data(), n);
    }
    phase /= std::abs(phase);  // unit modulus up to rounding
    std::vector<R> p(static_cast<std::size_t>(n), R(1));
    R acc(1);
    for (std::int64_t i = 0; i < n; ++i) {  // prefix products
      p[i] = acc;
      acc *= s[i];
    }
    acc = R(1);
    for (std::int64_t i = n - 1; i >= 0; --i) {  // times suffix products
      p[i] *= acc;
      acc *= s[i];
    }
    // adj[i, j] = phase sum_k conj(vt[k, i]) p_k conj(u[j, k]).
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < n; ++i) {
        T sum(0);
        for (std::int64_t k = 0; k < n; ++k) {
          if (p[k] == R(0)) continue;
          T vki = vt[k + i * n], ujk = u[j + k * n];
          if constexpr (lapack::is_complex_v<T>) {
            vki = std::conj(vki);
            ujk = std::conj(ujk);
          }
          sum += vki * p[k] * ujk;
        }
        Ob[i + j * n] = phase * sum;
      }
  });
}

std::vector<Tensor> Adjugate::execute(Backend& backend, std::span<const Tensor> in,
                                      Workspaces& workspaces) const {
  const Tensor a = compact_copy(in[0], backend);
  Tensor out = backend.empty(a.shape(), a.dtype());
  dispatch_floating(a.dtype(),
                    [&]<class T>() { adjugate_batches<T>(a, out, backend, workspaces); });
  return {out};
}

// adj = det A^{-1}: d adj = tr(X) adj - X adj with X = A^{-1} dA (an LU
// solve), so second derivatives of det hold where A is invertible; at a
// singular A this second-order rule is Singular.
std::vector<MaybeVal> adjugate_jvp(const RuleArgs& a, std::span<const MaybeVal> t) {
  if (!t[0]) return {std::nullopt};
  Emitter& e = a.emitter;
  const auto f = emit(e, lu_factor_op(true, LuCaller::Det), {a.inputs[0]});
  const Val X = emit(e, lu_solve_op(false), {f[0], f[1], *t[0]})[0];
  const Val tr = e.sum(diag(e, X), {0});
  const TensorMeta m = e.meta(a.outputs[0]);
  Axes batch;
  for (std::size_t k = 2; k < m.shape.size(); ++k) batch.push_back(static_cast<std::int64_t>(k));
  const Val trb = e.broadcast_in_dim(tr, m.shape, batch);
  return {e.sub(e.mul(trb, a.outputs[0]), mm(e, X, a.outputs[0]))};
}

const RuleSet& Adjugate::rules() {
  static const RuleSet r = [] {
    RuleSet s;
    s.jvp = adjugate_jvp;
    s.residuals = ad::Residuals::of({0}, {0});
    return s;
  }();
  return r;
}

// With t = tr(A^{-1} dA) (PyTorch's linalg_det_jvp / slogdet_jvp):
//   d det = det t;  d logabsdet = Re t;  d sign = sign i Im t (complex; 0 when real).
// A^{-1} dA runs through the differentiable LU ops, so the rule is itself
// differentiable (second order). For slogdet, a singular A is Singular here
// (logabsdet is -inf).
//
// det() alone: d det = tr(adj(A) dA) = sum(adj^T * dA), finite and right at
// singular matrices too (the adjugate op switches to the SVD there, as
// PyTorch's det backward does).
std::vector<MaybeVal> det_jvp(const RuleArgs& a, std::span<const MaybeVal> t) {
  if (!t[0]) return {std::nullopt, std::nullopt, std::nullopt};
  Emitter& e = a.emitter;
  if (!static_cast<const Det&>(a.op).params().slogdet) {
    const Val adj = emit(e, std::make_shared<const Adjugate>(NoParams{}), {a.inputs[0]})[0];
    return {e.sum(e.mul(mT(e, adj), *t[0]), {0, 1}), std::nullopt, std::nullopt};
  }
  const auto f = emit(e, lu_factor_op(true, LuCaller::Det), {a.inputs[0]});
  const Val X = emit(e, lu_solve_op(false), {f[0], f[1], *t[0]})[0];
  const Val tr = e.sum(diag(e, X), {0});
  const Val ddet = e.mul(a.outputs[0], tr);
  const Val dlog = e.real(tr);
  if (!is_complex(e.dtype_of(tr))) return {ddet, std::nullopt, dlog};
  const Val iim = e.scale(e.sub(tr, e.conj(tr)), 0.5);  // i Im t
  return {ddet, e.mul(a.outputs[1], iim), dlog};
}

const RuleSet& Det::rules() {
  static const RuleSet r = [] {
    RuleSet s;
    s.jvp = det_jvp;
    s.residuals = ad::Residuals::of({0}, {0, 1});
    return s;
  }();
  return r;
}

}  // namespace

std::shared_ptr<const LinalgOpBase> det_op(bool slogdet) {
  return std::make_shared<const Det>(DetParams{slogdet});
}

void register_factor_det(Registry& r) {
  r.add<Det>();
  r.add<Adjugate>();
}

}  // namespace tenferro::linalg::detail
