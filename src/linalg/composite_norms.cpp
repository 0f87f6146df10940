// Vector and matrix norms and vecdot, composed of the core op surface once for
// both AD tiers. The kinks are guarded so that the derivatives are PyTorch's
// (linalg_vector_norm_backward and norm_jvp): see the comments below.

#include <cmath>
#include <limits>
#include <string>

#include "linalg/composite_util.hpp"
#include "tenferro/ad/composite.hpp"
#include "tenferro/core/report_as.hpp"
#include "tenferro/linalg/composite.hpp"
#include "tenferro/linalg/spectral.hpp"

namespace tenferro::linalg {
namespace detail {
namespace {

std::string ord_name(double ord) {
  if (std::isinf(ord)) return ord > 0 ? "inf" : "-inf";
  return tenferro::detail::cat(ord);
}

// where(z, 0, f(where(z, 1, x))): f(x) where x != 0, 0 where x == 0, with a
// zero (not NaN) derivative at x == 0 in every order.
template <LinalgTensor T, class F>
T guarded_at_zero(const T& x, F f) {
  const T z = eq(x, zeros_like(x));
  return where(z, zeros_like(x), f(where(z, ones_like(x), x)));
}

// |x|^2 as a smooth real function (also of complex x).
template <LinalgTensor T>
T abs_squared(const T& x) {
  if (!is_complex(x.dtype())) return square(x);
  return square(real(x)) + square(imag(x));
}

}  // namespace

template <LinalgTensor T>
T vector_norm_impl(const T& x, double ord, const Axes& axes, bool keepdim) {
  const char* op = "vector_norm";
  if (std::isnan(ord)) fail(ErrorKind::InvalidArgument, op, "ord is NaN; pass a number or +-inf");
  if ((ord < 0 || std::isinf(ord)) && reduces_empty(x, axes)) {
    fail(ErrorKind::InvalidArgument, op, "cannot compute the ", ord_name(ord),
         " norm of an empty reduction (", shape_str(x),
         ", the operation has no identity); use an ord >= 0 other than inf, or non-empty axes");
  }
  const T a = abs(x);  // real
  if (ord == 0) {
    // PyTorch: a zero derivative (not "no dependence"). The count is selected
    // against sum |x|, whose derivative the select masks to exact zeros.
    const T count = sum(convert(ne(a, zeros_like(a)), a.dtype()), axes, keepdim);
    return where(eq(count, count), count, sum(a, axes, keepdim));
  }
  if (std::isinf(ord)) return ord > 0 ? amax(a, axes, keepdim) : amin(a, axes, keepdim);
  if (ord == 1) return sum(a, axes, keepdim);
  if (ord == 2) {
    // PyTorch: x / |x|, 0 where the norm is 0.
    const T s = sum(abs_squared(x), axes, keepdim);
    return guarded_at_zero(s, [](const T& v) { return sqrt(v); });
  }
  T p;
  if (ord < 1) {
    // PyTorch masks sgn(x) |x|^(ord - 1) to 0 where x == 0 (the plain power
    // rule would give 0 * inf there). |0|^ord is 0 (ord > 0) or inf (ord < 0).
    const T z = eq(a, zeros_like(a));
    const T at_zero = full_like(a, ord > 0 ? 0.0 : std::numeric_limits<double>::infinity());
    p = where(z, at_zero, pow(where(z, ones_like(a), a), scalar_like(a, ord)));
  } else {
    p = pow(a, scalar_like(a, ord));
  }
  const T s = sum(p, axes, keepdim);
  const double inv = 1.0 / ord;
  if (ord < 0) return pow(s, scalar_like(s, inv));  // s >= some |x|^ord > 0 (or inf)
  // PyTorch: 0 where the norm is 0.
  return guarded_at_zero(s, [inv](const T& v) { return pow(v, scalar_like(v, inv)); });
}

// The norms of the singular values of the matrices in axes (r, c): which = 0
// their sum (nuclear), 2 the largest, -2 the smallest (PyTorch: amax / amin
// of svdvals, so ties split the gradient evenly).
template <LinalgTensor T>
T singular_value_norm(const T& a, std::int64_t r, std::int64_t c, int which, bool keepdim) {
  const char* op = "matrix_norm";
  const auto m = extent(a, r), n = extent(a, c);
  if (which != 0 && ((m && *m == 0) || (n && *n == 0))) {
    fail(ErrorKind::InvalidArgument, op, "the ", which > 0 ? "2" : "-2",
         "-norm of empty matrices (", shape_str(a),
         ") is undefined (a max/min over no singular values)");
  }
  Axes perm{r, c};
  for (std::int64_t d = 0; d < a.rank(); ++d) {
    if (d != r && d != c) perm.push_back(d);
  }
  const bool moved = perm != every_axis(a);
  const T s = svdvals(moved ? permute(a, perm) : a);  // [k, batch...]
  T out = which == 0 ? sum(s, {0}) : which > 0 ? amax(s, {0}) : amin(s, {0});
  if (keepdim) {
    SymShape shape;
    for (std::int64_t d = 0; d < a.rank(); ++d) {
      shape.push_back(d == r || d == c ? SymDim(1) : sym_extent(a, d));
    }
    out = reshape(out, ShapeArg(shape));
  }
  return out;
}

}  // namespace detail

// ---- public functions --------------------------------------------------------------

template <LinalgTensor T>
T vector_norm(const T& x, double ord, Axes dims, bool keepdim) {
  const char* op = "vector_norm";
  detail::require_floating_tensor(x, op);
  const Axes axes = detail::normalise_axes(op, dims, x.rank(), true);
  return detail::vector_norm_impl(x, ord, axes, keepdim);
}

template <LinalgTensor T>
T matrix_norm(const T& a, double ord, Axes dims, bool keepdim) {
  const char* op = "matrix_norm";
  detail::require_floating_tensor(a, op);
  const auto [r, c] = detail::matrix_axes(op, a, dims);
  if (std::isnan(ord)) fail(ErrorKind::InvalidArgument, op, "ord is NaN");
  const bool is_one = std::fabs(ord) == 1, is_inf = std::isinf(ord);
  if (std::fabs(ord) == 2) return detail::singular_value_norm(a, r, c, ord > 0 ? 2 : -2, keepdim);
  if (!is_one && !is_inf) {
    fail(ErrorKind::InvalidArgument, op,
         "ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got ", ord);
  }
  // 1: max over columns of the column sums; inf: max over rows of the row sums.
  const std::int64_t summed = is_one ? r : c, extremal = is_one ? c : r;
  if (detail::reduces_empty(a, {extremal})) {
    fail(ErrorKind::InvalidArgument, op, "cannot take the ", detail::ord_name(ord),
         " norm: the matrices (", detail::shape_str(a), ") have no ", is_one ? "columns" : "rows",
         " to take the max/min over");
  }
  const T s = sum(abs(a), {summed}, true);
  T m = ord > 0 ? amax(s, {extremal}, true) : amin(s, {extremal}, true);
  if (!keepdim) m = sum(m, Axes{r, c}, false);  // drops the two unit axes
  return m;
}

template <LinalgTensor T>
T matrix_norm(const T& a, std::string_view ord, Axes dims, bool keepdim) {
  const char* op = "matrix_norm";
  detail::require_floating_tensor(a, op);
  const auto [r, c] = detail::matrix_axes(op, a, dims);
  if (ord == "fro") return detail::vector_norm_impl(a, 2.0, Axes{r, c}, keepdim);
  if (ord == "nuc") return detail::singular_value_norm(a, r, c, 0, keepdim);
  fail(ErrorKind::InvalidArgument, op, "ord must be 'fro', 'nuc' or a number, got '",
       std::string(ord), "'");
}

template <LinalgTensor T>
T norm(const T& x, std::optional<double> ord, std::optional<Axes> dims, bool keepdim) {
  const char* op = "norm";
  detail::require_floating_tensor(x, op);
  if (dims) {
    if (dims->size() == 1) return vector_norm(x, ord.value_or(2.0), *dims, keepdim);
    if (dims->size() == 2) {
      return ord ? matrix_norm(x, *ord, *dims, keepdim)
                 : matrix_norm(x, std::string_view("fro"), *dims, keepdim);
    }
    fail(ErrorKind::InvalidArgument, op,
         "dims must name 1 axis (vector norm) or 2 (matrix norm), got ", dims->size(), " axes");
  }
  if (!ord) return vector_norm(x, 2.0, Axes{}, keepdim);
  if (x.rank() == 1) return vector_norm(x, *ord, Axes{0}, keepdim);
  if (x.rank() == 2) return matrix_norm(x, *ord, Axes{0, 1}, keepdim);
  fail(ErrorKind::RankMismatch, op, "with an ord and no dims the input must be 1-D or 2-D, got ",
       detail::shape_str(x), "; pass dims");
}

template <LinalgTensor T>
T norm(const T& x, std::string_view ord, std::optional<Axes> dims, bool keepdim) {
  const char* op = "norm";
  detail::require_floating_tensor(x, op);
  if (dims) {
    if (dims->size() != 2) {
      fail(ErrorKind::InvalidArgument, op, "the '", std::string(ord),
           "' norm is a matrix norm: dims must name 2 axes, got ", dims->size());
    }
    return matrix_norm(x, ord, *dims, keepdim);
  }
  if (x.rank() != 2) {
    fail(ErrorKind::RankMismatch, op, "the '", std::string(ord),
         "' norm without dims needs a 2-D input, got ", detail::shape_str(x), "; pass dims");
  }
  return matrix_norm(x, ord, Axes{0, 1}, keepdim);
}

template <LinalgTensor T>
T vecdot(const T& x, const T& y, std::int64_t dim) {
  return report_as("vecdot", [&]() -> T {
    const char* op = "vecdot";
    detail::require_floating_tensor(x, op);
    detail::require_floating_tensor(y, op);
    if (x.dtype() != y.dtype()) {
      fail(ErrorKind::DTypeMismatch, op, "x and y must have the same dtype, got ", name(x.dtype()),
           " and ", name(y.dtype()));
    }
    const T prod = mul(is_complex(x.dtype()) ? conj(x) : x, y);
    const Axes axes = detail::normalise_axes(op, Axes{dim}, prod.rank(), false);
    return sum(prod, axes, false);
  });
}

#define TF_INSTANTIATE(T)                                                         \
  template T vector_norm<T>(const T&, double, Axes, bool);                        \
  template T matrix_norm<T>(const T&, double, Axes, bool);                        \
  template T matrix_norm<T>(const T&, std::string_view, Axes, bool);              \
  template T norm<T>(const T&, std::optional<double>, std::optional<Axes>, bool); \
  template T norm<T>(const T&, std::string_view, std::optional<Axes>, bool);      \
  template T vecdot<T>(const T&, const T&, std::int64_t);
TF_INSTANTIATE(EagerTensor)
TF_INSTANTIATE(TracedTensor)
#undef TF_INSTANTIATE

}  // namespace tenferro::linalg
