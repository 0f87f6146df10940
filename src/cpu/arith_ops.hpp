#pragma once
// The four ops of the compact and streaming arithmetic forms (add, sub, mul,
// div; binary_kernels.cpp, stream_arith.cpp) and the dispatch from a runtime
// op to a loop instantiated for it. Not installed.

#include <type_traits>

#include "tenferro/backend/elementwise.hpp"

namespace tenferro::cpu {

/// Whether op is add, sub, mul or div.
constexpr bool is_arith(BinaryOp op) {
  return op == BinaryOp::Add || op == BinaryOp::Sub || op == BinaryOp::Mul || op == BinaryOp::Div;
}

/// f(std::integral_constant<BinaryOp, op>{}) for op add, sub or mul, and for
/// div otherwise (the caller checked is_arith). Not for loops that must be
/// built per target clone: GCC compiles the lambda f for the baseline.
template <class F>
decltype(auto) visit_arith(BinaryOp op, F&& f) {
  switch (op) {
    case BinaryOp::Add:
      return f(std::integral_constant<BinaryOp, BinaryOp::Add>{});
    case BinaryOp::Sub:
      return f(std::integral_constant<BinaryOp, BinaryOp::Sub>{});
    case BinaryOp::Mul:
      return f(std::integral_constant<BinaryOp, BinaryOp::Mul>{});
    default:
      return f(std::integral_constant<BinaryOp, BinaryOp::Div>{});
  }
}

/// Whether the second op of a pair o = m op2 c, or c op2 m, needs its own
/// loop for m on the right: add and mul commute, so only sub and div do.
constexpr bool order_matters(BinaryOp op2) {
  return op2 == BinaryOp::Sub || op2 == BinaryOp::Div;
}

}  // namespace tenferro::cpu
