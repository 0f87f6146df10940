#include "tenferro/linalg/gauge.hpp"

#include <cmath>
#include <complex>

#include "tenferro/ad/eager_ops.hpp"
#include "tenferro/ad/grad_check.hpp"
#include "tenferro/linalg/linalg.hpp"
#include "test_util.hpp"

using namespace tenferro;
namespace la = tenferro::linalg;
using cplx = std::complex<double>;

namespace {
Tensor complex_matrix(std::int64_t m, std::int64_t n) {
  std::vector<cplx> v;
  for (std::int64_t i = 0; i < m * n; ++i)
    v.emplace_back(std::sin(1.3 * i + 0.2), std::cos(0.7 * i * i + 1.0));
  return Tensor::from_col_major({m, n}, v);
}

// Largest-magnitude component of each column of a [r, c] c128 matrix.
std::vector<cplx> column_leaders(const Tensor& m) {
  const auto v = m.contiguous().to_vector<cplx>();
  const std::int64_t r = m.shape()[0], c = m.shape()[1];
  std::vector<cplx> out;
  for (std::int64_t j = 0; j < c; ++j) {
    std::int64_t best = 0;
    for (std::int64_t i = 1; i < r; ++i)
      if (std::abs(v[i + j * r]) > std::abs(v[best + j * r])) best = i;
    out.push_back(v[best + j * r]);
  }
  return out;
}

double max_diff(const Tensor& a, const Tensor& b) {
  const auto x = a.contiguous().to_vector<cplx>(), y = b.contiguous().to_vector<cplx>();
  double d = 0;
  for (std::size_t i = 0; i < x.size(); ++i) d = std::max(d, std::abs(x[i] - y[i]));
  return d;
}
}  // namespace

TEST(LinalgGauge, QrPositiveDiagonalKeepsTheProduct) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  const Tensor a = complex_matrix(4, 3);
  const auto [q, r] = la::positive_diagonal(la::qr(a, "reduced", cpu), cpu);
  const auto d = diagonal(r, 0, 0, 1, cpu).to_vector<cplx>();
  for (const cplx& x : d) {
    EXPECT_NEAR(x.imag(), 0.0, 1e-13);
    EXPECT_GT(x.real(), 0.0);
  }
  EXPECT_LT(max_diff(matmul(q, r, cpu), a), 1e-12);
  EXPECT_TF_ERROR(la::positive_diagonal(la::qr(a, "r", cpu), cpu), ErrorKind::InvalidArgument);
}

TEST(LinalgGauge, SvdAndEighPhasesAreCanonicalAndReproducible) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  const Tensor a = complex_matrix(3, 5);
  for (bool full : {false, true}) {
    const auto f = la::canonical_phase(la::svd(a, full, cpu), cpu);
    for (const cplx& x : column_leaders(f.U)) {
      EXPECT_NEAR(x.imag(), 0.0, 1e-13);
      EXPECT_GT(x.real(), 0.0);
    }
    // The rows of Vh: their leaders too when they have no partner in U.
    const Tensor v = f.Vh.transpose(0, 1);
    const auto lead = column_leaders(v);
    for (std::size_t j = 3; j < lead.size(); ++j) EXPECT_NEAR(lead[j].imag(), 0.0, 1e-13);
    // U diag(S) Vh is still A (reduced: the leading 3 columns).
    const Tensor u3 = f.U.slice(1, 0, 3);
    const Tensor v3 = f.Vh.slice(0, 0, 3);
    const Tensor us = mul(u3, convert(f.S.reshape({1, 3}), c128, cpu), cpu);
    EXPECT_LT(max_diff(matmul(us, v3, cpu), a), 1e-12);
  }
  // A phase change of the raw factors does not change the fixed ones.
  const auto raw = la::svd(a, false, cpu);
  const Tensor phase = Tensor::from_col_major(
      {1, 3}, std::vector<cplx>{std::polar(1.0, 0.3), std::polar(1.0, -2.0), -1.0});
  const auto rotated = la::SvdResult<Tensor>{mul(raw.U, phase, cpu), raw.S,
                                             mul(raw.Vh, conj(phase.transpose(0, 1), cpu), cpu)};
  EXPECT_LT(max_diff(la::canonical_phase(rotated, cpu).U, la::canonical_phase(raw, cpu).U), 1e-12);
  // eigh: a real symmetric matrix with eigenvectors' leaders positive.
  const Tensor s =
      Tensor::from_col_major({3, 3}, std::vector<double>{2, -1, 0, -1, 2, -1, 0, -1, 2});
  const auto e = la::canonical_phase(la::eigh(s, 'L', cpu), cpu);
  for (const cplx& x : column_leaders(convert(e.eigenvectors, c128, cpu))) EXPECT_GT(x.real(), 0);
}

TEST(LinalgGauge, LossesOfFixedFactorsHaveGradients) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  const EagerTensor x = rt->tensor(complex_matrix(4, 3));
  // Re(sum(U)) of raw factors is GaugeIllDefined; of canonical ones it is a
  // well-defined function (away from leader changes).
  auto r = check_gradients(
      [](std::span<const EagerTensor> v) {
        const auto f = la::canonical_phase(la::svd(v[0], false));
        return add(real(sum(f.U)), imag(sum(f.Vh)));
      },
      {x});
  EXPECT_TRUE(r.ok) << r.detail;
  auto q = check_gradients(
      [](std::span<const EagerTensor> v) {
        const auto [qq, rr] = la::positive_diagonal(la::qr(v[0]));
        return add(real(sum(qq)), imag(sum(rr)));
      },
      {x});
  EXPECT_TRUE(q.ok) << q.detail;
}
