// AD rules of the distributed triangular solve (p?trsm, the op the other
// rules solve with), cholesky (p?potrf) and qr (p?geqrf): the single-process
// family's rules (src/linalg/triangular.cpp, factor_qr.cpp) written with
// block-cyclic products, triangular solves, adjoints and index masks
// (scalapack_grad.hpp). Every one has a jvp and a vjp.

#include "distributed/scalapack_grad.hpp"

namespace tenferro::dist::detail {

namespace {

using ad::MaybeVal;
using ad::Val;

char flipped(char op) {
  return op == 'N' ? 'C' : 'N';
}

/// op(A)^{-1} B (side 'L') or B op(A)^{-1} ('R') with A's `uplo` triangle.
BcMat trsm(BlockCyclicEmitter& b, const BcMat& a, const BcMat& rhs, char side, char uplo, char op) {
  SlParams q;
  q.kind = SlKind::Trsm;
  q.comm = b.p.comm;
  q.grid = b.p.grid;
  q.block = b.p.block;
  q.m = rhs.rows;
  q.n = rhs.cols;
  q.uplo = uplo;
  q.trans_a = op;
  q.trans_b = side;
  const Val in[2] = {a.v, rhs.v};
  return {emit_scalapack(b.e, q, in)[0], rhs.rows, rhs.cols};
}

/// The `uplo` triangle of x (diagonal included), zeros elsewhere.
Val triangle(BlockCyclicEmitter& b, const BcMat& x, char uplo) {
  return b.masked(b.index_mask(uplo == 'L' ? BinaryOp::Ge : BinaryOp::Le, x.rows, x.cols), x.v);
}

// ---- triangular solve: X = M^{-1} B or B M^{-1}, M = op(T), T = A's triangle ----
//   jvp: dX = M^{-1} (dB - dM X)  or  (dB - X dM) M^{-1}, dM = op(tri(dA));
//   vjp: gB = M^{-H} gX  or  gX M^{-H};  gM = -gB X^H  or  -X^H gB;
//        gA = tri(gM) ('N') or tri(gM^H) ('C').

std::vector<MaybeVal> trsm_jvp(const ad::RuleArgs& a, std::span<const MaybeVal> t) {
  const SlParams& p = scalapack_params(a.op);
  BlockCyclicEmitter b(a.emitter, p);
  ad::Emitter& e = a.emitter;
  const bool left = p.trans_b == 'L';
  const std::int64_t na = left ? p.m : p.n;
  const BcMat A{a.inputs[0], na, na}, X{a.outputs[0], p.m, p.n};
  std::optional<Val> rhs;
  if (t[1]) rhs = *t[1];
  if (t[0]) {
    const BcMat dT{triangle(b, {*t[0], na, na}, p.uplo), na, na};
    const Val dMX = left ? b.mm(dT, X, p.trans_a, 'N').v : b.mm(X, dT, 'N', p.trans_a).v;
    rhs = rhs ? e.sub(*rhs, dMX) : e.neg(dMX);
  }
  if (!rhs) return {std::nullopt};
  return {trsm(b, A, {*rhs, p.m, p.n}, p.trans_b, p.uplo, p.trans_a).v};
}

std::vector<MaybeVal> trsm_vjp(const ad::RuleArgs& a, std::span<const MaybeVal> ct) {
  if (!ct[0]) return {std::nullopt, std::nullopt};
  const SlParams& p = scalapack_params(a.op);
  BlockCyclicEmitter b(a.emitter, p);
  ad::Emitter& e = a.emitter;
  const bool left = p.trans_b == 'L';
  const std::int64_t na = left ? p.m : p.n;
  const BcMat A{a.inputs[0], na, na};
  const BcMat gB = trsm(b, A, {*ct[0], p.m, p.n}, p.trans_b, p.uplo, flipped(p.trans_a));
  std::vector<MaybeVal> out(2);
  out[1] = gB.v;
  if (a.wants(0)) {
    const BcMat X{a.outputs[0], p.m, p.n};
    // gM^H = -(X gB^H) or -(gB^H X): take it directly when op is 'C'.
    const bool h = p.trans_a == 'C';
    BcMat gM = left ? (h ? b.mm(X, gB, 'N', 'C') : b.mm(gB, X, 'N', 'C'))
                    : (h ? b.mm(gB, X, 'C', 'N') : b.mm(X, gB, 'C', 'N'));
    out[0] = e.neg(triangle(b, gM, p.uplo));
  }
  return out;
}

// ---- cholesky (L the lower factor; L = U^H when upper) ----
//   jvp: dL = L Phi(L^{-1} dA L^{-H}),  Phi(X) = tril(X) - diag(X) / 2;
//   vjp: gA = L^{-H} Psi(L^H gL) L^{-1}, Psi(G) = (tril(G) + tril(G, -1)^H) / 2.

std::vector<MaybeVal> cholesky_jvp(const ad::RuleArgs& a, std::span<const MaybeVal> t) {
  if (!t[0]) return {std::nullopt};
  const SlParams& p = scalapack_params(a.op);
  BlockCyclicEmitter b(a.emitter, p);
  ad::Emitter& e = a.emitter;
  const std::int64_t n = p.n;
  const bool upper = p.uplo == 'U';
  const BcMat out{a.outputs[0], n, n};
  const BcMat L = upper ? b.adjoint(out) : out;
  BcMat x = trsm(b, L, {*t[0], n, n}, 'L', 'L', 'N');
  x = trsm(b, L, x, 'R', 'L', 'C');
  x.v = e.sub(b.masked(b.index_mask(BinaryOp::Ge, n, n), x.v),
              e.scale(b.masked(b.index_mask(BinaryOp::Eq, n, n), x.v), 0.5));
  const BcMat dl = b.mm(L, x);
  return {upper ? b.adjoint(dl).v : dl.v};
}

std::vector<MaybeVal> cholesky_vjp(const ad::RuleArgs& a, std::span<const MaybeVal> ct) {
  if (!ct[0]) return {std::nullopt};
  const SlParams& p = scalapack_params(a.op);
  BlockCyclicEmitter b(a.emitter, p);
  ad::Emitter& e = a.emitter;
  const std::int64_t n = p.n;
  const bool upper = p.uplo == 'U';
  const BcMat out{a.outputs[0], n, n}, g0{*ct[0], n, n};
  const BcMat L = upper ? b.adjoint(out) : out;
  const BcMat gL = upper ? b.adjoint(g0) : g0;
  BcMat g{b.masked(b.index_mask(BinaryOp::Ge, n, n), b.mm(L, gL, 'C', 'N').v), n, n};
  const BcMat below{b.masked(b.index_mask(BinaryOp::Gt, n, n), g.v), n, n};
  g.v = e.scale(e.add(g.v, b.adjoint(below).v), 0.5);
  g = trsm(b, L, g, 'L', 'L', 'C');
  return {trsm(b, L, g, 'R', 'L', 'N').v};
}

// ---- qr, k = min(m, n), A1 = A[:, :k] = Q R1 with R1 = R[:, :k] ----
// PyTorch's linalg_qr_jvp, for tall and wide A alike:
//   dX = dA1 R1^{-1}, C = Q^H dX, Omega = tril(C, -1) - tril(C, -1)^H + i Im diag(C),
//   dQ = dX - Q (C - Omega), dR = Q^H (dA - dQ R) (= (C - Omega) R when m >= n).
// Its transpose is the vjp:
//   gQ' = gQ - Q gR R^H, gM = -Q^H gQ', gC = gM - Omega*(gM)
//   (Omega*(G) = tril(G, -1) - tril(G^H, -1) + i Im diag(G)),
//   gA = [(gQ' + Q gC) R1^{-H}, 0] + Q gR.
// The first k columns of a block-cyclic matrix are a prefix of each local
// block (blocks are dealt in order), so A1, R1 are local slices.

Val first_cols(BlockCyclicEmitter& b, const BcMat& x, std::int64_t k) {
  const Shape local = local_of(b.p, x.rows, x.cols);
  const std::int64_t lc = shard_extent(k, b.p.grid.cols, b.p.grid.col, b.p.block);
  const Val in[1] = {x.v};
  return b.e.emit1(make_primitive(prim::Slice{Shape{0, 0}, Shape{local[0], lc}, Shape{1, 1}}), in);
}

Val pad_cols(BlockCyclicEmitter& b, const BcMat& x, std::int64_t cols) {
  const std::int64_t extra = shard_extent(cols, b.p.grid.cols, b.p.grid.col, b.p.block) -
                             shard_extent(x.cols, b.p.grid.cols, b.p.grid.col, b.p.block);
  const Val in[1] = {x.v};
  return b.e.emit1(
      make_primitive(prim::Pad{Shape{0, 0}, Shape{0, extra}, Shape{0, 0}, Scalar(0.0)}), in);
}

/// Omega(C) (or its adjoint Omega*(G), `adjoint`) of a [k, k] matrix.
Val omega(BlockCyclicEmitter& b, const BcMat& c, bool adjoint) {
  ad::Emitter& e = b.e;
  const Val below = b.index_mask(BinaryOp::Gt, c.rows, c.cols);
  const Val other = adjoint ? b.adjoint(c).v : b.adjoint({b.masked(below, c.v), c.rows, c.cols}).v;
  Val w = e.sub(b.masked(below, c.v), adjoint ? b.masked(below, other) : other);
  if (is_complex(e.dtype_of(c.v))) {
    const Val d = b.masked(b.index_mask(BinaryOp::Eq, c.rows, c.cols), c.v);
    w = e.add(w, e.scale(e.sub(d, e.conj(d)), 0.5));
  }
  return w;
}

std::vector<MaybeVal> qr_jvp(const ad::RuleArgs& a, std::span<const MaybeVal> t) {
  if (!t[0]) return {std::nullopt, std::nullopt};
  const SlParams& p = scalapack_params(a.op);
  BlockCyclicEmitter b(a.emitter, p);
  ad::Emitter& e = a.emitter;
  const std::int64_t m = p.m, n = p.n, k = std::min(m, n);
  const BcMat Q{a.outputs[0], m, k}, R{a.outputs[1], k, n}, dA{*t[0], m, n};
  const BcMat R1{first_cols(b, R, k), k, k};
  const BcMat dX = trsm(b, R1, {first_cols(b, dA, k), m, k}, 'R', 'U', 'N');
  const BcMat C = b.mm(Q, dX, 'C', 'N');
  const BcMat M{e.sub(C.v, omega(b, C, false)), k, k};
  const BcMat dQ{e.sub(dX.v, b.mm(Q, M).v), m, k};
  const BcMat dR = b.mm(Q, {e.sub(dA.v, b.mm(dQ, R).v), m, n}, 'C', 'N');
  return {dQ.v, dR.v};
}

std::vector<MaybeVal> qr_vjp(const ad::RuleArgs& a, std::span<const MaybeVal> ct) {
  if (!ct[0] && !ct[1]) return {std::nullopt};
  const SlParams& p = scalapack_params(a.op);
  BlockCyclicEmitter b(a.emitter, p);
  ad::Emitter& e = a.emitter;
  const std::int64_t m = p.m, n = p.n, k = std::min(m, n);
  const BcMat Q{a.outputs[0], m, k}, R{a.outputs[1], k, n};
  std::optional<BcMat> gR;
  if (ct[1]) gR = BcMat{*ct[1], k, n};
  BcMat gQ{ct[0] ? *ct[0] : e.zeros_like(Q.v), m, k};
  if (gR) gQ.v = e.sub(gQ.v, b.mm(Q, b.mm(*gR, R, 'N', 'C')).v);
  const BcMat gM{e.neg(b.mm(Q, gQ, 'C', 'N').v), k, k};
  const BcMat gC{e.sub(gM.v, omega(b, gM, true)), k, k};
  const BcMat R1{first_cols(b, R, k), k, k};
  const BcMat gA1 = trsm(b, R1, {e.add(gQ.v, b.mm(Q, gC).v), m, k}, 'R', 'U', 'C');
  Val gA = pad_cols(b, gA1, n);
  if (gR) gA = e.add(gA, b.mm(Q, *gR).v);
  return {gA};
}

ad::RuleSet make_rules(ad::JvpRule jvp, ad::VjpRule vjp, ad::Residuals residuals) {
  ad::RuleSet r;
  r.jvp = std::move(jvp);
  r.vjp = std::move(vjp);
  r.residuals = residuals;
  return r;
}

}  // namespace

const ad::RuleSet& trsm_rules() {
  static const ad::RuleSet r = make_rules(trsm_jvp, trsm_vjp, ad::Residuals::of({0}, {0}));
  return r;
}

const ad::RuleSet& cholesky_rules() {
  static const ad::RuleSet r = make_rules(cholesky_jvp, cholesky_vjp, ad::Residuals::of({}, {0}));
  return r;
}

const ad::RuleSet& qr_rules() {
  static const ad::RuleSet r = make_rules(qr_jvp, qr_vjp, ad::Residuals::of({}, {0, 1}));
  return r;
}

}  // namespace tenferro::dist::detail
