// AD rules of the elementwise primitives: unary, binary, select, clamp.
// Holomorphic functions use t * f'(z) (the transpose of mul conjugates the
// primal factor, which gives PyTorch's cotangent convention); the
// non-holomorphic ones (abs, sgn, angle, real, imag, conj) have explicit
// real-linear jvps. Coefficients are computed on primals, so the only ops a
// jvp emits on tangents are mul, div, add, sub, neg, conj, real, imag,
// complex, convert and select, all of which have transpose rules.

#include <cmath>
#include <functional>
#include <numbers>

#include "ad/rules/core.hpp"

namespace tenferro::ad::core {

namespace {

using Tangents = std::span<const MaybeVal>;
using Out = std::vector<MaybeVal>;

// ---- unary -----------------------------------------------------------------------

Val x_of(const RuleArgs& a) {
  return a.inputs[0];
}
Val y_of(const RuleArgs& a) {
  return a.outputs.empty() ? Val{} : a.outputs[0];
}

const Residuals kX = Residuals::of({0}, {});
const Residuals kY = Residuals::of({}, {0});

Val one(Emitter& e, Val like) {
  return constant_like(e, like, 1.0);
}
Val zero(Emitter& e, Val like) {
  return constant_like(e, like, 0.0);
}
Val sq(Emitter& e, Val x) {
  return e.mul(x, x);
}
Val un(Emitter& e, UnaryOp op, Val x) {
  return e.unary(op, x);
}
Val is_zero(Emitter& e, Val x) {
  return e.binary(BinaryOp::Eq, x, zero(e, x));
}

// Imaginary unit times a real value v, as the complex dtype `c`.
Val times_i(Emitter& e, Val v, DType c) {
  return e.mul(e.convert(v, c), e.scalar(c128_t(0.0, 1.0), c));
}

RuleSet sgn_rule() {
  // Real sgn is piecewise constant. Complex s = z/|z|: ds = (t - s Re(conj(s) t)) / |z|,
  // 0 at z = 0 (PyTorch). The denominator is made safe so the transpose has no 0/0.
  return jvp_rule(
      [](const RuleArgs& a, Tangents t) -> Out {
        const Val z = x_of(a);
        if (!t[0] || !is_complex(in_meta(a, 0).dtype)) return {std::nullopt};
        Emitter& e = a.emitter;
        const Val s = un(e, UnaryOp::Sgn, z), r = un(e, UnaryOp::Abs, z);
        const Val at0 = is_zero(e, r);
        const Val r_safe = e.select(at0, one(e, r), r);
        const Val radial = e.mul(e.convert(e.real(e.mul(*t[0], e.conj(s))), e.dtype_of(z)), s);
        const Val d = e.div(e.sub(*t[0], radial), e.convert(r_safe, e.dtype_of(z)));
        return {e.select(at0, zero(e, d), d)};
      },
      kX);
}

RuleSet angle_rule() {
  // Real angle is piecewise constant. Complex: Im(conj(z) t) / |z|^2, 0 at z = 0.
  return jvp_rule(
      [](const RuleArgs& a, Tangents t) -> Out {
        const Val z = x_of(a);
        if (!t[0] || !is_complex(in_meta(a, 0).dtype)) return {std::nullopt};
        Emitter& e = a.emitter;
        const Val r2 = sq(e, un(e, UnaryOp::Abs, z));
        const Val at0 = is_zero(e, r2);
        const Val inv =
            e.select(at0, zero(e, r2), e.div(one(e, r2), e.select(at0, one(e, r2), r2)));
        return {e.mul(un(e, UnaryOp::Imag, e.mul(*t[0], e.conj(z))), inv)};
      },
      kX);
}

RuleSet unary_linear(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg:
      return linear_rule(
          [](const RuleArgs& a, Tangents t) -> Out {
            return {t[0] ? MaybeVal(a.emitter.neg(*t[0])) : std::nullopt};
          },
          [](const RuleArgs& a, std::span<const bool>, Tangents ct) -> Out {
            return {ct[0] ? MaybeVal(a.emitter.neg(*ct[0])) : std::nullopt};
          });
    case UnaryOp::Conj:
      // <c, conj t> = Re(c t) = <conj c, t>.
      return linear_rule(
          [](const RuleArgs& a, Tangents t) -> Out {
            return {t[0] ? MaybeVal(conj_c(a.emitter, *t[0])) : std::nullopt};
          },
          [](const RuleArgs& a, std::span<const bool>, Tangents ct) -> Out {
            return {ct[0] ? MaybeVal(conj_c(a.emitter, *ct[0])) : std::nullopt};
          });
    case UnaryOp::Real:
      // Transpose: the real cotangent as a complex value (wrapper converts).
      return linear_rule(
          [](const RuleArgs& a, Tangents t) -> Out {
            return {t[0] ? MaybeVal(a.emitter.real(*t[0])) : std::nullopt};
          },
          [](const RuleArgs&, std::span<const bool>, Tangents ct) -> Out { return {ct[0]}; });
    default:  // Imag: <c, Im t> = Re(conj(i c) t), so the transpose is i c.
      return linear_rule(
          [](const RuleArgs& a, Tangents t) -> Out {
            if (!t[0] || !is_complex(a.emitter.dtype_of(*t[0]))) return {std::nullopt};
            return {a.emitter.unary(UnaryOp::Imag, *t[0])};
          },
          [](const RuleArgs& a, std::span<const bool>, Tangents ct) -> Out {
            if (!ct[0] || !is_complex(in_meta(a, 0).dtype)) return {std::nullopt};
            return {times_i(a.emitter, *ct[0], in_meta(a, 0).dtype)};
          });
  }
}

RuleSet unary_rules(UnaryOp op) {
  using U = UnaryOp;
  const double ln2 = std::numbers::ln2, ln10 = std::numbers::ln10;
  const double two_over_sqrt_pi = 2.0 / std::sqrt(std::numbers::pi);
  switch (op) {
    case U::Neg:
    case U::Conj:
    case U::Real:
    case U::Imag:
      return unary_linear(op);
    case U::Abs:  // Re(conj(sgn z) t); sgn(0) = 0 gives 0 at 0
      return jvp_rule(
          [](const RuleArgs& a, Tangents t) -> Out {
            if (!t[0]) return {std::nullopt};
            Emitter& e = a.emitter;
            return {e.real(e.mul(*t[0], conj_c(e, un(e, U::Sgn, x_of(a)))))};
          },
          kX);
    case U::Sgn:
      return sgn_rule();
    case U::Angle:
      return angle_rule();
    case U::Exp:
      return scaled([](Emitter&, Val, Val y) { return y; }, kY);
    case U::Exp2:
      return scaled([ln2](Emitter& e, Val, Val y) { return e.scale(y, ln2); }, kY);
    case U::Expm1:
      return scaled([](Emitter& e, Val, Val y) { return e.add(y, one(e, y)); }, kY);
    case U::Log:
      return scaled([](Emitter&, Val x, Val) { return x; }, kX, true);
    case U::Log2:
      return scaled([ln2](Emitter& e, Val x, Val) { return e.scale(x, ln2); }, kX, true);
    case U::Log10:
      return scaled([ln10](Emitter& e, Val x, Val) { return e.scale(x, ln10); }, kX, true);
    case U::Log1p:
      return scaled([](Emitter& e, Val x, Val) { return e.add(x, one(e, x)); }, kX, true);
    case U::Sqrt:
      return scaled([](Emitter& e, Val, Val y) { return e.scale(y, 2.0); }, kY, true);
    case U::Rsqrt:  // -x^(-3/2) / 2 = -y^3 / 2
      return scaled([](Emitter& e, Val, Val y) { return e.scale(e.mul(y, sq(e, y)), -0.5); }, kY);
    case U::Square:
      return scaled([](Emitter& e, Val x, Val) { return e.scale(x, 2.0); }, kX);
    case U::Reciprocal:
      return scaled([](Emitter& e, Val, Val y) { return e.neg(sq(e, y)); }, kY);
    case U::Sin:
      return scaled([](Emitter& e, Val x, Val) { return un(e, U::Cos, x); }, kX);
    case U::Cos:
      return scaled([](Emitter& e, Val x, Val) { return e.neg(un(e, U::Sin, x)); }, kX);
    case U::Tan:
      return scaled([](Emitter& e, Val, Val y) { return e.add(one(e, y), sq(e, y)); }, kY);
    case U::Asin:
      return scaled(
          [](Emitter& e, Val x, Val) { return un(e, U::Sqrt, e.sub(one(e, x), sq(e, x))); }, kX,
          true);
    case U::Acos:
      return scaled(
          [](Emitter& e, Val x, Val) { return e.neg(un(e, U::Sqrt, e.sub(one(e, x), sq(e, x)))); },
          kX, true);
    case U::Atan:
      return scaled([](Emitter& e, Val x, Val) { return e.add(one(e, x), sq(e, x)); }, kX, true);
    case U::Sinh:
      return scaled([](Emitter& e, Val x, Val) { return un(e, U::Cosh, x); }, kX);
    case U::Cosh:
      return scaled([](Emitter& e, Val x, Val) { return un(e, U::Sinh, x); }, kX);
    case U::Tanh:
      return scaled([](Emitter& e, Val, Val y) { return e.sub(one(e, y), sq(e, y)); }, kY);
    case U::Asinh:
      return scaled(
          [](Emitter& e, Val x, Val) { return un(e, U::Sqrt, e.add(sq(e, x), one(e, x))); }, kX,
          true);
    case U::Acosh:  // sqrt(x-1) sqrt(x+1) keeps the principal branch for complex x
      return scaled(
          [](Emitter& e, Val x, Val) {
            return e.mul(un(e, U::Sqrt, e.sub(x, one(e, x))), un(e, U::Sqrt, e.add(x, one(e, x))));
          },
          kX, true);
    case U::Atanh:
      return scaled([](Emitter& e, Val x, Val) { return e.sub(one(e, x), sq(e, x)); }, kX, true);
    case U::Sigmoid:
      return scaled([](Emitter& e, Val, Val y) { return e.mul(y, e.sub(one(e, y), y)); }, kY);
    case U::Erf:
      return scaled(
          [two_over_sqrt_pi](Emitter& e, Val x, Val) {
            return e.scale(un(e, U::Exp, e.neg(sq(e, x))), two_over_sqrt_pi);
          },
          kX);
    case U::Erfc:
      return scaled(
          [two_over_sqrt_pi](Emitter& e, Val x, Val) {
            return e.scale(un(e, U::Exp, e.neg(sq(e, x))), -two_over_sqrt_pi);
          },
          kX);
    case U::Sign:
    case U::Floor:
    case U::Ceil:
    case U::Round:
    case U::Trunc:
    case U::IsFinite:
    case U::IsNan:
    case U::LogicalNot:
      return non_differentiable();
    default:  // the special functions
      return special_unary_rules(op);
  }
}

// ---- binary ----------------------------------------------------------------------

const Residuals kAB = Residuals::of({0, 1}, {});

Val A(const RuleArgs& a) {
  return a.inputs[0];
}
Val B(const RuleArgs& a) {
  return a.inputs[1];
}
Val Y(const RuleArgs& a) {
  return a.outputs[0];
}

// Even split at ties (JAX): weight of a is 1 where a wins, 1/2 at a tie.
Val win_weight(Emitter& e, const RuleArgs& a, BinaryOp wins) {
  const DType dt = out_meta(a).dtype;
  const Val w =
      e.select(e.binary(wins, A(a), B(a)), e.scalar(1.0, dt),
               e.select(e.binary(BinaryOp::Eq, A(a), B(a)), e.scalar(0.5, dt), e.scalar(0.0, dt)));
  return w;
}

RuleSet extremum_rule(BinaryOp wins) {
  return binary_scaled([wins](Emitter& e, const RuleArgs& a) { return win_weight(e, a, wins); },
                       [wins](Emitter& e, const RuleArgs& a) {
                         const Val w = win_weight(e, a, wins);
                         return e.sub(one(e, w), w);
                       },
                       kAB);
}

// v converted to the dtype of the rule's result where it differs (a bool or
// integer operand promoted by the op).
Val in_out_dtype(Emitter& e, const RuleArgs& a, Val v) {
  const DType out = out_meta(a).dtype;
  return e.dtype_of(v) == out ? v : e.convert(v, out, /*lossy=*/true);  // as the op promotes
}

RuleSet binary_rules(BinaryOp op) {
  using B_ = BinaryOp;
  switch (op) {
    case B_::Add:
      return linear_rule(
          [](const RuleArgs& a, Tangents t) -> Out { return {add_maybe(a.emitter, t[0], t[1])}; },
          [](const RuleArgs&, std::span<const bool>, Tangents ct) -> Out {
            return {ct[0], ct[0]};
          });
    case B_::Sub:
      return linear_rule(
          [](const RuleArgs& a, Tangents t) -> Out {
            if (!t[1]) return {t[0]};
            return {t[0] ? a.emitter.sub(*t[0], *t[1]) : a.emitter.neg(*t[1])};
          },
          [](const RuleArgs& a, std::span<const bool> lin, Tangents ct) -> Out {
            if (!ct[0]) return {std::nullopt, std::nullopt};
            return {ct[0], lin[1] ? MaybeVal(a.emitter.neg(*ct[0])) : std::nullopt};
          });
    case B_::Mul:
      // Linear in each operand while the other is a primal; the transpose
      // multiplies by the conjugate of that primal.
      return linear_rule(
          [](const RuleArgs& a, Tangents t) -> Out {
            Emitter& e = a.emitter;
            MaybeVal out;
            if (t[0]) out = e.mul(*t[0], B(a));
            if (t[1]) out = add_maybe(e, out, e.mul(A(a), *t[1]));
            return {out};
          },
          [](const RuleArgs& a, std::span<const bool> lin, Tangents ct) -> Out {
            if (!ct[0]) return {std::nullopt, std::nullopt};
            Emitter& e = a.emitter;
            if (lin[0] && lin[1])
              fail(ErrorKind::Internal, "mul", "transpose of a product of two linear values");
            if (lin[0]) return {e.mul(*ct[0], conj_c(e, B(a))), std::nullopt};
            return {std::nullopt, e.mul(conj_c(e, A(a)), *ct[0])};
          },
          kAB);
    case B_::Div: {
      // d(a/b) = ta / b - tb * y / b; linear in the numerator.
      RuleSet rules = linear_rule(
          [](const RuleArgs& a, Tangents t) -> Out {
            Emitter& e = a.emitter;
            MaybeVal out;
            if (t[0]) out = e.div(*t[0], B(a));
            if (t[1]) out = add_maybe(e, out, e.mul(*t[1], e.neg(e.div(Y(a), B(a)))));
            return {out};
          },
          [](const RuleArgs& a, std::span<const bool> lin, Tangents ct) -> Out {
            if (lin[1]) fail(ErrorKind::Internal, "div", "div is not linear in the denominator");
            if (!ct[0]) return {std::nullopt, std::nullopt};
            return {a.emitter.div(*ct[0], conj_c(a.emitter, B(a))), std::nullopt};
          },
          Residuals::of({1}, {0}));
      // Reverse directly: ct / conj(b) and -ct * conj(y / b), each summed
      // back over its input's broadcast extents.
      rules.vjp = [](const RuleArgs& a, Tangents ct) -> Out {
        Out out(2);
        if (!ct[0]) return out;
        Emitter& e = a.emitter;
        if (a.wants(0) && is_inexact(in_meta(a, 0).dtype))
          out[0] = e.sum_to(e.div(*ct[0], conj_c(e, B(a))), in_meta(a, 0).shape);
        if (a.wants(1) && is_inexact(in_meta(a, 1).dtype))
          out[1] =
              e.sum_to(e.mul(*ct[0], conj_c(e, e.neg(e.div(Y(a), B(a))))), in_meta(a, 1).shape);
        return out;
      };
      return rules;
    }
    case B_::Pow:
      // PyTorch: the base derivative is 0 where the exponent is 0; the
      // exponent derivative is 0 where the base is 0 and Re(exponent) >= 0.
      return binary_scaled(
          [](Emitter& e, const RuleArgs& a) {
            // b - 1 in the result's dtype: a bool exponent has no subtraction.
            Val b = B(a);
            if (e.dtype_of(b) == DType::Bool) b = e.convert(b, out_meta(a).dtype);
            const Val c = e.mul(b, e.binary(B_::Pow, A(a), e.sub(b, one(e, b))));
            return e.select(is_zero(e, b), zero(e, c), c);
          },
          [](Emitter& e, const RuleArgs& a) {
            const Val c = e.mul(Y(a), un(e, UnaryOp::Log, A(a)));
            const Val re_b = e.real(B(a));
            const Val guard =
                e.binary(B_::LogicalAnd, is_zero(e, A(a)), e.binary(B_::Ge, re_b, zero(e, re_b)));
            return e.select(guard, zero(e, c), c);
          },
          Residuals::of({0, 1}, {0}));
    case B_::Maximum:
      return extremum_rule(B_::Gt);
    case B_::Minimum:
      return extremum_rule(B_::Lt);
    case B_::Atan2:  // (b ta - a tb) / (a^2 + b^2), in the result's dtype (a bool or
                     // integer operand has no negation)
      return binary_scaled(
          [](Emitter& e, const RuleArgs& a) {
            const Val x = in_out_dtype(e, a, A(a)), y = in_out_dtype(e, a, B(a));
            return e.div(y, e.add(sq(e, x), sq(e, y)));
          },
          [](Emitter& e, const RuleArgs& a) {
            const Val x = in_out_dtype(e, a, A(a)), y = in_out_dtype(e, a, B(a));
            return e.div(e.neg(x), e.add(sq(e, x), sq(e, y)));
          },
          kAB);
    case B_::Hypot:
      return binary_scaled([](Emitter& e, const RuleArgs& a) { return e.div(A(a), Y(a)); },
                           [](Emitter& e, const RuleArgs& a) { return e.div(B(a), Y(a)); },
                           Residuals::of({0, 1}, {0}));
    case B_::Copysign:  // y / a (0 where a == 0, like PyTorch); constant in b
      return binary_scaled(
          [](Emitter& e, const RuleArgs& a) {
            const Val at0 = is_zero(e, A(a));
            const Val r = e.div(Y(a), e.select(at0, one(e, A(a)), A(a)));
            return e.select(at0, zero(e, r), r);
          },
          nullptr, Residuals::of({0}, {0}));
    case B_::Fmod:
      return binary_scaled(
          nullptr,
          [](Emitter& e, const RuleArgs& a) {
            return e.neg(un(e, UnaryOp::Trunc, e.div(A(a), B(a))));
          },
          kAB);
    case B_::Remainder:
      return binary_scaled(
          nullptr,
          [](Emitter& e, const RuleArgs& a) {
            return e.neg(un(e, UnaryOp::Floor, e.div(A(a), B(a))));
          },
          kAB);
    case B_::Xlogy:
    case B_::Xlog1py:
    case B_::LogAddExp:
      return special_binary_rules(op);
    case B_::Complex:
      // Linear in both parts. <ct, complex(ta, tb)> = Re(ct) ta + Im(ct) tb, so
      // the transpose hands re the real part and im the imaginary part of ct;
      // the wrapper sums each down to its operand's broadcast shape.
      return linear_rule(
          [](const RuleArgs& a, Tangents t) -> Out {
            if (!t[0] && !t[1]) return {std::nullopt};
            Emitter& e = a.emitter;
            const DType rd = real_dtype(out_meta(a).dtype);
            const Val re = t[0] ? *t[0] : e.scalar(0.0, rd);
            const Val im = t[1] ? *t[1] : e.scalar(0.0, rd);
            return {e.binary(B_::Complex, re, im)};
          },
          [](const RuleArgs& a, std::span<const bool> lin, Tangents ct) -> Out {
            if (!ct[0]) return {std::nullopt, std::nullopt};
            Emitter& e = a.emitter;
            return {lin[0] ? MaybeVal(e.real(*ct[0])) : std::nullopt,
                    lin[1] ? MaybeVal(e.unary(UnaryOp::Imag, *ct[0])) : std::nullopt};
          });
    default:  // comparisons and logical ops
      return non_differentiable();
  }
}

RuleSet select_rule() {
  return linear_rule(
      [](const RuleArgs& a, Tangents t) -> Out {
        if (!t[1] && !t[2]) return {std::nullopt};
        Emitter& e = a.emitter;
        const Val z = e.scalar(0.0, out_meta(a).dtype);
        return {e.select(a.inputs[0], t[1] ? *t[1] : z, t[2] ? *t[2] : z)};
      },
      [](const RuleArgs& a, std::span<const bool> lin, Tangents ct) -> Out {
        if (!ct[0]) return {std::nullopt, std::nullopt, std::nullopt};
        Emitter& e = a.emitter;
        const Val z = zero(e, *ct[0]);
        return {std::nullopt, lin[1] ? MaybeVal(e.select(a.inputs[0], *ct[0], z)) : std::nullopt,
                lin[2] ? MaybeVal(e.select(a.inputs[0], z, *ct[0])) : std::nullopt};
      },
      Residuals::of({0}, {}));
}

RuleSet clamp_rule() {
  // Gradient passes where lo <= x <= hi, bounds included (PyTorch).
  return jvp_rule(
      [](const RuleArgs& a, Tangents t) -> Out {
        if (!t[0]) return {std::nullopt};
        Emitter& e = a.emitter;
        const auto& p = params<prim::Clamp>(a);
        const Val x = x_of(a);
        const DType dt = in_meta(a, 0).dtype;
        MaybeVal inside;
        if (p.lo) inside = e.binary(BinaryOp::Ge, x, e.scalar(*p.lo, dt));
        if (p.hi) {
          const Val le = e.binary(BinaryOp::Le, x, e.scalar(*p.hi, dt));
          inside = inside ? e.binary(BinaryOp::LogicalAnd, *inside, le) : le;
        }
        if (!inside) return {t[0]};
        return {e.mul(*t[0], e.select(*inside, one(e, x), zero(e, x)))};
      },
      kX);
}

}  // namespace

RuleSet scaled(Coef coef, Residuals r, bool divide) {
  RuleSet rules = jvp_rule(
      [coef, divide](const RuleArgs& a, Tangents t) -> Out {
        if (!t[0]) return {std::nullopt};
        Emitter& e = a.emitter;
        const Val c = coef(e, x_of(a), y_of(a));
        return {divide ? e.div(*t[0], c) : e.mul(*t[0], c)};
      },
      r);
  // The transpose of t -> t * c (t / c) is ct -> ct * conj(c) (ct / conj(c)):
  // the linearised path's result, without building and transposing a tape.
  rules.vjp = [coef = std::move(coef), divide](const RuleArgs& a, Tangents ct) -> Out {
    if (!ct[0]) return {std::nullopt};
    Emitter& e = a.emitter;
    const Val c = conj_c(e, coef(e, x_of(a), y_of(a)));
    return {divide ? e.div(*ct[0], c) : e.mul(*ct[0], c)};
  };
  return rules;
}

RuleSet binary_scaled(BinCoef ca, BinCoef cb, Residuals r) {
  RuleSet rules = jvp_rule(
      [ca, cb](const RuleArgs& a, Tangents t) -> Out {
        Emitter& e = a.emitter;
        MaybeVal out;
        if (t[0]) out = ca ? e.mul(*t[0], ca(e, a)) : *t[0];
        if (t[1] && cb) out = add_maybe(e, out, e.mul(*t[1], cb(e, a)));
        return {out};
      },
      r);
  // The transpose of (ta, tb) -> ta * ca + tb * cb, each input's share summed
  // back over the extents it was broadcast along: the linearised path's
  // result without building and transposing a tape.
  rules.vjp = [ca = std::move(ca), cb = std::move(cb)](const RuleArgs& a, Tangents ct) -> Out {
    Out out(2);
    if (!ct[0]) return out;
    Emitter& e = a.emitter;
    auto share = [&](std::size_t i, const BinCoef& c) -> MaybeVal {
      if (!a.wants(i) || !is_inexact(in_meta(a, i).dtype)) return std::nullopt;
      // sum_to: summed back over the extents input i was broadcast along.
      return e.sum_to(c ? e.mul(*ct[0], conj_c(e, c(e, a))) : *ct[0], in_meta(a, i).shape);
    };
    out[0] = share(0, ca);
    if (cb) out[1] = share(1, cb);
    return out;
  };
  return rules;
}

}  // namespace tenferro::ad::core

// ---- the kinds' rule hooks -------------------------------------------------------------

namespace tenferro {

using namespace ad::core;

ad::RuleSet prim::Unary::rules(std::int32_t kind) {
  return unary_rules(static_cast<UnaryOp>(kind));
}

ad::RuleSet prim::Binary::rules(std::int32_t kind) {
  const auto op = static_cast<BinaryOp>(kind);
  ad::RuleSet set = binary_rules(op);
  if (op == BinaryOp::Add || op == BinaryOp::Sub || op == BinaryOp::Mul || op == BinaryOp::Complex)
    add_vjp_from_transpose(set);
  return set;
}

ad::RuleSet prim::Select::rules(std::int32_t) {
  return select_rule();
}
ad::RuleSet prim::Clamp::rules(std::int32_t) {
  return clamp_rule();
}
ad::RuleSet prim::Polygamma::rules(std::int32_t) {
  return polygamma_rule();
}

}  // namespace tenferro
