// The public functions of the factor part, written once over a small tier
// adapter: the AD tiers (EagerTensor, TracedTensor) use the differentiable op
// surface, the direct tier (Tensor + Backend) the backend's kernels.

#include <algorithm>

#include "linalg/factor.hpp"
#include "tenferro/ad/ops.hpp"
#include "tenferro/backend/elementwise.hpp"
#include "tenferro/linalg/factor.hpp"

namespace tenferro::linalg {
namespace {

using detail::LinalgOpBase;
using OpP = std::shared_ptr<const LinalgOpBase>;
using detail::shape_str;

Shape zeros_shape(std::size_t r) {
  return Shape(r, 0);
}

// ---- tier adapters ---------------------------------------------------------------------

template <class T>
struct Tier {
  std::vector<T> run(const OpP& op, std::initializer_list<T> in) const {
    return detail::apply(op, ListRef<T>(in));
  }
  static Shape shape(const T& x) {
    if constexpr (std::is_same_v<T, EagerTensor>) {
      return x.shape();
    } else {
      Shape s;
      for (const SymDim& d : x.shape()) {
        const auto c = d.try_constant();
        if (!c)
          fail(ErrorKind::Unsupported, "linalg",
               "the factor functions need constant extents in the traced tier, got ",
               to_string(x.shape()));
        s.push_back(*c);
      }
      return s;
    }
  }
  T slice(const T& x, const Shape& lo, const Shape& hi) const { return tenferro::slice(x, lo, hi); }
  T pad(const T& x, const Shape& lo, const Shape& hi) const {
    return tenferro::pad(x, lo, hi, Scalar(0.0));
  }
  T tril(const T& x, std::int64_t k) const { return tenferro::tril(x, k); }
  T triu(const T& x, std::int64_t k) const { return tenferro::triu(x, k); }
  T add(const T& a, const T& b) const { return tenferro::add(a, b); }
  T reshape(const T& x, const Shape& s) const {
    return tenferro::reshape(x, std::span<const std::int64_t>(s.data(), s.size()));
  }
  T broadcast(const T& x, const Shape& s) const {
    return tenferro::broadcast_to(x, std::span<const std::int64_t>(s.data(), s.size()));
  }
  T mH(const T& x) const {
    const T t = tenferro::transpose(x, 0, 1);
    return is_complex(x.dtype()) ? tenferro::conj(t) : t;
  }
  /// I_n for square x [n, n, batch...].
  T eye_like(const T& x) const {
    return tenferro::diag_embed(tenferro::ones_like(tenferro::diagonal(x)));
  }
};

template <>
struct Tier<Tensor> {
  Backend& be;
  std::vector<Tensor> run(const OpP& op, std::initializer_list<Tensor> in) const {
    return detail::apply_direct(*op, ListRef<Tensor>(in), be);
  }
  static Shape shape(const Tensor& x) { return x.shape(); }
  Tensor slice(const Tensor& x, const Shape& lo, const Shape& hi) const {
    const Shape st(lo.size(), 1);
    return tenferro::slice(x, lo, hi, st, be);
  }
  Tensor pad(const Tensor& x, const Shape& lo, const Shape& hi) const {
    return tenferro::pad(x, lo, hi, Scalar(0.0), be);
  }
  Tensor tril(const Tensor& x, std::int64_t k) const { return tenferro::tril(x, k, be); }
  Tensor triu(const Tensor& x, std::int64_t k) const { return tenferro::triu(x, k, be); }
  Tensor add(const Tensor& a, const Tensor& b) const { return tenferro::add(a, b, be); }
  Tensor reshape(const Tensor& x, const Shape& s) const {
    return tenferro::reshape(x, std::span<const std::int64_t>(s.data(), s.size()), be);
  }
  Tensor broadcast(const Tensor& x, const Shape& s) const {
    return x.broadcast_to(std::span<const std::int64_t>(s.data(), s.size()));
  }
  Tensor mH(const Tensor& x) const {
    const std::vector<std::int64_t> perm = [&] {
      std::vector<std::int64_t> p{1, 0};
      for (std::int64_t d = 2; d < x.rank(); ++d) p.push_back(d);
      return p;
    }();
    const Tensor t = tenferro::permute(x, perm, be);
    return is_complex(x.dtype()) ? tenferro::conj(t, be) : t;
  }
  Tensor eye_like(const Tensor& x) const {
    Shape s(x.shape().begin() + 1, x.shape().end());  // [n, batch...]
    Tensor ones = be.empty(s, x.dtype());
    detail::dispatch_floating(x.dtype(), [&]<class E>() {
      E* p = static_cast<E*>(ones.raw_data());
      std::fill(p, p + ones.numel(), E(1));
    });
    return tenferro::diag_embed(ones, 0, be);
  }
};

void require_pivot(bool pivot, const char* op) {
  if (!pivot) {
    fail(ErrorKind::InvalidArgument, op,
         "pivot=false (LU without pivoting) is not supported on the CPU (PyTorch supports it "
         "on CUDA only); use pivot=true");
  }
}

// ---- the functions, once per tier ------------------------------------------------------

template <class T>
std::tuple<T, T, T> lu_factor_impl(const Tier<T>& t, const T& a, bool pivot, bool check) {
  require_pivot(pivot, check ? "lu_factor" : "lu_factor_ex");
  auto out = t.run(detail::lu_factor_op(check, detail::LuCaller::LuFactor), {a});
  return {out[0], out[1], out[2]};
}

template <class T>
std::tuple<T, T, T> lu_impl(const Tier<T>& t, const T& a, bool pivot) {
  require_pivot(pivot, "lu");
  auto f = t.run(detail::lu_factor_op(false, detail::LuCaller::LuFactor), {a});
  const Shape s = Tier<T>::shape(a);
  const std::int64_t m = s[0], n = s[1], k = std::min(m, n);
  const T P = f[3];
  Shape lo = zeros_shape(s.size()), hi = s;
  hi[1] = k;
  const T X = t.slice(f[0], lo, hi);  // [m, k]
  hi = s;
  hi[0] = k;
  const T Y = t.slice(f[0], lo, hi);  // [k, n]
  T eye = t.eye_like(t.slice(X, lo, [&] {
    Shape h = s;
    h[0] = k;
    h[1] = k;
    return h;
  }()));
  Shape ph = zeros_shape(s.size());
  ph[0] = m - k;
  eye = t.pad(eye, zeros_shape(s.size()), ph);
  return {P, t.add(t.tril(X, -1), eye), t.triu(Y, 0)};
}

// The batch extents (axes `lead`...) of two shapes broadcast as PyTorch
// broadcasts its leading batch dimensions: ours are those reversed, so the
// shorter batch gets trailing unit axes, and unit extents stretch.
Shape broadcast_batch(const Shape& a, const Shape& b, const char* op) {
  const std::size_t r = std::max(a.size(), b.size());
  Shape out;
  for (std::size_t d = 2; d < r; ++d) {
    const std::int64_t x = d < a.size() ? a[d] : 1, y = d < b.size() ? b[d] : 1;
    if (x != y && x != 1 && y != 1) {
      fail(ErrorKind::ShapeMismatch, op, "the batch extents of ", shape_str(a), " and ",
           shape_str(b), " do not broadcast (axis ", d, ": ", x, " vs ", y, ")");
    }
    out.push_back(x == 1 ? y : x);
  }
  return out;
}

// x [lead axes, batch...] broadcast to [lead axes, `batch`].
template <class T>
T to_batch(const Tier<T>& t, const T& x, std::size_t lead, const Shape& batch) {
  const Shape s = Tier<T>::shape(x);
  Shape target(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(lead));
  for (auto e : batch) target.push_back(e);
  if (s == target) return x;
  Shape padded = s;
  while (padded.size() < target.size()) padded.push_back(1);
  const T y = padded == s ? x : t.reshape(x, padded);
  return t.broadcast(y, target);
}

// An undefined operand is InvalidArgument about `op` before anything reads its rank.
template <class T>
void require_defined(const char* op, const char* what, const T& x) {
  if (!x.defined()) fail(ErrorKind::InvalidArgument, op, what, " is undefined; pass a tensor");
}

template <class T>
void require_rank(const char* op, const char* what, const T& x, std::int64_t min) {
  require_defined(op, what, x);
  const std::int64_t rank = x.rank();
  if (rank < min) {
    fail(ErrorKind::RankMismatch, op, what, " must have rank >= ", min,
         min == 2 ? " ([rows, columns, batch...])" : " ([n, batch...])", ", got rank ", rank);
  }
}

template <class T>
T lu_solve_impl(const Tier<T>& t, const T& lu, const T& piv, const T& b, bool left, bool adjoint) {
  require_rank("lu_solve", "LU", lu, 2);
  require_rank("lu_solve", "B", b, 2);
  require_rank("lu_solve", "pivots", piv, 1);
  if (piv.dtype() != DType::I32) {
    fail(ErrorKind::DTypeMismatch, "lu_solve", "pivots must be i32 (as lu_factor returns), got ",
         name(piv.dtype()));
  }
  const Shape ls = Tier<T>::shape(lu), bs = Tier<T>::shape(b);
  const Shape batch = broadcast_batch(ls, bs, "lu_solve");
  const T LU = to_batch(t, lu, 2, batch), P = to_batch(t, piv, 1, batch),
          B = to_batch(t, b, 2, batch);
  if (left) return t.run(detail::lu_solve_op(adjoint), {LU, P, B})[0];
  // X op(A) = B  <=>  op(A)^H X^H = B^H.
  return t.mH(t.run(detail::lu_solve_op(!adjoint), {LU, P, t.mH(B)})[0]);
}

// B as a batch of vectors (PyTorch's rule): rank 1, or rank(A) - 1 with A's
// extents without its column axis.
template <class T>
bool vector_rhs(const T& a, const T& b) {
  const Shape as = Tier<T>::shape(a), bs = Tier<T>::shape(b);
  if (as.size() < 2) return false;
  if (bs.size() == 1) return true;
  if (bs.size() + 1 != as.size() || bs[0] != as[0]) return false;
  for (std::size_t d = 2; d < as.size(); ++d)
    if (bs[d - 1] != as[d]) return false;
  return true;
}

template <class T>
std::pair<T, T> solve_impl(const Tier<T>& t, const T& a, const T& b, bool left, bool check,
                           detail::LuCaller caller) {
  require_rank("solve", "A", a, 2);
  require_rank("solve", "B", b, 1);
  const bool vec = vector_rhs(a, b);
  if (!vec) require_rank("solve", "B", b, 2);
  T bm = b;
  if (vec) {
    Shape s = Tier<T>::shape(b);
    s.insert(s.begin() + (left ? 1 : 0), 1);
    bm = t.reshape(b, s);
  }
  // B is validated before A is factorised, so that a bad B is the same
  // validation error in every tier (the traced tier sees it while building),
  // not a Singular of A first.
  if (!is_floating(b.dtype()) && !is_complex(b.dtype())) {
    fail(ErrorKind::DTypeMismatch, "solve", "B must be f32, f64, c64 or c128, got ",
         name(b.dtype()), "; convert it first");
  }
  if (a.dtype() != b.dtype()) {
    fail(ErrorKind::DTypeMismatch, "solve", "A and B must have the same dtype, got ",
         name(a.dtype()), " and ", name(b.dtype()));
  }
  const Shape as = Tier<T>::shape(a), bms = Tier<T>::shape(bm);
  const std::int64_t nb = bms[left ? 0 : 1];
  if (nb != as[0] || as[0] != as[1]) {
    fail(ErrorKind::ShapeMismatch, "solve", "A is ", shape_to_string(as), " and B is ",
         shape_to_string(Tier<T>::shape(b)), "; A must be square [n, n, batch...] and B have n ",
         left ? "rows" : "columns");
  }
  const Shape batch = broadcast_batch(as, bms, "solve");
  // One solve op (its derivative reuses the factors); X A = B is solved as
  // A^H X^H = B^H.
  const T A = to_batch(t, a, 2, batch), B = to_batch(t, bm, 2, batch);
  const auto f = left ? t.run(detail::solve_op(check, caller), {A, B})
                      : t.run(detail::solve_op(check, caller), {t.mH(A), t.mH(B)});
  T x = left ? f[0] : t.mH(f[0]);
  if (vec) {
    Shape xs = Tier<T>::shape(x);
    xs.erase(xs.begin() + (left ? 1 : 0));
    x = t.reshape(x, xs);
  }
  return {x, f[1]};
}

template <class T>
std::pair<T, T> inv_impl(const Tier<T>& t, const T& a, bool check) {
  require_defined("inv", "A", a);
  auto f = t.run(detail::lu_factor_op(check, detail::LuCaller::Inv), {a});
  return {t.run(detail::lu_solve_op(false), {f[0], f[1], t.eye_like(a)})[0], f[2]};
}

int qr_mode(std::string_view mode) {
  if (mode == "reduced") return 0;
  if (mode == "complete") return 1;
  if (mode == "r") return 2;
  fail(ErrorKind::InvalidArgument, "qr", "mode must be \"reduced\", \"complete\" or \"r\", got \"",
       std::string(mode), "\"");
}

// H_1 ... H_k applied to the first n columns of I_m, from the last reflector
// to the first: X <- X - tau_i v_i (v_i^H X). Differentiable core ops only.
template <AdTensor T>
T householder_composite(const T& v, const T& tau) {
  // The checks of the kernel op (dtype, ranks, k <= n <= m), without running it.
  require_defined("householder_product", "V", v);
  require_defined("householder_product", "tau", tau);
  const Shape vs = Tier<T>::shape(v), ts = Tier<T>::shape(tau);
  if (v.rank() < 2 || tau.rank() != v.rank() - 1 || v.dtype() != tau.dtype() ||
      (v.dtype() != DType::F32 && v.dtype() != DType::F64 && v.dtype() != DType::C64 &&
       v.dtype() != DType::C128)) {
    (void)detail::apply(detail::householder_op(), ListRef<T>({v, tau}));  // raises the typed error
  }
  const std::int64_t m = vs[0], n = vs[1], k = ts[0];
  if (n > m || k > n) {
    fail(ErrorKind::ShapeMismatch, "householder_product",
         "needs k <= n <= m for V [m, n] and tau [k], got V ", shape_str(vs), " and tau ",
         shape_str(ts));
  }
  for (std::size_t d = 2; d < vs.size(); ++d) {
    if (vs[d] != ts[d - 1]) {
      fail(ErrorKind::ShapeMismatch, "householder_product", "tau ", shape_str(ts),
           " does not have the batch extents of V ", shape_str(vs));
    }
  }
  const Tier<T> t;
  Shape lo = zeros_shape(vs.size()), hi = vs;
  hi[0] = n;
  T eye = t.eye_like(t.slice(v, lo, hi));  // I_n
  Shape ph = zeros_shape(vs.size());
  ph[0] = m - n;
  eye = t.pad(eye, zeros_shape(vs.size()), ph);    // first n columns of I_m
  const T vu = t.add(tenferro::tril(v, -1), eye);  // unit lower reflectors
  DotDims dims;
  dims.lhs_contracting = {1};
  dims.rhs_contracting = {0};
  for (std::int64_t d = 2; d < v.rank(); ++d) {
    dims.lhs_batch.push_back(d);
    dims.rhs_batch.push_back(d);
  }
  T x = eye;
  for (std::int64_t i = k - 1; i >= 0; --i) {
    Shape a = zeros_shape(vs.size()), b = vs;
    a[1] = i;
    b[1] = i + 1;
    const T vi = t.slice(vu, a, b);  // [m, 1, batch...]
    Shape ta = zeros_shape(ts.size()), tb = ts;
    ta[0] = i;
    tb[0] = i + 1;
    Shape one = ts;
    one[0] = 1;
    one.insert(one.begin(), 1);
    const T ti = t.reshape(t.slice(tau, ta, tb), one);     // [1, 1, batch...]
    const T w = tenferro::dot_general(t.mH(vi), x, dims);  // [1, n, batch...]
    x = tenferro::sub(x, tenferro::mul(ti, tenferro::dot_general(vi, w, dims)));
  }
  return x;
}

}  // namespace

// ---- AD tiers ----------------------------------------------------------------------------

template <LinalgTensor T>
std::pair<T, T> lu_factor(const T& a, bool pivot) {
  auto [lu, piv, info] = lu_factor_impl(Tier<T>{}, a, pivot, true);
  return {lu, piv};
}
template <LinalgTensor T>
std::tuple<T, T, T> lu_factor_ex(const T& a, bool pivot) {
  return lu_factor_impl(Tier<T>{}, a, pivot, false);
}
template <LinalgTensor T>
std::tuple<T, T, T> lu(const T& a, bool pivot) {
  return lu_impl(Tier<T>{}, a, pivot);
}
template <LinalgTensor T>
T lu_solve(const T& lu, const T& pivots, const T& b, bool left, bool adjoint) {
  return lu_solve_impl(Tier<T>{}, lu, pivots, b, left, adjoint);
}
template <LinalgTensor T>
T solve(const T& a, const T& b, bool left) {
  return solve_impl(Tier<T>{}, a, b, left, true, detail::LuCaller::Solve).first;
}
template <LinalgTensor T>
std::pair<T, T> solve_ex(const T& a, const T& b, bool left) {
  return solve_impl(Tier<T>{}, a, b, left, false, detail::LuCaller::Solve);
}
template <LinalgTensor T>
T inv(const T& a) {
  return inv_impl(Tier<T>{}, a, true).first;
}
template <LinalgTensor T>
std::pair<T, T> inv_ex(const T& a) {
  return inv_impl(Tier<T>{}, a, false);
}
template <LinalgTensor T>
T det(const T& a) {
  return detail::apply(detail::det_op(false), {a})[0];
}
template <LinalgTensor T>
std::pair<T, T> slogdet(const T& a) {
  auto out = detail::apply(detail::det_op(true), {a});
  return {out[1], out[2]};
}
template <LinalgTensor T>
std::pair<T, T> qr(const T& a, std::string_view mode) {
  auto out = detail::apply(detail::qr_op(qr_mode(mode)), {a});
  return {out[0], out[1]};
}
template <LinalgTensor T>
T householder_product(const T& v, const T& tau) {
  return householder_composite(v, tau);
}

#define TF_INSTANTIATE(T)                                           \
  template std::pair<T, T> lu_factor<T>(const T&, bool);            \
  template std::tuple<T, T, T> lu_factor_ex<T>(const T&, bool);     \
  template std::tuple<T, T, T> lu<T>(const T&, bool);               \
  template T lu_solve<T>(const T&, const T&, const T&, bool, bool); \
  template T solve<T>(const T&, const T&, bool);                    \
  template std::pair<T, T> solve_ex<T>(const T&, const T&, bool);   \
  template T inv<T>(const T&);                                      \
  template std::pair<T, T> inv_ex<T>(const T&);                     \
  template T det<T>(const T&);                                      \
  template std::pair<T, T> slogdet<T>(const T&);                    \
  template std::pair<T, T> qr<T>(const T&, std::string_view);       \
  template T householder_product<T>(const T&, const T&);
TF_INSTANTIATE(EagerTensor)
TF_INSTANTIATE(TracedTensor)
#undef TF_INSTANTIATE

// ---- direct tier ---------------------------------------------------------------------------

std::pair<Tensor, Tensor> lu_factor(const Tensor& a, bool pivot, Backend& backend) {
  auto [lu, piv, info] = lu_factor_impl(Tier<Tensor>{backend}, a, pivot, true);
  return {lu, piv};
}
std::tuple<Tensor, Tensor, Tensor> lu_factor_ex(const Tensor& a, bool pivot, Backend& backend) {
  return lu_factor_impl(Tier<Tensor>{backend}, a, pivot, false);
}
std::tuple<Tensor, Tensor, Tensor> lu(const Tensor& a, bool pivot, Backend& backend) {
  return lu_impl(Tier<Tensor>{backend}, a, pivot);
}
Tensor lu_solve(const Tensor& lu, const Tensor& pivots, const Tensor& b, bool left, bool adjoint,
                Backend& backend) {
  return lu_solve_impl(Tier<Tensor>{backend}, lu, pivots, b, left, adjoint);
}
Tensor solve(const Tensor& a, const Tensor& b, bool left, Backend& backend) {
  return solve_impl(Tier<Tensor>{backend}, a, b, left, true, detail::LuCaller::Solve).first;
}
std::pair<Tensor, Tensor> solve_ex(const Tensor& a, const Tensor& b, bool left, Backend& backend) {
  return solve_impl(Tier<Tensor>{backend}, a, b, left, false, detail::LuCaller::Solve);
}
Tensor inv(const Tensor& a, Backend& backend) {
  return inv_impl(Tier<Tensor>{backend}, a, true).first;
}
std::pair<Tensor, Tensor> inv_ex(const Tensor& a, Backend& backend) {
  return inv_impl(Tier<Tensor>{backend}, a, false);
}
Tensor det(const Tensor& a, Backend& backend) {
  return detail::apply_direct(*detail::det_op(false), {a}, backend)[0];
}
std::pair<Tensor, Tensor> slogdet(const Tensor& a, Backend& backend) {
  auto out = detail::apply_direct(*detail::det_op(true), {a}, backend);
  return {out[1], out[2]};
}
std::pair<Tensor, Tensor> qr(const Tensor& a, std::string_view mode, Backend& backend) {
  auto out = detail::apply_direct(*detail::qr_op(qr_mode(mode)), {a}, backend);
  return {out[0], out[1]};
}
Tensor householder_product(const Tensor& v, const Tensor& tau, Backend& backend) {
  return detail::apply_direct(*detail::householder_op(), {v, tau}, backend)[0];
}

}  // namespace tenferro::linalg
