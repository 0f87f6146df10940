#pragma once
// Helpers shared by the composite linalg tests: tensors from column-major
// values, naive references, and the traced == eager check.

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <vector>

#include "tenferro/ad/grad_check.hpp"
#include "tenferro/ad/program.hpp"
#include "tenferro/ad/transforms.hpp"
#include "tenferro/linalg/linalg.hpp"
#include "test_util.hpp"

namespace comptest {

using namespace tenferro;
namespace la = tenferro::linalg;
using cd = std::complex<double>;

inline const EagerRuntimePtr& runtime() {
  static const EagerRuntimePtr rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  return rt;
}

/// Deterministic pseudo-random values in (-1.5, -0.1] U [0.1, 1.5) (non-zero,
/// distinct, and matrices built from them are well conditioned in practice);
/// `shift` selects another stream.
inline std::vector<double> values(std::int64_t n, double shift = 0.0) {
  std::uint64_t state = 0x9E3779B97F4A7C15ull ^ static_cast<std::uint64_t>(shift * 1000.0 + 17.0);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& x : v) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    const double u = static_cast<double>(state >> 11) * 0x1.0p-53;  // [0, 1)
    x = (u < 0.5 ? -1.0 : 1.0) * (0.1 + 2.8 * std::abs(u - 0.5));
  }
  return v;
}
inline std::vector<cd> cvalues(std::int64_t n, double shift = 0.0) {
  const auto re = values(n, shift), im = values(n, shift + 2.1);
  std::vector<cd> v;
  for (std::size_t i = 0; i < re.size(); ++i) v.emplace_back(re[i], im[i]);
  return v;
}

inline std::int64_t numel(const Shape& s) {
  std::int64_t n = 1;
  for (auto e : s) n *= e;
  return n;
}

inline Tensor real_tensor(const Shape& shape, const std::vector<double>& v, DType dtype = f64) {
  if (dtype == f32) return Tensor::from_col_major(shape, std::vector<float>(v.begin(), v.end()));
  return Tensor::from_col_major(shape, v);
}
inline Tensor complex_tensor(const Shape& shape, const std::vector<cd>& v, DType dtype = c128) {
  if (dtype == c64) {
    std::vector<std::complex<float>> f;
    for (auto z : v) f.emplace_back(static_cast<float>(z.real()), static_cast<float>(z.imag()));
    return Tensor::from_col_major(shape, f);
  }
  return Tensor::from_col_major(shape, v);
}

inline std::vector<double> host(const Tensor& t) {
  return cast(t, f64, runtime()->backend()).to_vector<double>();
}
inline std::vector<double> host(const EagerTensor& t) {
  return host(t.value());
}
inline std::vector<cd> host_c(const EagerTensor& t) {
  return cast(t.value(), c128, runtime()->backend()).to_vector<cd>();
}

inline void expect_near_all(const std::vector<double>& got, const std::vector<double>& want,
                            double rtol, const std::string& what = {}) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (std::isinf(want[i])) {
      EXPECT_EQ(got[i], want[i]) << what << " element " << i;
    } else {
      EXPECT_NEAR(got[i], want[i], rtol * (1.0 + std::abs(want[i]))) << what << " element " << i;
    }
  }
}

/// Column-major multi-index of linear index `i` in `shape`.
inline std::vector<std::int64_t> unravel(std::int64_t i, const Shape& shape) {
  std::vector<std::int64_t> idx;
  for (auto e : shape) {
    idx.push_back(i % e);
    i /= e;
  }
  return idx;
}

/// Naive reduction: for every output position (keepdim shape), the values of
/// x over `axes`, folded by `f`. Returns the outputs in column-major order.
template <class V, class F>
std::vector<double> naive_reduce(const Shape& shape, const std::vector<V>& x,
                                 const std::vector<std::int64_t>& axes, F f) {
  Shape out_shape = shape;
  for (auto a : axes) out_shape[static_cast<std::size_t>(a)] = 1;
  std::vector<std::vector<V>> groups(static_cast<std::size_t>(numel(out_shape)));
  for (std::int64_t i = 0; i < numel(shape); ++i) {
    auto idx = unravel(i, shape);
    for (auto a : axes) idx[static_cast<std::size_t>(a)] = 0;
    std::int64_t o = 0, stride = 1;
    for (std::size_t d = 0; d < idx.size(); ++d) {
      o += idx[d] * stride;
      stride *= out_shape[d];
    }
    groups[static_cast<std::size_t>(o)].push_back(x[static_cast<std::size_t>(i)]);
  }
  std::vector<double> out;
  for (const auto& g : groups) out.push_back(f(g));
  return out;
}

/// The same function through the traced tier (compile + run_compiled, with
/// the gradient of sum(y) built by the traced grad transform) gives the eager
/// value and the eager gradient.
template <class F>
void expect_traced_matches_eager(F f, const std::vector<Tensor>& inputs, double rtol = 1e-12) {
  std::vector<TracedTensor> ph;
  std::vector<EagerTensor> ev;
  for (const Tensor& t : inputs) {
    ph.push_back(placeholder(t.dtype(), to_sym_shape(t.shape().span())));
    ev.push_back(runtime()->tensor(t));
  }
  const TracedTensor y = f(std::span<const TracedTensor>(ph));
  const TracedTensor loss = is_complex(y.dtype()) ? sum(real(y)) : sum(y);
  const auto tg = grad_many(loss, ph);
  std::vector<TracedTensor> outs{y};
  for (const auto& g : tg) {
    if (g) outs.push_back(*g);
  }
  const Program p = compile(outs, std::span<const TracedTensor>(ph));
  Runtime& rt = *runtime()->runtime();
  const std::vector<Tensor> traced = run_compiled(rt, p, std::span<const Tensor>(inputs));
  const EagerTensor eager_out = f(std::span<const EagerTensor>(ev));
  ASSERT_EQ(traced[0].dtype(), eager_out.dtype());
  {
    const auto a = host_c(runtime()->tensor(traced[0])), b = host_c(eager_out);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t k = 0; k < a.size(); ++k) {
      EXPECT_NEAR(std::abs(a[k] - b[k]), 0.0, rtol * (1 + std::abs(b[k]))) << "value " << k;
    }
  }
  auto eloss = [&](std::span<const EagerTensor> z) {
    const EagerTensor v = f(z);
    return is_complex(v.dtype()) ? sum(real(v)) : sum(v);
  };
  const auto eg = grad_many(eloss, ev);
  std::size_t slot = 1;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    ASSERT_EQ(eg[i].has_value(), tg[i].has_value()) << "input " << i;
    if (!eg[i]) continue;
    const auto a = host_c(runtime()->tensor(traced[slot++]));
    const auto b = host_c(*eg[i]);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t k = 0; k < a.size(); ++k) {
      EXPECT_NEAR(std::abs(a[k] - b[k]), 0.0, rtol * (1 + std::abs(b[k]))) << "gradient " << k;
    }
  }
}

inline void expect_gradients_ok(const EagerFnN& f, const std::vector<EagerTensor>& inputs,
                                const std::string& what) {
  GradCheckOptions opt;
  opt.rtol = 1e-5;
  const auto r = check_gradients(f, inputs, opt);
  EXPECT_TRUE(r.ok) << what << ": " << r.detail;
}

}  // namespace comptest
