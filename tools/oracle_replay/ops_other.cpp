// Reductions, structural ops and conversions, the keyword-argument helpers, the
// tier adapters and the dispatcher over the table files.

#include <algorithm>
#include <array>
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

// var/std(input, unbiased), var/std(input, dim, unbiased, keepdim) or
// var/std(input, dim, *, correction, keepdim): an explicit correction wins,
// then unbiased, then 1 (PyTorch's default).
bool var_unbiased_first(const Case& c) {
  return !c.args.empty() && c.args[0].is_boolean();
}

double var_correction(const Case& c) {
  if (const Json* v = arg(c, "correction", -1)) return json_number(*v);
  if (const Json* u = arg(c, "unbiased", var_unbiased_first(c) ? 0 : 1)) {
    if (!u->is_boolean()) throw std::runtime_error("unbiased is not a bool");
    return u->get<bool>() ? 1.0 : 0.0;
  }
  return 1.0;
}

// The accumulation dtype of sum/mean/prod/nansum/nanmean (keyword `dtype`).
template <class T>
T with_dtype_arg(const Case& c, const T& x) {
  const Json* d = arg(c, "dtype", -1);
  return d ? convert(x, dtype_from_name(d->get<std::string>())) : x;
}

}  // namespace

template <class T>
OpFn<T> build_reduction(const Case& c) {
  const std::string& op = c.op;
  // sum, mean, prod, amax, amin and diagonal replay through the catalog
  // (ops_catalog.cpp); var and std take PyTorch's unbiased forms.
  static const std::set<std::string> handled = {"var",          "var_unbiased", "std",
                                                "std_unbiased", "nansum",       "nanmean",
                                                "double",       "cdouble",      "fill"};
  if (!handled.count(op)) return {};
  const bool keepdim = op == "fill" ? false : arg_bool(c, "keepdim", 1, false);
  if (op == "var" || op == "var_unbiased" || op == "std" || op == "std_unbiased") {
    const double corr = var_correction(c);
    const bool unbiased_first = var_unbiased_first(c);
    const int dim_pos = unbiased_first ? -1 : 0;
    const bool kd = arg_bool(c, "keepdim", unbiased_first ? -1 : 2, false);
    const bool take_sqrt = op[0] == 's';
    return [&c, kd, corr, dim_pos, take_sqrt](std::span<const T> x) {
      const Axes axes = arg_axes(c, "dim", dim_pos, x[0].rank());
      return take_sqrt ? std_axes(x[0], axes, corr, kd) : var_axes(x[0], axes, corr, kd);
    };
  }
  if (op == "nansum" || op == "nanmean") {
    const bool mean = op == "nanmean";
    return [&c, keepdim, mean](std::span<const T> x) {
      const T in = with_dtype_arg(c, x[0]);
      const Axes axes = arg_axes(c, "dim", 0, in.rank());
      return mean ? nanmean_axes(in, axes, keepdim) : nansum_axes(in, axes, keepdim);
    };
  }
  if (op == "double") {
    return [](std::span<const T> x) { return cast(x[0], DType::F64); };
  }
  if (op == "cdouble") {
    return [](std::span<const T> x) { return convert(x[0], DType::C128); };
  }
  if (op == "fill") {
    // value: a number, a bool, or a complex number as [re, im].
    Scalar value(0.0);
    if (const Json* v = arg(c, "value", 0)) {
      value = v->is_array() && v->size() == 2
                  ? Scalar(c128_t(json_number((*v)[0]), json_number((*v)[1])))
                  : Scalar(json_number(*v));
    }
    return [value](std::span<const T> x) { return full_like(x[0], value); };
  }
  return {};
}

template OpFn<EagerTensor> build_reduction<EagerTensor>(const Case&);
template OpFn<TracedTensor> build_reduction<TracedTensor>(const Case&);

// ---- dispatch ---------------------------------------------------------------------------

namespace {

// Binary ops: PyTorch also accepts a Python number as the second operand, which
// the case records as op_args[0] (or a keyword) instead of an input tensor.
const std::set<std::string>& binary_ops() {
  static const std::set<std::string> ops = {"add",
                                            "sub",
                                            "rsub",
                                            "mul",
                                            "div_no_rounding_mode",
                                            "true_divide",
                                            "pow",
                                            "float_power",
                                            "atan2",
                                            "hypot",
                                            "copysign",
                                            "fmax",
                                            "fmin",
                                            "maximum",
                                            "minimum",
                                            "max_binary",
                                            "min_binary",
                                            "clamp_min",
                                            "clamp_max",
                                            "xlogy",
                                            "special_xlog1py",
                                            "logaddexp",
                                            "ldexp",
                                            "complex",
                                            "polar",
                                            "__radd__",
                                            "__rsub__",
                                            "__rmul__",
                                            "__rdiv__",
                                            "__rpow__",
                                            "__rmod__",
                                            "nn_functional_prelu"};
  return ops;
}

Scalar scalar_from_json(const Json& v) {
  if (v.is_array() && v.size() == 2) return Scalar(c128_t(json_number(v[0]), json_number(v[1])));
  if (v.is_boolean()) return Scalar(v.get<bool>());
  return Scalar(json_number(v));
}

template <class T>
OpFn<T> build_table(const Case& c) {
  if (auto f = build_elementwise<T>(c)) return f;
  if (auto f = build_reduction<T>(c)) return f;
  if (auto f = build_special<T>(c)) return f;
  if (auto f = build_nn<T>(c)) return f;
  if (auto f = build_scan<T>(c)) return f;
  // Every other primitive of the catalog under its own name (or PyTorch's
  // special_ form): a new primitive replays without a mapping.
  return build_catalog<T>(c);
}

}  // namespace

template <class T>
OpFn<T> build_op(const Case& c) {
  OpFn<T> f = build_table<T>(c);
  if (!f || c.inputs.size() != 1 || !binary_ops().count(c.op)) return f;
  const Json* other = arg(c, "other", 0);
  if (!other) other = arg(c, "exponent", 0);
  if (!other)
    throw std::runtime_error("binary op '" + c.op + "' with one tensor and no scalar operand");
  const Scalar s = scalar_from_json(*other);
  return [f, s](std::span<const T> x) {
    const std::array<T, 2> both = {x[0], scalar_like(x[0], s)};
    return f(both);
  };
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
  if (c.op == "lu_solve" && std::none_of(c.inputs.begin(), c.inputs.end(), [](const auto& in) {
        return is_integral(in.second.dtype());
      })) {
    return {Support::Exception,
            "lu_solve cases without pivots: the function depends on pivots the case does not "
            "record (docs/oracle-exceptions.md)"};
  }
  if (linalg_ops().count(c.op)) {
    try {
      if (build_linalg<EagerTensor>(c)) return {Support::Ok, {}};
    } catch (const std::exception& e) {
      return {Support::Unknown, e.what()};
    }
    return {Support::Linalg, "linear-algebra op without a mapping yet"};
  }
  if (c.op == "nn_functional_rrelu" && arg_bool(c, "training", 3, false)) {
    return {Support::Exception,
            "rrelu with training=True samples random slopes (docs/oracle-exceptions.md)"};
  }
  try {
    if (build_fft<EagerTensor>(c) || build_einsum<EagerTensor>(c) || build_op<EagerTensor>(c))
      return {Support::Ok, {}};
  } catch (const std::exception& e) {
    return {Support::Unknown, e.what()};
  }
  return {Support::Unknown, "no mapping for op '" + c.op + "'"};
}

}  // namespace replay
