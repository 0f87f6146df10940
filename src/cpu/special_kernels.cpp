// CPU kernels of the special functions. Values come from Boost.Math under a
// policy that never throws: domain errors give NaN, overflow gives inf, and
// the poles are set explicitly to PyTorch's values; erfcx comes from libcerf.
// f32 computes in double and rounds once. Where double range runs out (i0e,
// i1e for large |x|) the work moves to long double, and only beyond that range
// to the leading terms of the standard asymptotic expansion, which are exact
// to double precision there.

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <numbers>
#include <type_traits>

#include <boost/math/special_functions/bessel.hpp>
#include <boost/math/special_functions/digamma.hpp>
#include <boost/math/special_functions/erf.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <boost/math/special_functions/polygamma.hpp>

// libcerf: C declarations (its complex functions use C99 _Complex, which g++
// accepts); only the real erfcx is used.
#include <cerf.h>

#include "cpu/elementwise_kernels.hpp"
#include "cpu/sleef_kernels.hpp"
#include "cpu/special_kernels.hpp"
#include "cpu/vector_math.hpp"
#include "tensor/dispatch.hpp"

namespace tenferro::cpu {

namespace {

namespace bp = boost::math::policies;
using Policy =
    bp::policy<bp::domain_error<bp::ignore_error>, bp::pole_error<bp::ignore_error>,
               bp::overflow_error<bp::ignore_error>, bp::evaluation_error<bp::ignore_error>,
               bp::rounding_error<bp::ignore_error>, bp::promote_double<false>>;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kPi = std::numbers::pi;
constexpr double kSqrt2 = std::numbers::sqrt2;

// long double -> double with overflow to inf spelled out (an out-of-range
// floating conversion is undefined in the language).
double narrow(long double v) {
  constexpr long double big = std::numeric_limits<double>::max();
  if (v > big) return kInf;
  if (v < -big) return -kInf;
  return static_cast<double>(v);
}

bool is_nonpositive_integer(double x) {
  return x <= 0 && x == std::floor(x);
}

// ---- scalar functions (double) -------------------------------------------------------

double erfinv(double x) {
  if (std::isnan(x) || x < -1 || x > 1) return kNaN;
  if (x == 1 || x == -1) return std::copysign(kInf, x);
  return boost::math::erf_inv(x, Policy());
}

double lgamma(double x) {
  if (std::isnan(x)) return x;
  if (std::isinf(x) || is_nonpositive_integer(x)) return kInf;
  // glibc's reentrant lgamma_r (the sign goes to a local, not the global
  // signgam): within an ulp or two, and about 3x faster than Boost's.
  int sign = 0;
  return ::lgamma_r(x, &sign);
}

double digamma(double x) {
  if (std::isnan(x)) return x;
  if (x == 0) return std::copysign(kInf, -x);  // -inf at +0, +inf at -0 (PyTorch)
  if (x == kInf) return kInf;
  if (is_nonpositive_integer(x)) return kNaN;  // also -inf
  return boost::math::digamma(x, Policy());
}

double polygamma(std::int64_t n, double x) {
  if (n == 0) return digamma(x);
  if (std::isnan(x)) return x;
  if (x == kInf) return 0.0;
  if (x == -kInf) return kNaN;
  // At a pole the limit from the right: (-1)^(n+1) n! / 0+.
  if (is_nonpositive_integer(x)) return n % 2 == 1 ? kInf : -kInf;
  const auto order = static_cast<int>(n);  // n <= kMaxPolygammaOrder (checked upstream)
  // For x > 0 every term of (-1)^(n+1) n! sum_k (x + k)^-(n+1) has one sign,
  // so the first alone overflowing means the value does; Boost would spend
  // O(n) work to find that out.
  if (x > 0 && lgamma(static_cast<double>(n) + 1) - static_cast<double>(n + 1) * std::log(x) >
                   std::log(std::numeric_limits<double>::max())) {
    return n % 2 == 1 ? kInf : -kInf;
  }
  return boost::math::polygamma(order, x, Policy());
}

// Leading terms of exp(-x) I_nu(x) ~ (2 pi x)^(-1/2) sum_k (-1)^k a_k(nu) / x^k
// for x >= 1e4, where 8 terms reach double precision.
double scaled_bessel_i_asymptotic(int nu, double x) {
  const double mu = 4.0 * nu * nu;
  double term = 1, sum = 1;
  for (int k = 1; k <= 8; ++k) {
    const double odd = 2.0 * k - 1;
    term *= -(mu - odd * odd) / (k * 8.0 * x);
    sum += term;
  }
  return sum / std::sqrt(2 * kPi * x);
}

// exp(-|x|) I_nu(|x|) for nu in {0, 1}, without overflow.
double scaled_bessel_i_abs(int nu, double ax) {
  if (std::isnan(ax)) return ax;
  if (ax == kInf) return 0.0;
  if (ax < 700) return std::exp(-ax) * boost::math::cyl_bessel_i(nu, ax, Policy());
  if (ax < 1e4) {  // I_nu(1e4) ~ 1e4341 still fits a long double
    const long double l = static_cast<long double>(ax);
    return narrow(std::exp(-l) * boost::math::cyl_bessel_i(nu, l, Policy()));
  }
  return scaled_bessel_i_asymptotic(nu, ax);
}

double i0(double x) {
  return boost::math::cyl_bessel_i(0, std::fabs(x), Policy());
}
double i1(double x) {
  return std::copysign(boost::math::cyl_bessel_i(1, std::fabs(x), Policy()), x);
}
double i0e(double x) {
  return scaled_bessel_i_abs(0, std::fabs(x));
}
double i1e(double x) {
  return std::copysign(scaled_bessel_i_abs(1, std::fabs(x)), x);
}

// exp(x^2) erfc(x) from libcerf (the Faddeeva-package algorithm: accurate over
// the whole real line, 0 at +inf and inf below x ~ -26.6 where exp(x^2)
// overflows).
double erfcx(double x) {
  return ::erfcx(x);
}

double ndtr(double x) {
  return 0.5 * std::erfc(-x / kSqrt2);
}

double ndtri(double p) {
  if (std::isnan(p) || p < 0 || p > 1) return kNaN;
  if (p == 0) return -kInf;
  if (p == 1) return kInf;
  return -kSqrt2 * boost::math::erfc_inv(2 * p, Policy());
}

// log(ndtr(x)): the lower tail factors out exp(-x^2/2) through erfcx, the
// upper tail goes through log1p of the small complement.
double log_ndtr(double x) {
  if (x < -1) return std::log(erfcx(-x / kSqrt2) / 2) - x * x * 0.5;
  if (x > 0) return std::log1p(-0.5 * std::erfc(x / kSqrt2));
  return std::log(ndtr(x));
}

double entr(double x) {
  if (std::isnan(x)) return x;
  if (x > 0) return -x * std::log(x);
  return x == 0 ? 0.0 : -kInf;
}

double logit(double x) {
  return std::log(x / (1 - x));
}

template <class T>
T sinc(T x) {
  if (x == T(0)) return T(1);
  const T px = x * tenferro::detail::real_of_t<T>(kPi);
  return std::sin(px) / px;
}

template <class T>
T xlogy(T a, T b) {
  if (std::isnan(b)) return b;
  return a == 0 ? T(0) : a * std::log(b);
}
template <class T>
T xlog1py(T a, T b) {
  if (std::isnan(b)) return b;
  return a == 0 ? T(0) : a * std::log1p(b);
}

// log(1 + z), accurate for small |z|: |1 + z|^2 = 1 + (2x + x^2 + y^2).
template <class R>
std::complex<R> log1p_complex(std::complex<R> z) {
  const R x = z.real(), y = z.imag();
  return {std::log1p(x * (2 + x) + y * y) / 2, std::atan2(y, 1 + x)};
}

// max(a, b) + log1p(exp(-|a - b|)), shifting by the operand with the larger
// real part for complex values. Equal infinities return themselves (their
// difference would be NaN).
template <class T>
T logaddexp(T a, T b) {
  if constexpr (tenferro::detail::is_complex_v<T>) {
    using R = typename T::value_type;
    if (std::isnan(a.real()) || std::isnan(a.imag()) || std::isnan(b.real()) ||
        std::isnan(b.imag())) {
      return T(std::numeric_limits<R>::quiet_NaN(), std::numeric_limits<R>::quiet_NaN());
    }
    const bool a_big = a.real() >= b.real();
    const T m = a_big ? a : b, o = a_big ? b : a;
    if (std::isinf(m.real()) && m.real() == o.real()) {
      return m.real() < 0 ? m : std::log(std::exp(a) + std::exp(b));
    }
    return m + log1p_complex(std::exp(o - m));
  } else {
    if (std::isinf(a) && a == b) return a;
    const T m = a > b ? a : b;
    return m + std::log1p(std::exp(-std::fabs(a - b)));  // a NaN operand makes this NaN
  }
}

[[noreturn]] void unreachable(std::string_view op, DType dt) {
  fail(ErrorKind::Internal, std::string(op), "no special-function kernel for dtype ", name(dt),
       "; the dtype rules should have rejected or converted it");
}

// ---- kernels ----------------------------------------------------------------------

// Runs a double -> double function on a real floating tensor.
template <class T, class F>
void run_real(CpuBackend& cpu, const Tensor& x, const Tensor& out, F f) {
  map_elements<T, T>(
      cpu, out, [f](T v) { return static_cast<T>(f(static_cast<double>(v))); }, x);
}

// log_ndtr with SLEEF's erfc, log and log1p on whole blocks (in double, also
// for f32) where the CPU has them: log(erfc(-x/sqrt2)/2) for x <= 0 and
// log1p(-erfc(x/sqrt2)/2) above, i.e. erfc(|x|/sqrt2) either way; each block's
// halves for log and log1p are packed apart so every element takes one of
// them. erfc keeps its 1.5-ulp bound while its value is far above the
// subnormal range, which holds for x >= kLogNdtrVectorFloor (erfc(30/sqrt2)
// ~ 1e-197); below it, and without SLEEF, an element takes the scalar
// log_ndtr (through erfcx). SLEEF's functions work lane by lane, so an
// element's result does not depend on its neighbours.
constexpr double kLogNdtrVectorFloor = -30;

template <class T>
void log_ndtr_real(CpuBackend& cpu, const Tensor& x, const Tensor& out) {
  const vmath::SleefTable* const table = vmath::active_sleef_table();
  if (table == nullptr) return run_real<T>(cpu, x, out, [](double v) { return log_ndtr(v); });
  const auto fn = [table](vmath::SleefFn f) { return table->f64[static_cast<std::size_t>(f)]; };
  const vmath::ArrayFn<double> erfc_fn = fn(vmath::SleefFn::erfc);
  const vmath::ArrayFn<double> log_fn = fn(vmath::SleefFn::log);
  const vmath::ArrayFn<double> log1p_fn = fn(vmath::SleefFn::log1p);
  if (out.numel() == 0) return;
  const tenferro::detail::StridedPlan<2> plan(out.shape(),
                                              {out.strides().span(), x.strides().span()});
  T* const o = static_cast<T*>(out.raw_data());
  const T* const px = static_cast<const T*>(x.raw_data());
  cpu.parallel_for(plan.numel, cpu.parallel_threshold(), [&](std::int64_t b0, std::int64_t e0) {
    plan.run(b0, e0, [&](std::int64_t n, const auto& off, const auto& inc) {
      constexpr std::int64_t kBlock = 256;
      double e[kBlock], lower[kBlock], upper[kBlock];
      for (std::int64_t s = 0; s < n; s += kBlock) {
        const std::int64_t len = std::min(kBlock, n - s);
        const T* const xs = px + off[1] + s * inc[1];
        for (std::int64_t i = 0; i < len; ++i) {
          e[i] = std::fabs(static_cast<double>(xs[i * inc[1]])) / kSqrt2;
        }
        erfc_fn(e, e, len);
        std::int64_t nl = 0, nu = 0;
        for (std::int64_t i = 0; i < len; ++i) {
          if (static_cast<double>(xs[i * inc[1]]) > 0) {
            upper[nu++] = -0.5 * e[i];
          } else {
            lower[nl++] = 0.5 * e[i];  // also NaN
          }
        }
        log_fn(lower, lower, nl);
        log1p_fn(upper, upper, nu);
        T* const z = o + off[0] + s * inc[0];
        nl = nu = 0;
        for (std::int64_t i = 0; i < len; ++i) {
          const double v = static_cast<double>(xs[i * inc[1]]);
          const double r = v > 0 ? upper[nu++] : lower[nl++];
          z[i * inc[0]] = static_cast<T>(v < kLogNdtrVectorFloor ? log_ndtr(v) : r);
        }
      }
    });
  });
}

template <class T>
void special_real(CpuBackend& cpu, UnaryOp op, const Tensor& x, const Tensor& out) {
  auto run = [&](auto f) { run_real<T>(cpu, x, out, f); };
  using U = UnaryOp;
  switch (op) {
    case U::Erfinv:
      return run([](double v) { return erfinv(v); });
    case U::Lgamma:
      return run([](double v) { return lgamma(v); });
    case U::Digamma:
      return run([](double v) { return digamma(v); });
    case U::I0:
      return run([](double v) { return i0(v); });
    case U::I0e:
      return run([](double v) { return i0e(v); });
    case U::I1:
      return run([](double v) { return i1(v); });
    case U::I1e:
      return run([](double v) { return i1e(v); });
    case U::Erfcx:
      return run([](double v) { return erfcx(v); });
    case U::Ndtr:
      return run([](double v) { return ndtr(v); });
    case U::Ndtri:
      return run([](double v) { return ndtri(v); });
    case U::LogNdtr:
      return log_ndtr_real<T>(cpu, x, out);
    case U::Entr:
      return run([](double v) { return entr(v); });
    case U::Logit:
      return run([](double v) { return logit(v); });
    case U::Frac:  // exact in T itself
      return map_elements<T, T>(
          cpu, out, [](T v) { return v - std::trunc(v); }, x);
    case U::Sinc:
      return run([](double v) { return sinc(v); });
    case U::FrexpMantissa:
      return map_elements<T, T>(
          cpu, out,
          [](T v) {
            int e = 0;
            return std::frexp(v, &e);
          },
          x);
    case U::FrexpExponent:
      return map_elements<std::int32_t, T>(
          cpu, out,
          [](T v) {
            int e = 0;
            (void)std::frexp(v, &e);
            return static_cast<std::int32_t>(std::isfinite(v) ? e : 0);
          },
          x);
    default:
      unreachable(name(op), x.dtype());
  }
}

// Real logaddexp with the exp and log1p of whole blocks on the vector kernels
// (vector_math.hpp's exp, SLEEF's log1p where the CPU has it): per block, the
// shift m = max(a, b) and d = -|a - b|, then d <- log1p(exp(d)), then m + d.
// The same values as logaddexp() within those kernels' ulp bounds, including
// equal infinities and NaN.
template <class T>
void logaddexp_real(CpuBackend& cpu, const Tensor& a, const Tensor& b, const Tensor& out) {
  if (out.numel() == 0) return;
  const tenferro::detail::StridedPlan<3> plan(
      out.shape(), {out.strides().span(), a.strides().span(), b.strides().span()});
  T* const o = static_cast<T*>(out.raw_data());
  const T* const pa = static_cast<const T*>(a.raw_data());
  const T* const pb = static_cast<const T*>(b.raw_data());
  const vmath::SleefTable* const table = vmath::active_sleef_table();
  vmath::ArrayFn<T> log1p_fn = nullptr;
  if (table != nullptr) {
    const auto i = static_cast<std::size_t>(vmath::SleefFn::log1p);
    if constexpr (std::is_same_v<T, double>) {
      log1p_fn = table->f64[i];
    } else {
      log1p_fn = table->f32[i];
    }
  }
  cpu.parallel_for(plan.numel, cpu.parallel_threshold(), [&](std::int64_t b0, std::int64_t e0) {
    plan.run(b0, e0, [&](std::int64_t n, const auto& off, const auto& inc) {
      constexpr std::int64_t kBlock = 256;
      T m[kBlock], d[kBlock];
      for (std::int64_t s = 0; s < n; s += kBlock) {
        const std::int64_t len = std::min(kBlock, n - s);
        const T* const x = pa + off[1] + s * inc[1];
        const T* const y = pb + off[2] + s * inc[2];
        for (std::int64_t i = 0; i < len; ++i) {
          const T u = x[i * inc[1]], v = y[i * inc[2]];
          m[i] = u > v ? u : v;
          d[i] = -std::fabs(u - v);  // NaN for a NaN operand or equal infinities
        }
        vmath::vexp(d, d, len);
        if (log1p_fn != nullptr) {
          log1p_fn(d, d, len);
        } else {
          for (std::int64_t i = 0; i < len; ++i) d[i] = std::log1p(d[i]);
        }
        T* const z = o + off[0] + s * inc[0];
        for (std::int64_t i = 0; i < len; ++i) {
          const T u = x[i * inc[1]], v = y[i * inc[2]];
          z[i * inc[0]] = (std::isinf(u) && u == v) ? u : m[i] + d[i];
        }
      }
    });
  });
}

template <class T>
void special_binary_typed(CpuBackend& cpu, BinaryOp op, const Tensor& a, const Tensor& b,
                          const Tensor& out) {
  auto run = [&](auto f) { map_elements<T, T, T>(cpu, out, f, a, b); };
  if constexpr (tenferro::detail::is_complex_v<T>) {
    if (op == BinaryOp::LogAddExp) return run([](T x, T y) { return logaddexp(x, y); });
  } else {
    switch (op) {
      case BinaryOp::Xlogy:
        return run([](T x, T y) { return xlogy(x, y); });
      case BinaryOp::Xlog1py:
        return run([](T x, T y) { return xlog1py(x, y); });
      case BinaryOp::LogAddExp:
        return logaddexp_real<T>(cpu, a, b, out);
      default:
        break;
    }
  }
  unreachable(name(op), a.dtype());
}

}  // namespace

void special_unary_kernel(CpuBackend& backend, UnaryOp op, const Tensor& x, const Tensor& out) {
  switch (x.dtype()) {
    case DType::F32:
      return special_real<float>(backend, op, x, out);
    case DType::F64:
      return special_real<double>(backend, op, x, out);
    case DType::C64:
      if (op != UnaryOp::Sinc) break;
      return map_elements<c64_t, c64_t>(
          backend, out, [](c64_t v) { return sinc(v); }, x);
    case DType::C128:
      if (op != UnaryOp::Sinc) break;
      return map_elements<c128_t, c128_t>(
          backend, out, [](c128_t v) { return sinc(v); }, x);
    default:
      break;
  }
  unreachable(name(op), x.dtype());
}

void special_binary_kernel(CpuBackend& backend, BinaryOp op, const Tensor& a, const Tensor& b,
                           const Tensor& out) {
  switch (a.dtype()) {
    case DType::F32:
      return special_binary_typed<float>(backend, op, a, b, out);
    case DType::F64:
      return special_binary_typed<double>(backend, op, a, b, out);
    case DType::C64:
      return special_binary_typed<c64_t>(backend, op, a, b, out);
    case DType::C128:
      return special_binary_typed<c128_t>(backend, op, a, b, out);
    default:
      unreachable(name(op), a.dtype());
  }
}

void polygamma_kernel(CpuBackend& backend, std::int64_t n, const Tensor& x, const Tensor& out) {
  switch (x.dtype()) {
    case DType::F32:
      return run_real<float>(backend, x, out, [n](double v) { return polygamma(n, v); });
    case DType::F64:
      return run_real<double>(backend, x, out, [n](double v) { return polygamma(n, v); });
    default:
      unreachable("polygamma", x.dtype());
  }
}

}  // namespace tenferro::cpu
