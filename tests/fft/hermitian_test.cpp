// hfft2 / hfftn and ihfft2 / ihfftn: against a naive inverse DFT, their
// compositions (hfftn = N irfftn(conj x), ihfftn = conj(rfftn x) / N under
// "backward"), round trips, axis orders, padding, every tier and AD.

#include <complex>
#include <numbers>

#include "fft/fft_test_util.hpp"
#include "tenferro/ad/eager_ops.hpp"
#include "tenferro/ad/grad_check.hpp"
#include "tenferro/ad/program.hpp"
#include "tenferro/ad/transforms.hpp"
#include "tenferro/fft/fft.hpp"
#include "test_util.hpp"

using namespace tenferro;
using cd = std::complex<double>;

namespace {

using fft_test::real_signal;
using fft_test::signal;
std::vector<cd> conj_of(std::vector<cd> v) {
  for (auto& z : v) z = std::conj(z);
  return v;
}

// sum_j x[j0 + n0 j1] exp(sign 2 pi i (j0 k0 / n0 + j1 k1 / n1)) * scale for
// k0 < h0 (a half along axis 0), column-major [h0, n1].
std::vector<cd> naive2(const std::vector<double>& x, std::int64_t n0, std::int64_t n1,
                       std::int64_t h0, int sign, double scale) {
  std::vector<cd> out(static_cast<std::size_t>(h0 * n1));
  for (std::int64_t k1 = 0; k1 < n1; ++k1)
    for (std::int64_t k0 = 0; k0 < h0; ++k0) {
      cd acc = 0;
      for (std::int64_t j1 = 0; j1 < n1; ++j1)
        for (std::int64_t j0 = 0; j0 < n0; ++j0) {
          const double ang =
              sign * 2 * std::numbers::pi *
              (static_cast<double>(j0 * k0) / n0 + static_cast<double>(j1 * k1) / n1);
          acc += x[j0 + n0 * j1] * cd(std::cos(ang), std::sin(ang));
        }
      out[k0 + h0 * k1] = acc * scale;
    }
  return out;
}

void expect_close(const std::vector<cd>& got, const std::vector<cd>& want, double tol = 1e-10) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i].real(), want[i].real(), tol) << "at " << i;
    EXPECT_NEAR(got[i].imag(), want[i].imag(), tol) << "at " << i;
  }
}
void expect_close(const std::vector<double>& got, const std::vector<double>& want,
                  double tol = 1e-10) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}
std::vector<double> times(std::vector<double> v, double s) {
  for (auto& x : v) x *= s;
  return v;
}
std::vector<cd> times(std::vector<cd> v, double s) {
  for (auto& x : v) x *= s;
  return v;
}

class Hermitian : public ::testing::Test {
 protected:
  CpuBackend cpu{CpuBackendOptions{.num_threads = 1}};
};

}  // namespace

TEST_F(Hermitian, IhfftnMatchesANaiveInverseDftForOddEvenAndPrimeLengths) {
  for (const std::int64_t n0 : {5, 6, 7}) {
    const std::int64_t n1 = 3, h0 = n0 / 2 + 1;
    const auto r = real_signal(n0 * n1);
    const Tensor R = Tensor::from_col_major({n0, n1}, r);
    const double N = static_cast<double>(n0 * n1);
    const Tensor y = fft::ihfftn(R, {}, {0, 1}, "backward", cpu);
    EXPECT_EQ(y.shape(), (Shape{h0, n1}));
    expect_close(y.to_vector<cd>(), naive2(r, n0, n1, h0, +1, 1.0 / N));
    expect_close(fft::ihfftn(R, {}, {0, 1}, "forward", cpu).to_vector<cd>(),
                 naive2(r, n0, n1, h0, +1, 1.0));
    expect_close(fft::ihfft2(R, {}, {0, 1}, "ortho", cpu).to_vector<cd>(),
                 naive2(r, n0, n1, h0, +1, 1.0 / std::sqrt(N)));
  }
}

TEST_F(Hermitian, HfftnInvertsIhfftnAndEqualsNTimesIrfftnOfTheConjugate) {
  for (const std::int64_t n0 : {5, 6}) {
    const std::int64_t n1 = 3;
    const auto r = real_signal(n0 * n1);
    const Tensor R = Tensor::from_col_major({n0, n1}, r);
    for (const char* norm : {"backward", "forward", "ortho"}) {
      const Tensor h = fft::ihfftn(R, {}, {0, 1}, norm, cpu);
      expect_close(fft::hfftn(h, {n0, n1}, {0, 1}, norm, cpu).to_vector<double>(), r);
    }
    // The full forward DFT of the Hermitian extension of N ihfftn(r) is N r.
    const Tensor half = Tensor::from_col_major(
        {n0 / 2 + 1, n1}, naive2(r, n0, n1, n0 / 2 + 1, +1, 1.0));  // DFT_+(r), a half
    expect_close(fft::hfftn(half, {n0, n1}, {0, 1}, "backward", cpu).to_vector<double>(),
                 times(r, static_cast<double>(n0 * n1)));
  }
  // Any complex half spectrum: hfftn(x) = N irfftn(conj x), with s padding.
  const auto x = signal(4 * 3);
  const Tensor X = Tensor::from_col_major({4, 3}, x);
  const Tensor Xc = Tensor::from_col_major({4, 3}, conj_of(x));
  expect_close(fft::hfftn(X, {}, {0, 1}, "backward", cpu).to_vector<double>(),
               times(fft::irfftn(Xc, {}, {0, 1}, "backward", cpu).to_vector<double>(), 18.0));
  expect_close(fft::hfft2(X, {7, 4}, {0, 1}, "backward", cpu).to_vector<double>(),
               times(fft::irfftn(Xc, {7, 4}, {0, 1}, "backward", cpu).to_vector<double>(), 28.0));
  expect_close(fft::hfftn(X, {}, {0, 1}, "ortho", cpu).to_vector<double>(),
               fft::irfftn(Xc, {}, {0, 1}, "ortho", cpu).to_vector<double>());
}

TEST_F(Hermitian, AxisOrderBatchAxesAndOneAxisForms) {
  // The first listed axis is the halved one; other axes are batches.
  const auto r = real_signal(4 * 3 * 5);
  const Tensor R = Tensor::from_col_major({4, 3, 5}, r);
  const Tensor y = fft::ihfftn(R, {}, {2, 0}, "backward", cpu);
  EXPECT_EQ(y.shape(), (Shape{4, 3, 3}));
  expect_close(
      y.to_vector<cd>(),
      times(conj_of(fft::rfftn(R, {}, {2, 0}, "backward", cpu).to_vector<cd>()), 1.0 / 20));
  expect_close(fft::hfftn(y, {5, 4}, {2, 0}, "backward", cpu).to_vector<double>(), r);
  // One axis: hfftn / ihfftn are hfft / ihfft.
  const Tensor X = Tensor::from_col_major({4, 3}, signal(12));
  expect_close(fft::hfftn(X, {}, {1}, "forward", cpu).to_vector<double>(),
               fft::hfft(X, std::nullopt, 1, "forward", cpu).to_vector<double>());
  expect_close(fft::ihfftn(R, {7}, {-1}, "ortho", cpu).to_vector<cd>(),
               fft::ihfft(R, 7, 2, "ortho", cpu).to_vector<cd>());
  // Default axes: every axis (hfftn) or {0, 1} (hfft2).
  const Tensor X3 = Tensor::from_col_major({3, 2, 2}, signal(12));
  expect_close(fft::hfftn(X3, {}, {}, "backward", cpu).to_vector<double>(),
               fft::hfftn(X3, {}, {0, 1, 2}, "backward", cpu).to_vector<double>());
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  expect_close(fft::hfft2(rt->tensor(X3)).value().to_vector<double>(),
               fft::hfftn(X3, {}, {0, 1}, "backward", cpu).to_vector<double>());
  expect_close(fft::ihfft2(rt->tensor(R)).value().to_vector<cd>(),
               fft::ihfftn(R, {}, {0, 1}, "backward", cpu).to_vector<cd>());
}

TEST_F(Hermitian, StridedZeroSizeAndTypedErrors) {
  const Tensor R = Tensor::from_col_major({6, 3}, real_signal(18));
  const Tensor Rs = tftest::strided_copy(R);
  ASSERT_FALSE(Rs.is_contiguous());
  expect_close(fft::ihfftn(Rs, {}, {0, 1}, "backward", cpu).to_vector<cd>(),
               fft::ihfftn(R, {}, {0, 1}, "backward", cpu).to_vector<cd>());
  const Tensor X = Tensor::from_col_major({4, 3}, signal(12));
  const Tensor Xs = tftest::strided_copy(X);
  expect_close(fft::hfftn(Xs, {}, {1, 0}, "backward", cpu).to_vector<double>(),
               fft::hfftn(X, {}, {1, 0}, "backward", cpu).to_vector<double>());
  EXPECT_EQ(fft::hfftn(Tensor::from_col_major({3, 0}, std::vector<cd>{}), {}, {0}, "backward", cpu)
                .shape(),
            (Shape{4, 0}));
  EXPECT_EQ(
      fft::ihfftn(Tensor::from_col_major({4, 0}, std::vector<double>{}), {}, {0}, "backward", cpu)
          .shape(),
      (Shape{3, 0}));
  EXPECT_TF_ERROR(fft::ihfftn(X, {}, {0, 1}, "backward", cpu), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(fft::hfftn(X, {}, {0, 1}, "sideways", cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(fft::hfftn(X, {4}, {0, 1}, "backward", cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(fft::hfft2(X, {}, {0, -2}, "backward", cpu), ErrorKind::DuplicateAxis);
  EXPECT_TF_ERROR(fft::ihfft2(R, {}, {0, 2}, "backward", cpu), ErrorKind::AxisOutOfBounds);
  EXPECT_TF_ERROR(
      fft::hfftn(Tensor::from_col_major({1, 3}, signal(3)), {}, {0, 1}, "backward", cpu),
      ErrorKind::InvalidArgument);  // default length 2 (1 - 1) = 0
}

TEST(HermitianAutodiff, GradientChecksInEveryNormAndAxisOrder) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  const EagerTensor C = rt->tensor(Tensor::from_col_major({4, 3, 2}, signal(24)));
  const EagerTensor R = rt->tensor(Tensor::from_col_major({5, 3, 2}, real_signal(30)));
  for (const Axes& axes : {Axes{0, 1}, Axes{1, 0}, Axes{2, 0, 1}}) {
    for (const char* norm : {"backward", "forward", "ortho"}) {
      auto check = [&](const char* what, const EagerTensor& in, auto f) {
        auto r = check_gradients([&](std::span<const EagerTensor> x) { return f(x[0]); }, {in});
        EXPECT_TRUE(r.ok) << r.detail << " " << what << " axes[0]=" << axes[0] << " " << norm;
      };
      check("hfftn", C, [&](const EagerTensor& x) { return fft::hfftn(x, {}, axes, norm); });
      check("ihfftn", R, [&](const EagerTensor& x) { return fft::ihfftn(x, {}, axes, norm); });
    }
  }
  auto r = check_gradients(
      [](std::span<const EagerTensor> x) {
        return fft::hfft2(x[0], {5, 4});
      },
      {C});
  EXPECT_TRUE(r.ok) << r.detail;
  r = check_gradients(
      [](std::span<const EagerTensor> x) {
        return fft::ihfft2(x[0], {4, 2});
      },
      {R});
  EXPECT_TRUE(r.ok) << r.detail;
}

TEST(HermitianAutodiff, TracedGradientEqualsEager) {
  auto runtime = Runtime::builder()
                     .backend(std::make_shared<CpuBackend>(CpuBackendOptions{.num_threads = 1}))
                     .build();
  auto a = placeholder(f64, {5, 3}, "a");
  const TracedTensor h = fft::ihfftn(a, {}, {0, 1}, "ortho");
  const TracedTensor back = fft::hfftn(h, {5, 3}, {0, 1}, "ortho");
  auto loss = sum(mul(back, back));
  const Program p = compile({back, grad(loss, a)}, {a});
  const std::vector<Tensor> in = {Tensor::from_col_major({5, 3}, real_signal(15))};
  const auto out = run(*runtime, prepare(*runtime, p, InputSignature::of(in)), in);
  expect_close(out[0].to_vector<double>(), in[0].to_vector<double>());
  // loss = |a|^2 (hfftn inverts ihfftn, both "ortho"): its gradient is 2 a.
  expect_close(out[1].to_vector<double>(), times(in[0].to_vector<double>(), 2.0));
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  auto ax = rt->variable(in[0]);
  const EagerTensor be = fft::hfftn(fft::ihfftn(ax, {}, {0, 1}, "ortho"), {5, 3}, {0, 1}, "ortho");
  sum(mul(be, be)).backward();
  expect_close(ax.grad().value().to_vector<double>(), out[1].to_vector<double>());
}
