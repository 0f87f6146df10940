#include "conformance/backends.hpp"

#include "conformance/reference_backend.hpp"

namespace tftest {

using namespace tenferro;

const std::vector<ConformanceBackend>& conformance_backends() {
  static const std::vector<ConformanceBackend> backends = {
      {"cpu", [] { return std::make_shared<CpuBackend>(CpuBackendOptions{.num_threads = 2}); },
       [](const Tensor& t, Backend&) { return t; }, [](const Error&) { return false; }},
      {"reference", [] { return std::make_shared<ReferenceBackend>(); },
       [](const Tensor& t, Backend& b) {
         return to_reference(t, static_cast<ReferenceBackend&>(b));
       },
       reference_lacks_kernel},
  };
  return backends;
}

Tensor download(const Tensor& t) {
  return to_host(t);
}

std::string backend_name(const testing::TestParamInfo<ConformanceBackend>& info) {
  return info.param.name;
}

}  // namespace tftest
