// Determinants (det, slogdet) from an LU factorisation, with AD rules.

#include <cmath>
#include <limits>

#include "linalg/factor.hpp"
#include "linalg/lapack.hpp"

namespace tenferro::linalg::detail {
namespace {

struct NoParams {
  bool operator==(const NoParams&) const = default;
};
std::size_t hash_value(const NoParams&) {
  return 0;
}

// Outputs: det (A's dtype), sign (A's dtype: +-1, a unit complex number, or 0
// for a singular matrix) and logabsdet (real; -inf when singular), each
// [batch...].
class Det final : public LinalgOp<Det, NoParams> {
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
  std::vector<Tensor> execute(Backend& backend, std::span<const Tensor> in) const override;
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
    D[b] = d;
    S[b] = s;
    L[b] = la;
  });
}

std::vector<Tensor> Det::execute(Backend& backend, std::span<const Tensor> in) const {
  Tensor lu = compact_copy(in[0], backend);
  const Shape batch(lu.shape().begin() + 2, lu.shape().end());
  Tensor det = backend.empty(batch, lu.dtype());
  Tensor sign = backend.empty(batch, lu.dtype());
  Tensor logabs = backend.empty(batch, real_of(lu.dtype()));
  dispatch_floating(lu.dtype(), [&]<class T>() { det_batches<T>(lu, det, sign, logabs, backend); });
  return {det, sign, logabs};
}

// With t = tr(A^{-1} dA) (PyTorch's linalg_det_jvp / slogdet_jvp):
//   d det = det t;  d logabsdet = Re t;  d sign = sign i Im t (complex; 0 when real).
// A^{-1} dA runs through the differentiable LU ops, so the rule is itself
// differentiable (second order). A singular A is Singular here (PyTorch
// switches to an SVD-based formula for det; not supported).
std::vector<MaybeVal> det_jvp(const RuleArgs& a, std::span<const MaybeVal> t) {
  if (!t[0]) return {std::nullopt, std::nullopt, std::nullopt};
  Emitter& e = a.emitter;
  const auto f = emit(e, lu_factor_op(true, LuCaller::Det), {a.inputs[0]});
  const Val X = emit(e, lu_solve_op(false), {f[0], f[1], *t[0]})[0];
  const Val tr = e.sum(diag(e, X), {0});
  const Val ddet = e.mul(a.outputs[0], tr);
  const Val dlog = e.real(tr);
  if (!is_complex(e.meta(tr).dtype)) return {ddet, std::nullopt, dlog};
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

std::shared_ptr<const LinalgOpBase> det_op() {
  return std::make_shared<const Det>(NoParams{});
}

void register_factor_det(Registry& r) {
  r.add<Det>();
}

}  // namespace tenferro::linalg::detail
