#pragma once
// Shared helpers for the traced-tier tests.

#include <gtest/gtest.h>

#include "example_families/example_families.hpp"
#include "tenferro/ad/ops.hpp"
#include "tenferro/ad/program.hpp"
#include "tenferro/ad/transforms.hpp"
#include "test_util.hpp"

namespace ttest {

using namespace tenferro;

inline RuntimePtr cpu_runtime(CpuBackendOptions options = {}) {
  return Runtime::builder()
      .backend(std::make_shared<CpuBackend>(options))
      .module(example::make_example_module())
      .build();
}

inline SymDim n_dim() {
  return SymDim::var("n");
}
inline SymDim m_dim() {
  return SymDim::var("m");
}

inline Tensor random(std::initializer_list<std::int64_t> shape, DType dtype, std::uint64_t seed) {
  Generator gen(seed);
  return randn(shape, dtype, gen);
}

inline Tensor zeros_like_tensor(const Tensor& t) {
  return zeros(t.shape(), t.dtype());
}

/// Values of two tensors equal to the last bit (same dtype and shape).
inline void expect_identical(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.shape(), b.shape());
  EXPECT_EQ(max_abs_diff(a, b), 0.0);
}

/// Runs a program once (prepared through the runtime's program cache).
inline std::vector<Tensor> eval(Runtime& rt, const Program& p, const std::vector<Tensor>& in,
                                const PrepareOptions& options = {}) {
  return run_compiled(rt, p, in, options);
}

/// Central-difference gradient of output 0 (a real scalar) with respect to
/// input i. Complex inputs: dL/dRe + i dL/dIm (the library's convention).
inline Tensor fd_grad(Runtime& rt, const Program& p, std::vector<Tensor> in, std::size_t i,
                      double h = 1e-6) {
  const Tensor x = in[i].dtype() == c128 ? in[i] : convert(in[i], f64, rt.backend());
  std::vector<c128_t> v = convert(x, c128, rt.backend()).to_vector<c128_t>();
  const bool complex_input = is_complex(in[i].dtype());
  std::vector<c128_t> g(v.size());
  for (std::size_t k = 0; k < v.size(); ++k) {
    for (int part = 0; part < (complex_input ? 2 : 1); ++part) {
      const c128_t step = part == 0 ? c128_t(h, 0) : c128_t(0, h);
      double f[2];
      for (int sgn = 0; sgn < 2; ++sgn) {
        std::vector<c128_t> w = v;
        w[k] += sgn == 0 ? step : -step;
        Tensor wt = Tensor::from_col_major(in[i].shape(), w);
        in[i] = complex_input ? wt : cast(wt, in[i].dtype(), rt.backend());
        f[sgn] = eval(rt, p, in)[0].item().real();
      }
      const double d = (f[0] - f[1]) / (2 * h);
      g[k] += part == 0 ? c128_t(d, 0) : c128_t(0, d);
    }
  }
  Tensor gt = Tensor::from_col_major(x.shape(), g);
  return complex_input ? gt : cast(gt, in[i].dtype(), rt.backend());
}

/// Central-difference directional derivative of every output along `dirs`.
inline std::vector<Tensor> fd_jvp(Runtime& rt, const Program& p, const std::vector<Tensor>& in,
                                  const std::vector<Tensor>& dirs, double h = 1e-6) {
  Backend& cpu = rt.backend();
  std::vector<Tensor> plus, minus;
  for (std::size_t i = 0; i < in.size(); ++i) {
    Tensor step = mul(dirs[i], Tensor::scalar(h), cpu);
    plus.push_back(cast(add(in[i], step, cpu), in[i].dtype(), cpu));
    minus.push_back(cast(sub(in[i], step, cpu), in[i].dtype(), cpu));
  }
  auto fp = eval(rt, p, plus), fm = eval(rt, p, minus);
  std::vector<Tensor> out;
  for (std::size_t j = 0; j < fp.size(); ++j)
    out.push_back(mul(sub(fp[j], fm[j], cpu), Tensor::scalar(1.0 / (2 * h)), cpu));
  return out;
}

inline ::testing::AssertionResult close(const Tensor& a, const Tensor& b, double tol = 1e-6) {
  if (a.shape() != b.shape()) return ::testing::AssertionFailure() << "shapes differ";
  const double d = max_abs_diff(a, b);
  if (d <= tol * (1.0 + max_abs_diff(b, zeros_like_tensor(b))))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "max |a - b| = " << d << "\n" << a << "\n" << b;
}

}  // namespace ttest
