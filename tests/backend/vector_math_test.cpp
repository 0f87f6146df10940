// The vectorised exp / tanh / sigmoid of vector_math.hpp against std:: in ulp
// over dense sweeps, special values, and through the tensor ops.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "../../src/cpu/sleef_kernels.hpp"
#include "../../src/cpu/vector_math.hpp"
#include "test_util.hpp"

using namespace tenferro;
namespace vm = tenferro::cpu::vmath;

namespace {

/// Distance in representable values between a and b (0 when both are NaN, a
/// large number when only one is); +0 and -0 are one apart.
template <class T>
std::int64_t ulp_distance(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : 1 << 30;
  using Bits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
  auto ordered = [](T v) {
    const Bits b = std::bit_cast<Bits>(v);
    const Bits sign = Bits{1} << (sizeof(T) * 8 - 1);
    const auto mag = static_cast<std::int64_t>(b & ~sign);
    return (b & sign) ? -mag - 1 : mag;
  };
  const std::int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

template <class T>
std::vector<T> linspace(T lo, T hi, int n) {
  std::vector<T> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[i] = lo + (hi - lo) * static_cast<T>(i) / static_cast<T>(n - 1);
  return v;
}

/// Max ulp distance of vf(x) from ref(x) over x; reports where it occurs.
template <class T, class Ref>
std::int64_t max_ulp(void (*vf)(const T*, T*, std::int64_t), const std::vector<T>& x,
                     const Ref& ref, std::string* where) {
  std::vector<T> y(x.size());
  vf(x.data(), y.data(), static_cast<std::int64_t>(x.size()));
  std::int64_t worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const T want = static_cast<T>(ref(x[i]));
    const std::int64_t d = ulp_distance(y[i], want);
    if (d > worst) {
      worst = d;
      *where = "x = " + std::to_string(x[i]) + " got " + std::to_string(y[i]) + " want " +
               std::to_string(want);
    }
  }
  return worst;
}

#define EXPECT_MAX_ULP(vf, T, x, ref, bound)                              \
  do {                                                                    \
    std::string where;                                                    \
    EXPECT_LE(max_ulp<T>(vf, x, ref, &where), bound) << #vf " " << where; \
  } while (0)

double exp_ref(double v) {
  return std::exp(v);
}
double tanh_ref(double v) {
  return std::tanh(v);
}
// 1 / (1 + e^-x) in extended precision: the plain double formula is itself a
// few ulp off and underflows to 0 early for x < -709.
double sigmoid_ref(double v) {
  return static_cast<double>(1.0L / (1.0L + std::exp(-static_cast<long double>(v))));
}
float expf_ref(float v) {
  return std::exp(v);
}
float tanhf_ref(float v) {
  return std::tanh(v);
}
float sigmoidf_ref(float v) {
  return static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(v))));
}

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <class T>
T apply(void (*vf)(const T*, T*, std::int64_t), T v) {
  T y;
  vf(&v, &y, 1);
  return y;
}

}  // namespace

TEST(VectorMath, ExpF64WithinTwoUlpOfStd) {
  EXPECT_MAX_ULP(vm::vexp, double, linspace(-745.2, 709.8, 400001), exp_ref, 2);
  EXPECT_MAX_ULP(vm::vexp, double, linspace(-1.0, 1.0, 100001), exp_ref, 2);
  EXPECT_MAX_ULP(vm::vexp, double, linspace(-1e-8, 1e-8, 10001), exp_ref, 2);
  // Subnormal results (x < -708.4) and the edge of overflow (709.78).
  EXPECT_MAX_ULP(vm::vexp, double, linspace(-745.14, -708.3, 100001), exp_ref, 2);
  EXPECT_MAX_ULP(vm::vexp, double, linspace(709.0, 709.78, 20001), exp_ref, 2);
}

TEST(VectorMath, TanhF64WithinFourUlpOfStd) {
  EXPECT_MAX_ULP(vm::vtanh, double, linspace(-25.0, 25.0, 300001), tanh_ref, 4);
  // Both sides of the switch between the two formulas at |x| = 0.625.
  EXPECT_MAX_ULP(vm::vtanh, double, linspace(-1.0, 1.0, 200001), tanh_ref, 4);
  EXPECT_MAX_ULP(vm::vtanh, double, linspace(0.62, 0.63, 20001), tanh_ref, 4);
  EXPECT_MAX_ULP(vm::vtanh, double, linspace(-1e-6, 1e-6, 10001), tanh_ref, 4);
  EXPECT_MAX_ULP(vm::vtanh, double, linspace(18.0, 1e6, 10001), tanh_ref, 4);
}

TEST(VectorMath, SigmoidF64WithinFourUlp) {
  EXPECT_MAX_ULP(vm::vsigmoid, double, linspace(-750.0, 750.0, 200001), sigmoid_ref, 4);
  EXPECT_MAX_ULP(vm::vsigmoid, double, linspace(-6.0, 6.0, 100001), sigmoid_ref, 4);
  EXPECT_MAX_ULP(vm::vsigmoid, double, linspace(-745.0, -700.0, 10001), sigmoid_ref, 4);
}

TEST(VectorMath, F32WithinBounds) {
  EXPECT_MAX_ULP(vm::vexp, float, linspace(-103.9f, 88.7f, 200001), expf_ref, 2);
  EXPECT_MAX_ULP(vm::vexp, float, linspace(-1.0f, 1.0f, 50001), expf_ref, 2);
  EXPECT_MAX_ULP(vm::vtanh, float, linspace(-12.0f, 12.0f, 100001), tanhf_ref, 4);
  EXPECT_MAX_ULP(vm::vtanh, float, linspace(-1.0f, 1.0f, 100001), tanhf_ref, 4);
  EXPECT_MAX_ULP(vm::vsigmoid, float, linspace(-110.0f, 110.0f, 100001), sigmoidf_ref, 4);
}

TEST(VectorMath, SpecialValues) {
  const double min_sub = std::numeric_limits<double>::denorm_min();
  // exp
  EXPECT_TRUE(std::isnan(apply(vm::vexp, kNaN)));
  EXPECT_TRUE(std::isnan(apply(vm::vexp, -kNaN)));
  EXPECT_EQ(apply(vm::vexp, -kInf), 0.0);
  EXPECT_EQ(apply(vm::vexp, kInf), kInf);
  EXPECT_EQ(apply(vm::vexp, 0.0), 1.0);
  EXPECT_EQ(apply(vm::vexp, -0.0), 1.0);
  EXPECT_LE(ulp_distance(apply(vm::vexp, 1.0), std::exp(1.0)), 1);
  EXPECT_EQ(apply(vm::vexp, 709.79), kInf);
  EXPECT_EQ(apply(vm::vexp, 1e300), kInf);
  EXPECT_EQ(apply(vm::vexp, -1e300), 0.0);
  EXPECT_EQ(apply(vm::vexp, -746.0), 0.0);
  EXPECT_EQ(apply(vm::vexp, -745.0), std::exp(-745.0));  // a few subnormal ulps
  EXPECT_EQ(apply(vm::vexp, -745.0), min_sub);
  EXPECT_EQ(apply(vm::vexp, 709.78), std::exp(709.78));
  EXPECT_EQ(apply(vm::vexp, min_sub), 1.0);
  // tanh: odd, exact at 0 with the sign kept, saturating, tiny inputs exact.
  EXPECT_TRUE(std::isnan(apply(vm::vtanh, kNaN)));
  EXPECT_EQ(apply(vm::vtanh, kInf), 1.0);
  EXPECT_EQ(apply(vm::vtanh, -kInf), -1.0);
  EXPECT_EQ(apply(vm::vtanh, 1e300), 1.0);
  EXPECT_EQ(apply(vm::vtanh, -20.5), -1.0);
  EXPECT_FALSE(std::signbit(apply(vm::vtanh, 0.0)));
  EXPECT_EQ(apply(vm::vtanh, 0.0), 0.0);
  EXPECT_TRUE(std::signbit(apply(vm::vtanh, -0.0)));
  EXPECT_EQ(apply(vm::vtanh, min_sub), min_sub);
  EXPECT_EQ(apply(vm::vtanh, -1e-200), -1e-200);
  // sigmoid: saturation, the middle, and tiny results keep their precision.
  EXPECT_TRUE(std::isnan(apply(vm::vsigmoid, kNaN)));
  EXPECT_EQ(apply(vm::vsigmoid, kInf), 1.0);
  EXPECT_EQ(apply(vm::vsigmoid, -kInf), 0.0);
  EXPECT_EQ(apply(vm::vsigmoid, 1e300), 1.0);
  EXPECT_EQ(apply(vm::vsigmoid, -1e300), 0.0);
  EXPECT_EQ(apply(vm::vsigmoid, 0.0), 0.5);
  EXPECT_EQ(apply(vm::vsigmoid, -0.0), 0.5);
  EXPECT_LE(ulp_distance(apply(vm::vsigmoid, -720.0), std::exp(-720.0)), 2);
  // f32
  const float finf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(std::isnan(apply(vm::vexp, std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(apply(vm::vexp, finf), finf);
  EXPECT_EQ(apply(vm::vexp, -finf), 0.0f);
  EXPECT_EQ(apply(vm::vexp, 89.0f), finf);
  EXPECT_EQ(apply(vm::vexp, -104.0f), 0.0f);
  EXPECT_EQ(apply(vm::vexp, 0.0f), 1.0f);
  EXPECT_LE(ulp_distance(apply(vm::vexp, -100.0f), std::exp(-100.0f)), 1);  // subnormal
  EXPECT_EQ(apply(vm::vtanh, -finf), -1.0f);
  EXPECT_TRUE(std::signbit(apply(vm::vtanh, -0.0f)));
  EXPECT_TRUE(std::isnan(apply(vm::vtanh, std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(apply(vm::vsigmoid, -finf), 0.0f);
  EXPECT_EQ(apply(vm::vsigmoid, finf), 1.0f);
  EXPECT_TRUE(std::isnan(apply(vm::vsigmoid, std::numeric_limits<float>::quiet_NaN())));
}

TEST(VectorMath, ArrayFormsMatchElementFunctionsAtEveryLengthAndInPlace) {
  // Lengths around the vector widths exercise the vector body and the tail.
  for (std::int64_t n : {0, 1, 2, 3, 5, 8, 17, 33}) {
    std::vector<double> x(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) x[i] = -3.0 + 0.37 * static_cast<double>(i);
    std::vector<double> y(x.size()), z = x;
    vm::vtanh(x.data(), y.data(), n);
    vm::vtanh(z.data(), z.data(), n);  // in place
    for (std::int64_t i = 0; i < n; ++i) {
      EXPECT_EQ(y[i], vm::detail::tanh1(x[i])) << n << " " << i;
      EXPECT_EQ(z[i], y[i]) << n << " " << i;
    }
  }
}

TEST(VectorMath, EveryInstructionSetBuildReturnsTheBaselineBits) {
  // Sweeps over each function's interesting range plus special values; the
  // lengths leave a vector tail.
  std::vector<double> x = linspace(-750.0, 750.0, 100003);
  for (double v : linspace(-25.0, 25.0, 100001)) x.push_back(v);
  for (double v : linspace(-1e-6, 1e-6, 1001)) x.push_back(v);
  for (double v : {0.0, -0.0, kInf, -kInf, kNaN, 0.625, -0.625, 20.0, 1e-310, 709.78, -745.1})
    x.push_back(v);
  std::vector<float> xf(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) xf[i] = static_cast<float>(x[i] / 7.0);
  const auto n = static_cast<std::int64_t>(x.size());
  const vm::ArrayKernels* base = vm::array_kernels(vm::VmathIsa::Baseline);
  ASSERT_NE(base, nullptr);
  // The same bits, or both NaN (a NaN's sign and payload are not specified).
  auto same_bits = [&](const auto& a, const auto& b) -> std::string {
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (std::isnan(a[i]) && std::isnan(b[i])) continue;
      if (std::memcmp(&a[i], &b[i], sizeof(a[i])) != 0)
        return "at x = " + std::to_string(x[i]) + ": " + std::to_string(a[i]) + " vs " +
               std::to_string(b[i]);
    }
    return "";
  };
  int builds = 0;
  for (vm::VmathIsa isa : {vm::VmathIsa::Avx2Fma, vm::VmathIsa::Avx512}) {
    const vm::ArrayKernels* k = vm::array_kernels(isa);
    if (k == nullptr) continue;
    ++builds;
    using F64 = void (*)(const double*, double*, std::int64_t);
    using F32 = void (*)(const float*, float*, std::int64_t);
    const std::pair<F64, F64> f64s[] = {
        {k->exp64, base->exp64}, {k->tanh64, base->tanh64}, {k->sigmoid64, base->sigmoid64}};
    const std::pair<F32, F32> f32s[] = {
        {k->exp32, base->exp32}, {k->tanh32, base->tanh32}, {k->sigmoid32, base->sigmoid32}};
    for (const auto& [f, ref] : f64s) {
      std::vector<double> got(x.size()), want(x.size());
      f(x.data(), got.data(), n);
      ref(x.data(), want.data(), n);
      EXPECT_EQ(same_bits(got, want), "") << "isa " << static_cast<int>(isa);
    }
    for (const auto& [f, ref] : f32s) {
      std::vector<float> got(xf.size()), want(xf.size());
      f(xf.data(), got.data(), n);
      ref(xf.data(), want.data(), n);
      EXPECT_EQ(same_bits(got, want), "") << "isa " << static_cast<int>(isa);
    }
  }
  // The active build is one of them.
  const vm::ArrayKernels& active = vm::active_array_kernels();
  EXPECT_TRUE(&active == base || &active == vm::array_kernels(vm::VmathIsa::Avx2Fma) ||
              &active == vm::array_kernels(vm::VmathIsa::Avx512));
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    EXPECT_GE(builds, 1);
  }
#endif
}

TEST(VectorMath, TensorOpsUseThemWithinTolerance) {
  CpuBackend cpu({.num_threads = 2});
  constexpr std::int64_t n = std::int64_t{1} << 16;
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[i] = -30.0 + 60.0 * static_cast<double>(i) / (n - 1);
  const Tensor x = Tensor::from_col_major({n}, v);
  const Tensor xf = zeros({n}, f32);
  Tensor::copy_into(x, xf);
  const auto vf = xf.to_vector<float>();

  struct Op {
    Tensor (*fn)(const Tensor&, Backend&);
    double (*ref)(double);
    float (*reff)(float);
    std::int64_t bound;
  };
  const Op ops[] = {{tenferro::exp, exp_ref, expf_ref, 2},
                    {tenferro::tanh, tanh_ref, tanhf_ref, 4},
                    {tenferro::sigmoid, sigmoid_ref, sigmoidf_ref, 4}};
  for (const Op& op : ops) {
    const Tensor y = op.fn(x, cpu);
    ASSERT_EQ(y.dtype(), f64);
    const auto got = y.to_vector<double>();
    std::int64_t worst = 0, worst_f = 0;
    for (std::int64_t i = 0; i < n; ++i)
      worst = std::max(worst, ulp_distance(got[i], op.ref(v[i])));
    EXPECT_LE(worst, op.bound);
    const Tensor yf = op.fn(xf, cpu);
    ASSERT_EQ(yf.dtype(), f32);
    const auto gotf = yf.to_vector<float>();
    for (std::int64_t i = 0; i < n; ++i)
      worst_f = std::max(worst_f, ulp_distance(gotf[i], op.reff(vf[i])));
    EXPECT_LE(worst_f, op.bound);
    // Strided (negative stride, through the stack buffer), broadcast (stride
    // 0) and 2-d inputs give exactly the flat results.
    EXPECT_EQ(max_abs_diff(op.fn(tftest::strided_copy(x), cpu), y), 0.0);
    const Tensor col = x.slice(0, 0, 300);
    const Tensor wide = col.reshape({300, 1}).broadcast_to({300, 5});
    const auto flat_col = op.fn(col, cpu).to_vector<double>();
    const Tensor yb = op.fn(wide, cpu);
    for (std::int64_t j = 0; j < 5; ++j)
      for (std::int64_t i = 0; i < 300; ++i)
        ASSERT_EQ(tftest::element<double>(yb, {i, j}), flat_col[i]) << i << " " << j;
    // Rank 0 and zero-size.
    EXPECT_LE(ulp_distance(op.fn(Tensor::scalar(0.5), cpu).item().real(), op.ref(0.5)), op.bound);
    EXPECT_EQ(op.fn(zeros({0, 3}), cpu).numel(), 0);
  }
  // Complex keeps std::exp.
  const Tensor z = Tensor::from_col_major({1}, std::vector<c128_t>{{0.5, 0.25}});
  EXPECT_LT(std::abs(exp(z, cpu).to_vector<c128_t>()[0] - std::exp(c128_t(0.5, 0.25))), 1e-15);
}

// ---- SLEEF tables (sleef_kernels.hpp) -----------------------------------------

namespace {

struct SleefCase {
  vm::SleefFn fn;
  const char* name;
  long double (*ref)(long double);
  std::int64_t bound;  // ulp distance to the rounded long double value
  double lo, hi;       // f64 sweep (linear, and log-spaced over positive parts)
  float flo, fhi;      // f32 sweep
};

// Documented bounds: u10 = 1.0 ulp from the exact value, so at most 1 apart
// from the correctly rounded one; erfc (u15) at most 2.
#define TENFERRO_REF(name) +[](long double v) { return std::name(v); }
const SleefCase kSleefCases[] = {
    {vm::SleefFn::log, "log", TENFERRO_REF(log), 1, 1e-300, 1e300, 1e-37f, 3e38f},
    {vm::SleefFn::log2, "log2", TENFERRO_REF(log2), 1, 1e-300, 1e300, 1e-37f, 3e38f},
    {vm::SleefFn::log10, "log10", TENFERRO_REF(log10), 1, 1e-300, 1e300, 1e-37f, 3e38f},
    {vm::SleefFn::log1p, "log1p", TENFERRO_REF(log1p), 1, -0.999999, 1e300, -0.9999f, 3e38f},
    {vm::SleefFn::expm1, "expm1", TENFERRO_REF(expm1), 1, -50.0, 709.0, -20.0f, 88.0f},
    {vm::SleefFn::exp2, "exp2", TENFERRO_REF(exp2), 1, -1070.0, 1023.0, -149.0f, 127.0f},
    {vm::SleefFn::sin, "sin", TENFERRO_REF(sin), 1, -1e4, 1e4, -1e4f, 1e4f},
    {vm::SleefFn::cos, "cos", TENFERRO_REF(cos), 1, -1e4, 1e4, -1e4f, 1e4f},
    {vm::SleefFn::tan, "tan", TENFERRO_REF(tan), 1, -1e4, 1e4, -1e4f, 1e4f},
    {vm::SleefFn::asin, "asin", TENFERRO_REF(asin), 1, -1.0, 1.0, -1.0f, 1.0f},
    {vm::SleefFn::acos, "acos", TENFERRO_REF(acos), 1, -1.0, 1.0, -1.0f, 1.0f},
    {vm::SleefFn::atan, "atan", TENFERRO_REF(atan), 1, -1e10, 1e10, -1e10f, 1e10f},
    {vm::SleefFn::atanh, "atanh", TENFERRO_REF(atanh), 1, -0.999999, 0.999999, -0.9999f, 0.9999f},
    {vm::SleefFn::erf, "erf", TENFERRO_REF(erf), 1, -6.0, 6.0, -4.0f, 4.0f},
    {vm::SleefFn::erfc, "erfc", TENFERRO_REF(erfc), 2, -6.0, 27.0, -4.0f, 10.0f},
};
#undef TENFERRO_REF

/// Points of [lo, hi]: a linear sweep, and log-spaced magnitudes on each side
/// of 0 that lie inside (tiny to huge arguments).
template <class T>
std::vector<T> sweep(T lo, T hi, int n) {
  std::vector<T> x = linspace(lo, hi, n);
  for (int i = 0; i < n; ++i) {
    const T mag = std::pow(T(10), T(-300) * (sizeof(T) == 4 ? T(0.12) : T(1)) +
                                      T(600) * (sizeof(T) == 4 ? T(0.12) : T(1)) * T(i) / T(n));
    for (const T v : {mag, -mag})
      if (v >= lo && v <= hi && std::isfinite(v)) x.push_back(v);
  }
  return x;
}

/// The tables this CPU runs (AVX2, AVX-512), each checked on its own.
std::vector<const vm::SleefTable*> runnable_tables() {
  std::vector<const vm::SleefTable*> out;
  if (vm::sleef_isa_supported(vm::SleefIsa::Avx2)) out.push_back(vm::sleef_table_avx2());
  if (vm::sleef_isa_supported(vm::SleefIsa::Avx512)) out.push_back(vm::sleef_table_avx512());
  return out;
}

template <class T>
std::int64_t sleef_max_ulp(vm::ArrayFn<T> f, const SleefCase& c, const std::vector<T>& x,
                           std::string* where) {
  std::vector<T> y(x.size());
  f(x.data(), y.data(), static_cast<std::int64_t>(x.size()));
  std::int64_t worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const T want = static_cast<T>(c.ref(static_cast<long double>(x[i])));
    const std::int64_t d = ulp_distance(y[i], want);
    if (d > worst) {
      worst = d;
      *where = std::string(c.name) + "(" + std::to_string(x[i]) + ") = " + std::to_string(y[i]) +
               ", want " + std::to_string(want);
    }
  }
  return worst;
}

}  // namespace

TEST(SleefMath, TablesCoverEveryFunctionAndTheActiveOneIsRunnable) {
  const auto tables = runnable_tables();
  for (const vm::SleefTable* t : tables) {
    for (int i = 0; i < vm::kSleefFnCount; ++i) {
      EXPECT_NE(t->f64[i], nullptr) << t->isa << " " << i;
      EXPECT_NE(t->f32[i], nullptr) << t->isa << " " << i;
    }
  }
  const vm::SleefTable* active = vm::active_sleef_table();
  if (tables.empty()) {
    EXPECT_EQ(active, nullptr);
  } else {
    EXPECT_EQ(active, tables.back());  // the widest the CPU runs
  }
}

TEST(SleefMath, WithinDocumentedUlpOfLongDoubleOnTheirDomains) {
  for (const vm::SleefTable* t : runnable_tables()) {
    for (const SleefCase& c : kSleefCases) {
      const auto i = static_cast<std::size_t>(c.fn);
      std::string where;
      EXPECT_LE(sleef_max_ulp<double>(t->f64[i], c, sweep(c.lo, c.hi, 40001), &where), c.bound)
          << t->isa << " f64 " << where;
      where.clear();
      EXPECT_LE(sleef_max_ulp<float>(t->f32[i], c, sweep(c.flo, c.fhi, 40001), &where), c.bound)
          << t->isa << " f32 " << where;
    }
  }
}

TEST(SleefMath, SpecialValuesAsStd) {
  const double specials[] = {0.0,  -0.0,  kInf,   -kInf,  kNaN,    1.0,   -1.0,   2.0,
                             -2.0, 1e300, -1e300, 1e-310, -1e-310, 710.0, -750.0, 1e22};
  for (const vm::SleefTable* t : runnable_tables()) {
    for (const SleefCase& c : kSleefCases) {
      const auto i = static_cast<std::size_t>(c.fn);
      for (const double v : specials) {
        double y = 0;
        t->f64[i](&v, &y, 1);
        const double want = static_cast<double>(c.ref(static_cast<long double>(v)));
        if (std::isnan(want) || std::isinf(want) || want == 0.0) {
          // NaN stays NaN; infinities and zeros exactly, sign included.
          EXPECT_EQ(std::isnan(y), std::isnan(want)) << t->isa << " " << c.name << "(" << v << ")";
          if (!std::isnan(want)) {
            EXPECT_EQ(y, want) << t->isa << " " << c.name << "(" << v << ")";
            EXPECT_EQ(std::signbit(y), std::signbit(want))
                << t->isa << " " << c.name << "(" << v << ")";
          }
        } else {
          EXPECT_LE(ulp_distance(y, want), c.bound) << t->isa << " " << c.name << "(" << v << ")";
        }
      }
    }
  }
}

TEST(SleefMath, EveryLengthAndInPlaceMatchOneByOne) {
  for (const vm::SleefTable* t : runnable_tables()) {
    const auto f = t->f64[static_cast<std::size_t>(vm::SleefFn::log1p)];
    for (std::int64_t n : {0, 1, 3, 4, 7, 8, 9, 15, 16, 17, 33}) {
      std::vector<double> x(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) x[i] = 0.1 + 0.37 * static_cast<double>(i);
      std::vector<double> y(x.size(), -1.0), z = x;
      f(x.data(), y.data(), n);
      f(z.data(), z.data(), n);
      for (std::int64_t i = 0; i < n; ++i) {
        double one = 0;
        f(&x[i], &one, 1);
        EXPECT_EQ(y[i], one) << t->isa << " n=" << n << " i=" << i;
        EXPECT_EQ(z[i], y[i]) << t->isa << " n=" << n << " i=" << i;
      }
    }
  }
}

TEST(SleefMath, TensorOpsRouteToTheActiveTable) {
  const vm::SleefTable* active = vm::active_sleef_table();
  if (active == nullptr) GTEST_SKIP() << "no AVX2 on this CPU: std:: is used";
  CpuBackend cpu({.num_threads = 2});
  constexpr std::int64_t n = 4099;
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[i] = 0.05 + 0.0002 * static_cast<double>(i);
  const Tensor x = Tensor::from_col_major({n}, v);
  struct Op {
    Tensor (*fn)(const Tensor&, Backend&);
    vm::SleefFn sf;
  };
  const Op ops[] = {{tenferro::log, vm::SleefFn::log},     {tenferro::log1p, vm::SleefFn::log1p},
                    {tenferro::sin, vm::SleefFn::sin},     {tenferro::atan, vm::SleefFn::atan},
                    {tenferro::erfc, vm::SleefFn::erfc},   {tenferro::expm1, vm::SleefFn::expm1},
                    {tenferro::atanh, vm::SleefFn::atanh}, {tenferro::log10, vm::SleefFn::log10}};
  for (const Op& op : ops) {
    std::vector<double> want(v.size());
    active->f64[static_cast<std::size_t>(op.sf)](v.data(), want.data(), n);
    EXPECT_EQ(op.fn(x, cpu).to_vector<double>(), want);
    // A strided input gives the same values.
    EXPECT_EQ(max_abs_diff(op.fn(tftest::strided_copy(x), cpu), op.fn(x, cpu)), 0.0);
  }
}
