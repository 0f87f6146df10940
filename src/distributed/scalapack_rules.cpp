// AD rules of the ScaLAPACK ops (scalapack.hpp): p?gemm, p?tran / p?tranc
// and p?gesv. The gemm op computes
// C = X Y with X = op_a(A), Y = op_b(B) on the local blocks of block-cyclic
// matrices; it is bilinear, so both rules are gemms of the same kind on the
// same grid, and the cotangents come back in the primal layout (the layout
// of a Shard value's cotangent is its own):
//   jvp: dC = op_a(dA) Y + X op_b(dB)
//   vjp: gX = gC Y^H, gY = X^H gC, then gA, gB undo op_a, op_b
//        (op 'T': the transpose of gX; 'C': its adjoint),
// each written as one p?gemm whose flags fold the transposes (a conj of a
// local block where no flag expresses conj(M)).

#include <optional>

#include "distributed/scalapack.hpp"

namespace tenferro::dist::detail {

namespace {

/// The op giving op(M)^H from M.
char adjoint_of(char op) {
  switch (op) {
    case 'N':
      return 'C';
    case 'T':
      return 'K';
    case 'C':
      return 'N';
    default:
      break;
  }
  return 'T';  // conj(M)^H = M^T
}

/// The op giving conj(op(M)) from M.
char conj_of(char op) {
  switch (op) {
    case 'N':
      return 'K';
    case 'T':
      return 'C';
    case 'C':
      return 'T';
    default:
      break;
  }
  return 'N';
}

std::int64_t rows_of(const Factor& f) {
  return f.op == 'N' || f.op == 'K' ? f.global[0] : f.global[1];
}
std::int64_t cols_of(const Factor& f) {
  return f.op == 'N' || f.op == 'K' ? f.global[1] : f.global[0];
}

std::vector<ad::MaybeVal> gemm_jvp(const ad::RuleArgs& args, std::span<const ad::MaybeVal> t) {
  const SlParams& p = scalapack_params(args.op);
  // dC = op_a(dA) op_b(B) + op_a(A) op_b(dB): the same gemm on the tangents.
  std::optional<ad::Val> out;
  if (t[0]) out = emit_gemm(args.emitter, p, *t[0], args.inputs[1]);
  if (t[1]) {
    const ad::Val term = emit_gemm(args.emitter, p, args.inputs[0], *t[1]);
    out = out ? args.emitter.add(*out, term) : term;
  }
  return {out};
}

std::vector<ad::MaybeVal> gemm_vjp(const ad::RuleArgs& args, std::span<const ad::MaybeVal> ct) {
  if (!ct[0]) return {std::nullopt, std::nullopt};
  const SlParams& p = scalapack_params(args.op);
  const auto g = input_globals(p);
  ad::Emitter& e = args.emitter;
  const Factor gc{*ct[0], Shape{p.m, p.n}, 'N'};
  auto with = [&](Factor f, char op) {
    f.op = op;
    return f;
  };
  const Factor a{args.inputs[0], g[0], p.trans_a}, b{args.inputs[1], g[1], p.trans_b};
  std::vector<ad::MaybeVal> out(2);
  if (args.wants(0)) {
    // gX = gC op_b(B)^H; gA = gX, gX^T or gX^H for op_a 'N', 'T', 'C'.
    switch (p.trans_a) {
      case 'N':
        out[0] = product(e, p, gc, with(b, adjoint_of(b.op)));
        break;
      case 'T':
        out[0] = product(e, p, with(b, conj_of(b.op)), with(gc, 'T'));
        break;
      default:
        out[0] = product(e, p, b, with(gc, 'C'));
        break;
    }
  }
  if (args.wants(1)) {
    // gY = op_a(A)^H gC; gB = gY, gY^T or gY^H for op_b 'N', 'T', 'C'.
    switch (p.trans_b) {
      case 'N':
        out[1] = product(e, p, with(a, adjoint_of(a.op)), gc);
        break;
      case 'T':
        out[1] = product(e, p, with(gc, 'T'), with(a, conj_of(a.op)));
        break;
      default:
        out[1] = product(e, p, with(gc, 'C'), a);
        break;
    }
  }
  return out;
}

// ---- transpose: C = op(A), linear; its cotangent is op(gC) ----

std::vector<ad::MaybeVal> tran_jvp(const ad::RuleArgs& args, std::span<const ad::MaybeVal> t) {
  if (!t[0]) return {std::nullopt};
  const ad::Val in[1] = {*t[0]};
  return {emit_scalapack(args.emitter, scalapack_params(args.op), in)[0]};
}

std::vector<ad::MaybeVal> tran_vjp(const ad::RuleArgs& args, std::span<const ad::MaybeVal> ct) {
  if (!ct[0]) return {std::nullopt};
  SlParams q = scalapack_params(args.op);
  std::swap(q.m, q.n);
  const ad::Val in[1] = {*ct[0]};
  return {emit_scalapack(args.emitter, q, in)[0]};
}

// ---- solve: X = A^{-1} B ----
//   jvp: dX = A^{-1} (dB - dA X)
//   vjp: gB = A^{-H} gX, gA = -gB X^H

SlParams with_kind(SlParams q, SlKind kind) {
  q.kind = kind;
  q.trans_a = q.trans_b = 'N';
  return q;
}

/// dA X (dA [n, n], X [n, k]) or gB X^H (gB [n, k], X [n, k]).
ad::Val solve_product(ad::Emitter& e, const SlParams& p, ad::Val l, ad::Val r, bool adjoint_r) {
  SlParams q = with_kind(p, SlKind::Gemm);
  q.m = p.n;
  q.n = adjoint_r ? p.n : p.k;
  q.k = adjoint_r ? p.k : p.n;
  q.trans_b = adjoint_r ? 'C' : 'N';
  return emit_gemm(e, q, l, r);
}

std::vector<ad::MaybeVal> solve_jvp(const ad::RuleArgs& args, std::span<const ad::MaybeVal> t) {
  const SlParams& p = scalapack_params(args.op);
  ad::Emitter& e = args.emitter;
  std::optional<ad::Val> rhs;
  if (t[1]) rhs = *t[1];
  if (t[0]) {
    const ad::Val da_x = solve_product(e, p, *t[0], args.outputs[0], false);
    rhs = rhs ? e.sub(*rhs, da_x) : e.neg(da_x);
  }
  if (!rhs) return {std::nullopt};
  const ad::Val in[2] = {args.inputs[0], *rhs};
  return {emit_scalapack(e, p, in)[0]};
}

std::vector<ad::MaybeVal> solve_vjp(const ad::RuleArgs& args, std::span<const ad::MaybeVal> ct) {
  if (!ct[0]) return {std::nullopt, std::nullopt};
  const SlParams& p = scalapack_params(args.op);
  ad::Emitter& e = args.emitter;
  SlParams adj = with_kind(p, SlKind::Tran);
  adj.m = adj.n = p.n;
  adj.trans_a = 'C';
  const ad::Val a_in[1] = {args.inputs[0]};
  const ad::Val a_h = emit_scalapack(e, adj, a_in)[0];
  const ad::Val s_in[2] = {a_h, *ct[0]};
  const ad::Val gb = emit_scalapack(e, p, s_in)[0];
  std::vector<ad::MaybeVal> out(2);
  if (args.wants(0)) out[0] = e.neg(solve_product(e, p, gb, args.outputs[0], true));
  out[1] = gb;
  return out;
}

}  // namespace

ad::Val product(ad::Emitter& e, const SlParams& like, const Factor& l, const Factor& r) {
  SlParams q;  // only the grid of `like`: equal products are one op (CSE)
  q.kind = SlKind::Gemm;
  q.comm = like.comm;
  q.grid = like.grid;
  q.block = like.block;
  q.m = rows_of(l);
  q.k = cols_of(l);
  q.n = cols_of(r);
  auto operand = [&](const Factor& f, char& flag) {
    flag = f.op == 'K' ? 'N' : f.op;
    if (f.op == 'K' && is_complex(e.dtype_of(f.v))) return e.conj(f.v);
    return f.v;
  };
  const ad::Val a = operand(l, q.trans_a);
  const ad::Val b = operand(r, q.trans_b);
  return emit_gemm(e, q, a, b);
}

const ad::RuleSet* scalapack_rules(SlKind kind) {
  static const ad::RuleSet gemm = [] {
    ad::RuleSet r;
    r.jvp = gemm_jvp;
    r.vjp = gemm_vjp;
    r.residuals = ad::Residuals::of({0, 1}, {});
    return r;
  }();
  static const ad::RuleSet tran = [] {
    ad::RuleSet r;
    r.jvp = tran_jvp;
    r.vjp = tran_vjp;
    r.residuals = ad::Residuals::none();
    return r;
  }();
  static const ad::RuleSet solve = [] {
    ad::RuleSet r;
    r.jvp = solve_jvp;
    r.vjp = solve_vjp;
    r.residuals = ad::Residuals::of({0}, {0});
    return r;
  }();
  switch (kind) {
    case SlKind::Gemm:
      return &gemm;
    case SlKind::Tran:
      return &tran;
    case SlKind::Solve:
      return &solve;
    case SlKind::Svd:
      return &svd_rules();
    case SlKind::Eigh:
      return &eigh_rules();
    case SlKind::Trsm:
      return &trsm_rules();
    case SlKind::Qr:
      return &qr_rules();
    case SlKind::Cholesky:
      return &cholesky_rules();
    default:
      break;
  }
  return nullptr;
}

}  // namespace tenferro::dist::detail
