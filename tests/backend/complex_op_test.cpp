// BinaryOp::Complex (complex(re, im, backend)): parts stored exactly, also
// when infinite or NaN, against a naive std::complex reference loop, with
// broadcasting, promotion, strides, rank 0, zero size, the *_into form, the
// parallel path and the dtype errors.

#include <cmath>
#include <complex>
#include <limits>

#include "test_util.hpp"

using namespace tenferro;

namespace {

using C = c128_t;
constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::nan("");

/// Both parts equal bit for bit in meaning: same value and sign, NaN matches NaN.
bool same_part(double got, double want) {
  if (std::isnan(want)) return std::isnan(got);
  return got == want && std::signbit(got) == std::signbit(want);
}

/// got == std::complex(re, im) elementwise, re and im broadcast to got's shape.
void expect_complex_of(const Tensor& got, const Tensor& re, const Tensor& im,
                       const std::string& what) {
  ASSERT_EQ(got.shape(), broadcast_shapes(re.shape(), im.shape())) << what;
  const Tensor re_b = re.broadcast_to(got.shape()), im_b = im.broadcast_to(got.shape());
  for (std::int64_t i = 0; i < got.numel(); ++i) {
    const auto idx = tftest::unravel(i, got.shape());
    const C g = tftest::element<C>(got, idx);
    const double r = tftest::element<double>(re_b, idx), m = tftest::element<double>(im_b, idx);
    EXPECT_TRUE(same_part(g.real(), r) && same_part(g.imag(), m))
        << what << " at " << i << ": got " << g << " want (" << r << "," << m << ")";
  }
}

Tensor col(std::vector<double> v) {
  const auto n = static_cast<std::int64_t>(v.size());
  return Tensor::from_col_major({n, 1}, std::move(v));
}
Tensor row(std::vector<double> v) {
  const auto n = static_cast<std::int64_t>(v.size());
  return Tensor::from_col_major({1, n}, std::move(v));
}

}  // namespace

TEST(ComplexOp, NameAndDtypeRules) {
  EXPECT_EQ(name(BinaryOp::Complex), "complex");
  EXPECT_EQ(binary_result_dtype(BinaryOp::Complex, f64, f64), c128);
  EXPECT_EQ(binary_result_dtype(BinaryOp::Complex, f32, f32), c64);
  EXPECT_EQ(binary_result_dtype(BinaryOp::Complex, f32, f64), c128);
  EXPECT_EQ(binary_compute_dtype(BinaryOp::Complex, f32, f64), f64);
  // Integers and bool compute in f64 like atan2.
  EXPECT_EQ(binary_result_dtype(BinaryOp::Complex, i64, i64), c128);
  EXPECT_EQ(binary_result_dtype(BinaryOp::Complex, bool_, bool_), c128);
  EXPECT_EQ(binary_result_dtype(BinaryOp::Complex, i32, f64), c128);
  EXPECT_EQ(binary_result_dtype(BinaryOp::Complex, i64, f32),
            complex_dtype(binary_result_dtype(BinaryOp::Atan2, i64, f32)));
  for (DType z : {c64, c128}) {
    EXPECT_TF_ERROR(binary_result_dtype(BinaryOp::Complex, z, f64), ErrorKind::DTypeMismatch);
    EXPECT_TF_ERROR(binary_result_dtype(BinaryOp::Complex, f32, z), ErrorKind::DTypeMismatch);
  }
}

TEST(ComplexOp, NonFinitePartsAreExact) {
  CpuBackend cpu({.num_threads = 1});
  // Every pair of {finite, +-inf, NaN, -0}: re + im * i would give NaN for
  // inf * 0 and lose -0.
  const std::vector<double> v = {1.5, kInf, -kInf, kNaN, -0.0, 0.0};
  const Tensor re = col(v), im = row(v);
  const Tensor z = complex(re, im, cpu);
  EXPECT_EQ(z.dtype(), c128);
  EXPECT_EQ(z.shape(), Shape({6, 6}));
  expect_complex_of(z, re, im, "f64");
  const C one_inf = tftest::element<C>(z, {0, 1});
  EXPECT_EQ(one_inf.real(), 1.5);
  EXPECT_EQ(one_inf.imag(), kInf);
  // f32 -> c64, exact as well.
  Tensor ref = zeros({6, 1}, f32), imf = zeros({1, 6}, f32);
  Tensor::copy_into(re, ref);
  Tensor::copy_into(im, imf);
  const Tensor zf = complex(ref, imf, cpu);
  EXPECT_EQ(zf.dtype(), c64);
  expect_complex_of(zf, re, im, "f32");
  // The generic entry point and the backend-free factory agree.
  const Tensor rb = re.broadcast_to(z.shape()), ib = im.broadcast_to(z.shape());
  expect_complex_of(binary(BinaryOp::Complex, rb, ib, cpu), re, im, "binary()");
  expect_complex_of(complex(Tensor(rb), Tensor(ib)), re, im, "tensor.hpp complex");
}

TEST(ComplexOp, BroadcastStridesRankZeroAndZeroSize) {
  CpuBackend cpu({.num_threads = 1});
  const Tensor re = col({0.5, -1.0, 2.0}), im = row({3.0, -0.25, 0.0, 7.0});
  const Tensor z = complex(re, im, cpu);
  expect_complex_of(z, re, im, "broadcast");
  // Reversed roles, negative strides, compact same-shape operands (flat path).
  expect_complex_of(complex(im, re, cpu), im, re, "swapped");
  expect_complex_of(complex(tftest::strided_copy(re), tftest::strided_copy(im), cpu), re, im,
                    "strided");
  const Tensor full_re = re.broadcast_to(z.shape()).contiguous();
  const Tensor full_im = im.broadcast_to(z.shape()).contiguous();
  expect_complex_of(complex(full_re, full_im, cpu), re, im, "flat");
  // A strided view read through a transpose.
  expect_complex_of(complex(full_re.transpose(), full_im.transpose(), cpu), full_re.transpose(),
                    full_im.transpose(), "transposed");
  // Rank 0, and rank 0 against a matrix.
  const Tensor s = complex(Tensor::scalar(2.0), Tensor::scalar(-kInf), cpu);
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.item().to<C>(), C(2.0, -kInf));
  expect_complex_of(complex(Tensor::scalar(kNaN), full_im, cpu), Tensor::scalar(kNaN), full_im,
                    "rank0");
  // Zero size.
  const Tensor e = complex(zeros({0, 1}), zeros({1, 3}), cpu);
  EXPECT_EQ(e.shape(), Shape({0, 3}));
  EXPECT_EQ(e.dtype(), c128);
}

// The primitive promotes mixed and integer parts; complex(re, im) takes one
// real floating dtype, as torch.complex does.
TEST(ComplexOp, PromotionOfMixedAndIntegerParts) {
  CpuBackend cpu({.num_threads = 1});
  const Tensor i = Tensor::from_col_major({3}, std::vector<std::int64_t>{-2, 0, 5});
  const Tensor f = Tensor::from_col_major({3}, std::vector<float>{0.5f, -1.5f, 1e30f});
  const Tensor d = Tensor::from_col_major({3}, std::vector<double>{0.25, kInf, -3.0});
  const Tensor zi = binary(BinaryOp::Complex, i, d, cpu);
  EXPECT_EQ(zi.dtype(), c128);
  EXPECT_EQ(zi.to_vector<C>(), (std::vector<C>{{-2, 0.25}, {0, kInf}, {5, -3}}));
  const Tensor zf = binary(BinaryOp::Complex, d, f, cpu);
  EXPECT_EQ(zf.dtype(), c128);
  EXPECT_EQ(zf.to_vector<C>()[2], C(-3.0, static_cast<double>(1e30f)));
  const Tensor b = ne(Tensor::from_col_major({3}, std::vector<std::int64_t>{1, 0, 1}),
                      Tensor::scalar(std::int64_t{0}), cpu);
  ASSERT_EQ(b.dtype(), bool_);
  EXPECT_EQ(binary(BinaryOp::Complex, b, b, cpu).to_vector<C>(),
            (std::vector<C>{{1, 1}, {0, 0}, {1, 1}}));
  EXPECT_TF_ERROR(complex(i, d, cpu), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(complex(d, f, cpu), ErrorKind::DTypeMismatch);
}

TEST(ComplexOp, IntoAndErrors) {
  CpuBackend cpu({.num_threads = 1});
  const Tensor re = col({1.0, 2.0}), im = row({kInf, -1.0, 0.5});
  // into a strided (negative-stride) output
  Tensor out = tftest::strided_copy(zeros({2, 3}, c128));
  binary_into(BinaryOp::Complex, re, im, out, cpu);
  expect_complex_of(out, re, im, "into");
  EXPECT_TF_ERROR(binary_into(BinaryOp::Complex, re, im, zeros({2, 3}, f64), cpu),
                  ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(binary_into(BinaryOp::Complex, re, im, zeros({2, 3}, c64), cpu),
                  ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(binary_into(BinaryOp::Complex, re, im, zeros({3, 2}, c128), cpu),
                  ErrorKind::ShapeMismatch);
  // Complex operands, undefined operands, shapes that do not broadcast.
  const Tensor z = Tensor::from_col_major({2}, std::vector<C>{{1, 1}, {0, 2}});
  EXPECT_TF_ERROR(complex(z, zeros({2}), cpu), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(complex(zeros({2}), z, cpu), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(complex(Tensor(), zeros({2}), cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(complex(zeros({2}), Tensor(), cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(complex(zeros({2}), zeros({3}), cpu), ErrorKind::ShapeMismatch);
}

TEST(ComplexOp, LargeParallelMatchesSerial) {
  CpuBackend serial({.num_threads = 1});
  CpuBackend two({.num_threads = 2});
  const std::int64_t n = std::int64_t{1} << 17;
  const Tensor x = linspace(-3.0, 3.0, n), y = linspace(1.0, 2.0, n);
  const Tensor z = complex(x, y, two);
  const auto zv = z.to_vector<C>();
  const auto xv = x.to_vector<double>(), yv = y.to_vector<double>();
  for (std::size_t i = 0; i < zv.size(); i += 4099) EXPECT_EQ(zv[i], C(xv[i], yv[i]));
  EXPECT_EQ(max_abs_diff(z, complex(x, y, serial)), 0.0);
  // Broadcast and negative strides: StridedPlan runs split across threads.
  const Tensor xm = tftest::strided_copy(x.reshape({256, 512}));
  const Tensor r = y.slice(0, 0, 512).reshape({1, 512});
  EXPECT_EQ(max_abs_diff(complex(xm, r, two), complex(x.reshape({256, 512}), r, serial)), 0.0);
}
