// Finite-difference and jvp/vjp adjoint checks of every core op's rules,
// through the eager tier, in f64 and c128 (where the op supports complex),
// on every backend of the conformance suite (check_gradients runs the op on
// the runtime's backend and its own arithmetic on host copies).

#include "conformance/backends.hpp"
#include "conformance/grad_cases.hpp"
#include "tenferro/ad/eager_ops.hpp"
#include "tenferro/ad/grad_check.hpp"
#include "test_util.hpp"

using namespace tenferro;
using tftest::CaseCount;
using tftest::ConformanceBackend;
using tftest::random_input;
using Case = tftest::GradCase;

namespace {

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

}  // namespace

class EagerOpGrads : public testing::TestWithParam<ConformanceBackend> {};

// Every case on the backend; a partial backend skips the cases whose kernels
// it lacks, a complete one runs them all.
void run_all(const ConformanceBackend& b, DType dt) {
  const auto rt = EagerRuntime::make(b.make());
  CaseCount count;
  std::size_t cases_of_dtype = 0;
  for (const auto& c : tftest::op_grad_cases()) {
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
