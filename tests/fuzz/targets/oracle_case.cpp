// The AD oracle case loader (tools/oracle_replay/case.cpp): one JSONL line
// into a replay::Case with its tensors. Its contract for bad input is
// std::runtime_error or nlohmann::json::exception (text that is not JSON,
// a field of the wrong type), or a tenferro::Error from building a tensor
// (data that do not fit the shape); anything else escaping is a finding.

#include <cstdint>
#include <stdexcept>
#include <string>

#include "case.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string line(reinterpret_cast<const char*>(data), size);
  try {
    const replay::Case c = replay::parse_case(line);
    for (const auto& [name, t] : c.inputs) {
      std::int64_t n = 1;
      for (std::int64_t e : t.shape()) n *= e;
      if (n != t.numel()) tenferro_fuzz::finding("input '" + name + "' has an inconsistent numel");
    }
    // The replay maps PyTorch dims of the op_args onto our axes.
    for (const auto& a : c.args) {
      if (a.is_number_integer() && !c.inputs.empty()) {
        (void)replay::dim_to_axis(a.get<std::int64_t>(), c.inputs.front().second.rank());
      }
    }
  } catch (const tenferro::Error&) {
  } catch (const nlohmann::json::exception&) {
  } catch (const std::runtime_error&) {
  }
  return 0;
}
