#pragma once
// Rows for the families: tf::linalg, tf::einsum and tf::fft.

#include <limits>
#include <optional>
#include <string_view>
#include <vector>

#include "ad/bad_input_rows_core.hpp"

namespace badinput {

namespace la = tenferro::linalg;
namespace ff = tenferro::fft;
using OptI = std::optional<std::int64_t>;
using namespace std::string_view_literals;

inline Tensor well_conditioned(std::int64_t n, DType dt = f64) {
  std::vector<double> v(static_cast<std::size_t>(n * n), 0.25);
  for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i * n + i)] = 3.0 + i;
  const Tensor a = Tensor::from_col_major({n, n}, v);
  return dt == f64 ? a : cast(a, dt, *std::make_shared<CpuBackend>());
}
inline Tensor singular3() {
  return Tensor::from_col_major({3, 3}, std::vector<double>{1, 2, 3, 2, 4, 6, 1, 0, 1});
}
inline Tensor with_value(double v) {
  std::vector<double> d(9, 0.0);
  d[0] = d[4] = d[8] = 1.0;
  d[1] = v;  // (1, 0): in the lower triangle, which eigh and cholesky read
  return Tensor::from_col_major({3, 3}, d);
}

inline void add_linalg_rows(std::vector<Row>& rows) {
  const Tensor a = well_conditioned(3), b = rnd({3, 2}), r23 = rnd({2, 3}), v3 = rnd({3});
  const Tensor sing = singular3(), i33 = filled({3, 3}, i64), e00 = filled({0, 0}, f64);
  const Tensor nan = with_value(std::numeric_limits<double>::quiet_NaN());
  const Tensor inf = with_value(std::numeric_limits<double>::infinity());
  auto row = [&](std::string n, Cat c, Expect ex, std::vector<Tensor> in, auto f) {
    rows.push_back(make_row(std::move(n), c, std::move(ex), std::move(in), f));
  };
  // inv / det / slogdet
  row("inv/non-square", Cat::Shape, err(K::ShapeMismatch), {r23}, L(C(la::inv, x[0])));
  row("inv/rank-1", Cat::Rank, err(K::RankMismatch), {v3}, L(C(la::inv, x[0])));
  row("inv/integer", Cat::DType, err(K::DTypeMismatch), {i33}, L(C(la::inv, x[0])));
  row("inv/bool", Cat::DType, err(K::DTypeMismatch), {filled({3, 3}, bool_)}, L(C(la::inv, x[0])));
  row("inv/singular", Cat::NonFinite, err(K::Singular), {sing}, L(C(la::inv, x[0])));
  row("inv/undefined", Cat::Undefined, err(K::InvalidArgument), {}, L(C(la::inv, t.undef())));
  row("inv/zero-size", Cat::EmptyOrScalar, ok({0, 0}), {e00}, L(C(la::inv, x[0])));
  row("inv/rank-0", Cat::Rank, err(K::RankMismatch), {filled({}, f64)}, L(C(la::inv, x[0])));
  row("det/non-square", Cat::Shape, err(K::ShapeMismatch), {r23}, L(C(la::det, x[0])));
  row("det/zero-size", Cat::EmptyOrScalar, ok({}, f64, {1.0}), {e00}, L(C(la::det, x[0])));
  row("det/integer", Cat::DType, err(K::DTypeMismatch), {i33}, L(C(la::det, x[0])));
  row("slogdet|det/rank-1", Cat::Rank, err(K::RankMismatch), {v3}, L(C(la::slogdet, x[0])));
  // solve / solve_triangular / lstsq
  row("solve/rows-mismatch", Cat::Shape, err(K::ShapeMismatch), {a, rnd({4, 2})},
      L(C(la::solve, x[0], x[1], true)));
  row("solve/singular", Cat::NonFinite, err(K::Singular), {sing, b},
      L(C(la::solve, x[0], x[1], true)));
  row("solve/non-square", Cat::Shape, err(K::ShapeMismatch), {r23, b},
      L(C(la::solve, x[0], x[1], true)));
  row("solve/dtype-mix", Cat::DType, err(K::DTypeMismatch), {a, filled({3, 2}, c128)},
      L(C(la::solve, x[0], x[1], true)));
  row("solve/other-runtime", Cat::Foreign, err(K::ContextMismatch), {a, b},
      L(C(la::solve, x[0], t.foreign(x[1]), true)));
  row("solve/undefined", Cat::Undefined, err(K::InvalidArgument), {a},
      L(C(la::solve, x[0], t.undef(), true)));
  row("solve/zero-rhs", Cat::EmptyOrScalar, ok({3, 0}), {a, filled({3, 0}, f64)},
      L(C(la::solve, x[0], x[1], true)));
  row("solve_triangular/shape", Cat::Shape, err(K::ShapeMismatch), {a, rnd({2, 2})},
      L(C(la::solve_triangular, x[0], x[1], true, true, false)));
  row("solve_triangular/zero-diagonal", Cat::NonFinite, err(K::Singular), {zeros(V{3, 3}), b},
      L(C(la::solve_triangular, x[0], x[1], true, true, false)));
  row("lstsq/rows-mismatch", Cat::Shape, err(K::ShapeMismatch), {r23, b},
      L(C(la::lstsq, x[0], x[1])));
  // cholesky / lu / qr / householder
  row("cholesky/not-positive-definite", Cat::NonFinite, err(K::Singular), {sing},
      L(C(la::cholesky, x[0], false)));
  row("cholesky/non-square", Cat::Shape, err(K::ShapeMismatch), {r23},
      L(C(la::cholesky, x[0], false)));
  row("cholesky/nan", Cat::NonFinite, err(K::Singular), {nan}, L(C(la::cholesky, x[0], false)));
  row("lu_factor/rank-1", Cat::Rank, err(K::RankMismatch), {v3}, L(C(la::lu_factor, x[0], true)));
  row("lu_solve/float-pivots", Cat::DType, err(K::DTypeMismatch), {a, rnd({3}), b},
      L(C(la::lu_solve, x[0], x[1], x[2], true, false)));
  row("lu_solve/pivots-shape", Cat::Shape, err(K::ShapeMismatch), {a, filled({2}, i32), b},
      L(C(la::lu_solve, x[0], x[1], x[2], true, false)));
  row("qr/bad-mode", Cat::Param, err(K::InvalidArgument), {a}, L(C(la::qr, x[0], "sideways"sv)));
  row("qr/rank-1", Cat::Rank, err(K::RankMismatch), {v3}, L(C(la::qr, x[0], "reduced"sv)));
  row("qr/zero-size", Cat::EmptyOrScalar, ok({0, 0}), {filled({0, 3}, f64)},
      L(C(la::qr, x[0], "reduced"sv)));
  row("householder_product/tau-too-long", Cat::Shape, err(K::ShapeMismatch), {r23, rnd({4})},
      L(C(la::householder_product, x[0], x[1])));
  // spectral
  row("svd/integer", Cat::DType, err(K::DTypeMismatch), {i33}, L(C(la::svd, x[0], false)));
  row("svd/nan", Cat::NonFinite, err(K::NoConvergence), {nan}, L(C(la::svd, x[0], false)));
  row("svdvals/inf", Cat::NonFinite, err(K::NoConvergence), {inf}, L(C(la::svdvals, x[0])));
  row("svdvals/zero-size", Cat::EmptyOrScalar, ok({0}), {filled({0, 3}, f64)},
      L(C(la::svdvals, x[0])));
  row("svd/rank-1", Cat::Rank, err(K::RankMismatch), {v3}, L(C(la::svd, x[0], false)));
  row("eigh/non-square", Cat::Shape, err(K::ShapeMismatch), {r23}, L(C(la::eigh, x[0], 'L')));
  row("eigh/bad-uplo", Cat::Param, err(K::InvalidArgument), {a}, L(C(la::eigh, x[0], 'X')));
  row("eigvalsh/nan", Cat::NonFinite, err(K::NoConvergence), {nan}, L(C(la::eigvalsh, x[0], 'L')));
  row("eig/non-square", Cat::Shape, err(K::ShapeMismatch), {r23}, L(C(la::eig, x[0])));
  row("eigvals/nan", Cat::NonFinite, err(K::NoConvergence), {nan}, L(C(la::eigvals, x[0])));
  row("eigvals/undefined", Cat::Undefined, err(K::InvalidArgument), {},
      L(C(la::eigvals, t.undef())));
  row("svd_truncated/negative-cutoff", Cat::Param, err(K::InvalidArgument), {a},
      L(C(la::svd_truncated, x[0], la::Truncation{.max_rank = -1, .cutoff = -1.0})));
  // composites
  row("matrix_exp/non-square", Cat::Shape, err(K::ShapeMismatch), {r23},
      L(C(la::matrix_exp, x[0])));
  row("matrix_exp/nan", Cat::NonFinite, ok({3, 3}), {nan}, L(C(la::matrix_exp, x[0])));
  row("matrix_power|inv/singular-negative", Cat::NonFinite, err(K::Singular), {sing},
      L(C(la::matrix_power, x[0], std::int64_t{-1})));
  row("matrix_power/non-square", Cat::Shape, err(K::ShapeMismatch), {r23},
      L(C(la::matrix_power, x[0], std::int64_t{2})));
  row("pinv/nan", Cat::NonFinite, err(K::NoConvergence), {nan},
      L(C(la::pinv, x[0], std::optional<double>{}, std::optional<double>{}, false)));
  row("pinv/negative-atol", Cat::Param, err(K::InvalidArgument), {a},
      L(C(la::pinv, x[0], std::optional<double>{-1.0}, std::optional<double>{}, false)));
  row("vector_norm/axis-out-of-range", Cat::Axis, err(K::AxisOutOfBounds), {r23},
      L(C(la::vector_norm, x[0], 2.0, Axes{2})));
  row("vector_norm/complex-ok", Cat::DType, ok({}, f64), {filled({2}, c128)},
      L(C(la::vector_norm, x[0], 2.0, Axes{})));
  row("matrix_norm/bad-ord", Cat::Param, err(K::InvalidArgument), {a},
      L(C(la::matrix_norm, x[0], "bogus"sv, Axes{0, 1})));
  row("matrix_norm/rank-1", Cat::Rank, err(K::RankMismatch), {v3},
      L(C(la::matrix_norm, x[0], "fro"sv, Axes{0, 1})));
  row("cross/extent-not-3", Cat::Shape, err(K::ShapeMismatch), {r23, r23},
      L(C(la::cross, x[0], x[1], std::int64_t{0})));
  row("cross/axis-out-of-range", Cat::Axis, err(K::AxisOutOfBounds), {v3, v3},
      L(C(la::cross, x[0], x[1], std::int64_t{1})));
  row("vecdot/mismatched", Cat::Shape, err(K::ShapeMismatch), {v3, rnd({4})},
      L(C(la::vecdot, x[0], x[1], std::int64_t{0})));
  row("vander/negative-n", Cat::Extent, err(K::InvalidArgument), {v3},
      L(C(la::vander, x[0], OptI{-1})));
  row("vander/batch", Cat::Rank, ok({2, 2, 3}), {r23}, L(C(la::vander, x[0], OptI{})));
  row("multi_dot/empty", Cat::Param, err(K::InvalidArgument), {}, L(C(la::multi_dot, VEC())));
  row("multi_dot/chain-mismatch", Cat::Shape, err(K::ShapeMismatch), {r23, r23},
      L(C(la::multi_dot, VEC(x[0], x[1]))));
  row("tensorinv/ind-zero", Cat::Param, err(K::InvalidArgument), {a},
      L(C(la::tensorinv, x[0], std::int64_t{0})));
  row("tensorsolve/shape", Cat::Shape, err(K::ShapeMismatch), {a, rnd({4})},
      L(C(la::tensorsolve, x[0], x[1], Axes{})));
  row("cond/singular", Cat::NonFinite, ok({}), {sing},
      L(C(la::cond, x[0], std::optional<double>{})));
  // Undefined operands: InvalidArgument naming the function, before anything reads a rank.
  const auto u = Cat::Undefined;
  const Expect ua = err(K::InvalidArgument);
  row("det/undefined", u, ua, {}, L(C(la::det, t.undef())));
  row("slogdet|det/undefined", u, ua, {}, L(C(la::slogdet, t.undef())));
  row("cholesky/undefined", u, ua, {}, L(C(la::cholesky, t.undef(), false)));
  row("qr/undefined", u, ua, {}, L(C(la::qr, t.undef(), "reduced"sv)));
  row("svd/undefined", u, ua, {}, L(C(la::svd, t.undef(), false)));
  row("svdvals/undefined", u, ua, {}, L(C(la::svdvals, t.undef())));
  row("eigh/undefined", u, ua, {}, L(C(la::eigh, t.undef(), 'L')));
  row("eigvalsh/undefined", u, ua, {}, L(C(la::eigvalsh, t.undef(), 'L')));
  row("lu_factor/undefined", u, ua, {}, L(C(la::lu_factor, t.undef(), true)));
  row("lu_solve/undefined", u, ua, {a, filled({3}, i32)},
      L(C(la::lu_solve, x[0], x[1], t.undef(), true, false)));
  row("solve_triangular/undefined", u, ua, {a},
      L(C(la::solve_triangular, x[0], t.undef(), true, true, false)));
  row("matrix_exp/undefined", u, ua, {}, L(C(la::matrix_exp, t.undef())));
  row("matrix_power/undefined", u, ua, {}, L(C(la::matrix_power, t.undef(), std::int64_t{2})));
  row("pinv/undefined", u, ua, {},
      L(C(la::pinv, t.undef(), std::optional<double>{}, std::optional<double>{}, false)));
  row("vector_norm/undefined", u, ua, {}, L(C(la::vector_norm, t.undef(), 2.0, Axes{})));
  row("cross/undefined", u, ua, {v3}, L(C(la::cross, x[0], t.undef(), std::int64_t{0})));
  row("vecdot/undefined", u, ua, {v3}, L(C(la::vecdot, x[0], t.undef(), std::int64_t{0})));
  row("tensorinv/undefined", u, ua, {}, L(C(la::tensorinv, t.undef(), std::int64_t{1})));
  row("lstsq/undefined", u, ua, {a}, L(C(la::lstsq, x[0], t.undef())));
  row("householder_product/undefined", u, ua, {a}, L(C(la::householder_product, x[0], t.undef())));
  row("multi_dot/undefined", u, ua, {a}, L(C(la::multi_dot, VEC(x[0], t.undef()))));
  row("matrix_norm/undefined", u, ua, {}, L(C(la::matrix_norm, t.undef(), "fro"sv, Axes{0, 1})));
  row("solve_triangular/other-runtime", Cat::Foreign, err(K::ContextMismatch), {a, b},
      L(C(la::solve_triangular, x[0], t.foreign(x[1]), true, true, false)));
}

inline void add_einsum_rows(std::vector<Row>& rows) {
  const Tensor a = rnd({2, 3}), b = rnd({3, 4}), b4 = rnd({4, 4});
  auto row = [&](std::string n, Cat c, Expect ex, std::vector<Tensor> in, auto f) {
    rows.push_back(make_row(std::move(n), c, std::move(ex), std::move(in), f));
  };
  row("einsum/malformed", Cat::Param, err(K::InvalidArgument), {a, b},
      L(C(tf::einsum, "ij,jk->i-k"sv, VEC(x[0], x[1]))));
  row("einsum/extent-mismatch", Cat::Shape, err(K::ShapeMismatch), {a, b4},
      L(C(tf::einsum, "ij,jk->ik"sv, VEC(x[0], x[1]))));
  row("einsum/too-few-operands", Cat::Param, err(K::InvalidArgument), {a},
      L(C(tf::einsum, "ij,jk->ik"sv, VEC(x[0]))));
  row("einsum/term-rank", Cat::Rank, err(K::RankMismatch), {a, b},
      L(C(tf::einsum, "ijk,jk->ik"sv, VEC(x[0], x[1]))));
  row("einsum/output-label-unknown", Cat::Param, err(K::InvalidArgument), {a, b},
      L(C(tf::einsum, "ij,jk->iz"sv, VEC(x[0], x[1]))));
  row("einsum/output-label-repeated", Cat::EmptyOrScalar, ok({2, 2}), {a},
      L(C(tf::einsum, "ij->ii"sv, VEC(x[0]))));
  row("einsum/dtype-mix", Cat::DType, err(K::DTypeMismatch), {a, filled({3, 4}, c128)},
      L(C(tf::einsum, "ij,jk->ik"sv, VEC(x[0], x[1]))));
  row("einsum/undefined", Cat::Undefined, err(K::InvalidArgument), {a},
      L(C(tf::einsum, "ij,jk->ik"sv, VEC(x[0], t.undef()))));
  row("einsum/other-runtime", Cat::Foreign, err(K::ContextMismatch), {a, b},
      L(C(tf::einsum, "ij,jk->ik"sv, VEC(x[0], t.foreign(x[1])))));
  row("einsum/no-operands", Cat::Param, err(K::InvalidArgument), {},
      L(C(tf::einsum, "->"sv, VEC())));
  row("einsum/zero-size", Cat::EmptyOrScalar, ok({2, 4}, f64, std::vector<double>(8, 0.0)),
      {filled({2, 0}, f64), filled({0, 4}, f64)}, L(C(tf::einsum, "ij,jk->ik"sv, VEC(x[0], x[1]))));
  row("einsum/rank-0", Cat::EmptyOrScalar, ok({}, f64, {0.25}), {filled({}, f64), filled({}, f64)},
      L(C(tf::einsum, ",->"sv, VEC(x[0], x[1]))));
  row("einsum/labels-count", Cat::Rank, err(K::RankMismatch), {a},
      L(C(tf::einsum, EinsumLabels{{{0}}, std::nullopt}, VEC(x[0]))));
}

inline void add_fft_rows(std::vector<Row>& rows) {
  const Tensor x = rnd({4, 3}), c = filled({4, 3}, c128);
  const auto bw = "backward"sv;
  auto row = [&](std::string n, Cat cat, Expect ex, std::vector<Tensor> in, auto f) {
    rows.push_back(make_row(std::move(n), cat, std::move(ex), std::move(in), f));
  };
  row("fft/axis-out-of-range", Cat::Axis, err(K::AxisOutOfBounds), {x},
      [bw](auto& t, const auto& x) { return C(ff::fft, x[0], OptI{}, std::int64_t{2}, bw); });
  row("fft/n-zero", Cat::Extent, err(K::InvalidArgument), {x},
      [bw](auto& t, const auto& x) { return C(ff::fft, x[0], OptI{0}, std::int64_t{0}, bw); });
  row("fft/n-negative", Cat::Extent, err(K::InvalidArgument), {x},
      [bw](auto& t, const auto& x) { return C(ff::fft, x[0], OptI{-4}, std::int64_t{0}, bw); });
  row("fft/n-huge", Cat::Extent, err(K::InvalidArgument), {x},
      [bw](auto& t, const auto& x) { return C(ff::fft, x[0], OptI{kHuge}, std::int64_t{0}, bw); });
  row("fft/bad-norm", Cat::Param, err(K::InvalidArgument), {x},
      L(C(ff::fft, x[0], OptI{}, std::int64_t{0}, "sideways"sv)));
  row("fft/rank-0", Cat::Axis, err(K::AxisOutOfBounds), {filled({}, f64)},
      [bw](auto& t, const auto& x) { return C(ff::fft, x[0], OptI{}, std::int64_t{0}, bw); });
  row("fft/zero-size-axis", Cat::EmptyOrScalar, err(K::InvalidArgument), {filled({0, 3}, f64)},
      [bw](auto& t, const auto& x) { return C(ff::fft, x[0], OptI{}, std::int64_t{0}, bw); });
  row("fft/zero-size-other-axis", Cat::EmptyOrScalar, ok({0, 3}, c128), {filled({0, 3}, f64)},
      [bw](auto& t, const auto& x) { return C(ff::fft, x[0], OptI{}, std::int64_t{1}, bw); });
  row("fft/undefined", Cat::Undefined, err(K::InvalidArgument), {},
      [bw](auto& t, const auto&) { return C(ff::fft, t.undef(), OptI{}, std::int64_t{0}, bw); });
  row("fft/bool", Cat::DType, err(K::DTypeMismatch), {filled({4}, bool_)},
      [bw](auto& t, const auto& x) { return C(ff::fft, x[0], OptI{}, std::int64_t{0}, bw); });
  row("fft/integer", Cat::DType, err(K::DTypeMismatch), {filled({4}, i64)},
      [bw](auto& t, const auto& x) { return C(ff::fft, x[0], OptI{}, std::int64_t{0}, bw); });
  row("ifft/axis-negative", Cat::Axis, err(K::AxisOutOfBounds), {c},
      [bw](auto& t, const auto& x) { return C(ff::ifft, x[0], OptI{}, std::int64_t{-3}, bw); });
  row("rfft/complex", Cat::DType, err(K::DTypeMismatch), {c},
      [bw](auto& t, const auto& x) { return C(ff::rfft, x[0], OptI{}, std::int64_t{0}, bw); });
  row("irfft/n-zero", Cat::Extent, err(K::InvalidArgument), {c},
      [bw](auto& t, const auto& x) { return C(ff::irfft, x[0], OptI{0}, std::int64_t{0}, bw); });
  row("hfft/axis-out-of-range", Cat::Axis, err(K::AxisOutOfBounds), {c},
      [bw](auto& t, const auto& x) { return C(ff::hfft, x[0], OptI{}, std::int64_t{7}, bw); });
  row("ihfft/complex", Cat::DType, err(K::DTypeMismatch), {c},
      [bw](auto& t, const auto& x) { return C(ff::ihfft, x[0], OptI{}, std::int64_t{0}, bw); });
  row("fftn/duplicate-axes", Cat::Axis, err(K::DuplicateAxis), {x}, [bw](auto& t, const auto& x) {
    return C(ff::fftn, x[0], ff::Lengths{}, Axes{0, 0}, bw);
  });
  row("fftn/lengths-mismatch", Cat::Param, err(K::InvalidArgument), {x},
      [bw](auto& t, const auto& x) {
        return C(ff::fftn, x[0], ff::Lengths{4, 3, 2}, Axes{0, 1}, bw);
      });
  row("ifftn/negative-length", Cat::Extent, err(K::InvalidArgument), {c},
      [bw](auto& t, const auto& x) { return C(ff::ifftn, x[0], ff::Lengths{-2}, Axes{0}, bw); });
  row("rfftn/axis-out-of-range", Cat::Axis, err(K::AxisOutOfBounds), {x},
      [bw](auto& t, const auto& x) { return C(ff::rfftn, x[0], ff::Lengths{}, Axes{5}, bw); });
  row("irfftn/bad-norm", Cat::Param, err(K::InvalidArgument), {c},
      L(C(ff::irfftn, x[0], ff::Lengths{}, Axes{}, "loud"sv)));
  row("fft2/rank-1", Cat::Axis, err(K::AxisOutOfBounds), {filled({4}, f64)},
      [bw](auto& t, const auto& x) {
        return C(ff::fft2, x[0], ff::Lengths{}, Axes{0, 1}, bw);
      });
  row("hfftn/duplicate-axes", Cat::Axis, err(K::DuplicateAxis), {c}, [bw](auto& t, const auto& x) {
    return C(ff::hfftn, x[0], ff::Lengths{}, Axes{1, 1}, bw);
  });
  row("fftshift/axis-out-of-range", Cat::Axis, err(K::AxisOutOfBounds), {x},
      L(C(ff::fftshift, x[0], Axes{2})));
  row("ifftshift/duplicate-axes", Cat::Axis, err(K::DuplicateAxis), {x},
      L(C(ff::ifftshift, x[0], Axes{0, 0})));
  row("ifft/undefined", Cat::Undefined, err(K::InvalidArgument), {},
      [bw](auto& t, const auto&) { return C(ff::ifft, t.undef(), OptI{}, std::int64_t{0}, bw); });
  row("rfftn/undefined", Cat::Undefined, err(K::InvalidArgument), {},
      [bw](auto& t, const auto&) { return C(ff::rfftn, t.undef(), ff::Lengths{}, Axes{}, bw); });
  row("fftshift/undefined", Cat::Undefined, err(K::InvalidArgument), {},
      L(C(ff::fftshift, t.undef(), Axes{})));
  row("fftshift/rank-0", Cat::EmptyOrScalar, ok({}, f64, {0.5}), {filled({}, f64)},
      L(C(ff::fftshift, x[0], Axes{})));
}

inline void add_family_rows(std::vector<Row>& rows) {
  add_linalg_rows(rows);
  add_einsum_rows(rows);
  add_fft_rows(rows);
}

}  // namespace badinput
