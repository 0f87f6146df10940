// Unary elementwise ops and clamp against naive std:: reference loops.

#include <cmath>
#include <complex>
#include <functional>
#include <limits>
#include <numbers>

#include "tenferro/ad/composite.hpp"
#include "test_util.hpp"

using namespace tenferro;

namespace {

// The direct form of an op (its name also names the template of the other
// tiers): the function of the given type.
using DirectUnaryFn = Tensor (*)(const Tensor&, Backend&);
constexpr DirectUnaryFn direct_unary(DirectUnaryFn f) {
  return f;
}

using RealRef = std::function<double(double)>;
using ComplexRef = std::function<c128_t(c128_t)>;

/// The elements of any tensor in column-major order, converted to c128.
std::vector<c128_t> values(const Tensor& t) {
  Tensor c = zeros(t.shape(), c128);
  Tensor::copy_into(t, c);
  return c.to_vector<c128_t>();
}

bool close(c128_t got, c128_t want, double tol) {
  if (std::isnan(want.real()) || std::isnan(want.imag())) {
    return std::isnan(got.real()) || std::isnan(got.imag());
  }
  if (std::isinf(want.real()) || std::isinf(want.imag())) return got == want;
  return std::abs(got - want) <= tol * (1.0 + std::abs(want));
}

/// Checks every element of `got` against ref(input element) with tolerance tol.
template <class Ref>
void expect_elementwise(const Tensor& got, const Tensor& in, const Ref& ref, double tol,
                        const std::string& what) {
  ASSERT_EQ(got.shape(), in.shape()) << what;
  const auto g = values(got), x = values(in);
  for (std::size_t i = 0; i < g.size(); ++i) {
    c128_t want;
    if constexpr (std::is_invocable_r_v<double, Ref, double>) {
      want = ref(x[i].real());
    } else {
      want = ref(x[i]);
    }
    EXPECT_TRUE(close(g[i], want, tol))
        << what << " at " << i << ": input " << x[i] << " got " << g[i] << " want " << want;
  }
}

/// Values in [lo, hi] on a [3, 4] grid.
Tensor grid(double lo, double hi, DType dtype = f64) {
  std::vector<double> v(12);
  for (int i = 0; i < 12; ++i) v[i] = lo + (hi - lo) * i / 11.0;
  Tensor t = Tensor::from_col_major({3, 4}, v);
  Tensor out = zeros({3, 4}, dtype);
  Tensor::copy_into(t, out);
  return out;
}

Tensor complex_grid() {
  std::vector<c128_t> v;
  for (int i = 0; i < 12; ++i) v.emplace_back(-0.8 + 0.13 * i, 0.6 - 0.11 * i);
  return Tensor::from_col_major({3, 4}, v);
}

struct UnaryCase {
  UnaryOp op;
  std::function<Tensor(const Tensor&, Backend&)> fn;
  RealRef real_ref;
  ComplexRef complex_ref;  // empty when complex is rejected
  double lo, hi;           // real domain for the test grid
};

/// A bool tensor from 0/1 values.
Tensor bool_tensor(const std::vector<std::int32_t>& v) {
  Tensor t = Tensor::from_col_major({static_cast<std::int64_t>(v.size())}, v);
  Tensor b = zeros(t.shape(), bool_);
  Tensor::copy_into(t, b);
  return b;
}

/// Any tensor's elements as ints (bool tensors have no std::vector<bool> view).
std::vector<int> flags(const Tensor& t) {
  std::vector<int> out;
  for (const auto v : values(t)) out.push_back(static_cast<int>(v.real()));
  return out;
}

double sign_ref(double v) {
  return v > 0 ? 1.0 : v < 0 ? -1.0 : v;
}

std::vector<UnaryCase> cases() {
  using C = c128_t;
  return {
      {UnaryOp::Abs, direct_unary(tenferro::abs), [](double v) { return std::abs(v); },
       [](C z) { return C(std::abs(z)); }, -2, 2},
      {UnaryOp::Neg, direct_unary(tenferro::neg), [](double v) { return -v; },
       [](C z) { return -z; }, -2, 2},
      {UnaryOp::Conj, direct_unary(tenferro::conj), [](double v) { return v; },
       [](C z) { return std::conj(z); }, -2, 2},
      {UnaryOp::Exp, direct_unary(tenferro::exp), [](double v) { return std::exp(v); },
       [](C z) { return std::exp(z); }, -2, 2},
      {UnaryOp::Exp2, direct_unary(tenferro::exp2), [](double v) { return std::exp2(v); },
       [](C z) { return std::exp(z * std::numbers::ln2); }, -2, 2},
      {UnaryOp::Expm1, direct_unary(tenferro::expm1), [](double v) { return std::expm1(v); },
       [](C z) { return std::exp(z) - 1.0; }, -2, 2},
      {UnaryOp::Log, direct_unary(tenferro::log), [](double v) { return std::log(v); },
       [](C z) { return std::log(z); }, 0.1, 3},
      {UnaryOp::Log2, direct_unary(tenferro::log2), [](double v) { return std::log2(v); },
       [](C z) { return std::log(z) / std::numbers::ln2; }, 0.1, 3},
      {UnaryOp::Log10, direct_unary(tenferro::log10), [](double v) { return std::log10(v); },
       [](C z) { return std::log10(z); }, 0.1, 3},
      {UnaryOp::Log1p, direct_unary(tenferro::log1p), [](double v) { return std::log1p(v); },
       [](C z) { return std::log(1.0 + z); }, -0.5, 3},
      {UnaryOp::Sqrt, direct_unary(tenferro::sqrt), [](double v) { return std::sqrt(v); },
       [](C z) { return std::sqrt(z); }, 0, 4},
      {UnaryOp::Rsqrt, direct_unary(tenferro::rsqrt), [](double v) { return 1 / std::sqrt(v); },
       [](C z) { return 1.0 / std::sqrt(z); }, 0.1, 4},
      {UnaryOp::Square, direct_unary(tenferro::square), [](double v) { return v * v; },
       [](C z) { return z * z; }, -2, 2},
      {UnaryOp::Reciprocal, direct_unary(tenferro::reciprocal), [](double v) { return 1 / v; },
       [](C z) { return 1.0 / z; }, 0.1, 3},
      {UnaryOp::Sin, direct_unary(tenferro::sin), [](double v) { return std::sin(v); },
       [](C z) { return std::sin(z); }, -3, 3},
      {UnaryOp::Cos, direct_unary(tenferro::cos), [](double v) { return std::cos(v); },
       [](C z) { return std::cos(z); }, -3, 3},
      {UnaryOp::Tan, direct_unary(tenferro::tan), [](double v) { return std::tan(v); },
       [](C z) { return std::tan(z); }, -1.2, 1.2},
      {UnaryOp::Asin, direct_unary(tenferro::asin), [](double v) { return std::asin(v); },
       [](C z) { return std::asin(z); }, -0.9, 0.9},
      {UnaryOp::Acos, direct_unary(tenferro::acos), [](double v) { return std::acos(v); },
       [](C z) { return std::acos(z); }, -0.9, 0.9},
      {UnaryOp::Atan, direct_unary(tenferro::atan), [](double v) { return std::atan(v); },
       [](C z) { return std::atan(z); }, -3, 3},
      {UnaryOp::Sinh, direct_unary(tenferro::sinh), [](double v) { return std::sinh(v); },
       [](C z) { return std::sinh(z); }, -2, 2},
      {UnaryOp::Cosh, direct_unary(tenferro::cosh), [](double v) { return std::cosh(v); },
       [](C z) { return std::cosh(z); }, -2, 2},
      {UnaryOp::Tanh, direct_unary(tenferro::tanh), [](double v) { return std::tanh(v); },
       [](C z) { return std::tanh(z); }, -2, 2},
      {UnaryOp::Asinh, direct_unary(tenferro::asinh), [](double v) { return std::asinh(v); },
       [](C z) { return std::asinh(z); }, -2, 2},
      {UnaryOp::Acosh, direct_unary(tenferro::acosh), [](double v) { return std::acosh(v); },
       [](C z) { return std::acosh(z); }, 1, 4},
      {UnaryOp::Atanh, direct_unary(tenferro::atanh), [](double v) { return std::atanh(v); },
       [](C z) { return std::atanh(z); }, -0.9, 0.9},
      {UnaryOp::Sigmoid, direct_unary(tenferro::sigmoid),
       [](double v) { return 1 / (1 + std::exp(-v)); },
       [](C z) { return 1.0 / (1.0 + std::exp(-z)); }, -4, 4},
      {UnaryOp::Erf, direct_unary(tenferro::erf), [](double v) { return std::erf(v); }, nullptr, -2,
       2},
      {UnaryOp::Erfc, direct_unary(tenferro::erfc), [](double v) { return std::erfc(v); }, nullptr,
       -2, 2},
      {UnaryOp::Sign, direct_unary(tenferro::sign), sign_ref, nullptr, -2, 2},
      {UnaryOp::Sgn, direct_unary(tenferro::sgn), sign_ref,
       [](C z) { return z == C(0) ? C(0) : z / std::abs(z); }, -2, 2},
      {UnaryOp::Floor, direct_unary(tenferro::floor), [](double v) { return std::floor(v); },
       nullptr, -2.5, 2.5},
      {UnaryOp::Ceil, direct_unary(tenferro::ceil), [](double v) { return std::ceil(v); }, nullptr,
       -2.5, 2.5},
      {UnaryOp::Round, direct_unary(tenferro::round), [](double v) { return std::nearbyint(v); },
       nullptr, -2.5, 2.5},
      {UnaryOp::Trunc, direct_unary(tenferro::trunc), [](double v) { return std::trunc(v); },
       nullptr, -2.5, 2.5},
      {UnaryOp::Real, direct_unary(tenferro::real), [](double v) { return v; },
       [](C z) { return C(z.real()); }, -2, 2},
      {UnaryOp::Imag, direct_unary(tenferro::imag), [](double) { return 0.0; },
       [](C z) { return C(z.imag()); }, -2, 2},
      {UnaryOp::Angle, direct_unary(tenferro::angle),
       [](double v) { return v < 0 ? std::numbers::pi : 0.0; }, [](C z) { return C(std::arg(z)); },
       -2, 2},
      {UnaryOp::IsFinite, direct_unary(tenferro::isfinite),
       [](double v) { return std::isfinite(v) ? 1.0 : 0.0; }, [](C) { return C(1); }, -2, 2},
      {UnaryOp::IsNan, direct_unary(tenferro::isnan),
       [](double v) { return std::isnan(v) ? 1.0 : 0.0; }, [](C) { return C(0); }, -2, 2},
      {UnaryOp::LogicalNot, direct_unary(tenferro::logical_not),
       [](double v) { return v == 0 ? 1.0 : 0.0; }, [](C z) { return C(z == C(0) ? 1 : 0); }, -2,
       2},
  };
}

}  // namespace

TEST(ElementwiseUnary, EveryOpMatchesReferenceF64AndC128) {
  CpuBackend cpu({.num_threads = 1});
  for (const auto& c : cases()) {
    const std::string what(name(c.op));
    const Tensor x = grid(c.lo, c.hi);
    const Tensor y = c.fn(x, cpu);
    EXPECT_EQ(y.dtype(), unary_result_dtype(c.op, f64)) << what;
    expect_elementwise(y, x, c.real_ref, 1e-13, what);
    // The generic entry point is the same op.
    EXPECT_EQ(max_abs_diff(unary(c.op, x, cpu), y), 0.0) << what;
    // Negative and non-unit strides give the same values.
    EXPECT_EQ(max_abs_diff(c.fn(tftest::strided_copy(x), cpu), y), 0.0) << what;
    if (c.complex_ref) {
      const Tensor z = complex_grid();
      const Tensor w = c.fn(z, cpu);
      EXPECT_EQ(w.dtype(), unary_result_dtype(c.op, c128)) << what;
      expect_elementwise(w, z, c.complex_ref, 1e-12, what + " c128");
      expect_elementwise(c.fn(tftest::strided_copy(z), cpu), z, c.complex_ref, 1e-12,
                         what + " c128 strided");
    } else {
      EXPECT_TF_ERROR(c.fn(complex_grid(), cpu), ErrorKind::DTypeMismatch);
    }
  }
}

TEST(ElementwiseUnary, EveryOpF32AndI64) {
  CpuBackend cpu({.num_threads = 1});
  for (const auto& c : cases()) {
    const std::string what(name(c.op));
    const Tensor xf = grid(c.lo, c.hi, f32);
    const Tensor yf = c.fn(xf, cpu);
    EXPECT_EQ(yf.dtype(), unary_result_dtype(c.op, f32)) << what;
    expect_elementwise(yf, xf, c.real_ref, 2e-6, what + " f32");
    // Integers: transcendental ops compute in f64, the rest keep i64.
    const Tensor xi = Tensor::from_col_major({5}, std::vector<std::int64_t>{-2, -1, 0, 1, 3});
    const DType rd = unary_result_dtype(c.op, i64);
    const Tensor yi = c.fn(xi, cpu);
    EXPECT_EQ(yi.dtype(), rd) << what;
    expect_elementwise(yi, xi, c.real_ref, 1e-13, what + " i64");
  }
}

TEST(ElementwiseUnary, DTypeRules) {
  EXPECT_EQ(unary_result_dtype(UnaryOp::Exp, i32), f64);
  EXPECT_EQ(unary_result_dtype(UnaryOp::Sqrt, bool_), f64);
  EXPECT_EQ(unary_result_dtype(UnaryOp::Exp, f32), f32);
  EXPECT_EQ(unary_result_dtype(UnaryOp::Abs, i32), i32);
  EXPECT_EQ(unary_result_dtype(UnaryOp::Abs, c64), f32);
  EXPECT_EQ(unary_result_dtype(UnaryOp::Abs, c128), f64);
  EXPECT_EQ(unary_result_dtype(UnaryOp::Real, c64), f32);
  EXPECT_EQ(unary_result_dtype(UnaryOp::Imag, c128), f64);
  EXPECT_EQ(unary_result_dtype(UnaryOp::Angle, c64), f32);
  EXPECT_EQ(unary_result_dtype(UnaryOp::Angle, i32), f64);
  EXPECT_EQ(unary_result_dtype(UnaryOp::Floor, i32), i32);
  EXPECT_EQ(unary_result_dtype(UnaryOp::Sign, i64), i64);
  EXPECT_EQ(unary_result_dtype(UnaryOp::Neg, i32), i32);
  EXPECT_EQ(unary_result_dtype(UnaryOp::Square, bool_), bool_);
  EXPECT_EQ(unary_result_dtype(UnaryOp::IsNan, c64), bool_);
  EXPECT_EQ(unary_result_dtype(UnaryOp::LogicalNot, f32), bool_);
  EXPECT_EQ(unary_result_dtype(UnaryOp::Sgn, c64), c64);
  EXPECT_TF_ERROR(unary_result_dtype(UnaryOp::Neg, bool_), ErrorKind::DTypeMismatch);
  for (UnaryOp op : {UnaryOp::Erf, UnaryOp::Erfc, UnaryOp::Sign, UnaryOp::Floor, UnaryOp::Ceil,
                     UnaryOp::Round, UnaryOp::Trunc}) {
    EXPECT_TF_ERROR(unary_result_dtype(op, c64), ErrorKind::DTypeMismatch);
  }
  EXPECT_EQ(name(UnaryOp::Abs), "abs");
  EXPECT_EQ(name(UnaryOp::Sigmoid), "sigmoid");
  EXPECT_EQ(name(UnaryOp::LogicalNot), "logical_not");
}

TEST(ElementwiseUnary, SpecialValues) {
  CpuBackend cpu({.num_threads = 1});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  // Round half to even.
  auto r =
      round(Tensor::from_col_major({6}, std::vector<double>{0.5, 1.5, 2.5, -0.5, -1.5, 2.6}), cpu);
  EXPECT_EQ(r.to_vector<double>(), (std::vector<double>{0, 2, 2, -0, -2, 3}));
  auto xs = Tensor::from_col_major({4}, std::vector<double>{nan, inf, -inf, 1.0});
  EXPECT_EQ(flags(isnan(xs, cpu)), (std::vector<int>{1, 0, 0, 0}));
  EXPECT_EQ(flags(isfinite(xs, cpu)), (std::vector<int>{0, 0, 0, 1}));
  EXPECT_TRUE(std::isnan(sign(xs, cpu).to_vector<double>()[0]));
  EXPECT_TRUE(std::isnan(angle(xs, cpu).to_vector<double>()[0]));
  auto zc = Tensor::from_col_major({3}, std::vector<c128_t>{{nan, 0}, {inf, 1}, {0, 0}});
  EXPECT_EQ(flags(isnan(zc, cpu)), (std::vector<int>{1, 0, 0}));
  EXPECT_EQ(flags(isfinite(zc, cpu)), (std::vector<int>{0, 0, 1}));
  EXPECT_EQ(sgn(zc, cpu).to_vector<c128_t>()[2], c128_t(0));
  // Integers: isfinite is true, isnan false; abs wraps at the minimum like NumPy.
  auto xi = Tensor::from_col_major(
      {2}, std::vector<std::int32_t>{std::numeric_limits<std::int32_t>::min(), -3});
  EXPECT_EQ(flags(isfinite(xi, cpu)), (std::vector<int>{1, 1}));
  EXPECT_EQ(flags(isnan(xi, cpu)), (std::vector<int>{0, 0}));
  EXPECT_EQ(abs(xi, cpu).to_vector<std::int32_t>()[1], 3);
  EXPECT_EQ(neg(xi, cpu).to_vector<std::int32_t>()[0], std::numeric_limits<std::int32_t>::min());
  // Complex expm1/log1p stay accurate near zero, where exp(z) - 1 and log(1 + z)
  // cancel: second-order expansions in x = 1e-10, y = 2e-10.
  const Tensor tiny = Tensor::from_col_major({1}, std::vector<c128_t>{{1e-10, 2e-10}});
  EXPECT_NEAR(expm1(tiny, cpu).to_vector<c128_t>()[0].real(), 1e-10 - 1.5e-20, 1e-26);
  EXPECT_NEAR(log1p(tiny, cpu).to_vector<c128_t>()[0].imag(), 2e-10 - 2e-20, 1e-26);
  // Bool inputs: transcendental ops go through f64, logical_not flips.
  const Tensor b = bool_tensor({1, 0});
  EXPECT_EQ(exp(b, cpu).dtype(), f64);
  // Real exp is the vectorised kernel, within a few ulp of std::exp.
  const auto eb = exp(b, cpu).to_vector<double>();
  ASSERT_EQ(eb.size(), 2u);
  EXPECT_DOUBLE_EQ(eb[0], std::exp(1.0));
  EXPECT_EQ(eb[1], 1.0);
  EXPECT_EQ(logical_not(b, cpu).dtype(), bool_);
  EXPECT_EQ(flags(logical_not(b, cpu)), (std::vector<int>{0, 1}));
  EXPECT_EQ(abs(b, cpu).dtype(), bool_);
  EXPECT_EQ(flags(square(b, cpu)), (std::vector<int>{1, 0}));
}

TEST(ElementwiseUnary, ZeroSizeAndRankZero) {
  CpuBackend cpu({.num_threads = 1});
  for (const auto& c : cases()) {
    const Tensor e = c.fn(zeros({0, 3}), cpu);
    EXPECT_EQ(e.shape(), Shape({0, 3}));
    EXPECT_EQ(e.dtype(), unary_result_dtype(c.op, f64));
  }
  const Tensor s = exp(Tensor::scalar(1.0), cpu);
  EXPECT_EQ(s.rank(), 0);
  EXPECT_DOUBLE_EQ(s.item().real(), std::exp(1.0));
  EXPECT_EQ(abs(Tensor::scalar(std::int64_t{-4}), cpu).item().to_int(), 4);
}

TEST(ElementwiseUnary, IntoWritesThroughStrides) {
  CpuBackend cpu({.num_threads = 1});
  const Tensor x = grid(-2, 2);
  Tensor base = zeros({6, 8});
  const Tensor out = base.slice(0, std::nullopt, std::nullopt, -2).slice(1, 1, std::nullopt, 2);
  ASSERT_EQ(out.shape(), x.shape());
  unary_into(UnaryOp::Exp, x, out, cpu);
  EXPECT_EQ(max_abs_diff(out, exp(x, cpu)), 0.0);
  // Only the 12 viewed elements of the 48 were written.
  int written = 0;
  for (const auto v : values(base)) written += v != c128_t(0);
  EXPECT_EQ(written, 12);
  // Integer input converted to the f64 compute dtype on the way.
  const Tensor xi = Tensor::from_col_major({2}, std::vector<std::int32_t>{1, 4});
  Tensor o2 = zeros({2});
  unary_into(UnaryOp::Sqrt, xi, o2, cpu);
  EXPECT_EQ(o2.to_vector<double>(), (std::vector<double>{1, 2}));
  // In place on the exact same view is allowed.
  Tensor y = x.clone();
  unary_into(UnaryOp::Neg, y, y, cpu);
  EXPECT_EQ(max_abs_diff(y, neg(x, cpu)), 0.0);
}

TEST(ElementwiseUnary, Errors) {
  CpuBackend cpu({.num_threads = 1});
  const Tensor x = grid(0.1, 1);
  EXPECT_TF_ERROR(exp(Tensor(), cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(neg(zeros({2}, bool_), cpu), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(erf(zeros({2}, c64), cpu), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(round(zeros({2}, c128), cpu), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(unary_into(UnaryOp::Exp, x, Tensor(), cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(unary_into(UnaryOp::Exp, x, zeros({4, 3}), cpu), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(unary_into(UnaryOp::Exp, x, zeros({3, 4}, f32), cpu), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(unary_into(UnaryOp::Abs, zeros({3}, c128), zeros({3}, c128), cpu),
                  ErrorKind::DTypeMismatch);
  // out overlapping its input in another layout, and a broadcast out.
  Tensor buf = arange(0.0, 8.0, 1.0);
  EXPECT_TF_ERROR(unary_into(UnaryOp::Exp, buf.slice(0, 0, 4), buf.slice(0, 2, 6), cpu),
                  ErrorKind::InvalidArgument);
  const std::int64_t four[] = {4};
  EXPECT_TF_ERROR(unary_into(UnaryOp::Exp, zeros({4}), zeros({1}).broadcast_to(four), cpu),
                  ErrorKind::InvalidArgument);
}

namespace {
// A backend with memory of its own kind and no kernels.
class OtherBackend final : public Backend {
 public:
  explicit OtherBackend(Placement p) : placement_(p) {}
  std::string_view kind() const override { return "cuda"; }
  Placement placement() const override { return placement_; }
  using Backend::empty;
  Tensor empty(std::span<const std::int64_t> shape, DType dtype) override {
    return tenferro::empty(shape, dtype);
  }

 private:
  Placement placement_;
};
}  // namespace

TEST(ElementwiseUnary, MissingKernelIsUnsupportedAndForeignTensorsAContextMismatch) {
  // Host tensors it can read, no kernel to run: Unsupported naming the kernel.
  OtherBackend host_memory(Placement{});
  EXPECT_TF_ERROR(exp(zeros({2}), host_memory), ErrorKind::Unsupported);
  EXPECT_TF_ERROR(clamp(zeros({2}), 0.0, 1.0, host_memory), ErrorKind::Unsupported);
  try {
    exp(zeros({2}), host_memory);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no unary kernel (Backend::unary)"), std::string::npos)
        << e.what();
  }
  // Host tensors on a backend whose memory is elsewhere: a context mismatch.
  OtherBackend device_memory(Placement{"cuda", 0});
  EXPECT_TF_ERROR(exp(zeros({2}), device_memory), ErrorKind::ContextMismatch);
  EXPECT_TF_ERROR(clamp(zeros({2}), 0.0, 1.0, device_memory), ErrorKind::ContextMismatch);
}

TEST(ElementwiseUnary, Clamp) {
  CpuBackend cpu({.num_threads = 1});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = Tensor::from_col_major({6}, std::vector<double>{-3, -1, 0, 0.5, 2, nan});
  auto v = clamp(x, -1.5, 1.0, cpu).to_vector<double>();
  EXPECT_EQ(std::vector<double>(v.begin(), v.begin() + 5),
            (std::vector<double>{-1.5, -1, 0, 0.5, 1}));
  EXPECT_TRUE(std::isnan(v[5]));  // NaN propagates
  v = clamp(x, std::nullopt, 0.0, cpu).to_vector<double>();
  EXPECT_EQ(std::vector<double>(v.begin(), v.begin() + 5), (std::vector<double>{-3, -1, 0, 0, 0}));
  v = clamp(x, 0.0, std::nullopt, cpu).to_vector<double>();
  EXPECT_EQ(std::vector<double>(v.begin(), v.begin() + 5), (std::vector<double>{0, 0, 0, 0.5, 2}));
  // lo > hi gives hi everywhere (PyTorch).
  v = clamp(x, 2.0, 1.0, cpu).to_vector<double>();
  EXPECT_EQ(std::vector<double>(v.begin(), v.begin() + 5), (std::vector<double>{1, 1, 1, 1, 1}));
  // No bounds: a copy in fresh storage.
  const Tensor c = clamp(x, std::nullopt, std::nullopt, cpu);
  EXPECT_NE(c.storage(), x.storage());
  EXPECT_TRUE(allclose(c, x, 0, 0, true));
  // Strided input, reference loop, f32.
  const Tensor g = grid(-2, 2, f32);
  const Tensor cg = clamp(tftest::strided_copy(g), -0.5, 0.75, cpu);
  EXPECT_EQ(cg.dtype(), f32);
  expect_elementwise(
      cg, g, [](double t) { return std::min(std::max(t, -0.5), 0.75); }, 1e-7, "clamp");
  // Integers: fractional bounds round inwards, out-of-range bounds saturate.
  const Tensor xi = Tensor::from_col_major({5}, std::vector<std::int32_t>{-5, 0, 2, 3, 7});
  EXPECT_EQ(clamp(xi, 0.5, 3.9, cpu).to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{1, 1, 2, 3, 3}));
  EXPECT_EQ(clamp(xi, -1e30, std::int64_t{1} << 40, cpu).to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{-5, 0, 2, 3, 7}));
  EXPECT_EQ(clamp(zeros({0, 2}, i64), 0, 1, cpu).shape(), Shape({0, 2}));
  EXPECT_EQ(clamp(Tensor::scalar(std::int64_t{9}), std::nullopt, 4, cpu).item().to_int(), 4);
  // Errors.
  EXPECT_TF_ERROR(clamp(zeros({2}, c128), 0.0, 1.0, cpu), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(clamp(zeros({2}, bool_), 0.0, 1.0, cpu), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(clamp(zeros({2}), c128_t(1, 1), 1.0, cpu), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(clamp(xi, nan, 1.0, cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(clamp(Tensor(), 0.0, 1.0, cpu), ErrorKind::InvalidArgument);
}

TEST(ElementwiseUnary, LargeParallelMatchesSerial) {
  CpuBackend serial({.num_threads = 1});
  CpuBackend two({.num_threads = 2});
  const std::int64_t n = std::int64_t{1} << 17;
  const Tensor x = linspace(-3.0, 3.0, n);
  for (UnaryOp op : {UnaryOp::Exp, UnaryOp::Abs, UnaryOp::Sigmoid, UnaryOp::IsNan}) {
    EXPECT_EQ(max_abs_diff(unary(op, x, two), unary(op, x, serial)), 0.0) << name(op);
    // Strided (reversed, step 2) input splits mid-run across the two threads.
    const Tensor xs = tftest::strided_copy(x);
    EXPECT_EQ(max_abs_diff(unary(op, xs, two), unary(op, x, serial)), 0.0) << name(op);
  }
  const Tensor c2 = clamp(x, -1.0, 1.0, two);
  EXPECT_EQ(max_abs_diff(c2, clamp(x, -1.0, 1.0, serial)), 0.0);
}
