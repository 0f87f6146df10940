// Special functions (Boost.Math kernels in the core) and their parameterised
// forms.

#include <map>

#include "ops.hpp"
#include "tenferro/ad/composite.hpp"

namespace replay {

using namespace tenferro;

template <class T>
OpFn<T> build_special(const Case& c) {
  const std::string& op = c.op;
  using U = T (*)(const T&);
  static const std::map<std::string, U, std::less<>> unary = {
      {"frexp", [](const T& x) { return frexp(x).first; }},  // output_0: the mantissa
  };
  if (auto it = unary.find(op); it != unary.end()) return unary_op<T>(it->second);

  if (op == "logit") {  // logit(input, eps=None)
    if (const Json* e = arg(c, "eps", 0)) {
      const double eps = json_number(*e);
      return unary_op<T>([eps](const T& x) { return logit(x, eps); });
    }
    return unary_op<T>([](const T& x) { return logit(x); });
  }
  // The variant name carries OpInfo's default; the sample's positional
  // argument, when recorded, is the one PyTorch ran.
  if (op.find("polygamma") != std::string::npos) {
    const auto from_name = name_suffix_int(op, "_n_");
    const auto n = static_cast<std::int64_t>(arg_double(c, "n", 0, from_name ? *from_name : -1));
    if (n < 0) throw std::runtime_error("polygamma case without n");
    return unary_op<T>([n](const T& x) { return polygamma(n, x); });
  }
  if (op.rfind("mvlgamma", 0) == 0) {
    const auto from_name = name_suffix_int(op, "_p_");
    const auto p = static_cast<std::int64_t>(arg_double(c, "p", 0, from_name ? *from_name : -1));
    if (p < 1) throw std::runtime_error("mvlgamma case without p");
    return unary_op<T>([p](const T& x) { return mvlgamma(x, p); });
  }
  if (op == "xlogy") return binary_op<T>([](const T& a, const T& b) { return xlogy(a, b); });
  if (op == "special_xlog1py") {
    return binary_op<T>([](const T& a, const T& b) { return xlog1py(a, b); });
  }
  if (op == "logaddexp") {
    return binary_op<T>([](const T& a, const T& b) { return logaddexp(a, b); });
  }
  return {};
}

template OpFn<EagerTensor> build_special<EagerTensor>(const Case&);
template OpFn<TracedTensor> build_special<TracedTensor>(const Case&);

}  // namespace replay
