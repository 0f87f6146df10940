#pragma once
// The gradient cases of the conformance suite, shared by its tests and the
// distributed suite (distributed/conformance_mpitest.cpp), which runs the
// cases its ops can express sharded:
//   op_grad_cases()   every core op's rule, checked by finite differences
//                     and jvp/vjp adjointness (conformance/op_grads_test.cpp);
//   gradient_cases()  reverse mode against finite differences on each
//                     backend (conformance/gradients_test.cpp).

#include <cstdint>
#include <vector>

#include "conformance/backends.hpp"
#include "tenferro/ad/composite.hpp"
#include "tenferro/ad/eager_ops.hpp"
#include "tenferro/einsum/einsum.hpp"
#include "tenferro/tenferro.hpp"

namespace tftest {

// A host tensor on the runtime of `like` (in its backend's memory).
inline tenferro::EagerTensor on_runtime(const tenferro::EagerTensor& like,
                                        const tenferro::Tensor& host) {
  return like.runtime()->tensor(tenferro::from_host(host, like.runtime()->backend()));
}

inline const std::vector<GradCase>& op_grad_cases() {
  using namespace tenferro;
  static const std::vector<GradCase> all = {
      {"abs", [](auto z) { return abs(z[0]); }},
      {"neg", [](auto z) { return neg(z[0]); }},
      {"conj", [](auto z) { return conj(z[0]); }},
      {"exp", [](auto z) { return exp(z[0]); }},
      {"exp2", [](auto z) { return exp2(z[0]); }, 1, false},
      {"expm1", [](auto z) { return expm1(z[0]); }},
      {"log", [](auto z) { return log(z[0]); }},
      {"log2", [](auto z) { return log2(z[0]); }},
      {"log10", [](auto z) { return log10(z[0]); }},
      {"log1p", [](auto z) { return log1p(z[0]); }},
      {"sqrt", [](auto z) { return sqrt(z[0]); }},
      {"rsqrt", [](auto z) { return rsqrt(z[0]); }},
      {"square", [](auto z) { return square(z[0]); }},
      {"reciprocal", [](auto z) { return reciprocal(z[0]); }},
      {"sin", [](auto z) { return sin(z[0]); }},
      {"cos", [](auto z) { return cos(z[0]); }},
      {"tan", [](auto z) { return tan(z[0]); }},
      {"asin", [](auto z) { return asin(z[0]); }, 1, true, 0.1, 0.6},
      {"acos", [](auto z) { return acos(z[0]); }, 1, true, 0.1, 0.6},
      {"atan", [](auto z) { return atan(z[0]); }},
      {"sinh", [](auto z) { return sinh(z[0]); }},
      {"cosh", [](auto z) { return cosh(z[0]); }},
      {"tanh", [](auto z) { return tanh(z[0]); }},
      {"asinh", [](auto z) { return asinh(z[0]); }},
      {"acosh", [](auto z) { return acosh(z[0]); }, 1, true, 1.3, 2.0},
      {"atanh", [](auto z) { return atanh(z[0]); }, 1, true, 0.1, 0.6},
      {"sigmoid", [](auto z) { return sigmoid(z[0]); }},
      {"erf", [](auto z) { return erf(z[0]); }, 1, false},
      {"erfc", [](auto z) { return erfc(z[0]); }, 1, false},
      {"sgn", [](auto z) { return sgn(z[0]); }},
      {"real", [](auto z) { return real(z[0]); }},
      {"imag", [](auto z) { return imag(z[0]); }},
      {"angle", [](auto z) { return angle(z[0]); }},
      {"add", [](auto z) { return z[0] + z[1]; }, 2},
      {"sub", [](auto z) { return z[0] - z[1]; }, 2},
      {"mul", [](auto z) { return z[0] * z[1]; }, 2},
      {"div", [](auto z) { return z[0] / z[1]; }, 2},
      {"pow", [](auto z) { return pow(z[0], z[1]); }, 2},
      {"maximum", [](auto z) { return maximum(z[0], 2.0 * z[1]); }, 2, false},
      {"minimum", [](auto z) { return minimum(z[0], 2.0 * z[1]); }, 2, false},
      {"atan2", [](auto z) { return atan2(z[0], z[1]); }, 2, false},
      {"hypot", [](auto z) { return hypot(z[0], z[1]); }, 2, false},
      {"copysign", [](auto z) { return copysign(z[0], z[1] - 0.75); }, 2, false},
      {"fmod", [](auto z) { return fmod(3.0 * z[0], z[1]); }, 2, false},
      {"remainder", [](auto z) { return remainder(3.0 * z[0], z[1]); }, 2, false},
      {"broadcast_add", [](auto z) { return z[0] + sum(z[1], {0}, true); }, 2},
      {"where", [](auto z) { return where(gt(real(z[0]), real(z[1])), z[0], z[1] * z[1]); }, 2},
      {"clamp", [](auto z) { return clamp(z[0], Scalar(0.5), Scalar(1.0)); }, 1, false},
      {"sum", [](auto z) { return sum(z[0], {1}); }},
      {"sum_keepdim", [](auto z) { return sum(z[0], {0}, true) * z[0]; }},
      {"prod", [](auto z) { return prod(z[0], {0}); }},
      {"mean",
       [](auto z) {
         return mean(z[0], {0, 1});
       }},
      {"max", [](auto z) { return max(z[0], {1}); }, 1, false},
      {"min", [](auto z) { return min(z[0]); }, 1, false},
      {"logsumexp", [](auto z) { return logsumexp(z[0], {0}); }, 1, false},
      {"var",
       [](auto z) {
         const std::int64_t ax[1] = {0};
         return var(z[0], ax);
       }},
      {"std",
       [](auto z) {
         const std::int64_t ax[1] = {1};
         return std_dev(z[0], ax, 0.0, true);
       }},
      {"matmul", [](auto z) { return matmul(z[0], transpose(z[1])); }, 2},
      {"dot_general",
       [](auto z) {
         DotDims d;
         d.lhs_contracting = {0};
         d.rhs_contracting = {0};
         return dot_general(z[0], z[1], d);
       },
       2},
      {"permute",
       [](auto z) {
         const std::int64_t p[2] = {1, 0};
         return permute(z[0], p) * transpose(z[0]);
       }},
      {"reshape",
       [](auto z) {
         const std::int64_t s[1] = {6};
         return reshape(z[0], s);
       }},
      {"broadcast_in_dim",
       [](auto z) {
         const std::int64_t s[3] = {3, 4, 2}, d[2] = {0, 2};
         return broadcast_in_dim(z[0], s, d);
       }},
      {"slice",
       [](auto z) {
         const std::int64_t a[2] = {1, 0}, b[2] = {3, 2}, st[2] = {1, 1};
         return slice(z[0], a, b, st);
       }},
      {"pad",
       [](auto z) {
         const std::int64_t lo[2] = {1, 0}, hi[2] = {0, 2};
         return pad(z[0], lo, hi, 0.0);
       }},
      {"concatenate",
       [](auto z) {
         std::vector<EagerTensor> p{z[0], z[1]};
         return concatenate(p, 1);
       },
       2},
      {"stack",
       [](auto z) {
         std::vector<EagerTensor> p{z[0], z[1]};
         return stack(p, 0);
       },
       2},
      {"reverse",
       [](auto z) {
         const std::int64_t a[1] = {0};
         return reverse(z[0], a);
       }},
      {"diagonal", [](auto z) { return diagonal(z[0], 0); }},
      {"diag_embed", [](auto z) { return diag_embed(z[0], 1); }},
      {"tril", [](auto z) { return tril(matmul(z[0], transpose(z[0])), 0); }},
      {"triu", [](auto z) { return triu(z[0], 1); }},
      {"index_select",
       [](auto z) {
         return index_select(
             z[0], 0,
             on_runtime(z[0], Tensor::from_col_major({3}, std::vector<std::int64_t>{2, 0, 2})));
       }},
      {"take_along_axis",
       [](auto z) {
         auto idx = on_runtime(
             z[0], Tensor::from_col_major({3, 2}, std::vector<std::int64_t>{1, 0, 0, 0, 1, 1}));
         return take_along_axis(z[0], idx, 1);
       }},
      {"scatter_add",
       [](auto z) {
         auto idx = on_runtime(
             z[0], Tensor::from_col_major({3, 2}, std::vector<std::int64_t>{0, 2, 0, 1, 1, 2}));
         return scatter_add(z[0], 0, idx, z[1]);
       },
       2},
  };
  return all;
}

inline const std::vector<GradCase>& gradient_cases() {
  using namespace tenferro;
  static const std::vector<GradCase> all = {
      {"neg", [](auto z) { return neg(z[0]); }},
      {"exp", [](auto z) { return exp(z[0]); }},
      {"log", [](auto z) { return log(z[0]); }},
      {"sqrt", [](auto z) { return sqrt(z[0]); }},
      {"sin", [](auto z) { return sin(z[0]); }},
      {"cos", [](auto z) { return cos(z[0]); }},
      {"tanh", [](auto z) { return tanh(z[0]); }},
      {"square", [](auto z) { return square(z[0]); }},
      {"abs", [](auto z) { return abs(z[0]); }},
      {"conj", [](auto z) { return conj(z[0]); }},
      {"real", [](auto z) { return real(z[0]); }},
      {"add", [](auto z) { return z[0] + z[1]; }, 2},
      {"sub", [](auto z) { return z[0] - z[1]; }, 2},
      {"mul", [](auto z) { return z[0] * z[1]; }, 2},
      {"div", [](auto z) { return z[0] / z[1]; }, 2},
      {"maximum", [](auto z) { return maximum(z[0], z[1] + 0.05); }, 2, false},
      {"broadcast_mul", [](auto z) { return z[0] * sum(z[1], {0}, true); }, 2},
      {"where", [](auto z) { return where(gt(z[0], scalar_like(z[0], 0.7)), z[0] * z[1], z[1]); },
       2, false},
      {"sum", [](auto z) { return sum(z[0], {0}); }},
      {"mean", [](auto z) { return mean(z[0]); }},
      {"max", [](auto z) { return max(z[0], {1}); }, 1, false},
      {"permute",
       [](auto z) {
         return permute(z[0], {1, 0}) * 2.0;
       }},
      {"reshape",
       [](auto z) {
         return reshape(z[0], {2, 3}) * 2.0;
       }},
      {"slice",
       [](auto z) {
         return slice(z[0], {1, 0}, {3, 2});
       }},
      {"pad",
       [](auto z) {
         return pad(z[0], {1, 0}, {0, 2}, Scalar(0.5));
       }},
      {"concatenate",
       [](auto z) {
         return concatenate({z[0], z[1] * 3.0}, 1);
       },
       2},
      {"reverse", [](auto z) { return flip(z[0], {0}); }},
      {"tile",
       [](auto z) {
         return tile(z[0], Shape{2, 3});
       }},
      {"diagonal", [](auto z) { return diagonal(z[0]); }, 1, true, 0.3, 1.2, {3, 3}},
      {"matmul", [](auto z) { return matmul(z[0], z[1]); }, 2, true, 0.3, 1.2, {2, 2}},
      {"dot_general",
       [](auto z) {
         return dot_general(z[0], z[1], DotDims{{0}, {0}, {}, {}});
       },
       2},
      {"einsum",
       [](auto z) {
         return einsum("ij,kj->ik", {z[0], z[1]});
       },
       2},
      {"softplus", [](auto z) { return softplus(z[0]); }, 1, false},
      {"kron", [](auto z) { return kron(z[0], z[1]); }, 2, true, 0.3, 1.2, {2, 1}},
  };
  return all;
}

}  // namespace tftest
