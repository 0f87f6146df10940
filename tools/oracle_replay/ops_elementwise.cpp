// Arithmetic, exponential, trigonometric, rounding and complex-part ops that map
// onto the core elementwise primitives.

#include <cmath>
#include <map>

#include "ops.hpp"

namespace replay {

using namespace tenferro;

namespace {

template <class T>
using Un = std::function<T(const T&)>;

template <class T>
const std::map<std::string, Un<T>, std::less<>>& unary_table() {
  // Aliases only: an op under its own name (backend/op_list.hpp) replays
  // through the descriptor lookup of build_table.
  static const std::map<std::string, Un<T>, std::less<>> table = {
      {"conj_physical", [](const T& x) { return conj(x); }},
  };
  return table;
}

}  // namespace

template <class T>
OpFn<T> build_elementwise(const Case& c) {
  const std::string& op = c.op;
  if (auto it = unary_table<T>().find(op); it != unary_table<T>().end()) {
    return unary_op<T>(it->second);
  }
  const double alpha = arg_double(c, "alpha", -1, 1.0);
  // a.__rop__(b) is b op a: the oracle's first input is `self`.
  if (op == "add") return binary_op<T>([alpha](const T& a, const T& b) { return a + b * alpha; });
  if (op == "sub") return binary_op<T>([alpha](const T& a, const T& b) { return a - b * alpha; });
  if (op == "rsub") return binary_op<T>([alpha](const T& a, const T& b) { return b - a * alpha; });
  if (op == "__radd__") return binary_op<T>([](const T& a, const T& b) { return b + a; });
  if (op == "__rsub__") return binary_op<T>([](const T& a, const T& b) { return b - a; });
  if (op == "__rmul__") return binary_op<T>([](const T& a, const T& b) { return b * a; });
  if (op == "__rdiv__") return binary_op<T>([](const T& a, const T& b) { return b / a; });
  if (op == "__rpow__") return binary_op<T>([](const T& a, const T& b) { return pow(b, a); });
  if (op == "__rmod__") {
    return binary_op<T>([](const T& a, const T& b) { return binary(BinaryOp::Remainder, b, a); });
  }
  if (op == "mul") return binary_op<T>([](const T& a, const T& b) { return a * b; });
  if (op == "div_no_rounding_mode" || op == "true_divide") {
    return binary_op<T>([](const T& a, const T& b) { return a / b; });
  }
  if (op == "pow") return binary_op<T>([](const T& a, const T& b) { return pow(a, b); });
  if (op == "atan2") return binary_op<T>([](const T& a, const T& b) { return atan2(a, b); });
  if (op == "hypot") {
    return binary_op<T>([](const T& a, const T& b) { return binary(BinaryOp::Hypot, a, b); });
  }
  if (op == "copysign") {
    return binary_op<T>([](const T& a, const T& b) { return binary(BinaryOp::Copysign, a, b); });
  }
  if (op == "maximum" || op == "max_binary") {
    return binary_op<T>([](const T& a, const T& b) { return maximum(a, b); });
  }
  if (op == "minimum" || op == "min_binary") {
    return binary_op<T>([](const T& a, const T& b) { return minimum(a, b); });
  }
  return {};
}

template OpFn<EagerTensor> build_elementwise<EagerTensor>(const Case&);
template OpFn<TracedTensor> build_elementwise<TracedTensor>(const Case&);

}  // namespace replay
