// The einsum instance loader of tools/einsum_path (../shared/einsum-instances
// format): JSON text into labels and extents, then the planner on it and
// the instance cost and tree of every recorded path. Bad input is
// std::runtime_error, nlohmann::json::exception or a tenferro::Error (the
// planner refusing extents or labels); anything else escaping is a finding.

#include <cstdint>
#include <stdexcept>
#include <string>

#include "fuzz_input.hpp"
#include "instance.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const einsum_path_tool::Instance inst = einsum_path_tool::parse_instance(text, "fuzz input");
    if (inst.paths.is_object()) {
      for (const auto& [key, rec] : inst.paths.items()) {
        if (!rec.is_object() || !rec.contains("path")) continue;
        const auto path = rec.at("path").get<tenferro::EinsumPath>();
        (void)einsum_path_tool::instance_cost(inst, path);
        (void)einsum_path_tool::path_tree(inst.inputs.size(), path);
      }
    }
    tenferro::EinsumOptions options;
    // Auto anneals for up to 2 s beyond 12 operands: too slow per input.
    if (inst.inputs.size() > 8) options.strategy = tenferro::EinsumStrategy::Greedy;
    (void)einsum_path_tool::plan_instance(inst, options);
  } catch (const tenferro::Error&) {
  } catch (const nlohmann::json::exception&) {
  } catch (const std::runtime_error&) {
  }
  return 0;
}
