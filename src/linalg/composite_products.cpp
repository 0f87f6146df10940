// vander, multi_dot, cross and matrix_power: products composed of the core op
// surface once for both AD tiers (AD comes from the composed ops).

#include <limits>
#include <string>

#include "linalg/composite_util.hpp"
#include "tenferro/core/report_as.hpp"
#include "tenferro/linalg/composite.hpp"
#include "tenferro/linalg/factor.hpp"

namespace tenferro::linalg {
namespace detail {
namespace {

template <LinalgTensor T>
void require_not_bool(const T& x, const char* op) {
  if (!x.defined()) fail(ErrorKind::InvalidArgument, op, "an input is undefined");
  if (x.dtype() == DType::Bool) {
    fail(ErrorKind::DTypeMismatch, op, "bool inputs are not supported; convert them first");
  }
}

// The matrix-chain order: split[i][j] is the k where (M_i..M_k)(M_k+1..M_j)
// is cheapest; costs in long double (extents may be large).
std::vector<std::vector<std::size_t>> chain_order(const std::vector<std::int64_t>& p) {
  const std::size_t n = p.size() - 1;
  std::vector<std::vector<long double>> cost(n, std::vector<long double>(n, 0));
  std::vector<std::vector<std::size_t>> split(n, std::vector<std::size_t>(n, 0));
  for (std::size_t len = 2; len <= n; ++len) {
    for (std::size_t i = 0; i + len <= n; ++i) {
      const std::size_t j = i + len - 1;
      cost[i][j] = std::numeric_limits<long double>::infinity();
      for (std::size_t k = i; k < j; ++k) {
        const long double c = cost[i][k] + cost[k + 1][j] +
                              static_cast<long double>(p[i]) * static_cast<long double>(p[k + 1]) *
                                  static_cast<long double>(p[j + 1]);
        if (c < cost[i][j]) {
          cost[i][j] = c;
          split[i][j] = k;
        }
      }
    }
  }
  return split;
}

template <LinalgTensor T>
T chain_product(const std::vector<T>& m, const std::vector<std::vector<std::size_t>>& split,
                std::size_t i, std::size_t j) {
  if (i == j) return m[i];
  const std::size_t k = split[i][j];
  return matmul(chain_product(m, split, i, k), chain_product(m, split, k + 1, j));
}

}  // namespace
}  // namespace detail

template <LinalgTensor T>
T vander(const T& x_in, std::optional<std::int64_t> N) {
  const char* op = "vander";
  detail::require_not_bool(x_in, op);
  if (!is_inexact(x_in.dtype()) && !is_integral(x_in.dtype())) {
    fail(ErrorKind::DTypeMismatch, op, "expected a floating, complex or integer input, got ",
         name(x_in.dtype()));
  }
  const T x = x_in.rank() == 0 ? reshape(x_in, {1}) : x_in;
  std::int64_t cols = 0;
  if (N) {
    cols = *N;
  } else {
    const auto n = detail::extent(x, 0);
    if (!n) fail(ErrorKind::InvalidArgument, op, "x's length is symbolic: pass N");
    cols = *n;
  }
  if (cols < 2) fail(ErrorKind::InvalidArgument, op, "N must be greater than 1, got ", cols);
  std::vector<T> powers;
  powers.reserve(static_cast<std::size_t>(cols));
  powers.push_back(ones_like(x));
  powers.push_back(x);
  for (std::int64_t j = 2; j < cols; ++j) powers.push_back(mul(powers.back(), x));
  return stack(powers, 1);  // [n, N, batch...]
}

template <LinalgTensor T>
T multi_dot(const std::vector<T>& ms) {
  return report_as("multi_dot", [&]() -> T {
    const char* op = "multi_dot";
    const std::size_t n = ms.size();
    if (n < 2) fail(ErrorKind::InvalidArgument, op, "needs at least 2 matrices, got ", n);
    for (const T& m : ms) detail::require_floating_tensor(m, op);
    for (std::size_t i = 0; i < n; ++i) {
      if (ms[i].dtype() != ms[0].dtype()) {
        fail(ErrorKind::DTypeMismatch, op, "every operand must have one dtype: operand 0 is ",
             name(ms[0].dtype()), ", operand ", i, " is ", name(ms[i].dtype()));
      }
      const bool end = i == 0 || i + 1 == n;
      const std::int64_t r = ms[i].rank();
      if (r != 2 && !(end && r == 1)) {
        fail(ErrorKind::RankMismatch, op, "operand ", i, " must be ",
             end ? "1-D or 2-D" : "2-D (only the first and last may be vectors)", ", got ",
             detail::shape_str(ms[i]));
      }
    }
    const bool first_vec = ms.front().rank() == 1, last_vec = ms.back().rank() == 1;
    std::vector<T> m = ms;
    if (first_vec) m.front() = reshape(m.front(), {SymDim(1), detail::sym_extent(m.front(), 0)});
    if (last_vec) m.back() = reshape(m.back(), {detail::sym_extent(m.back(), 0), SymDim(1)});
    // Extents p_0 x p_1, p_1 x p_2, ...; inner extents must agree.
    std::vector<std::int64_t> p;
    bool constant = true;
    for (std::size_t i = 0; i < n; ++i) {
      const auto rows = detail::extent(m[i], 0);
      if (i > 0) {
        const auto prev_cols = detail::extent(m[i - 1], 1);
        if (rows && prev_cols && *rows != *prev_cols) {
          fail(ErrorKind::ShapeMismatch, op, "operand ", i - 1, " (", detail::shape_str(ms[i - 1]),
               ") and operand ", i, " (", detail::shape_str(ms[i]),
               ") cannot be multiplied: inner extents ", *prev_cols, " and ", *rows);
        }
      }
      constant = constant && rows.has_value();
      p.push_back(rows.value_or(0));
    }
    const auto last_cols = detail::extent(m.back(), 1);
    constant = constant && last_cols.has_value();
    p.push_back(last_cols.value_or(0));
    T out;
    if (constant) {
      out = detail::chain_product(m, detail::chain_order(p), 0, n - 1);
    } else {  // symbolic extents: left to right
      out = m[0];
      for (std::size_t i = 1; i < n; ++i) out = matmul(out, m[i]);
    }
    if (first_vec && last_vec) return reshape(out, ShapeArg{});
    if (first_vec) return reshape(out, {detail::sym_extent(out, 1)});
    if (last_vec) return reshape(out, {detail::sym_extent(out, 0)});
    return out;
  });
}

template <LinalgTensor T>
T cross(const T& a, const T& b, std::int64_t dim) {
  return report_as("cross", [&]() -> T {
    const char* op = "cross";
    detail::require_not_bool(a, op);
    detail::require_not_bool(b, op);
    if (a.dtype() != b.dtype()) {
      fail(ErrorKind::DTypeMismatch, op, "a and b must have the same dtype, got ", name(a.dtype()),
           " and ", name(b.dtype()));
    }
    if (a.rank() != b.rank()) {
      fail(ErrorKind::RankMismatch, op, "a and b must have the same rank, got ",
           detail::shape_str(a), " and ", detail::shape_str(b), "; add unit axes to broadcast");
    }
    if (a.rank() == 0) fail(ErrorKind::RankMismatch, op, "needs vectors of 3 entries, got rank 0");
    const std::int64_t d = detail::normalise_axes(op, Axes{dim}, a.rank(), false)[0];
    for (const T* x : {&a, &b}) {
      const auto e = detail::extent(*x, d);
      if (e && *e != 3) {
        fail(ErrorKind::ShapeMismatch, op, "the inputs must have extent 3 along axis ", d, ", got ",
             detail::shape_str(*x));
      }
    }
    const Shape sa = detail::constant_shape(a, op), sb = detail::constant_shape(b, op);
    auto comp = [d](const T& x, const Shape& s, std::int64_t i) {
      Shape start(s.size(), 0), limit = s;
      start[static_cast<std::size_t>(d)] = i;
      limit[static_cast<std::size_t>(d)] = i + 1;
      return slice(x, start, limit);
    };
    const T a0 = comp(a, sa, 0), a1 = comp(a, sa, 1), a2 = comp(a, sa, 2);
    const T b0 = comp(b, sb, 0), b1 = comp(b, sb, 1), b2 = comp(b, sb, 2);
    const T parts[3] = {a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0};
    return concatenate(parts, d);
  });
}

template <LinalgTensor T>
T matrix_power(const T& a, std::int64_t n) {
  return report_as("matrix_power", [&]() -> T {
    const char* op = "matrix_power";
    detail::require_not_bool(a, op);
    if (a.rank() < 2) {
      fail(ErrorKind::RankMismatch, op, "A must be a matrix or a batch [n, n, batch...], got ",
           detail::shape_str(a));
    }
    const auto r = detail::extent(a, 0), c = detail::extent(a, 1);
    if (r && c && *r != *c) {
      fail(ErrorKind::ShapeMismatch, op, "A must be square, got ", detail::shape_str(a));
    }
    if (n == std::numeric_limits<std::int64_t>::min()) {
      fail(ErrorKind::InvalidArgument, op, "n = ", n, " cannot be negated");
    }
    if (n == 0) return diag_embed(ones_like(diagonal(a)));
    std::optional<T> result;
    T base = n < 0 ? inv(a) : a;  // PyTorch: matrix_power(inv(A), -n)
    if (n < 0) n = -n;
    for (std::int64_t k = n;;) {
      if (k & 1) result = result ? matmul(*result, base) : base;
      k >>= 1;
      if (k == 0) break;
      base = matmul(base, base);
    }
    return *result;
  });
}

#define TF_INSTANTIATE(T)                                      \
  template T vander<T>(const T&, std::optional<std::int64_t>); \
  template T multi_dot<T>(const std::vector<T>&);              \
  template T cross<T>(const T&, const T&, std::int64_t);       \
  template T matrix_power<T>(const T&, std::int64_t);
TF_INSTANTIATE(EagerTensor)
TF_INSTANTIATE(TracedTensor)
#undef TF_INSTANTIATE

}  // namespace tenferro::linalg
