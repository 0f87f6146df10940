// The spectral part of the linalg mappings (see ops_linalg.cpp): svd,
// svdvals, eigh, eigvalsh, eig, eigvals and their processed observables.
//
// Matrices go through mat() both ways (PyTorch's [..., m, n] row-major is our
// [m, n, ...] after it); value vectors ([..., k] -> [k, ...]) need nothing.
// Outputs are returned in the order of the probes' cotangent keys.

#include <map>

#include "ops.hpp"

namespace replay {

using namespace tenferro;

namespace {

// The leading k columns (or rows) of a matrix [r, c, batch...].
template <class T>
T leading(const T& x, std::int64_t k, bool columns) {
  const Shape s = concrete_shape(x);
  Shape start(s.size(), 0), limit = s;
  limit[columns ? 1 : 0] = k;
  return slice(x, start, limit);
}

template <class T>
std::vector<T> by_keys(const std::vector<std::string>& keys,
                       const std::map<std::string, T>& named) {
  std::vector<T> out;
  for (const auto& k : keys) {
    auto it = named.find(k);
    if (it == named.end())
      throw std::runtime_error("the spectral mapping has no output '" + k + "'");
    out.push_back(it->second);
  }
  return out;
}

char uplo_of(const Case& c) {
  const Json* u = arg(c, "UPLO", -1);
  if (u == nullptr) return 'L';
  const std::string s = u->get<std::string>();
  return s.empty() ? 'L' : s[0];
}

// PyTorch's test_invariance_error_spectral_decompositions differentiates a
// loss of the raw vectors ((U + Vh).sum() for svd, V.sum() for eigh/eig),
// which depends on their phase: the gauge_ill_defined cases map to the raw
// vectors, and the replay's sum-of-outputs loss is phase-dependent too.
bool gauge_case(const Case& c) {
  return c.family == "gauge_ill_defined";
}

template <class T>
MultiFn<T> build_svd(const Case& c) {
  const bool full = arg_bool(c, "full_matrices", -1, true);
  const bool product = c.observable == "svd_uvh_product";
  const bool gauge = gauge_case(c);
  const auto keys = case_output_keys(c);
  return [=](std::span<const T> x) {
    const T a = mat(x[0]);
    const auto r = linalg::svd(a, full);
    if (gauge) return std::vector<T>{mat(r.U), mat(r.Vh)};
    // The observables are of the leading k = min(m, n) singular vectors (the
    // references' shapes): with full_matrices the rest of U / Vh is arbitrary.
    const Shape s = concrete_shape(a);
    const std::int64_t k = std::min(s[0], s[1]);
    const T U = leading(r.U, k, true), Vh = leading(r.Vh, k, false);
    std::map<std::string, T> named{{"s", r.S}, {"u", mat(abs(U))}, {"vh", mat(abs(Vh))}};
    if (product) named.insert({"uvh", mat(matmul(U, Vh))});
    return by_keys(keys, named);
  };
}

// eig / eigh: (eigenvalues, |eigenvectors|), or the raw vectors for the
// gauge cases.
template <class T, class F>
MultiFn<T> eigen_observable(const Case& c, F decompose) {
  const bool gauge = gauge_case(c);
  const auto keys = case_output_keys(c);
  return [=](std::span<const T> x) {
    const auto r = decompose(x[0]);
    if (gauge) return std::vector<T>{mat(r.eigenvectors)};
    return by_keys(keys, std::map<std::string, T>{{"values", r.eigenvalues},
                                                  {"vectors", mat(abs(r.eigenvectors))}});
  };
}

}  // namespace

template <class T>
MultiFn<T> build_linalg_spectral(const Case& c) {
  const std::string& op = c.op;
  if (op == "svd" || op == "linalg_svd") return build_svd<T>(c);
  if (op == "svdvals") {
    return [](std::span<const T> x) { return std::vector<T>{linalg::svdvals(mat(x[0]))}; };
  }
  // Hermitian-input ops: the references are of op(A + A^H) (see
  // hermitian_input). Checked: without the wrapper the eigh/eigvalsh vjp and
  // jvp references are missed by O(1) (the cases' inputs are not Hermitian),
  // with it every case passes.
  if (op == "eigvalsh") {
    const char uplo = uplo_of(c);
    return [uplo](std::span<const T> x) {
      return std::vector<T>{linalg::eigvalsh(hermitian_input(mat(x[0])), uplo)};
    };
  }
  if (op == "eigh") {
    const char uplo = uplo_of(c);
    return eigen_observable<T>(
        c, [uplo](const T& a) { return linalg::eigh(hermitian_input(mat(a)), uplo); });
  }
  if (op == "eig") {
    return eigen_observable<T>(c, [](const T& a) { return linalg::eig(mat(a)); });
  }
  if (op == "eigvals") {
    return [](std::span<const T> x) { return std::vector<T>{linalg::eigvals(mat(x[0]))}; };
  }
  return {};
}

template MultiFn<EagerTensor> build_linalg_spectral<EagerTensor>(const Case&);
template MultiFn<TracedTensor> build_linalg_spectral<TracedTensor>(const Case&);

}  // namespace replay
