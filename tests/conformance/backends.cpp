#include "conformance/backends.hpp"

#include "conformance/reference_backend.hpp"

namespace tftest {

using namespace tenferro;

const std::vector<ConformanceBackend>& conformance_backends() {
  // One line per backend: a name, a factory, and which errors mean a
  // missing kernel (none for a complete backend).
  static const std::vector<ConformanceBackend> backends = {
      {"cpu", [] { return std::make_shared<CpuBackend>(CpuBackendOptions{.num_threads = 2}); },
       [](const Error&) { return false; }},
      {"reference", [] { return std::make_shared<ReferenceBackend>(); }, reference_lacks_kernel},
  };
  return backends;
}

Tensor random_input(const GradCase& c, DType dt, Generator& gen) {
  std::vector<double> v = rand(c.shape, DType::F64, gen).to_vector<double>();
  for (auto& e : v) e = c.lo + (c.hi - c.lo) * e;
  const Tensor re = Tensor::from_col_major(c.shape, v);
  if (!is_complex(dt)) return re;
  std::vector<double> w = rand(c.shape, DType::F64, gen).to_vector<double>();
  for (auto& e : w) e = 0.4 * e - 0.2;
  return tenferro::complex(re, Tensor::from_col_major(c.shape, w));
}

std::string backend_name(const testing::TestParamInfo<ConformanceBackend>& info) {
  return info.param.name;
}

}  // namespace tftest
