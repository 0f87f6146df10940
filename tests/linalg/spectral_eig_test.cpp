// eigh / eigvalsh and eig / eigvals: A V = V diag(L) and orthonormality or
// unit norm, ordering, values-only against full, every dtype, batches, zero
// sizes, strided input, the three tiers, gradients, the gauge check and the
// regularised policy.

#include <cmath>
#include <complex>

#include "tenferro/ad/eager_ops.hpp"
#include "tenferro/ad/grad_check.hpp"
#include "tenferro/ad/program.hpp"
#include "tenferro/ad/transforms.hpp"
#include "tenferro/linalg/linalg.hpp"
#include "test_util.hpp"

using namespace tenferro;
namespace la = tenferro::linalg;
using C = std::complex<double>;

namespace {

// A tensor of dtype `dt` holding v (real part only for real dtypes).
Tensor from_values(DType dt, const Shape& shape, const std::vector<C>& v) {
  const auto pick = [&]<class T>(auto f) {
    std::vector<T> out;
    for (const auto& x : v) out.push_back(f(x));
    return Tensor::from_col_major(shape, out);
  };
  switch (dt) {
    case DType::F32:
      return pick.operator()<float>([](C x) { return static_cast<float>(x.real()); });
    case DType::F64:
      return pick.operator()<double>([](C x) { return x.real(); });
    case DType::C64:
      return pick.operator()<std::complex<float>>([](C x) { return std::complex<float>(x); });
    default:
      return pick.operator()<C>([](C x) { return x; });
  }
}

// Deterministic values of any floating dtype.
Tensor make(DType dt, const Shape& shape, double seed = 0.0) {
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  std::vector<C> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    v[i] = C(std::sin(1.3 * i + seed) + 0.3 * std::cos(0.17 * i * i), std::cos(0.7 * i + 2 * seed));
  return from_values(dt, shape, v);
}

std::vector<C> values(const Tensor& t) {
  std::vector<C> out;
  switch (t.dtype()) {
    case DType::F32:
      for (auto x : t.to_vector<float>()) out.emplace_back(x);
      break;
    case DType::F64:
      for (auto x : t.to_vector<double>()) out.emplace_back(x);
      break;
    case DType::C64:
      for (auto x : t.to_vector<std::complex<float>>()) out.emplace_back(x);
      break;
    default:
      out = t.to_vector<C>();
  }
  return out;
}

double tol_of(DType dt) {
  return (dt == DType::F32 || dt == DType::C64) ? 2e-4 : 1e-10;
}

std::int64_t batches_of(const Shape& s) {
  std::int64_t b = 1;
  for (std::size_t d = 2; d < s.size(); ++d) b *= s[d];
  return b;
}

void expect_close(const Tensor& x, const Tensor& y, double tol) {
  ASSERT_EQ(x.shape(), y.shape());
  const auto a = values(x), b = values(y);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(std::abs(a[i] - b[i]), 0.0, tol) << i;
}

bool all_finite(const Tensor& t) {
  for (const auto& x : values(t))
    if (!std::isfinite(x.real()) || !std::isfinite(x.imag())) return false;
  return true;
}

const DType kDtypes[] = {DType::F32, DType::F64, DType::C64, DType::C128};

// Hermitian part (A + A^H) / 2 of every matrix of a batch, as the dtype of A.
Tensor hermitian(const Tensor& A) {
  const Shape& s = A.shape();
  const std::int64_t n = s[0], nb = batches_of(s);
  auto a = values(A);
  std::vector<C> h(a.size());
  for (std::int64_t b = 0; b < nb; ++b)
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < n; ++i)
        h[b * n * n + i + j * n] =
            0.5 * (a[b * n * n + i + j * n] + std::conj(a[b * n * n + j + i * n]));
  return from_values(A.dtype(), s, h);
}

// Checks A V = V diag(L), unit columns, and orthonormality when `orthonormal`.
void expect_eigen(const Tensor& A, const la::EigResult<Tensor>& r, bool orthonormal) {
  const Shape& s = A.shape();
  const std::int64_t n = s[0], nb = batches_of(s);
  ASSERT_EQ(r.eigenvectors.shape(), s);
  ASSERT_EQ(r.eigenvalues.shape()[0], n);
  const auto a = values(A), l = values(r.eigenvalues), v = values(r.eigenvectors);
  const double tol = tol_of(A.dtype()) * 20;
  for (std::int64_t b = 0; b < nb; ++b) {
    const C* Ab = a.data() + b * n * n;
    const C* Vb = v.data() + b * n * n;
    const C* Lb = l.data() + b * n;
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        C av = 0;
        for (std::int64_t p = 0; p < n; ++p) av += Ab[i + p * n] * Vb[p + j * n];
        EXPECT_NEAR(std::abs(av - Vb[i + j * n] * Lb[j]), 0.0, tol) << i << "," << j;
      }
    for (std::int64_t p = 0; p < n; ++p)
      for (std::int64_t q = 0; q < n; ++q) {
        if (!orthonormal && p != q) continue;
        C acc = 0;
        for (std::int64_t i = 0; i < n; ++i) acc += std::conj(Vb[i + p * n]) * Vb[i + q * n];
        EXPECT_NEAR(std::abs(acc - C(p == q ? 1 : 0)), 0.0, tol);
      }
  }
}

}  // namespace

TEST(LinalgEigh, FactorsEveryDtypeAndBatchReadingOneTriangle) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 2});
  for (DType dt : kDtypes) {
    for (const Shape& s : {Shape{4, 4}, Shape{3, 3, 2}, Shape{2, 2, 1, 3}}) {
      SCOPED_TRACE(std::string(name(dt)) + " n=" + std::to_string(s[0]));
      const Tensor A = make(dt, s);  // not Hermitian: one triangle is read
      const Tensor H = hermitian(A);
      for (char uplo : {'L', 'U'}) {
        // The Hermitian matrix with A's `uplo` triangle (real diagonal).
        const auto a = values(A);
        std::vector<C> t(a.size());
        const std::int64_t n = s[0];
        for (std::int64_t b = 0; b < batches_of(s); ++b)
          for (std::int64_t j = 0; j < n; ++j)
            for (std::int64_t i = 0; i < n; ++i) {
              const bool in = uplo == 'L' ? i >= j : i <= j;
              const C x = in ? a[b * n * n + i + j * n] : std::conj(a[b * n * n + j + i * n]);
              t[b * n * n + i + j * n] = i == j ? C(x.real(), 0) : x;
            }
        const Tensor T = from_values(dt, s, t);
        const auto r = la::eigh(A, uplo, cpu);
        expect_eigen(T, r, true);
        const auto l = values(r.eigenvalues);
        for (std::int64_t b = 0; b < batches_of(s); ++b)
          for (std::int64_t i = 1; i < n; ++i)
            EXPECT_LE(l[b * n + i - 1].real(), l[b * n + i].real());
        expect_close(la::eigvalsh(A, uplo, cpu), r.eigenvalues, tol_of(dt) * 10);
        expect_close(la::eigvalsh(T, 'L', cpu), r.eigenvalues, tol_of(dt) * 10);
      }
      expect_eigen(H, la::eigh(H, 'L', cpu), true);
    }
  }
}

TEST(LinalgEig, FactorsEveryDtypeAndBatch) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 2});
  for (DType dt : kDtypes) {
    for (const Shape& s : {Shape{4, 4}, Shape{3, 3, 2}, Shape{5, 5, 1, 2}}) {
      SCOPED_TRACE(std::string(name(dt)) + " n=" + std::to_string(s[0]));
      const Tensor A = make(dt, s, 0.3);
      const auto r = la::eig(A, cpu);
      const DType c = (dt == DType::F32 || dt == DType::C64) ? DType::C64 : DType::C128;
      EXPECT_EQ(r.eigenvalues.dtype(), c);
      EXPECT_EQ(r.eigenvectors.dtype(), c);
      expect_eigen(A, r, false);
      // Values only, in the same (LAPACK) order.
      expect_close(la::eigvals(A, cpu), r.eigenvalues, tol_of(dt) * 10);
    }
  }
  // A real matrix with a complex pair: conjugate eigenvalues and vectors.
  const Tensor R = Tensor::from_col_major({2, 2}, std::vector<double>{0, 1, -1, 0});
  const auto r = la::eig(R, cpu);
  const auto l = values(r.eigenvalues);
  EXPECT_NEAR(std::abs(l[0] - std::conj(l[1])), 0.0, 1e-14);
  EXPECT_NEAR(std::abs(l[0].imag()), 1.0, 1e-14);
  expect_eigen(R, r, false);
}

TEST(LinalgSpectral, ZeroSizeStridedAndTiers) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  for (const Shape& s : {Shape{0, 0}, Shape{3, 3, 0}, Shape{0, 0, 2}}) {
    const Tensor A = make(DType::C128, s);
    EXPECT_EQ(la::eigh(A, 'L', cpu).eigenvectors.shape(), s);
    EXPECT_EQ(la::eigvalsh(A, 'U', cpu).numel(), 0);
    EXPECT_EQ(la::eig(A, cpu).eigenvectors.shape(), s);
    EXPECT_EQ(la::eigvals(A, cpu).numel(), 0);
  }
  const Tensor A = make(DType::C128, {4, 4, 2}, 0.7);
  const Tensor V = tftest::strided_copy(A);
  ASSERT_FALSE(V.is_contiguous());
  expect_close(la::eigvalsh(V, 'L', cpu), la::eigvalsh(A, 'L', cpu), 1e-12);
  expect_close(la::eigvals(V, cpu), la::eigvals(A, cpu), 1e-12);
  // A transposed view: eigh of A^T reading 'U' is eigh of A reading 'L' conjugated.
  expect_close(la::eigvalsh(A.transpose(0, 1), 'U', cpu), la::eigvalsh(A, 'L', cpu), 1e-12);

  const auto dh = la::eigh(A, 'U', cpu);
  const auto de = la::eig(A, cpu);
  const auto eh = la::eigh(rt->tensor(A), 'U');
  const auto ee = la::eig(rt->tensor(A));
  expect_close(eh.eigenvalues.value(), dh.eigenvalues, 1e-12);
  expect_close(eh.eigenvectors.value(), dh.eigenvectors, 1e-12);
  expect_close(ee.eigenvalues.value(), de.eigenvalues, 1e-12);
  expect_close(ee.eigenvectors.value(), de.eigenvectors, 1e-12);
  const TracedTensor p = placeholder(A.dtype(), to_sym_shape(A.shape().span()), "a");
  const auto th = la::eigh(p, 'U');
  const auto te = la::eig(p);
  const auto outs = run_compiled(*rt->runtime(),
                                 compile({th.eigenvalues, th.eigenvectors, te.eigenvalues,
                                          te.eigenvectors, la::eigvalsh(p, 'U'), la::eigvals(p)},
                                         {p}),
                                 {A});
  ASSERT_EQ(outs.size(), 6u);
  expect_close(outs[0], dh.eigenvalues, 1e-12);
  expect_close(outs[1], dh.eigenvectors, 1e-12);
  expect_close(outs[2], de.eigenvalues, 1e-12);
  expect_close(outs[3], de.eigenvectors, 1e-12);
  expect_close(outs[4], dh.eigenvalues, 1e-12);
  expect_close(outs[5], de.eigenvalues, 1e-12);
}

TEST(LinalgSpectral, GradientsOfGaugeInvariantFunctions) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  for (DType dt : {DType::F64, DType::C128}) {
    for (const Shape& s : {Shape{3, 3}, Shape{4, 4, 2}}) {
      SCOPED_TRACE(std::string(name(dt)) + " n=" + std::to_string(s[0]));
      // Not Hermitian: the derivative is that of the function computed
      // (which reads one triangle), so finite differences agree.
      const EagerTensor A = rt->tensor(make(dt, s, 0.9));
      for (char uplo : {'L', 'U'}) {
        auto r = check_gradients(
            [&](std::span<const EagerTensor> x) {
              const auto f = la::eigh(x[0], uplo);
              return sum(abs(f.eigenvectors)) + sum(f.eigenvalues * f.eigenvalues);
            },
            {A});
        EXPECT_TRUE(r.ok) << r.detail << " eigh " << uplo;
        r = check_gradients(
            [&](std::span<const EagerTensor> x) { return la::eigvalsh(x[0], uplo); }, {A});
        EXPECT_TRUE(r.ok) << r.detail << " eigvalsh " << uplo;
      }
      auto r = check_gradients(
          [&](std::span<const EagerTensor> x) {
            const auto f = la::eig(x[0]);
            return sum(abs(f.eigenvectors)) + sum(abs(f.eigenvalues * f.eigenvalues));
          },
          {A});
      EXPECT_TRUE(r.ok) << r.detail << " eig";
      r = check_gradients([&](std::span<const EagerTensor> x) { return la::eigvals(x[0]); }, {A});
      EXPECT_TRUE(r.ok) << r.detail << " eigvals";
    }
  }
}

TEST(LinalgSpectral, PhaseDependentLossIsGaugeIllDefinedInEagerAndTraced) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  const Tensor A = make(DType::C128, {3, 3}, 0.2);
  {
    const EagerTensor x = rt->variable(A);
    EXPECT_TF_ERROR(sum(real(la::eigh(x).eigenvectors)).backward(), ErrorKind::GaugeIllDefined);
  }
  {
    const EagerTensor x = rt->variable(A);
    EXPECT_TF_ERROR(sum(real(la::eig(x).eigenvectors)).backward(), ErrorKind::GaugeIllDefined);
  }
  {
    const EagerTensor x = rt->variable(A);
    const auto f = la::eigh(x);
    (sum(abs(f.eigenvectors)) + sum(f.eigenvalues)).backward();
    EXPECT_TRUE(all_finite(x.grad().value()));
  }
  const TracedTensor p = placeholder(A.dtype(), to_sym_shape(A.shape().span()), "a");
  for (bool hermitian_op : {true, false}) {
    const TracedTensor V = hermitian_op ? la::eigh(p).eigenvectors : la::eig(p).eigenvectors;
    const auto bad = grad_many(sum(real(V)), {p});
    EXPECT_TF_ERROR(run_compiled(*rt->runtime(), compile({*bad[0]}, {p}), {A}),
                    ErrorKind::GaugeIllDefined);
    const auto good = grad_many(sum(abs(V)), {p});
    EXPECT_TRUE(all_finite(run_compiled(*rt->runtime(), compile({*good[0]}, {p}), {A})[0]));
  }
}

TEST(LinalgSpectral, RegularisedPolicyGivesFiniteGradientsForDegenerateSpectra) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  const Tensor W = make(DType::F64, {3, 3}, 1.0);
  const la::SpectralOptions reg{la::GaugePolicy::Regularised, 1e-6};
  const auto grad_of = [&](const Tensor& A, la::SpectralOptions o, bool hermitian_op) {
    const EagerTensor x = rt->variable(A);
    const EagerTensor V =
        hermitian_op ? la::eigh(x, 'L', o).eigenvectors : la::eig(x, o).eigenvectors;
    sum(abs(V) * rt->tensor(W)).backward();
    return x.grad().value();
  };
  for (bool h : {true, false}) {
    // Strict: |V| at I has no component along rotations of the degenerate pairs, so the
    // zeroed 1 / gap factors give a finite gradient (spectral_degenerate_test).
    EXPECT_TRUE(all_finite(grad_of(eye(3), {}, h))) << h;
    EXPECT_TRUE(all_finite(grad_of(eye(3), reg, h))) << h;
    const Tensor A = h ? hermitian(make(DType::F64, {3, 3}, 2.0)) : make(DType::F64, {3, 3}, 2.0);
    expect_close(grad_of(A, reg, h), grad_of(A, {}, h), 1e-7);
  }
}

TEST(LinalgSpectral, ErrorsAreTyped) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  EXPECT_TF_ERROR(la::eigh(make(DType::F64, {3, 2}), 'L', cpu), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(la::eig(make(DType::F64, {3}), cpu), ErrorKind::RankMismatch);
  EXPECT_TF_ERROR(la::eigvals(zeros({2, 2}, DType::I64), cpu), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(la::eigvalsh(eye(2), 'X', cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(la::eigh(rt->tensor(eye(2)), 'L', la::SpectralOptions{.gauge_tolerance = -1}),
                  ErrorKind::InvalidArgument);
  std::vector<double> v(8, 1.0);
  v[5] = std::nan("");  // matrix 1, lower triangle
  const Tensor N = Tensor::from_col_major({2, 2, 2}, v);
  EXPECT_TF_ERROR(la::eig(N, cpu), ErrorKind::NoConvergence);
  EXPECT_TF_ERROR(la::eigvalsh(N, 'L', cpu), ErrorKind::NoConvergence);
  // The NaN is in the other triangle: 'U' never reads it.
  EXPECT_EQ(la::eigvalsh(N, 'U', cpu).numel(), 4);
}

TEST(LinalgSpectral, SecondOrderDerivativesMatchFiniteDifferences) {
  // check_gradients of a gradient: forward-over-reverse and reverse-over-
  // reverse through the rules (gauge check, eig's solve, recomputed vectors).
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  using Loss = std::function<EagerTensor(const EagerTensor&)>;
  const std::pair<const char*, Loss> losses[] = {
      {"svd",
       [](const EagerTensor& a) {
         const auto f = la::svd(a, false);
         return sum(abs(f.U)) + sum(f.S * f.S * f.S);
       }},
      {"svdvals", [](const EagerTensor& a) { return sum(la::svdvals(a)); }},
      {"eigh",
       [](const EagerTensor& a) {
         const auto f = la::eigh(a, 'U');
         return sum(abs(f.eigenvectors)) + sum(f.eigenvalues * f.eigenvalues);
       }},
      {"eigvalsh", [](const EagerTensor& a) { return sum(exp(la::eigvalsh(a, 'L'))); }},
      {"eig",
       [](const EagerTensor& a) {
         const auto f = la::eig(a);
         return sum(abs(f.eigenvectors)) + sum(abs(f.eigenvalues));
       }},
      {"eigvals", [](const EagerTensor& a) { return sum(abs(la::eigvals(a))); }},
  };
  for (DType dt : {DType::F64, DType::C128}) {
    const EagerTensor A = rt->tensor(make(dt, {3, 3}, 1.7));
    for (const auto& [what, loss] : losses) {
      auto r = check_gradients([&](std::span<const EagerTensor> x) { return grad(loss, x[0]); },
                               {A}, GradCheckOptions{.atol = 1e-5, .rtol = 1e-4});
      EXPECT_TRUE(r.ok) << r.detail << " " << what << " " << name(dt);
    }
  }
}

TEST(LinalgEigh, HermitianParametrisationGivesTheSameGradientForEitherTriangle) {
  // For A = X + X^H (PyTorch's gradcheck wrapper) the function of X does not
  // depend on the triangle read, so neither does its gradient.
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  for (DType dt : {DType::F64, DType::C128}) {
    const Tensor X = make(dt, {4, 4, 2}, 0.6);
    const auto grad_for = [&](char uplo) {
      const EagerTensor x = rt->variable(X);
      const EagerTensor xh = is_complex(dt) ? conj(transpose(x, 0, 1)) : transpose(x, 0, 1);
      const auto f = la::eigh(x + xh, uplo);
      (sum(abs(f.eigenvectors)) + sum(f.eigenvalues * f.eigenvalues)).backward();
      return x.grad().value();
    };
    const Tensor gl = grad_for('L'), gu = grad_for('U');
    expect_close(gl, gu, 1e-10);
    EXPECT_TRUE(all_finite(gl));
  }
}
