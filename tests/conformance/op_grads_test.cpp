// Finite-difference and jvp/vjp adjoint checks of every core op's rules,
// through the eager tier, in f64 and c128 (where the op supports complex),
// on every backend of the conformance suite (check_gradients runs the op on
// the runtime's backend and its own arithmetic on host copies).

#include "conformance/backends.hpp"
#include "tenferro/ad/eager_ops.hpp"
#include "tenferro/ad/grad_check.hpp"
#include "test_util.hpp"

using namespace tenferro;
using tftest::CaseCount;
using tftest::ConformanceBackend;
using tftest::random_input;
using Case = tftest::GradCase;

namespace {

// A host tensor on the runtime of `like` (in its backend's memory).
EagerTensor on_runtime(const EagerTensor& like, const Tensor& host) {
  return like.runtime()->tensor(from_host(host, like.runtime()->backend()));
}

EagerTensor uniform_input(const EagerRuntimePtr& rt, const Case& c, DType dt, Generator& gen) {
  return rt->tensor(from_host(random_input(c, dt, gen), rt->backend()));
}

void check_case(const EagerRuntimePtr& rt, const Case& c, DType dt) {
  Generator gen(42);
  std::vector<EagerTensor> in;
  for (int i = 0; i < c.inputs; ++i) in.push_back(uniform_input(rt, c, dt, gen));
  GradCheckOptions opt;
  opt.eps = 1e-6;
  opt.rtol = 1e-5;
  auto r = check_gradients(c.f, in, opt);
  EXPECT_TRUE(r.ok) << c.name << " (" << name(dt) << "): " << r.detail;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
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

}  // namespace

class EagerOpGrads : public testing::TestWithParam<ConformanceBackend> {};

// Every case on the backend; a partial backend skips the cases whose kernels
// it lacks, a complete one runs them all.
void run_all(const ConformanceBackend& b, DType dt) {
  const auto rt = EagerRuntime::make(b.make());
  CaseCount count;
  std::size_t cases_of_dtype = 0;
  for (const auto& c : cases()) {
    if (is_complex(dt) && !c.complex_ok) continue;
    ++cases_of_dtype;
    tftest::run_case(b, std::string(c.name) + " " + std::string(name(dt)), count,
                     [&] { check_case(rt, c, dt); });
  }
  EXPECT_EQ(static_cast<std::size_t>(count.ran + count.lacked_kernel), cases_of_dtype);
  EXPECT_GT(count.ran, 0) << b.name;
  std::printf("%s %s: %d cases checked, %d skipped for a missing kernel\n", b.name.c_str(),
              std::string(name(dt)).c_str(), count.ran, count.lacked_kernel);
  if (b.name == "cpu") {
    EXPECT_EQ(count.lacked_kernel, 0);
  }
}

TEST_P(EagerOpGrads, RealF64) {
  run_all(GetParam(), DType::F64);
}

TEST_P(EagerOpGrads, ComplexC128) {
  run_all(GetParam(), DType::C128);
}

INSTANTIATE_TEST_SUITE_P(Backends, EagerOpGrads, testing::ValuesIn(tftest::conformance_backends()),
                         tftest::backend_name);

TEST(EagerOpGradsCpu, ConvertBetweenRealAndComplex) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{1});
  Generator gen(1);
  std::vector<EagerTensor> in{rt->tensor(randn({4}, f64, gen))};
  auto r = check_gradients([](auto z) { return exp(convert(z[0], c128)) * z[0]; }, in);
  EXPECT_TRUE(r.ok) << r.detail;
}

TEST(EagerOpGradsCpu, NonDifferentiableOpsGiveNoDerivative) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{1});
  auto x = rt->tensor(Tensor::from_col_major({3}, std::vector<double>{0.2, 1.7, -2.5}));
  for (auto op : {UnaryOp::Floor, UnaryOp::Ceil, UnaryOp::Round, UnaryOp::Trunc, UnaryOp::Sign}) {
    auto g = try_grad([&](const EagerTensor& z) { return sum(unary(op, z)); }, x);
    EXPECT_TRUE(!g || max_abs_diff(g->value(), zeros({3})) == 0.0) << name(op);
  }
}

TEST(EagerOpGradsCpu, TiesSplitEvenly) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{1});
  auto x = rt->tensor(Tensor::from_col_major({3}, std::vector<double>{2, 2, 1}));
  auto g = grad([](const EagerTensor& z) { return max(z); }, x);
  EXPECT_EQ(g.value().to_vector<double>(), (std::vector<double>{0.5, 0.5, 0}));
  auto a = rt->tensor(Tensor::from_col_major({1}, std::vector<double>{3}));
  auto ga = grad([](const EagerTensor& z) { return sum(maximum(z, z)); }, a);
  EXPECT_EQ(ga.value().to_vector<double>(), (std::vector<double>{1}));  // both halves reach z
  auto gb = grad([&](const EagerTensor& z) { return sum(maximum(z, a)); }, a);
  EXPECT_EQ(gb.value().to_vector<double>(), (std::vector<double>{0.5}));  // tie with a constant
}
