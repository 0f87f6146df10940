// matrix_exp: Higham's scaling-and-squaring with the [13/13] Padé approximant
// (BLAS gemm, LAPACK getrf/getrs), with AD rules through the block-matrix
// identity exp([[A, E], [0, A]]) = [[exp(A), L(A, E)], [0, exp(A)]], where
// L(A, E) is the Fréchet derivative of exp at A in direction E.

#include <cmath>
#include <vector>

#include "linalg/common.hpp"
#include "linalg/composite_util.hpp"
#include "linalg/lapack.hpp"
#include "tenferro/linalg/composite.hpp"

namespace tenferro::linalg {
namespace detail {
namespace {

struct ExpParams {
  bool operator==(const ExpParams&) const = default;
};
std::size_t hash_value(const ExpParams&) {
  return 0;
}

class MatrixExp final : public LinalgOp<MatrixExp, ExpParams> {
 public:
  static constexpr std::string_view kFamily = "tenferro.linalg_matrix_exp.v1";
  using LinalgOp::LinalgOp;
  std::size_t input_count() const override { return 1; }
  std::size_t output_count() const override { return 1; }
  std::string describe() const override { return "matrix_exp"; }
  InferenceResult infer(std::span<const TensorMeta> in) const override {
    std::vector<ShapeConstraint> cs;
    require_floating("matrix_exp", in[0], "A");
    require_square("matrix_exp", in[0], cs, "A");
    return {{in[0]}, std::move(cs)};
  }
  std::vector<Tensor> execute(Backend& backend, std::span<const Tensor> in,
                              Workspaces&) const override;
  const RuleSet& ad_rules() const override { return rules(); }
  static const RuleSet& rules();
};

// The Padé [13/13] coefficients and the 1-norm bound up to which it is
// accurate to double precision without scaling (Higham 2005, table 10.2).
constexpr double kPade13[14] = {64764752532480000.0,
                                32382376266240000.0,
                                7771770303897600.0,
                                1187353796428800.0,
                                129060195264000.0,
                                10559470521600.0,
                                670442572800.0,
                                33522128640.0,
                                1323241920.0,
                                40840800.0,
                                960960.0,
                                16380.0,
                                182.0,
                                1.0};
constexpr double kTheta13 = 5.371920351148152;

template <class T>
void expm_one(T* a, std::int64_t n, std::int64_t batch) {
  using R = decltype(std::abs(T{}));
  const auto fn = static_cast<lapack::fint>(n);
  const std::size_t nn = static_cast<std::size_t>(n * n);
  double norm1 = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    double s = 0;
    for (std::int64_t i = 0; i < n; ++i) s += static_cast<double>(std::abs(a[i + j * n]));
    norm1 = std::max(norm1, s);
  }
  if (!std::isfinite(norm1)) {  // non-finite input: NaN, like PyTorch
    for (std::size_t i = 0; i < nn; ++i) a[i] = T(std::numeric_limits<R>::quiet_NaN());
    return;
  }
  int squarings = 0;
  if (norm1 > kTheta13) squarings = static_cast<int>(std::ceil(std::log2(norm1 / kTheta13)));
  const T scale = T(static_cast<R>(std::ldexp(1.0, -squarings)));
  for (std::size_t i = 0; i < nn; ++i) a[i] *= scale;
  std::vector<T> a2(nn), a4(nn), a6(nn), u(nn), v(nn), tmp(nn);
  auto mm = [&](const T* x, const T* y, T* out) {
    lapack::gemm('N', 'N', fn, fn, fn, T(1), x, fn, y, fn, T(0), out, fn);
  };
  mm(a, a, a2.data());
  mm(a2.data(), a2.data(), a4.data());
  mm(a4.data(), a2.data(), a6.data());
  const auto b = [](int k) { return T(static_cast<R>(kPade13[k])); };
  // u = A (A6 (b13 A6 + b11 A4 + b9 A2) + b7 A6 + b5 A4 + b3 A2 + b1 I)
  // v = A6 (b12 A6 + b10 A4 + b8 A2) + b6 A6 + b4 A4 + b2 A2 + b0 I
  for (std::size_t i = 0; i < nn; ++i) tmp[i] = b(13) * a6[i] + b(11) * a4[i] + b(9) * a2[i];
  mm(a6.data(), tmp.data(), u.data());
  for (std::size_t i = 0; i < nn; ++i) u[i] += b(7) * a6[i] + b(5) * a4[i] + b(3) * a2[i];
  for (std::int64_t i = 0; i < n; ++i) u[static_cast<std::size_t>(i + i * n)] += b(1);
  mm(a, u.data(), tmp.data());
  u.swap(tmp);
  for (std::size_t i = 0; i < nn; ++i) tmp[i] = b(12) * a6[i] + b(10) * a4[i] + b(8) * a2[i];
  mm(a6.data(), tmp.data(), v.data());
  for (std::size_t i = 0; i < nn; ++i) v[i] += b(6) * a6[i] + b(4) * a4[i] + b(2) * a2[i];
  for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i + i * n)] += b(0);
  // (v - u) X = (v + u)
  for (std::size_t i = 0; i < nn; ++i) {
    const T p = v[i] + u[i];
    tmp[i] = v[i] - u[i];
    a[i] = p;
  }
  std::vector<lapack::fint> piv(static_cast<std::size_t>(n));
  lapack::fint info = 0;
  lapack::getrf(fn, fn, tmp.data(), fn, piv.data(), &info);
  if (info > 0) {
    numerical_failure(ErrorKind::Singular, "matrix_exp", batch,
                      "the Padé denominator is singular (the input is not finite or overflows)");
  }
  lapack::getrs('N', fn, fn, tmp.data(), fn, piv.data(), a, fn, &info);
  for (int k = 0; k < squarings; ++k) {
    mm(a, a, tmp.data());
    std::copy(tmp.begin(), tmp.end(), a);
  }
}

std::vector<Tensor> MatrixExp::execute(Backend& backend, std::span<const Tensor> in,
                                       Workspaces&) const {
  Tensor x = compact_copy(in[0], backend);
  const std::int64_t n = x.shape()[0];
  const std::int64_t batches = batch_count(x.shape());
  if (n == 0) return {x};
  dispatch_floating(x.dtype(), [&]<class T>() {
    T* data = static_cast<T*>(x.raw_data());
    for_each_batch(backend, batches, 30 * n * n * n,
                   [&](std::int64_t b) { expm_one<T>(data + b * n * n, n, b); });
  });
  return {x};
}

std::shared_ptr<const LinalgOpBase> exp_op() {
  static const auto op = std::make_shared<const MatrixExp>(ExpParams{});
  return op;
}

// The upper-right n x n block of exp([[X, E], [0, X]]) (= L(X, E)).
Val frechet(Emitter& e, Val x, Val dir) {
  const TensorMeta m = e.meta(x);
  Shape s;
  for (const SymDim& d : m.shape) {
    const auto c = d.try_constant();
    if (!c) {
      fail(ErrorKind::Unsupported, "matrix_exp",
           "derivatives need constant extents; bind the symbolic extents first");
    }
    s.push_back(*c);
  }
  const std::int64_t n = s[0];
  const Val z = e.zeros_like(x);
  const auto cat = [&](std::int64_t axis, Val p, Val q) {
    const Val in[2] = {p, q};
    return e.emit1(make_primitive(prim::Concatenate{axis, 2}), in);
  };
  const Val block = cat(0, cat(1, x, dir), cat(1, z, x));
  const Val big = emit(e, exp_op(), {block})[0];
  Shape start(s.size(), 0), limit = s;
  start[1] = n;
  limit[1] = 2 * n;
  const Val in[1] = {big};
  return e.emit1(make_primitive(prim::Slice{start, limit, Shape(s.size(), 1)}), in);
}

// jvp: dexp = L(A, dA);  vjp (PyTorch's linalg_matrix_exp_differential with
// adjoint=true): gA = L(A^H, G).
std::vector<MaybeVal> exp_jvp(const RuleArgs& a, std::span<const MaybeVal> t) {
  if (!t[0]) return {std::nullopt};
  return {frechet(a.emitter, a.inputs[0], *t[0])};
}

std::vector<MaybeVal> exp_vjp(const RuleArgs& a, std::span<const MaybeVal> ct) {
  if (!ct[0]) return {std::nullopt};
  Emitter& e = a.emitter;
  return {frechet(e, mH(e, a.inputs[0]), *ct[0])};
}

const RuleSet& MatrixExp::rules() {
  static const RuleSet r = [] {
    RuleSet s;
    s.jvp = exp_jvp;
    s.vjp = exp_vjp;
    s.residuals = ad::Residuals::of({0}, {});
    return s;
  }();
  return r;
}

}  // namespace

void register_pinv(Registry& r);  // composite_pinv.cpp

void register_composite(Registry& r) {
  r.add<MatrixExp>();
  register_pinv(r);
}

}  // namespace detail

template <LinalgTensor T>
T matrix_exp(const T& a) {
  return detail::apply(detail::exp_op(), {a})[0];
}

Tensor matrix_exp(const Tensor& a, Backend& backend) {
  const detail::MatrixExp op(detail::ExpParams{});
  return detail::apply_direct(op, {a}, backend)[0];
}

template EagerTensor matrix_exp<EagerTensor>(const EagerTensor&);
template TracedTensor matrix_exp<TracedTensor>(const TracedTensor&);

}  // namespace tenferro::linalg
