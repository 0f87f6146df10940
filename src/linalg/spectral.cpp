// The spectral part of the linalg family: the gauge check op, the emitter
// helpers the spectral rules share, registration and the public functions.
// The decompositions live in spectral_svd.cpp, spectral_eigh.cpp and
// spectral_eig.cpp.

#include "tenferro/linalg/spectral.hpp"

#include <cmath>
#include <limits>
#include <sstream>
#include <type_traits>

#include "linalg/spectral_common.hpp"

namespace tenferro::linalg {
namespace detail {

std::size_t hash_value(const AdParams& p) {
  return hash_combine(
      hash_combine(hash_combine(std::hash<double>{}(p.eta), std::hash<double>{}(p.gauge_tolerance)),
                   hash_combine(std::hash<double>{}(p.degeneracy_tolerance),
                                std::hash<double>{}(p.component_tolerance))),
      p.regularised ? 1u : 0u);
}

AdParams ad_params(std::string_view op, const SpectralOptions& o) {
  if (!(o.eta > 0.0) || !std::isfinite(o.eta)) {
    fail(ErrorKind::InvalidArgument, std::string(op),
         "SpectralOptions::eta must be finite and > 0, got ", o.eta);
  }
  if (!(o.gauge_tolerance >= 0.0)) {
    fail(ErrorKind::InvalidArgument, std::string(op),
         "SpectralOptions::gauge_tolerance must be >= 0, got ", o.gauge_tolerance);
  }
  if (!(o.degeneracy_tolerance >= 0.0) || !std::isfinite(o.degeneracy_tolerance)) {
    fail(ErrorKind::InvalidArgument, std::string(op),
         "SpectralOptions::degeneracy_tolerance must be finite and >= 0, got ",
         o.degeneracy_tolerance);
  }
  if (!(o.component_tolerance >= 0.0) || !std::isfinite(o.component_tolerance)) {
    fail(ErrorKind::InvalidArgument, std::string(op),
         "SpectralOptions::component_tolerance must be finite and >= 0, got ",
         o.component_tolerance);
  }
  return {o.policy == GaugePolicy::Regularised, o.eta, o.gauge_tolerance, o.degeneracy_tolerance,
          o.component_tolerance};
}

namespace {

// ---- gauge check ---------------------------------------------------------------------

struct GaugeParams {
  GaugeOwner owner = GaugeOwner::Svd;
  double tolerance = 1e-2;
  bool operator==(const GaugeParams&) const = default;
};
std::size_t hash_value(const GaugeParams& p) {
  return hash_combine(static_cast<std::size_t>(p.owner), std::hash<double>{}(p.tolerance));
}

const char* owner_name(GaugeOwner o) {
  switch (o) {
    case GaugeOwner::Svd:
      return "svd";
    case GaugeOwner::Eigh:
      return "eigh";
    case GaugeOwner::Eig:
      return "eig";
  }
  return "linalg";
}

class GaugeCheck final : public LinalgOp<GaugeCheck, GaugeParams> {
 public:
  static constexpr std::string_view kFamily = "tenferro.linalg_gauge_check.v1";
  using LinalgOp::LinalgOp;
  std::size_t input_count() const override { return 2; }
  std::size_t output_count() const override { return 1; }
  InferenceResult infer(std::span<const TensorMeta> in) const override {
    if (in[1].dtype != DType::F32 && in[1].dtype != DType::F64) {
      fail(ErrorKind::DTypeMismatch, "gauge_check", "the phase term must be f32 or f64, got ",
           tenferro::name(in[1].dtype));
    }
    return {{in[0]}, {}};
  }
  std::vector<Tensor> execute(Backend& backend, std::span<const Tensor> in,
                              Workspaces&) const override {
    double worst = 0.0;
    std::int64_t where = 0, at = 0;
    const auto scan = [&](const auto& v) {
      for (const auto x : v) {
        const double a = std::abs(static_cast<double>(x));
        if (a > worst) {  // NaN (from a NaN cotangent) propagates instead
          worst = a;
          where = at;
        }
        ++at;
      }
    };
    if (in[1].dtype() == DType::F32) {
      scan(in[1].to_vector<float>());
    } else {
      scan(in[1].to_vector<double>());
    }
    const auto& p = params();
    if (worst > p.tolerance) {
      const std::int64_t k = in[1].rank() > 0 ? std::max<std::int64_t>(1, in[1].shape()[0]) : 1;
      const bool svd = p.owner == GaugeOwner::Svd;
      const char* what = svd ? "singular vectors: |Im diag(U^H gU) + Im diag(V^H gV)|"
                             : "eigenvectors: |Im diag(V^H gV)|";
      const char* fix =
          svd ? "|U|, |Vh|, U diag(S) Vh"
              : (p.owner == GaugeOwner::Eigh ? "|V|, V diag(L) V^H" : "|V|, V diag(L) V^-1");
      fail(ErrorKind::GaugeIllDefined, owner_name(p.owner),
           "the loss depends on the phase of the complex ", what, " reaches ", worst,
           " (tolerance ", p.tolerance, ") at vector ", where % k, " of matrix ", where / k,
           " of the batch; each vector is defined only up to a factor e^{i phi}, so use a loss "
           "invariant under it (e.g. ",
           fix, ")");
    }
    return {compact_copy(in[0], backend)};
  }
  const RuleSet& ad_rules() const override { return rules(); }
  static const RuleSet& rules() {
    static const RuleSet r = [] {
      RuleSet s;
      s.jvp = [](const RuleArgs&, std::span<const MaybeVal> t) -> std::vector<MaybeVal> {
        return {t[0]};
      };
      s.vjp = [](const RuleArgs&, std::span<const MaybeVal> ct) -> std::vector<MaybeVal> {
        return {ct[0], std::nullopt};
      };
      s.residuals = ad::Residuals::none();
      return s;
    }();
    return r;
  }
};

// ---- degeneracy check ----------------------------------------------------------------

struct DegeneracyParams {
  GaugeOwner owner = GaugeOwner::Svd;
  double tolerance = 1e-2;
  bool tangent = false;
  bool operator==(const DegeneracyParams&) const = default;
};
std::size_t hash_value(const DegeneracyParams& p) {
  return hash_combine(static_cast<std::size_t>(p.owner) * 2 + (p.tangent ? 1u : 0u),
                      std::hash<double>{}(p.tolerance));
}

std::vector<double> as_doubles(const Tensor& t) {
  if (t.dtype() == DType::F32) {
    const auto v = t.to_vector<float>();
    return {v.begin(), v.end()};
  }
  return t.to_vector<double>();
}

class DegeneracyCheck final : public LinalgOp<DegeneracyCheck, DegeneracyParams> {
 public:
  static constexpr std::string_view kFamily = "tenferro.linalg_degeneracy_check.v1";
  using LinalgOp::LinalgOp;
  std::size_t input_count() const override { return 4; }
  std::size_t output_count() const override { return 1; }
  InferenceResult infer(std::span<const TensorMeta> in) const override {
    for (std::size_t i = 1; i < 4; ++i) {
      if (in[i].dtype != DType::F32 && in[i].dtype != DType::F64) {
        fail(ErrorKind::DTypeMismatch, "degeneracy_check",
             "the component and gap matrices must be f32 or f64, got ",
             tenferro::name(in[i].dtype));
      }
    }
    return {{in[0]}, {}};
  }
  std::vector<Tensor> execute(Backend& backend, std::span<const Tensor> in,
                              Workspaces&) const override {
    const auto& p = params();
    const std::vector<double> c2 = as_doubles(in[1]), all = as_doubles(in[3]);
    const std::int64_t k = in[1].rank() > 0 ? std::max<std::int64_t>(1, in[1].shape()[0]) : 1;
    const auto kk = static_cast<std::size_t>(k * k);
    // Per matrix: the largest masked component against the largest component overall.
    for (std::size_t b0 = 0; b0 < c2.size(); b0 += kk) {
      double worst = 0.0, scale = 0.0;
      std::size_t where = b0;
      for (std::size_t i = b0; i < b0 + kk && i < c2.size(); ++i) {
        scale = std::max(scale, all[i]);
        if (c2[i] > worst) {  // NaN (from a NaN cotangent) propagates instead
          worst = c2[i];
          where = i;
        }
      }
      if (worst > p.tolerance * p.tolerance * scale) report(in, where, k, worst, scale);
    }
    return {compact_copy(in[0], backend)};
  }
  [[noreturn]] void report(std::span<const Tensor> in, std::size_t where, std::int64_t k,
                           double worst, double scale) const {
    const auto& p = params();
    const auto w = static_cast<std::int64_t>(where);
    const double gap = as_doubles(in[2])[where];
    const bool svd = p.owner == GaugeOwner::Svd;
    const char* fix = svd ? "the singular values alone, U Vh, or the projector U_k U_k^H onto "
                            "the whole degenerate subspace"
                          : "the eigenvalues alone, or the projector V_k V_k^H onto the whole "
                            "degenerate subspace";
    const char* kind = p.tangent ? "tangent" : "cotangent";
    const std::int64_t i = w % k, j = (w / k) % k;
    std::ostringstream sizes;
    sizes << kind << " component " << std::sqrt(worst) << " > " << p.tolerance << " x the largest "
          << kind << " component " << std::sqrt(scale);
    if (i == j) {  // a zero singular value (svd's 1 / s factors)
      fail(ErrorKind::GaugeIllDefined, owner_name(p.owner), "zero singular value ", i,
           " of matrix ", w / (k * k), " of the batch (s = ", gap, ", ", sizes.str(),
           "): it is not differentiable and its singular vectors are not determined by A (rank "
           "deficient), so the derivative is not defined; use GaugePolicy::Regularised "
           "(Lorentzian-broadened 1 / s) or a loss that does not depend on that value and its "
           "vectors");
    }
    fail(ErrorKind::GaugeIllDefined, owner_name(p.owner), "degenerate ",
         svd ? "singular values" : "eigenvalues", " ", i, " and ", j, " of matrix ", w / (k * k),
         " of the batch (gap ", gap, ", ", sizes.str(), "): the ",
         p.tangent ? "derivative of the vectors depends" : "loss depends",
         " on the choice of basis inside the degenerate subspace or on how the values split, so "
         "the derivative is not defined; use GaugePolicy::Regularised (Lorentzian-broadened "
         "gaps) or a loss invariant under rotations within the subspace (e.g. ",
         fix, ")");
  }
  const RuleSet& ad_rules() const override { return rules(); }
  static const RuleSet& rules() {
    static const RuleSet r = [] {
      RuleSet s;
      s.jvp = [](const RuleArgs&, std::span<const MaybeVal> t) -> std::vector<MaybeVal> {
        return {t[0]};
      };
      s.vjp = [](const RuleArgs&, std::span<const MaybeVal> ct) -> std::vector<MaybeVal> {
        return {ct[0], std::nullopt, std::nullopt, std::nullopt};
      };
      s.residuals = ad::Residuals::none();
      return s;
    }();
    return r;
  }
};

// ---- helpers -------------------------------------------------------------------------

SymShape square_of(const SymShape& v) {
  SymShape s;
  s.push_back(v[0]);
  s.insert(s.end(), v.begin(), v.end());
  return s;
}

Axes shifted_dims(std::int64_t rank, std::int64_t first) {
  Axes d{first};
  for (std::int64_t i = 1; i < rank; ++i) d.push_back(i + 1);
  return d;
}

Val slice_axis(Emitter& e, Val x, std::int64_t axis, std::int64_t k) {
  const SymShape s = e.meta(x).shape;
  Shape start(s.size(), 0), limit, stride(s.size(), 1);
  for (const auto& d : s) limit.push_back(constant_extent("linalg", d));
  limit[static_cast<std::size_t>(axis)] = k;
  const Val in[1] = {x};
  return e.emit1(make_primitive(prim::Slice{start, limit, stride}), in);
}

Val pad_axis(Emitter& e, Val x, std::int64_t axis, std::int64_t extra) {
  const std::size_t r = e.meta(x).shape.size();
  Shape low(r, 0), high(r, 0), interior(r, 0);
  high[static_cast<std::size_t>(axis)] = extra;
  const Val in[1] = {x};
  return e.emit1(make_primitive(prim::Pad{low, high, interior, Scalar(0.0)}), in);
}

// sum over axis 0 of |d|^2 as a real [batch...] value, broadcast to [k, k, batch...].
Val scale2(Emitter& e, Val d, const SymShape& square) {
  const Val a2 = is_complex(e.dtype_of(d)) ? e.real(e.mul(e.conj(d), d)) : e.mul(d, d);
  const Val s = e.sum(a2, Axes{0});
  Axes dims;
  for (std::size_t i = 2; i < square.size(); ++i) dims.push_back(static_cast<std::int64_t>(i));
  return e.broadcast_in_dim(s, square, dims);
}

}  // namespace

std::shared_ptr<const LinalgOpBase> gauge_check_op(GaugeOwner owner, double tolerance) {
  return std::make_shared<const GaugeCheck>(GaugeParams{owner, tolerance});
}

std::shared_ptr<const LinalgOpBase> degeneracy_check_op(GaugeOwner owner, double tolerance,
                                                        bool tangent) {
  return std::make_shared<const DegeneracyCheck>(DegeneracyParams{owner, tolerance, tangent});
}

Val bcast_row(Emitter& e, Val v, std::optional<Val> like) {
  const SymShape s = e.meta(v).shape;
  const SymShape out = like ? e.meta(*like).shape : square_of(s);
  return e.broadcast_in_dim(v, out, shifted_dims(static_cast<std::int64_t>(s.size()), 1));
}

Val bcast_col(Emitter& e, Val v, std::optional<Val> like) {
  const SymShape s = e.meta(v).shape;
  const SymShape out = like ? e.meta(*like).shape : square_of(s);
  return e.broadcast_in_dim(v, out, shifted_dims(static_cast<std::int64_t>(s.size()), 0));
}

Val as_dtype(Emitter& e, Val x, DType dtype) {
  return e.dtype_of(x) == dtype ? x : e.convert(x, dtype);
}

Val sym2(Emitter& e, Val x) {
  return e.add(x, mH(e, x));
}
Val skew2(Emitter& e, Val x) {
  return e.sub(x, mH(e, x));
}

Val imag_diag(Emitter& e, Val x) {
  const Val d = diag(e, x);
  const Val in[1] = {d};
  return e.emit1(make_primitive(prim::Unary{UnaryOp::Imag}), in);
}

namespace {
Val abs2(Emitter& e, Val x) {
  return is_complex(e.dtype_of(x)) ? e.real(e.mul(e.conj(x), x)) : e.mul(x, x);
}
}  // namespace

GapFactors gap_factors(Emitter& e, Val d, const AdParams& ad, std::optional<Val> reported,
                       bool sums) {
  const DType dt = e.dtype_of(d);
  const DType rt = real_of(dt);
  // D(i, j) = d(j) - d(i), or d(j) + d(i) for `sums`
  const Val D =
      sums ? e.add(bcast_row(e, d), bcast_col(e, d)) : e.sub(bcast_row(e, d), bcast_col(e, d));
  const SymShape sq = e.meta(D).shape;
  if (ad.regularised) {
    const Val eta2 = e.add(e.scale(scale2(e, d, sq), ad.eta * ad.eta), e.full(sq, 1e-30, rt));
    const Val den = as_dtype(e, e.add(abs2(e, D), eta2), dt);
    return {e.div(is_complex(dt) ? e.conj(D) : D, den), std::nullopt, std::nullopt};
  }
  // |D|^2 <= tol^2 ||d||^2 off the diagonal marks a degenerate pair (every pair of a
  // zero vector). The masks are piecewise constant, so the rules stay differentiable.
  const double eps = rt == DType::F32 ? std::numeric_limits<float>::epsilon()
                                      : std::numeric_limits<double>::epsilon();
  const double tol = std::max(ad.degeneracy_tolerance, 100.0 * eps);
  const Val a2 = abs2(e, D), thr = e.scale(scale2(e, d, sq), tol * tol);
  const Val eye = diag_embed(e, e.ones_like(d));
  const Val off = e.binary(BinaryOp::Eq, eye, e.zeros_like(eye));
  const Val keep = e.binary(BinaryOp::LogicalAnd, e.binary(BinaryOp::Gt, a2, thr), off);
  const Val F =
      e.select(keep, e.div(e.ones_like(D), e.select(keep, D, e.ones_like(D))), e.zeros_like(D));
  GapFactors g{F, e.binary(BinaryOp::LogicalAnd, e.binary(BinaryOp::Le, a2, thr), off),
               std::nullopt};
  const Val r = reported ? *reported : d;
  const Val R = e.sub(bcast_row(e, r), bcast_col(e, r));
  g.gap = is_complex(e.dtype_of(R)) ? e.unary(UnaryOp::Sqrt, abs2(e, R)) : e.unary(UnaryOp::Abs, R);
  return g;
}

Val value_split(Emitter& e, Val gv) {
  return e.sub(bcast_row(e, gv), bcast_col(e, gv));
}

Val check_degenerate(Emitter& e, GaugeOwner owner, bool tangent, Val x,
                     const std::vector<Val>& components, const GapFactors& g, const AdParams& ad,
                     const std::vector<Val>& squared, const std::vector<Val>& references) {
  if (!g.degenerate) return x;
  std::optional<Val> c2;
  for (const Val c : components) {
    const Val a = abs2(e, c);
    c2 = c2 ? e.add(*c2, a) : a;
  }
  for (const Val a : squared) c2 = c2 ? e.add(*c2, a) : a;
  if (!c2) return x;
  const Val masked = e.select(*g.degenerate, *c2, e.zeros_like(*c2));
  Val all = *c2;
  for (const Val r : references) all = e.add(all, abs2(e, r));
  const double eps = e.dtype_of(*c2) == DType::F32 ? std::numeric_limits<float>::epsilon()
                                                   : std::numeric_limits<double>::epsilon();
  const double tol = std::max(ad.component_tolerance, std::sqrt(eps));
  return emit(e, degeneracy_check_op(owner, tol, tangent), {x, masked, *g.gap, all})[0];
}

GapFactors inverse_factors(Emitter& e, Val s, const AdParams& ad) {
  if (ad.regularised) return {safe_inverse(e, s, ad), std::nullopt, std::nullopt};
  const DType rt = e.dtype_of(s);
  const double eps = rt == DType::F32 ? std::numeric_limits<float>::epsilon()
                                      : std::numeric_limits<double>::epsilon();
  const double tol = std::max(ad.degeneracy_tolerance, 100.0 * eps);
  const Val a2 = e.mul(s, s);
  const Val thr = e.scale(diag(e, scale2(e, s, e.meta(bcast_row(e, s)).shape)), tol * tol);
  const Val keep = e.binary(BinaryOp::Gt, a2, thr);
  const Val inv =
      e.select(keep, e.div(e.ones_like(s), e.select(keep, s, e.ones_like(s))), e.zeros_like(s));
  const Val eye = diag_embed(e, e.ones_like(s));
  const Val on = e.binary(BinaryOp::Ne, eye, e.zeros_like(eye));
  const Val zero = bcast_row(e, e.binary(BinaryOp::Le, a2, thr));
  return {inv, e.binary(BinaryOp::LogicalAnd, zero, on), diag_embed(e, s)};
}

Val sum_squares(Emitter& e, Val x, std::int64_t axis) {
  return e.sum(abs2(e, x), Axes{axis});
}

Val safe_inverse(Emitter& e, Val s, const AdParams& ad) {
  if (!ad.regularised) return e.div(e.ones_like(s), s);
  const SymShape vs = e.meta(s).shape;
  const Val t = e.sum(e.mul(s, s), Axes{0});
  Axes dims;
  for (std::size_t i = 1; i < vs.size(); ++i) dims.push_back(static_cast<std::int64_t>(i - 1));
  const Val eta2 = e.add(e.scale(e.broadcast_in_dim(t, vs, dims), ad.eta * ad.eta),
                         e.full(vs, 1e-30, e.dtype_of(s)));
  return e.div(s, e.add(e.mul(s, s), eta2));
}

Val first_cols(Emitter& e, Val x, std::int64_t k) {
  return slice_axis(e, x, 1, k);
}
Val first_rows(Emitter& e, Val x, std::int64_t k) {
  return slice_axis(e, x, 0, k);
}
Val pad_cols(Emitter& e, Val x, std::int64_t extra) {
  return pad_axis(e, x, 1, extra);
}
Val pad_rows(Emitter& e, Val x, std::int64_t extra) {
  return pad_axis(e, x, 0, extra);
}

std::int64_t constant_extent(std::string_view op, const SymDim& d) {
  const auto c = d.try_constant();
  if (!c) {
    fail(ErrorKind::Unsupported, std::string(op),
         "this derivative needs constant matrix extents (full_matrices with m != n); bind the "
         "symbolic extents or use full_matrices=false");
  }
  return *c;
}

void register_spectral(Registry& r) {
  r.add<GaugeCheck>();
  r.add<DegeneracyCheck>();
  register_svd(r);
  register_eigh(r);
  register_eig(r);
}

}  // namespace detail

// ---- public functions --------------------------------------------------------------

namespace {
bool lower_of(char uplo, const char* op) {
  if (uplo == 'L' || uplo == 'l') return true;
  if (uplo == 'U' || uplo == 'u') return false;
  fail(ErrorKind::InvalidArgument, op, "uplo must be 'L' or 'U', got '", std::string(1, uplo), "'");
}
}  // namespace

template <LinalgTensor T>
SvdResult<T> svd(const T& a, bool full_matrices, const SpectralOptions& options) {
  const auto ad = detail::ad_params("svd", options);
  auto out = detail::apply(
      detail::svd_op(full_matrices ? detail::SvdMode::Full : detail::SvdMode::Reduced, ad), {a});
  return {out[0], out[1], out[2]};
}

SvdResult<Tensor> svd(const Tensor& a, bool full_matrices, Backend& backend) {
  const auto op = detail::svd_op(full_matrices ? detail::SvdMode::Full : detail::SvdMode::Reduced);
  auto out = detail::apply_direct(*op, {a}, backend);
  return {out[0], out[1], out[2]};
}

namespace {
// Whether an eager call will be recorded for AD. Then the values-only
// decompositions compute their vectors in the forward pass (one LAPACK call
// with vectors, kept as residuals) instead of recomputing them in the
// reverse pass, as PyTorch does; the values and their derivatives are the
// same.
template <LinalgTensor T>
bool recorded_eagerly(const T& a) {
  if constexpr (std::is_same_v<T, EagerTensor>) {
    return a.defined() && a.requires_grad() &&
           grad_recording_enabled();  // undefined: apply() says so
  } else {
    return false;
  }
}
}  // namespace

template <LinalgTensor T>
T svdvals(const T& a) {
  if (recorded_eagerly(a)) return svd(a, false, SpectralOptions{}).S;
  return detail::apply(detail::svd_op(detail::SvdMode::Values), {a})[0];
}

Tensor svdvals(const Tensor& a, Backend& backend) {
  return detail::apply_direct(*detail::svd_op(detail::SvdMode::Values), {a}, backend)[0];
}

template <LinalgTensor T>
EigResult<T> eigh(const T& a, char uplo, const SpectralOptions& options) {
  const bool lower = lower_of(uplo, "eigh");
  auto out = detail::apply(detail::eigh_op(lower, true, detail::ad_params("eigh", options)), {a});
  return {out[0], out[1]};
}

EigResult<Tensor> eigh(const Tensor& a, char uplo, Backend& backend) {
  auto out = detail::apply_direct(*detail::eigh_op(lower_of(uplo, "eigh"), true), {a}, backend);
  return {out[0], out[1]};
}

template <LinalgTensor T>
T eigvalsh(const T& a, char uplo) {
  const bool lower = lower_of(uplo, "eigvalsh");
  if (recorded_eagerly(a)) {
    return detail::apply(
        detail::eigh_op(lower, true, detail::ad_params("eigvalsh", SpectralOptions{})), {a})[0];
  }
  return detail::apply(detail::eigh_op(lower, false), {a})[0];
}

Tensor eigvalsh(const Tensor& a, char uplo, Backend& backend) {
  return detail::apply_direct(*detail::eigh_op(lower_of(uplo, "eigvalsh"), false), {a}, backend)[0];
}

template <LinalgTensor T>
EigResult<T> eig(const T& a, const SpectralOptions& options) {
  auto out = detail::apply(detail::eig_op(true, detail::ad_params("eig", options)), {a});
  return {out[0], out[1]};
}

EigResult<Tensor> eig(const Tensor& a, Backend& backend) {
  auto out = detail::apply_direct(*detail::eig_op(true), {a}, backend);
  return {out[0], out[1]};
}

template <LinalgTensor T>
T eigvals(const T& a) {
  return detail::apply(detail::eig_op(false), {a})[0];
}

Tensor eigvals(const Tensor& a, Backend& backend) {
  return detail::apply_direct(*detail::eig_op(false), {a}, backend)[0];
}

#define TF_INSTANTIATE(T)                                                \
  template SvdResult<T> svd<T>(const T&, bool, const SpectralOptions&);  \
  template T svdvals<T>(const T&);                                       \
  template EigResult<T> eigh<T>(const T&, char, const SpectralOptions&); \
  template T eigvalsh<T>(const T&, char);                                \
  template EigResult<T> eig<T>(const T&, const SpectralOptions&);        \
  template T eigvals<T>(const T&);
TF_INSTANTIATE(EagerTensor)
TF_INSTANTIATE(TracedTensor)
#undef TF_INSTANTIATE

}  // namespace tenferro::linalg
