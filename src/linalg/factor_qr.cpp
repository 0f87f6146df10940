// QR (LAPACK geqrf + orgqr/ungqr) with AD rules, and the Householder
// product kernel (orgqr/ungqr on given reflectors).

#include <algorithm>
#include <cstring>

#include "linalg/factor.hpp"
#include "linalg/lapack.hpp"

namespace tenferro::linalg::detail {
namespace {

struct QrParams {
  int mode = 0;  // 0 reduced, 1 complete, 2 r
  bool operator==(const QrParams&) const = default;
};
std::size_t hash_value(const QrParams& p) {
  return static_cast<std::size_t>(p.mode);
}

class Qr final : public LinalgOp<Qr, QrParams> {
 public:
  static constexpr std::string_view kFamily = "tenferro.linalg_qr.v1";
  using LinalgOp::LinalgOp;
  std::size_t input_count() const override { return 1; }
  std::size_t output_count() const override { return 2; }
  InferenceResult infer(std::span<const TensorMeta> in) const override {
    require_floating("qr", in[0], "A");
    require_matrix("qr", in[0], "A");
    const auto m = in[0].shape[0].try_constant(), n = in[0].shape[1].try_constant();
    if (!m || !n) {
      fail(ErrorKind::Unsupported, "qr", "qr needs constant matrix extents, got ",
           to_string(in[0].shape));
    }
    const std::int64_t k = std::min(*m, *n);
    SymShape q(in[0].shape.begin(), in[0].shape.end()), r = q;
    const int mode = params().mode;
    q[0] = SymDim(mode == 2 ? 0 : *m);
    q[1] = SymDim(mode == 2 ? 0 : (mode == 1 ? *m : k));
    r[0] = SymDim(mode == 1 ? *m : k);
    return {{TensorMeta{in[0].dtype, q}, TensorMeta{in[0].dtype, r}}, {}};
  }
  std::vector<Tensor> execute(Backend& backend, std::span<const Tensor> in,
                              Workspaces&) const override;
  const RuleSet& ad_rules() const override { return rules(); }
  static const RuleSet& rules();
};

template <class T>
void check_info(lapack::fint info, const char* what) {
  if (info < 0) fail(ErrorKind::Internal, "qr", "LAPACK ", what, " rejected argument ", -info);
}

// Workspace of the batched QR, leased from the runtime-owned pool
// (workspace.hpp): the optimal lwork of geqrf and orgqr is queried once per
// shape and workspace (not per matrix), and the buffers are reused across
// matrices (released when large).
template <class T>
struct QrWork {
  lapack::fint qm = -1, qn = -1, qlwork = 1;           // geqrf (m, n)
  lapack::fint om = -1, oc = -1, ok = -1, olwork = 1;  // orgqr (m, cols, k)
  std::vector<T> work, tau;
  T* buffer(lapack::fint n) {
    if (work.size() < static_cast<std::size_t>(n)) work.resize(static_cast<std::size_t>(n));
    return work.data();
  }
  void trim() {
    if ((work.capacity() + tau.capacity()) * sizeof(T) > kKeepBytes) {
      work = {};
      tau = {};
    }
  }
};

// Q from reflectors already in Qb's first k columns (m x cols, leading m).
template <class T>
void form_q(QrWork<T>& w, T* Qb, std::int64_t m, std::int64_t cols, std::int64_t k, const T* tau) {
  if (m == 0 || cols == 0) return;
  const auto fm = static_cast<lapack::fint>(m), fc = static_cast<lapack::fint>(cols),
             fk = static_cast<lapack::fint>(k);
  lapack::fint info = 0;
  if (w.om != fm || w.oc != fc || w.ok != fk) {
    T wq(0);
    lapack::orgqr(fm, fc, fk, Qb, fm, tau, &wq, -1, &info);
    check_info<T>(info, "orgqr");
    w.olwork = static_cast<lapack::fint>(std::max<double>(1.0, std::real(wq)));
    w.om = fm;
    w.oc = fc;
    w.ok = fk;
  }
  lapack::orgqr(fm, fc, fk, Qb, fm, tau, w.buffer(w.olwork), w.olwork, &info);
  check_info<T>(info, "orgqr");
}

template <class T>
void qr_batches(int mode, Tensor& a, Tensor& q, Tensor& r, Backend& backend,
                Workspaces& workspaces) {
  const std::int64_t m = a.shape()[0], n = a.shape()[1], k = std::min(m, n);
  const std::int64_t batches = batch_count(a.shape());
  const std::int64_t qc = q.shape()[1], rr = r.shape()[0];
  T* A = static_cast<T*>(a.raw_data());
  T* Q = static_cast<T*>(q.raw_data());
  T* R = static_cast<T*>(r.raw_data());
  const auto pool = workspaces.pool<QrWork<T>>();
  for_each_batch(backend, batches, m * n * k, [&](std::int64_t b) {
    T* Ab = A + b * m * n;
    const auto lease = pool->lease();
    QrWork<T>& w = *lease;
    std::vector<T>& tau = w.tau;
    tau.assign(static_cast<std::size_t>(std::max<std::int64_t>(k, 1)), T(0));
    if (k > 0) {
      const auto fm = static_cast<lapack::fint>(m), fn = static_cast<lapack::fint>(n);
      lapack::fint info = 0;
      if (w.qm != fm || w.qn != fn) {
        T wq(0);
        lapack::geqrf(fm, fn, Ab, fm, tau.data(), &wq, -1, &info);
        check_info<T>(info, "geqrf");
        w.qlwork = static_cast<lapack::fint>(std::max<double>(1.0, std::real(wq)));
        w.qm = fm;
        w.qn = fn;
      }
      lapack::geqrf(fm, fn, Ab, fm, tau.data(), w.buffer(w.qlwork), w.qlwork, &info);
      check_info<T>(info, "geqrf");
    }
    // R: the upper triangle of geqrf's result (rows below min(j + 1, m) of
    // column j are zero); Q starts from the reflectors in its first k columns.
    T* Rb = R + b * rr * n;
    for (std::int64_t j = 0; j < n; ++j) {
      const std::int64_t top = std::min({j + 1, m, rr});
      std::copy(Ab + j * m, Ab + j * m + top, Rb + j * rr);
      std::fill(Rb + j * rr + top, Rb + (j + 1) * rr, T(0));
    }
    if (mode == 2) {
      return;
    }
    T* Qb = Q + b * m * qc;
    std::copy(Ab, Ab + m * std::min(k, qc), Qb);
    std::fill(Qb + m * std::min(k, qc), Qb + m * qc, T(0));
    form_q(w, Qb, m, qc, k, tau.data());
  });
}

std::vector<Tensor> Qr::execute(Backend& backend, std::span<const Tensor> in,
                                Workspaces& workspaces) const {
  Tensor a = compact_copy(in[0], backend);
  const Shape& s = a.shape();
  const std::int64_t m = s[0], n = s[1], k = std::min(m, n);
  const int mode = params().mode;
  Shape qs = s, rs = s;
  qs[0] = mode == 2 ? 0 : m;
  qs[1] = mode == 2 ? 0 : (mode == 1 ? m : k);
  rs[0] = mode == 1 ? m : k;
  Tensor q = backend.empty(qs, a.dtype());
  Tensor r = backend.empty(rs, a.dtype());
  dispatch_floating(a.dtype(),
                    [&]<class T>() { qr_batches<T>(mode, a, q, r, backend, workspaces); });
  return {q, r};
}

// PyTorch's linalg_qr_jvp. Square block (m >= n; Q [m, n], R [n, n]):
//   C = Q^H dA R^{-1};  Omega = tril(C, -1) - tril(C, -1)^H + i Im diag(C)
//   (skew-Hermitian, so that dR R^{-1} = C - Omega is upper with a real diagonal);
//   dR = (C - Omega) R;  dQ = dA R^{-1} - Q (C - Omega).
// Wide (m < n): A = Q [R1, R2]; the square rule on A1 = Q R1 gives dQ and dR1,
// and dR2 = Q^H (dA2 - dQ R2).
std::pair<Val, Val> qr_square_jvp(Emitter& e, Val Q, Val R, Val dA) {
  const Val dX = emit(e, solve_triangular_op(true, false, false, false), {R, dA})[0];
  const Val C = mm(e, mH(e, Q), dX);
  const Val Cl = tril(e, C, -1);
  Val omega = e.sub(Cl, mH(e, Cl));
  if (is_complex(e.dtype_of(C))) {
    const Val d = diag_embed(e, diag(e, C));
    omega = e.add(omega, e.scale(e.sub(d, e.conj(d)), 0.5));
  }
  const Val M = e.sub(C, omega);
  return {e.sub(dX, mm(e, Q, M)), mm(e, M, R)};
}

std::vector<MaybeVal> qr_jvp(const RuleArgs& a, std::span<const MaybeVal> t) {
  if (!t[0]) return {std::nullopt, std::nullopt};
  Emitter& e = a.emitter;
  const int mode = static_cast<const Qr&>(a.op).params().mode;
  if (mode == 2) {
    fail(ErrorKind::UnsupportedAdRule, "qr",
         "the derivative of qr needs Q, which mode \"r\" does not compute; use mode "
         "\"reduced\" (as in PyTorch)");
  }
  const Val Q = a.outputs[0], R = a.outputs[1];
  const std::int64_t m = extent(e, *t[0], 0, "qr"), n = extent(e, *t[0], 1, "qr");
  if (mode == 1 && m > n) {
    fail(ErrorKind::UnsupportedAdRule, "qr",
         "qr with mode \"complete\" is not differentiable when A has more rows than columns "
         "(Q is not unique; as in PyTorch); use mode \"reduced\"");
  }
  if (m >= n) {
    auto [dQ, dR] = qr_square_jvp(e, Q, R, *t[0]);
    return {dQ, dR};
  }
  const Val R1 = slice_axis(e, R, 1, 0, m), R2 = slice_axis(e, R, 1, m, n);
  auto [dQ, dR1] = qr_square_jvp(e, Q, R1, slice_axis(e, *t[0], 1, 0, m));
  const Val dR2 = mm(e, mH(e, Q), e.sub(slice_axis(e, *t[0], 1, m, n), mm(e, dQ, R2)));
  return {dQ, concat2(e, dR1, dR2, 1)};
}

const RuleSet& Qr::rules() {
  static const RuleSet r = [] {
    RuleSet s;
    s.jvp = qr_jvp;
    s.residuals = ad::Residuals::of({}, {0, 1});
    return s;
  }();
  return r;
}

// ---- householder_product (direct tier) -------------------------------------------------------

struct NoParams {
  bool operator==(const NoParams&) const = default;
};
std::size_t hash_value(const NoParams&) {
  return 0;
}

class Householder final : public LinalgOp<Householder, NoParams> {
 public:
  static constexpr std::string_view kFamily = "tenferro.linalg_householder_product.v1";
  using LinalgOp::LinalgOp;
  std::size_t input_count() const override { return 2; }
  std::size_t output_count() const override { return 1; }
  InferenceResult infer(std::span<const TensorMeta> in) const override {
    const char* op = "householder_product";
    require_floating(op, in[0], "V");
    require_matrix(op, in[0], "V");
    require_floating(op, in[1], "tau");
    if (in[0].dtype != in[1].dtype) {
      fail(ErrorKind::DTypeMismatch, op, "V and tau must have the same dtype, got ",
           tenferro::name(in[0].dtype), " and ", tenferro::name(in[1].dtype));
    }
    if (in[1].rank() != in[0].rank() - 1) {
      fail(ErrorKind::RankMismatch, op, "tau must be [k, batch...] for V ", to_string(in[0].shape),
           ", got ", to_string(in[1].shape));
    }
    const auto m = in[0].shape[0].try_constant(), n = in[0].shape[1].try_constant(),
               k = in[1].shape[0].try_constant();
    if (m && n && k && (*n > *m || *k > *n)) {
      fail(ErrorKind::ShapeMismatch, op, "needs k <= n <= m for V [m, n] and tau [k], got V ",
           to_string(in[0].shape), " and tau ", to_string(in[1].shape));
    }
    std::vector<ShapeConstraint> cs;
    for (std::int64_t d = 2; d < in[0].rank(); ++d) {
      cs.push_back(ShapeConstraint::dims_equal(in[0].shape[d], in[1].shape[d - 1],
                                               "tau has V's batch extents"));
    }
    return {{in[0]}, std::move(cs)};
  }
  std::vector<Tensor> execute(Backend& backend, std::span<const Tensor> in,
                              Workspaces& workspaces) const override {
    Tensor q = compact_copy(in[0], backend);
    const Tensor tau = compact_copy(in[1], backend);
    const std::int64_t m = q.shape()[0], n = q.shape()[1], k = tau.shape()[0];
    const std::int64_t batches = batch_count(q.shape());
    dispatch_floating(q.dtype(), [&]<class T>() {
      T* Q = static_cast<T*>(q.raw_data());
      const T* tp = tau.data<T>();
      const auto pool = workspaces.pool<QrWork<T>>();
      for_each_batch(backend, batches, m * n * k, [&](std::int64_t b) {
        const auto lease = pool->lease();
        form_q(*lease, Q + b * m * n, m, n, k, tp + b * k);
      });
    });
    return {q};
  }
  const RuleSet& ad_rules() const override { return rules(); }
  static const RuleSet& rules() {
    static const RuleSet r = [] {
      RuleSet s;
      s.jvp = [](const RuleArgs&, std::span<const MaybeVal>) -> std::vector<MaybeVal> {
        fail(ErrorKind::UnsupportedAdRule, "householder_product",
             "the kernel op serves the direct tier; the AD tiers compose the product from "
             "differentiable ops");
      };
      return s;
    }();
    return r;
  }
};

}  // namespace

std::shared_ptr<const LinalgOpBase> qr_op(int mode) {
  return std::make_shared<const Qr>(QrParams{mode});
}
std::shared_ptr<const LinalgOpBase> householder_op() {
  return std::make_shared<const Householder>(NoParams{});
}

void register_factor_qr(Registry& r) {
  r.add<Qr>();
  r.add<Householder>();
}

}  // namespace tenferro::linalg::detail
