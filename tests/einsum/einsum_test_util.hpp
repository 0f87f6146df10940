#pragma once
// Helpers shared by the einsum tests: deterministic operands, a naive
// reference einsum over integer labels, and host copies.

#include <gtest/gtest.h>

#include <complex>
#include <map>
#include <vector>

#include "tenferro/ad/grad_check.hpp"
#include "tenferro/ad/program.hpp"
#include "tenferro/ad/transforms.hpp"
#include "tenferro/einsum/einsum.hpp"
#include "test_util.hpp"

namespace etest {

using namespace tenferro;
using cd = std::complex<double>;

inline const EagerRuntimePtr& runtime() {
  static const EagerRuntimePtr rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  return rt;
}

inline std::int64_t numel(const Shape& s) {
  std::int64_t n = 1;
  for (auto e : s) n *= e;
  return n;
}

/// Deterministic values in [-1, 1); `seed` selects another stream.
inline std::vector<cd> values(std::int64_t n, std::uint64_t seed) {
  std::uint64_t state = 0x9E3779B97F4A7C15ull ^ (seed * 7919 + 13);
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return static_cast<double>(state >> 11) * 0x1.0p-52 - 1.0;
  };
  std::vector<cd> v;
  for (std::int64_t i = 0; i < n; ++i) {
    const double re = next(), im = next();
    v.emplace_back(re, im);
  }
  return v;
}

/// A tensor of `shape` with values(seed) (real parts only for real dtypes).
inline Tensor make(const Shape& shape, DType dt, std::uint64_t seed) {
  const auto v = values(numel(shape), seed);
  std::vector<double> re;
  for (auto z : v) re.push_back(z.real());
  switch (dt) {
    case DType::F32:
      return Tensor::from_col_major(shape, std::vector<float>(re.begin(), re.end()));
    case DType::C64: {
      std::vector<std::complex<float>> f;
      for (auto z : v) f.emplace_back(static_cast<float>(z.real()), static_cast<float>(z.imag()));
      return Tensor::from_col_major(shape, f);
    }
    case DType::C128:
      return Tensor::from_col_major(shape, v);
    default:
      return Tensor::from_col_major(shape, re);
  }
}

inline std::vector<cd> host(const Tensor& t) {
  return cast(t, c128, runtime()->backend()).to_vector<cd>();
}
inline std::vector<cd> host(const EagerTensor& t) {
  return host(t.value());
}

/// Naive einsum: every assignment of the labels, accumulated into the output
/// (output positions whose repeated labels differ stay 0). Column-major.
inline std::vector<cd> naive(const std::vector<std::vector<std::int64_t>>& labels,
                             const std::vector<Tensor>& ops, const std::vector<std::int64_t>& out,
                             Shape* out_shape = nullptr) {
  std::map<std::int64_t, std::int64_t> ext;
  std::vector<std::vector<cd>> data;
  for (std::size_t k = 0; k < ops.size(); ++k) {
    data.push_back(host(ops[k]));
    for (std::size_t i = 0; i < labels[k].size(); ++i) {
      const auto e = ops[k].shape()[i];
      auto [it, fresh] = ext.emplace(labels[k][i], e);
      if (!fresh && it->second == 1) it->second = e;
    }
  }
  std::vector<std::int64_t> ids;
  for (const auto& [id, e] : ext) ids.push_back(id);
  Shape oshape;
  for (auto l : out) oshape.push_back(ext[l]);
  if (out_shape) *out_shape = oshape;
  std::vector<cd> result(static_cast<std::size_t>(numel(oshape)), cd{});
  std::int64_t total = 1;
  for (auto id : ids) total *= ext[id];
  std::map<std::int64_t, std::int64_t> val;
  for (std::int64_t t = 0; t < total; ++t) {
    std::int64_t r = t;
    for (auto id : ids) val[id] = r % ext[id], r /= ext[id];
    cd prod = 1;
    for (std::size_t k = 0; k < ops.size(); ++k) {
      std::int64_t off = 0, stride = 1;
      for (std::size_t i = 0; i < labels[k].size(); ++i) {
        const auto e = ops[k].shape()[i];
        off += (e == 1 ? 0 : val[labels[k][i]]) * stride;
        stride *= e;
      }
      prod *= data[k][static_cast<std::size_t>(off)];
    }
    std::int64_t off = 0, stride = 1;
    for (std::size_t i = 0; i < out.size(); ++i) {
      off += val[out[i]] * stride;
      stride *= oshape[i];
    }
    result[static_cast<std::size_t>(off)] += prod;
  }
  // Repeated output labels: only positions where all copies agree were hit,
  // since each assignment gives one value per label.
  return result;
}

/// Labels of a letter term ("ij" -> {'i', 'j'}).
inline std::vector<std::int64_t> letters(const std::string& s) {
  std::vector<std::int64_t> v;
  for (char c : s) v.push_back(c);
  return v;
}

inline void expect_close(const std::vector<cd>& got, const std::vector<cd>& want, double tol,
                         const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_LE(std::abs(got[i] - want[i]), tol * (1 + std::abs(want[i])))
        << what << " element " << i << " got " << got[i] << " want " << want[i];
  }
}

}  // namespace etest

namespace etest {

/// einsum through the traced tier: placeholders, compile, run.
inline Tensor run_traced(const std::string& eq, const std::vector<Tensor>& ops,
                         const EinsumOptions& opt = {}) {
  std::vector<TracedTensor> ph;
  for (const Tensor& t : ops) ph.push_back(placeholder(t.dtype(), to_sym_shape(t.shape().span())));
  const TracedTensor y = einsum(eq, ph, opt);
  const Program p = compile({y}, std::span<const TracedTensor>(ph));
  return run_compiled(*runtime()->runtime(), p, std::span<const Tensor>(ops))[0];
}

/// einsum through the eager tier.
inline EagerTensor run_eager(const std::string& eq, const std::vector<Tensor>& ops,
                             const EinsumOptions& opt = {}) {
  std::vector<EagerTensor> ev;
  for (const Tensor& t : ops) ev.push_back(runtime()->tensor(t));
  return einsum(eq, ev, opt);
}

}  // namespace etest
