// The linalg mappings: PyTorch's torch.linalg ops onto tenferro::linalg, and
// the multi-output form every case runs through. PyTorch matrices load
// transposed (see mat() in ops.hpp); batch axes come out reversed, which
// keeps them in one consistent order for inputs and outputs.

#include "ops.hpp"

namespace replay {

using namespace tenferro;

std::vector<std::string> case_output_keys(const Case& c) {
  std::vector<std::string> keys;
  if (c.probes.empty()) return keys;
  for (const auto& [k, v] : c.probes.front().cotangent) keys.push_back(k);
  return keys;
}

std::size_t output_index(const std::string& key) {
  if (key.rfind("output_", 0) != 0) throw std::runtime_error("unexpected output key '" + key + "'");
  return static_cast<std::size_t>(std::stoul(key.substr(7)));
}

namespace {

template <class T>
MultiFn<T> build_triangular(const Case& c) {
  const std::string& op = c.op;
  if (op == "cholesky" || op == "cholesky_ex") {
    const bool upper = arg_bool(c, "upper", 0, false);
    return [upper](std::span<const T> x) {
      return std::vector<T>{mat(linalg::cholesky(hermitian_input(mat(x[0])), upper))};
    };
  }
  if (op == "solve_triangular") {
    const bool upper = arg_bool(c, "upper", -1, false);
    const bool left = arg_bool(c, "left", -1, true);
    const bool unit = arg_bool(c, "unitriangular", -1, false);
    return [=](std::span<const T> x) {
      return std::vector<T>{mat(linalg::solve_triangular(mat(x[0]), mat(x[1]), upper, left, unit))};
    };
  }
  return {};
}

}  // namespace

template <class T>
MultiFn<T> build_linalg(const Case& c) {
  if (auto f = build_triangular<T>(c)) return f;
  if (auto f = build_linalg_spectral<T>(c)) return f;
  if (auto f = build_linalg_factor<T>(c)) return f;
  if (auto f = build_linalg_composite<T>(c)) return f;
  return {};
}

template <class T>
MultiFn<T> build_multi(const Case& c) {
  if (auto f = build_linalg<T>(c)) return f;
  if (auto f = build_fft<T>(c)) return f;
  if (auto f = build_einsum<T>(c)) return f;
  OpFn<T> g = build_op<T>(c);
  if (!g) return {};
  return [g](std::span<const T> x) { return std::vector<T>{g(x)}; };
}

template MultiFn<EagerTensor> build_linalg<EagerTensor>(const Case&);
template MultiFn<TracedTensor> build_linalg<TracedTensor>(const Case&);
template MultiFn<EagerTensor> build_multi<EagerTensor>(const Case&);
template MultiFn<TracedTensor> build_multi<TracedTensor>(const Case&);

}  // namespace replay
