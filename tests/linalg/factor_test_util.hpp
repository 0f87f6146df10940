#pragma once
// Helpers shared by the factor tests (factor_lu_test.cpp, factor_qr_test.cpp):
// deterministic inputs, tolerances, comparisons and the tier checks.

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
using cd = std::complex<double>;

namespace {

const DType kAll[] = {DType::F32, DType::F64, DType::C64, DType::C128};

double tol(DType d) {
  return d == DType::F32 || d == DType::C64 ? 2e-4 : 1e-11;
}

// A deterministic [shape] tensor of `dtype`; `dominant` adds n to the diagonal
// of every square matrix so it is well conditioned.
Tensor make(const Shape& shape, DType dtype, double seed, bool dominant = false) {
  std::int64_t total = 1;
  for (auto d : shape) total *= d;
  std::vector<cd> v(static_cast<std::size_t>(total));
  for (std::int64_t i = 0; i < total; ++i) {
    auto h = [](double x) {
      const double y = std::sin(x) * 43758.5453;
      return y - std::floor(y) - 0.5;
    };
    v[i] =
        cd(2 * h(12.9898 * i + 78.233 * seed), is_complex(dtype) ? 2 * h(39.346 * i + seed) : 0.0);
  }
  if (dominant && shape[0] == shape[1]) {
    const std::int64_t n = shape[0];
    for (std::int64_t b = 0; n > 0 && b < total / (n * n); ++b)
      for (std::int64_t i = 0; i < n; ++i) v[b * n * n + i + i * n] += cd(n + 1.0, 0);
  }
  const Tensor c = Tensor::from_col_major(shape, v);
  Tensor out = zeros(shape, dtype);
  Tensor::copy_into(c, out);
  return out;
}

std::vector<cd> vals(const Tensor& t) {
  Tensor out = zeros(t.shape(), DType::C128);
  Tensor::copy_into(t, out);
  return out.to_vector<cd>();
}

// Column-major matrix `b` of a [r, c, batch...] value vector.
cd at(const std::vector<cd>& v, std::int64_t r, std::int64_t c, std::int64_t b, std::int64_t i,
      std::int64_t j) {
  return v[b * r * c + i + j * r];
}

std::int64_t batches(const Shape& s) {
  std::int64_t n = 1;
  for (std::size_t d = 2; d < s.size(); ++d) n *= s[d];
  return n;
}

// max |X Y - Z| over every matrix of the batch (X [m, k], Y [k, n], Z [m, n]).
double product_error(const Tensor& x, const Tensor& y, const Tensor& z) {
  const auto X = vals(x), Y = vals(y), Z = vals(z);
  const std::int64_t m = x.shape()[0], k = x.shape()[1], n = y.shape()[1];
  double err = 0;
  for (std::int64_t b = 0; b < batches(z.shape()); ++b)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        cd s = 0;
        for (std::int64_t p = 0; p < k; ++p) s += at(X, m, k, b, i, p) * at(Y, k, n, b, p, j);
        err = std::max(err, std::abs(s - at(Z, m, n, b, i, j)));
      }
  return err;
}

EagerRuntimePtr rt() {
  static EagerRuntimePtr r = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  return r;
}

double max_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  const auto x = vals(a), y = vals(b);
  double e = 0;
  for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) e = std::max(e, std::abs(x[i] - y[i]));
  return e;
}

// f over the direct, eager and traced tiers: equal values, and the traced
// vjp program equals eager's gradient of sum(re(f)) .
template <class F, class D>
void expect_tiers_agree(F f, D direct, const std::vector<Tensor>& inputs) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  const Tensor d = direct(inputs, cpu);
  std::vector<EagerTensor> ev;
  std::vector<TracedTensor> ph;
  for (const Tensor& t : inputs) {
    ev.push_back(rt()->tensor(t));
    ph.push_back(placeholder(t.dtype(), SymShape(t.shape().begin(), t.shape().end())));
  }
  const EagerTensor e = f(std::span<const EagerTensor>(ev));
  EXPECT_LT(max_diff(d, e.value()), 1e-12);
  const TracedTensor y = f(std::span<const TracedTensor>(ph));
  const Program p =
      compile(std::span<const TracedTensor>(&y, 1), std::span<const TracedTensor>(ph));
  Runtime& r = *rt()->runtime();
  const auto out = run_compiled(r, p, std::span<const Tensor>(inputs));
  EXPECT_LT(max_diff(d, out[0]), 1e-12);
  std::vector<Tensor> vin = inputs;
  vin.push_back(ones(d.shape(), d.dtype()));
  const auto vj = run_compiled(r, vjp(p), std::span<const Tensor>(vin));
  const auto g = grad_many(
      [&](std::span<const EagerTensor> z) {
        const EagerTensor o = f(z);
        return sum(is_complex(o.dtype()) ? real(o) : o);
      },
      ev);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    ASSERT_TRUE(g[i].has_value());
    EXPECT_LT(max_diff(vj[1 + i], g[i]->value()), 1e-10) << "input " << i;
  }
}

}  // namespace
