// CPU kernels of the unary elementwise ops and clamp. One template per dtype
// switches on the op; each case instantiates the shared loop once, and cases
// that the dtype rules of elementwise.cpp never route to a dtype compile to an
// Internal error instead of a kernel.

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <numbers>
#include <type_traits>
#include <utility>

#include "cpu/elementwise_kernels.hpp"
#include "cpu/sleef_kernels.hpp"
#include "cpu/special_kernels.hpp"
#include "cpu/vector_math.hpp"
#include "tensor/dispatch.hpp"

namespace tenferro::cpu {

namespace {

template <class T>
inline constexpr bool is_float_v = std::is_floating_point_v<T>;
template <class T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Integer arithmetic wraps (two's complement) like NumPy and PyTorch instead of
// being undefined on overflow.
template <class T>
T wrapping_neg(T v) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(U{0} - static_cast<U>(v));
}
template <class T>
T wrapping_mul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}

// expm1 and log1p of complex values, accurate near zero where exp(z) - 1 and
// log(1 + z) cancel.
template <class R>
std::complex<R> complex_expm1(std::complex<R> z) {
  const R x = z.real(), y = z.imag();
  const R s = std::sin(y / 2);
  return {std::expm1(x) * std::cos(y) - 2 * s * s, std::exp(x) * std::sin(y)};
}
template <class R>
std::complex<R> complex_log1p(std::complex<R> z) {
  const R x = z.real(), y = z.imag();
  // |1 + z|^2 = 1 + (2x + x^2 + y^2); log1p keeps the small term exact.
  return {std::log1p(x * (2 + x) + y * y) / 2, std::atan2(y, 1 + x)};
}

// out = vf(x) elementwise for an array kernel of vector_math.hpp: unit-stride
// runs go to it whole; strided runs (and stride-0 broadcasts) are gathered
// into a small stack buffer, computed there in place, and scattered back.
template <class T>
void map_array(CpuBackend& cpu, const Tensor& x, const Tensor& out,
               void (*vf)(const T*, T*, std::int64_t)) {
  if (out.numel() == 0) return;
  const tenferro::detail::StridedPlan<2> plan(out.shape(),
                                              {out.strides().span(), x.strides().span()});
  T* const out_base = static_cast<T*>(out.raw_data());
  const T* const x_base = static_cast<const T*>(x.raw_data());
  const bool flat = plan.is_flat_unit();
  cpu.parallel_for(plan.numel, cpu.parallel_threshold(), [&](std::int64_t b, std::int64_t e) {
    if (flat) return vf(x_base + b, out_base + b, e - b);
    plan.run(b, e, [&](std::int64_t n, const auto& off, const auto& inc) {
      T* const o = out_base + off[0];
      const T* const p = x_base + off[1];
      if (inc[0] == 1 && inc[1] == 1) return vf(p, o, n);
      constexpr std::int64_t kBlock = 256;
      T buf[kBlock];
      for (std::int64_t s = 0; s < n; s += kBlock) {
        const std::int64_t m = std::min(kBlock, n - s);
        for (std::int64_t i = 0; i < m; ++i) buf[i] = p[(s + i) * inc[1]];
        vf(buf, buf, m);
        for (std::int64_t i = 0; i < m; ++i) o[(s + i) * inc[0]] = buf[i];
      }
    });
  });
}

// The ops taken from SLEEF (sleef_kernels.hpp), with their table entries.
constexpr std::pair<UnaryOp, vmath::SleefFn> kSleefOps[] = {
    {UnaryOp::Log, vmath::SleefFn::log},     {UnaryOp::Log2, vmath::SleefFn::log2},
    {UnaryOp::Log10, vmath::SleefFn::log10}, {UnaryOp::Log1p, vmath::SleefFn::log1p},
    {UnaryOp::Expm1, vmath::SleefFn::expm1}, {UnaryOp::Exp2, vmath::SleefFn::exp2},
    {UnaryOp::Sin, vmath::SleefFn::sin},     {UnaryOp::Cos, vmath::SleefFn::cos},
    {UnaryOp::Tan, vmath::SleefFn::tan},     {UnaryOp::Asin, vmath::SleefFn::asin},
    {UnaryOp::Acos, vmath::SleefFn::acos},   {UnaryOp::Atan, vmath::SleefFn::atan},
    {UnaryOp::Atanh, vmath::SleefFn::atanh}, {UnaryOp::Erf, vmath::SleefFn::erf},
    {UnaryOp::Erfc, vmath::SleefFn::erfc}};

// SLEEF's array kernel of op for T (f32 or f64), or nullptr where std:: is
// used: op not taken from SLEEF, or a CPU without AVX2.
template <class T>
vmath::ArrayFn<T> sleef_kernel(UnaryOp op) {
  const vmath::SleefTable* const table = vmath::active_sleef_table();
  if (table == nullptr) return nullptr;
  for (const auto& [u, fn] : kSleefOps) {
    if (u != op) continue;
    const auto i = static_cast<std::size_t>(fn);
    if constexpr (std::is_same_v<T, double>) {
      return table->f64[i];
    } else {
      return table->f32[i];
    }
  }
  return nullptr;
}

[[noreturn]] void unreachable_dtype(UnaryOp op, DType dt) {
  fail(ErrorKind::Internal, std::string(name(op)), "no kernel for dtype ", name(dt),
       "; the dtype rules should have rejected or converted it");
}

// Where a unary op's elementwise function runs: over tensors (any strides,
// split across the pool) or over compact raw arrays (the fused executor's
// blocks). Both get the same function, so both compute the same values.
struct TensorSink {
  CpuBackend& cpu;
  const Tensor& x;
  const Tensor& out;
  bool light;  // the op's element function is light (light_unary)
  template <class Out, class T, class F>
  void elements(const F& f) const {
    if (light) {
      map_light_elements<Out, T>(cpu, out, f, x);
    } else {
      map_elements<Out, T>(cpu, out, f, x);
    }
  }
  template <class T>
  void array(void (*vf)(const T*, T*, std::int64_t)) const {
    map_array<T>(cpu, x, out, vf);
  }
};
struct RawSink {
  const void* x;
  void* out;
  std::int64_t n;
  template <class Out, class T, class F>
  void elements(const F& f) const {
    const T* p = static_cast<const T*>(x);  // may alias out (in place)
    Out* o = static_cast<Out*>(out);
    for (std::int64_t i = 0; i < n; ++i) o[i] = f(p[i]);
  }
  template <class T>
  void array(void (*vf)(const T*, T*, std::int64_t)) const {
    vf(static_cast<const T*>(x), static_cast<T*>(out), n);
  }
};

template <class T, class Sink>
void unary_typed(UnaryOp op, DType dtype, const Sink& sink) {
  using R = tenferro::detail::real_of_t<T>;
  constexpr bool cplx = tenferro::detail::is_complex_v<T>;
  constexpr bool inexact = cplx || is_float_v<T>;

  // Runs f elementwise; the output element type is what f returns.
  auto run = [&](auto f) {
    using Out = decltype(f(std::declval<T>()));
    sink.template elements<Out, T>(f);
  };
  // Float and complex only: integers and bool were converted to f64 upstream.
  auto run_inexact = [&](auto f) {
    if constexpr (inexact) {
      run(f);
    } else {
      unreachable_dtype(op, dtype);
    }
  };
  auto run_real_float = [&](auto f) {
    if constexpr (is_float_v<T>) {
      run(f);
    } else {
      unreachable_dtype(op, dtype);
    }
  };
  auto identity = [](T v) { return v; };
  // Real-valued rounding functions leave integers and bool unchanged.
  auto run_rounding = [&](auto f) {
    if constexpr (is_float_v<T>) {
      run(f);
    } else if constexpr (!cplx) {
      run(identity);
    } else {
      unreachable_dtype(op, dtype);
    }
  };
  // Sign for real, integer and bool values (NaN stays NaN, zero keeps its sign).
  auto real_sign = [](auto v) {
    using V = decltype(v);
    if constexpr (std::is_same_v<V, bool>) {
      return v;
    } else {
      return v > V(0) ? V(1) : v < V(0) ? V(-1) : v;
    }
  };

  // Real transcendental functions: SLEEF's vector forms where the CPU has
  // them (within 1 ulp, erfc 1.5; sleef_kernels.hpp), std:: otherwise.
  if constexpr (is_float_v<T>) {
    if (const auto f = sleef_kernel<T>(op)) return sink.template array<T>(f);
  }

  switch (op) {
    case UnaryOp::Abs:
      if constexpr (std::is_same_v<T, bool>) {
        return run(identity);
      } else if constexpr (is_int_v<T>) {
        return run([](T v) { return v < 0 ? wrapping_neg(v) : v; });
      } else {
        return run([](T v) { return std::abs(v); });
      }
    case UnaryOp::Neg:
      if constexpr (is_int_v<T>) {
        return run([](T v) { return wrapping_neg(v); });
      } else {
        return run_inexact([](auto v) { return -v; });
      }
    case UnaryOp::Conj:
      if constexpr (cplx) {
        return run([](T v) { return std::conj(v); });
      } else {
        return run(identity);
      }
    case UnaryOp::Square:
      if constexpr (std::is_same_v<T, bool>) {
        return run(identity);  // v && v
      } else if constexpr (is_int_v<T>) {
        return run([](T v) { return wrapping_mul(v, v); });
      } else {
        return run([](T v) { return v * v; });
      }
    // Real exp, tanh and sigmoid use the vectorised array kernels (within a
    // few ulp of std::, see vector_math.hpp); complex keeps std::.
    case UnaryOp::Exp:
      if constexpr (is_float_v<T>) {
        return sink.template array<T>(vmath::vexp);
      } else {
        return run_inexact([](auto v) { return std::exp(v); });
      }
    case UnaryOp::Exp2:
      if constexpr (cplx) {
        return run([](T v) { return std::exp(v * std::numbers::ln2_v<R>); });
      } else {
        return run_inexact([](auto v) { return std::exp2(v); });
      }
    case UnaryOp::Expm1:
      if constexpr (cplx) {
        return run([](T v) { return complex_expm1(v); });
      } else {
        return run_inexact([](auto v) { return std::expm1(v); });
      }
    case UnaryOp::Log:
      return run_inexact([](auto v) { return std::log(v); });
    case UnaryOp::Log2:
      if constexpr (cplx) {
        return run([](T v) { return std::log(v) / std::numbers::ln2_v<R>; });
      } else {
        return run_inexact([](auto v) { return std::log2(v); });
      }
    case UnaryOp::Log10:
      return run_inexact([](auto v) { return std::log10(v); });
    case UnaryOp::Log1p:
      if constexpr (cplx) {
        return run([](T v) { return complex_log1p(v); });
      } else {
        return run_inexact([](auto v) { return std::log1p(v); });
      }
    case UnaryOp::Sqrt:
      return run_inexact([](auto v) { return std::sqrt(v); });
    case UnaryOp::Rsqrt:
      return run_inexact([](auto v) { return decltype(v)(1) / std::sqrt(v); });
    case UnaryOp::Reciprocal:
      return run_inexact([](auto v) { return decltype(v)(1) / v; });
    case UnaryOp::Sin:
      return run_inexact([](auto v) { return std::sin(v); });
    case UnaryOp::Cos:
      return run_inexact([](auto v) { return std::cos(v); });
    case UnaryOp::Tan:
      return run_inexact([](auto v) { return std::tan(v); });
    case UnaryOp::Asin:
      return run_inexact([](auto v) { return std::asin(v); });
    case UnaryOp::Acos:
      return run_inexact([](auto v) { return std::acos(v); });
    case UnaryOp::Atan:
      return run_inexact([](auto v) { return std::atan(v); });
    case UnaryOp::Sinh:
      return run_inexact([](auto v) { return std::sinh(v); });
    case UnaryOp::Cosh:
      return run_inexact([](auto v) { return std::cosh(v); });
    case UnaryOp::Tanh:
      if constexpr (is_float_v<T>) {
        return sink.template array<T>(vmath::vtanh);
      } else {
        return run_inexact([](auto v) { return std::tanh(v); });
      }
    case UnaryOp::Asinh:
      return run_inexact([](auto v) { return std::asinh(v); });
    case UnaryOp::Acosh:
      return run_inexact([](auto v) { return std::acosh(v); });
    case UnaryOp::Atanh:
      return run_inexact([](auto v) { return std::atanh(v); });
    case UnaryOp::Sigmoid:
      if constexpr (is_float_v<T>) {
        return sink.template array<T>(vmath::vsigmoid);
      } else {
        return run_inexact([](auto v) {
          using V = decltype(v);
          return V(1) / (V(1) + std::exp(-v));
        });
      }
    case UnaryOp::Erf:
      return run_real_float([](auto v) { return std::erf(v); });
    case UnaryOp::Erfc:
      return run_real_float([](auto v) { return std::erfc(v); });
    case UnaryOp::Sign:
      if constexpr (cplx) {
        unreachable_dtype(op, dtype);
      } else {
        return run(real_sign);
      }
    case UnaryOp::Sgn:
      if constexpr (cplx) {
        return run([](T v) { return v == T(0) ? T(0) : v / std::abs(v); });
      } else {
        return run(real_sign);
      }
    // std::nearbyint rounds half to even under the default rounding mode.
    case UnaryOp::Floor:
      return run_rounding([](auto v) { return std::floor(v); });
    case UnaryOp::Ceil:
      return run_rounding([](auto v) { return std::ceil(v); });
    case UnaryOp::Round:
      return run_rounding([](auto v) { return std::nearbyint(v); });
    case UnaryOp::Trunc:
      return run_rounding([](auto v) { return std::trunc(v); });
    case UnaryOp::Real:
      if constexpr (cplx) {
        return run([](T v) { return v.real(); });
      } else {
        return run(identity);
      }
    case UnaryOp::Imag:
      if constexpr (cplx) {
        return run([](T v) { return v.imag(); });
      } else {
        return run([](T) { return T(0); });
      }
    case UnaryOp::Angle:
      if constexpr (cplx) {
        return run([](T v) { return std::arg(v); });
      } else {
        // Real values: pi for negatives, 0 otherwise, NaN stays NaN.
        return run_real_float([](auto v) {
          using V = decltype(v);
          return v < V(0) ? std::numbers::pi_v<V> : v != v ? v : V(0);
        });
      }
    case UnaryOp::IsFinite:
      if constexpr (cplx) {
        return run([](T v) { return std::isfinite(v.real()) && std::isfinite(v.imag()); });
      } else if constexpr (is_float_v<T>) {
        return run([](T v) { return static_cast<bool>(std::isfinite(v)); });
      } else {
        return run([](T) { return true; });
      }
    case UnaryOp::IsNan:
      if constexpr (cplx) {
        return run([](T v) { return std::isnan(v.real()) || std::isnan(v.imag()); });
      } else if constexpr (is_float_v<T>) {
        return run([](T v) { return static_cast<bool>(std::isnan(v)); });
      } else {
        return run([](T) { return false; });
      }
    case UnaryOp::LogicalNot:
      return run([](T v) { return v == T(0); });
    default:  // special functions: routed to special_unary_kernel before dispatch
      break;
  }
  unreachable_dtype(op, dtype);
}

// Bounds for an integer x: fractional bounds round inwards (x >= 2.5 means
// x >= 3) and everything saturates to T's range, so no conversion overflows.
template <class T>
T integer_bound(const Scalar& s, bool is_lower) {
  constexpr auto lo = std::numeric_limits<T>::lowest();
  constexpr auto hi = std::numeric_limits<T>::max();
  if (is_integral(s.dtype()) || is_bool(s.dtype())) {
    const std::int64_t v = s.to_int();
    return v < static_cast<std::int64_t>(lo)   ? lo
           : v > static_cast<std::int64_t>(hi) ? hi
                                               : static_cast<T>(v);
  }
  const double v = is_lower ? std::ceil(s.real()) : std::floor(s.real());
  if (std::isnan(v))
    fail(ErrorKind::InvalidArgument, "clamp", "bound is NaN for an integer tensor");
  // 2^63 is exactly representable, and every double below it converts safely.
  if (v <= static_cast<double>(lo)) return lo;
  if (v >= static_cast<double>(hi)) return hi;
  return static_cast<T>(v);
}

// The ops whose element function costs about its load and store on every
// dtype (map_light_elements: a compact one over more than the cache streams
// its output). Not the rounding functions (calls to libm in the baseline
// build) nor complex abs (a hypot).
bool light_unary(UnaryOp op, DType dtype) {
  switch (op) {
    case UnaryOp::Neg:
    case UnaryOp::Conj:
    case UnaryOp::Square:
    case UnaryOp::Sign:
    case UnaryOp::Real:
    case UnaryOp::Imag:
    case UnaryOp::IsFinite:
    case UnaryOp::IsNan:
    case UnaryOp::LogicalNot:
      return true;
    case UnaryOp::Abs:
      return !is_complex(dtype);
    default:
      return false;
  }
}

}  // namespace

void unary_kernel(CpuBackend& backend, UnaryOp op, const Tensor& x, const Tensor& out) {
  if (is_special_op(op)) return special_unary_kernel(backend, op, x, out);
  const TensorSink sink{backend, x, out, light_unary(op, x.dtype())};
  tenferro::detail::dispatch_dtype(
      x.dtype(), [&](auto tag) { unary_typed<typename decltype(tag)::type>(op, x.dtype(), sink); });
}

bool unary_contiguous(UnaryOp op, DType dtype, const void* x, void* out, std::int64_t n) {
  if (is_special_op(op)) return false;
  const RawSink sink{x, out, n};
  tenferro::detail::dispatch_dtype(
      dtype, [&](auto tag) { unary_typed<typename decltype(tag)::type>(op, dtype, sink); });
  return true;
}

void clamp_kernel(CpuBackend& backend, const Tensor& x, std::optional<Scalar> lo,
                  std::optional<Scalar> hi, const Tensor& out) {
  tenferro::detail::dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_v<T>) {
      const T l = lo ? lo->to<T>() : -std::numeric_limits<T>::infinity();
      const T h = hi ? hi->to<T>() : std::numeric_limits<T>::infinity();
      // min(max(x, lo), hi): lo > hi gives hi (like PyTorch); NaN in x or in a
      // bound propagates.
      map_light_elements<T, T>(
          backend, out,
          [l, h](T v) {
            v = (v < l || l != l) ? l : v;
            return (v > h || h != h) ? h : v;
          },
          x);
    } else if constexpr (is_int_v<T>) {
      const T l = lo ? integer_bound<T>(*lo, true) : std::numeric_limits<T>::lowest();
      const T h = hi ? integer_bound<T>(*hi, false) : std::numeric_limits<T>::max();
      map_light_elements<T, T>(
          backend, out,
          [l, h](T v) {
            v = v < l ? l : v;
            return v > h ? h : v;
          },
          x);
    } else {
      fail(ErrorKind::Internal, "clamp", "no kernel for dtype ", name(x.dtype()));
    }
  });
}

}  // namespace tenferro::cpu
