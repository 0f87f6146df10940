// A second backend plugs in without a line of the runtime or the AD layers
// knowing it: the test-only ReferenceBackend (its own memory, a few kernels)
// registers as an engine, enters its own sessions, runs the direct, eager
// and traced tiers, einsum and the optimisers, and every operation whose
// kernel it lacks is Unsupported naming that kernel. Its tensors cannot be
// read on the host (placement reference:0), so every result here was
// computed without a host copy.

#include <gtest/gtest.h>

#include "conformance/reference_backend.hpp"
#include "tenferro/tenferro.hpp"
#include "test_util.hpp"

using namespace tenferro;
using tftest::ReferenceBackend;

namespace {

Tensor host_vec(std::vector<double> v) {
  return Tensor::from_col_major({static_cast<std::int64_t>(v.size())}, v);
}

std::vector<double> values(const Tensor& t) {
  return tftest::to_host(t).to_vector<double>();
}

}  // namespace

TEST(SecondBackend, RegistersAsTheEngineItNamesAndEntersItsOwnSessions) {
  auto backend = std::make_shared<ReferenceBackend>();
  EXPECT_EQ(backend->engine_id().str(), "tenferro.reference.v1");
  auto runtime = Runtime::builder().backend(backend).build();
  EXPECT_EQ(runtime->snapshot()->selected_engine().str(), "tenferro.reference.v1");
  EXPECT_EQ(&runtime->backend(), backend.get());
  {
    auto session = runtime->enter_session();
    EXPECT_EQ(session->engine().str(), "tenferro.reference.v1");
    EXPECT_EQ(&session->backend(), backend.get());
  }
  // Ingress: host tensors are not the engine's; its own are.
  const Tensor host = host_vec({1, 2});
  const Tensor own = tftest::to_reference(host, *backend);
  auto add = elementwise_primitive(BinaryOp::Add);
  EXPECT_TF_ERROR(runtime->apply(add, {host, host}), ErrorKind::NoInputIngress);
  EXPECT_EQ(values(runtime->apply(add, {own, own})[0]), (std::vector<double>{2, 4}));
  // The host accessors refuse its memory: results come back by transfer only.
  EXPECT_TF_ERROR(own.to_vector<double>(), ErrorKind::Unsupported);
}

TEST(SecondBackend, RunsTheThreeTiers) {
  auto backend = std::make_shared<ReferenceBackend>();
  const Tensor a = tftest::to_reference(host_vec({1, 2, 3}), *backend);
  const Tensor b = tftest::to_reference(host_vec({4, 5, 6}), *backend);
  // Direct.
  EXPECT_EQ(values(add(a, b, *backend)), (std::vector<double>{5, 7, 9}));
  EXPECT_EQ(values(sum(mul(a, b, *backend), *backend)), (std::vector<double>{32}));
  EXPECT_EQ(values(flip(a, std::vector<std::int64_t>{0}, *backend)),
            (std::vector<double>{3, 2, 1}));
  // Eager, with gradients.
  auto rt = EagerRuntime::make(backend);
  EagerTensor x = rt->variable(a);
  EagerTensor loss = sum(x * x * rt->tensor(b));
  loss.backward();
  EXPECT_EQ(values(x.grad().value()), (std::vector<double>{8, 20, 36}));  // 2 x b
  // Traced: compiled once, prepared on the runtime over the backend.
  auto t = placeholder(f64, {3});
  Program p = compile({sum(exp(t) * t), grad(sum(exp(t) * t), t)}, {t});
  const Tensor in[1] = {a};
  auto prepared = prepare(*rt->runtime(), p, InputSignature::of(in));
  EXPECT_EQ(prepared.fused_group_count(), 0u);  // no fused passes on this backend
  auto outs = run(*rt->runtime(), prepared, in);
  const std::vector<double> v = values(outs[0]), g = values(outs[1]);
  double want = 0;
  for (double e : {1.0, 2.0, 3.0}) want += std::exp(e) * e;
  EXPECT_NEAR(v[0], want, 1e-12);
  for (std::size_t i = 0; i < 3; ++i) {
    const double e = static_cast<double>(i + 1);
    EXPECT_NEAR(g[i], std::exp(e) * (e + 1), 1e-12);
  }
  EXPECT_GT(backend->kernels_run(), 0u);
}

TEST(SecondBackend, FamiliesRunWhereTheirKernelsCan) {
  auto backend = std::make_shared<ReferenceBackend>();
  const Tensor m = tftest::to_reference(
      Tensor::from_col_major({2, 2}, std::vector<double>{1, 2, 3, 4}), *backend);
  // einsum calls only Backend kernels (gemm, copy, reduce): it runs here.
  const Tensor c = einsum("ij,jk->ik", {m, m}, *backend);
  EXPECT_EQ(values(c), (std::vector<double>{7, 10, 15, 22}));
  auto rt = EagerRuntime::make(backend);
  EXPECT_EQ(values(einsum("ii->", {rt->tensor(m)}).value()), (std::vector<double>{5}));
  // LAPACK and FFTW read host memory: Unsupported, saying so.
  try {
    (void)linalg::det(m, *backend);
    ADD_FAILURE() << "det ran on the reference backend";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported) << e.what();
    EXPECT_NE(std::string(e.what()).find("LAPACK"), std::string::npos) << e.what();
  }
  EXPECT_TF_ERROR(fft::fft(rt->tensor(m)), ErrorKind::Unsupported);
  // A kernel it lacks is Unsupported naming it.
  try {
    (void)cumsum(m, 0, *backend);
    ADD_FAILURE() << "cumsum ran on the reference backend";
  } catch (const Error& e) {
    EXPECT_TRUE(tftest::reference_lacks_kernel(e)) << e.what();
    EXPECT_NE(std::string(e.what()).find("Backend::cumulate"), std::string::npos) << e.what();
  }
}

TEST(SecondBackend, OptimisersComputeOnTheParametersBackend) {
  // The same Adam and L-BFGS runs on the CPU and on the reference backend,
  // whose parameters cannot be read on the host: equal results mean the
  // optimisers computed with tensor ops on the parameters' own backend.
  auto run = [](const std::shared_ptr<Backend>& backend, bool on_reference) {
    auto rt = EagerRuntime::make(backend);
    auto upload = [&](const Tensor& t) {
      return on_reference ? tftest::to_reference(t, static_cast<ReferenceBackend&>(*backend)) : t;
    };
    const Tensor target = upload(host_vec({1.0, -2.0, 0.5}));
    EagerTensor w = rt->variable(upload(host_vec({0.0, 0.0, 0.0})));
    optim::Adam adam({w}, {.lr = 0.1});
    for (int i = 0; i < 20; ++i) {
      adam.zero_grad();
      sum(square(w - rt->tensor(target))).backward();
      adam.step();
    }
    std::vector<double> out = values(w.value());
    EagerTensor v = rt->variable(upload(host_vec({0.0, 0.0, 0.0})));
    optim::Lbfgs lbfgs({v}, {.max_iter = 50});
    lbfgs.step([&] { return sum(square(v - rt->tensor(target))); });
    for (double e : values(v.value())) out.push_back(e);
    return out;
  };
  const std::vector<double> cpu = run(std::make_shared<CpuBackend>(CpuBackendOptions{1}), false);
  const std::vector<double> ref = run(std::make_shared<ReferenceBackend>(), true);
  ASSERT_EQ(cpu.size(), ref.size());
  for (std::size_t i = 0; i < cpu.size(); ++i) EXPECT_NEAR(ref[i], cpu[i], 1e-12) << i;
  // L-BFGS reached the minimum.
  EXPECT_NEAR(ref[3], 1.0, 1e-6);
  EXPECT_NEAR(ref[4], -2.0, 1e-6);
}
