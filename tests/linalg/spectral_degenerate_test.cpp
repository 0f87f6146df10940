// Degenerate spectra under the Strict gauge policy (svd, eigh, eig): the
// 1 / gap factors of degenerate pairs are zero, losses that do not depend on
// the basis inside a degenerate subspace get finite exact gradients
// (compared with finite differences of the direct tier), basis-dependent
// losses are GaugeIllDefined in eager backward, traced programs and forward
// mode, and the Regularised policy gives finite values for the same losses.

#include <cmath>
#include <complex>
#include <functional>
#include <string>

#include "tenferro/ad/eager_ops.hpp"
#include "tenferro/ad/program.hpp"
#include "tenferro/ad/transforms.hpp"
#include "tenferro/linalg/linalg.hpp"
#include "test_util.hpp"

using namespace tenferro;
namespace la = tenferro::linalg;

namespace {

// Deterministic f64 values.
Tensor make(const Shape& shape, double seed) {
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    v[i] = std::sin(1.3 * i + seed) + 0.3 * std::cos(0.17 * i * i);
  return Tensor::from_col_major(shape, v);
}

std::vector<std::complex<double>> values(const Tensor& t) {
  std::vector<std::complex<double>> out;
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
      out = t.to_vector<std::complex<double>>();
  }
  return out;
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

Tensor scaled(const Tensor& t, double c) {
  auto v = t.to_vector<double>();
  for (auto& x : v) x *= c;
  return Tensor::from_col_major(t.shape(), v);
}

// Q diag(d) Q^T with Q orthogonal (the U of a fixed matrix): a degenerate
// matrix whose eigenvectors are not the unit vectors.
Tensor rotated(const std::vector<double>& d) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  const auto n = static_cast<std::int64_t>(d.size());
  const auto Q = la::svd(make({n, n}, 0.7), false, cpu).U.to_vector<double>();
  std::vector<double> a(static_cast<std::size_t>(n * n), 0.0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t p = 0; p < n; ++p) a[i + j * n] += Q[i + p * n] * d[p] * Q[j + p * n];
  return Tensor::from_col_major({n, n}, a);
}

// Central finite differences of a real f64 function of a real matrix.
Tensor fd_grad(const std::function<double(const Tensor&)>& f, const Tensor& A, double h = 1e-6) {
  auto a = A.to_vector<double>();
  std::vector<double> g(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double x = a[i];
    a[i] = x + h;
    const double up = f(Tensor::from_col_major(A.shape(), a));
    a[i] = x - h;
    const double down = f(Tensor::from_col_major(A.shape(), a));
    a[i] = x;
    g[i] = (up - down) / (2 * h);
  }
  return Tensor::from_col_major(A.shape(), g);
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// Asserts that `stmt` throws GaugeIllDefined naming a degenerate pair and the fix.
#define EXPECT_DEGENERATE(stmt)                                                           \
  do {                                                                                    \
    std::string tf_msg_;                                                                  \
    try {                                                                                 \
      (void)(stmt);                                                                       \
    } catch (const ::tenferro::Error& e) {                                                \
      EXPECT_EQ(e.kind(), ErrorKind::GaugeIllDefined) << e.what();                        \
      tf_msg_ = e.what();                                                                 \
    }                                                                                     \
    EXPECT_NE(tf_msg_.find("degenerate"), std::string::npos) << #stmt << ": " << tf_msg_; \
    EXPECT_NE(tf_msg_.find("Regularised"), std::string::npos) << tf_msg_;                 \
  } while (0)

const la::SpectralOptions kReg{la::GaugePolicy::Regularised, 1e-6};

}  // namespace

TEST(LinalgSpectralDegenerate, ValuesOnlyLossesHaveExactGradientsAtTheIdentity) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  for (DType dt : {DType::F32, DType::F64, DType::C64, DType::C128}) {
    const double tol = (dt == DType::F32 || dt == DType::C64) ? 1e-5 : 1e-12;
    for (const Shape& s : {Shape{3, 3}, Shape{4, 3}}) {
      const Tensor I = eye(s[0], s[1], dt);
      const EagerTensor x = rt->variable(I);
      sum(la::svd(x, false).S).backward();  // d sum(S) = U Vh = [I; 0]
      expect_close(x.grad().value(), I, tol);
    }
    const Tensor I = eye(3, 3, dt);
    const EagerTensor y = rt->variable(I);
    sum(la::eigh(y).eigenvalues).backward();  // d trace = I
    expect_close(y.grad().value(), I, tol);
    const EagerTensor z = rt->variable(I);
    sum(real(la::eig(z).eigenvalues)).backward();
    expect_close(z.grad().value(), I, tol);
  }
  // Traced: the same gradients from compiled programs.
  const Tensor I = eye(3);
  const TracedTensor p = placeholder(DType::F64, {3, 3}, "a");
  const auto g = grad_many(
      sum(la::svd(p).S) + sum(la::eigh(p).eigenvalues) + sum(real(la::eig(p).eigenvalues)), {p});
  const auto out = run_compiled(*rt->runtime(), compile({*g[0]}, {p}), {I});
  expect_close(out[0], scaled(eye(3), 3.0), 1e-12);
}

TEST(LinalgSpectralDegenerate, BasisInvariantLossesThroughTheVectorsMatchFiniteDifferences) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  const Tensor W = make({3, 3}, 1.0);
  const auto w = W.to_vector<double>();
  // The polar factor U Vh at A = 2 I (s = 2, 2, 2): the 1 / (s_i + s_j) part of the rule
  // survives, the 1 / (s_j - s_i) part meets a zero component.
  const auto polar = [&](const Tensor& A) {
    const auto r = la::svd(A, false, cpu);
    const auto U = r.U.to_vector<double>(), Vh = r.Vh.to_vector<double>();
    std::vector<double> P(9, 0.0);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        for (int q = 0; q < 3; ++q) P[i + 3 * j] += U[i + 3 * q] * Vh[q + 3 * j];
    return dot(P, w);
  };
  for (const Tensor& A : {scaled(eye(3), 2.0), rotated({2.0, 2.0, 0.5})}) {
    const EagerTensor x = rt->variable(A);
    const auto f = la::svd(x, false);
    sum(matmul(f.U, f.Vh) * rt->tensor(W)).backward();
    expect_close(x.grad().value(), fd_grad(polar, A), 1e-7);
  }
  // Single precision: rounding in the degenerate pairs stays below the tolerances.
  {
    const Tensor A = rotated({2.0, 2.0, 0.5});
    std::vector<float> af;
    for (double v : A.to_vector<double>()) af.push_back(static_cast<float>(v));
    const EagerTensor x32 = rt->variable(Tensor::from_col_major({3, 3}, af));
    const auto f = la::svd(x32, false);
    sum(matmul(f.U, f.Vh) * cast(rt->tensor(W), DType::F32)).backward();
    expect_close(x32.grad().value(), fd_grad(polar, A), 1e-4);
  }
  // The projector onto the degenerate eigenspace of eigenvalue 1 (columns 0 and 1).
  const Tensor mask =
      Tensor::from_col_major({3, 3}, std::vector<double>{1, 1, 1, 1, 1, 1, 0, 0, 0});
  const auto projector = [&](const Tensor& A) {
    const auto V = la::eigh(A, 'L', cpu).eigenvectors.to_vector<double>();
    std::vector<double> P(9, 0.0);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        for (int q = 0; q < 2; ++q) P[i + 3 * j] += V[i + 3 * q] * V[j + 3 * q];
    return dot(P, w);
  };
  const Tensor R = rotated({1.0, 1.0, 3.0});
  const EagerTensor x = rt->variable(R);
  const EagerTensor Vm = la::eigh(x).eigenvectors * rt->tensor(mask);
  sum(matmul(rt->tensor(W), Vm) * Vm).backward();  // <W, Vm Vm^T>
  // eigh reads the lower triangle: compare with the derivative of the function of it.
  const auto lower = [&](const Tensor& A) {
    auto a = A.to_vector<double>();
    for (int i = 0; i < 3; ++i)
      for (int j = i + 1; j < 3; ++j) a[i + 3 * j] = a[j + 3 * i];
    return projector(Tensor::from_col_major({3, 3}, a));
  };
  expect_close(x.grad().value(), fd_grad(lower, R), 1e-7);
}

TEST(LinalgSpectralDegenerate, BasisDependentLossesAreGaugeIllDefinedInEagerAndTraced) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  const Tensor W = make({3, 3}, 1.0);
  const EagerTensor Wt = rt->tensor(W);
  for (const Tensor& A : {eye(3), rotated({2.0, 2.0, 1.0}), zeros({3, 3})}) {
    const EagerTensor x = rt->variable(A);
    EXPECT_DEGENERATE(sum(la::svd(x).U * Wt).backward());
  }
  // (With Wt the component on the rotated pair is 0.0095, with W2 larger; both are errors.)
  const EagerTensor W2 = rt->tensor(make({3, 3}, 2.5));
  for (const Tensor& A : {eye(3), rotated({1.0, 1.0, 3.0})}) {
    const EagerTensor x = rt->variable(A);
    EXPECT_DEGENERATE(sum(la::eigh(x).eigenvectors * W2).backward());
    const EagerTensor x2 = rt->variable(A);
    EXPECT_DEGENERATE(sum(la::eigh(x2).eigenvectors * Wt).backward());
    // The reconstruction V diag(L) V^T is invariant as a whole, but its cotangent of the
    // values separates the degenerate pair: the chain rule cannot give its gradient.
    const EagerTensor y = rt->variable(A);
    const auto f = la::eigh(y);
    const EagerTensor Vt = transpose(f.eigenvectors);
    EXPECT_DEGENERATE(
        sum(matmul(matmul(f.eigenvectors, diag_embed(f.eigenvalues)), Vt) * Wt).backward());
  }
  const EagerTensor z = rt->variable(eye(3));
  EXPECT_DEGENERATE(sum(real(la::eig(z).eigenvectors) * Wt).backward());
  // Complex input: the phase check passes (real weights on the identity), the degeneracy
  // check does not.
  const EagerTensor c = rt->variable(eye(3, 3, DType::C128));
  EXPECT_DEGENERATE(sum(real(la::eigh(c).eigenvectors) * Wt).backward());

  const TracedTensor p = placeholder(DType::F64, {3, 3}, "a");
  const TracedTensor Wp = placeholder(DType::F64, {3, 3}, "w");
  const TracedTensor losses[] = {sum(la::svd(p).U * Wp), sum(la::eigh(p).eigenvectors * Wp),
                                 sum(real(la::eig(p).eigenvectors) * Wp)};
  for (const auto& loss : losses) {
    const auto g = grad_many(loss, {p});
    ASSERT_TRUE(g[0].has_value());
    const auto prog = compile({*g[0]}, {p, Wp});
    EXPECT_DEGENERATE(run_compiled(*rt->runtime(), prog, {eye(3), W}));
    // Away from degeneracy the same program runs.
    EXPECT_TRUE(all_finite(run_compiled(*rt->runtime(), prog, {rotated({1.0, 2.0, 3.0}), W})[0]));
  }
}

TEST(LinalgSpectralDegenerate, TangentsSplittingADegeneratePairAreGaugeIllDefined) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  const Tensor T = make({3, 3}, 2.0);
  const EagerTensor I = rt->tensor(eye(3)), dA = rt->tensor(T);
  EXPECT_DEGENERATE(jvp([](const EagerTensor& x) { return sum(la::svd(x).U); }, I, dA));
  EXPECT_DEGENERATE(jvp([](const EagerTensor& x) { return sum(la::eigh(x).eigenvectors); }, I, dA));
  EXPECT_DEGENERATE(
      jvp([](const EagerTensor& x) { return sum(real(la::eig(x).eigenvectors)); }, I, dA));
  // The values-only functions have no gap factors: d trace = trace(dA).
  const auto t = jvp_tangent([](const EagerTensor& x) { return sum(la::eigvals(x)); }, I, dA);
  const auto tv = values(t.value());
  const auto a = T.to_vector<double>();
  EXPECT_NEAR(std::abs(tv[0] - (a[0] + a[4] + a[8])), 0.0, 1e-12);
  // Second order (forward over reverse) through the vectors of a degenerate point: a
  // typed error (documented limit), never NaN.
  const auto g = [](const EagerTensor& x) {
    return grad([](const EagerTensor& y) { return sum(la::eigh(y).eigenvalues); }, x);
  };
  EXPECT_DEGENERATE(jvp(g, I, dA));
  // A tangent that only scales the identity keeps the pairs together: no error.
  const auto s = jvp_tangent([](const EagerTensor& x) { return sum(la::eigh(x).eigenvectors); }, I,
                             rt->tensor(eye(3)));
  EXPECT_TRUE(all_finite(s.value()));
}

TEST(LinalgSpectralDegenerate, ZeroSingularValuesOfNonSquareMatricesAreChecked) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  // [4, 3] with singular values 2, 1, 0: the 1 / s of the completion meets s = 0.
  const auto r = rotated({2.0, 1.0, 0.0}).to_vector<double>();
  std::vector<double> a(12, 0.0);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) a[i + 4 * j] = r[i + 3 * j];
  const Tensor A = Tensor::from_col_major({4, 3}, a);
  // (u_2^T W v_2 = -0.0033 here, small but not negligible next to the other components.)
  const Tensor W = make({4, 3}, 1.5);
  const EagerTensor Wt = rt->tensor(W);
  const auto expect_zero_error = [](const std::function<void()>& f, int which) {
    SCOPED_TRACE(which);
    std::string msg;
    try {
      f();
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::GaugeIllDefined) << e.what();
      msg = e.what();
    }
    EXPECT_NE(msg.find("zero singular value 2"), std::string::npos) << msg;
    EXPECT_NE(msg.find("Regularised"), std::string::npos) << msg;
  };
  expect_zero_error(
      [&] {
        const EagerTensor x = rt->variable(A);
        sum(la::svd(x, false).U * Wt).backward();
      },
      0);
  expect_zero_error(
      [&] {  // U diag(S) Vh: the loss depends on s_2 itself
        const EagerTensor x = rt->variable(A);
        const auto f = la::svd(x, false);
        sum(matmul(f.U * f.S, f.Vh) * Wt).backward();
      },
      1);
  expect_zero_error(
      [&] {  // forward mode
        (void)jvp([](const EagerTensor& x) { return sum(la::svd(x, false).U); }, rt->tensor(A),
                  rt->tensor(W));
      },
      2);
  // Values only, and columns of U away from the zero value: finite.
  const EagerTensor x = rt->variable(A);
  sum(la::svd(x, false).S).backward();
  EXPECT_TRUE(all_finite(x.grad().value()));
  const Tensor keep =
      Tensor::from_col_major({4, 3}, std::vector<double>{1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0});
  const EagerTensor y = rt->variable(A);
  sum(la::svd(y, false).U * Wt * rt->tensor(keep)).backward();
  EXPECT_TRUE(all_finite(y.grad().value()));
  // Regularised: finite for the same loss.
  const EagerTensor z = rt->variable(A);
  sum(la::svd(z, false, kReg).U * Wt).backward();
  EXPECT_TRUE(all_finite(z.grad().value()));
}

TEST(LinalgSpectralDegenerate, BatchIndexIsNamedAndZeroSizesWork) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  // Batch [3, 3, 2]: matrix 0 non-degenerate, matrix 1 the identity.
  auto a = rotated({1.0, 2.0, 3.0}).to_vector<double>();
  const auto id = eye(3).to_vector<double>();
  a.insert(a.end(), id.begin(), id.end());
  const Tensor A = Tensor::from_col_major({3, 3, 2}, a);
  const EagerTensor W = rt->tensor(make({3, 3, 2}, 1.0));
  std::string msg;
  try {
    const EagerTensor x = rt->variable(A);
    sum(la::eigh(x).eigenvectors * W).backward();
  } catch (const Error& e) {
    msg = e.what();
  }
  EXPECT_NE(msg.find("of matrix 1 of the batch"), std::string::npos) << msg;
  // Values only on the same batch: finite.
  const EagerTensor y = rt->variable(A);
  sum(la::eigh(y).eigenvalues).backward();
  EXPECT_TRUE(all_finite(y.grad().value()));
  // Zero sizes: the rules and checks run on empty matrices and batches.
  for (const Shape& s : {Shape{0, 0}, Shape{3, 0}, Shape{0, 3}, Shape{2, 2, 0}}) {
    const EagerTensor x = rt->variable(zeros(s));
    const auto f = la::svd(x, false);
    (sum(f.U) + sum(f.S) + sum(f.Vh)).backward();
    EXPECT_EQ(x.grad().value().shape(), s);
    if (s[0] == s[1]) {
      const EagerTensor z = rt->variable(zeros(s));
      (sum(la::eigh(z).eigenvectors) + sum(real(la::eig(z).eigenvectors))).backward();
      EXPECT_EQ(z.grad().value().shape(), s);
    }
  }
}

TEST(LinalgSpectralDegenerate, RegularisedGivesFiniteValuesForTheSameLosses) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  const EagerTensor Wt = rt->tensor(make({3, 3}, 1.0));
  for (const Tensor& A : {eye(3), rotated({2.0, 2.0, 1.0})}) {
    const EagerTensor x = rt->variable(A);
    sum(la::svd(x, true, kReg).U * Wt).backward();
    EXPECT_TRUE(all_finite(x.grad().value()));
    const EagerTensor y = rt->variable(A);
    sum(la::eigh(y, 'L', kReg).eigenvectors * Wt).backward();
    EXPECT_TRUE(all_finite(y.grad().value()));
    const EagerTensor z = rt->variable(A);
    sum(real(la::eig(z, kReg).eigenvectors) * Wt).backward();
    EXPECT_TRUE(all_finite(z.grad().value()));
  }
}

TEST(LinalgSpectralDegenerate, ToleranceIsRelativeAndValidated) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  const EagerTensor Wt = rt->tensor(make({3, 3}, 1.0));
  // Eigenvalues 1, 1 + 1e-6, 3: distinct for the default tolerance (1e-10 relative)...
  const Tensor A = rotated({1.0, 1.0 + 1e-6, 3.0});
  const EagerTensor x = rt->variable(A);
  sum(la::eigh(x).eigenvectors * Wt).backward();
  EXPECT_TRUE(all_finite(x.grad().value()));
  // ... degenerate for 1e-4, relative to the spectrum: scaling A does not change it.
  la::SpectralOptions loose;
  loose.degeneracy_tolerance = 1e-4;
  for (double scale : {1.0, 1e6}) {
    const EagerTensor y = rt->variable(scaled(A, scale));
    EXPECT_DEGENERATE(sum(la::eigh(y, 'L', loose).eigenvectors * Wt).backward());
  }
  // The component is compared with the largest one: scaling the loss changes nothing.
  for (double scale : {1e-6, 1e6}) {
    const EagerTensor y = rt->variable(eye(3));
    EXPECT_DEGENERATE(
        sum(la::eigh(y).eigenvectors * rt->tensor(scaled(make({3, 3}, 1.0), scale))).backward());
  }
  // A component below component_tolerance relative to the largest is treated as 0.
  la::SpectralOptions lax;
  lax.component_tolerance = 10.0;
  const EagerTensor u = rt->variable(eye(3));
  sum(la::eigh(u, 'L', lax).eigenvectors * Wt).backward();
  EXPECT_TRUE(all_finite(u.grad().value()));
  la::SpectralOptions bad;
  bad.component_tolerance = -1.0;
  EXPECT_TF_ERROR(la::eig(rt->tensor(eye(2)), bad), ErrorKind::InvalidArgument);
  bad.component_tolerance = 1e-6;
  bad.degeneracy_tolerance = -1.0;
  EXPECT_TF_ERROR(la::eigh(rt->tensor(eye(2)), 'L', bad), ErrorKind::InvalidArgument);
  bad.degeneracy_tolerance = std::nan("");
  EXPECT_TF_ERROR(la::svd(rt->tensor(eye(2)), true, bad), ErrorKind::InvalidArgument);
}
