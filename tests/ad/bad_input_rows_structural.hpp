#pragma once
// Rows for the structural ops (shape, slicing, padding, joining, gathering,
// conversion), scans and sorting, and the composites of composite.hpp.

#include <optional>
#include <vector>

#include "ad/bad_input_rows_core.hpp"

namespace badinput {

inline void add_shape_rows(std::vector<Row>& rows) {
  const Tensor x = rnd({2, 3}), v3 = rnd({3}), s = filled({}, f64), e = filled({0, 3}, f64);
  auto row = [&](std::string n, Cat c, Expect ex, std::vector<Tensor> in, auto f) {
    rows.push_back(make_row(std::move(n), c, std::move(ex), std::move(in), f));
  };
  // permute / transpose
  row("permute|transpose/duplicate", Cat::Axis, err(K::DuplicateAxis), {x},
      L(C(tf::permute, x[0], V{0, 0})));
  row("permute|transpose/out-of-range", Cat::Axis, err(K::AxisOutOfBounds), {x},
      L(C(tf::permute, x[0], V{0, 2})));
  row("permute|transpose/wrong-length", Cat::Rank, err(K::RankMismatch), {x},
      L(C(tf::permute, x[0], V{0})));
  row("permute|transpose/undefined", Cat::Undefined, err(K::InvalidArgument), {},
      L(C(tf::permute, t.undef(), V{0})));
  row("permute|transpose/rank-0", Cat::EmptyOrScalar, ok({}, f64, {0.5}), {s},
      L(C(tf::permute, x[0], V{})));
  row("permute|transpose/zero-size", Cat::EmptyOrScalar, ok({3, 0}), {e},
      L(C(tf::permute, x[0], V{1, 0})));
  row("transpose/out-of-range", Cat::Axis, err(K::AxisOutOfBounds), {x},
      L(C(tf::transpose, x[0], std::int64_t{0}, std::int64_t{5})));
  row("transpose/rank-1", Cat::Axis, err(K::AxisOutOfBounds), {v3}, L(C(tf::transpose, x[0])));
  // reshape
  row("reshape/size-mismatch", Cat::Shape, err(K::ShapeMismatch), {x},
      L(C(tf::reshape, x[0], V{4, 2})));
  row("reshape/two-minus-one", Cat::Extent, err(K::InvalidArgument), {x},
      L(C(tf::reshape, x[0], V{-1, -1})));
  row("reshape/negative", Cat::Extent, err(K::InvalidArgument), {x},
      L(C(tf::reshape, x[0], V{-2, -3})));
  row("reshape/overflowing", Cat::Extent, err(K::InvalidArgument), {x},
      L(C(tf::reshape, x[0], V{kHuge, kHuge, 0, -1})));
  row("reshape/minus-one-not-divisible", Cat::Shape, err(K::ShapeMismatch), {x},
      L(C(tf::reshape, x[0], V{4, -1})));
  row("reshape/minus-one-of-empty", Cat::Extent, err(K::ShapeMismatch), {e},
      L(C(tf::reshape, x[0], V{0, -1})));
  row("reshape/undefined", Cat::Undefined, err(K::InvalidArgument), {},
      L(C(tf::reshape, t.undef(), V{1})));
  row("reshape/zero-size", Cat::EmptyOrScalar, ok({3, 0, 5}), {e},
      L(C(tf::reshape, x[0], V{3, 0, 5})));
  row("reshape/rank-0", Cat::EmptyOrScalar, ok({1, 1}, f64, {0.5}), {s},
      L(C(tf::reshape, x[0], V{1, -1})));
  // broadcasting
  row("broadcast_in_dim/incompatible", Cat::Shape, err(K::ShapeMismatch), {v3},
      L(C(tf::broadcast_in_dim, x[0], V{2, 4}, V{1})));
  row("broadcast_in_dim/dims-out-of-range", Cat::Axis, err(K::AxisOutOfBounds), {v3},
      L(C(tf::broadcast_in_dim, x[0], V{2, 3}, V{2})));
  row("broadcast_in_dim/dims-wrong-length", Cat::Rank, err(K::RankMismatch), {v3},
      L(C(tf::broadcast_in_dim, x[0], V{2, 3}, V{0, 1})));
  row("broadcast_in_dim/duplicate-dims", Cat::Axis, err(K::InvalidArgument), {x},
      L(C(tf::broadcast_in_dim, x[0], V{2, 3, 3}, V{1, 1})));
  row("broadcast_in_dim/negative-extent", Cat::Extent, err(K::InvalidArgument), {v3},
      L(C(tf::broadcast_in_dim, x[0], V{-2, 3}, V{1})));
  row("broadcast_in_dim/overflowing", Cat::Extent, err(K::InvalidArgument), {v3},
      L(C(tf::broadcast_in_dim, x[0], V{kHuge, kHuge, 3}, V{2})));
  row("broadcast_in_dim/rank-0", Cat::EmptyOrScalar, ok({2, 2}, f64, {0.5, 0.5, 0.5, 0.5}), {s},
      L(C(tf::broadcast_in_dim, x[0], V{2, 2}, V{})));
  // slice
  row("slice/limit-past-end", Cat::Extent, err(K::AxisOutOfBounds), {x},
      L(C(tf::slice, x[0], V{0, 0}, V{2, 4}, V{1, 1})));
  row("slice/start-after-limit", Cat::Extent, err(K::InvalidArgument), {x},
      L(C(tf::slice, x[0], V{2, 0}, V{1, 3}, V{1, 1})));
  row("slice/zero-stride", Cat::Param, err(K::InvalidArgument), {x},
      L(C(tf::slice, x[0], V{0, 0}, V{2, 3}, V{0, 1})));
  row("slice/negative-start", Cat::Extent, err(K::AxisOutOfBounds), {x},
      L(C(tf::slice, x[0], V{-1, 0}, V{2, 3}, V{1, 1})));
  row("slice/wrong-length", Cat::Rank, err(K::RankMismatch), {x},
      L(C(tf::slice, x[0], V{0}, V{2}, V{1})));
  row("slice/huge-stride", Cat::EmptyOrScalar, ok({1, 1}, f64), {x},
      L(C(tf::slice, x[0], V{0, 0}, V{2, 3}, V{kMax, kMax})));
  row("slice/undefined", Cat::Undefined, err(K::InvalidArgument), {},
      L(C(tf::slice, t.undef(), V{0}, V{1}, V{1})));
  row("slice/empty-range", Cat::EmptyOrScalar, ok({0, 3}), {x},
      L(C(tf::slice, x[0], V{1, 0}, V{1, 3}, V{1, 1})));
  row("slice/rank-0", Cat::EmptyOrScalar, ok({}, f64, {0.5}), {s},
      L(C(tf::slice, x[0], V{}, V{}, V{})));
  // pad
  row("pad/wrong-length", Cat::Rank, err(K::RankMismatch), {x},
      L(C(tf::pad, x[0], V{1}, V{1}, Scalar(0.0))));
  row("pad/crop-too-much", Cat::Extent, err(K::InvalidArgument), {x},
      L(C(tf::pad, x[0], V{-2, 0}, V{-1, 0}, Scalar(0.0))));
  row("pad/overflowing", Cat::Extent, err(K::InvalidArgument), {x},
      L(C(tf::pad, x[0], V{kMax, 0}, V{1, 0}, Scalar(0.0))));
  row("pad/undefined", Cat::Undefined, err(K::InvalidArgument), {},
      L(C(tf::pad, t.undef(), V{1}, V{1}, Scalar(0.0))));
  row("pad/zero-size", Cat::EmptyOrScalar, ok({2, 3}, f64, std::vector<double>(6, 1.0)), {e},
      L(C(tf::pad, x[0], V{1, 0}, V{1, 0}, Scalar(1.0))));
  row("pad/rank-0", Cat::EmptyOrScalar, ok({}, f64, {0.5}), {s},
      L(C(tf::pad, x[0], V{}, V{}, Scalar(1.0))));
  row("pad/complex-value-into-real", Cat::DType, err(K::DTypeMismatch), {x},
      L(C(tf::pad, x[0], V{1, 0}, V{0, 0}, Scalar(c128_t(1.0, 2.0)))));
  // concatenate / stack
  row("concatenate/shape-mismatch", Cat::Shape, err(K::ShapeMismatch), {x, rnd({2, 4})},
      L(C(tf::concatenate, VEC(x[0], x[1]), std::int64_t{0})));
  row("concatenate/rank-mismatch", Cat::Rank, err(K::RankMismatch), {x, v3},
      L(C(tf::concatenate, VEC(x[0], x[1]), std::int64_t{0})));
  row("concatenate/axis-out-of-range", Cat::Axis, err(K::AxisOutOfBounds), {x, x},
      L(C(tf::concatenate, VEC(x[0], x[1]), std::int64_t{2})));
  row("concatenate/rank-0", Cat::Axis, err(K::AxisOutOfBounds), {s, s},
      L(C(tf::concatenate, VEC(x[0], x[1]), std::int64_t{0})));
  row("concatenate/empty-list", Cat::Param, err(K::InvalidArgument), {},
      L(C(tf::concatenate, VEC(), std::int64_t{0})));
  row("concatenate/undefined", Cat::Undefined, err(K::InvalidArgument), {x},
      L(C(tf::concatenate, VEC(x[0], t.undef()), std::int64_t{0})));
  row("concatenate/other-runtime", Cat::Foreign, err(K::ContextMismatch), {x, x},
      L(C(tf::concatenate, VEC(x[0], t.foreign(x[1])), std::int64_t{0})));
  row("concatenate/zero-size", Cat::EmptyOrScalar, ok({2, 3}), {e, x},
      L(C(tf::concatenate, VEC(x[0], x[1]), std::int64_t{0})));
  row("concatenate/promotes", Cat::DType, ok({4, 3}, c128), {x, filled({2, 3}, c128)},
      L(C(tf::concatenate, VEC(x[0], x[1]), std::int64_t{0})));
  row("stack/shape-mismatch", Cat::Shape, err(K::ShapeMismatch), {x, rnd({3, 2})},
      L(C(tf::stack, VEC(x[0], x[1]), std::int64_t{0})));
  row("stack/axis-out-of-range", Cat::Axis, err(K::AxisOutOfBounds), {x, x},
      L(C(tf::stack, VEC(x[0], x[1]), std::int64_t{3})));
  row("stack/empty-list", Cat::Param, err(K::InvalidArgument), {},
      L(C(tf::stack, VEC(), std::int64_t{0})));
  row("stack/undefined", Cat::Undefined, err(K::InvalidArgument), {x},
      L(C(tf::stack, VEC(t.undef(), x[0]), std::int64_t{0})));
  row("stack/rank-0", Cat::EmptyOrScalar, ok({2}, f64, {0.5, 0.5}), {s, s},
      L(C(tf::stack, VEC(x[0], x[1]), std::int64_t{0})));
  row("stack/zero-size", Cat::EmptyOrScalar, ok({0, 3, 2}), {e, e},
      L(C(tf::stack, VEC(x[0], x[1]), std::int64_t{2})));
  // reverse / flip / roll
  row("reverse/duplicate", Cat::Axis, err(K::DuplicateAxis), {x}, L(C(tf::reverse, x[0], V{1, 1})));
  row("reverse/out-of-range", Cat::Axis, err(K::AxisOutOfBounds), {x},
      L(C(tf::reverse, x[0], V{2})));
  row("flip|reverse/out-of-range", Cat::Axis, err(K::AxisOutOfBounds), {x},
      L(C(tf::flip, x[0], V{-3})));
  row("roll/length-mismatch", Cat::Param, err(K::InvalidArgument), {x},
      L(C(tf::roll, x[0], V{1, 2}, V{0})));
  row("roll/out-of-range", Cat::Axis, err(K::AxisOutOfBounds), {x},
      L(C(tf::roll, x[0], V{1}, V{2})));
  row("roll/huge-shift", Cat::Extent, ok({2, 3}), {x}, L(C(tf::roll, x[0], V{kMax}, V{1})));
  row("roll/zero-size", Cat::EmptyOrScalar, ok({0, 3}), {e}, L(C(tf::roll, x[0], std::int64_t{1})));
  // diagonal, diag_embed, tril/triu, trace, kron
  row("diagonal/same-axes", Cat::Axis, err(K::DuplicateAxis), {x},
      L(C(tf::diagonal, x[0], std::int64_t{0}, std::int64_t{1}, std::int64_t{1})));
  row("diagonal/out-of-range", Cat::Axis, err(K::AxisOutOfBounds), {x},
      L(C(tf::diagonal, x[0], std::int64_t{0}, std::int64_t{0}, std::int64_t{2})));
  row("diagonal/rank-1", Cat::Axis, err(K::AxisOutOfBounds), {v3},
      L(C(tf::diagonal, x[0], std::int64_t{0}, std::int64_t{0}, std::int64_t{1})));
  row("diagonal/huge-offset", Cat::EmptyOrScalar, ok({0}), {x},
      L(C(tf::diagonal, x[0], kHuge, std::int64_t{0}, std::int64_t{1})));
  row("diag_embed/rank-0", Cat::Rank, err(K::RankMismatch), {s},
      L(C(tf::diag_embed, x[0], std::int64_t{0})));
  row("diag_embed/huge-offset", Cat::Extent, err(K::InvalidArgument), {v3},
      L(C(tf::diag_embed, x[0], kHuge)));
  row("diag_embed/zero-size", Cat::EmptyOrScalar, ok({0, 0}), {filled({0}, f64)},
      L(C(tf::diag_embed, x[0], std::int64_t{0})));
  row("tril/rank-1", Cat::Rank, err(K::RankMismatch), {v3}, L(C(tf::tril, x[0], std::int64_t{0})));
  row("triu/rank-0", Cat::Rank, err(K::RankMismatch), {s}, L(C(tf::triu, x[0], std::int64_t{0})));
  row("tril/huge-k", Cat::EmptyOrScalar, ok({2, 3}), {x}, L(C(tf::tril, x[0], kMax)));
  row("triu/zero-size", Cat::EmptyOrScalar, ok({0, 3}), {e}, L(C(tf::triu, x[0], std::int64_t{1})));
  row("trace/rank-1", Cat::Rank, err(K::RankMismatch), {v3}, L(C(tf::trace, x[0])));
  row("trace/zero-size", Cat::EmptyOrScalar, ok({}, f64, {0.0}), {e}, L(C(tf::trace, x[0])));
  row("kron/undefined", Cat::Undefined, err(K::InvalidArgument), {x},
      L(C(tf::kron, x[0], t.undef())));
  row("kron/bool-and-complex", Cat::DType, ok({4, 9}, c128), {x, filled({2, 3}, c128)},
      L(C(tf::kron, x[0], x[1])));
  row("kron/other-runtime", Cat::Foreign, err(K::ContextMismatch), {x, x},
      L(C(tf::kron, x[0], t.foreign(x[1]))));
}

inline void add_gather_rows(std::vector<Row>& rows) {
  const Tensor x = rnd({2, 3}), idx = Tensor::from_col_major({2}, std::vector<std::int64_t>{0, 2});
  const Tensor bad = Tensor::from_col_major({2}, std::vector<std::int64_t>{0, 3});
  const Tensor neg = Tensor::from_col_major({1}, std::vector<std::int64_t>{-4});
  auto row = [&](std::string n, Cat c, Expect ex, std::vector<Tensor> in, auto f) {
    rows.push_back(make_row(std::move(n), c, std::move(ex), std::move(in), f));
  };
  row("index_select/float-index", Cat::DType, err(K::DTypeMismatch), {x, rnd({2})},
      L(C(tf::index_select, x[0], std::int64_t{1}, x[1])));
  row("index_select/axis-out-of-range", Cat::Axis, err(K::AxisOutOfBounds), {x, idx},
      L(C(tf::index_select, x[0], std::int64_t{2}, x[1])));
  row("index_select/index-rank-2", Cat::Rank, err(K::RankMismatch), {x, filled({1, 1}, i64)},
      L(C(tf::index_select, x[0], std::int64_t{1}, x[1])));
  row("index_select/index-out-of-range", Cat::Extent, err(K::AxisOutOfBounds), {x, bad},
      L(C(tf::index_select, x[0], std::int64_t{1}, x[1])));
  row("index_select/negative-index", Cat::Extent, err(K::AxisOutOfBounds), {x, neg},
      L(C(tf::index_select, x[0], std::int64_t{1}, x[1])));
  row("index_select/empty-index", Cat::EmptyOrScalar, ok({2, 0}), {x, filled({0}, i64)},
      L(C(tf::index_select, x[0], std::int64_t{1}, x[1])));
  row("index_select/undefined-index", Cat::Undefined, err(K::InvalidArgument), {x},
      L(C(tf::index_select, x[0], std::int64_t{1}, t.undef())));
  row("index_select/other-runtime", Cat::Foreign, err(K::ContextMismatch), {x, idx},
      L(C(tf::index_select, x[0], std::int64_t{1}, t.foreign(x[1]))));
  const Tensor idx23 = filled({2, 3}, i64);
  row("take_along_axis/float-index", Cat::DType, err(K::DTypeMismatch), {x, x},
      L(C(tf::take_along_axis, x[0], x[1], std::int64_t{0})));
  row("take_along_axis/rank-mismatch", Cat::Rank, err(K::RankMismatch), {x, idx},
      L(C(tf::take_along_axis, x[0], x[1], std::int64_t{0})));
  row("take_along_axis/axis-out-of-range", Cat::Axis, err(K::AxisOutOfBounds), {x, idx23},
      L(C(tf::take_along_axis, x[0], x[1], std::int64_t{2})));
  row("take_along_axis/index-out-of-range", Cat::Extent, err(K::AxisOutOfBounds), {x, idx23},
      L(C(tf::take_along_axis, x[0], x[1], std::int64_t{0})));
  row("scatter_add/float-index", Cat::DType, err(K::DTypeMismatch), {x, x, x},
      L(C(tf::scatter_add, x[0], std::int64_t{0}, x[1], x[2])));
  row("scatter_add/src-shape", Cat::Shape, err(K::ShapeMismatch),
      {x, filled({2, 3}, i64), rnd({2, 2})},
      L(C(tf::scatter_add, x[0], std::int64_t{0}, x[1], x[2])));
  row("scatter_add/index-out-of-range", Cat::Extent, err(K::AxisOutOfBounds),
      {x, filled({2, 3}, i64), x}, L(C(tf::scatter_add, x[0], std::int64_t{0}, x[1], x[2])));
  row("scatter_add/axis-out-of-range", Cat::Axis, err(K::AxisOutOfBounds),
      {x, filled({2, 3}, i64), x}, L(C(tf::scatter_add, x[0], std::int64_t{4}, x[1], x[2])));
  // convert / cast
  row("convert/lossy", Cat::DType, err(K::DTypeMismatch), {x}, L(C(tf::convert, x[0], i64)));
  row("convert/complex-to-real", Cat::DType, err(K::DTypeMismatch), {filled({2}, c128)},
      L(C(tf::convert, x[0], f64)));
  row("convert/undefined", Cat::Undefined, err(K::InvalidArgument), {},
      L(C(tf::convert, t.undef(), f64)));
  row("cast/zero-size", Cat::EmptyOrScalar, ok({0, 3}, i32), {filled({0, 3}, f64)},
      L(C(tf::cast, x[0], i32)));
  row("cast/nan-to-int", Cat::NonFinite, ok({1}, i64, {0}),
      {Tensor::from_col_major({1}, std::vector<double>{std::numeric_limits<double>::quiet_NaN()})},
      L(C(tf::cast, x[0], i64)));
  // scans and sorting
  row("cumsum/axis-out-of-range", Cat::Axis, err(K::AxisOutOfBounds), {x},
      L(C(tf::cumsum, x[0], std::int64_t{2})));
  row("cumprod/axis-negative", Cat::Axis, err(K::AxisOutOfBounds), {x},
      L(C(tf::cumprod, x[0], std::int64_t{-3})));
  row("cumsum/rank-0", Cat::EmptyOrScalar, ok({}, f64, {0.5}), {filled({}, f64)},
      L(C(tf::cumsum, x[0], std::int64_t{0})));
  row("cumsum/undefined", Cat::Undefined, err(K::InvalidArgument), {},
      L(C(tf::cumsum, t.undef(), std::int64_t{0})));
  row("cumprod/zero-size", Cat::EmptyOrScalar, ok({0, 3}), {filled({0, 3}, f64)},
      L(C(tf::cumprod, x[0], std::int64_t{0})));
  row("argsort/axis-out-of-range", Cat::Axis, err(K::AxisOutOfBounds), {x},
      L(C(tf::argsort, x[0], std::int64_t{2})));
  row("argsort/complex", Cat::DType, err(K::DTypeMismatch), {filled({2}, c128)},
      L(C(tf::argsort, x[0], std::int64_t{0})));
  row("sort/axis-out-of-range", Cat::Axis, err(K::AxisOutOfBounds), {x},
      L(C(tf::sort, x[0], std::int64_t{-5})));
  row("sort/zero-size", Cat::EmptyOrScalar, ok({0, 3}), {filled({0, 3}, f64)},
      L(C(tf::sort, x[0], std::int64_t{0})));
  row("topk/k-too-large", Cat::Extent, err(K::InvalidArgument), {x},
      L(C(tf::topk, x[0], std::int64_t{4}, std::int64_t{1})));
  row("topk/k-negative", Cat::Extent, err(K::InvalidArgument), {x},
      L(C(tf::topk, x[0], std::int64_t{-1}, std::int64_t{1})));
  row("topk/axis-out-of-range", Cat::Axis, err(K::AxisOutOfBounds), {x},
      L(C(tf::topk, x[0], std::int64_t{1}, std::int64_t{2})));
  row("topk/k-zero", Cat::EmptyOrScalar, ok({2, 0}), {x},
      L(C(tf::topk, x[0], std::int64_t{0}, std::int64_t{1})));
  row("topk/nan", Cat::NonFinite, ok({1}, f64),
      {Tensor::from_col_major({2},
                              std::vector<double>{1.0, std::numeric_limits<double>::quiet_NaN()})},
      L(C(tf::topk, x[0], std::int64_t{1}, std::int64_t{0})));
}

inline void add_composite_rows(std::vector<Row>& rows) {
  const Tensor x = rnd({2, 3}), c = filled({2, 3}, c128), s = filled({}, f64);
  auto row = [&](std::string n, Cat cat, Expect ex, std::vector<Tensor> in, auto f) {
    rows.push_back(make_row(std::move(n), cat, std::move(ex), std::move(in), f));
  };
  row("relu/complex", Cat::DType, err(K::DTypeMismatch), {c}, L(C(tf::relu, x[0])));
  row("relu/undefined", Cat::Undefined, err(K::InvalidArgument), {}, L(C(tf::relu, t.undef())));
  row("relu/zero-size", Cat::EmptyOrScalar, ok({0, 3}), {filled({0, 3}, f64)},
      L(C(tf::relu, x[0])));
  row("softplus/complex", Cat::DType, err(K::DTypeMismatch), {c}, L(C(tf::softplus, x[0])));
  row("softplus/zero-beta", Cat::Param, err(K::InvalidArgument), {x},
      L(C(tf::softplus, x[0], 0.0, 20.0)));
  row("hardtanh/min-above-max", Cat::Param, err(K::InvalidArgument), {x},
      L(C(tf::hardtanh, x[0], 1.0, -1.0)));
  row("rrelu/lower-above-upper", Cat::Param, err(K::InvalidArgument), {x},
      L(C(tf::rrelu, x[0], 0.5, 0.1)));
  row("prelu/weight-shape", Cat::Shape, err(K::ShapeMismatch), {x, rnd({4})},
      L(C(tf::prelu, x[0], x[1])));
  row("leaky_relu/rank-0", Cat::EmptyOrScalar, ok({}, f64, {0.5}), {s},
      L(C(tf::leaky_relu, x[0], 0.01)));
  row("elu/complex", Cat::DType, err(K::DTypeMismatch), {c}, L(C(tf::elu, x[0], 1.0)));
  row("complex/complex-input", Cat::DType, err(K::DTypeMismatch), {c, c},
      L(C(tf::complex, x[0], x[1])));
  row("complex/mismatched", Cat::Shape, err(K::ShapeMismatch), {x, rnd({4})},
      L(C(tf::complex, x[0], x[1])));
  row("polar/complex-input", Cat::DType, err(K::DTypeMismatch), {c, x},
      L(C(tf::polar, x[0], x[1])));
  row("ldexp/complex-exponent", Cat::DType, ok({2, 3}, c128), {x, c}, L(C(tf::ldexp, x[0], x[1])));
  row("fmax/complex", Cat::DType, err(K::DTypeMismatch), {c, c}, L(C(tf::fmax, x[0], x[1])));
  row("clamp_min/mismatched", Cat::Shape, err(K::ShapeMismatch), {x, rnd({4})},
      L(C(tf::clamp_min, x[0], x[1])));
  row("float_power/undefined", Cat::Undefined, err(K::InvalidArgument), {x},
      L(C(tf::float_power, x[0], t.undef())));
  row("nan_to_num/complex", Cat::NonFinite, ok({2, 3}, c128), {c}, L(C(tf::nan_to_num, x[0], 0.0)));
  row("nan_to_num/nan", Cat::NonFinite, ok({2}, f64, {7.0, 1.0}),
      {Tensor::from_col_major({2},
                              std::vector<double>{std::numeric_limits<double>::quiet_NaN(), 1.0})},
      L(C(tf::nan_to_num, x[0], 7.0)));
  row("round/complex-decimals", Cat::DType, err(K::DTypeMismatch), {c},
      L(C(tf::round, x[0], std::int64_t{2})));
  row("logit/eps-out-of-range", Cat::Param, err(K::InvalidArgument), {x},
      L(C(tf::logit, x[0], 0.7)));
  row("nansum/axis-out-of-range", Cat::Axis, err(K::AxisOutOfBounds), {x},
      L(C(tf::nansum, x[0], V{2})));
  row("nanmean/duplicate-axis", Cat::Axis, err(K::DuplicateAxis), {x},
      L(C(tf::nanmean, x[0], V{0, 0})));
  row("amax/zero-size", Cat::EmptyOrScalar, err(K::InvalidArgument), {filled({0, 3}, f64)},
      L(C(tf::amax, x[0], V{0})));
  row("amin/axis-out-of-range", Cat::Axis, err(K::AxisOutOfBounds), {x},
      L(C(tf::amin, x[0], V{3})));
  row("amax/complex", Cat::DType, err(K::DTypeMismatch), {c}, L(C(tf::amax, x[0])));
}

inline void add_structural_rows(std::vector<Row>& rows) {
  add_shape_rows(rows);
  add_gather_rows(rows);
  add_composite_rows(rows);
}

}  // namespace badinput
