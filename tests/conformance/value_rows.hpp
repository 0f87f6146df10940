#pragma once
// The value rows of the conformance suite: one row per elementwise op of
// backend/op_list.hpp (inputs and known results), shared by
// conformance/op_values_test.cpp, which checks every descriptor has one, and
// the distributed suite (distributed/conformance_mpitest.cpp), which runs
// each descriptor sharded on the rows' inputs.

#include <cmath>
#include <complex>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <numbers>
#include <string>
#include <vector>

#include "tenferro/tenferro.hpp"

namespace tftest {

using tenferro::c128_t;

namespace rows_detail {
constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();
constexpr double pi = std::numbers::pi;
constexpr double e = std::numbers::e;

}  // namespace rows_detail

/// Inputs of one op (b empty for a unary op) and the results they give.
struct Row {
  std::vector<double> a, b;  // b empty for unary ops
  std::vector<c128_t> want;
};

inline std::vector<c128_t> reals(std::initializer_list<double> v) {
  return {v.begin(), v.end()};
}

// clang-format off
inline const std::map<std::string, Row, std::less<>>& unary_rows() {
  using namespace rows_detail;
  static const std::map<std::string, Row, std::less<>> rows = {
      {"abs", {{-2, 0, 3}, {}, reals({2, 0, 3})}},
      {"neg", {{-2, 0, 3}, {}, reals({2, 0, -3})}},
      {"conj", {{1.5, -2}, {}, reals({1.5, -2})}},
      {"exp", {{0, 1}, {}, reals({1, e})}},
      {"exp2", {{3, -1}, {}, reals({8, 0.5})}},
      {"expm1", {{0, 1e-10}, {}, reals({0, 1.00000000005e-10})}},
      {"log", {{1, e}, {}, reals({0, 1})}},
      {"log2", {{8, 0.5}, {}, reals({3, -1})}},
      {"log10", {{1000, 0.1}, {}, reals({3, -1})}},
      {"log1p", {{0, e - 1}, {}, reals({0, 1})}},
      {"sqrt", {{4, 2}, {}, reals({2, std::numbers::sqrt2})}},
      {"rsqrt", {{4, 0.25}, {}, reals({0.5, 2})}},
      {"square", {{-3, 1.5}, {}, reals({9, 2.25})}},
      {"reciprocal", {{4, -0.5}, {}, reals({0.25, -2})}},
      {"sin", {{0, pi / 2}, {}, reals({0, 1})}},
      {"cos", {{0, pi}, {}, reals({1, -1})}},
      {"tan", {{0, pi / 4}, {}, reals({0, 1})}},
      {"asin", {{0, 1}, {}, reals({0, pi / 2})}},
      {"acos", {{1, 0}, {}, reals({0, pi / 2})}},
      {"atan", {{0, 1}, {}, reals({0, pi / 4})}},
      {"sinh", {{0, 1}, {}, reals({0, 1.1752011936438014})}},
      {"cosh", {{0, 1}, {}, reals({1, 1.5430806348152437})}},
      {"tanh", {{0, 1}, {}, reals({0, 0.7615941559557649})}},
      {"asinh", {{0, 1}, {}, reals({0, 0.881373587019543})}},
      {"acosh", {{1, 2}, {}, reals({0, 1.3169578969248166})}},
      {"atanh", {{0, 0.5}, {}, reals({0, 0.5493061443340549})}},
      {"sigmoid", {{0, 2}, {}, reals({0.5, 0.8807970779778823})}},
      {"erf", {{0, 1}, {}, reals({0, 0.8427007929497149})}},
      {"erfc", {{0, 1}, {}, reals({1, 0.15729920705028513})}},
      {"sign", {{-2, 0, 3}, {}, reals({-1, 0, 1})}},
      {"sgn", {{-2, 0, 3}, {}, reals({-1, 0, 1})}},
      {"floor", {{-1.5, 2.5}, {}, reals({-2, 2})}},
      {"ceil", {{-1.5, 2.5}, {}, reals({-1, 3})}},
      {"round", {{0.5, 1.5, 2.5, -0.5}, {}, reals({0, 2, 2, 0})}},
      {"trunc", {{-1.7, 2.7}, {}, reals({-1, 2})}},
      {"real", {{2.5}, {}, reals({2.5})}},
      {"imag", {{2.5}, {}, reals({0})}},
      {"angle", {{-1, 2}, {}, reals({pi, 0})}},
      {"isfinite", {{1, inf, nan}, {}, reals({1, 0, 0})}},
      {"isnan", {{1, inf, nan}, {}, reals({0, 0, 1})}},
      {"logical_not", {{0, 2}, {}, reals({1, 0})}},
      {"erfinv", {{0, 0.5}, {}, reals({0, 0.4769362762044699})}},
      {"lgamma", {{1, 0.5}, {}, reals({0, 0.5723649429247001})}},
      {"digamma", {{1, 0.5}, {}, reals({-0.5772156649015329, -1.9635100260214235})}},
      {"i0", {{0, 1}, {}, reals({1, 1.2660658777520082})}},
      {"i0e", {{0, 1}, {}, reals({1, 0.46575960759364043})}},
      {"i1", {{0, 1}, {}, reals({0, 0.5651591039924851})}},
      {"i1e", {{0, 1}, {}, reals({0, 0.2079104153497085})}},
      {"erfcx", {{0, 1}, {}, reals({1, 0.42758357615580705})}},
      {"ndtr", {{0, 1.959963984540054}, {}, reals({0.5, 0.975})}},
      {"ndtri", {{0.5, 0.975}, {}, reals({0, 1.959963984540054})}},
      {"log_ndtr", {{0}, {}, reals({-std::numbers::ln2})}},
      {"entr", {{1, 0.5, 0}, {}, reals({0, 0.5 * std::numbers::ln2, 0})}},
      {"logit", {{0.5, 0.75}, {}, reals({0, 1.0986122886681098})}},
      {"frac", {{1.5, -2.25}, {}, reals({0.5, -0.25})}},
      {"sinc", {{0, 0.5}, {}, reals({1, 2 / pi})}},
      {"frexp_mantissa", {{3, 0.1}, {}, reals({0.75, 0.8})}},
      {"frexp_exponent", {{3, 0.1}, {}, reals({2, -3})}},
  };
  return rows;
}

inline const std::map<std::string, Row, std::less<>>& binary_rows() {
  using namespace rows_detail;
  static const std::map<std::string, Row, std::less<>> rows = {
      {"add", {{1, 2}, {3, 4}, reals({4, 6})}},
      {"sub", {{1, 2}, {3, 5}, reals({-2, -3})}},
      {"mul", {{2, -1}, {3, 4}, reals({6, -4})}},
      {"div", {{1, 3}, {4, -2}, reals({0.25, -1.5})}},
      {"pow", {{2, 9}, {3, 0.5}, reals({8, 3})}},
      {"maximum", {{1, 5}, {3, 2}, reals({3, 5})}},
      {"minimum", {{1, 5}, {3, 2}, reals({1, 2})}},
      {"atan2", {{1, 1}, {1, -1}, reals({pi / 4, 3 * pi / 4})}},
      {"hypot", {{3, 5}, {4, 12}, reals({5, 13})}},
      {"copysign", {{2, -3}, {-1, 1}, reals({-2, 3})}},
      {"fmod", {{5.5, -5.5}, {2, 2}, reals({1.5, -1.5})}},
      {"remainder", {{5.5, -5.5}, {2, 2}, reals({1.5, 0.5})}},
      {"eq", {{1, 2}, {1, 3}, reals({1, 0})}},
      {"ne", {{1, 2}, {1, 3}, reals({0, 1})}},
      {"lt", {{1, 3}, {2, 2}, reals({1, 0})}},
      {"le", {{2, 3}, {2, 2}, reals({1, 0})}},
      {"gt", {{1, 3}, {2, 2}, reals({0, 1})}},
      {"ge", {{2, 1}, {2, 2}, reals({1, 0})}},
      {"logical_and", {{0, 2, 3}, {1, 0, 5}, reals({0, 0, 1})}},
      {"logical_or", {{0, 2, 0}, {0, 0, 5}, reals({0, 1, 1})}},
      {"xlogy", {{0, 2}, {0, e}, reals({0, 2})}},
      {"xlog1py", {{0, 3}, {5, e - 1}, reals({0, 3})}},
      {"logaddexp", {{0, std::log(3.0)}, {0, std::log(5.0)}, reals({std::numbers::ln2, std::log(8.0)})}},
      {"complex", {{1, 2}, {3, -4}, {c128_t(1, 3), c128_t(2, -4)}}},
  };
  return rows;
}
// clang-format on

}  // namespace tftest
