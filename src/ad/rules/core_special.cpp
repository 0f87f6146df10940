// AD rules of the special functions (erfinv ... frexp, polygamma, xlogy,
// xlog1py, logaddexp). Each jvp multiplies the tangent by a coefficient
// computed on primals from ops that have rules themselves, so every rule can
// be differentiated again. Where a formula divides by x, the x == 0 value is
// selected separately and the divisor made safe, so no 0/0 reaches the
// transpose. Values at singular points follow PyTorch.

#include <cmath>
#include <limits>
#include <numbers>

#include "ad/rules/core.hpp"

namespace tenferro::ad::core {

namespace {

using Tangents = std::span<const MaybeVal>;
using Out = std::vector<MaybeVal>;
using U = UnaryOp;

const Residuals kX = Residuals::of({0}, {});
const Residuals kY = Residuals::of({}, {0});
const Residuals kXY = Residuals::of({0}, {0});

Val c(Emitter& e, Val like, double v) {
  return constant_like(e, like, v);
}
Val un(Emitter& e, UnaryOp op, Val x) {
  return e.unary(op, x);
}
Val sq(Emitter& e, Val x) {
  return e.mul(x, x);
}
Val is_zero(Emitter& e, Val x) {
  return e.binary(BinaryOp::Eq, x, c(e, x, 0.0));
}
// x with its zeros replaced by 1, for a division whose x == 0 value is selected apart.
Val nonzero(Emitter& e, Val x, Val at0) {
  return e.select(at0, c(e, x, 1.0), x);
}
Val polygamma(Emitter& e, std::int64_t n, Val x) {
  const Val in[1] = {x};
  return e.emit1(make_primitive(prim::Polygamma{n}), in);
}

// 1 at x == 0 is replaced by `at0_value`: coefficient `d` is computed with a
// safe divisor and the singular point selected.
Val with_value_at_zero(Emitter& e, Val at0, Val d, double at0_value) {
  return e.select(at0, c(e, d, at0_value), d);
}

}  // namespace

RuleSet special_unary_rules(UnaryOp op) {
  const double pi = std::numbers::pi;
  const double sqrt_pi = std::sqrt(pi), sqrt_2pi = std::sqrt(2 * pi);
  switch (op) {
    case U::Erfinv:  // sqrt(pi)/2 exp(y^2)
      return scaled([sqrt_pi](Emitter& e, Val,
                              Val y) { return e.scale(un(e, U::Exp, sq(e, y)), sqrt_pi / 2); },
                    kY);
    case U::Lgamma:
      return scaled([](Emitter& e, Val x, Val) { return un(e, U::Digamma, x); }, kX);
    case U::Digamma:
      return scaled([](Emitter& e, Val x, Val) { return polygamma(e, 1, x); }, kX);
    case U::I0:
      return scaled([](Emitter& e, Val x, Val) { return un(e, U::I1, x); }, kX);
    case U::I1:  // i0 - i1/x, 1/2 at 0
      return scaled(
          [](Emitter& e, Val x, Val y) {
            const Val at0 = is_zero(e, x);
            const Val d = e.sub(un(e, U::I0, x), e.div(y, nonzero(e, x, at0)));
            return with_value_at_zero(e, at0, d, 0.5);
          },
          kXY);
    case U::I0e:  // i1e - sign(x) i0e
      return scaled([](Emitter& e, Val x,
                       Val y) { return e.sub(un(e, U::I1e, x), e.mul(un(e, U::Sign, x), y)); },
                    kXY);
    case U::I1e:  // i0e - i1e (sign(x) + 1/x), 1/2 at 0
      return scaled(
          [](Emitter& e, Val x, Val y) {
            const Val at0 = is_zero(e, x);
            const Val inv = e.div(c(e, x, 1.0), nonzero(e, x, at0));
            const Val d = e.sub(un(e, U::I0e, x), e.mul(y, e.add(un(e, U::Sign, x), inv)));
            return with_value_at_zero(e, at0, d, 0.5);
          },
          kXY);
    case U::Erfcx:  // 2 x erfcx(x) - 2/sqrt(pi)
      return scaled(
          [sqrt_pi](Emitter& e, Val x, Val y) {
            return e.sub(e.mul(e.scale(x, 2.0), y), c(e, x, 2.0 / sqrt_pi));
          },
          kXY);
    case U::Ndtr:  // exp(-x^2/2) / sqrt(2 pi)
      return scaled(
          [sqrt_2pi](Emitter& e, Val x, Val) {
            return e.scale(un(e, U::Exp, e.scale(sq(e, x), -0.5)), 1.0 / sqrt_2pi);
          },
          kX);
    case U::Ndtri:  // sqrt(2 pi) exp(y^2/2)
      return scaled(
          [sqrt_2pi](Emitter& e, Val, Val y) {
            return e.scale(un(e, U::Exp, e.scale(sq(e, y), 0.5)), sqrt_2pi);
          },
          kY);
    case U::LogNdtr:  // phi(x)/ndtr(x) = sqrt(2/pi) / erfcx(-x/sqrt(2)), stable in both tails
      return scaled(
          [pi](Emitter& e, Val x, Val) {
            return e.div(c(e, x, std::sqrt(2 / pi)),
                         un(e, U::Erfcx, e.scale(x, -1 / std::numbers::sqrt2)));
          },
          kX);
    case U::Entr:  // -(1 + log x) everywhere, like PyTorch
      return scaled(
          [](Emitter& e, Val x, Val) { return e.neg(e.add(c(e, x, 1.0), un(e, U::Log, x))); }, kX);
    case U::Logit:  // 1 / (x (1 - x)), NaN outside [0, 1] (PyTorch)
      return scaled(
          [](Emitter& e, Val x, Val) {
            const Val outside =
                e.binary(BinaryOp::LogicalOr, e.binary(BinaryOp::Lt, x, c(e, x, 0.0)),
                         e.binary(BinaryOp::Gt, x, c(e, x, 1.0)));
            const Val d = un(e, U::Reciprocal, e.mul(x, e.sub(c(e, x, 1.0), x)));
            return e.select(outside, c(e, x, std::numeric_limits<double>::quiet_NaN()), d);
          },
          kX);
    case U::Frac:  // derivative 1
      return jvp_rule([](const RuleArgs&, Tangents t) -> Out { return {t[0]}; }, Residuals::none());
    case U::Sinc:  // (cos(pi x) - sinc(x)) / x, 0 at 0; holomorphic for complex x
      return scaled(
          [pi](Emitter& e, Val x, Val y) {
            const Val at0 = is_zero(e, x);
            const Val d = e.div(e.sub(un(e, U::Cos, e.scale(x, pi)), y), nonzero(e, x, at0));
            return with_value_at_zero(e, at0, d, 0.0);
          },
          kXY);
    case U::FrexpMantissa:  // 2^(-exponent), piecewise constant
      return scaled(
          [](Emitter& e, Val x, Val) {
            const Val ex = e.convert(un(e, U::FrexpExponent, x), e.dtype_of(x), true);
            return un(e, U::Exp2, e.neg(ex));
          },
          kX);
    case U::FrexpExponent:
      return non_differentiable();
    default:
      fail(ErrorKind::Internal, std::string(name(op)), "not a special function");
  }
}

RuleSet special_binary_rules(BinaryOp op) {
  using B = BinaryOp;
  const Residuals ab = Residuals::of({0, 1}, {});
  // The first operand's derivative f(b) where a != 0, 0 where a == 0 unless b
  // is NaN: the op itself applied to the indicator (a != 0) does exactly that.
  auto indicator_coef = [](B self) {
    return [self](Emitter& e, const RuleArgs& a) {
      const Val nz = e.binary(B::Ne, a.inputs[0], c(e, a.inputs[0], 0.0));
      return e.binary(self, e.convert(nz, out_meta(a).dtype), a.inputs[1]);
    };
  };
  switch (op) {
    case B::Xlogy:  // d/da = log(b) (0 where a == 0), d/db = a / b
      return binary_scaled(
          indicator_coef(B::Xlogy),
          [](Emitter& e, const RuleArgs& a) { return e.div(a.inputs[0], a.inputs[1]); }, ab);
    case B::Xlog1py:  // d/da = log1p(b) (0 where a == 0), d/db = a / (1 + b)
      return binary_scaled(
          indicator_coef(B::Xlog1py),
          [](Emitter& e, const RuleArgs& a) {
            const Val b = a.inputs[1];
            return e.div(a.inputs[0], e.add(b, c(e, b, 1.0)));
          },
          ab);
    case B::LogAddExp:  // d/da = exp(a - out), d/db = exp(b - out)
      return binary_scaled(
          [](Emitter& e, const RuleArgs& a) {
            return un(e, U::Exp, e.sub(a.inputs[0], a.outputs[0]));
          },
          [](Emitter& e, const RuleArgs& a) {
            return un(e, U::Exp, e.sub(a.inputs[1], a.outputs[0]));
          },
          Residuals::of({0, 1}, {0}));
    default:
      fail(ErrorKind::Internal, std::string(name(op)), "not a special function");
  }
}

RuleSet polygamma_rule() {
  return jvp_rule(
      [](const RuleArgs& a, Tangents t) -> Out {
        if (!t[0]) return {std::nullopt};
        const std::int64_t n = params<prim::Polygamma>(a).n;
        return {a.emitter.mul(*t[0], polygamma(a.emitter, n + 1, a.inputs[0]))};
      },
      kX);
}

}  // namespace tenferro::ad::core
