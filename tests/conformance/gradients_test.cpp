// Values and gradients on every backend of the conformance suite: each op's
// value against the CPU's, and reverse mode through the eager tier against
// central finite differences computed on the same backend (each perturbed
// loss is evaluated there), for core ops, a few composites and einsum, in
// f64 and (where the op takes it) c128. The loss
// is L = Re sum(conj(w) f(x)) with a fixed random w, so the gradient is the
// vjp of w under the library's complex convention (grad z = dL/dRe z + i
// dL/dIm z).

#include <cmath>
#include <complex>
#include <functional>
#include <span>

#include "conformance/backends.hpp"
#include "conformance/grad_cases.hpp"
#include "tenferro/ad/composite.hpp"
#include "tenferro/einsum/einsum.hpp"

using namespace tenferro;
using tftest::CaseCount;
using tftest::ConformanceBackend;
using tftest::GradCase;
using tftest::random_input;

namespace {

// L = Re sum(conj(w) f(x)), on the backend.
EagerTensor loss(const GradCase& c, std::span<const EagerTensor> x, const EagerTensor& w) {
  const EagerTensor y = c.f(x);
  const EagerTensor prod = is_complex(y.dtype()) ? real(conj(w) * y) : w * y;
  return sum(prod);
}

class Gradients : public testing::TestWithParam<ConformanceBackend> {};

TEST_P(Gradients, ValuesMatchTheCpuAndReverseModeMatchesFiniteDifferences) {
  const ConformanceBackend& b = GetParam();
  const auto backend = b.make();
  const auto rt = EagerRuntime::make(backend);
  const auto cpu = EagerRuntime::make_cpu(CpuBackendOptions{1});
  CaseCount count;
  int compared = 0;
  for (const GradCase& c : tftest::gradient_cases()) {
    for (const DType dt : {DType::F64, DType::C128}) {
      if (is_complex(dt) && !c.complex_ok) continue;
      const std::string what = std::string(c.name) + " " + std::string(name(dt));
      tftest::run_case(b, what, count, [&] {
        Generator gen(7);
        std::vector<Tensor> host;
        std::vector<EagerTensor> vars;
        for (int i = 0; i < c.inputs; ++i) {
          host.push_back(random_input(c, dt, gen));
          vars.push_back(rt->variable(from_host(host.back(), *backend)));
        }
        // The value, against the CPU's on the same host inputs.
        const EagerTensor y = c.f(vars);
        std::vector<EagerTensor> on_cpu;
        for (const Tensor& h : host) on_cpu.push_back(cpu->tensor(h));
        EXPECT_TRUE(allclose(to_host(y.value(), *backend), c.f(on_cpu).value(), 1e-13, 1e-13))
            << b.name << ": " << what << " value";
        // w: random, shaped like f(x), in f(x)'s dtype.
        Tensor wr = rand(y.shape(), DType::F64, gen);
        const Tensor w_host =
            is_complex(y.dtype()) ? tenferro::complex(wr, rand(y.shape(), DType::F64, gen)) : wr;
        const EagerTensor w = rt->tensor(from_host(w_host, *backend));
        loss(c, vars, w).backward();

        const double eps = 1e-6;
        for (int i = 0; i < c.inputs; ++i) {
          const Tensor grad = to_host(vars[static_cast<std::size_t>(i)].grad().value(), *backend);
          const Tensor g_parts = grad.view_as_real().contiguous();
          const Tensor x_parts = host[static_cast<std::size_t>(i)].view_as_real().contiguous();
          const std::vector<double> g = g_parts.to_vector<double>();
          const std::vector<double> x0 = x_parts.to_vector<double>();
          for (std::size_t k = 0; k < x0.size(); ++k) {
            auto at = [&](double step) {
              std::vector<double> moved = x0;
              moved[k] += step;
              Tensor parts = Tensor::from_col_major(x_parts.shape(), moved);
              Tensor xi = is_complex(dt) ? tenferro::complex(parts.select(0, 0).contiguous(),
                                                             parts.select(0, 1).contiguous())
                                         : parts;
              std::vector<EagerTensor> xs;
              for (int j = 0; j < c.inputs; ++j)
                xs.push_back(j == i ? rt->tensor(from_host(xi, *backend))
                                    : vars[static_cast<std::size_t>(j)].detach());
              return to_host(loss(c, xs, w).value(), *backend).item<double>();
            };
            const double fd = (at(eps) - at(-eps)) / (2 * eps);
            EXPECT_NEAR(g[k], fd, 1e-5 * (1 + std::abs(fd)))
                << b.name << ": " << what << " input " << i << " component " << k;
            ++compared;
          }
        }
      });
    }
  }
  EXPECT_GT(count.ran, 0) << b.name;
  EXPECT_GT(compared, 0);
  if (b.name == "cpu") {
    EXPECT_EQ(count.lacked_kernel, 0);
  }
  std::printf("%s: %d gradient cases ran, %d skipped for a missing kernel, %d components\n",
              b.name.c_str(), count.ran, count.lacked_kernel, compared);
}

INSTANTIATE_TEST_SUITE_P(Backends, Gradients, testing::ValuesIn(tftest::conformance_backends()),
                         tftest::backend_name);

}  // namespace
