// Binary elementwise ops and where against naive std:: reference loops, with
// broadcasting, promotion, strided inputs and the *_into forms.

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>

#include "../../src/cpu/stream_arith.hpp"
#include "../../src/cpu/stream_store.hpp"
#include "tenferro/ad/composite.hpp"
#include "test_util.hpp"

using namespace tenferro;

namespace {

// The direct form of an op (its name also names the template of the other
// tiers): the function of the given type.
using DirectBinaryFn = Tensor (*)(const Tensor&, const Tensor&, Backend&);
constexpr DirectBinaryFn direct_binary(DirectBinaryFn f) {
  return f;
}

using C = c128_t;
using RealRef = std::function<double(double, double)>;
using ComplexRef = std::function<C(C, C)>;
using IntRef = std::function<std::int64_t(std::int64_t, std::int64_t)>;

/// The elements of any tensor in column-major order, converted to c128.
std::vector<C> values(const Tensor& t) {
  Tensor c = zeros(t.shape(), c128);
  Tensor::copy_into(t, c);
  return c.to_vector<C>();
}

std::vector<std::int64_t> ints(const Tensor& t) {
  Tensor c = zeros(t.shape(), i64);
  Tensor::copy_into(t, c);
  return c.to_vector<std::int64_t>();
}

bool close(C got, C want, double tol) {
  if (std::isnan(want.real()) || std::isnan(want.imag())) {
    return std::isnan(got.real()) || std::isnan(got.imag());
  }
  if (std::isinf(want.real()) || std::isinf(want.imag())) return got == want;
  return std::abs(got - want) <= tol * (1.0 + std::abs(want));
}

/// Element idx of `t` broadcast to `shape` (right-aligned), as c128.
C broadcast_element(const Tensor& t, const std::vector<std::int64_t>& idx) {
  std::vector<std::int64_t> own(static_cast<std::size_t>(t.rank()));
  const std::size_t lead = idx.size() - own.size();
  for (std::size_t d = 0; d < own.size(); ++d) own[d] = t.shape()[d] == 1 ? 0 : idx[lead + d];
  return tftest::element<C>(t, own);
}

/// Checks got == ref(a, b) elementwise under broadcasting.
template <class Ref>
void expect_binary(const Tensor& got, const Tensor& a, const Tensor& b, const Ref& ref, double tol,
                   const std::string& what) {
  ASSERT_EQ(got.shape(), broadcast_shapes(a.shape(), b.shape())) << what;
  const auto g = values(got);
  for (std::int64_t i = 0; i < got.numel(); ++i) {
    const auto idx = tftest::unravel(i, got.shape());
    const C x = broadcast_element(a, idx), y = broadcast_element(b, idx);
    C want;
    if constexpr (std::is_same_v<Ref, RealRef>) {
      want = ref(x.real(), y.real());
    } else if constexpr (std::is_same_v<Ref, IntRef>) {
      want = static_cast<double>(
          ref(static_cast<std::int64_t>(x.real()), static_cast<std::int64_t>(y.real())));
    } else {
      want = ref(x, y);
    }
    EXPECT_TRUE(close(g[static_cast<std::size_t>(i)], want, tol))
        << what << " at " << i << ": " << x << ", " << y << " got " << g[i] << " want " << want;
  }
}

Tensor convert(const Tensor& t, DType d) {
  Tensor out = zeros(t.shape(), d);
  Tensor::copy_into(t, out);
  return out;
}

/// [3, 1] and [1, 4] operands with values in [lo, hi].
std::pair<Tensor, Tensor> column_and_row(double lo, double hi, DType d = f64) {
  const double s = (hi - lo) / 6;
  Tensor a = Tensor::from_col_major({3, 1}, std::vector<double>{lo, lo + s, lo + 2 * s});
  Tensor b = Tensor::from_col_major(
      {1, 4}, std::vector<double>{lo + 3 * s, lo + 4.5 * s, hi, lo + 0.5 * s});
  return {convert(a, d), convert(b, d)};
}

Tensor complex_operand(std::initializer_list<std::int64_t> shape, double phase) {
  std::vector<C> v;
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  for (std::int64_t i = 0; i < n; ++i) v.emplace_back(0.3 + 0.2 * i + phase, 0.5 - 0.15 * i);
  return Tensor::from_col_major(shape, v);
}

struct BinaryCase {
  BinaryOp op;
  std::function<Tensor(const Tensor&, const Tensor&, Backend&)> fn;
  RealRef real_ref;
  ComplexRef complex_ref;  // empty when complex is rejected
  IntRef int_ref;          // empty when integers compute in f64
  double lo, hi;
};

double py_remainder(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

std::int64_t int_pow(std::int64_t a, std::int64_t e) {
  if (e < 0) return a == 1 ? 1 : a == -1 ? (e % 2 == 0 ? 1 : -1) : 0;
  std::int64_t r = 1;
  for (std::int64_t i = 0; i < e; ++i) r *= a;
  return r;
}

std::vector<BinaryCase> cases() {
  auto b2d = [](bool v) { return v ? 1.0 : 0.0; };
  return {
      {BinaryOp::Add, direct_binary(tenferro::add), [](double a, double b) { return a + b; },
       [](C a, C b) { return a + b; }, [](std::int64_t a, std::int64_t b) { return a + b; }, -2, 2},
      {BinaryOp::Sub, direct_binary(tenferro::sub), [](double a, double b) { return a - b; },
       [](C a, C b) { return a - b; }, [](std::int64_t a, std::int64_t b) { return a - b; }, -2, 2},
      {BinaryOp::Mul, direct_binary(tenferro::mul), [](double a, double b) { return a * b; },
       [](C a, C b) { return a * b; }, [](std::int64_t a, std::int64_t b) { return a * b; }, -2, 2},
      {BinaryOp::Div, direct_binary(tenferro::div), [](double a, double b) { return a / b; },
       [](C a, C b) { return a / b; }, nullptr, 0.5, 3},
      {BinaryOp::Pow, direct_binary(tenferro::pow),
       [](double a, double b) { return std::pow(a, b); }, [](C a, C b) { return std::pow(a, b); },
       int_pow, 0.5, 3},
      {BinaryOp::Maximum, direct_binary(tenferro::maximum),
       [](double a, double b) { return std::max(a, b); }, nullptr,
       [](std::int64_t a, std::int64_t b) { return std::max(a, b); }, -2, 2},
      {BinaryOp::Minimum, direct_binary(tenferro::minimum),
       [](double a, double b) { return std::min(a, b); }, nullptr,
       [](std::int64_t a, std::int64_t b) { return std::min(a, b); }, -2, 2},
      {BinaryOp::Atan2, direct_binary(tenferro::atan2),
       [](double a, double b) { return std::atan2(a, b); }, nullptr, nullptr, -2, 2},
      {BinaryOp::Hypot, direct_binary(tenferro::hypot),
       [](double a, double b) { return std::hypot(a, b); }, nullptr, nullptr, -2, 2},
      {BinaryOp::Copysign, direct_binary(tenferro::copysign),
       [](double a, double b) { return std::copysign(a, b); }, nullptr, nullptr, -2, 2},
      {BinaryOp::Fmod, direct_binary(tenferro::fmod),
       [](double a, double b) { return std::fmod(a, b); }, nullptr,
       [](std::int64_t a, std::int64_t b) { return a % b; }, -5, 4},
      {BinaryOp::Remainder, direct_binary(tenferro::remainder), py_remainder, nullptr,
       [](std::int64_t a, std::int64_t b) {
         return static_cast<std::int64_t>(py_remainder(double(a), double(b)));
       },
       -5, 4},
      {BinaryOp::Eq, direct_binary(tenferro::eq), [=](double a, double b) { return b2d(a == b); },
       [](C a, C b) { return C(a == b); },
       [](std::int64_t a, std::int64_t b) { return std::int64_t{a == b}; }, -2, 2},
      {BinaryOp::Ne, direct_binary(tenferro::ne), [=](double a, double b) { return b2d(a != b); },
       [](C a, C b) { return C(a != b); },
       [](std::int64_t a, std::int64_t b) { return std::int64_t{a != b}; }, -2, 2},
      {BinaryOp::Lt, direct_binary(tenferro::lt), [=](double a, double b) { return b2d(a < b); },
       nullptr, [](std::int64_t a, std::int64_t b) { return std::int64_t{a < b}; }, -2, 2},
      {BinaryOp::Le, direct_binary(tenferro::le), [=](double a, double b) { return b2d(a <= b); },
       nullptr, [](std::int64_t a, std::int64_t b) { return std::int64_t{a <= b}; }, -2, 2},
      {BinaryOp::Gt, direct_binary(tenferro::gt), [=](double a, double b) { return b2d(a > b); },
       nullptr, [](std::int64_t a, std::int64_t b) { return std::int64_t{a > b}; }, -2, 2},
      {BinaryOp::Ge, direct_binary(tenferro::ge), [=](double a, double b) { return b2d(a >= b); },
       nullptr, [](std::int64_t a, std::int64_t b) { return std::int64_t{a >= b}; }, -2, 2},
      {BinaryOp::LogicalAnd, direct_binary(tenferro::logical_and),
       [=](double a, double b) { return b2d(a != 0 && b != 0); },
       [](C a, C b) { return C(a != C(0) && b != C(0)); },
       [](std::int64_t a, std::int64_t b) { return std::int64_t{a != 0 && b != 0}; }, -1, 1},
      {BinaryOp::LogicalOr, direct_binary(tenferro::logical_or),
       [=](double a, double b) { return b2d(a != 0 || b != 0); },
       [](C a, C b) { return C(a != C(0) || b != C(0)); },
       [](std::int64_t a, std::int64_t b) { return std::int64_t{a != 0 || b != 0}; }, -1, 1},
  };
}

}  // namespace

TEST(ElementwiseBinary, EveryOpBroadcastsAgainstReference) {
  CpuBackend cpu({.num_threads = 1});
  for (const auto& c : cases()) {
    const std::string what(name(c.op));
    const auto [a, b] = column_and_row(c.lo, c.hi);
    const Tensor y = c.fn(a, b, cpu);
    EXPECT_EQ(y.shape(), Shape({3, 4})) << what;
    EXPECT_EQ(y.dtype(), binary_result_dtype(c.op, f64, f64)) << what;
    expect_binary(y, a, b, c.real_ref, 1e-14, what);
    EXPECT_EQ(max_abs_diff(binary(c.op, a, b, cpu), y), 0.0) << what;
    // Negative-stride operands and the reversed order of broadcasting.
    EXPECT_EQ(max_abs_diff(c.fn(tftest::strided_copy(a), tftest::strided_copy(b), cpu), y), 0.0)
        << what;
    expect_binary(c.fn(b, a, cpu), b, a, c.real_ref, 1e-14, what + " swapped");
    // Same-shape compact operands (the flat path) and rank 0 with [2, 3].
    const Tensor full_a = convert(a.broadcast_to(y.shape()), f64);
    const Tensor full_b = convert(b.broadcast_to(y.shape()), f64);
    EXPECT_EQ(max_abs_diff(c.fn(full_a, full_b, cpu), y), 0.0) << what;
    const Tensor s = Tensor::scalar(c.hi * 0.7);
    const Tensor m = convert(full_a.slice(1, 0, 3).slice(0, 0, 2), f64);
    expect_binary(c.fn(s, m, cpu), s, m, c.real_ref, 1e-14, what + " rank0");
    const Tensor z = c.fn(Tensor::scalar(1.0), Tensor::scalar(c.hi), cpu);
    EXPECT_EQ(z.rank(), 0) << what;
    // Zero-size broadcasting.
    EXPECT_EQ(c.fn(zeros({0, 1}), zeros({1, 3}), cpu).shape(), Shape({0, 3})) << what;
    // f32.
    const auto [af, bf] = column_and_row(c.lo, c.hi, f32);
    const Tensor yf = c.fn(af, bf, cpu);
    EXPECT_EQ(yf.dtype(), binary_result_dtype(c.op, f32, f32)) << what;
    expect_binary(yf, af, bf, c.real_ref, 1e-6, what + " f32");
  }
}

TEST(ElementwiseBinary, EveryOpC128OrRejected) {
  CpuBackend cpu({.num_threads = 1});
  for (const auto& c : cases()) {
    const std::string what(name(c.op));
    const Tensor a = complex_operand({2, 3}, 0.0), b = complex_operand({2, 1}, 0.4);
    if (!c.complex_ref) {
      EXPECT_TF_ERROR(c.fn(a, b, cpu), ErrorKind::DTypeMismatch);
      continue;
    }
    const Tensor y = c.fn(a, b, cpu);
    EXPECT_EQ(y.dtype(), binary_result_dtype(c.op, c128, c128)) << what;
    expect_binary(y, a, b, c.complex_ref, 1e-13, what + " c128");
    expect_binary(c.fn(tftest::strided_copy(a), b, cpu), a, b, c.complex_ref, 1e-13,
                  what + " c128 strided");
    // Equal values compare equal, also mixed with a real operand.
    if (c.op == BinaryOp::Eq) {
      EXPECT_EQ(ints(eq(a, tftest::strided_copy(a), cpu)), std::vector<std::int64_t>(6, 1));
    }
  }
}

TEST(ElementwiseBinary, EveryOpI64) {
  CpuBackend cpu({.num_threads = 1});
  const Tensor a = Tensor::from_col_major({4, 1}, std::vector<std::int64_t>{-7, -2, 3, 9});
  const Tensor b = Tensor::from_col_major({1, 3}, std::vector<std::int64_t>{-3, 2, 5});
  for (const auto& c : cases()) {
    const std::string what(name(c.op));
    const Tensor y = c.fn(a, b, cpu);
    EXPECT_EQ(y.dtype(), binary_result_dtype(c.op, i64, i64)) << what;
    if (c.int_ref) {
      EXPECT_TRUE(y.dtype() == i64 || y.dtype() == bool_) << what;
      expect_binary(y, a, b, c.int_ref, 0, what + " i64");
    } else {
      EXPECT_EQ(y.dtype(), f64) << what;  // computed in f64
      expect_binary(y, a, b, c.real_ref, 1e-14, what + " i64->f64");
    }
  }
}

TEST(ElementwiseBinary, Promotion) {
  CpuBackend cpu({.num_threads = 1});
  const Tensor i = Tensor::from_col_major({2}, std::vector<std::int32_t>{3, -4});
  const Tensor f = Tensor::from_col_major({2}, std::vector<float>{0.5f, 2.0f});
  const Tensor z = Tensor::from_col_major({2}, std::vector<C>{{1, 1}, {0, -2}});
  const Tensor l = Tensor::from_col_major({2}, std::vector<std::int64_t>{7, -7});
  const Tensor l2 = Tensor::from_col_major({2}, std::vector<std::int64_t>{2, 2});
  const Tensor sum = add(i, f, cpu);
  EXPECT_EQ(sum.dtype(), f32);
  EXPECT_EQ(sum.to_vector<float>(), (std::vector<float>{3.5f, -2.0f}));
  const Tensor fz = mul(f, z, cpu);
  EXPECT_EQ(fz.dtype(), c128);
  EXPECT_EQ(fz.to_vector<C>(), (std::vector<C>{{0.5, 0.5}, {0, -4}}));
  const Tensor q = div(l, l2, cpu);
  EXPECT_EQ(q.dtype(), f64);
  EXPECT_EQ(q.to_vector<double>(), (std::vector<double>{3.5, -3.5}));
  EXPECT_EQ(add(i, l, cpu).dtype(), i64);
  EXPECT_EQ(binary_compute_dtype(BinaryOp::Div, i32, i32), f64);
  EXPECT_EQ(binary_compute_dtype(BinaryOp::Atan2, i32, i64), f64);
  EXPECT_EQ(binary_compute_dtype(BinaryOp::Add, f32, c64), c64);
  EXPECT_EQ(binary_compute_dtype(BinaryOp::Add, f64, c64), c128);
  EXPECT_EQ(binary_compute_dtype(BinaryOp::LogicalAnd, c128, i32), bool_);
  EXPECT_EQ(binary_compute_dtype(BinaryOp::Lt, i32, f32), f32);
  EXPECT_EQ(binary_result_dtype(BinaryOp::Lt, i32, f32), bool_);
  EXPECT_EQ(binary_result_dtype(BinaryOp::Eq, c64, c128), bool_);
  EXPECT_EQ(binary_result_dtype(BinaryOp::Pow, i32, i32), i32);
  // Comparisons promote first: 3 (i32) < 3.5 (f32).
  EXPECT_EQ(ints(lt(i, Tensor::scalar(3.5f), cpu)), (std::vector<std::int64_t>{1, 1}));
  // Logical ops take any dtype by truth value.
  EXPECT_EQ(ints(logical_and(z, Tensor::from_col_major({2}, std::vector<double>{0, 3}), cpu)),
            (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(name(BinaryOp::Add), "add");
  EXPECT_EQ(name(BinaryOp::LogicalOr), "logical_or");
}

TEST(ElementwiseBinary, BoolArithmetic) {
  CpuBackend cpu({.num_threads = 1});
  const Tensor t =
      convert(Tensor::from_col_major({4}, std::vector<std::int32_t>{1, 1, 0, 0}), bool_);
  const Tensor u =
      convert(Tensor::from_col_major({4}, std::vector<std::int32_t>{1, 0, 1, 0}), bool_);
  EXPECT_EQ(add(t, u, cpu).dtype(), bool_);
  EXPECT_EQ(ints(add(t, u, cpu)), (std::vector<std::int64_t>{1, 1, 1, 0}));
  EXPECT_EQ(ints(mul(t, u, cpu)), (std::vector<std::int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(ints(maximum(t, u, cpu)), (std::vector<std::int64_t>{1, 1, 1, 0}));
  EXPECT_EQ(ints(minimum(t, u, cpu)), (std::vector<std::int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(ints(gt(t, u, cpu)), (std::vector<std::int64_t>{0, 1, 0, 0}));
  EXPECT_EQ(div(t, t, cpu).dtype(), f64);
  EXPECT_TF_ERROR(sub(t, u, cpu), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(pow(t, u, cpu), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(fmod(t, u, cpu), ErrorKind::DTypeMismatch);
  // bool with an integer promotes to the integer.
  EXPECT_EQ(sub(t, Tensor::scalar(std::int32_t{2}), cpu).dtype(), i32);
}

TEST(ElementwiseBinary, IntegerPowAndRemainders) {
  CpuBackend cpu({.num_threads = 1});
  const auto vec = [](std::vector<std::int64_t> v) {
    return Tensor::from_col_major({static_cast<std::int64_t>(v.size())}, v);
  };
  const Tensor base = vec({2, 3, 2, 1, -1, -1, 0, -2, 5});
  const Tensor expo = vec({10, 0, -1, -5, -3, -2, 0, 3, -2});
  EXPECT_EQ(pow(base, expo, cpu).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{1024, 1, 0, 1, -1, 1, 1, -8, 0}));
  // Overflow wraps instead of being undefined.
  EXPECT_EQ(pow(vec({2}), vec({64}), cpu).to_vector<std::int64_t>()[0], 0);
  const Tensor a = vec({-7, 7, -7, 7, std::numeric_limits<std::int64_t>::min()});
  const Tensor b = vec({3, -3, -3, 3, -1});
  EXPECT_EQ(fmod(a, b, cpu).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{-1, 1, -1, 1, 0}));
  EXPECT_EQ(remainder(a, b, cpu).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{2, -2, -1, 1, 0}));
  // Floats follow C fmod and Python's %.
  const Tensor fa = Tensor::from_col_major({3}, std::vector<double>{-7, 7, 6});
  const Tensor fb = Tensor::from_col_major({3}, std::vector<double>{3, -3, -3});
  EXPECT_EQ(fmod(fa, fb, cpu).to_vector<double>(), (std::vector<double>{-1, 1, 0}));
  const auto r = remainder(fa, fb, cpu).to_vector<double>();
  EXPECT_EQ(r, (std::vector<double>{2, -2, 0}));
  EXPECT_TRUE(std::signbit(r[2]));  // zero takes the divisor's sign
  // A zero integer divisor is refused before any work, also when broadcast.
  try {
    (void)fmod(vec({1, 2, 3}), vec({1, 0, 1}), cpu);
    ADD_FAILURE() << "fmod by zero did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_EQ(std::string(e.what()).rfind("[fmod] integer division by zero", 0), 0u) << e.what();
  }
  EXPECT_TF_ERROR(remainder(vec({1, 2}), Tensor::scalar(std::int64_t{0}), cpu),
                  ErrorKind::InvalidArgument);
  // Float division by zero is IEEE.
  EXPECT_TRUE(std::isinf(div(vec({1}), vec({0}), cpu).to_vector<double>()[0]));
}

TEST(ElementwiseBinary, NanPropagationInMaxMin) {
  CpuBackend cpu({.num_threads = 1});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor a = Tensor::from_col_major({3}, std::vector<double>{nan, 1, 2});
  const Tensor b = Tensor::from_col_major({3}, std::vector<double>{1, nan, 3});
  const auto mx = maximum(a, b, cpu).to_vector<double>();
  const auto mn = minimum(a, b, cpu).to_vector<double>();
  EXPECT_TRUE(std::isnan(mx[0]) && std::isnan(mx[1]) && mx[2] == 3);
  EXPECT_TRUE(std::isnan(mn[0]) && std::isnan(mn[1]) && mn[2] == 2);
}

TEST(ElementwiseBinary, IntoWritesThroughStrides) {
  CpuBackend cpu({.num_threads = 1});
  const auto [a, b] = column_and_row(-2, 2);
  Tensor base = full({8, 6}, -100.0);
  // A transposed, reversed [3, 4] view of the base.
  const Tensor out = base.slice(0, std::nullopt, std::nullopt, -2).slice(1, 0, 3).transpose();
  ASSERT_EQ(out.shape(), Shape({3, 4}));
  binary_into(BinaryOp::Add, a, b, out, cpu);
  EXPECT_EQ(max_abs_diff(out, add(a, b, cpu)), 0.0);
  int written = 0;
  for (const auto v : values(base)) written += v != C(-100);
  EXPECT_EQ(written, 12);
  // Promoting inputs into a bool out.
  Tensor flags = zeros({3, 4}, bool_);
  binary_into(BinaryOp::Lt, convert(a, i32), b, flags, cpu);
  EXPECT_EQ(max_abs_diff(flags, lt(convert(a, i32), b, cpu)), 0.0);
  // In place on the exact same view.
  Tensor acc = convert(add(a, b, cpu), f64);
  const Tensor before = acc.clone();
  binary_into(BinaryOp::Mul, acc, b, acc, cpu);
  EXPECT_EQ(max_abs_diff(acc, mul(before, b, cpu)), 0.0);
}

TEST(ElementwiseBinary, Errors) {
  CpuBackend cpu({.num_threads = 1});
  const auto [a, b] = column_and_row(-2, 2);
  EXPECT_TF_ERROR(add(Tensor(), b, cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(add(a, Tensor(), cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(add(zeros({2, 3}), zeros({3, 2}), cpu), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(lt(complex_operand({2}, 0), zeros({2}), cpu), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(maximum(zeros({2}, c64), zeros({2}), cpu), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(binary_into(BinaryOp::Add, a, b, Tensor(), cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(binary_into(BinaryOp::Add, a, b, zeros({4, 3}), cpu), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(binary_into(BinaryOp::Add, a, b, zeros({3, 4}, f32), cpu),
                  ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(binary_into(BinaryOp::Eq, a, b, zeros({3, 4}), cpu), ErrorKind::DTypeMismatch);
  // out overlapping an input in another layout.
  Tensor buf = arange(0.0, 12.0, 1.0);
  const Tensor view = buf.slice(0, 0, 6);
  EXPECT_TF_ERROR(binary_into(BinaryOp::Add, view, view, buf.slice(0, 3, 9), cpu),
                  ErrorKind::InvalidArgument);
  // where.
  const Tensor cond =
      convert(Tensor::from_col_major({3, 1}, std::vector<std::int32_t>{1, 0, 1}), bool_);
  EXPECT_TF_ERROR(where(convert(cond, i32), a, b, cpu), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(where(cond, zeros({2, 2}), b, cpu), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(where(Tensor(), a, b, cpu), ErrorKind::InvalidArgument);
}

TEST(ElementwiseBinary, Where) {
  CpuBackend cpu({.num_threads = 1});
  const Tensor cond =
      convert(Tensor::from_col_major({3, 1}, std::vector<std::int32_t>{1, 0, 1}), bool_);
  const Tensor a = Tensor::from_col_major({1, 4}, std::vector<double>{1, 2, 3, 4});
  const Tensor b = Tensor::scalar(std::int32_t{-5});
  const Tensor w = where(cond, a, b, cpu);
  EXPECT_EQ(w.dtype(), f64);
  ASSERT_EQ(w.shape(), Shape({3, 4}));
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t j = 0; j < 4; ++j)
      EXPECT_EQ(tftest::element<double>(w, {i, j}), i == 1 ? -5.0 : double(j + 1));
  // Strided operands, complex promotion, rank 0 and zero-size.
  const Tensor z = complex_operand({3, 4}, 0.1);
  const Tensor wz = where(tftest::strided_copy(cond), tftest::strided_copy(z), a, cpu);
  EXPECT_EQ(wz.dtype(), c128);
  for (std::int64_t i = 0; i < 12; ++i) {
    const auto idx = tftest::unravel(i, wz.shape());
    const C want = idx[0] == 1 ? C(double(idx[1] + 1)) : tftest::element<C>(z, idx);
    EXPECT_EQ(tftest::element<C>(wz, idx), want);
  }
  const Tensor t = convert(Tensor::scalar(std::int32_t{1}), bool_);
  EXPECT_EQ(where(t, Tensor::scalar(2.0), Tensor::scalar(3.0), cpu).item().real(), 2.0);
  EXPECT_EQ(where(zeros({0, 1}, bool_), a, b, cpu).shape(), Shape({0, 4}));
}

// The flat select: each of cond, a, b compact or one broadcast value, every
// dtype, lengths across the vector widths, NaN and -0 passed through bit for
// bit, one and two threads.
TEST(ElementwiseBinary, WhereOverCompactAndSingleValueOperands) {
  CpuBackend one({.num_threads = 1}), two({.num_threads = 2});
  std::int64_t checked = 0;
  for (const std::int64_t n :
       {std::int64_t{1}, std::int64_t{7}, std::int64_t{33}, std::int64_t{70001}}) {
    std::vector<std::int32_t> bits(static_cast<std::size_t>(n));
    std::vector<double> av(static_cast<std::size_t>(n)), bv(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
      const auto u = static_cast<std::size_t>(i);
      bits[u] = static_cast<std::int32_t>((i * 7 + i / 3) % 3 == 0);
      av[u] = i % 5 == 0 ? std::nan("") : 0.5 * static_cast<double>(i);
      bv[u] = i % 4 == 0 ? -0.0 : -1.0 - static_cast<double>(i);
    }
    const Tensor cond = convert(Tensor::from_col_major({n}, bits), bool_);
    for (const DType dt : {f64, f32, c128, i64, bool_}) {
      const Tensor a = convert(Tensor::from_col_major({n}, av), dt);
      const Tensor b = convert(Tensor::from_col_major({n}, bv), dt);
      for (int mask = 0; mask < 8; ++mask) {
        const Tensor c_in =
            (mask & 1) ? cond : cond.slice(0, 0, 1, 1).reshape({}).broadcast_to(Shape{n});
        const Tensor a_in =
            (mask & 2) ? a : a.slice(0, n - 1, n, 1).reshape({}).broadcast_to(Shape{n});
        const Tensor b_in =
            (mask & 4) ? b : b.slice(0, 1 % n, 1 % n + 1, 1).reshape({}).broadcast_to(Shape{n});
        const Tensor got = where(c_in, a_in, b_in, n > 1000 ? two : one);
        const auto cv = convert(c_in, i32).contiguous().to_vector<std::int32_t>();
        const auto a128 = convert(a_in, c128).contiguous().to_vector<C>();
        const auto b128 = convert(b_in, c128).contiguous().to_vector<C>();
        const auto g128 = convert(got, c128).to_vector<C>();
        std::int64_t wrong = 0;
        for (std::size_t i = 0; i < g128.size(); ++i) {
          const C want = cv[i] != 0 ? a128[i] : b128[i];
          const bool same = std::memcmp(&want, &g128[i], sizeof(C)) == 0 ||
                            (std::isnan(want.real()) && std::isnan(g128[i].real()));
          wrong += !same;
        }
        EXPECT_EQ(wrong, 0) << "n " << n << " dtype " << name(dt) << " mask " << mask;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 4 * 5 * 8);
}

TEST(ElementwiseBinary, LargeParallelMatchesSerial) {
  CpuBackend serial({.num_threads = 1});
  CpuBackend two({.num_threads = 2});
  const std::int64_t n = std::int64_t{1} << 17;
  const Tensor x = linspace(-3.0, 3.0, n);
  const Tensor y = linspace(1.0, 2.0, n);
  for (BinaryOp op : {BinaryOp::Add, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Lt}) {
    // Compact same-shape operands: the flat path split in two.
    EXPECT_EQ(max_abs_diff(binary(op, x, y, two), binary(op, x, y, serial)), 0.0) << name(op);
    // Broadcast and negative strides: StridedPlan runs split mid-axis.
    const Tensor xm = x.reshape({256, 512});
    const Tensor row = y.slice(0, 0, 512).reshape({1, 512});
    const Tensor strided = tftest::strided_copy(xm);
    EXPECT_EQ(max_abs_diff(binary(op, strided, row, two), binary(op, xm, row, serial)), 0.0)
        << name(op);
  }
  const Tensor cond = lt(x, Tensor::scalar(0.5), serial);
  EXPECT_EQ(max_abs_diff(where(cond, x, y, two), where(cond, x, y, serial)), 0.0);
  // Checked against the reference loop as well, on a sample of positions.
  const auto s = add(x, y, two).to_vector<double>();
  const auto xv = x.to_vector<double>(), yv = y.to_vector<double>();
  for (std::size_t i = 0; i < s.size(); i += 4099) EXPECT_EQ(s[i], xv[i] + yv[i]);
}

// Compact f32/f64 add, sub, mul and div take the instruction-set clones
// (binary_kernels.cpp): one IEEE operation per element, so every element
// equals the scalar expression exactly, at every length (vector tails), in
// place, on offset views, and split across two threads.
TEST(ElementwiseBinary, CompactArithmeticIsExactPerElement) {
  CpuBackend two({.num_threads = 2});
  Generator gen(11);
  for (DType dt : {f64, f32}) {
    for (std::int64_t n : {1, 3, 7, 17, 1000, 70001}) {
      const Tensor big = rand({n + 1}, dt, gen);
      const Tensor a = big.slice(0, 1, std::nullopt);  // offset view, still compact
      const Tensor b = convert(add(rand({n}, dt, gen), full({n}, Scalar(0.5), dt), two), dt);
      for (BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div}) {
        const Tensor got = binary(op, a, b, two);
        ASSERT_EQ(got.dtype(), dt);
        const auto av = convert(a, f64).to_vector<double>(),
                   bv = convert(b, f64).to_vector<double>(),
                   gv = convert(got, f64).to_vector<double>();
        std::int64_t wrong = 0;
        for (std::size_t i = 0; i < gv.size(); ++i) {
          double want = 0;
          if (dt == f64) {
            want = op == BinaryOp::Add   ? av[i] + bv[i]
                   : op == BinaryOp::Sub ? av[i] - bv[i]
                   : op == BinaryOp::Mul ? av[i] * bv[i]
                                         : av[i] / bv[i];
          } else {
            const float x = static_cast<float>(av[i]), y = static_cast<float>(bv[i]);
            want = op == BinaryOp::Add   ? x + y
                   : op == BinaryOp::Sub ? x - y
                   : op == BinaryOp::Mul ? x * y
                                         : x / y;
          }
          if (gv[i] != want) ++wrong;
        }
        EXPECT_EQ(wrong, 0) << name(op) << " n=" << n << " f32? " << (dt == f32);
        // In place: out is the first operand (a copy of a).
        const Tensor acc = a.clone();
        binary_into(op, acc, b, acc, two);
        EXPECT_EQ(max_abs_diff(acc, got), 0.0) << name(op) << " n=" << n;
        // One operand a single value broadcast (x * 0.5), on either side.
        const Tensor c = full({}, Scalar(0.75), dt);
        const double cv = 0.75;
        const auto left = convert(binary(op, c, a, two), f64).to_vector<double>();
        const auto right = convert(binary(op, a, c, two), f64).to_vector<double>();
        std::int64_t wrong_one = 0;
        for (std::size_t i = 0; i < gv.size(); ++i) {
          const auto apply = [&](double x, double y) {
            if (dt == f32) {
              const float xf = static_cast<float>(x), yf = static_cast<float>(y);
              return static_cast<double>(op == BinaryOp::Add   ? xf + yf
                                         : op == BinaryOp::Sub ? xf - yf
                                         : op == BinaryOp::Mul ? xf * yf
                                                               : xf / yf);
            }
            return op == BinaryOp::Add   ? x + y
                   : op == BinaryOp::Sub ? x - y
                   : op == BinaryOp::Mul ? x * y
                                         : x / y;
          };
          if (left[i] != apply(cv, av[i]) || right[i] != apply(av[i], cv)) ++wrong_one;
        }
        EXPECT_EQ(wrong_one, 0) << name(op) << " n=" << n << " f32? " << (dt == f32);
      }
    }
  }
}

namespace {

/// x op y as one scalar IEEE operation of T.
template <class T>
T scalar_arith(BinaryOp op, T x, T y) {
  switch (op) {
    case BinaryOp::Add:
      return x + y;
    case BinaryOp::Sub:
      return x - y;
    case BinaryOp::Mul:
      return x * y;
    default:
      return x / y;
  }
}

/// Runs the streaming form on every op, each operand a run or a single value,
/// lengths around the vector and line sizes, the output at every element
/// offset within a 64-byte line, and in place; returns how many calls matched
/// the scalar expression bit for bit with nothing written outside the output.
template <class T>
std::int64_t check_stream_arith() {
  const T inf = std::numeric_limits<T>::infinity();
  const std::vector<T> specials = {T(0),
                                   -T(0),
                                   inf,
                                   -inf,
                                   std::numeric_limits<T>::quiet_NaN(),
                                   std::numeric_limits<T>::denorm_min(),
                                   std::numeric_limits<T>::max(),
                                   T(1)};
  constexpr std::int64_t kMax = 300, kLine = 64 / sizeof(T);
  std::vector<T> a(kMax), b(kMax);
  for (std::int64_t i = 0; i < kMax; ++i) {
    a[i] = i % 11 == 3 ? specials[i % specials.size()] : T((i * 7919) % 1013) / T(97) - T(5);
    b[i] = i % 13 == 5 ? specials[(i / 2) % specials.size()] : T((i * 104729) % 997) / T(89) - T(4);
  }
  const T sentinel = T(-12345.5);
  std::int64_t matched = 0;
  for (BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div}) {
    for (int mode = 0; mode < 4; ++mode) {  // run/run, one/run, run/one, in place
      const bool a_one = mode == 1, b_one = mode == 2;
      for (std::int64_t n : {0, 1, 5, 7, 8, 15, 16, 17, 31, 32, 33, 64, 100, 257}) {
        for (std::int64_t off = 0; off < kLine; ++off) {
          // 64-byte aligned storage, the output starting `off` elements in.
          std::vector<T> store(static_cast<std::size_t>(n + 3 * kLine), sentinel);
          const auto base = reinterpret_cast<std::uintptr_t>(store.data());
          T* o = store.data() + ((64 - base % 64) % 64) / sizeof(T) + off;
          const T* x = a.data();
          if (mode == 3) {
            std::copy(a.begin(), a.begin() + n, o);
            x = o;
          }
          std::vector<T> want(static_cast<std::size_t>(n));
          for (std::int64_t i = 0; i < n; ++i)
            want[i] = scalar_arith(op, a_one ? a[0] : a[i], b_one ? b[0] : b[i]);
          if (!cpu::stream_arith(op, x, a_one, b.data(), b_one, o, n)) continue;
          bool same = std::memcmp(o, want.data(), static_cast<std::size_t>(n) * sizeof(T)) == 0;
          for (const T* p = store.data(); p != store.data() + store.size(); ++p)
            if ((p < o || p >= o + n) && !(*p == sentinel)) same = false;
          if (same) ++matched;
          EXPECT_TRUE(same) << name(op) << " mode " << mode << " n " << n << " offset " << off;
        }
      }
    }
  }
  return matched;
}

}  // namespace

// The streaming form of compact add, sub, mul and div (cpu/stream_arith.hpp,
// for ops that move cpu::stream_threshold_bytes(threads) or more) against one scalar IEEE
// operation per element, bit for bit, with signed zeros, infinities, NaN,
// subnormals and division by zero among the values. A tail or head left
// unwritten, or a store past the end, fails it.
TEST(StreamArith, SameBitsAsTheScalarExpressionAtEveryOffset) {
  if (!cpu::stream_arith_available()) {
    // Then it declines every call, and binary_kernel takes the cached loop.
    std::vector<double> x(4, 1.0), o(4, 0.0);
    EXPECT_FALSE(cpu::stream_arith(BinaryOp::Add, x.data(), false, x.data(), false, o.data(), 4));
    EXPECT_EQ(o[0], 0.0);
    return;
  }
  const std::int64_t cases = 4 * 4 * 14;  // ops x operand modes x lengths
  EXPECT_EQ(check_stream_arith<double>(), cases * 8);
  EXPECT_EQ(check_stream_arith<float>(), cases * 16);
  // Other ops, two single values and an output not aligned to its element
  // are declined, with nothing written.
  std::vector<double> x(8, 2.0), o(9, 0.0);
  EXPECT_FALSE(cpu::stream_arith(BinaryOp::Pow, x.data(), false, x.data(), false, o.data(), 8));
  EXPECT_FALSE(cpu::stream_arith(BinaryOp::Add, x.data(), true, x.data(), true, o.data(), 8));
  auto* odd = reinterpret_cast<double*>(reinterpret_cast<char*>(o.data()) + 1);
  EXPECT_FALSE(cpu::stream_arith(BinaryOp::Add, x.data(), false, x.data(), false, odd, 4));
  EXPECT_EQ(o[0], 0.0);
}

// Through the op layer: ops that move the streaming threshold or more (here
// 1.5x it with two operand runs, 1x with one) take the streaming form, split
// across two threads; each half must equal the same op on that half alone
// (below the threshold: the cached loop), bit for bit, for a fresh output,
// an output view that starts mid-line, and a single-value operand.
TEST(ElementwiseBinary, StreamedOutputsEqualTheCachedLoop) {
  CpuBackend two({.num_threads = 2});
  // At most 2^23 + 3 elements (64 MiB a tensor): with a last-level cache
  // over 128 MiB some of these ops stay below the threshold (the kernel test
  // above still covers the streaming form itself).
  const std::int64_t n =
      std::min<std::int64_t>(static_cast<std::int64_t>(cpu::stream_threshold_bytes(2) / 16),
                             std::int64_t{1} << 23) +
      3;
  const std::int64_t half = n / 2;
  Generator gen(5);
  const Tensor a = rand({n}, f64, gen), b = add(rand({n}, f64, gen), Tensor::scalar(0.5), two);
  const Tensor c = full({}, Scalar(0.75), f64);
  const auto same_bits = [](const Tensor& x, const Tensor& y) {
    const Tensor cx = x.contiguous(), cy = y.contiguous();
    return cx.numel() == cy.numel() &&
           std::memcmp(cx.raw_data(), cy.raw_data(),
                       static_cast<std::size_t>(cx.numel()) * sizeof(double)) == 0;
  };
  const auto halves_match = [&](const Tensor& got, BinaryOp op, const Tensor& x, const Tensor& y) {
    const auto part = [&](const Tensor& t, std::int64_t lo, std::int64_t hi) {
      return t.rank() == 0 ? t : t.slice(0, lo, hi);
    };
    return same_bits(got.slice(0, 0, half), binary(op, part(x, 0, half), part(y, 0, half), two)) &&
           same_bits(got.slice(0, half, n), binary(op, part(x, half, n), part(y, half, n), two));
  };
  for (BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div}) {
    EXPECT_TRUE(halves_match(binary(op, a, b, two), op, a, b)) << name(op);
    EXPECT_TRUE(halves_match(binary(op, c, a, two), op, c, a)) << name(op);
    EXPECT_TRUE(halves_match(binary(op, a, c, two), op, a, c)) << name(op);
    const Tensor store = zeros({n + 1}, f64);
    const Tensor view = store.slice(0, 1, n + 1);  // 8 bytes past a line boundary
    binary_into(op, a, b, view, two);
    EXPECT_TRUE(halves_match(view, op, a, b)) << name(op);
    EXPECT_EQ(store.slice(0, 0, 1).to_vector<double>()[0], 0.0);
  }
}

namespace {

// Runs streamed_blocks over an output with guard elements either side, at
// the given offset (in elements) from a 64-byte line, and counts the
// elements that hold body's value; the guards must stay untouched.
template <class T>
std::int64_t check_streamed_blocks(std::int64_t offset, std::int64_t n) {
  const auto value = [](std::int64_t i) {
    if constexpr (std::is_same_v<T, bool>) {
      return i % 3 == 0;
    } else {
      return static_cast<T>(static_cast<int>(i % 97) + 1);
    }
  };
  constexpr std::int64_t kGuard = 64;
  std::vector<unsigned char> space((n + 2 * kGuard) * sizeof(T) + 128, 0xAB);
  auto* first = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<std::uintptr_t>(space.data()) + 63) / 64 * 64);
  T* out = reinterpret_cast<T*>(first) + kGuard + offset;
  const auto in = std::make_unique<T[]>(static_cast<std::size_t>(n) + 1);
  for (std::int64_t i = 0; i < n; ++i) in[static_cast<std::size_t>(i)] = value(i);
  cpu::streamed_blocks(
      out, n,
      [&](T* dst, std::int64_t s, std::int64_t m) {
        for (std::int64_t k = 0; k < m; ++k) dst[k] = in[static_cast<std::size_t>(s + k)];
      },
      in.get());
  std::int64_t matched = 0;
  for (std::int64_t i = 0; i < n; ++i) matched += out[i] == value(i) ? 1 : 0;
  const auto* before = reinterpret_cast<const unsigned char*>(out) - kGuard * sizeof(T);
  const auto* after = reinterpret_cast<const unsigned char*>(out + n);
  for (std::size_t k = 0; k < kGuard * sizeof(T); ++k)
    if (before[k] != 0xAB || after[k] != 0xAB) return -1;
  return matched;
}

template <class T>
void expect_streamed_blocks() {
  constexpr std::int64_t kLine = 64 / sizeof(T), kBlock = 4096 / sizeof(T);
  for (std::int64_t offset = 0; offset < kLine; ++offset) {
    for (const std::int64_t n : {std::int64_t{0}, std::int64_t{1}, kLine - 1, kLine, kLine + 1,
                                 kBlock - 1, kBlock, kBlock + kLine + 3, 3 * kBlock + 5}) {
      EXPECT_EQ(check_streamed_blocks<T>(offset, n), n)
          << sizeof(T) << "-byte elements, offset " << offset << ", n " << n;
    }
  }
}

}  // namespace

// The streamed form of any elementwise loop (cpu/stream_store.hpp): every
// element written once with the body's value, at every offset from a line
// and at lengths around the line and the 4 KiB block, and nothing outside
// the output.
TEST(StreamStore, BlocksWriteEveryElementAtEveryOffset) {
  if (!cpu::stream_stores_available()) {
    EXPECT_FALSE(cpu::streams_output(std::size_t{1} << 40));
    return;
  }
  expect_streamed_blocks<bool>();
  expect_streamed_blocks<float>();
  expect_streamed_blocks<double>();
  expect_streamed_blocks<c128_t>();
}

// stream_copy (cpu/stream_store.hpp) at every offset of source and
// destination from a 64-byte line and at lengths around a line: every byte
// copied, nothing outside the destination written.
TEST(StreamStore, CopyAtEveryAlignmentAndLength) {
  if (!cpu::stream_stores_available()) GTEST_SKIP() << "no streaming stores on this processor";
  constexpr std::size_t kGuard = 64;
  const std::size_t lengths[] = {0, 1, 17, 63, 64, 65, 127, 128, 129, 4096 + 13};
  std::int64_t checked = 0;
  for (std::size_t s_off = 0; s_off < 64; s_off += 3) {
    for (std::size_t d_off = 0; d_off < 64; d_off += 5) {
      for (const std::size_t n : lengths) {
        std::vector<unsigned char> src(n + 128), dst(n + 2 * kGuard + 128, 0xAB);
        auto* s = reinterpret_cast<unsigned char*>(
                      (reinterpret_cast<std::uintptr_t>(src.data()) + 63) / 64 * 64) +
                  s_off;
        auto* d = reinterpret_cast<unsigned char*>(
                      (reinterpret_cast<std::uintptr_t>(dst.data()) + kGuard + 63) / 64 * 64) +
                  d_off;
        for (std::size_t k = 0; k < n; ++k) s[k] = static_cast<unsigned char>((k * 131 + 7) % 251);
        cpu::stream_copy(s, d, n);
        cpu::stream_fence();
        std::size_t wrong = 0;
        for (std::size_t k = 0; k < n; ++k) wrong += d[k] != s[k] ? 1 : 0;
        for (std::size_t k = 1; k <= kGuard; ++k) wrong += *(d - k) != 0xAB ? 1 : 0;
        for (std::size_t k = 0; k < kGuard; ++k) wrong += d[n + k] != 0xAB ? 1 : 0;
        EXPECT_EQ(wrong, 0u) << "source offset " << s_off << ", destination offset " << d_off
                             << ", " << n << " bytes";
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 22 * 13 * 10);
}

// The block lies as far from the streams as it can, modulo 4 KiB.
TEST(StreamStore, BlockKeepsAwayFromTheStreams) {
  const auto gap = [](std::size_t at, std::uintptr_t s) {
    const std::size_t d = (s - at) % 4096;
    return std::min(d, 4096 - d);
  };
  const std::uintptr_t one[] = {0x7f0000001000};
  EXPECT_EQ(cpu::detail_stream::block_residue(one, 1), 2048u);
  const std::uintptr_t two[] = {0x7f0000001040, 0x7f0000002840};
  const std::size_t at = cpu::detail_stream::block_residue(two, 2);
  EXPECT_EQ(at % 64, 0u);
  EXPECT_GE(std::min(gap(at, two[0]), gap(at, two[1])), 1024u - 64u);
  const std::uintptr_t three[] = {0x1000, 0x1400, 0x1c00};
  const std::size_t at3 = cpu::detail_stream::block_residue(three, 3);
  EXPECT_EQ(std::min({gap(at3, three[0]), gap(at3, three[1]), gap(at3, three[2])}), 1024u);
}

// Through the op layer: light elementwise ops (negation, comparison,
// selection, integer and complex arithmetic, clamp) that move the streaming
// threshold or more stream their output, split across two threads; each half
// must equal the same op on that half alone (below the threshold: the cached
// loop), bit for bit.
TEST(ElementwiseBinary, LightOpsStreamedEqualTheCachedLoop) {
  CpuBackend two({.num_threads = 2});
  // Unary f64 ops move 16 bytes an element: n is past the threshold
  // (streams_output: 1.5x stream_threshold_bytes(2)) for them and for every
  // op below, capped like the test above; each half of an f64 op is below it.
  const std::int64_t n =
      std::min<std::int64_t>(static_cast<std::int64_t>(cpu::stream_threshold_bytes(2) / 32 * 3),
                             std::int64_t{1} << 23) +
      5;
  const std::int64_t half = n / 2;
  if (cpu::stream_stores_available() && n < (std::int64_t{1} << 23)) {
    // The premise: the whole op streams, each half alone does not.
    ASSERT_TRUE(cpu::streams_output(static_cast<std::size_t>(n) * 16));
    ASSERT_FALSE(cpu::streams_output(static_cast<std::size_t>(n - half) * 16));
  }
  Generator gen(7);
  const Tensor a = randn({n}, f64, gen), b = randn({n}, f64, gen);
  const Tensor ai = arange(n, i64), bi = mul(arange(n, i64), Tensor::scalar(std::int64_t{3}), two);
  const Tensor z = complex(a, b, two), w = complex(b, a, two);
  const Tensor cond = lt(a, b, two);
  const auto same_bits = [](const Tensor& x, const Tensor& y) {
    const Tensor cx = x.contiguous(), cy = y.contiguous();
    return cx.dtype() == cy.dtype() && cx.numel() == cy.numel() &&
           std::memcmp(cx.raw_data(), cy.raw_data(),
                       static_cast<std::size_t>(cx.numel()) * itemsize(cx.dtype())) == 0;
  };
  // f(inputs) against f on each half of the inputs.
  const auto halves_match = [&](const std::function<Tensor(const std::vector<Tensor>&)>& f,
                                const std::vector<Tensor>& ins) {
    const auto part = [&](std::int64_t lo, std::int64_t hi) {
      std::vector<Tensor> p;
      for (const Tensor& t : ins) p.push_back(t.rank() == 0 ? t : t.slice(0, lo, hi));
      return p;
    };
    const Tensor got = f(ins);
    return same_bits(got.slice(0, 0, half), f(part(0, half))) &&
           same_bits(got.slice(0, half, n), f(part(half, n)));
  };
  const auto un = [&](UnaryOp op) {
    return [&two, op](const std::vector<Tensor>& t) { return unary(op, t[0], two); };
  };
  const auto bin = [&](BinaryOp op) {
    return [&two, op](const std::vector<Tensor>& t) { return binary(op, t[0], t[1], two); };
  };
  for (UnaryOp op : {UnaryOp::Neg, UnaryOp::Abs, UnaryOp::Square, UnaryOp::Sign, UnaryOp::IsNan})
    EXPECT_TRUE(halves_match(un(op), {a})) << name(op);
  EXPECT_TRUE(halves_match(un(UnaryOp::Conj), {z}));
  for (BinaryOp op : {BinaryOp::Lt, BinaryOp::Maximum, BinaryOp::Copysign})
    EXPECT_TRUE(halves_match(bin(op), {a, b})) << name(op);
  for (BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Eq})
    EXPECT_TRUE(halves_match(bin(op), {ai, bi})) << name(op);
  EXPECT_TRUE(halves_match(bin(BinaryOp::Mul), {z, w}));
  const auto sel = [&two](const std::vector<Tensor>& t) { return where(t[0], t[1], t[2], two); };
  EXPECT_TRUE(halves_match(sel, {cond, a, b}));
  EXPECT_TRUE(halves_match(sel, {cond, a, Tensor::scalar(0.5)}));
  EXPECT_TRUE(halves_match(
      [&two](const std::vector<Tensor>& t) { return clamp(t[0], Scalar(-0.5), Scalar(0.5), two); },
      {a}));
  // An output view that starts mid-line, with the element before it kept.
  const Tensor store = zeros({n + 1}, f64);
  const Tensor view = store.slice(0, 1, n + 1);
  unary_into(UnaryOp::Neg, a, view, two);
  EXPECT_TRUE(same_bits(view.slice(0, 0, half), unary(UnaryOp::Neg, a.slice(0, 0, half), two)));
  EXPECT_TRUE(same_bits(view.slice(0, half, n), unary(UnaryOp::Neg, a.slice(0, half, n), two)));
  EXPECT_EQ(store.slice(0, 0, 1).to_vector<double>()[0], 0.0);
}
