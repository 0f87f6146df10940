// Truncated SVD and eigh: the full (reduced) decomposition, then the leading
// values by magnitude. The truncation is slicing (or a gather for eigh), so
// the AD of the kept factors is the decomposition's own AD followed by the
// slice's.

#include "tenferro/linalg/truncated.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <type_traits>

#include "linalg/common.hpp"
#include "tenferro/ad/composite.hpp"

namespace tenferro::linalg {

// ---- the kept-index op (dynamic rank) -----------------------------------------------

namespace detail {
namespace {

// Every criterion of a Truncation plus the name of the rank it declares.
struct KeepParams {
  Truncation t;
  bool operator==(const KeepParams& o) const {
    return t.max_rank == o.t.max_rank && t.cutoff == o.t.cutoff &&
           t.relative_cutoff == o.t.relative_cutoff &&
           t.max_discarded_weight == o.t.max_discarded_weight && t.rank_name == o.t.rank_name;
  }
};
std::size_t hash_value(const KeepParams& p) {
  std::size_t h = std::hash<std::string>{}(p.t.rank_name);
  h = hash_combine(h, std::hash<std::int64_t>{}(p.t.max_rank));
  h = hash_combine(h, std::hash<double>{}(p.t.cutoff));
  h = hash_combine(h, std::hash<double>{}(p.t.max_discarded_weight));
  return hash_combine(h, p.t.relative_cutoff ? 1u : 0u);
}

// magnitudes [k, batch...] (real, descending per matrix) -> {keep [r], drop
// [k - r]} as i64 indices 0..r-1 and r..k-1, with r the rank the Truncation
// keeps (the largest any matrix of the batch needs): a dynamic size, at most
// min(k, max_rank), fixed when the op runs. Integer outputs: no derivative.
class TruncationKeep final : public LinalgOp<TruncationKeep, KeepParams> {
 public:
  static constexpr std::string_view kFamily = "tenferro.linalg_truncation_keep.v1";
  using LinalgOp::LinalgOp;
  std::size_t input_count() const override { return 1; }
  std::size_t output_count() const override { return 2; }
  std::string describe() const override {
    const Truncation& t = params().t;
    return tenferro::detail::cat("truncation_keep(", t.rank_name, ", max_rank=", t.max_rank,
                                 ", cutoff=", t.cutoff,
                                 t.relative_cutoff ? " relative" : " absolute",
                                 ", max_discarded_weight=", t.max_discarded_weight, ")");
  }
  InferenceResult infer(std::span<const TensorMeta> in) const override {
    const TensorMeta& m = in[0];
    if (m.dtype != DType::F32 && m.dtype != DType::F64) {
      fail(ErrorKind::DTypeMismatch, "truncation_keep", "magnitudes must be f32 or f64, got ",
           tenferro::name(m.dtype));
    }
    if (m.rank() < 1) {
      fail(ErrorKind::RankMismatch, "truncation_keep",
           "magnitudes must be [k, batch...], got a scalar");
    }
    const SymDim k = m.shape[0];
    const Truncation& t = params().t;
    const SymDim bound = t.max_rank > 0 ? min(k, SymDim(t.max_rank)) : k;
    const SymDim r = SymDim::dynamic(t.rank_name, bound);
    return {{TensorMeta{DType::I64, SymShape{r}}, TensorMeta{DType::I64, SymShape{k - r}}}, {}};
  }
  std::vector<Tensor> execute(Backend& backend, std::span<const Tensor> in,
                              Workspaces&) const override;
  const RuleSet& ad_rules() const override { return rules(); }
  static const RuleSet& rules() {
    static const RuleSet r = [] {
      RuleSet s;
      s.non_differentiable = true;
      return s;
    }();
    return r;
  }
};

}  // namespace

void register_truncated(Registry& r) {
  r.add<TruncationKeep>();
}

}  // namespace detail

namespace {

void check_truncation(const Truncation& t, const char* op) {
  if (t.max_rank == 0) {
    fail(ErrorKind::InvalidArgument, op,
         "max_rank 0 would keep nothing; use a positive rank, or a negative one for no limit");
  }
  if (!(t.cutoff >= 0.0)) {
    fail(ErrorKind::InvalidArgument, op, "cutoff must be >= 0, got ", t.cutoff);
  }
  if (!(t.max_discarded_weight >= 0.0) || t.max_discarded_weight >= 1.0) {
    fail(ErrorKind::InvalidArgument, op, "max_discarded_weight must be in [0, 1), got ",
         t.max_discarded_weight);
  }
}

// Magnitudes of a [k, batch...] real or complex tensor, one vector per matrix.
std::vector<std::vector<double>> magnitudes(const Tensor& values) {
  const Tensor v = values.contiguous();
  const std::int64_t k = v.rank() == 0 ? 1 : v.shape()[0];
  const std::int64_t batches = k == 0 ? 0 : v.numel() / k;
  std::vector<double> flat;
  switch (v.dtype()) {
    case DType::F32:
      for (float x : v.to_vector<float>()) flat.push_back(std::abs(static_cast<double>(x)));
      break;
    case DType::F64:
      for (double x : v.to_vector<double>()) flat.push_back(std::abs(x));
      break;
    default:
      fail(ErrorKind::Internal, "linalg truncation", "expected real values, got ", name(v.dtype()));
  }
  std::vector<std::vector<double>> out(static_cast<std::size_t>(batches));
  for (std::int64_t b = 0; b < batches; ++b)
    out[b].assign(flat.begin() + b * k, flat.begin() + (b + 1) * k);
  return out;
}

Shape zeros_like_start(std::int64_t rank) {
  return Shape(static_cast<std::size_t>(rank), 0);
}

Shape concrete(const SymShape& s, const char* op) {
  Shape out;
  for (const auto& d : s) {
    const auto c = d.try_constant();
    if (!c) {
      fail(ErrorKind::Unsupported, op, "needs constant extents in a traced program, got ",
           to_string(s), "; bind the sizes (constant placeholders) before truncating");
    }
    out.push_back(*c);
  }
  return out;
}
Shape concrete(const Shape& s, const char*) {
  return s;
}
// Whether the leading extent is known to be 0 (a symbolic one is not).
bool leading_empty(const SymShape& s) {
  return !s.empty() && s[0].try_constant() == std::optional<std::int64_t>(0);
}
bool leading_empty(const Shape& s) {
  return !s.empty() && s[0] == 0;
}

// x[lo:hi] along `axis`, every other axis whole.
template <class T>
T take_range(const T& x, std::int64_t axis, std::int64_t lo, std::int64_t hi, const char* op) {
  const Shape shape = concrete(x.shape(), op);
  Shape start = zeros_like_start(x.rank()), limit = shape;
  start[axis] = lo;
  limit[axis] = hi;
  return slice(x, start, limit);
}

// Per matrix, the squares of |values| / max |values|: the discarded weight is
// scale-invariant, and so its squares neither overflow (values near 1e200)
// nor underflow (near 1e-200) where the plain squares would. The division by
// the largest value changes no derivative (the weight is homogeneous of
// degree 0).
template <class T>
T relative_squares(const T& values) {
  const T mag = abs(values);
  if (leading_empty(values.shape())) return mul(mag, mag);
  const T top = amax(mag, {0}, /*keepdim=*/true);
  const T rel = div(mag, where(gt(top, zeros_like(top)), top, ones_like(top)));
  return mul(rel, rel);
}

// Per matrix: sum of the squares of values[r:] over the sum of all squares
// (0 where all are zero), as a differentiable real [batch...] value.
template <class T>
T discarded_weight(const T& values, std::int64_t r, const char* op) {
  const std::int64_t k = concrete(values.shape(), op)[0];
  const T sq = relative_squares(values);
  const T total = sum(sq, {0});
  const T tail = sum(take_range(sq, 0, r, k, op), {0});
  const T positive = gt(total, zeros_like(total));
  return where(positive, div(tail, where(positive, total, ones_like(total))), zeros_like(total));
}

std::int64_t common_rank(const std::vector<std::vector<double>>& mags, std::int64_t k,
                         const Truncation& t) {
  std::int64_t r = 0;
  for (const auto& m : mags) r = std::max(r, truncation_rank(m, t));
  return mags.empty() ? std::min<std::int64_t>(k, t.max_rank < 0 ? k : t.max_rank) : r;
}

}  // namespace

std::vector<Tensor> detail::TruncationKeep::execute(Backend& backend, std::span<const Tensor> in,
                                                    Workspaces&) const {
  const std::int64_t k = in[0].rank() == 0 ? 1 : in[0].shape()[0];
  const std::int64_t r = std::min(k, common_rank(magnitudes(in[0]), k, params().t));
  Tensor keep = backend.empty(Shape{r}.span(), DType::I64);
  Tensor drop = backend.empty(Shape{k - r}.span(), DType::I64);
  std::int64_t* kp = keep.mutable_data<std::int64_t>();
  std::int64_t* dp = drop.mutable_data<std::int64_t>();
  for (std::int64_t i = 0; i < r; ++i) kp[i] = i;
  for (std::int64_t i = r; i < k; ++i) dp[i - r] = i;
  return {keep, drop};
}

std::int64_t truncation_rank(std::span<const double> m, const Truncation& t) {
  check_truncation(t, "truncation_rank");
  const auto n = static_cast<std::int64_t>(m.size());
  if (n == 0) return 0;
  std::int64_t k = n;
  if (t.max_rank > 0) k = std::min(k, t.max_rank);
  if (t.cutoff > 0) {
    const double threshold = t.relative_cutoff ? t.cutoff * m[0] : t.cutoff;
    std::int64_t above = 0;
    while (above < n && m[above] > threshold) ++above;
    k = std::min(k, above);
  }
  if (t.max_discarded_weight > 0) {
    // Relative to the largest magnitude, so that the squares of values near
    // the overflow threshold stay finite: the weight is scale-invariant.
    double top = 0;
    for (double v : m) top = std::max(top, std::abs(v));
    double total = 0;
    for (double v : m) total += (v / top) * (v / top);
    if (top > 0 && std::isfinite(top) && total > 0) {
      std::int64_t r = n;
      double tail = 0;
      const auto sq = [&](std::int64_t i) { return (m[i] / top) * (m[i] / top); };
      while (r > 1 && (tail + sq(r - 1)) / total <= t.max_discarded_weight) {
        tail += sq(r - 1);
        --r;
      }
      k = std::min(k, r);
    }
  }
  return std::max<std::int64_t>(k, 1);
}

// ---- svd and eigh, one template for both AD tiers ---------------------------------------

namespace {
// A constant rank (slices) when only max_rank is set and the extents are
// constant (always so in the eager tier); otherwise the truncation op picks
// the kept indices from the values, a dynamic size in a traced program.
template <class T>
bool constant_rank(const Truncation& t, const T& a) {
  if (t.cutoff != 0 || t.max_discarded_weight != 0) return false;
  if constexpr (std::is_same_v<T, TracedTensor>) return try_concrete(a.shape()).has_value();
  return true;
}
std::int64_t fixed_rank(const Truncation& t, std::int64_t k) {
  return t.max_rank < 0 ? k : std::min(k, t.max_rank);
}
// The constant extent of axis 0.
template <class T>
std::int64_t extent0(const T& x) {
  if constexpr (std::is_same_v<T, TracedTensor>) {
    return x.shape()[0].constant();
  } else {
    return x.shape()[0];
  }
}

// {keep, drop}: the indices the truncation keeps (r of them) and those it
// drops (k - r), from descending magnitudes [k, batch...]. In a traced
// program r is a dynamic size.
template <class T>
std::pair<T, T> kept_indices(const T& magnitudes, Truncation t) {
  if (t.rank_name.empty()) {
    if constexpr (std::is_same_v<T, TracedTensor>) {
      // Unique within a graph without process-wide state: the values' node
      // (alive as long as the graph) and the criteria.
      char buf[64];
      std::snprintf(
          buf, sizeof buf, "rank_%zx_%04zx",
          static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(magnitudes.node().get())),
          detail::hash_value(detail::KeepParams{t}) & 0xffff);
      t.rank_name = buf;
    } else {
      t.rank_name = "rank";  // an eager call binds nothing
    }
  }
  auto op = std::make_shared<const detail::TruncationKeep>(detail::KeepParams{std::move(t)});
  const auto out = detail::apply(op, {magnitudes});
  return {out[0], out[1]};
}

// The kept rank: a constant, or -1 for a dynamic size.
template <class T>
std::int64_t rank_of(const T& keep) {
  if constexpr (std::is_same_v<T, TracedTensor>) {
    return keep.shape()[0].try_constant().value_or(-1);
  } else {
    return keep.shape()[0];
  }
}

// The discarded weight from the dropped indices.
template <class T>
T discarded_weight_at(const T& values, const T& drop) {
  const T sq = relative_squares(values);
  const T total = sum(sq, {0});
  const T tail = sum(index_select(sq, 0, drop), {0});
  const T positive = gt(total, zeros_like(total));
  return where(positive, div(tail, where(positive, total, ones_like(total))), zeros_like(total));
}
}  // namespace

template <LinalgTensor T>
TruncatedSvd<T> svd_truncated(const T& a, const Truncation& truncation,
                              const SpectralOptions& options) {
  check_truncation(truncation, "svd_truncated");
  const SvdResult<T> f = svd(a, false, options);
  TruncatedSvd<T> out;
  if (constant_rank(truncation, a)) {
    const std::int64_t r = fixed_rank(truncation, extent0(f.S));
    out.rank = r;
    out.U = take_range(f.U, 1, 0, r, "svd_truncated");
    out.S = take_range(f.S, 0, 0, r, "svd_truncated");
    out.Vh = take_range(f.Vh, 0, 0, r, "svd_truncated");
    out.discarded_weight = discarded_weight(f.S, r, "svd_truncated");
    return out;
  }
  const auto [keep, drop] = kept_indices(f.S, truncation);
  out.rank = rank_of(keep);
  out.U = index_select(f.U, 1, keep);
  out.S = index_select(f.S, 0, keep);
  out.Vh = index_select(f.Vh, 0, keep);
  out.discarded_weight = discarded_weight_at(f.S, drop);
  return out;
}

template <LinalgTensor T>
TruncatedEigh<T> eigh_truncated(const T& a, const Truncation& truncation, char uplo,
                                const SpectralOptions& options) {
  check_truncation(truncation, "eigh_truncated");
  const EigResult<T> f = eigh(a, uplo, options);
  // The eigenvalue order by descending magnitude (stable: equal magnitudes
  // keep eigh's ascending order); the same order for the vectors' columns.
  const auto ws = f.eigenvalues.shape();
  const T order = argsort(abs(f.eigenvalues), 0, true);
  auto row = ws;
  row.insert(row.begin(), 1);  // [1, n, batch...]
  auto vs = ws;
  vs.insert(vs.begin(), ws[0]);  // [n, n, batch...]
  const T w = take_along_axis(f.eigenvalues, order, 0);
  const T v = take_along_axis(f.eigenvectors, broadcast_to(reshape(order, row), vs), 1);
  TruncatedEigh<T> out;
  if (constant_rank(truncation, a)) {
    const std::int64_t r = fixed_rank(truncation, extent0(w));
    out.rank = r;
    out.eigenvalues = take_range(w, 0, 0, r, "eigh_truncated");
    out.eigenvectors = take_range(v, 1, 0, r, "eigh_truncated");
    out.discarded_weight = discarded_weight(w, r, "eigh_truncated");
    return out;
  }
  const auto [keep, drop] = kept_indices(abs(w), truncation);
  out.rank = rank_of(keep);
  out.eigenvalues = index_select(w, 0, keep);
  out.eigenvectors = index_select(v, 1, keep);
  out.discarded_weight = discarded_weight_at(w, drop);
  return out;
}

#define TENFERRO_TRUNCATED(T)                                                                     \
  template TruncatedSvd<T> svd_truncated<T>(const T&, const Truncation&, const SpectralOptions&); \
  template TruncatedEigh<T> eigh_truncated<T>(const T&, const Truncation&, char,                  \
                                              const SpectralOptions&);
TENFERRO_TRUNCATED(EagerTensor)
TENFERRO_TRUNCATED(TracedTensor)
#undef TENFERRO_TRUNCATED

// ---- direct tier ---------------------------------------------------------------------

TruncatedSvd<Tensor> svd_truncated(const Tensor& a, const Truncation& truncation,
                                   Backend& backend) {
  check_truncation(truncation, "svd_truncated");
  return detail::on_backend(backend, "svd_truncated", [&](EagerRuntime& rt) {
    auto t = svd_truncated(rt.tensor(a), truncation);
    return TruncatedSvd<Tensor>{t.U.value(), t.S.value(), t.Vh.value(), t.rank,
                                t.discarded_weight.value()};
  });
}

TruncatedEigh<Tensor> eigh_truncated(const Tensor& a, const Truncation& truncation, char uplo,
                                     Backend& backend) {
  check_truncation(truncation, "eigh_truncated");
  return detail::on_backend(backend, "eigh_truncated", [&](EagerRuntime& rt) {
    auto t = eigh_truncated(rt.tensor(a), truncation, uplo);
    return TruncatedEigh<Tensor>{t.eigenvalues.value(), t.eigenvectors.value(), t.rank,
                                 t.discarded_weight.value()};
  });
}

}  // namespace tenferro::linalg
