// Reductions, structural ops and conversions, the keyword-argument helpers, the
// tier adapters and the dispatcher over the table files.

#include <algorithm>
#include <set>

#include "ops.hpp"
#include "tenferro/ad/composite.hpp"

namespace replay {

using namespace tenferro;

// ---- keyword arguments ------------------------------------------------------------

const Json* arg(const Case& c, const char* key, int pos) {
  if (c.kwargs.contains(key)) {
    const Json& v = c.kwargs[key];
    return v.is_null() ? nullptr : &v;
  }
  if (pos >= 0 && static_cast<std::size_t>(pos) < c.args.size()) {
    const Json& v = c.args[static_cast<std::size_t>(pos)];
    return v.is_null() ? nullptr : &v;
  }
  return nullptr;
}

double arg_double(const Case& c, const char* key, int pos, double fallback) {
  const Json* v = arg(c, key, pos);
  return v ? json_number(*v) : fallback;
}

bool arg_bool(const Case& c, const char* key, int pos, bool fallback) {
  const Json* v = arg(c, key, pos);
  if (!v) return fallback;
  if (!v->is_boolean()) throw std::runtime_error(std::string("argument ") + key + " is not a bool");
  return v->get<bool>();
}

Axes arg_axes(const Case& c, const char* key, int pos, std::int64_t rank) {
  Axes axes;
  std::vector<std::int64_t> dims;
  if (const Json* v = arg(c, key, pos)) {
    if (v->is_array()) {
      dims = v->get<std::vector<std::int64_t>>();
    } else {
      dims.push_back(v->get<std::int64_t>());
    }
  }
  if (dims.empty()) {  // absent, null or []: every axis
    for (std::int64_t a = 0; a < rank; ++a) axes.push_back(a);
    return axes;
  }
  for (std::int64_t d : dims) axes.push_back(dim_to_axis(d, rank));
  if (rank == 0) axes.clear();  // PyTorch accepts dim 0/-1 on a scalar
  return axes;
}

std::optional<std::int64_t> name_suffix_int(const std::string& op, const std::string& marker) {
  const auto pos = op.rfind(marker);
  if (pos == std::string::npos) return std::nullopt;
  std::string rest = op.substr(pos + marker.size());
  bool negative = false;
  if (rest.rfind("neg_", 0) == 0) {
    negative = true;
    rest = rest.substr(4);
  }
  if (rest.empty() || rest.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  const std::int64_t v = std::stoll(rest);
  return negative ? -v : v;
}

// ---- tier adapters --------------------------------------------------------------------

Shape concrete_shape(const EagerTensor& x) {
  return x.shape();
}
Shape concrete_shape(const TracedTensor& x) {
  Shape s;
  for (const SymDim& d : x.shape()) s.push_back(d.constant());
  return s;
}
EagerTensor reshape_to(const EagerTensor& x, const Shape& shape) {
  return reshape(x, std::span<const std::int64_t>(shape.data(), shape.size()));
}
TracedTensor reshape_to(const TracedTensor& x, const Shape& shape) {
  return reshape(x, to_sym_shape(std::span<const std::int64_t>(shape.data(), shape.size())));
}

namespace {

EagerTensor reduce_axes(ReduceOp op, const EagerTensor& x, const Axes& axes, bool keepdim) {
  return reduce(op, x, std::span<const std::int64_t>(axes.data(), axes.size()), keepdim);
}
TracedTensor reduce_axes(ReduceOp op, const TracedTensor& x, const Axes& axes, bool keepdim) {
  return reduce(op, x, axes, keepdim);
}
EagerTensor var_axes(const EagerTensor& x, const Axes& axes, double correction, bool keepdim) {
  return var(x, std::span<const std::int64_t>(axes.data(), axes.size()), correction, keepdim);
}
TracedTensor var_axes(const TracedTensor& x, const Axes& axes, double correction, bool keepdim) {
  return var(x, axes, correction, keepdim);
}

EagerTensor std_axes(const EagerTensor& x, const Axes& axes, double correction, bool keepdim) {
  return std_dev(x, std::span<const std::int64_t>(axes.data(), axes.size()), correction, keepdim);
}
TracedTensor std_axes(const TracedTensor& x, const Axes& axes, double correction, bool keepdim) {
  return std_dev(x, axes, correction, keepdim);
}
EagerTensor nansum_axes(const EagerTensor& x, const Axes& axes, bool keepdim) {
  return nansum(x, std::span<const std::int64_t>(axes.data(), axes.size()), keepdim);
}
TracedTensor nansum_axes(const TracedTensor& x, const Axes& axes, bool keepdim) {
  return nansum(x, axes, keepdim);
}
EagerTensor nanmean_axes(const EagerTensor& x, const Axes& axes, bool keepdim) {
  return nanmean(x, std::span<const std::int64_t>(axes.data(), axes.size()), keepdim);
}
TracedTensor nanmean_axes(const TracedTensor& x, const Axes& axes, bool keepdim) {
  return nanmean(x, axes, keepdim);
}

DType dtype_from_name(const std::string& s) {
  if (s == "float32") return DType::F32;
  if (s == "float64") return DType::F64;
  if (s == "complex64") return DType::C64;
  if (s == "complex128") return DType::C128;
  throw std::runtime_error("unsupported dtype kwarg '" + s + "'");
}

// var/std(input, dim, *, correction, keepdim) or var/std(input, unbiased): an
// explicit correction wins, then unbiased, then 1 (PyTorch's default).
double var_correction(const Case& c) {
  if (const Json* v = arg(c, "correction", -1)) return json_number(*v);
  if (const Json* u = arg(c, "unbiased", -1)) return u->get<bool>() ? 1.0 : 0.0;
  if (!c.args.empty() && c.args[0].is_boolean()) return c.args[0].get<bool>() ? 1.0 : 0.0;
  return 1.0;
}

// The dim of var/std: keyword, or the first positional unless that is `unbiased`.
int var_dim_pos(const Case& c) {
  return !c.args.empty() && c.args[0].is_boolean() ? -1 : 0;
}

}  // namespace

template <class T>
OpFn<T> build_reduction(const Case& c) {
  const std::string& op = c.op;
  static const std::set<std::string> handled = {
      "sum",          "mean",   "amax",    "amin",     "prod",   "var",     "var_unbiased", "std",
      "std_unbiased", "nansum", "nanmean", "diagonal", "double", "cdouble", "fill"};
  if (!handled.count(op)) return {};
  const bool keepdim = op == "diagonal" || op == "fill" ? false : arg_bool(c, "keepdim", 1, false);
  const auto reduction = [&c, keepdim](ReduceOp rop) -> OpFn<T> {
    return [&c, keepdim, rop](std::span<const T> x) {
      return reduce_axes(rop, x[0], arg_axes(c, "dim", 0, x[0].rank()), keepdim);
    };
  };
  if (op == "sum") return reduction(ReduceOp::Sum);
  if (op == "mean") return reduction(ReduceOp::Mean);
  if (op == "amax") return reduction(ReduceOp::Max);
  if (op == "amin") return reduction(ReduceOp::Min);
  if (op == "prod") {
    std::optional<DType> dt;
    if (const Json* d = arg(c, "dtype", -1)) dt = dtype_from_name(d->get<std::string>());
    return [&c, keepdim, dt](std::span<const T> x) {
      const T in = dt ? convert(x[0], *dt) : x[0];
      return reduce_axes(ReduceOp::Prod, in, arg_axes(c, "dim", 0, in.rank()), keepdim);
    };
  }
  if (op == "var" || op == "var_unbiased" || op == "std" || op == "std_unbiased") {
    const double corr = var_correction(c);
    const int pos = var_dim_pos(c);
    const bool kd = arg_bool(c, "keepdim", pos < 0 ? -1 : 2, false);
    const bool take_sqrt = op[0] == 's';
    return [&c, kd, corr, pos, take_sqrt](std::span<const T> x) {
      const Axes axes = arg_axes(c, "dim", pos, x[0].rank());
      return take_sqrt ? std_axes(x[0], axes, corr, kd) : var_axes(x[0], axes, corr, kd);
    };
  }
  if (op == "nansum" || op == "nanmean") {
    const bool mean = op == "nanmean";
    return [&c, keepdim, mean](std::span<const T> x) {
      const Axes axes = arg_axes(c, "dim", 0, x[0].rank());
      return mean ? nanmean_axes(x[0], axes, keepdim) : nansum_axes(x[0], axes, keepdim);
    };
  }
  if (op == "diagonal") {
    const auto offset = static_cast<std::int64_t>(arg_double(c, "offset", 0, 0));
    const auto dim1 = static_cast<std::int64_t>(arg_double(c, "dim1", 1, 0));
    const auto dim2 = static_cast<std::int64_t>(arg_double(c, "dim2", 2, 1));
    // PyTorch appends the diagonal as the last row-major dimension; ours comes
    // first in column-major order, which is the same memory layout.
    return [offset, dim1, dim2](std::span<const T> x) {
      const std::int64_t r = x[0].rank();
      return diagonal(x[0], offset, dim_to_axis(dim1, r), dim_to_axis(dim2, r));
    };
  }
  if (op == "double") {
    return [](std::span<const T> x) { return cast(x[0], DType::F64); };
  }
  if (op == "cdouble") {
    return [](std::span<const T> x) { return convert(x[0], DType::C128); };
  }
  if (op == "fill") {
    const double value = arg_double(c, "value", 0, 0.0);
    return [value](std::span<const T> x) { return full_like(x[0], Scalar(value)); };
  }
  return {};
}

template OpFn<EagerTensor> build_reduction<EagerTensor>(const Case&);
template OpFn<TracedTensor> build_reduction<TracedTensor>(const Case&);

// ---- dispatch ---------------------------------------------------------------------------

template <class T>
OpFn<T> build_op(const Case& c) {
  if (auto f = build_elementwise<T>(c)) return f;
  if (auto f = build_reduction<T>(c)) return f;
  if (auto f = build_special<T>(c)) return f;
  if (auto f = build_nn<T>(c)) return f;
  return {};
}

template OpFn<EagerTensor> build_op<EagerTensor>(const Case&);
template OpFn<TracedTensor> build_op<TracedTensor>(const Case&);

namespace {
const std::set<std::string>& linalg_ops() {
  static const std::set<std::string> ops = {"cholesky",
                                            "cholesky_ex",
                                            "cond",
                                            "cross",
                                            "det",
                                            "eig",
                                            "eigh",
                                            "eigvals",
                                            "eigvalsh",
                                            "householder_product",
                                            "inv",
                                            "inv_ex",
                                            "lstsq_grad_oriented",
                                            "lu",
                                            "lu_factor",
                                            "lu_factor_ex",
                                            "lu_solve",
                                            "matrix_exp",
                                            "matrix_norm",
                                            "matrix_power",
                                            "multi_dot",
                                            "norm",
                                            "pinv",
                                            "pinv_hermitian",
                                            "pinv_singular",
                                            "qr",
                                            "slogdet",
                                            "solve",
                                            "solve_ex",
                                            "solve_triangular",
                                            "svd",
                                            "svdvals",
                                            "tensorinv",
                                            "tensorsolve",
                                            "vander",
                                            "vecdot",
                                            "vector_norm"};
  return ops;
}
}  // namespace

Classification classify(const Case& c) {
  if (linalg_ops().count(c.op)) return {Support::Linalg, "linear-algebra family (later issue)"};
  if (c.op == "nn_functional_rrelu" && arg_bool(c, "training", 3, false)) {
    return {Support::Exception,
            "rrelu with training=True samples random slopes (docs/oracle-exceptions.md)"};
  }
  try {
    if (build_op<EagerTensor>(c)) return {Support::Ok, {}};
  } catch (const std::exception& e) {
    return {Support::Unknown, e.what()};
  }
  return {Support::Unknown, "no mapping for op '" + c.op + "'"};
}

}  // namespace replay
