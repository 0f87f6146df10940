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

std::string backend_name(const testing::TestParamInfo<ConformanceBackend>& info) {
  return info.param.name;
}

}  // namespace tftest
