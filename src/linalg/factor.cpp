// LU factorisation (LAPACK getrf), LU solves (getrs), solve (both in one
// op), the permutation helpers, and their AD rules. Registers every op of the factor part.

#include <algorithm>
#include <numeric>
#include <span>

#include "linalg/balance.hpp"
#include "linalg/factor.hpp"
#include "linalg/lapack.hpp"

namespace tenferro::linalg::detail {

const char* caller_name(LuCaller c) {
  switch (c) {
    case LuCaller::Solve:
      return "solve";
    case LuCaller::Inv:
      return "inv";
    case LuCaller::Det:
      return "det";
    default:
      return "lu_factor";
  }
}

std::int64_t extent(Emitter& e, Val v, std::int64_t d, std::string_view op) {
  const auto c = e.meta(v).shape[d].try_constant();
  if (!c) {
    fail(ErrorKind::Unsupported, std::string(op),
         "the derivative of a non-square factorisation needs constant matrix extents");
  }
  return *c;
}

Val slice_axis(Emitter& e, Val x, std::int64_t axis, std::int64_t lo, std::int64_t hi) {
  const TensorMeta m = e.meta(x);
  Shape start(m.rank(), 0), limit, stride(m.rank(), 1);
  for (std::int64_t d = 0; d < m.rank(); ++d) limit.push_back(m.shape[d].constant());
  start[axis] = lo;
  limit[axis] = hi;
  const Val in[1] = {x};
  return e.emit1(make_primitive(prim::Slice{start, limit, stride}), in);
}

Val concat2(Emitter& e, Val a, Val b, std::int64_t axis) {
  const Val in[2] = {a, b};
  return e.emit1(make_primitive(prim::Concatenate{axis, 2}), in);
}

namespace {

template <class... A>
std::string cat(const A&... a) {
  return tenferro::detail::cat(a...);
}

struct Flag {
  bool on = false;
  bool operator==(const Flag&) const = default;
};
std::size_t hash_value(const Flag& f) {
  return f.on ? 1u : 0u;
}

void require_pivots(std::string_view op, const TensorMeta& p) {
  if (p.dtype != DType::I32) {
    fail(ErrorKind::DTypeMismatch, std::string(op),
         "pivots must be i32 (as lu_factor returns), got ", tenferro::name(p.dtype));
  }
  if (p.rank() < 1) {
    fail(ErrorKind::RankMismatch, std::string(op), "pivots must be [k, batch...], got rank 0");
  }
}

// ---- lu_factor -------------------------------------------------------------------------

struct LuParams {
  bool check = true;
  LuCaller caller = LuCaller::LuFactor;
  bool operator==(const LuParams&) const = default;
};
std::size_t hash_value(const LuParams& p) {
  return (p.check ? 1u : 0u) | (static_cast<std::size_t>(p.caller) << 1);
}

class LuFactor final : public LinalgOp<LuFactor, LuParams> {
 public:
  static constexpr std::string_view kFamily = "tenferro.linalg_lu_factor.v1";
  using LinalgOp::LinalgOp;
  std::size_t input_count() const override { return 1; }
  // LU, pivots, info, and P (A's dtype) for the rules: the eager tier keeps
  // only floating outputs as residuals.
  std::size_t output_count() const override { return 4; }
  InferenceResult infer(std::span<const TensorMeta> in) const override {
    const char* op = caller_name(params().caller);
    std::vector<ShapeConstraint> cs;
    require_floating(op, in[0], "A");
    require_matrix(op, in[0], "A");
    if (params().caller != LuCaller::LuFactor) require_square(op, in[0], cs, "A");
    SymShape batch(in[0].shape.begin() + 2, in[0].shape.end());
    const auto m = in[0].shape[0].try_constant(), n = in[0].shape[1].try_constant();
    if (!m || !n) {
      fail(ErrorKind::Unsupported, op, "lu_factor needs constant matrix extents, got ",
           to_string(in[0].shape));
    }
    SymShape piv = batch;
    piv.insert(piv.begin(), SymDim(std::min(*m, *n)));
    SymShape p = batch;
    p.insert(p.begin(), {SymDim(*m), SymDim(*m)});
    return {{in[0], TensorMeta{DType::I32, piv}, TensorMeta{DType::I32, batch},
             TensorMeta{in[0].dtype, p}},
            std::move(cs)};
  }
  std::vector<Tensor> execute(Backend& backend, std::span<const Tensor> in,
                              Workspaces&) const override;
  const RuleSet& ad_rules() const override { return rules(); }
  static const RuleSet& rules();
};

void swaps_to_order(const std::int32_t* piv, std::int64_t k, std::span<std::int64_t> order);

// The LU factorisation of one matrix of a batch (A [m, n, batch...] compact,
// overwritten by its factors), its pivots, info, and P (as a matrix of A's
// dtype, for the rules) when PM is not null.
template <class T>
void getrf_one(const LuParams& p, std::int64_t m, std::int64_t n, T* A, std::int32_t* P,
               std::int32_t* I, T* PM, std::int64_t b) {
  const std::int64_t k = std::min(m, n);
  lapack::fint res = 0;
  if (k > 0) {
    balance::getrf(m, n, A + b * m * n, m, P + b * k, &res);
  }
  I[b] = res;
  if (res < 0)
    fail(ErrorKind::Internal, caller_name(p.caller), "LAPACK getrf rejected argument ", -res);
  if (res > 0 && p.check) {
    numerical_failure(ErrorKind::Singular, caller_name(p.caller), b,
                      cat("the matrix is singular: U[", res - 1, ", ", res - 1,
                          "] of its LU factorisation is exactly zero (use the _ex form to get "
                          "info instead of an error)"));
  }
  if (PM == nullptr) return;
  T* Pb = PM + b * m * m;
  std::fill(Pb, Pb + m * m, T(0));
  // Small matrices (the batched case) keep the row order on the stack.
  constexpr std::int64_t kInline = 64;
  std::int64_t inline_order[kInline];
  std::vector<std::int64_t> heap_order(m > kInline ? m : 0);
  const std::span<std::int64_t> order =
      m > kInline ? std::span<std::int64_t>(heap_order) : std::span<std::int64_t>(inline_order, m);
  swaps_to_order(P + b * k, k, order);
  for (std::int64_t i = 0; i < m; ++i) Pb[order[i] + i * m] = T(1);  // P = (P^T)^T
}

// `perm` (P as a matrix of A's dtype, for the rules) may be null.
template <class T>
void getrf_batches(const LuParams& p, Tensor& lu, Tensor& piv, Tensor& info, Tensor* perm,
                   Backend& backend) {
  T* PM = perm != nullptr ? static_cast<T*>(perm->raw_data()) : nullptr;
  const std::int64_t m = lu.shape()[0], n = lu.shape()[1], k = std::min(m, n);
  T* A = static_cast<T*>(lu.raw_data());
  auto* P = static_cast<std::int32_t*>(piv.raw_data());
  auto* I = static_cast<std::int32_t*>(info.raw_data());
  for_each_batch(backend, batch_count(lu.shape()), m * n * k,
                 [&](std::int64_t b) { getrf_one<T>(p, m, n, A, P, I, PM, b); });
}

// A compact copy of A [m, n, b...] for getrf to overwrite, and its other
// outputs, unfilled: pivots [min(m, n), b...], info [b...] and P [m, m, b...].
struct LuOutputs {
  Tensor lu, piv, info, perm;
};
LuOutputs lu_outputs(const Tensor& a, Backend& backend) {
  LuOutputs o;
  o.lu = compact_copy(a, backend);
  const Shape& s = o.lu.shape();
  const Shape batch(s.begin() + 2, s.end());
  Shape ps = batch;
  ps.insert(ps.begin(), std::min(s[0], s[1]));
  o.piv = backend.empty(ps, DType::I32);
  o.info = backend.empty(batch, DType::I32);
  Shape pm = batch;
  pm.insert(pm.begin(), s[0]);
  pm.insert(pm.begin(), s[0]);
  o.perm = backend.empty(pm, o.lu.dtype());
  return o;
}

// getrf on a compact copy of A [m, n, b...]: {LU, pivots, info, P}.
std::vector<Tensor> factorise(const LuParams& p, const Tensor& a, Backend& backend) {
  LuOutputs o = lu_outputs(a, backend);
  dispatch_floating(o.lu.dtype(),
                    [&]<class T>() { getrf_batches<T>(p, o.lu, o.piv, o.info, &o.perm, backend); });
  return {o.lu, o.piv, o.info, o.perm};
}

std::vector<Tensor> LuFactor::execute(Backend& backend, std::span<const Tensor> in,
                                      Workspaces&) const {
  return factorise(params(), in[0], backend);
}

// The packed tangent of a square LU = L1 U1 (L1 unit lower) for the permuted
// tangent dA1 = P^T dA: with F = L1^{-1} dA1 U1^{-1}, dL1 = L1 tril(F, -1) and
// dU1 = triu(F) U1; returns tril(dL1, -1) + dU1 (dL1 is strictly lower).
Val square_lu_tangent(Emitter& e, Val sq, Val dA1, Val* dL1, Val* dU1) {
  Val F = emit(e, solve_triangular_op(false, true, true, false), {sq, dA1})[0];  // L1^{-1} dA1
  F = emit(e, solve_triangular_op(true, false, false, false), {sq, F})[0];       // ... U1^{-1}
  const Val Fl = tril(e, F, -1);
  *dL1 = e.add(mm(e, tril(e, sq, -1), Fl), Fl);  // L1 tril(F, -1), L1 unit lower
  *dU1 = mm(e, triu(e, F), triu(e, sq));
  return e.add(*dL1, *dU1);
}

// The pushforward of the packed LU (PyTorch's linalg_lu_jvp). With
// P^T dA = [dA1; dA2] (tall) or [dA1, dA2] (wide) and the square block
// factored as L1 U1, F = L1^{-1} dA1 U1^{-1}:
//   dL1 = L1 tril(F, -1), dU1 = triu(F) U1;
//   tall: dL2 = (dA2 - L2 dU1) U1^{-1};  wide: dU2 = L1^{-1} (dA2 - dL1 U2).
// The packed tangent is tril(dL, -1) + dU (dL is strictly lower).
std::vector<MaybeVal> lu_jvp(const RuleArgs& a, std::span<const MaybeVal> t) {
  const std::vector<MaybeVal> none(4);
  if (!t[0]) return none;
  Emitter& e = a.emitter;
  const Val LU = a.outputs[0], P = a.outputs[3];
  const std::int64_t m = extent(e, LU, 0, "lu_factor"), n = extent(e, LU, 1, "lu_factor");
  const std::int64_t k = std::min(m, n);
  const Val pdA = mm(e, mT(e, P), *t[0]);  // P^T dA
  const Val sq = m == n ? LU : (m > n ? slice_axis(e, LU, 0, 0, k) : slice_axis(e, LU, 1, 0, k));
  const Val dA1 =
      m == n ? pdA : (m > n ? slice_axis(e, pdA, 0, 0, k) : slice_axis(e, pdA, 1, 0, k));
  Val dL1, dU1;
  const Val dsq = square_lu_tangent(e, sq, dA1, &dL1, &dU1);
  std::vector<MaybeVal> out = none;
  if (m == n) {
    out[0] = dsq;
    return out;
  }
  if (m > n) {
    const Val L2 = slice_axis(e, LU, 0, k, m);
    const Val dA2 = slice_axis(e, pdA, 0, k, m);
    const Val dL2 = emit(e, solve_triangular_op(true, false, false, false),
                         {sq, e.sub(dA2, mm(e, L2, dU1))})[0];
    out[0] = concat2(e, dsq, dL2, 0);
    return out;
  }
  const Val U2 = slice_axis(e, LU, 1, k, n);
  const Val dA2 = slice_axis(e, pdA, 1, k, n);
  const Val dU2 =
      emit(e, solve_triangular_op(false, true, true, false), {sq, e.sub(dA2, mm(e, dL1, U2))})[0];
  out[0] = concat2(e, dsq, dU2, 1);
  return out;
}

const RuleSet& LuFactor::rules() {
  static const RuleSet r = [] {
    RuleSet s;
    s.jvp = lu_jvp;
    s.residuals = ad::Residuals::of({}, {0, 3});
    return s;
  }();
  return r;
}

// ---- pivots ---------------------------------------------------------------------------

// Pivots the user passed in: swap i must be with a row in [i, m).
void check_pivots(const std::int32_t* piv, std::int64_t k, std::int64_t m, std::string_view op,
                  std::int64_t batch) {
  for (std::int64_t i = 0; i < k; ++i) {
    const std::int64_t j = piv[i] - 1;
    if (j < i || j >= m) {
      numerical_failure(ErrorKind::InvalidArgument, op, batch,
                        cat("pivot ", i, " is ", piv[i], ", outside [", i + 1, ", ", m,
                            "]; pass the pivots lu_factor returned"));
    }
  }
}

// The row order with (P^T X)[i] = X[order[i]], from the k swaps getrf just
// returned (in range by LAPACK's contract: pivots a user passes go through
// check_pivots instead).
void swaps_to_order(const std::int32_t* piv, std::int64_t k, std::span<std::int64_t> order) {
  std::iota(order.begin(), order.end(), std::int64_t{0});
  for (std::int64_t i = 0; i < k; ++i) std::swap(order[i], order[piv[i] - 1]);
}

// ---- lu_solve ------------------------------------------------------------------------------

class LuSolve final : public LinalgOp<LuSolve, Flag> {
 public:
  static constexpr std::string_view kFamily = "tenferro.linalg_lu_solve.v1";
  using LinalgOp::LinalgOp;
  std::size_t input_count() const override { return 3; }
  std::size_t output_count() const override { return 1; }
  InferenceResult infer(std::span<const TensorMeta> in) const override {
    const std::string_view op = "lu_solve";
    std::vector<ShapeConstraint> cs;
    require_floating(op, in[0], "LU");
    require_square(op, in[0], cs, "LU");
    require_pivots(op, in[1]);
    require_floating(op, in[2], "B");
    require_matrix(op, in[2], "B");
    if (in[0].dtype != in[2].dtype) {
      fail(ErrorKind::DTypeMismatch, std::string(op), "LU and B must have the same dtype, got ",
           tenferro::name(in[0].dtype), " and ", tenferro::name(in[2].dtype));
    }
    require_same_batch(op, in[0], in[2], cs);
    if (in[1].rank() != in[0].rank() - 1) {
      fail(ErrorKind::RankMismatch, std::string(op), "pivots must be [n, batch...] for LU ",
           to_string(in[0].shape), ", got ", to_string(in[1].shape));
    }
    cs.push_back(ShapeConstraint::dims_equal(in[0].shape[0], in[1].shape[0],
                                             "pivots has one entry per row of LU"));
    for (std::int64_t d = 2; d < in[0].rank(); ++d) {
      cs.push_back(ShapeConstraint::dims_equal(in[0].shape[d], in[1].shape[d - 1],
                                               "pivots has LU's batch extents"));
    }
    cs.push_back(
        ShapeConstraint::dims_equal(in[0].shape[0], in[2].shape[0], "B has as many rows as LU"));
    return {{in[2]}, std::move(cs)};
  }
  std::vector<Tensor> execute(Backend& backend, std::span<const Tensor> in,
                              Workspaces&) const override;
  const RuleSet& ad_rules() const override { return rules(); }
  static const RuleSet& rules();
};

// X[b] = A[b]^{-1} X[b] (or A[b]^{-H} X[b]) from the packed factors, for
// n x n factors and k right-hand sides (both non-zero).
template <class T>
void getrs_one(bool adjoint, std::int64_t n, std::int64_t k, const T* A, const std::int32_t* P,
               T* X, std::int64_t b, std::string_view op) {
  lapack::fint res = 0;
  balance::getrs(adjoint ? 'C' : 'N', n, k, A + b * n * n, n, P + b * n, X + b * n * k, n, &res);
  if (res < 0) fail(ErrorKind::Internal, std::string(op), "LAPACK getrs rejected argument ", -res);
}

template <class T>
void getrs_batches(bool adjoint, const Tensor& lu, const Tensor& piv, Tensor& x, Backend& backend) {
  const std::int64_t n = lu.shape()[0], k = x.shape()[1];
  if (n == 0 || k == 0) return;
  const T* A = lu.data<T>();
  const auto* P = piv.data<std::int32_t>();
  T* X = static_cast<T*>(x.raw_data());
  for_each_batch(backend, batch_count(x.shape()), n * n * k, [&](std::int64_t b) {
    check_pivots(P + b * n, n, n, "lu_solve", b);
    getrs_one<T>(adjoint, n, k, A, P, X, b, "lu_solve");
  });
}

std::vector<Tensor> LuSolve::execute(Backend& backend, std::span<const Tensor> in,
                                     Workspaces&) const {
  const Tensor lu = in[0].is_contiguous() ? in[0] : compact_copy(in[0], backend);
  const Tensor piv = in[1].is_contiguous() ? in[1] : compact_copy(in[1], backend);
  Tensor x = compact_copy(in[2], backend);
  dispatch_floating(x.dtype(),
                    [&]<class T>() { getrs_batches<T>(params().on, lu, piv, x, backend); });
  return {x};
}

// With A = P L U (L = unit lower, U = upper triangle of LU) and dA = P (dL U + L dU):
//   X = A^{-1} B:  dX = A^{-1} dB - U^{-1} (L^{-1} dL (U X) + dU X);
//   X = A^{-H} B:  dX = A^{-H} (dB - dU^H L^H Z - U^H dL^H Z),  Z = L^{-H} U^{-H} B = P^T X.
std::vector<MaybeVal> lu_solve_jvp(const RuleArgs& a, std::span<const MaybeVal> t) {
  Emitter& e = a.emitter;
  const bool adjoint = static_cast<const LuSolve&>(a.op).params().on;
  const Val LU = a.inputs[0], piv = a.inputs[1];
  std::optional<Val> rhs;
  if (t[2]) rhs = *t[2];
  if (!adjoint) {
    std::optional<Val> out;
    if (rhs) out = emit(e, lu_solve_op(false), {LU, piv, *rhs})[0];
    if (t[0]) {
      const Val X = a.outputs[0];
      const Val dL = tril(e, *t[0], -1), dU = triu(e, *t[0]);
      Val y = emit(e, solve_triangular_op(false, true, true, false),
                   {LU, mm(e, dL, mm(e, triu(e, LU), X))})[0];
      y = e.add(y, mm(e, dU, X));
      y = emit(e, solve_triangular_op(true, true, false, false), {LU, y})[0];
      out = out ? e.sub(*out, y) : e.neg(y);
    }
    if (!out) return {std::nullopt};
    return {*out};
  }
  if (t[0]) {
    const Val B = a.inputs[2];
    Val Z = emit(e, solve_triangular_op(true, true, false, true), {LU, B})[0];  // U^{-H} B
    Z = emit(e, solve_triangular_op(false, true, true, true), {LU, Z})[0];      // L^{-H} ...
    const Val Lu = tril(e, LU, -1);
    const Val LhZ = e.add(Z, mm(e, mH(e, Lu), Z));  // L^H Z (unit diagonal)
    const Val dL = tril(e, *t[0], -1), dU = triu(e, *t[0]);
    const Val s = e.add(mm(e, mH(e, dU), LhZ), mm(e, mH(e, triu(e, LU)), mm(e, mH(e, dL), Z)));
    rhs = rhs ? e.sub(*rhs, s) : e.neg(s);
  }
  if (!rhs) return {std::nullopt};
  return {emit(e, lu_solve_op(true), {LU, piv, *rhs})[0]};
}

std::vector<MaybeVal> lu_solve_transpose(const RuleArgs& a, std::span<const bool> linear,
                                         std::span<const MaybeVal> ct) {
  if (linear[0]) {
    fail(ErrorKind::UnsupportedAdRule, "lu_solve",
         "lu_solve is not linear in LU; transpose it in B only");
  }
  if (!ct[0]) return {std::nullopt, std::nullopt, std::nullopt};
  const bool adjoint = static_cast<const LuSolve&>(a.op).params().on;
  return {std::nullopt, std::nullopt,
          emit(a.emitter, lu_solve_op(!adjoint), {a.inputs[0], a.inputs[1], *ct[0]})[0]};
}

const RuleSet& LuSolve::rules() {
  static const RuleSet r = [] {
    RuleSet s;
    s.jvp = lu_solve_jvp;
    s.transpose = lu_solve_transpose;
    s.residuals = ad::Residuals::of({0, 1, 2}, {0});
    return s;
  }();
  return r;
}

// ---- solve ---------------------------------------------------------------------------------

// A X = B as one op (getrf, then getrs on the factors), so that its
// derivative is the solve's own, dX = A^{-1} (dB - dA X) on the factors: O(n^2)
// per right-hand side. Composed from lu_factor and lu_solve, the derivative
// went through the factorisation's (O(n^3) more per tangent; six times slower
// than PyTorch for a traced vjp at n = 256). Outputs: X, info, and for the
// rule the packed factors LU and P (A's dtype: eager residuals are floating).
class Solve final : public LinalgOp<Solve, LuParams> {
 public:
  static constexpr std::string_view kFamily = "tenferro.linalg_solve.v1";
  using LinalgOp::LinalgOp;
  std::size_t input_count() const override { return 2; }
  std::size_t output_count() const override { return 4; }
  InferenceResult infer(std::span<const TensorMeta> in) const override {
    const char* op = caller_name(params().caller);
    std::vector<ShapeConstraint> cs;
    require_floating(op, in[0], "A");
    require_matrix(op, in[0], "A");
    require_square(op, in[0], cs, "A");
    require_floating(op, in[1], "B");
    require_matrix(op, in[1], "B");
    if (in[0].dtype != in[1].dtype) {
      fail(ErrorKind::DTypeMismatch, op, "A and B must have the same dtype, got ",
           tenferro::name(in[0].dtype), " and ", tenferro::name(in[1].dtype));
    }
    require_same_batch(op, in[0], in[1], cs);
    cs.push_back(
        ShapeConstraint::dims_equal(in[0].shape[0], in[1].shape[0], "B has as many rows as A"));
    const SymShape batch(in[0].shape.begin() + 2, in[0].shape.end());
    SymShape p = batch;
    p.insert(p.begin(), {in[0].shape[0], in[0].shape[0]});
    return {{in[1], TensorMeta{DType::I32, batch}, in[0], TensorMeta{in[0].dtype, p}},
            std::move(cs)};
  }
  std::vector<Tensor> execute(Backend& backend, std::span<const Tensor> in,
                              Workspaces&) const override;
  const RuleSet& ad_rules() const override { return rules(); }
  static const RuleSet& rules();
};

std::vector<Tensor> Solve::execute(Backend& backend, std::span<const Tensor> in,
                                   Workspaces&) const {
  LuOutputs f = lu_outputs(in[0], backend);
  Tensor x = compact_copy(in[1], backend);
  // Each matrix is factored and solved in one visit (its factors are still in
  // the cache for getrs), and the pivots are our own, so need no check.
  const std::int64_t n = f.lu.shape()[0], k = x.shape()[1];
  dispatch_floating(f.lu.dtype(), [&]<class T>() {
    T* A = static_cast<T*>(f.lu.raw_data());
    auto* P = static_cast<std::int32_t*>(f.piv.raw_data());
    auto* I = static_cast<std::int32_t*>(f.info.raw_data());
    T* PM = static_cast<T*>(f.perm.raw_data());
    T* X = static_cast<T*>(x.raw_data());
    for_each_batch(backend, batch_count(f.lu.shape()), n * n * (n + k), [&](std::int64_t b) {
      getrf_one<T>(params(), n, n, A, P, I, PM, b);
      if (n > 0 && k > 0) getrs_one<T>(false, n, k, A, P, X, b, "solve");
    });
  });
  return {x, f.info, f.lu, f.perm};
}

// dX = U^{-1} L^{-1} P^T (dB - dA X), with A = P L U: linear in (dA, dB), so
// the reverse mode is its transpose (two triangular solves with the
// cotangent, and -gB X^H for A). The factors' own tangent (lu_factor's; P is
// piecewise constant) is there for higher orders, whose programs use LU as a
// value; a first-order derivative never reads it, and its linear part is
// pruned.
std::vector<MaybeVal> solve_jvp(const RuleArgs& a, std::span<const MaybeVal> t) {
  std::vector<MaybeVal> out(4);
  Emitter& e = a.emitter;
  const Val X = a.outputs[0], LU = a.outputs[2], P = a.outputs[3];
  if (!t[0] && !t[1]) return out;
  const Val Pt = mT(e, P);
  std::optional<Val> rhs;
  if (t[1]) rhs = *t[1];
  if (t[0]) {
    const Val dAX = mm(e, *t[0], X);
    rhs = rhs ? e.sub(*rhs, dAX) : e.neg(dAX);
    Val dL, dU;
    out[2] = square_lu_tangent(e, LU, mm(e, Pt, *t[0]), &dL, &dU);
  }
  Val y = mm(e, Pt, *rhs);
  y = emit(e, solve_triangular_op(false, true, true, false), {LU, y})[0];       // L^{-1}
  out[0] = emit(e, solve_triangular_op(true, true, false, false), {LU, y})[0];  // U^{-1}
  return out;
}

const RuleSet& Solve::rules() {
  static const RuleSet r = [] {
    RuleSet s;
    s.jvp = solve_jvp;
    s.residuals = ad::Residuals::of({}, {0, 2, 3});
    return s;
  }();
  return r;
}

}  // namespace

std::shared_ptr<const LinalgOpBase> lu_factor_op(bool check, LuCaller caller) {
  return std::make_shared<const LuFactor>(LuParams{check, caller});
}
std::shared_ptr<const LinalgOpBase> lu_solve_op(bool adjoint) {
  return std::make_shared<const LuSolve>(Flag{adjoint});
}
std::shared_ptr<const LinalgOpBase> solve_op(bool check, LuCaller caller) {
  return std::make_shared<const Solve>(LuParams{check, caller});
}

void register_factor_qr(Registry& r);
void register_factor_det(Registry& r);

void register_factor(Registry& r) {
  r.add<LuFactor>();
  r.add<LuSolve>();
  r.add<Solve>();
  register_factor_det(r);
  register_factor_qr(r);
}

}  // namespace tenferro::linalg::detail
