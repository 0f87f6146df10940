// svd and svdvals: factors against identities (A = U diag(S) Vh,
// orthonormality, ordering), every dtype, batches, zero sizes, strided input,
// the three tiers, gradients, the gauge check and the regularised policy.

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

// Deterministic values of any floating dtype.
Tensor make(DType dt, const Shape& shape, double seed = 0.0) {
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  std::vector<C> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    v[i] = C(std::sin(1.3 * i + seed) + 0.3 * std::cos(0.17 * i * i), std::cos(0.7 * i + 2 * seed));
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

// Checks A = U[:, :k] diag(S) Vh[:k, :], orthonormal U and Vh, S descending.
void expect_svd(const Tensor& A, const la::SvdResult<Tensor>& r, bool full) {
  const Shape& s = A.shape();
  const std::int64_t m = s[0], n = s[1], k = std::min(m, n), nb = batches_of(s);
  const std::int64_t uc = full ? m : k, vr = full ? n : k;
  ASSERT_EQ(r.U.shape()[0], m);
  ASSERT_EQ(r.U.shape()[1], uc);
  ASSERT_EQ(r.Vh.shape()[0], vr);
  ASSERT_EQ(r.Vh.shape()[1], n);
  ASSERT_EQ(r.S.shape()[0], k);
  EXPECT_EQ(r.S.dtype(), is_complex(A.dtype()) ? (A.dtype() == DType::C64 ? DType::F32 : DType::F64)
                                               : A.dtype());
  const auto a = values(A), u = values(r.U), sv = values(r.S), vh = values(r.Vh);
  const double tol = tol_of(A.dtype());
  for (std::int64_t b = 0; b < nb; ++b) {
    const C* Ab = a.data() + b * m * n;
    const C* Ub = u.data() + b * m * uc;
    const C* Vb = vh.data() + b * vr * n;
    const C* Sb = sv.data() + b * k;
    for (std::int64_t p = 0; p < k; ++p) {
      EXPECT_GE(Sb[p].real(), 0.0);
      if (p > 0) {
        EXPECT_GE(Sb[p - 1].real(), Sb[p].real());
      }
    }
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        C acc = 0;
        for (std::int64_t p = 0; p < k; ++p) acc += Ub[i + p * m] * Sb[p] * Vb[p + j * vr];
        EXPECT_NEAR(std::abs(acc - Ab[i + j * m]), 0.0, tol * 10) << i << "," << j;
      }
    for (std::int64_t p = 0; p < uc; ++p)
      for (std::int64_t q = 0; q < uc; ++q) {
        C acc = 0;
        for (std::int64_t i = 0; i < m; ++i) acc += std::conj(Ub[i + p * m]) * Ub[i + q * m];
        EXPECT_NEAR(std::abs(acc - C(p == q ? 1 : 0)), 0.0, tol * 10);
      }
    for (std::int64_t p = 0; p < vr; ++p)
      for (std::int64_t q = 0; q < vr; ++q) {
        C acc = 0;
        for (std::int64_t j = 0; j < n; ++j) acc += Vb[p + j * vr] * std::conj(Vb[q + j * vr]);
        EXPECT_NEAR(std::abs(acc - C(p == q ? 1 : 0)), 0.0, tol * 10);
      }
  }
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

}  // namespace

TEST(LinalgSvd, FactorsEveryDtypeShapeAndBatch) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 2});
  const Shape shapes[] = {{4, 3}, {3, 5}, {3, 3, 2}, {2, 4, 1, 3}};
  for (DType dt : kDtypes) {
    for (const Shape& s : shapes) {
      const Tensor A = make(dt, s);
      for (bool full : {true, false}) {
        SCOPED_TRACE(std::string(name(dt)) + " " + std::to_string(s[0]) + "x" +
                     std::to_string(s[1]) + (full ? " full" : " reduced"));
        const auto r = la::svd(A, full, cpu);
        expect_svd(A, r, full);
        // Values only (jobz='N') equals the values of the full decomposition.
        expect_close(la::svdvals(A, cpu), r.S, tol_of(dt) * 10);
      }
    }
  }
}

TEST(LinalgSvd, ZeroSizeAndStridedInput) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  for (const Shape& s :
       {Shape{0, 3}, Shape{3, 0}, Shape{0, 0}, Shape{2, 2, 0}, Shape{2, 3, 2, 0}}) {
    const Tensor A = make(DType::F64, s);
    const auto r = la::svd(A, true, cpu);
    EXPECT_EQ(r.S.numel(), 0);  // k = 0 or no matrices
    EXPECT_EQ(r.U.shape()[0], s[0]);
    EXPECT_EQ(r.U.shape()[1], s[0]);
    EXPECT_EQ(r.Vh.shape()[1], s[1]);
    if (batches_of(s) > 0) expect_svd(A, r, true);  // identity bases
    const auto red = la::svd(A, false, cpu);
    EXPECT_EQ(red.U.shape()[1], std::min(s[0], s[1]));
    EXPECT_EQ(la::svdvals(A, cpu).numel(), 0);
  }
  // A view with negative, non-unit strides decomposes like its compact copy.
  const Tensor A = make(DType::C128, {4, 3, 2});
  const Tensor V = tftest::strided_copy(A);
  ASSERT_FALSE(V.is_contiguous());
  expect_close(la::svd(V, false, cpu).S, la::svd(A, false, cpu).S, 1e-12);
  expect_svd(A, la::svd(V, false, cpu), false);
  // A transposed view: the singular values of A^T are those of A.
  expect_close(la::svdvals(A.transpose(0, 1), cpu), la::svdvals(A, cpu), 1e-12);
}

TEST(LinalgSvd, DirectEagerAndTracedAgree) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  const Tensor A = make(DType::C128, {4, 3, 2});
  for (bool full : {true, false}) {
    const auto d = la::svd(A, full, cpu);
    const auto e = la::svd(rt->tensor(A), full);
    expect_close(e.U.value(), d.U, 1e-12);
    expect_close(e.S.value(), d.S, 1e-12);
    expect_close(e.Vh.value(), d.Vh, 1e-12);
    const TracedTensor p = placeholder(A.dtype(), to_sym_shape(A.shape().span()), "a");
    const auto t = la::svd(p, full);
    const auto outs =
        run_compiled(*rt->runtime(), compile({t.U, t.S, t.Vh, la::svdvals(p)}, {p}), {A});
    ASSERT_EQ(outs.size(), 4u);
    expect_close(outs[0], d.U, 1e-12);
    expect_close(outs[1], d.S, 1e-12);
    expect_close(outs[2], d.Vh, 1e-12);
    expect_close(outs[3], d.S, 1e-12);
  }
}

TEST(LinalgSvd, GradientsOfGaugeInvariantFunctions) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  for (DType dt : {DType::F64, DType::C128}) {
    for (const Shape& s : {Shape{4, 3}, Shape{3, 4}, Shape{3, 3, 2}}) {
      SCOPED_TRACE(std::string(name(dt)) + " " + std::to_string(s[0]) + "x" + std::to_string(s[1]));
      const EagerTensor A = rt->tensor(make(dt, s, 0.4));
      const std::int64_t k = std::min(s[0], s[1]);
      for (bool full : {true, false}) {
        // |U|, |Vh|, U Vh and S on the leading k vectors.
        auto r = check_gradients(
            [&](std::span<const EagerTensor> x) {
              const auto f = la::svd(x[0], full);
              Shape lim_u = f.U.shape(), lim_v = f.Vh.shape();
              lim_u[1] = k;
              lim_v[0] = k;
              const EagerTensor U = slice(f.U, Shape(lim_u.size(), 0), lim_u);
              const EagerTensor Vh = slice(f.Vh, Shape(lim_v.size(), 0), lim_v);
              const EagerTensor uv = matmul(U, Vh);
              const EagerTensor re = is_complex(uv.dtype()) ? abs(uv) : uv;
              return sum(abs(U)) + sum(abs(Vh)) * 0.5 + sum(re * re) + sum(f.S * f.S);
            },
            {A});
        EXPECT_TRUE(r.ok) << r.detail << " full=" << full;
      }
      auto r =
          check_gradients([&](std::span<const EagerTensor> x) { return la::svdvals(x[0]); }, {A});
      EXPECT_TRUE(r.ok) << r.detail << " svdvals";
    }
  }
}

TEST(LinalgSvd, RecordedValuesOnlyCallsComputeTheirVectorsOnce) {
  // Untracked: the values-only op (no vectors). Recorded for AD: one svd /
  // eigh with vectors, kept for the reverse rule (as PyTorch), same values.
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  const Tensor a = make(DType::F64, Shape{4, 3}, 0.4);
  const Tensor h =
      add(a.reshape({3, 4}).slice(1, 0, 3), a.reshape({3, 4}).slice(1, 0, 3).permute({1, 0}),
          rt->backend());  // symmetric 3x3
  for (bool tracked : {false, true}) {
    const EagerTensor x = tracked ? rt->variable(a) : rt->tensor(a);
    const EagerTensor y = tracked ? rt->variable(h) : rt->tensor(h);
    CaptureScope capture;
    const EagerTensor s = la::svdvals(x);
    const EagerTensor w = la::eigvalsh(y);
    ASSERT_EQ(capture.steps().size(), 2u);
    EXPECT_EQ(capture.steps()[0].op->name(),
              tracked ? "tenferro.linalg_svd.v1" : "tenferro.linalg_svdvals.v1");
    EXPECT_EQ(capture.steps()[0].outputs.size(), tracked ? 3u : 1u);
    EXPECT_EQ(capture.steps()[1].outputs.size(), tracked ? 2u : 1u);
    EXPECT_TRUE(allclose(s.value(), la::svdvals(a, rt->backend()), 1e-12, 1e-12));
    EXPECT_TRUE(allclose(w.value(), la::eigvalsh(h, 'L', rt->backend()), 1e-12, 1e-12));
    if (tracked) {
      (sum(s) + sum(w)).backward();
      const auto f = la::svd(a, false, rt->backend());
      EXPECT_TRUE(allclose(x.grad().value(), matmul(f.U, f.Vh, rt->backend()), 1e-12, 1e-12));
    }
  }
}

TEST(LinalgSvd, TracedGradientsComputeTheDecompositionOnce) {
  // The reverse rules of svdvals and eigvalsh recompute the vectors; compile
  // merges the values-only forward op into that decomposition (one LAPACK
  // call per matrix, as the eager tier records it).
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  auto a = placeholder(f64, {4, 3}, "a");
  auto h = placeholder(f64, {3, 3}, "h");
  const TracedTensor s = la::svdvals(a);
  const TracedTensor w = la::eigvalsh(h);
  const TracedTensor loss = sum(s * s * s) + sum(w * w * w);
  const Program p = compile({s, w, loss, grad(loss, a), grad(loss, h)}, {a, h});
  EXPECT_EQ(p.count_ops("tenferro.linalg_svdvals.v1"), 0u);
  EXPECT_EQ(p.count_ops("tenferro.linalg_svd.v1"), 1u);
  EXPECT_EQ(p.count_ops("tenferro.linalg_eigvalsh.v1"), 0u);
  EXPECT_EQ(p.count_ops("tenferro.linalg_eigh.v1"), 1u);
  // Without merging (CompileOptions::merge_common off) both ops stay.
  const Program unmerged = compile({s, w, loss, grad(loss, a), grad(loss, h)}, {a, h},
                                   CompileOptions{.merge_common = false});
  EXPECT_EQ(unmerged.count_ops("tenferro.linalg_svdvals.v1"), 1u);
  EXPECT_GE(unmerged.count_ops("tenferro.linalg_svd.v1"), 1u);
  // A values-only program keeps the values-only op.
  EXPECT_EQ(compile({s}, {a}).count_ops("tenferro.linalg_svdvals.v1"), 1u);
  const Tensor av = make(DType::F64, Shape{4, 3}, 0.9);
  const Tensor hv = add(av.reshape({3, 4}).slice(1, 0, 3),
                        av.reshape({3, 4}).slice(1, 0, 3).permute({1, 0}), rt->backend());
  const auto got = run_compiled(*rt->runtime(), p, {av, hv});
  const auto want = run_compiled(*rt->runtime(), unmerged, {av, hv});
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_TRUE(allclose(got[i], want[i], 1e-12, 1e-12)) << i;
  EXPECT_TRUE(allclose(got[0], la::svdvals(av, rt->backend()), 1e-12, 1e-12));
}

TEST(LinalgSvd, PhaseDependentLossIsGaugeIllDefinedInEagerAndTraced) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  const Tensor A = make(DType::C128, {3, 3});
  {
    const EagerTensor x = rt->variable(A);
    const auto f = la::svd(x);
    EXPECT_TF_ERROR(sum(real(f.U + f.Vh)).backward(), ErrorKind::GaugeIllDefined);
  }
  {
    // Gauge-invariant losses differentiate without error.
    const EagerTensor x = rt->variable(A);
    const auto f = la::svd(x);
    (sum(abs(f.U)) + sum(f.S) + sum(abs(matmul(f.U, f.Vh)))).backward();
    ASSERT_TRUE(x.has_grad());
    EXPECT_TRUE(all_finite(x.grad().value()));
  }
  const TracedTensor p = placeholder(A.dtype(), to_sym_shape(A.shape().span()), "a");
  const auto t = la::svd(p);
  const auto bad = grad_many(sum(real(t.U)), {p});
  ASSERT_TRUE(bad[0].has_value());
  EXPECT_TF_ERROR(run_compiled(*rt->runtime(), compile({*bad[0]}, {p}), {A}),
                  ErrorKind::GaugeIllDefined);
  const auto good = grad_many(sum(abs(t.Vh)) + sum(t.S), {p});
  const auto out = run_compiled(*rt->runtime(), compile({*good[0]}, {p}), {A});
  EXPECT_TRUE(all_finite(out[0]));
  // Real dtypes have no phase to check: a sign-dependent loss runs.
  const EagerTensor y = rt->variable(make(DType::F64, {3, 3}));
  sum(la::svd(y).U).backward();
  EXPECT_TRUE(y.has_grad());
}

TEST(LinalgSvd, RegularisedPolicyGivesFiniteGradientsForDegenerateSpectra) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  const Tensor W = make(DType::F64, {3, 3}, 1.0);
  const auto grad_of = [&](const Tensor& A, la::SpectralOptions o) {
    const EagerTensor x = rt->variable(A);
    const auto f = la::svd(x, true, o);
    sum(abs(f.U) * rt->tensor(W) + abs(f.Vh)).backward();
    return x.grad().value();
  };
  const Tensor I = eye(3);
  const la::SpectralOptions reg{la::GaugePolicy::Regularised, 1e-6};
  // Strict: |U| at I has no component along rotations of the degenerate pairs (abs'(0) =
  // 0), so the zeroed 1 / gap factors give a finite gradient (spectral_degenerate_test).
  EXPECT_TRUE(all_finite(grad_of(I, {})));
  EXPECT_TRUE(all_finite(grad_of(I, reg)));
  // Away from degeneracy both policies agree (up to O(eta^2)).
  const Tensor A = make(DType::F64, {3, 3}, 2.0);
  expect_close(grad_of(A, reg), grad_of(A, {}), 1e-8);
  // Rank-deficient non-square input: 1 / s is broadened too.
  Tensor Z = zeros({4, 3});
  const EagerTensor z = rt->variable(Z);
  const auto f = la::svd(z, false, reg);
  sum(abs(f.U)).backward();
  EXPECT_TRUE(all_finite(z.grad().value()));
}

TEST(LinalgSvd, ErrorsAreTyped) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  EXPECT_TF_ERROR(la::svd(make(DType::F64, {4}), true, cpu), ErrorKind::RankMismatch);
  EXPECT_TF_ERROR(la::svdvals(zeros({2, 2}, DType::I32), cpu), ErrorKind::DTypeMismatch);
  std::vector<double> v(6, 1.0);
  v[4] = std::nan("");
  EXPECT_TF_ERROR(la::svd(Tensor::from_col_major({3, 2, 1}, v), false, cpu),
                  ErrorKind::NoConvergence);
  EXPECT_TF_ERROR(la::svd(rt->tensor(eye(2)), true, la::SpectralOptions{.eta = 0.0}),
                  ErrorKind::InvalidArgument);
}

TEST(LinalgSvd, TracedWithSymbolicExtents) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  const TracedTensor p = placeholder(DType::F64, {SymDim::var("m"), SymDim::var("n")}, "a");
  const auto t = la::svd(p, false);
  const auto g = grad_many(sum(abs(t.U)) + sum(t.S) + sum(abs(matmul(t.U, t.Vh))), {p});
  const Program prog = compile({t.S, *g[0]}, {p});
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  for (const Shape& s : {Shape{4, 3}, Shape{3, 5}}) {
    const Tensor A = make(DType::F64, s, 0.5);
    const auto out = run_compiled(*rt->runtime(), prog, {A});
    expect_close(out[0], la::svdvals(A, cpu), 1e-12);
    // The same gradient as the eager tier with constant extents.
    const EagerTensor x = rt->variable(A);
    const auto f = la::svd(x, false);
    (sum(abs(f.U)) + sum(f.S) + sum(abs(matmul(f.U, f.Vh)))).backward();
    expect_close(out[1], x.grad().value(), 1e-10);
  }
  // full_matrices with m != n slices U / Vh: its derivative needs constant extents.
  EXPECT_TF_ERROR(grad_many(sum(abs(la::svd(p, true).U)), {p}), ErrorKind::Unsupported);
}
