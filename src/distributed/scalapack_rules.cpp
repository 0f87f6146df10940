// AD rules of the ScaLAPACK ops (scalapack.hpp). The gemm op computes
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

/// A factor of a product: op(v) with op 'N', 'T', 'C' (as p?gemm) or 'K'
/// (conj(v), which p?gemm has no flag for: conjugated on the local block).
struct Factor {
  ad::Val v;
  Shape global;  ///< v's global shape
  char op = 'N';
};

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

/// op(l) op(r) as one gemm op on `like`'s grid and block.
ad::Val product(ad::Emitter& e, const SlParams& like, const Factor& l, const Factor& r) {
  SlParams q = like;
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

std::vector<ad::MaybeVal> gemm_jvp(const ad::RuleArgs& args, std::span<const ad::MaybeVal> t) {
  const SlParams& p = gemm_params(args.op);
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
  const SlParams& p = gemm_params(args.op);
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

}  // namespace

const ad::RuleSet& gemm_rules() {
  static const ad::RuleSet rules = [] {
    ad::RuleSet r;
    r.jvp = gemm_jvp;
    r.vjp = gemm_vjp;
    r.residuals = ad::Residuals::of({0, 1}, {});
    return r;
  }();
  return rules;
}

}  // namespace tenferro::dist::detail
