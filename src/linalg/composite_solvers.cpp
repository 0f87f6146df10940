// cond, tensorinv and tensorsolve, composed of svdvals, matrix_norm, inv,
// solve and reshapes once for both AD tiers.

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>

#include "linalg/composite_util.hpp"
#include "tenferro/ad/composite.hpp"
#include "tenferro/core/report_as.hpp"
#include "tenferro/linalg/composite.hpp"
#include "tenferro/linalg/factor.hpp"
#include "tenferro/linalg/spectral.hpp"

namespace tenferro::linalg {
namespace detail {
namespace {

std::int64_t product(const Shape& s, std::size_t begin, std::size_t end) {
  std::int64_t p = 1;
  for (std::size_t i = begin; i < end; ++i) p *= s[i];
  return p;
}

template <LinalgTensor T>
void require_square_matrices(const T& a, const char* op) {
  if (a.rank() < 2) {
    fail(ErrorKind::RankMismatch, op, "A must be a matrix or a batch [n, n, batch...], got ",
         shape_str(a));
  }
  const auto r = extent(a, 0), c = extent(a, 1);
  if (r && c && *r != *c) {
    fail(ErrorKind::ShapeMismatch, op, "A must be square for this p, got ", shape_str(a));
  }
}

}  // namespace
}  // namespace detail

namespace detail {
namespace {

// norm(A, p) * norm(inv(A), p), and inf (PyTorch's value) where A is singular
// (inv_ex reports info > 0); the other batch entries are unaffected.
// The singular entries are found by an LU (lu_factor_ex's info) and replaced
// by the identity before inv, so inv never fails and their gradient is zero
// (the result there is the constant inf).
template <LinalgTensor T, class P>
T cond_by_inverse(const T& a, P p) {
  const T info = std::get<2>(lu_factor_ex(a));
  const T singular = gt(info, zeros_like(info));  // [batch...]
  Axes batch_axes;
  for (std::int64_t k = 2; k < a.rank(); ++k) batch_axes.push_back(k);
  SymShape full;
  for (std::int64_t k = 0; k < a.rank(); ++k) full.push_back(sym_extent(a, k));
  const T mask = broadcast_in_dim(singular, full, batch_axes);
  const T ai = inv(where(mask, diag_embed(ones_like(diagonal(a))), a));
  const T value = matrix_norm(a, p) * matrix_norm(ai, p);
  return where(singular, full_like(value, Scalar(std::numeric_limits<double>::infinity())), value);
}

}  // namespace
}  // namespace detail

template <LinalgTensor T>
T cond(const T& a, std::optional<double> p) {
  const char* op = "cond";
  detail::require_floating_tensor(a, op);
  if (!p || std::fabs(*p) == 2) {
    if (a.rank() < 2) {
      fail(ErrorKind::RankMismatch, op, "A must be a matrix or a batch [m, n, batch...], got ",
           detail::shape_str(a));
    }
    if (detail::reduces_empty(a, {0}) || detail::reduces_empty(a, {1})) {
      fail(ErrorKind::InvalidArgument, op, "the condition number of empty matrices (",
           detail::shape_str(a), ") is undefined");
    }
    const T s = svdvals(a);  // descending: PyTorch divides the first by the last
    const T hi = amax(s, {0}), lo = amin(s, {0});
    return (!p || *p > 0) ? hi / lo : lo / hi;
  }
  detail::require_square_matrices(a, op);
  return detail::cond_by_inverse(a, *p);
}

template <LinalgTensor T>
T cond(const T& a, std::string_view p) {
  const char* op = "cond";
  detail::require_floating_tensor(a, op);
  if (p != "fro" && p != "nuc") {
    fail(ErrorKind::InvalidArgument, op, "p must be 'fro', 'nuc' or a number, got '",
         std::string(p), "'");
  }
  detail::require_square_matrices(a, op);
  return detail::cond_by_inverse(a, p);
}

template <LinalgTensor T>
T tensorinv(const T& a, std::int64_t ind) {
  return report_as("tensorinv", [&]() -> T {
    const char* op = "tensorinv";
    detail::require_floating_tensor(a, op);
    if (ind <= 0 || ind >= a.rank()) {
      fail(ErrorKind::InvalidArgument, op, "ind must be in [1, rank - 1] = [1, ", a.rank() - 1,
           "], got ", ind);
    }
    const Shape s = detail::constant_shape(a, op);
    const auto k = static_cast<std::size_t>(ind);
    const std::int64_t rows = detail::product(s, 0, k), cols = detail::product(s, k, s.size());
    if (rows != cols) {
      fail(ErrorKind::ShapeMismatch, op, "the first ", ind, " axes (", rows,
           " entries) and the others (", cols, " entries) of ", detail::shape_str(a),
           " must have the same size");
    }
    const T m = inv(reshape(a, {rows, cols}));
    Shape out;
    for (std::size_t i = k; i < s.size(); ++i) out.push_back(s[i]);
    for (std::size_t i = 0; i < k; ++i) out.push_back(s[i]);
    return reshape(m, out);
  });
}

template <LinalgTensor T>
T tensorsolve(const T& a_in, const T& b, const Axes& dims) {
  const char* op = "tensorsolve";
  detail::require_floating_tensor(a_in, op);
  detail::require_floating_tensor(b, op);
  T a = a_in;
  if (!dims.empty()) {  // dims first, then A's other axes in order
    Axes perm = detail::normalise_axes(op, dims, a_in.rank(), false);
    for (std::int64_t k = 0; k < a_in.rank(); ++k) {
      if (std::find(perm.begin(), perm.end(), k) == perm.end()) perm.push_back(k);
    }
    a = permute(a_in, perm);
  }
  if (a.dtype() != b.dtype()) {
    fail(ErrorKind::DTypeMismatch, op, "A and B must have the same dtype, got ", name(a.dtype()),
         " and ", name(b.dtype()));
  }
  const Shape sa = detail::constant_shape(a, op), sb = detail::constant_shape(b, op);
  if (sb.size() > sa.size()) {
    fail(ErrorKind::RankMismatch, op, "B ", detail::shape_str(b), " has more axes than A ",
         detail::shape_str(a));
  }
  const std::size_t xr = sa.size() - sb.size();
  for (std::size_t i = 0; i < sb.size(); ++i) {
    if (sa[xr + i] != sb[i]) {
      fail(ErrorKind::ShapeMismatch, op, "A's trailing axes must be B's shape: A is ",
           detail::shape_str(a), ", B is ", detail::shape_str(b));
    }
  }
  const std::int64_t px = detail::product(sa, 0, xr), pb = detail::product(sb, 0, sb.size());
  if (px != pb) {
    fail(ErrorKind::ShapeMismatch, op, "the unknown's size (", px,
         ", A's leading axes) must equal B's (", pb, ")");
  }
  // sum_x A[x, y] X[x] = B[y]  <=>  M^T x = b with M = A as a [px, pb] matrix.
  const T m = reshape(a, {px, pb});
  const T x = solve(transpose(m), reshape(b, {pb, std::int64_t{1}}));
  Shape xs;
  for (std::size_t i = 0; i < xr; ++i) xs.push_back(sa[i]);
  return reshape(x, xs);
}

#define TF_INSTANTIATE(T)                              \
  template T cond<T>(const T&, std::optional<double>); \
  template T cond<T>(const T&, std::string_view);      \
  template T tensorinv<T>(const T&, std::int64_t);     \
  template T tensorsolve<T>(const T&, const T&, const Axes&);
TF_INSTANTIATE(EagerTensor)
TF_INSTANTIATE(TracedTensor)
#undef TF_INSTANTIATE

}  // namespace tenferro::linalg
