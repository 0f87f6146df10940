// pinv: one extension op (SVD via gesdd, or the Hermitian eigendecomposition
// via heevd, with PyTorch's cutoff) whose AD rules are PyTorch's pinv_jvp and
// pinv_backward (FunctionsManual.cpp), written with the Emitter so second
// order comes from differentiating them. lstsq is composed on it.

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "linalg/common.hpp"
#include "linalg/composite_util.hpp"
#include "linalg/spectral_lapack.hpp"
#include "tenferro/ad/composite.hpp"
#include "tenferro/linalg/composite.hpp"
#include "tenferro/linalg/spectral.hpp"

namespace tenferro::linalg {
namespace detail {
namespace {

struct PinvParams {
  bool hermitian = false;
  double atol = 0;        // absolute cutoff (0: none)
  bool has_rtol = false;  // else PyTorch's default (see pinv_rtol)
  double rtol = 0;
  bool operator==(const PinvParams&) const = default;
};
std::size_t hash_value(const PinvParams& p) {
  std::size_t h = std::hash<double>{}(p.atol);
  h = h * 31 + std::hash<double>{}(p.rtol);
  return h * 4 + (p.hermitian ? 1u : 0u) + (p.has_rtol ? 2u : 0u);
}

// PyTorch: rtol defaults to eps * max(m, n), or to 0 when only atol > 0 is given.
template <class R>
double pinv_rtol(const PinvParams& p, std::int64_t m, std::int64_t n) {
  if (p.has_rtol) return p.rtol;
  if (p.atol > 0) return 0.0;
  return static_cast<double>(std::numeric_limits<R>::epsilon()) *
         static_cast<double>(std::max(m, n));
}

class Pinv final : public LinalgOp<Pinv, PinvParams> {
 public:
  static constexpr std::string_view kFamily = "tenferro.linalg_pinv.v1";
  using LinalgOp::LinalgOp;
  std::size_t input_count() const override { return 1; }
  std::size_t output_count() const override { return 1; }
  std::string describe() const override {
    return tenferro::detail::cat("pinv(hermitian=", params().hermitian, ", atol=", params().atol,
                                 ", rtol=", params().has_rtol ? params().rtol : -1.0, ")");
  }
  InferenceResult infer(std::span<const TensorMeta> in) const override {
    std::vector<ShapeConstraint> cs;
    require_floating("pinv", in[0], "A");
    if (params().hermitian) {
      require_square("pinv", in[0], cs, "A (hermitian=true)");
    } else {
      require_matrix("pinv", in[0], "A");
    }
    TensorMeta out = in[0];
    std::swap(out.shape[0], out.shape[1]);
    return {{out}, std::move(cs)};
  }
  std::vector<Tensor> execute(Backend& backend, std::span<const Tensor> in,
                              Workspaces&) const override;
  const RuleSet& ad_rules() const override { return rules(); }
  static const RuleSet& rules();
};

template <class T>
T cj(T x) {
  if constexpr (lapack::is_complex_v<T>) {
    return std::conj(x);
  } else {
    return x;
  }
}

// P (n x m) = sum over kept l of v_l w_l u_l^H for one compact m x n matrix.
template <class T>
void pinv_one(const PinvParams& p, const T* a_in, T* out, std::int64_t m, std::int64_t n,
              std::int64_t batch, lapack::LapackWorkspace<T>& ws) {
  using R = lapack::real_t<T>;
  const std::size_t mn = static_cast<std::size_t>(m * n);
  std::fill(out, out + mn, T(0));
  if (m == 0 || n == 0) return;
  std::vector<T> a(a_in, a_in + mn);
  if (!lapack::all_finite(a.data(), static_cast<std::int64_t>(mn))) {
    numerical_failure(ErrorKind::NoConvergence, "pinv", batch, "the matrix has non-finite entries");
  }
  const double rtol = pinv_rtol<R>(p, m, n);
  const auto fm = static_cast<lapack::fint>(m), fn = static_cast<lapack::fint>(n);
  if (p.hermitian) {  // m == n: A = V diag(w) V^H
    std::vector<R> w(static_cast<std::size_t>(n));
    const lapack::fint info = lapack::heevd(ws, 'V', 'L', fn, a.data(), w.data());
    if (info != 0) {
      numerical_failure(ErrorKind::NoConvergence, "pinv", batch,
                        "the Hermitian eigensolver did not converge");
    }
    double wmax = 0;
    for (R v : w) wmax = std::max(wmax, static_cast<double>(std::abs(v)));
    const double tol = std::max(p.atol, rtol * wmax);
    for (std::int64_t l = 0; l < n; ++l) {
      const R wl = w[static_cast<std::size_t>(l)];
      if (!(static_cast<double>(std::abs(wl)) > tol)) continue;
      const R inv = R(1) / wl;
      for (std::int64_t j = 0; j < n; ++j) {
        const T c = inv * cj(a[static_cast<std::size_t>(j + l * n)]);
        for (std::int64_t i = 0; i < n; ++i)
          out[i + j * n] += a[static_cast<std::size_t>(i + l * n)] * c;
      }
    }
    return;
  }
  const std::int64_t k = std::min(m, n);
  std::vector<R> s(static_cast<std::size_t>(k));
  std::vector<T> u(static_cast<std::size_t>(m * k)), vt(static_cast<std::size_t>(k * n));
  const lapack::fint info = lapack::gesdd(ws, 'S', fm, fn, a.data(), s.data(), u.data(), fm,
                                          vt.data(), static_cast<lapack::fint>(k));
  if (info != 0) {
    numerical_failure(ErrorKind::NoConvergence, "pinv", batch, "the SVD did not converge");
  }
  const double tol = std::max(p.atol, rtol * static_cast<double>(s[0]));
  for (std::int64_t l = 0; l < k; ++l) {
    const R sl = s[static_cast<std::size_t>(l)];
    if (!(static_cast<double>(sl) > tol)) continue;
    const R inv = R(1) / sl;
    // out[i, j] += conj(vt[l, i]) / s_l * conj(u[j, l])   (out is n x m)
    for (std::int64_t j = 0; j < m; ++j) {
      const T c = inv * cj(u[static_cast<std::size_t>(j + l * m)]);
      for (std::int64_t i = 0; i < n; ++i) {
        out[i + j * n] += cj(vt[static_cast<std::size_t>(l + i * k)]) * c;
      }
    }
  }
}

std::vector<Tensor> Pinv::execute(Backend& backend, std::span<const Tensor> in,
                                  Workspaces& workspaces) const {
  const Tensor a = in[0].is_contiguous() ? in[0] : compact_copy(in[0], backend);
  const Shape& s = a.shape();
  Shape os = s;
  std::swap(os[0], os[1]);
  Tensor out = backend.empty(os, a.dtype());
  const std::int64_t m = s[0], n = s[1], batches = batch_count(s);
  dispatch_floating(a.dtype(), [&]<class T>() {
    const T* A = a.data<T>();
    T* P = static_cast<T*>(out.raw_data());
    const auto pool = workspaces.pool<lapack::LapackWorkspace<T>>();
    for_each_batch(backend, batches, 10 * m * n * std::max<std::int64_t>(1, std::min(m, n)),
                   [&](std::int64_t b) {
                     const auto ws = pool->lease();
                     pinv_one<T>(params(), A + b * m * n, P + b * m * n, m, n, b, *ws);
                   });
  });
  return {out};
}

// PyTorch's choice between the two algebraically equal forms (m <= n or m > n).
bool wide(Emitter& e, Val a) {
  const TensorMeta m = e.meta(a);
  const auto r = m.shape[0].try_constant(), c = m.shape[1].try_constant();
  return !(r && c) || *r <= *c;
}

// pinv_jvp(A, P, dA).
std::vector<MaybeVal> pinv_jvp(const RuleArgs& a, std::span<const MaybeVal> t) {
  if (!t[0]) return {std::nullopt};
  Emitter& e = a.emitter;
  const Val A = a.inputs[0], P = a.outputs[0], dA = *t[0];
  const Val dAh = mH(e, dA), Ph = mH(e, P);
  if (wide(e, A)) {
    const Val K = mm(e, Ph, dAh);
    const Val t1 = mm(e, P, e.sub(e.sub(K, mH(e, K)), mm(e, K, mm(e, A, P))));
    const Val t2 = mm(e, e.sub(dAh, mm(e, P, mm(e, A, dAh))), mm(e, Ph, P));
    return {e.add(t1, t2)};
  }
  const Val K = mm(e, P, dA), Kh = mH(e, K);
  const Val t1 = mm(e, e.sub(e.sub(Kh, K), mm(e, mm(e, P, A), Kh)), P);
  const Val t2 = mm(e, mm(e, P, Ph), e.sub(dAh, mm(e, mm(e, dAh, A), P)));
  return {e.add(t1, t2)};
}

// pinv_backward(G, P, A).
std::vector<MaybeVal> pinv_vjp(const RuleArgs& a, std::span<const MaybeVal> ct) {
  if (!ct[0]) return {std::nullopt};
  Emitter& e = a.emitter;
  const Val A = a.inputs[0], P = a.outputs[0];
  const Val Gh = mH(e, *ct[0]), Ph = mH(e, P);
  if (wide(e, A)) {
    const Val K = mm(e, Gh, P);
    const Val KPh = mm(e, K, Ph);
    Val r = e.sub(KPh, mH(e, mm(e, P, K)));
    r = e.sub(r, mm(e, mm(e, A, P), KPh));
    r = e.add(r, mm(e, mm(e, Ph, P), e.sub(Gh, mm(e, K, A))));
    return {r};
  }
  const Val K = mm(e, P, Gh);
  const Val PhK = mm(e, Ph, K);
  Val r = e.neg(mH(e, mm(e, K, P)));
  r = e.add(r, mm(e, mm(e, e.sub(Gh, mm(e, A, K)), P), Ph));
  r = e.add(r, PhK);
  r = e.sub(r, mm(e, mm(e, PhK, P), A));
  return {r};
}

const RuleSet& Pinv::rules() {
  static const RuleSet r = [] {
    RuleSet s;
    s.jvp = pinv_jvp;
    s.vjp = pinv_vjp;
    s.residuals = ad::Residuals::of({0}, {0});
    return s;
  }();
  return r;
}

PinvParams pinv_params(const char* op, std::optional<double> atol, std::optional<double> rtol,
                       bool hermitian) {
  for (const auto& [v, what] : {std::pair{atol, "atol"}, std::pair{rtol, "rtol"}}) {
    if (v && (std::isnan(*v) || *v < 0)) {
      fail(ErrorKind::InvalidArgument, op, what, " must be a non-negative number, got ", *v);
    }
  }
  return PinvParams{hermitian, atol.value_or(0.0), rtol.has_value(), rtol.value_or(0.0)};
}

}  // namespace

void register_pinv(Registry& r) {
  r.add<Pinv>();
}

template <LinalgTensor T>
T pinv_impl(const T& a, const PinvParams& p) {
  return apply(std::make_shared<const Pinv>(p), {a})[0];
}

}  // namespace detail

template <LinalgTensor T>
T pinv(const T& a, std::optional<double> atol, std::optional<double> rtol, bool hermitian) {
  return detail::pinv_impl(a, detail::pinv_params("pinv", atol, rtol, hermitian));
}

Tensor pinv(const Tensor& a, std::optional<double> atol, std::optional<double> rtol, bool hermitian,
            Backend& backend) {
  const detail::Pinv op(detail::pinv_params("pinv", atol, rtol, hermitian));
  return detail::apply_direct(op, {a}, backend)[0];
}

template <LinalgTensor T>
LstsqResult<T> lstsq_full(const T& a, const T& b, std::optional<double> rcond,
                          std::string_view driver) {
  const char* op = "lstsq";
  if (!driver.empty() && driver != "gels" && driver != "gelsy" && driver != "gelsd" &&
      driver != "gelss") {
    fail(ErrorKind::InvalidArgument, op,
         "driver must be 'gels', 'gelsy', 'gelsd' or 'gelss', got '", std::string(driver), "'");
  }
  if (rcond && (std::isnan(*rcond) || *rcond < 0)) {
    fail(ErrorKind::InvalidArgument, op, "rcond must be a non-negative number, got ", *rcond);
  }
  detail::require_floating_tensor(a, op);
  detail::require_floating_tensor(b, op);
  if (a.dtype() != b.dtype()) {
    fail(ErrorKind::DTypeMismatch, op, "A and B must have the same dtype, got ", name(a.dtype()),
         " and ", name(b.dtype()));
  }
  if (a.rank() < 2 || b.rank() < 2) {
    fail(ErrorKind::RankMismatch, op,
         "A [m, n, batch...] and B [m, k, batch...] must be matrices, got ", detail::shape_str(a),
         " and ", detail::shape_str(b));
  }
  const auto ma = detail::extent(a, 0), mb = detail::extent(b, 0);
  if (ma && mb && *ma != *mb) {
    fail(ErrorKind::ShapeMismatch, op, "A and B must have the same number of rows, got ",
         detail::shape_str(a), " and ", detail::shape_str(b));
  }
  const std::string_view drv = driver.empty() ? std::string_view("gelsy") : driver;
  LstsqResult<T> out;
  out.solution =
      matmul(detail::pinv_impl(a, detail::pinv_params(op, std::nullopt, rcond, false)), b);
  const auto n = detail::extent(a, 1);
  const T rflat = reshape(is_complex(a.dtype()) ? real(a) : a, {-1});
  const T empty_real = slice(rflat, Shape{0}, Shape{0});  // [0], as PyTorch's empty outputs
  const T empty_int = cast(empty_real, DType::I64);
  if (drv != "gelsy" && ma && n && *ma > *n) {
    const T r = matmul(a, out.solution) - b;
    const T r2 = is_complex(r.dtype()) ? square(real(r)) + square(imag(r)) : square(r);
    out.residuals = sum(r2, {0});
  } else {
    out.residuals = empty_real;
  }
  if (drv == "gels") {
    out.rank = empty_int;
    out.singular_values = empty_real;
    return out;
  }
  // The rank: singular values above rcond * the largest (rcond's default
  // eps * max(m, n), PyTorch's), from the SVD (whatever the driver).
  const T s = svdvals(a);  // [min(m, n), batch...], descending
  double tol = 0;
  if (rcond) {
    tol = *rcond;
  } else if (ma && n) {
    const double eps = a.dtype() == DType::F32 || a.dtype() == DType::C64
                           ? static_cast<double>(std::numeric_limits<float>::epsilon())
                           : std::numeric_limits<double>::epsilon();
    tol = eps * static_cast<double>(std::max(*ma, *n));
  }
  if (detail::reduces_empty(a, {0}) || detail::reduces_empty(a, {1})) {
    out.rank = cast(sum(s, {0}), DType::I64);  // zeros [batch...]
  } else {
    const T cutoff = amax(s, {0}, true) * scalar_like(s, Scalar(tol));
    out.rank = sum(convert(gt(s, cutoff), DType::I64), {0});
  }
  out.singular_values = (drv == "gelsd" || drv == "gelss") ? s : empty_real;
  return out;
}

template <LinalgTensor T>
std::pair<T, T> lstsq(const T& a, const T& b, std::optional<double> rcond,
                      std::string_view driver) {
  LstsqResult<T> r = lstsq_full(a, b, rcond, driver);
  return {std::move(r.solution), std::move(r.residuals)};
}

#define TF_INSTANTIATE(T)                                                                         \
  template T pinv<T>(const T&, std::optional<double>, std::optional<double>, bool);               \
  template std::pair<T, T> lstsq<T>(const T&, const T&, std::optional<double>, std::string_view); \
  template LstsqResult<T> lstsq_full<T>(const T&, const T&, std::optional<double>,                \
                                        std::string_view);
TF_INSTANTIATE(EagerTensor)
TF_INSTANTIATE(TracedTensor)
#undef TF_INSTANTIATE

}  // namespace tenferro::linalg
