// The FFT family's values against a naive O(n^2) DFT: odd and prime lengths,
// every norm mode, n padding and truncation, axes, batches, zero-size and
// strided inputs, round trips, the real transforms with even and odd n, the
// shifts and frequencies, and the typed errors.

#include "tenferro/fft/fft.hpp"

#include <cmath>
#include <complex>
#include <numbers>

#include "test_util.hpp"

using namespace tenferro;
using cd = std::complex<double>;

namespace {

// sum_j x[j] exp(sign 2 pi i j k / n) * scale over axis 0 of an [m, b]
// column-major signal, zero-padded or truncated to n first.
std::vector<cd> naive_dft(const std::vector<cd>& x, std::int64_t m, std::int64_t b, std::int64_t n,
                          int sign, double scale) {
  std::vector<cd> out(static_cast<std::size_t>(n * b));
  for (std::int64_t q = 0; q < b; ++q) {
    for (std::int64_t k = 0; k < n; ++k) {
      cd acc = 0;
      for (std::int64_t j = 0; j < std::min(m, n); ++j) {
        const double ang = sign * 2 * std::numbers::pi * static_cast<double>(j * k) / n;
        acc += x[j + m * q] * cd(std::cos(ang), std::sin(ang));
      }
      out[k + n * q] = acc * scale;
    }
  }
  return out;
}

std::vector<cd> signal(std::int64_t count, double seed = 0.3) {
  std::vector<cd> v(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i)
    v[i] = cd(std::sin(1.7 * i + seed), std::cos(0.9 * i * i - seed));
  return v;
}

std::vector<double> real_signal(std::int64_t count) {
  std::vector<double> v(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) v[i] = std::sin(1.3 * i + 0.2) + 0.1 * i;
  return v;
}

void expect_close(const std::vector<cd>& got, const std::vector<cd>& want, double tol = 1e-10) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i].real(), want[i].real(), tol) << "at " << i;
    EXPECT_NEAR(got[i].imag(), want[i].imag(), tol) << "at " << i;
  }
}

class FftValues : public ::testing::Test {
 protected:
  CpuBackend cpu{CpuBackendOptions{.num_threads = 1}};
};

}  // namespace

TEST_F(FftValues, FftMatchesNaiveDftForOddAndPrimeLengthsInEveryNormMode) {
  for (const std::int64_t m : {1, 2, 5, 7, 12, 13}) {
    const std::int64_t b = 3;
    const auto x = signal(m * b);
    const Tensor X = Tensor::from_col_major({m, b}, x);
    for (const char* norm : {"backward", "forward", "ortho"}) {
      const double fwd = std::string(norm) == "backward"  ? 1.0
                         : std::string(norm) == "forward" ? 1.0 / m
                                                          : 1.0 / std::sqrt(double(m));
      const double inv = std::string(norm) == "backward"  ? 1.0 / m
                         : std::string(norm) == "forward" ? 1.0
                                                          : 1.0 / std::sqrt(double(m));
      expect_close(fft::fft(X, std::nullopt, 0, norm, cpu).to_vector<cd>(),
                   naive_dft(x, m, b, m, -1, fwd));
      expect_close(fft::ifft(X, std::nullopt, 0, norm, cpu).to_vector<cd>(),
                   naive_dft(x, m, b, m, +1, inv));
    }
  }
}

TEST_F(FftValues, NPadsWithZerosOrTruncates) {
  const std::int64_t m = 6, b = 2;
  const auto x = signal(m * b);
  const Tensor X = Tensor::from_col_major({m, b}, x);
  for (const std::int64_t n : {3, 6, 11}) {
    const Tensor y = fft::fft(X, n, 0, "backward", cpu);
    EXPECT_EQ(y.shape(), (Shape{n, b}));
    expect_close(y.to_vector<cd>(), naive_dft(x, m, b, n, -1, 1.0));
  }
}

TEST_F(FftValues, AxesAndNegativeAxes) {
  // [b, m]: transform axis 1 (also as -1) equals transposing to [m, b].
  const std::int64_t m = 5, b = 3;
  const auto x = signal(m * b);
  const Tensor Xt = Tensor::from_col_major({b, m}, [&] {
    std::vector<cd> t(x.size());
    for (std::int64_t j = 0; j < m; ++j)
      for (std::int64_t q = 0; q < b; ++q) t[q + b * j] = x[j + m * q];
    return t;
  }());
  const auto want = naive_dft(x, m, b, m, -1, 1.0);
  for (const std::int64_t axis : {1, -1}) {
    const auto got = fft::fft(Xt, std::nullopt, axis, "backward", cpu).to_vector<cd>();
    for (std::int64_t j = 0; j < m; ++j)
      for (std::int64_t q = 0; q < b; ++q) {
        EXPECT_NEAR(got[q + b * j].real(), want[j + m * q].real(), 1e-10);
        EXPECT_NEAR(got[q + b * j].imag(), want[j + m * q].imag(), 1e-10);
      }
  }
}

TEST_F(FftValues, Fft2IsTwoOneDimensionalTransforms) {
  const Tensor X = Tensor::from_col_major({4, 3, 2}, signal(24));
  const Tensor two = fft::fftn(X, {}, {0, 1}, "ortho", cpu);
  const Tensor seq =
      fft::fft(fft::fft(X, std::nullopt, 0, "ortho", cpu), std::nullopt, 1, "ortho", cpu);
  expect_close(two.to_vector<cd>(), seq.to_vector<cd>());
  // ifftn over every axis inverts fftn over every axis.
  const Tensor back = fft::ifftn(fft::fftn(X, {}, {}, "backward", cpu), {}, {}, "backward", cpu);
  expect_close(back.to_vector<cd>(), X.to_vector<cd>());
}

TEST_F(FftValues, RealTransformsWithEvenAndOddLengths) {
  for (const std::int64_t n : {1, 4, 7, 10, 11}) {
    const std::int64_t b = 2;
    const auto xr = real_signal(n * b);
    std::vector<cd> xc(xr.begin(), xr.end());
    const Tensor X = Tensor::from_col_major({n, b}, xr);
    const Tensor R = fft::rfft(X, std::nullopt, 0, "backward", cpu);
    const std::int64_t h = n / 2 + 1;
    ASSERT_EQ(R.shape(), (Shape{h, b}));
    const auto full = naive_dft(xc, n, b, n, -1, 1.0);
    const auto half = R.to_vector<cd>();
    for (std::int64_t q = 0; q < b; ++q)
      for (std::int64_t k = 0; k < h; ++k) {
        EXPECT_NEAR(half[k + h * q].real(), full[k + n * q].real(), 1e-10);
        EXPECT_NEAR(half[k + h * q].imag(), full[k + n * q].imag(), 1e-10);
      }
    // irfft with the original n recovers the signal (odd n needs it).
    const auto back = fft::irfft(R, n, 0, "backward", cpu).to_vector<double>();
    ASSERT_EQ(back.size(), xr.size());
    for (std::size_t i = 0; i < xr.size(); ++i) EXPECT_NEAR(back[i], xr[i], 1e-10);
    // ihfft / hfft are the conjugate pair.
    const auto ih = fft::ihfft(X, std::nullopt, 0, "backward", cpu).to_vector<cd>();
    for (std::size_t i = 0; i < ih.size(); ++i)
      EXPECT_NEAR(std::abs(ih[i] - std::conj(half[i]) / double(n)), 0, 1e-10);
    const auto hb =
        fft::hfft(fft::ihfft(X, std::nullopt, 0, "backward", cpu), n, 0, "backward", cpu)
            .to_vector<double>();
    for (std::size_t i = 0; i < xr.size(); ++i) EXPECT_NEAR(hb[i], xr[i], 1e-10);
  }
  // irfft's default length is 2 (m - 1).
  const Tensor H = Tensor::from_col_major({4}, signal(4));
  EXPECT_EQ(fft::irfft(H, std::nullopt, 0, "backward", cpu).shape(), (Shape{6}));
}

TEST_F(FftValues, RfftnHalvesTheFirstListedAxisAndInverts) {
  const auto xr = real_signal(5 * 4 * 2);
  const Tensor X = Tensor::from_col_major({5, 4, 2}, xr);
  const Tensor R = fft::rfftn(X, {}, {1, 0}, "backward", cpu);
  EXPECT_EQ(R.shape(), (Shape{5, 3, 2}));
  const Tensor back = fft::irfftn(R, {4, 5}, {1, 0}, "backward", cpu);
  const auto b = back.to_vector<double>();
  ASSERT_EQ(b.size(), xr.size());
  for (std::size_t i = 0; i < xr.size(); ++i) EXPECT_NEAR(b[i], xr[i], 1e-10);
  // The complex transform's non-negative half along axis 1.
  std::vector<cd> xc(xr.begin(), xr.end());
  const auto full =
      fft::fftn(Tensor::from_col_major({5, 4, 2}, xc), {}, {0, 1}, "backward", cpu).to_vector<cd>();
  const auto half = R.to_vector<cd>();
  for (std::int64_t q = 0; q < 2; ++q)
    for (std::int64_t j = 0; j < 3; ++j)
      for (std::int64_t i = 0; i < 5; ++i)
        EXPECT_NEAR(std::abs(half[i + 5 * (j + 3 * q)] - full[i + 5 * (j + 4 * q)]), 0, 1e-10);
}

TEST_F(FftValues, SinglePrecisionAndRealPromotion) {
  std::vector<float> xf{1, 2, 3, 4, 5};
  const Tensor y = fft::fft(Tensor::from_col_major({5}, xf), std::nullopt, 0, "backward", cpu);
  EXPECT_EQ(y.dtype(), DType::C64);
  const auto v = y.to_vector<std::complex<float>>();
  EXPECT_NEAR(v[0].real(), 15.0f, 1e-5);
  EXPECT_NEAR(v[1].real(), -2.5f, 1e-5);
  EXPECT_NEAR(v[1].imag(), 3.440955f, 1e-5);
  EXPECT_EQ(fft::rfft(Tensor::from_col_major({5}, xf), std::nullopt, 0, "backward", cpu).dtype(),
            DType::C64);
}

TEST_F(FftValues, ZeroSizeBatchesAndStridedInputs) {
  const Tensor empty = Tensor::from_col_major({4, 0}, std::vector<cd>{});
  EXPECT_EQ(fft::fft(empty, std::nullopt, 0, "backward", cpu).shape(), (Shape{4, 0}));
  EXPECT_EQ(fft::rfft(Tensor::from_col_major({4, 0}, std::vector<double>{}), std::nullopt, 0,
                      "backward", cpu)
                .shape(),
            (Shape{3, 0}));
  const Tensor X = Tensor::from_col_major({6, 3}, signal(18));
  const Tensor S = tftest::strided_copy(X);
  ASSERT_FALSE(S.is_contiguous());
  expect_close(fft::fft(S, std::nullopt, 0, "backward", cpu).to_vector<cd>(),
               fft::fft(X, std::nullopt, 0, "backward", cpu).to_vector<cd>());
  // Strided real input (read in place by r2c), over both axes, and a
  // transposed view; the input is left unchanged.
  const Tensor Rx = Tensor::from_col_major({6, 3}, real_signal(18));
  const Tensor Rs = tftest::strided_copy(Rx);
  expect_close(fft::rfftn(Rs, {}, {1, 0}, "ortho", cpu).to_vector<cd>(),
               fft::rfftn(Rx, {}, {1, 0}, "ortho", cpu).to_vector<cd>());
  EXPECT_EQ(Rs.to_vector<double>(), Rx.to_vector<double>());
  const Tensor T = X.transpose(0, 1);
  ASSERT_FALSE(T.is_contiguous());
  const Tensor Tc = Tensor::from_col_major({3, 6}, T.to_vector<cd>());
  expect_close(fft::fftn(T, {}, {0, 1}, "backward", cpu).to_vector<cd>(),
               fft::fftn(Tc, {}, {0, 1}, "backward", cpu).to_vector<cd>());
  EXPECT_EQ(fft::irfft(T, 4, 1, "backward", cpu).to_vector<double>(),
            fft::irfft(Tc, 4, 1, "backward", cpu).to_vector<double>());
}

TEST_F(FftValues, ShiftsAndFrequencies) {
  const auto f = fft::fftfreq(5, 0.5).to_vector<double>();
  const std::vector<double> want{0, 0.4, 0.8, -0.8, -0.4};
  ASSERT_EQ(f.size(), want.size());
  for (std::size_t i = 0; i < f.size(); ++i) EXPECT_NEAR(f[i], want[i], 1e-12);
  const auto rf = fft::rfftfreq(6).to_vector<double>();
  EXPECT_EQ(rf.size(), 4u);
  EXPECT_NEAR(rf[3], 0.5, 1e-12);
  EXPECT_EQ(fft::fftfreq(4, 1.0, DType::F32).dtype(), DType::F32);
  const Tensor v = Tensor::from_col_major({5}, std::vector<double>{0, 1, 2, -2, -1});
  EXPECT_EQ(fft::fftshift(v, {}, cpu).to_vector<double>(), (std::vector<double>{-2, -1, 0, 1, 2}));
  EXPECT_EQ(fft::ifftshift(fft::fftshift(v, {}, cpu), {}, cpu).to_vector<double>(),
            v.to_vector<double>());
  const Tensor e = Tensor::from_col_major({4}, std::vector<double>{0, 1, -2, -1});
  EXPECT_EQ(fft::fftshift(e, {0}, cpu).to_vector<double>(), (std::vector<double>{-2, -1, 0, 1}));
}

TEST_F(FftValues, TypedErrors) {
  const Tensor X = Tensor::from_col_major({4}, signal(4));
  EXPECT_TF_ERROR(fft::fft(X, 0, 0, "backward", cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(fft::fft(X, -3, 0, "backward", cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(fft::fft(X, std::nullopt, 1, "backward", cpu), ErrorKind::AxisOutOfBounds);
  EXPECT_TF_ERROR(fft::fft(X, std::nullopt, 0, "bogus", cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(fft::rfft(X, std::nullopt, 0, "backward", cpu), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(fft::fft(Tensor::from_col_major({3}, std::vector<std::int32_t>{1, 2, 3}),
                           std::nullopt, 0, "backward", cpu),
                  ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(fft::fftn(X, {4, 4}, {}, "backward", cpu), ErrorKind::InvalidArgument);
  const Tensor M = Tensor::from_col_major({2, 2}, signal(4));
  EXPECT_TF_ERROR(fft::fftn(M, {}, {0, -2}, "backward", cpu), ErrorKind::DuplicateAxis);
  EXPECT_TF_ERROR(
      fft::irfft(Tensor::from_col_major({1}, signal(1)), std::nullopt, 0, "backward", cpu),
      ErrorKind::InvalidArgument);  // default n = 0
  EXPECT_TF_ERROR(fft::fftfreq(-1), ErrorKind::InvalidArgument);
  // n = -1 is not "the default length" in the one-axis forms (issue 52).
  EXPECT_TF_ERROR(fft::fft(X, -1, 0, "backward", cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(fft::irfft(X, -1, 0, "backward", cpu), ErrorKind::InvalidArgument);
  // Frequency grids: past the element limit InvalidArgument, past the heap
  // OutOfMemory; never a std::bad_alloc or std::length_error.
  EXPECT_TF_ERROR(fft::rfftfreq(std::int64_t{1} << 61), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(fft::fftfreq((std::int64_t{1} << 59) + 1), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(fft::fftfreq(std::int64_t{1} << 50), ErrorKind::OutOfMemory);
  EXPECT_EQ(fft::rfftfreq(1).to_vector<double>(), std::vector<double>{0.0});
  EXPECT_EQ(fft::fftfreq(0).numel(), 0);
  // A length no tensor can have is InvalidArgument in every tier, before the
  // zero padding tries to allocate (it was OutOfMemory directly and eagerly).
  const std::int64_t huge = (std::int64_t{1} << 59) + 1;
  const Tensor one = Tensor::from_col_major({1}, signal(1));
  EXPECT_TF_ERROR(fft::irfft(one, huge, 0, "forward", cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(fft::fft(one, huge, 0, "forward", cpu), ErrorKind::InvalidArgument);
  auto rt = EagerRuntime::make_cpu({.num_threads = 1});
  EXPECT_TF_ERROR(fft::irfft(rt->tensor(one), huge), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(fft::irfft(placeholder(c128, {1}), huge), ErrorKind::InvalidArgument);
}

TEST_F(FftValues, TypedErrorsOfTheInPlaceFormAndOfDegenerateCalls) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  // A strided (negative-stride) view that owns its storage alone: refused,
  // handed back unchanged.
  const Tensor X = Tensor::from_col_major({6, 3}, signal(18));
  EagerTensor s = rt->tensor(tftest::strided_copy(X));
  ASSERT_FALSE(s.value().is_contiguous());
  EXPECT_TF_ERROR((void)fft::fft_inplace(std::move(s)), ErrorKind::InvalidArgument);
  ASSERT_TRUE(s.defined());
  EXPECT_EQ(s.value().to_vector<cd>(), X.to_vector<cd>());
  EagerTensor a = rt->tensor(X);
  EXPECT_TF_ERROR((void)fft::fft_inplace(std::move(a), 2), ErrorKind::AxisOutOfBounds);
  EagerTensor b = rt->tensor(X);
  EXPECT_TF_ERROR((void)fft::fft_inplace(std::move(b), 0, "both"), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR((void)fft::fft_inplace(EagerTensor{}), ErrorKind::InvalidArgument);
  // A transform that took the value leaves the moved-from handle undefined.
  EagerTensor c = rt->tensor(Tensor::from_col_major({6, 3}, signal(18)));  // its own storage
  const EagerTensor y = fft::fft_inplace(std::move(c));
  EXPECT_FALSE(c.defined());  // NOLINT(bugprone-use-after-move): the contract under test
  EXPECT_EQ(y.shape(), X.shape());
  // Undefined and rank-0 inputs, too many lengths, a length per axis.
  EXPECT_TF_ERROR(fft::fft(EagerTensor{}), ErrorKind::InvalidArgument);
  const Tensor scalar = Tensor::from_col_major({}, std::vector<cd>{cd(1, 2)});
  EXPECT_TF_ERROR(fft::fftn(scalar, {}, {}, "backward", cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(fft::fftn(X, {4, 4, 4}, {}, "backward", cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(fft::rfftn(Tensor::from_col_major({4}, std::vector<double>(4, 1.0)), {4, 2}, {0},
                             "backward", cpu),
                  ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(fft::ifft2(X, {}, {0, 3}, "backward", cpu), ErrorKind::AxisOutOfBounds);
  EXPECT_TF_ERROR(fft::fftfreq(4, 1.0, DType::C64), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(fft::fftshift(X, {1, 1}, cpu), ErrorKind::DuplicateAxis);
}
