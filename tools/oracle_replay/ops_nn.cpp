// Activations and the composite math helpers of tenferro/ad/composite.hpp.

#include <map>

#include "ops.hpp"
#include "tenferro/ad/composite.hpp"

namespace replay {

using namespace tenferro;

template <class T>
OpFn<T> build_nn(const Case& c) {
  const std::string& op = c.op;
  using U = T (*)(const T&);
  static const std::map<std::string, U, std::less<>> unary = {
      {"nn_functional_relu", [](const T& x) { return relu(x); }},
      {"nn_functional_relu6", [](const T& x) { return relu6(x); }},
      {"nn_functional_selu", [](const T& x) { return selu(x); }},
      {"nn_functional_silu", [](const T& x) { return silu(x); }},
      {"nn_functional_mish", [](const T& x) { return mish(x); }},
      {"nn_functional_hardsigmoid", [](const T& x) { return hardsigmoid(x); }},
      {"nn_functional_softsign", [](const T& x) { return softsign(x); }},
      {"nn_functional_tanhshrink", [](const T& x) { return tanhshrink(x); }},
      {"nn_functional_logsigmoid", [](const T& x) { return logsigmoid(x); }},
      {"positive", [](const T& x) { return positive(x); }},
      {"deg2rad", [](const T& x) { return deg2rad(x); }},
      {"rad2deg", [](const T& x) { return rad2deg(x); }},
  };
  if (auto it = unary.find(op); it != unary.end()) return unary_op<T>(it->second);

  // Positional indices follow torch.nn.functional's signatures.
  if (op == "nn_functional_elu") {
    const double alpha = arg_double(c, "alpha", 0, 1.0);
    return unary_op<T>([alpha](const T& x) { return elu(x, alpha); });
  }
  if (op == "nn_functional_celu") {
    const double alpha = arg_double(c, "alpha", 0, 1.0);
    return unary_op<T>([alpha](const T& x) { return celu(x, alpha); });
  }
  if (op == "nn_functional_softplus") {
    const double beta = arg_double(c, "beta", 0, 1.0);
    const double threshold = arg_double(c, "threshold", 1, 20.0);
    return unary_op<T>([beta, threshold](const T& x) { return softplus(x, beta, threshold); });
  }
  if (op == "nn_functional_hardtanh") {
    const double lo = arg_double(c, "min_val", 0, -1.0);
    const double hi = arg_double(c, "max_val", 1, 1.0);
    return unary_op<T>([lo, hi](const T& x) { return hardtanh(x, lo, hi); });
  }
  if (op == "nn_functional_hardshrink") {
    const double lambd = arg_double(c, "lambd", 0, 0.5);
    return unary_op<T>([lambd](const T& x) { return hardshrink(x, lambd); });
  }
  if (op == "nn_functional_softshrink") {
    const double lambd = arg_double(c, "lambd", 0, 0.5);
    return unary_op<T>([lambd](const T& x) { return softshrink(x, lambd); });
  }
  if (op == "nn_functional_threshold") {
    const Json* th = arg(c, "threshold", 0);
    const Json* value = arg(c, "value", 1);
    if (!th || !value) throw std::runtime_error("threshold case without threshold and value");
    const double t = json_number(*th), v = json_number(*value);
    return unary_op<T>([t, v](const T& x) { return threshold(x, t, v); });
  }
  if (op == "nn_functional_rrelu") {  // evaluation mode (training is an exception)
    const double lower = arg_double(c, "lower", 0, 1.0 / 8);
    const double upper = arg_double(c, "upper", 1, 1.0 / 3);
    return unary_op<T>([lower, upper](const T& x) { return rrelu(x, lower, upper); });
  }
  if (op == "nn_functional_prelu") {
    // PyTorch's weight has one entry, or one per channel (row-major dim 1,
    // our axis rank-2); the output always has the input's shape.
    return [](std::span<const T> in) {
      const T& x = in[0];
      const Shape ws = concrete_shape(in[1]);
      std::int64_t n = 1;
      for (auto e : ws) n *= e;
      Shape target;
      if (n != 1 && x.rank() >= 2) {
        target = Shape(static_cast<std::size_t>(x.rank()), 1);
        target[static_cast<std::size_t>(x.rank() - 2)] = n;
      }
      return prelu(x, reshape_to(in[1], target));
    };
  }
  if (op == "nan_to_num") {
    const double nan = arg_double(c, "nan", 0, 0.0);
    std::optional<double> posinf, neginf;
    if (const Json* v = arg(c, "posinf", 1)) posinf = json_number(*v);
    if (const Json* v = arg(c, "neginf", 2)) neginf = json_number(*v);
    return unary_op<T>(
        [nan, posinf, neginf](const T& x) { return nan_to_num(x, nan, posinf, neginf); });
  }
  if (op.rfind("round_decimals", 0) == 0) {
    const auto from_name = name_suffix_int(op, "round_decimals_");
    const auto d =
        static_cast<std::int64_t>(arg_double(c, "decimals", -1, from_name ? *from_name : 0));
    return unary_op<T>([d](const T& x) { return round(x, d); });
  }
  if (op == "float_power") {
    return binary_op<T>([](const T& a, const T& b) { return float_power(a, b); });
  }
  if (op == "fmax") return binary_op<T>([](const T& a, const T& b) { return fmax(a, b); });
  if (op == "fmin") return binary_op<T>([](const T& a, const T& b) { return fmin(a, b); });
  if (op == "clamp_min")
    return binary_op<T>([](const T& a, const T& b) { return clamp_min(a, b); });
  if (op == "clamp_max")
    return binary_op<T>([](const T& a, const T& b) { return clamp_max(a, b); });
  if (op == "ldexp") return binary_op<T>([](const T& a, const T& b) { return ldexp(a, b); });
  if (op == "complex") return binary_op<T>([](const T& a, const T& b) { return complex(a, b); });
  if (op == "polar") return binary_op<T>([](const T& a, const T& b) { return polar(a, b); });
  return {};
}

template OpFn<EagerTensor> build_nn<EagerTensor>(const Case&);
template OpFn<TracedTensor> build_nn<TracedTensor>(const Case&);

}  // namespace replay
