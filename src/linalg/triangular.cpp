// Triangular solves (BLAS trsm) and Cholesky (LAPACK potrf), with AD rules.

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "tenferro/linalg/triangular.hpp"

#include "linalg/common.hpp"
#include "linalg/lapack.hpp"

namespace tenferro::linalg {
namespace detail {
namespace {

// Whether every entry of x[0, n) is finite: an OR over the exponent bits
// (all ones for Inf and NaN), which vectorises, unlike a branch per entry.
template <class T>
bool all_finite(const T* x, std::int64_t n) {
  using R = std::remove_cvref_t<decltype(std::real(std::declval<T>()))>;
  using U = std::conditional_t<sizeof(R) == 8, std::uint64_t, std::uint32_t>;
  constexpr U kExp = static_cast<U>(sizeof(R) == 8 ? 0x7ff0000000000000ULL : 0x7f800000ULL);
  const std::int64_t m = n * static_cast<std::int64_t>(sizeof(T) / sizeof(R));
  const auto* bytes = reinterpret_cast<const unsigned char*>(x);
  U bad = 0;
  for (std::int64_t i = 0; i < m; ++i) {
    U bits;
    std::memcpy(&bits, bytes + i * sizeof(U), sizeof(U));
    bad |= static_cast<U>(((bits & kExp) == kExp) ? 1 : 0);
  }
  return bad == 0;
}

// ---- solve_triangular --------------------------------------------------------------

struct TriParams {
  bool upper = false;
  bool left = true;
  bool unit = false;
  bool adjoint = false;  // solve with op(A)^H (used by the AD rules)
  bool operator==(const TriParams&) const = default;
};
std::size_t hash_value(const TriParams& p) {
  return (p.upper ? 1u : 0u) | (p.left ? 2u : 0u) | (p.unit ? 4u : 0u) | (p.adjoint ? 8u : 0u);
}

class SolveTriangular final : public LinalgOp<SolveTriangular, TriParams> {
 public:
  static constexpr std::string_view kFamily = "tenferro.linalg_solve_triangular.v1";
  using LinalgOp::LinalgOp;
  std::size_t input_count() const override { return 2; }
  std::size_t output_count() const override { return 1; }
  std::string describe() const override {
    const auto& p = params();
    return detail_cat("solve_triangular(upper=", p.upper, ", left=", p.left, ", unit=", p.unit,
                      ", adjoint=", p.adjoint, ")");
  }
  InferenceResult infer(std::span<const TensorMeta> in) const override;
  std::vector<Tensor> execute(Backend& backend, std::span<const Tensor> in,
                              Workspaces&) const override;
  const RuleSet& ad_rules() const override { return rules(); }
  static const RuleSet& rules();

 private:
  template <class... A>
  static std::string detail_cat(const A&... a) {
    return tenferro::detail::cat(a...);
  }
};

InferenceResult SolveTriangular::infer(std::span<const TensorMeta> in) const {
  const std::string_view op = "solve_triangular";
  std::vector<ShapeConstraint> cs;
  require_floating(op, in[0], "A");
  require_floating(op, in[1], "B");
  require_square(op, in[0], cs, "A");
  require_matrix(op, in[1], "B");
  if (in[0].dtype != in[1].dtype) {
    fail(ErrorKind::DTypeMismatch, std::string(op), "A and B must have the same dtype, got ",
         tenferro::name(in[0].dtype), " and ", tenferro::name(in[1].dtype));
  }
  require_same_batch(op, in[0], in[1], cs);
  const SymDim& n = in[0].shape[0];
  const SymDim& nb = params().left ? in[1].shape[0] : in[1].shape[1];
  const auto x = n.try_constant(), y = nb.try_constant();
  if (x && y) {
    if (*x != *y) {
      fail(ErrorKind::ShapeMismatch, std::string(op), "A is ", *x, " x ", *x, " but B has ", *y,
           params().left ? " rows" : " columns", " (left=", params().left, ")");
    }
  } else {
    cs.push_back(ShapeConstraint::dims_equal(n, nb, "A's order equals B's solved extent"));
  }
  return {{in[1]}, std::move(cs)};
}

template <class T>
void trsm_batches(const TriParams& p, const Tensor& a, Tensor& x, Backend& backend) {
  const Shape& as = a.shape();
  const Shape& xs = x.shape();
  const std::int64_t n = as[0], rows = xs[0], cols = xs[1];
  const std::int64_t batches = batch_count(xs);
  if (n == 0 || rows == 0 || cols == 0) return;
  const T* A = a.data<T>();
  T* X = static_cast<T*>(x.raw_data());
  const char side = p.left ? 'L' : 'R', uplo = p.upper ? 'U' : 'L';
  const char trans = p.adjoint ? 'C' : 'N', dg = p.unit ? 'U' : 'N';
  for_each_batch(backend, batches, n * n * (p.left ? cols : rows), [&](std::int64_t b) {
    const T* Ab = A + b * n * n;
    if (!p.unit) {
      for (std::int64_t i = 0; i < n; ++i) {
        if (Ab[i + i * n] == T(0)) {
          numerical_failure(ErrorKind::Singular, "solve_triangular", b,
                            tenferro::detail::cat("the triangular matrix is singular: diagonal "
                                                  "element ",
                                                  i, " is zero"));
        }
      }
    }
    lapack::trsm(side, uplo, trans, dg, static_cast<lapack::fint>(rows),
                 static_cast<lapack::fint>(cols), T(1), Ab, static_cast<lapack::fint>(n),
                 X + b * rows * cols, static_cast<lapack::fint>(rows));
  });
}

std::vector<Tensor> SolveTriangular::execute(Backend& backend, std::span<const Tensor> in,
                                             Workspaces&) const {
  const Tensor a = in[0].is_contiguous() ? in[0] : compact_copy(in[0], backend);
  Tensor x = compact_copy(in[1], backend);
  dispatch_floating(x.dtype(), [&]<class T>() { trsm_batches<T>(params(), a, x, backend); });
  return {x};
}

std::shared_ptr<const LinalgOpBase> tri_op(TriParams p) {
  return std::make_shared<const SolveTriangular>(p);
}

// dX from op(T) X = B with T the used triangle of A:
//   left:  dX = op(T)^{-1} (dB - op(dT) X);   right: dX = (dB - X op(dT)) op(T)^{-1}.
std::vector<MaybeVal> tri_jvp(const RuleArgs& a, std::span<const MaybeVal> t) {
  Emitter& e = a.emitter;
  const auto& p = static_cast<const SolveTriangular&>(a.op).params();
  std::optional<Val> rhs;
  if (t[1]) rhs = *t[1];
  if (t[0]) {
    Val dT = p.upper ? triu(e, *t[0], p.unit ? 1 : 0) : tril(e, *t[0], p.unit ? -1 : 0);
    if (p.adjoint) dT = mH(e, dT);
    const Val X = a.outputs[0];
    const Val prod = p.left ? mm(e, dT, X) : mm(e, X, dT);
    rhs = rhs ? e.sub(*rhs, prod) : e.neg(prod);
  }
  if (!rhs) return {std::nullopt};
  return {emit(e, tri_op(p), {a.inputs[0], *rhs})[0]};
}

// Linear in B: the adjoint of B -> op(T)^{-1} B is C -> op(T)^{-H} C.
std::vector<MaybeVal> tri_transpose(const RuleArgs& a, std::span<const bool> linear,
                                    std::span<const MaybeVal> ct) {
  if (linear[0]) {
    fail(ErrorKind::UnsupportedAdRule, "solve_triangular",
         "solve_triangular is not linear in A; transpose it in B only");
  }
  if (!ct[0]) return {std::nullopt, std::nullopt};
  TriParams p = static_cast<const SolveTriangular&>(a.op).params();
  p.adjoint = !p.adjoint;
  return {std::nullopt, emit(a.emitter, tri_op(p), {a.inputs[0], *ct[0]})[0]};
}

const RuleSet& SolveTriangular::rules() {
  static const RuleSet r = [] {
    RuleSet s;
    s.jvp = tri_jvp;
    s.transpose = tri_transpose;
    s.residuals = ad::Residuals::of({0}, {0});
    return s;
  }();
  return r;
}

// ---- cholesky ------------------------------------------------------------------------

struct CholParams {
  bool upper = false;
  bool check = true;  // false: cholesky_ex (info instead of an error)
  bool operator==(const CholParams&) const = default;
};
std::size_t hash_value(const CholParams& p) {
  return (p.upper ? 1u : 0u) | (p.check ? 2u : 0u);
}

class Cholesky final : public LinalgOp<Cholesky, CholParams> {
 public:
  static constexpr std::string_view kFamily = "tenferro.linalg_cholesky.v1";
  using LinalgOp::LinalgOp;
  std::size_t input_count() const override { return 1; }
  std::size_t output_count() const override { return 2; }  // factor, info
  InferenceResult infer(std::span<const TensorMeta> in) const override {
    std::vector<ShapeConstraint> cs;
    require_floating("cholesky", in[0]);
    require_square("cholesky", in[0], cs);
    SymShape batch(in[0].shape.begin() + 2, in[0].shape.end());
    return {{in[0], TensorMeta{DType::I32, batch}}, std::move(cs)};
  }
  std::vector<Tensor> execute(Backend& backend, std::span<const Tensor> in,
                              Workspaces&) const override;
  const RuleSet& ad_rules() const override { return rules(); }
  static const RuleSet& rules();
};

template <class T>
void potrf_batches(const CholParams& p, Tensor& l, Tensor& info, Backend& backend) {
  const std::int64_t n = l.shape()[0];
  const std::int64_t batches = batch_count(l.shape());
  T* L = static_cast<T*>(l.raw_data());
  auto* I = static_cast<std::int32_t*>(info.raw_data());
  for_each_batch(backend, batches, n * n * n, [&](std::int64_t b) {
    T* Lb = L + b * n * n;
    lapack::fint res = 0;
    // potrf does not see NaN below the diagonal: a non-finite entry of the
    // triangle it reads means no Cholesky factor, like a non-positive pivot.
    if (p.check) {
      bool finite = true;
      for (std::int64_t j = 0; j < n; ++j) {
        const std::int64_t lo = p.upper ? 0 : j, hi = p.upper ? j + 1 : n;
        finite &= all_finite(Lb + j * n + lo, hi - lo);
      }
      if (!finite) {
        numerical_failure(ErrorKind::Singular, "cholesky", b,
                          "the input contains NaN or Inf, so it is not positive definite; "
                          "remove them first");
      }
    }
    if (n > 0)
      lapack::potrf(p.upper ? 'U' : 'L', static_cast<lapack::fint>(n), Lb,
                    static_cast<lapack::fint>(n), &res);
    I[b] = res;
    if (res < 0) {
      fail(ErrorKind::Internal, "cholesky", "LAPACK potrf rejected argument ", -res);
    }
    if (res > 0 && p.check) {
      numerical_failure(ErrorKind::Singular, "cholesky", b,
                        tenferro::detail::cat("the matrix is not positive definite (its leading "
                                              "minor of order ",
                                              res, " is not)"));
    }
    // Zero the triangle LAPACK leaves untouched (column by column).
    for (std::int64_t j = 0; j < n; ++j) {
      if (p.upper) {
        std::fill(Lb + j * n + j + 1, Lb + (j + 1) * n, T(0));
      } else {
        std::fill(Lb + j * n, Lb + j * n + j, T(0));
      }
    }
  });
}

std::vector<Tensor> Cholesky::execute(Backend& backend, std::span<const Tensor> in,
                                      Workspaces&) const {
  Tensor l = compact_copy(in[0], backend);
  const Shape batch(l.shape().begin() + 2, l.shape().end());
  Tensor info = backend.empty(batch, DType::I32);
  dispatch_floating(l.dtype(), [&]<class T>() { potrf_batches<T>(params(), l, info, backend); });
  return {l, info};
}

std::shared_ptr<const LinalgOpBase> chol_op(CholParams p) {
  return std::make_shared<const Cholesky>(p);
}

// PyTorch's rules with L the lower factor (L = U^H when upper):
//   jvp  dL = L Phi(L^{-1} dA L^{-H}),  Phi(X) = tril(X) - diag(X) / 2;
//   vjp  gA = L^{-H} Psi(L^H gL) L^{-1}, Psi(G) = (tril(G) + tril(G, -1)^H) / 2.
std::vector<MaybeVal> chol_jvp(const RuleArgs& a, std::span<const MaybeVal> t) {
  if (!t[0]) return {std::nullopt, std::nullopt};
  Emitter& e = a.emitter;
  const bool upper = static_cast<const Cholesky&>(a.op).params().upper;
  const Val L = upper ? mH(e, a.outputs[0]) : a.outputs[0];
  Val x = emit(e, tri_op({false, true, false, false}), {L, *t[0]})[0];  // L^{-1} dA
  x = emit(e, tri_op({false, false, false, true}), {L, x})[0];          // ... L^{-H}
  x = e.sub(tril(e, x), e.scale(diag_embed(e, diag(e, x)), 0.5));
  Val dl = mm(e, L, x);
  if (upper) dl = mH(e, dl);
  return {dl, std::nullopt};
}

std::vector<MaybeVal> chol_vjp(const RuleArgs& a, std::span<const MaybeVal> ct) {
  if (!ct[0]) return {std::nullopt};
  Emitter& e = a.emitter;
  const bool upper = static_cast<const Cholesky&>(a.op).params().upper;
  const Val L = upper ? mH(e, a.outputs[0]) : a.outputs[0];
  const Val gL = upper ? mH(e, *ct[0]) : *ct[0];
  Val g = tril(e, mm(e, mH(e, L), gL));
  g = e.scale(e.add(g, mH(e, tril(e, g, -1))), 0.5);
  g = emit(e, tri_op({false, true, false, true}), {L, g})[0];    // L^{-H} g
  g = emit(e, tri_op({false, false, false, false}), {L, g})[0];  // g L^{-1}
  return {g};
}

const RuleSet& Cholesky::rules() {
  static const RuleSet r = [] {
    RuleSet s;
    s.jvp = chol_jvp;
    s.vjp = chol_vjp;
    s.residuals = ad::Residuals::of({}, {0});
    return s;
  }();
  return r;
}

}  // namespace

std::shared_ptr<const LinalgOpBase> solve_triangular_op(bool upper, bool left, bool unit,
                                                        bool adjoint) {
  return tri_op({upper, left, unit, adjoint});
}

void register_triangular(Registry& r) {
  r.add<SolveTriangular>();
  r.add<Cholesky>();
}

}  // namespace detail

// ---- public functions --------------------------------------------------------------

template <LinalgTensor T>
T solve_triangular(const T& a, const T& b, bool upper, bool left, bool unitriangular) {
  const T in[2] = {a, b};
  return detail::apply(detail::tri_op({upper, left, unitriangular, false}), in)[0];
}

Tensor solve_triangular(const Tensor& a, const Tensor& b, bool upper, bool left, bool unitriangular,
                        Backend& backend) {
  const detail::SolveTriangular op({upper, left, unitriangular, false});
  return detail::apply_direct(op, {a, b}, backend)[0];
}

template <LinalgTensor T>
T cholesky(const T& a, bool upper) {
  return detail::apply(detail::chol_op({upper, true}), {a})[0];
}

Tensor cholesky(const Tensor& a, bool upper, Backend& backend) {
  const detail::Cholesky op({upper, true});
  return detail::apply_direct(op, {a}, backend)[0];
}

template <LinalgTensor T>
std::pair<T, T> cholesky_ex(const T& a, bool upper) {
  auto out = detail::apply(detail::chol_op({upper, false}), {a});
  return {out[0], out[1]};
}

std::pair<Tensor, Tensor> cholesky_ex(const Tensor& a, bool upper, Backend& backend) {
  const detail::Cholesky op({upper, false});
  auto out = detail::apply_direct(op, {a}, backend);
  return {out[0], out[1]};
}

#define TF_INSTANTIATE(T)                                               \
  template T solve_triangular<T>(const T&, const T&, bool, bool, bool); \
  template T cholesky<T>(const T&, bool);                               \
  template std::pair<T, T> cholesky_ex<T>(const T&, bool);
TF_INSTANTIATE(EagerTensor)
TF_INSTANTIATE(TracedTensor)
#undef TF_INSTANTIATE

}  // namespace tenferro::linalg
