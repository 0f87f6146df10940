// The factor part of the linalg mappings (see ops_linalg.cpp).
//
// lu_solve is mapped for cases that carry the pivots as a third input
// (../shared/oracles/lu_solve-pivots: LU, pivots as torch.linalg.lu_factor
// returns them, B). The public cases in cases/lu_solve/ lack the pivots the
// function depends on and stay a documented exception (classify in
// ops_other.cpp, docs/oracle-exceptions.md).

#include "ops.hpp"

namespace replay {

using namespace tenferro;

namespace {

// PyTorch's torch.linalg.solve rule for a batch of vectors B: B.ndim == 1, or
// B.ndim == A.ndim - 1 with B.shape == A.shape[:-1] (row-major shapes).
bool vector_rhs(const Case& c) {
  // Loaded shapes are the row-major ones reversed.
  const Shape& as = c.inputs.at(0).second.shape();
  const Shape& bs = c.inputs.at(1).second.shape();
  std::vector<std::int64_t> a(as.begin(), as.end()), b(bs.begin(), bs.end());
  std::reverse(a.begin(), a.end());
  std::reverse(b.begin(), b.end());
  if (b.size() == 1) return true;
  if (b.size() + 1 != a.size()) return false;
  return std::equal(b.begin(), b.end(), a.begin());
}

// Picks the outputs named by the case's probe keys (output_N) from `all`.
template <class T>
std::vector<T> pick(const Case& c, const std::vector<T>& all) {
  std::vector<T> out;
  for (const auto& k : case_output_keys(c)) {
    out.push_back(k == "value" ? all.at(0) : all.at(output_index(k)));
  }
  return out;
}

}  // namespace

template <class T>
MultiFn<T> build_linalg_factor(const Case& c) {
  const std::string& op = c.op;
  if (op == "qr") {
    const Json* m = arg(c, "mode", 1);
    const std::string mode = m ? m->get<std::string>() : "reduced";
    return [c, mode](std::span<const T> x) {
      auto [q, r] = linalg::qr(mat(x[0]), mode);
      return pick<T>(c, {mat(q), mat(r)});
    };
  }
  if (op == "lu") {
    const bool pivot = arg_bool(c, "pivot", 1, true);
    return [c, pivot](std::span<const T> x) {
      auto [p, l, u] = linalg::lu(mat(x[0]), pivot);
      return pick<T>(c, {mat(p), mat(l), mat(u)});
    };
  }
  if (op == "lu_factor" || op == "lu_factor_ex") {
    const bool pivot = arg_bool(c, "pivot", 1, true);
    return [c, pivot](std::span<const T> x) {
      auto [lu, piv, info] = linalg::lu_factor_ex(mat(x[0]), pivot);
      return pick<T>(c, {mat(lu), piv, info});
    };
  }
  if (op == "solve" || op == "solve_ex") {
    const bool left = arg_bool(c, "left", -1, true);
    const bool vec = vector_rhs(c);
    return [c, left, vec](std::span<const T> x) {
      const T b = vec ? x[1] : mat(x[1]);
      T sol, info;
      if (c.op == "solve") {
        sol = linalg::solve(mat(x[0]), b, left);
        info = sol;  // not an observable of solve
      } else {
        std::tie(sol, info) = linalg::solve_ex(mat(x[0]), b, left);
      }
      return pick<T>(c, {vec ? sol : mat(sol), info});
    };
  }
  if (op == "inv" || op == "inv_ex") {
    return [c](std::span<const T> x) {
      if (c.op == "inv") return std::vector<T>{mat(linalg::inv(mat(x[0])))};
      auto [y, info] = linalg::inv_ex(mat(x[0]));
      return pick<T>(c, {mat(y), info});
    };
  }
  if (op == "lu_solve") {
    // The integer input is the pivots; the other two are LU and B in order.
    std::vector<std::size_t> mats;
    std::optional<std::size_t> piv;
    for (std::size_t i = 0; i < c.inputs.size(); ++i) {
      if (is_integral(c.inputs[i].second.dtype())) {
        piv = i;
      } else {
        mats.push_back(i);
      }
    }
    if (!piv || mats.size() != 2) return {};  // without pivots: not replayable
    const bool left = arg_bool(c, "left", -1, true);
    const bool adjoint = arg_bool(c, "adjoint", -1, false);
    // Pivots [n, batch...] are 1-based row swaps in both conventions; the
    // matrices swap their two leading axes like every other mapping.
    return [left, adjoint, lu = mats[0], b = mats[1], p = *piv](std::span<const T> x) {
      return std::vector<T>{mat(linalg::lu_solve(mat(x[lu]), x[p], mat(x[b]), left, adjoint))};
    };
  }
  if (op == "det") {
    return [](std::span<const T> x) { return std::vector<T>{linalg::det(mat(x[0]))}; };
  }
  if (op == "slogdet") {
    return [c](std::span<const T> x) {
      auto [s, l] = linalg::slogdet(mat(x[0]));
      return pick<T>(c, {s, l});
    };
  }
  if (op == "householder_product") {
    return [](std::span<const T> x) {
      return std::vector<T>{mat(linalg::householder_product(mat(x[0]), x[1]))};
    };
  }
  return {};
}

template MultiFn<EagerTensor> build_linalg_factor<EagerTensor>(const Case&);
template MultiFn<TracedTensor> build_linalg_factor<TracedTensor>(const Case&);

}  // namespace replay
