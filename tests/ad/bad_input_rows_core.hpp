#pragma once
// Rows for the core ops: elementwise (every UnaryOp and BinaryOp over every
// dtype, against the documented dtype rule), reductions and contractions.

#include <limits>
#include <vector>

#include "ad/bad_input_harness.hpp"

namespace badinput {

using K = ErrorKind;
// A vector of the tier's tensor type (for list arguments).
#define VEC(...)                     \
  std::remove_cvref_t<decltype(x)> { \
    __VA_ARGS__                      \
  }

inline constexpr std::int64_t kHuge = std::int64_t{1} << 61;
inline constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

/// A tensor of `shape` with values in every op's domain (0.5, or 2, or true).
inline Tensor filled(const V& shape, DType dt) {
  if (dt == bool_) return ones(shape, bool_);
  if (is_integral(dt)) return full(shape, Scalar(std::int64_t{2}), dt);
  return full(shape, Scalar(0.5), dt);
}
inline Tensor rnd(const V& shape, DType dt = f64, std::uint64_t seed = 1) {
  Generator g(seed);
  return randn(shape, dt, g);
}

/// The documented dtype rule as the oracle: DTypeMismatch where it refuses.
template <class Rule>
Expect by_rule(const Shape& shape, Rule rule) {
  try {
    return ok(shape, rule());
  } catch (const Error& e) {
    return err(e.kind());
  }
}

inline void add_elementwise_rows(std::vector<Row>& rows) {
  for (int i = 0; i < kUnaryOpCount; ++i) {
    const auto op = static_cast<UnaryOp>(i);
    const std::string n(name(op));
    auto body = [op](auto& t, const auto& x) { return C(tf::unary, op, x[0]); };
    for (DType dt : kAllDTypes) {
      rows.push_back(make_row(n + "/" + std::string(name(dt)), Cat::DType,
                              by_rule({2, 3}, [&] { return unary_result_dtype(op, dt); }),
                              {filled({2, 3}, dt)}, body));
    }
    rows.push_back(make_row(n + "/undefined", Cat::Undefined, err(K::InvalidArgument), {},
                            [op](auto& t, const auto&) { return C(tf::unary, op, t.undef()); }));
    rows.push_back(make_row(n + "/zero-size", Cat::EmptyOrScalar,
                            ok({0, 3}, unary_result_dtype(op, f64)), {filled({0, 3}, f64)}, body));
    rows.push_back(make_row(n + "/rank-0", Cat::EmptyOrScalar, ok({}, unary_result_dtype(op, f64)),
                            {filled({}, f64)}, body));
  }
  const std::pair<DType, DType> pairs[] = {{f64, c128}, {bool_, bool_}, {i64, f64},
                                           {i32, i64},  {f32, c64},     {c128, c128}};
  for (int i = 0; i < kBinaryOpCount; ++i) {
    const auto op = static_cast<BinaryOp>(i);
    const std::string n(name(op));
    auto body = [op](auto& t, const auto& x) { return C(tf::binary, op, x[0], x[1]); };
    for (auto [a, b] : pairs) {
      rows.push_back(make_row(n + "/" + std::string(name(a)) + "-" + std::string(name(b)),
                              Cat::DType,
                              by_rule({2, 3}, [&] { return binary_result_dtype(op, a, b); }),
                              {filled({2, 3}, a), filled({2, 3}, b)}, body));
    }
    rows.push_back(make_row(n + "/mismatched", Cat::Shape, err(K::ShapeMismatch),
                            {filled({2, 3}, f64), filled({4}, f64)}, body));
    rows.push_back(
        make_row(n + "/undefined", Cat::Undefined, err(K::InvalidArgument), {filled({2}, f64)},
                 [op](auto& t, const auto& x) { return C(tf::binary, op, x[0], t.undef()); }));
    rows.push_back(make_row(n + "/other-runtime", Cat::Foreign, err(K::ContextMismatch),
                            {filled({2}, f64), filled({2}, f64)}, [op](auto& t, const auto& x) {
                              return C(tf::binary, op, x[0], t.foreign(x[1]));
                            }));
    const DType real = op == BinaryOp::Complex ? f64 : f64;
    rows.push_back(make_row(n + "/zero-size-broadcast", Cat::EmptyOrScalar,
                            ok({0, 3}, binary_result_dtype(op, real, real)),
                            {filled({0, 3}, real), filled({3}, real)}, body));
    rows.push_back(make_row(n + "/rank-0", Cat::EmptyOrScalar,
                            ok({2, 3}, binary_result_dtype(op, real, real)),
                            {filled({}, real), filled({2, 3}, real)}, body));
  }
  // The other elementwise forms.
  const Tensor x23 = filled({2, 3}, f64);
  rows.push_back(make_row("polygamma/negative-order", Cat::Param, err(K::InvalidArgument), {x23},
                          L(C(tf::polygamma, std::int64_t{-1}, x[0]))));
  rows.push_back(make_row("polygamma/huge-order", Cat::Param, err(K::InvalidArgument), {x23},
                          L(C(tf::polygamma, kHuge, x[0]))));
  rows.push_back(make_row("polygamma/complex", Cat::DType, err(K::DTypeMismatch),
                          {filled({2}, c128)}, L(C(tf::polygamma, std::int64_t{1}, x[0]))));
  rows.push_back(make_row("polygamma/zero-size", Cat::EmptyOrScalar, ok({0}, f64),
                          {filled({0}, f64)}, L(C(tf::polygamma, std::int64_t{1}, x[0]))));
  rows.push_back(make_row("mvlgamma/p-zero", Cat::Param, err(K::InvalidArgument), {x23},
                          L(C(tf::mvlgamma, x[0], std::int64_t{0}))));
  rows.push_back(make_row("mvlgamma/p-huge", Cat::Param, err(K::InvalidArgument), {x23},
                          L(C(tf::mvlgamma, x[0], kHuge))));
  rows.push_back(make_row("mvlgamma/complex", Cat::DType, err(K::DTypeMismatch),
                          {filled({2}, c128)}, L(C(tf::mvlgamma, x[0], std::int64_t{2}))));
  rows.push_back(make_row("frexp/complex", Cat::DType, err(K::DTypeMismatch), {filled({2}, c128)},
                          L(C(tf::frexp, x[0]))));
  rows.push_back(make_row("frexp/rank-0", Cat::EmptyOrScalar, ok({}, f64), {filled({}, f64)},
                          L(C(tf::frexp, x[0]))));
  rows.push_back(make_row("where|select/mismatched", Cat::Shape, err(K::ShapeMismatch),
                          {filled({2}, bool_), filled({3}, f64), filled({3}, f64)},
                          L(C(tf::where, x[0], x[1], x[2]))));
  rows.push_back(make_row("where|select/undefined", Cat::Undefined, err(K::InvalidArgument),
                          {filled({2}, bool_), filled({2}, f64)},
                          L(C(tf::where, x[0], x[1], t.undef()))));
  rows.push_back(make_row("where|select/other-runtime", Cat::Foreign, err(K::ContextMismatch),
                          {filled({2}, bool_), filled({2}, f64), filled({2}, f64)},
                          L(C(tf::where, x[0], x[1], t.foreign(x[2])))));
  rows.push_back(make_row("where|select/zero-size", Cat::EmptyOrScalar, ok({0, 2}, f64),
                          {filled({0, 2}, bool_), filled({2}, f64), filled({}, f64)},
                          L(C(tf::where, x[0], x[1], x[2]))));
  rows.push_back(
      make_row("clamp/complex", Cat::DType, err(K::DTypeMismatch), {filled({2}, c128)},
               L(C(tf::clamp, x[0], std::optional<Scalar>(0.0), std::optional<Scalar>(1.0)))));
  rows.push_back(
      make_row("clamp/undefined", Cat::Undefined, err(K::InvalidArgument), {},
               L(C(tf::clamp, t.undef(), std::optional<Scalar>(0.0), std::optional<Scalar>(1.0)))));
  rows.push_back(
      make_row("clamp/rank-0", Cat::EmptyOrScalar, ok({}, f64, {0.5}), {filled({}, f64)},
               L(C(tf::clamp, x[0], std::optional<Scalar>(0.0), std::optional<Scalar>(1.0)))));
}

inline void add_reduction_rows(std::vector<Row>& rows) {
  const Tensor x23 = rnd({2, 3});
  for (int i = 0; i <= static_cast<int>(ReduceOp::LogSumExp); ++i) {
    const auto op = static_cast<ReduceOp>(i);
    const std::string n(name(op));
    const Tensor in = (op == ReduceOp::All || op == ReduceOp::Any) ? filled({2, 3}, bool_) : x23;
    rows.push_back(
        make_row(n + "/axis-out-of-range", Cat::Axis, err(K::AxisOutOfBounds), {in},
                 [op](auto& t, const auto& x) { return C(tf::reduce, op, x[0], V{2}); }));
    rows.push_back(
        make_row(n + "/axis-negative-out-of-range", Cat::Axis, err(K::AxisOutOfBounds), {in},
                 [op](auto& t, const auto& x) { return C(tf::reduce, op, x[0], V{-3}); }));
    rows.push_back(
        make_row(n + "/axis-huge", Cat::Axis, err(K::AxisOutOfBounds), {in},
                 [op](auto& t, const auto& x) { return C(tf::reduce, op, x[0], V{kMax}); }));
    rows.push_back(make_row(n + "/duplicate-axis", Cat::Axis, err(K::DuplicateAxis), {in},
                            [op](auto& t, const auto& x) {
                              return C(tf::reduce, op, x[0], V{1, 1});
                            }));
    rows.push_back(
        make_row(n + "/undefined", Cat::Undefined, err(K::InvalidArgument), {},
                 [op](auto& t, const auto&) { return C(tf::reduce, op, t.undef(), V{0}); }));
    rows.push_back(make_row(n + "/rank-0-no-axes", Cat::EmptyOrScalar, ok({}),
                            {filled({}, in.dtype())},
                            [op](auto& t, const auto& x) { return C(tf::reduce, op, x[0], V{}); }));
    rows.push_back(
        make_row(n + "/rank-0-axis-0", Cat::Axis, err(K::AxisOutOfBounds), {filled({}, in.dtype())},
                 [op](auto& t, const auto& x) { return C(tf::reduce, op, x[0], V{0}); }));
    // Zero-size: sums and products have identities; max/min of nothing is an error.
    const bool has_identity = op != ReduceOp::Max && op != ReduceOp::Min;
    const Tensor empty =
        (op == ReduceOp::All || op == ReduceOp::Any) ? filled({0, 3}, bool_) : filled({0, 3}, f64);
    rows.push_back(make_row(
        n + "/zero-size", Cat::EmptyOrScalar, has_identity ? ok({3}) : err(K::InvalidArgument),
        {empty}, [op](auto& t, const auto& x) { return C(tf::reduce, op, x[0], V{0}); }));
    rows.push_back(
        make_row(n + "/zero-size-other-axis", Cat::EmptyOrScalar, ok({0}), {empty},
                 [op](auto& t, const auto& x) { return C(tf::reduce, op, x[0], V{1}); }));
  }
  rows.push_back(make_row("sum/bool-to-i64", Cat::DType, ok({}, i64, {6}), {filled({2, 3}, bool_)},
                          L(C(tf::sum, x[0]))));
  rows.push_back(make_row("max/complex", Cat::DType, err(K::DTypeMismatch), {filled({2}, c128)},
                          L(C(tf::max, x[0], V{0}))));
  rows.push_back(make_row("var/axis-out-of-range", Cat::Axis, err(K::AxisOutOfBounds), {x23},
                          L(C(tf::var, x[0], V{2}))));
  rows.push_back(make_row("var/duplicate-axis", Cat::Axis, err(K::DuplicateAxis), {x23},
                          L(C(tf::var, x[0], V{0, 0}))));
  rows.push_back(make_row("var/bool", Cat::DType, ok({}, f64, {0.0}), {filled({2}, bool_)},
                          L(C(tf::var, x[0], V{0}))));
  rows.push_back(make_row("std_dev/axis-out-of-range", Cat::Axis, err(K::AxisOutOfBounds), {x23},
                          L(C(tf::std_dev, x[0], V{5})), "std"));
  rows.push_back(make_row("var/undefined", Cat::Undefined, err(K::InvalidArgument), {},
                          L(C(tf::var, t.undef(), V{0}))));
  rows.push_back(make_row("argmax/axis-out-of-range", Cat::Axis, err(K::AxisOutOfBounds), {x23},
                          L(C(tf::argmax, x[0], std::int64_t{2}))));
  rows.push_back(make_row("argmin/axis-negative", Cat::Axis, err(K::AxisOutOfBounds), {x23},
                          L(C(tf::argmin, x[0], std::int64_t{-3}))));
  rows.push_back(make_row("argmax/zero-size-axis", Cat::EmptyOrScalar, err(K::InvalidArgument),
                          {filled({0, 3}, f64)}, L(C(tf::argmax, x[0], std::int64_t{0}))));
  rows.push_back(make_row("argmax/complex", Cat::DType, err(K::DTypeMismatch), {filled({2}, c128)},
                          L(C(tf::argmax, x[0], std::int64_t{0}))));
  rows.push_back(make_row("argmax/undefined", Cat::Undefined, err(K::InvalidArgument), {},
                          L(C(tf::argmax, t.undef(), std::int64_t{0}))));
  rows.push_back(make_row("argmax/zero-size-other-axis", Cat::EmptyOrScalar, ok({0}, i64),
                          {filled({0, 3}, f64)}, L(C(tf::argmax, x[0], std::int64_t{1}))));
}

inline void add_contraction_rows(std::vector<Row>& rows) {
  const Tensor a23 = rnd({2, 3}), b43 = rnd({4, 3}), b34 = rnd({3, 4});
  rows.push_back(make_row("matmul/inner-mismatch", Cat::Shape, err(K::ShapeMismatch), {a23, b43},
                          L(C(tf::matmul, x[0], x[1]))));
  rows.push_back(make_row("matmul/rank-0", Cat::Rank, err(K::RankMismatch), {filled({}, f64), b34},
                          L(C(tf::matmul, x[0], x[1]))));
  rows.push_back(make_row("matmul/bool", Cat::DType, err(K::DTypeMismatch),
                          {filled({2, 2}, bool_), filled({2, 2}, bool_)},
                          L(C(tf::matmul, x[0], x[1]))));
  rows.push_back(make_row("matmul/batch-mismatch", Cat::Shape, err(K::ShapeMismatch),
                          {rnd({2, 3, 2}), rnd({3, 4, 3})}, L(C(tf::matmul, x[0], x[1]))));
  rows.push_back(make_row("matmul/undefined", Cat::Undefined, err(K::InvalidArgument), {a23},
                          L(C(tf::matmul, x[0], t.undef()))));
  rows.push_back(make_row("matmul/other-runtime", Cat::Foreign, err(K::ContextMismatch), {a23, b34},
                          L(C(tf::matmul, x[0], t.foreign(x[1])))));
  rows.push_back(make_row(
      "matmul/zero-inner", Cat::EmptyOrScalar, ok({2, 4}, f64, std::vector<double>(8, 0.0)),
      {filled({2, 0}, f64), filled({0, 4}, f64)}, L(C(tf::matmul, x[0], x[1]))));
  rows.push_back(make_row("matmul/vector-vector", Cat::EmptyOrScalar, ok({}, f64, {0.75}),
                          {filled({3}, f64), filled({3}, f64)}, L(C(tf::matmul, x[0], x[1]))));
  const DotDims dims{{1}, {0}, {}, {}};
  rows.push_back(
      make_row("dot_general/contract-mismatch", Cat::Shape, err(K::ShapeMismatch), {a23, b43},
               [dims](auto& t, const auto& x) { return C(tf::dot_general, x[0], x[1], dims); }));
  const DotDims oob{{2}, {0}, {}, {}};
  rows.push_back(
      make_row("dot_general/axis-out-of-range", Cat::Axis, err(K::AxisOutOfBounds), {a23, b34},
               [oob](auto& t, const auto& x) { return C(tf::dot_general, x[0], x[1], oob); }));
  const DotDims dup{{1, 1}, {0, 1}, {}, {}};
  rows.push_back(
      make_row("dot_general/duplicate-axis", Cat::Axis, err(K::DuplicateAxis), {a23, rnd({3, 3})},
               [dup](auto& t, const auto& x) { return C(tf::dot_general, x[0], x[1], dup); }));
  const DotDims uneven{{1}, {0, 1}, {}, {}};
  rows.push_back(make_row(
      "dot_general/uneven-lists", Cat::Axis, err(K::InvalidArgument), {a23, b34},
      [uneven](auto& t, const auto& x) { return C(tf::dot_general, x[0], x[1], uneven); }));
  rows.push_back(
      make_row("dot_general/bool", Cat::DType, err(K::DTypeMismatch),
               {filled({2, 3}, bool_), filled({3, 4}, bool_)},
               [dims](auto& t, const auto& x) { return C(tf::dot_general, x[0], x[1], dims); }));
  rows.push_back(make_row(
      "dot_general/undefined", Cat::Undefined, err(K::InvalidArgument), {a23},
      [dims](auto& t, const auto& x) { return C(tf::dot_general, x[0], t.undef(), dims); }));
}

inline void add_core_rows(std::vector<Row>& rows) {
  add_elementwise_rows(rows);
  add_reduction_rows(rows);
  add_contraction_rows(rows);
}

}  // namespace badinput
