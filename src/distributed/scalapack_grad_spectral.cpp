// AD rules of the distributed svd (p?gebrd + ?bdsdc + p?ormbr) and eigh:
// the single-process family's rules (src/linalg/spectral_svd.cpp,
// spectral_eigh.cpp: PyTorch's svd_backward / linalg_svd_jvp and the eigh
// rules, with the same gauge policy and degeneracy handling), written with
// block-cyclic products (p?gemm), adjoints (p?tranc), local blocks of the
// gap factors built from the replicated values, and all-reduces where a
// diagonal becomes a replicated vector (scalapack_grad.hpp). A values
// output is Replicate, so its cotangent arrives as a Partial (each rank a
// summand): the rules all-reduce it first; its tangent is Replicate.

#include "distributed/scalapack_grad.hpp"

namespace tenferro::dist::detail {

namespace {

using ad::MaybeVal;
using ad::Val;

// ---- svd --------------------------------------------------------------------------------
//   dP = U^H dA V, dS = Re diag(dP), dP' = dP - diag(dS),
//   dU = U (F o (dP' S + S dP'^H)) + U diag(i Im dP_ii / s_i) + (I - U U^H) dA V S^-1,
//   dVh = -(F o (S dP' + dP'^H S)) Vh + S^-1 U^H dA (I - V Vh),
// F(i, j) = 1 / (s_j^2 - s_i^2), split in Strict as 1 / (2 (s_j - s_i)) + 1 / (2 (s_j + s_i)).

struct SvdFactors {
  BcMat U, Vh;
  Val S;
  std::int64_t m, n, k;
};

SvdFactors svd_factors(const ad::RuleArgs& a) {
  const SlParams& p = scalapack_params(a.op);
  const std::int64_t k = std::min(p.m, p.n);
  return {{a.outputs[0], p.m, k}, {a.outputs[2], k, p.n}, a.outputs[1], p.m, p.n, k};
}

std::vector<MaybeVal> svd_jvp(const ad::RuleArgs& a, std::span<const MaybeVal> t) {
  if (!t[0]) return {std::nullopt, std::nullopt, std::nullopt};
  const SlParams& p = scalapack_params(a.op);
  BlockCyclicEmitter b(a.emitter, p);
  ad::Emitter& e = a.emitter;
  const SvdFactors f = svd_factors(a);
  const std::int64_t k = f.k;
  const DType dt = e.dtype_of(f.U.v);
  const bool cplx = is_complex(dt);
  const BcMat dA{*t[0], f.m, f.n};
  const BcMat dAV = b.mm(dA, f.Vh, 'N', 'C');
  const BcMat dP = b.mm(f.U, dAV, 'C', 'N');
  const Val dS = e.real(b.diag(dP));
  const Val eye = b.index_mask(BinaryOp::Eq, k, k);
  const BcMat dPc{e.sub(dP.v, b.masked(eye, b.bcast_col(b.as_dtype(dS, dt), k, k))), k, k};
  const Val Sc = b.as_dtype(f.S, dt);
  const auto gi = b.inverse_factors(f.S, k);
  const Val Sinv = b.as_dtype(gi.F, dt);
  std::vector<Val> zc, zsq;
  Val omU, omV;
  std::optional<BlockCyclicEmitter::GapFactors> g1, g2;
  std::optional<Val> H, K;
  if (p.regularised) {
    const Val F = b.as_dtype(b.gap_factors(e.mul(f.S, f.S), k).F, dt);
    omU = e.mul(F, b.sym2({e.mul(dPc.v, b.bcast_row(Sc, k, k)), k, k}));
    omV = e.mul(F, b.sym2({e.mul(b.bcast_col(Sc, k, k), dPc.v), k, k}));
  } else {
    g1 = b.gap_factors(f.S, k);
    g2 = b.gap_factors(f.S, k, true);
    H = e.scale(b.sym2(dPc), 0.5);
    K = e.scale(b.skew2(dPc), 0.5);
    const Val x = e.mul(b.as_dtype(g1->F, dt), *H), y = e.mul(b.as_dtype(g2->F, dt), *K);
    omU = e.add(x, y);
    omV = e.sub(x, y);
  }
  if (cplx) {
    const Val d = b.masked(eye, dPc.v);  // diag_embed(diag(dP'))
    omU = e.add(omU, e.mul(d, b.bcast_col(Sinv, k, k)));
    zc.push_back(d);
  }
  BcMat dU = b.mm(f.U, {omU, k, k});
  BcMat dVh = b.mm({omV, k, k}, f.Vh);
  dVh.v = e.neg(dVh.v);
  if (f.m > k) {
    const BcMat c{e.sub(dAV.v, b.mm(f.U, b.mm(f.U, dAV, 'C', 'N')).v), f.m, k};
    dU.v = e.add(dU.v, e.mul(c.v, b.bcast_row(Sinv, f.m, k)));
    zsq.push_back(b.diag_embed(b.sum_squares(c, 0), k));
  }
  if (f.n > k) {
    const BcMat y = b.mm(f.U, dA, 'C', 'N');
    const BcMat c{e.sub(y.v, b.mm(b.mm(y, f.Vh, 'N', 'C'), f.Vh).v), k, f.n};
    dVh.v = e.add(dVh.v, e.mul(b.bcast_col(Sinv, k, f.n), c.v));
    zsq.push_back(b.diag_embed(b.sum_squares(c, 1), k));
  }
  if (g1) {
    for (Val* x : {&dU.v, &dVh.v}) {
      *x = b.check_degenerate(true, *x, {*H}, *g1, k, {}, {*K});
      *x = b.check_degenerate(true, *x, {*K}, *g2, k, {}, {*H});
      *x = b.check_degenerate(true, *x, zc, gi, k, zsq, {*H, *K});
    }
  }
  return {dU.v, dS, dVh.v};
}

std::vector<MaybeVal> svd_vjp(const ad::RuleArgs& a, std::span<const MaybeVal> ct) {
  MaybeVal gU = ct[0], gS = ct[1], gVh = ct[2];
  if (!gU && !gS && !gVh) return {std::nullopt};
  const SlParams& p = scalapack_params(a.op);
  BlockCyclicEmitter b(a.emitter, p);
  ad::Emitter& e = a.emitter;
  const SvdFactors f = svd_factors(a);
  const std::int64_t k = f.k;
  const DType dt = e.dtype_of(f.U.v);
  const bool cplx = is_complex(dt);
  if (gS) gS = b.all_reduce(*gS);  // the summands of a Replicate value's cotangent
  if (!gU && !gVh) {
    const BcMat us{e.mul(f.U.v, b.bcast_row(b.as_dtype(*gS, dt), f.m, k)), f.m, k};
    return {b.mm(us, f.Vh).v};
  }
  const Val Sc = b.as_dtype(f.S, dt);
  const auto gi = b.inverse_factors(f.S, k);
  const Val Sinv = b.as_dtype(gi.F, dt);
  std::vector<Val> zc, zsq;
  std::optional<BcMat> Xu;  // U^H gU
  MaybeVal UhgU, VhgV;
  if (gU) {
    Xu = b.mm(f.U, {*gU, f.m, k}, 'C', 'N');
    UhgU = b.skew2(*Xu);
  }
  if (gVh) VhgV = b.skew2(b.mm(f.Vh, {*gVh, k, f.n}, 'N', 'C'));
  Val ret;
  std::optional<BlockCyclicEmitter::GapFactors> g1, g2;
  MaybeVal Ksum, Kdiff;
  if (p.regularised) {
    const Val F = b.as_dtype(b.gap_factors(e.mul(f.S, f.S), k).F, dt);
    const Val row = b.bcast_row(Sc, k, k), col = b.bcast_col(Sc, k, k);
    if (UhgU && VhgV) {
      ret = e.mul(e.add(e.mul(*UhgU, row), e.mul(col, *VhgV)), F);
    } else if (UhgU) {
      ret = e.mul(e.mul(*UhgU, F), row);
    } else {
      ret = e.mul(col, e.mul(*VhgV, F));
    }
  } else {
    const Val u = UhgU ? *UhgU : e.zeros_like(*VhgV), v = VhgV ? *VhgV : e.zeros_like(*UhgU);
    Ksum = e.scale(e.add(u, v), 0.5);
    Kdiff = e.scale(e.sub(u, v), 0.5);
    g1 = b.gap_factors(f.S, k);
    g2 = b.gap_factors(f.S, k, true);
    ret = e.add(e.mul(*Ksum, b.as_dtype(g1->F, dt)), e.mul(*Kdiff, b.as_dtype(g2->F, dt)));
  }
  if (gS) ret = e.add(ret, b.diag_embed(b.as_dtype(*gS, dt), k));
  const Val eye = b.index_mask(BinaryOp::Eq, k, k);
  if (cplx && UhgU) {
    const Val h = e.scale(b.masked(eye, *UhgU), 0.5);  // diag_embed(diag(UhgU) / 2)
    ret = e.add(ret, e.mul(h, b.bcast_col(Sinv, k, k)));
    zc.push_back(h);
  }
  BcMat gA = b.mm(f.U, b.mm({ret, k, k}, f.Vh));
  if (gU && f.m > k) {
    const BcMat c{e.sub(*gU, b.mm(f.U, *Xu).v), f.m, k};
    gA.v = e.add(gA.v, b.mm({e.mul(c.v, b.bcast_row(Sinv, f.m, k)), f.m, k}, f.Vh).v);
    zsq.push_back(b.diag_embed(b.sum_squares(c, 0), k));
  }
  if (gVh && f.n > k) {
    const BcMat c{e.sub(*gVh, b.mm(b.mm({*gVh, k, f.n}, f.Vh, 'N', 'C'), f.Vh).v), k, f.n};
    gA.v = e.add(gA.v, b.mm(f.U, {e.mul(b.bcast_col(Sinv, k, f.n), c.v), k, f.n}).v);
    zsq.push_back(b.diag_embed(b.sum_squares(c, 1), k));
  }
  if (cplx) {
    // PyTorch's check: Im diag(U^H gU) must equal -Im diag(V^H gV).
    const auto imag_diag = [&](Val x) {
      const Val d = b.diag({x, k, k});
      const Val in[1] = {d};
      return e.emit1(make_primitive(prim::Unary{UnaryOp::Imag}), in);
    };
    Val g = UhgU ? imag_diag(*UhgU) : imag_diag(*VhgV);
    if (UhgU && VhgV) g = e.add(g, imag_diag(*VhgV));
    gA.v = b.check_gauge(gA.v, e.scale(g, 0.5));
  }
  if (g1) {
    std::vector<Val> c{*Ksum};
    if (gS) c.push_back(b.value_split(*gS, k));
    gA.v = b.check_degenerate(false, gA.v, c, *g1, k, {}, {*Kdiff});
    gA.v = b.check_degenerate(false, gA.v, {*Kdiff}, *g2, k, {}, {*Ksum});
    if (gS && (!zc.empty() || !zsq.empty())) zc.push_back(b.diag_embed(*gS, k));
    gA.v = b.check_degenerate(false, gA.v, zc, gi, k, zsq, {*Ksum, *Kdiff});
  }
  return {gA.v};
}

// ---- eigh -------------------------------------------------------------------------------
// The op reads one triangle: h(P(A)) with P(A) the Hermitian matrix built
// from it; dL = Re diag(V^H dA V), dV = V (F o V^H dA V), F = 1 / (l_j - l_i);
// gA = P*(V (F o skew(V^H gV) / 2 + diag(gL)) V^H), P*(G) = tril(G + G^H, -1)
// + Re diag(G) for 'L' (triu for 'U').

Val real_part_same(ad::Emitter& e, Val x) {
  const DType dt = e.dtype_of(x);
  return is_complex(dt) ? e.convert(e.real(x), dt) : x;
}

Val hermitian_from(BlockCyclicEmitter& b, Val x, std::int64_t n, bool lower) {
  const Val t = b.masked(b.index_mask(lower ? BinaryOp::Gt : BinaryOp::Lt, n, n), x);
  const Val d = b.masked(b.index_mask(BinaryOp::Eq, n, n), real_part_same(b.e, x));
  return b.e.add(b.e.add(t, b.adjoint({t, n, n}).v), d);
}

Val hermitian_adjoint(BlockCyclicEmitter& b, Val g, std::int64_t n, bool lower) {
  const Val s = b.sym2({g, n, n});
  const Val t = b.masked(b.index_mask(lower ? BinaryOp::Gt : BinaryOp::Lt, n, n), s);
  return b.e.add(t, b.masked(b.index_mask(BinaryOp::Eq, n, n), real_part_same(b.e, g)));
}

std::vector<MaybeVal> eigh_jvp(const ad::RuleArgs& a, std::span<const MaybeVal> t) {
  if (!t[0]) return {std::nullopt, std::nullopt};
  const SlParams& p = scalapack_params(a.op);
  BlockCyclicEmitter b(a.emitter, p);
  ad::Emitter& e = a.emitter;
  const std::int64_t n = p.n;
  const Val L = a.outputs[0];
  const BcMat V{a.outputs[1], n, n};
  const DType dt = e.dtype_of(V.v);
  const BcMat dA{hermitian_from(b, *t[0], n, p.uplo == 'L'), n, n};
  const BcMat dP = b.mm(V, b.mm(dA, V), 'C', 'N');
  const Val dL = e.real(b.diag(dP));
  const auto g = b.gap_factors(L, n);
  const Val dV = b.mm(V, {e.mul(dP.v, b.as_dtype(g.F, dt)), n, n}).v;
  return {dL, b.check_degenerate(true, dV, {dP.v}, g, n)};
}

std::vector<MaybeVal> eigh_vjp(const ad::RuleArgs& a, std::span<const MaybeVal> ct) {
  MaybeVal gL = ct[0];
  const MaybeVal gV = ct[1];
  if (!gL && !gV) return {std::nullopt};
  const SlParams& p = scalapack_params(a.op);
  BlockCyclicEmitter b(a.emitter, p);
  ad::Emitter& e = a.emitter;
  const std::int64_t n = p.n;
  const BcMat V{a.outputs[1], n, n};
  const DType dt = e.dtype_of(V.v);
  const bool lower = p.uplo == 'L';
  if (gL) gL = b.all_reduce(*gL);  // the summands of a Replicate value's cotangent
  if (!gV) {
    const BcMat vl{e.mul(V.v, b.bcast_row(b.as_dtype(*gL, dt), n, n)), n, n};
    return {hermitian_adjoint(b, b.mm(vl, V, 'N', 'C').v, n, lower)};
  }
  const BcMat X = b.mm(V, {*gV, n, n}, 'C', 'N');
  const auto g = b.gap_factors(a.outputs[0], n);
  const Val N = e.scale(b.skew2(X), 0.5);
  Val ret = e.mul(N, b.as_dtype(g.F, dt));
  if (gL) ret = e.add(ret, b.diag_embed(b.as_dtype(*gL, dt), n));
  Val gA = hermitian_adjoint(b, b.mm(V, b.mm({ret, n, n}, V, 'N', 'C')).v, n, lower);
  if (is_complex(dt)) {
    const Val in[1] = {b.diag(X)};
    gA = b.check_gauge(gA, e.emit1(make_primitive(prim::Unary{UnaryOp::Imag}), in));
  }
  std::vector<Val> c{N};
  if (gL) c.push_back(b.value_split(*gL, n));
  return {b.check_degenerate(false, gA, c, g, n, {}, {X.v})};
}

}  // namespace

const ad::RuleSet& svd_rules() {
  static const ad::RuleSet r = [] {
    ad::RuleSet s;
    s.jvp = svd_jvp;
    s.vjp = svd_vjp;
    s.residuals = ad::Residuals::of({}, {0, 1, 2});
    return s;
  }();
  return r;
}

const ad::RuleSet& eigh_rules() {
  static const ad::RuleSet r = [] {
    ad::RuleSet s;
    s.jvp = eigh_jvp;
    s.vjp = eigh_vjp;
    s.residuals = ad::Residuals::of({}, {0, 1});
    return s;
  }();
  return r;
}

}  // namespace tenferro::dist::detail
