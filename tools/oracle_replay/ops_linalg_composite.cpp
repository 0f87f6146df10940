// The composite part of the linalg mappings (see ops_linalg.cpp): norms and
// the ops composed of others. Inputs load with reversed shapes (PyTorch dim d
// of a rank-r tensor is our axis r - 1 - d), so dims map through arg_axes /
// dim_to_axis; only the forms that imply "the last two dims are the matrix"
// go through mat().

#include <cmath>
#include <variant>

#include "ops.hpp"

namespace replay {

using namespace tenferro;

namespace {

/// A norm's ord argument: a number (inf as "Infinity"), a string ("fro",
/// "nuc") or absent.
using Ord = std::variant<std::monostate, double, std::string>;

Ord arg_ord(const Case& c, int pos) {
  const Json* v = arg(c, "ord", pos);
  if (!v) return std::monostate{};
  if (v->is_string()) {
    const std::string s = v->get<std::string>();
    if (s == "fro" || s == "nuc") return s;
  }
  return json_number(*v);
}

bool has_arg(const Case& c, const char* key, int pos) {
  return arg(c, key, pos) != nullptr;
}

template <class T>
MultiFn<T> build_norms(const Case& c) {
  const std::string& op = c.op;
  if (op == "vector_norm") {
    const Ord o = arg_ord(c, 0);
    if (std::holds_alternative<std::string>(o)) throw std::runtime_error("string ord for a vector");
    const double ord = std::holds_alternative<double>(o) ? std::get<double>(o) : 2.0;
    const bool keepdim = arg_bool(c, "keepdim", 2, false);
    return [&c, ord, keepdim](std::span<const T> x) {
      const Axes axes = arg_axes(c, "dim", 1, x[0].rank());
      return std::vector<T>{linalg::vector_norm(x[0], ord, axes, keepdim)};
    };
  }
  if (op == "matrix_norm") {
    const Ord o = arg_ord(c, 0);
    const bool keepdim = arg_bool(c, "keepdim", 2, false);
    const bool has_dim = has_arg(c, "dim", 1);
    return [&c, o, keepdim, has_dim](std::span<const T> x) {
      const std::int64_t r = x[0].rank();
      // torch's default dim = (-2, -1): rows are our axis 1, columns axis 0.
      const Axes dims = has_dim ? arg_axes(c, "dim", 1, r) : Axes{1, 0};
      if (std::holds_alternative<double>(o)) {
        return std::vector<T>{linalg::matrix_norm(x[0], std::get<double>(o), dims, keepdim)};
      }
      const std::string s =
          std::holds_alternative<std::string>(o) ? std::get<std::string>(o) : "fro";
      return std::vector<T>{linalg::matrix_norm(x[0], std::string_view(s), dims, keepdim)};
    };
  }
  if (op == "norm") {
    const Ord o = arg_ord(c, 0);
    const bool keepdim = arg_bool(c, "keepdim", 2, false);
    const bool has_dim = has_arg(c, "dim", 1);
    return [&c, o, keepdim, has_dim](std::span<const T> x) {
      const std::int64_t r = x[0].rank();
      std::optional<Axes> dims;
      if (has_dim) dims = arg_axes(c, "dim", 1, r);
      // Without dims, an ord on a 2-D input means torch's matrix (rows, columns)
      // = dims (-2, -1): our layout after mat(), and the result mat()'ed back.
      const bool as_matrix = !has_dim && r == 2 && !std::holds_alternative<std::monostate>(o);
      const T in = as_matrix ? mat(x[0]) : x[0];
      T out;
      if (std::holds_alternative<std::string>(o)) {
        out = linalg::norm(in, std::string_view(std::get<std::string>(o)), dims, keepdim);
      } else {
        std::optional<double> ord;
        if (std::holds_alternative<double>(o)) ord = std::get<double>(o);
        out = linalg::norm(in, ord, dims, keepdim);
      }
      return std::vector<T>{as_matrix ? mat(out) : out};
    };
  }
  if (op == "vecdot") {
    const auto dim = static_cast<std::int64_t>(arg_double(c, "dim", -1, -1));
    return [dim](std::span<const T> x) {
      const std::int64_t r = std::max(x[0].rank(), x[1].rank());
      return std::vector<T>{
          linalg::vecdot(pad_rank(x[0], r), pad_rank(x[1], r), dim_to_axis(dim, r))};
    };
  }
  return {};
}

template <class T>
MultiFn<T> build_products(const Case& c) {
  const std::string& op = c.op;
  if (op == "vander") {
    std::optional<std::int64_t> n;
    if (const Json* v = arg(c, "N", 0)) n = v->get<std::int64_t>();
    // torch (*, n) -> (*, n, N) is ours [n, *] -> [n, N, *]: mat() the result.
    return [n](std::span<const T> x) { return std::vector<T>{mat(linalg::vander(x[0], n))}; };
  }
  if (op == "multi_dot") {
    return [](std::span<const T> x) {
      std::vector<T> ms;
      for (const T& m : x) ms.push_back(mat(m));
      return std::vector<T>{mat(linalg::multi_dot(ms))};
    };
  }
  if (op == "cross") {
    const auto dim = static_cast<std::int64_t>(arg_double(c, "dim", 0, -1));
    return [dim](std::span<const T> x) {
      const std::int64_t r = std::max(x[0].rank(), x[1].rank());
      return std::vector<T>{
          linalg::cross(pad_rank(x[0], r), pad_rank(x[1], r), dim_to_axis(dim, r))};
    };
  }
  if (op == "matrix_exp") {
    return [](std::span<const T> x) { return std::vector<T>{mat(linalg::matrix_exp(mat(x[0])))}; };
  }
  if (op == "matrix_power") {
    const auto n = static_cast<std::int64_t>(arg_double(c, "n", 0, 0));
    return [n](std::span<const T> x) {
      return std::vector<T>{mat(linalg::matrix_power(mat(x[0]), n))};
    };
  }
  return {};
}

std::optional<double> arg_opt_double(const Case& c, const char* key, int pos) {
  const Json* v = arg(c, key, pos);
  if (!v) return std::nullopt;
  return json_number(*v);
}

template <class T>
MultiFn<T> build_solvers(const Case& c) {
  const std::string& op = c.op;
  if (op == "pinv" || op == "pinv_hermitian") {
    const auto atol = arg_opt_double(c, "atol", -1), rtol = arg_opt_double(c, "rtol", -1);
    const bool hermitian = arg_bool(c, "hermitian", -1, false);
    // The Hermitian cases are differentiated through PyTorch's OpInfo wrapper
    // A + A^H (gradcheck_wrapper_hermitian_input), like cholesky and eigh; the
    // references (jvp, vjp and hvp) match only through it.
    return [=](std::span<const T> x) {
      const T a = hermitian ? hermitian_input(mat(x[0])) : mat(x[0]);
      return std::vector<T>{mat(linalg::pinv(a, atol, rtol, hermitian))};
    };
  }
  if (op == "lstsq_grad_oriented" || op == "lstsq") {
    const auto rcond = arg_opt_double(c, "rcond", 0);
    std::string driver;
    if (const Json* d = arg(c, "driver", -1)) driver = d->get<std::string>();
    const auto keys = case_output_keys(c);
    return [=](std::span<const T> x) {
      const auto [sol, res] = linalg::lstsq(mat(x[0]), mat(x[1]), rcond, driver);
      // residuals [k, batch...] are PyTorch's (*, k) as loaded: no mat().
      const T outs[2] = {mat(sol), res};
      std::vector<T> r;
      for (const auto& k : keys) r.push_back(outs[output_index(k)]);
      return r;
    };
  }
  if (op == "cond") {
    const Json* p = arg(c, "p", 0);
    if (p && p->is_string()) {
      const std::string ps = p->get<std::string>();
      return [ps](std::span<const T> x) {
        return std::vector<T>{linalg::cond(mat(x[0]), std::string_view(ps))};
      };
    }
    const std::optional<double> pd = p ? std::optional<double>(json_number(*p)) : std::nullopt;
    return [pd](std::span<const T> x) { return std::vector<T>{linalg::cond(mat(x[0]), pd)}; };
  }
  if (op == "tensorinv") {
    const auto ind = static_cast<std::int64_t>(arg_double(c, "ind", 0, 2));
    // PyTorch's first ind (row-major) dims are our last ind axes.
    return [ind](std::span<const T> x) {
      return std::vector<T>{linalg::tensorinv(x[0], x[0].rank() - ind)};
    };
  }
  if (op == "tensorsolve") {
    // PyTorch moves its dims (d_0, ..., d_k-1) of the row-major A to the end,
    // in that order; ours moves axes to the front, so the list is mapped to our
    // axes and reversed: (r-1-d_k-1, ..., r-1-d_0).
    std::vector<std::int64_t> dims;
    if (const Json* v = arg(c, "dims", 0)) {
      dims = v->is_array() ? v->get<std::vector<std::int64_t>>()
                           : std::vector<std::int64_t>{v->get<std::int64_t>()};
    }
    return [dims](std::span<const T> x) {
      const std::int64_t r = x[0].rank();
      Axes axes;
      for (auto it = dims.rbegin(); it != dims.rend(); ++it) axes.push_back(dim_to_axis(*it, r));
      return std::vector<T>{linalg::tensorsolve(x[0], x[1], axes)};
    };
  }
  return {};
}

}  // namespace

template <class T>
MultiFn<T> build_linalg_composite(const Case& c) {
  if (auto f = build_solvers<T>(c)) return f;
  if (auto f = build_norms<T>(c)) return f;
  if (auto f = build_products<T>(c)) return f;
  return {};
}

template MultiFn<EagerTensor> build_linalg_composite<EagerTensor>(const Case&);
template MultiFn<TracedTensor> build_linalg_composite<TracedTensor>(const Case&);

}  // namespace replay
