// CPU kernels of the binary elementwise ops and where. One template per
// compute dtype switches on the op; cases that the dtype rules of
// elementwise.cpp never route to a dtype compile to an Internal error.

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <type_traits>

#include "cpu/arith_ops.hpp"
#include "cpu/elementwise_kernels.hpp"
#include "cpu/special_kernels.hpp"
#include "cpu/stream_arith.hpp"
#include "cpu/stream_store.hpp"
#include "cpu/target_clones.hpp"
#include "tensor/dispatch.hpp"

namespace tenferro::cpu {

namespace {

template <class T>
inline constexpr bool is_float_v = std::is_floating_point_v<T>;
template <class T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Integer arithmetic wraps (two's complement) like NumPy and PyTorch instead of
// being undefined on overflow; unsigned arithmetic still vectorises.
template <class T>
T wrapping_add(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <class T>
T wrapping_sub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <class T>
T wrapping_mul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}

// Integer power by squaring (wrapping on overflow). A negative exponent has no
// integer result except for bases 1 and -1; like NumPy's truncation toward zero
// of 1/base^|e| it gives 0 otherwise: 1 -> 1, -1 -> +-1 by parity, others -> 0.
template <class T>
T integer_pow(T base, T e) {
  if (e < 0) {
    if (base == 1) return 1;
    if (base == -1) return (e % 2 == 0) ? T(1) : T(-1);
    return 0;
  }
  T result = 1;
  while (e > 0) {
    if (e & 1) result = wrapping_mul(result, base);
    e >>= 1;
    if (e > 0) base = wrapping_mul(base, base);
  }
  return result;
}

// std::pow(0, b) goes through log(0) and gives NaN; 0^b is 0 for Re(b) > 0
// and 1 for b == 0.
template <class T>
T complex_pow(T a, T b) {
  if (a == T(0)) {
    if (b == T(0)) return T(1);
    if (b.imag() == 0 && b.real() > 0) return T(0);
  }
  return std::pow(a, b);
}

// NaN-propagating max/min (std::max would drop a NaN in the first argument).
template <class T>
T nan_max(T a, T b) {
  if constexpr (is_float_v<T>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return a > b ? a : b;
}
template <class T>
T nan_min(T a, T b) {
  if constexpr (is_float_v<T>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return a < b ? a : b;
}

// Python remainder: the result takes the sign of the divisor.
template <class T>
T python_remainder(T a, T b) {
  if constexpr (is_float_v<T>) {
    T r = std::fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r == 0 ? std::copysign(T(0), b) : r;
  } else {
    if (b == -1) return 0;  // INT_MIN % -1 overflows
    T r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  }
}
template <class T>
T c_fmod(T a, T b) {
  if constexpr (is_float_v<T>) {
    return std::fmod(a, b);
  } else {
    return b == -1 ? T(0) : static_cast<T>(a % b);
  }
}

[[noreturn]] void unreachable_dtype(BinaryOp op, DType dt) {
  fail(ErrorKind::Internal, std::string(name(op)), "no kernel for dtype ", name(dt),
       "; the dtype rules should have rejected or converted it");
}

// Integer fmod/remainder: refuse a zero divisor up front instead of raising SIGFPE.
template <class T>
void require_nonzero_divisor(BinaryOp op, const Tensor& b) {
  if (b.numel() == 0) return;
  const tenferro::detail::StridedPlan<1> plan(b.shape(), {b.strides().span()});
  const T* base = static_cast<const T*>(b.raw_data());
  bool zero = false;
  plan.run([&](std::int64_t n, const auto& off, const auto& inc) {
    for (std::int64_t i = 0; i < n && !zero; ++i) zero = base[off[0] + i * inc[0]] == T(0);
  });
  if (zero) {
    fail(ErrorKind::InvalidArgument, std::string(name(op)),
         "integer division by zero; convert to a floating dtype for inf/nan results");
  }
}

// Where a binary op's elementwise function runs: over tensors (any strides,
// split across the pool) or over compact raw arrays (the fused executor's
// blocks). Both get the same function, so both compute the same values.
struct TensorSink {
  CpuBackend& cpu;
  const Tensor& a;
  const Tensor& b;
  const Tensor& out;
  bool light;  // the op's element function is light (light_binary)
  template <class Out, class T, class F>
  void elements(const F& f) const {
    if (light) {
      map_light_elements<Out, T, T>(cpu, out, f, a, b);
    } else {
      map_elements<Out, T, T>(cpu, out, f, a, b);
    }
  }
  template <class T>
  void require_nonzero(BinaryOp op) const {
    require_nonzero_divisor<T>(op, b);
  }
};
struct RawSink {
  const void* a;
  const void* b;
  void* out;
  std::int64_t n;
  template <class Out, class T, class F>
  void elements(const F& f) const {
    const T* pa = static_cast<const T*>(a);  // a, b may alias out (in place)
    const T* pb = static_cast<const T*>(b);
    Out* o = static_cast<Out*>(out);
    for (std::int64_t i = 0; i < n; ++i) o[i] = f(pa[i], pb[i]);
  }
  template <class T>
  void require_nonzero(BinaryOp op) const {
    const T* pb = static_cast<const T*>(b);
    for (std::int64_t i = 0; i < n; ++i) {
      if (pb[i] == T(0)) {
        fail(ErrorKind::InvalidArgument, std::string(name(op)),
             "integer division by zero; convert to a floating dtype for inf/nan results");
      }
    }
  }
};

template <class T, class Sink>
void binary_typed(BinaryOp op, DType dtype, const Sink& sink) {
  constexpr bool cplx = tenferro::detail::is_complex_v<T>;
  constexpr bool is_bool = std::is_same_v<T, bool>;
  constexpr bool real = !cplx;

  auto run = [&](auto f) {
    using Out = decltype(f(std::declval<T>(), std::declval<T>()));
    sink.template elements<Out, T>(f);
  };
  // Runs f only where `ok` holds for T; elsewhere the dtype rules forbid the pair.
  auto run_if = [&](auto ok, auto f) {
    if constexpr (decltype(ok)::value) {
      run(f);
    } else {
      unreachable_dtype(op, dtype);
    }
  };
  using RealT = std::bool_constant<real>;
  using FloatT = std::bool_constant<is_float_v<T>>;
  using NotBoolT = std::bool_constant<!is_bool>;
  using RealNotBoolT = std::bool_constant<real && !is_bool>;

  switch (op) {
    case BinaryOp::Add:
      if constexpr (is_bool) {
        return run([](T x, T y) { return x || y; });
      } else if constexpr (is_int_v<T>) {
        return run([](T x, T y) { return wrapping_add(x, y); });
      } else {
        return run([](T x, T y) { return x + y; });
      }
    case BinaryOp::Sub:
      if constexpr (is_int_v<T>) {
        return run([](T x, T y) { return wrapping_sub(x, y); });
      } else {
        return run_if(NotBoolT{}, [](auto x, auto y) { return x - y; });
      }
    case BinaryOp::Mul:
      if constexpr (is_bool) {
        return run([](T x, T y) { return x && y; });
      } else if constexpr (is_int_v<T>) {
        return run([](T x, T y) { return wrapping_mul(x, y); });
      } else {
        return run([](T x, T y) { return x * y; });
      }
    case BinaryOp::Div:
      return run_if(std::bool_constant < cplx || is_float_v < T >> {},
                    [](auto x, auto y) { return x / y; });
    case BinaryOp::Pow:
      if constexpr (cplx) {
        return run([](T x, T y) { return complex_pow(x, y); });
      } else if constexpr (is_int_v<T>) {
        return run([](T x, T y) { return integer_pow(x, y); });
      } else {
        return run_if(FloatT{}, [](auto x, auto y) { return std::pow(x, y); });
      }
    case BinaryOp::Maximum:
      return run_if(RealT{}, [](auto x, auto y) { return nan_max(x, y); });
    case BinaryOp::Minimum:
      return run_if(RealT{}, [](auto x, auto y) { return nan_min(x, y); });
    case BinaryOp::Atan2:
      return run_if(FloatT{}, [](auto x, auto y) { return std::atan2(x, y); });
    case BinaryOp::Hypot:
      return run_if(FloatT{}, [](auto x, auto y) { return std::hypot(x, y); });
    case BinaryOp::Copysign:
      return run_if(FloatT{}, [](auto x, auto y) { return std::copysign(x, y); });
    case BinaryOp::Fmod:
    case BinaryOp::Remainder:
      if constexpr (is_int_v<T>) sink.template require_nonzero<T>(op);
      if (op == BinaryOp::Fmod) {
        return run_if(RealNotBoolT{}, [](auto x, auto y) { return c_fmod(x, y); });
      }
      return run_if(RealNotBoolT{}, [](auto x, auto y) { return python_remainder(x, y); });
    case BinaryOp::Eq:
      return run([](T x, T y) { return x == y; });
    case BinaryOp::Ne:
      return run([](T x, T y) { return x != y; });
    case BinaryOp::Lt:
      return run_if(RealT{}, [](auto x, auto y) { return x < y; });
    case BinaryOp::Le:
      return run_if(RealT{}, [](auto x, auto y) { return x <= y; });
    case BinaryOp::Gt:
      return run_if(RealT{}, [](auto x, auto y) { return x > y; });
    case BinaryOp::Ge:
      return run_if(RealT{}, [](auto x, auto y) { return x >= y; });
    // The dtype rules convert both operands to bool (x != 0) first.
    case BinaryOp::LogicalAnd:
      return run_if(std::bool_constant<is_bool>{}, [](auto x, auto y) { return x && y; });
    case BinaryOp::LogicalOr:
      return run_if(std::bool_constant<is_bool>{}, [](auto x, auto y) { return x || y; });
    case BinaryOp::Complex:  // the parts are stored as given: no arithmetic touches them
      return run_if(FloatT{}, [](auto x, auto y) { return std::complex<decltype(x)>(x, y); });
    default:  // special functions: routed to special_binary_kernel before dispatch
      break;
  }
  unreachable_dtype(op, dtype);
}

}  // namespace

namespace {
bool compact_arith(CpuBackend& backend, BinaryOp op, const Tensor& a, const Tensor& b,
                   const Tensor& out);
}  // namespace

namespace {

// The ops whose element function costs about its loads and store on every
// dtype (map_light_elements: a compact one over more than the cache streams
// its output). Not division (integer division takes tens of cycles).
bool light_binary(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Sub:
    case BinaryOp::Mul:
    case BinaryOp::Maximum:
    case BinaryOp::Minimum:
    case BinaryOp::Copysign:
    case BinaryOp::Eq:
    case BinaryOp::Ne:
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge:
    case BinaryOp::LogicalAnd:
    case BinaryOp::LogicalOr:
      return true;
    default:
      return false;
  }
}

}  // namespace

void binary_kernel(CpuBackend& backend, BinaryOp op, const Tensor& a, const Tensor& b,
                   const Tensor& out) {
  if (is_special_op(op)) return special_binary_kernel(backend, op, a, b, out);
  if (compact_arith(backend, op, a, b, out)) return;
  const TensorSink sink{backend, a, b, out, light_binary(op)};
  tenferro::detail::dispatch_dtype(a.dtype(), [&](auto tag) {
    binary_typed<typename decltype(tag)::type>(op, a.dtype(), sink);
  });
}

namespace {

// Contiguous f32/f64 add, sub, mul and div, built per instruction set: the
// baseline SSE2 loop does two doubles per instruction, which is what limits a
// fused pass whose blocks sit in L1 (these ops were a third of the traced
// tanh chain). One IEEE operation per element, so every build returns the
// same bits. `o` may be `a` or `b` (in place); other overlaps are not allowed.
// Operand::One reads a single value for every element (x * 0.5, x + bias).
enum class Operand { Run, One };

// One IEEE operation: the element function of the loops below.
template <BinaryOp kOp, class T>
[[gnu::always_inline]] inline T arith1(T x, T y) {
  if constexpr (kOp == BinaryOp::Add) return x + y;
  if constexpr (kOp == BinaryOp::Sub) return x - y;
  if constexpr (kOp == BinaryOp::Mul) return x * y;
  if constexpr (kOp == BinaryOp::Div) return x / y;
}

template <BinaryOp kOp, Operand kA, Operand kB, class T>
[[gnu::always_inline]] inline void arith_op_loop(const T* a, const T* b, T* o, std::int64_t n) {
  const T a0 = *a, b0 = *b;  // n > 0
  for (std::int64_t i = 0; i < n; ++i)
    o[i] = arith1<kOp>(kA == Operand::One ? a0 : a[i], kB == Operand::One ? b0 : b[i]);
}

template <Operand kA, Operand kB, class T>
[[gnu::always_inline]] inline void arith_loop(BinaryOp op, const T* a, const T* b, T* o,
                                              std::int64_t n) {
  switch (op) {
    case BinaryOp::Add:
      return arith_op_loop<BinaryOp::Add, kA, kB>(a, b, o, n);
    case BinaryOp::Sub:
      return arith_op_loop<BinaryOp::Sub, kA, kB>(a, b, o, n);
    case BinaryOp::Mul:
      return arith_op_loop<BinaryOp::Mul, kA, kB>(a, b, o, n);
    default:
      return arith_op_loop<BinaryOp::Div, kA, kB>(a, b, o, n);
  }
}

template <class T>
[[gnu::always_inline]] inline void arith_any(BinaryOp op, const T* a, bool a_one, const T* b,
                                             bool b_one, T* o, std::int64_t n) {
  if (n <= 0) return;
  if (a_one) return arith_loop<Operand::One, Operand::Run>(op, a, b, o, n);
  if (b_one) return arith_loop<Operand::Run, Operand::One>(op, a, b, o, n);
  arith_loop<Operand::Run, Operand::Run>(op, a, b, o, n);
}

TENFERRO_TARGET_CLONES void arith_run(BinaryOp op, const double* a, bool a_one, const double* b,
                                      bool b_one, double* o, std::int64_t n) {
  arith_any(op, a, a_one, b, b_one, o, n);
}
TENFERRO_TARGET_CLONES void arith_run(BinaryOp op, const float* a, bool a_one, const float* b,
                                      bool b_one, float* o, std::int64_t n) {
  arith_any(op, a, a_one, b, b_one, o, n);
}

// Two arithmetic ops in one loop, for the fused executor: o = m op2 c with
// m = a op1 b, or o = c op2 m where the first op's value is op2's right
// operand (kMidRight). m is rounded to T like the first op's own output and
// this file is built with -ffp-contract=off, so each element takes the same
// two IEEE operations as two arith_run calls (never one FMA): same bits,
// without the store and reload of m. `o` may be `a`, `b` or `c`.

template <BinaryOp kOp1, BinaryOp kOp2, bool kMidRight, class T>
[[gnu::always_inline]] inline void arith2_loop(const T* a, const T* b, const T* c, T* o,
                                               std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    const T m = arith1<kOp1>(a[i], b[i]);
    o[i] = kMidRight ? arith1<kOp2>(c[i], m) : arith1<kOp2>(m, c[i]);
  }
}

// Add and Mul commute, so only Sub and Div take the intermediate on the right
// (order_matters). Explicit switches rather than visit_arith's lambdas: GCC
// builds a lambda as a function of its own, for the baseline instruction
// set, where these loops must be inlined into each target clone.
template <BinaryOp kOp1, class T>
[[gnu::always_inline]] inline void arith2_second(BinaryOp op2, bool mid_right, const T* a,
                                                 const T* b, const T* c, T* o, std::int64_t n) {
  switch (op2) {
    case BinaryOp::Add:
      return arith2_loop<kOp1, BinaryOp::Add, false>(a, b, c, o, n);
    case BinaryOp::Mul:
      return arith2_loop<kOp1, BinaryOp::Mul, false>(a, b, c, o, n);
    case BinaryOp::Sub:
      if (mid_right) return arith2_loop<kOp1, BinaryOp::Sub, true>(a, b, c, o, n);
      return arith2_loop<kOp1, BinaryOp::Sub, false>(a, b, c, o, n);
    default:
      if (mid_right) return arith2_loop<kOp1, BinaryOp::Div, true>(a, b, c, o, n);
      return arith2_loop<kOp1, BinaryOp::Div, false>(a, b, c, o, n);
  }
}

template <class T>
[[gnu::always_inline]] inline void arith2_any(BinaryOp op1, BinaryOp op2, bool mid_right,
                                              const T* a, const T* b, const T* c, T* o,
                                              std::int64_t n) {
  switch (op1) {
    case BinaryOp::Add:
      return arith2_second<BinaryOp::Add>(op2, mid_right, a, b, c, o, n);
    case BinaryOp::Sub:
      return arith2_second<BinaryOp::Sub>(op2, mid_right, a, b, c, o, n);
    case BinaryOp::Mul:
      return arith2_second<BinaryOp::Mul>(op2, mid_right, a, b, c, o, n);
    default:
      return arith2_second<BinaryOp::Div>(op2, mid_right, a, b, c, o, n);
  }
}

TENFERRO_TARGET_CLONES void arith2_run(BinaryOp op1, BinaryOp op2, bool mid_right, const double* a,
                                       const double* b, const double* c, double* o,
                                       std::int64_t n) {
  arith2_any(op1, op2, mid_right, a, b, c, o, n);
}
TENFERRO_TARGET_CLONES void arith2_run(BinaryOp op1, BinaryOp op2, bool mid_right, const float* a,
                                       const float* b, const float* c, float* o, std::int64_t n) {
  arith2_any(op1, op2, mid_right, a, b, c, o, n);
}

// An operand the flat loops (compact_arith, the flat select) read: laid out
// like the compact output (unit = true), or one value broadcast (every
// stride 0).
bool flat_operand(const Tensor& t, const Tensor& out, bool& unit) {
  if (t.strides() == out.strides()) {
    unit = true;
    return true;
  }
  for (const std::int64_t st : t.strides())
    if (st != 0) return false;
  unit = false;
  return true;
}

// Compact f32/f64 add, sub, mul and div on the instruction-set clones above,
// split across the pool: the eager form of the most common binary ops (the
// generic loop is built for the baseline instruction set). An op that moves
// stream_threshold_bytes(threads) or more (the last-level cache's size,
// three quarters of it on one thread), into an output that is not one of its
// inputs, streams its output from the registers (cpu/stream_arith.hpp: no
// read for ownership of each output line, no eviction of the inputs): add of
// 2^22 doubles, 1T on the Zen 4 VM, 3.4-4.5 -> 2.5-3.0 ms in plain loops; of
// 2^20 doubles at 1T 460-590 -> 300-330 us.
bool compact_arith(CpuBackend& backend, BinaryOp op, const Tensor& a, const Tensor& b,
                   const Tensor& out) {
  const DType dt = a.dtype();
  bool a_run = false, b_run = false;
  if (!is_arith(op) || (dt != DType::F64 && dt != DType::F32) || out.dtype() != dt ||
      !out.is_contiguous() || !flat_operand(a, out, a_run) || !flat_operand(b, out, b_run) ||
      (!a_run && !b_run))
    return false;
  const bool a_one = !a_run, b_one = !b_run;
  const auto run = [&](auto* typed_out) {
    using T = std::remove_pointer_t<decltype(typed_out)>;
    const T* pa = static_cast<const T*>(a.raw_data());
    const T* pb = static_cast<const T*>(b.raw_data());
    const std::size_t out_bytes = static_cast<std::size_t>(out.numel()) * sizeof(T);
    const std::size_t moved = out_bytes * (1 + (a_one ? 0 : 1) + (b_one ? 0 : 1));
    const bool in_place = out.raw_data() == a.raw_data() || out.raw_data() == b.raw_data();
    const bool streaming = !in_place && moved >= stream_threshold_bytes(backend.num_threads());
    backend.parallel_for(
        out.numel(), backend.parallel_threshold(), [&](std::int64_t lo, std::int64_t hi) {
          const T* x = a_one ? pa : pa + lo;
          const T* y = b_one ? pb : pb + lo;
          if (!streaming || !stream_arith(op, x, a_one, y, b_one, typed_out + lo, hi - lo))
            arith_run(op, x, a_one, y, b_one, typed_out + lo, hi - lo);
        });
  };
  if (dt == DType::F64) {
    run(static_cast<double*>(out.raw_data()));
  } else {
    run(static_cast<float*>(out.raw_data()));
  }
  return true;
}

}  // namespace

bool binary_contiguous(BinaryOp op, DType dtype, const void* a, const void* b, void* out,
                       std::int64_t n) {
  if (is_special_op(op)) return false;
  if (is_arith(op) && (dtype == DType::F64 || dtype == DType::F32)) {
    if (dtype == DType::F64) {
      arith_run(op, static_cast<const double*>(a), false, static_cast<const double*>(b), false,
                static_cast<double*>(out), n);
    } else {
      arith_run(op, static_cast<const float*>(a), false, static_cast<const float*>(b), false,
                static_cast<float*>(out), n);
    }
    return true;
  }
  const RawSink sink{a, b, out, n};
  tenferro::detail::dispatch_dtype(
      dtype, [&](auto tag) { binary_typed<typename decltype(tag)::type>(op, dtype, sink); });
  return true;
}

bool binary2_contiguous(BinaryOp op1, BinaryOp op2, bool mid_right, DType dtype, const void* a,
                        const void* b, const void* c, void* out, std::int64_t n) {
  if (!is_arith(op1) || !is_arith(op2)) return false;
  if (dtype == DType::F64) {
    arith2_run(op1, op2, mid_right, static_cast<const double*>(a), static_cast<const double*>(b),
               static_cast<const double*>(c), static_cast<double*>(out), n);
  } else if (dtype == DType::F32) {
    arith2_run(op1, op2, mid_right, static_cast<const float*>(a), static_cast<const float*>(b),
               static_cast<const float*>(c), static_cast<float*>(out), n);
  } else {
    return false;
  }
  return true;
}

namespace {

// ---- where on compact and single-value operands ---------------------------------

// o[i] = c[i * cs] ? a[i * as] : b[i * bs] with each stride 0 (one value
// broadcast, such as the constant branch of an activation) or 1: one loop
// per combination, so each vectorises.
template <class T>
[[gnu::always_inline]] inline void select_loop(const bool* __restrict c, bool c_unit,
                                               const T* __restrict a, bool a_unit,
                                               const T* __restrict b, bool b_unit, T* __restrict o,
                                               std::int64_t n) {
  const auto run = [&](auto cu, auto au, auto bu) {
    constexpr std::int64_t kC = decltype(cu)::value, kA = decltype(au)::value,
                           kB = decltype(bu)::value;
    if constexpr (std::is_floating_point_v<T>) {
      // Floats choose by bit masks: no branch (a data-dependent one
      // mispredicts on mixed conditions), and the loop vectorises.
      using U = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
      const auto* cb = reinterpret_cast<const std::uint8_t*>(c);
      for (std::int64_t i = 0; i < n; ++i) {
        const U m = U{0} - static_cast<U>(cb[i * kC] & 1u);
        const U x = std::bit_cast<U>(a[i * kA]), y = std::bit_cast<U>(b[i * kB]);
        o[i] = std::bit_cast<T>((x & m) | (y & ~m));
      }
    } else {
      for (std::int64_t i = 0; i < n; ++i) o[i] = c[i * kC] ? a[i * kA] : b[i * kB];
    }
  };
  using One = std::integral_constant<std::int64_t, 1>;
  using Zero = std::integral_constant<std::int64_t, 0>;
  const auto with_b = [&](auto cu, auto au) { b_unit ? run(cu, au, One{}) : run(cu, au, Zero{}); };
  const auto with_a = [&](auto cu) { a_unit ? with_b(cu, One{}) : with_b(cu, Zero{}); };
  c_unit ? with_a(One{}) : with_a(Zero{});
}

TENFERRO_TARGET_CLONES void select_run(const bool* c, bool cu, const double* a, bool au,
                                       const double* b, bool bu, double* o, std::int64_t n) {
  select_loop(c, cu, a, au, b, bu, o, n);
}
TENFERRO_TARGET_CLONES void select_run(const bool* c, bool cu, const float* a, bool au,
                                       const float* b, bool bu, float* o, std::int64_t n) {
  select_loop(c, cu, a, au, b, bu, o, n);
}
template <class T>
void select_run(const bool* c, bool cu, const T* a, bool au, const T* b, bool bu, T* o,
                std::int64_t n) {
  select_loop(c, cu, a, au, b, bu, o, n);
}

}  // namespace

void where_kernel(CpuBackend& backend, const Tensor& cond, const Tensor& a, const Tensor& b,
                  const Tensor& out) {
  bool cu = false, au = false, bu = false;
  const bool flat = out.is_contiguous() && flat_operand(cond, out, cu) &&
                    flat_operand(a, out, au) && flat_operand(b, out, bu);
  tenferro::detail::dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (flat) {
      const bool* c = static_cast<const bool*>(cond.raw_data());
      const T* pa = static_cast<const T*>(a.raw_data());
      const T* pb = static_cast<const T*>(b.raw_data());
      T* o = static_cast<T*>(out.raw_data());
      // A fresh output beyond the cache is streamed (cpu/stream_store.hpp).
      const auto n = static_cast<std::size_t>(out.numel());
      const bool streaming = o != pa && o != pb && static_cast<const void*>(o) != c &&
                             streams_output(n * (sizeof(T) + (cu ? 1 : 0) + (au ? sizeof(T) : 0) +
                                                 (bu ? sizeof(T) : 0)));
      backend.parallel_for(out.numel(), backend.parallel_threshold(),
                           [&](std::int64_t lo, std::int64_t hi) {
                             if (!streaming) {
                               return select_run(c + (cu ? lo : 0), cu, pa + (au ? lo : 0), au,
                                                 pb + (bu ? lo : 0), bu, o + lo, hi - lo);
                             }
                             // (a single-value operand has no stream: the output stands in)
                             streamed_blocks(
                                 o + lo, hi - lo,
                                 [&](T* dst, std::int64_t s, std::int64_t m) {
                                   const std::int64_t at = lo + s;
                                   select_run(c + (cu ? at : 0), cu, pa + (au ? at : 0), au,
                                              pb + (bu ? at : 0), bu, dst, m);
                                 },
                                 au ? pa + lo : o + lo, bu ? pb + lo : o + lo);
                           });
      return;
    }
    map_elements<T, bool, T, T>(
        backend, out, [](bool c, T x, T y) { return c ? x : y; }, cond, a, b);
  });
}

}  // namespace tenferro::cpu
