// The vectorised exp / tanh / sigmoid of vector_math.hpp against std:: in ulp
// over dense sweeps, special values, and through the tensor ops.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "../../src/backend/cpu/vector_math.hpp"
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
