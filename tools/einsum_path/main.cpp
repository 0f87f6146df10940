// tenferro-einsum-path FILE.json: plans an instance of
// ../shared/einsum-instances and prints
// {"log10_flops", "log2_size", "search_ms", "path"} (the costs under the
// instances' convention, see their README), plus the recorded opt_flops
// path's cost under the same function for comparison.

#include <iostream>

#include "instance.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: tenferro-einsum-path FILE.json\n";
    return 2;
  }
  try {
    const auto inst = einsum_path_tool::load_instance(argv[1]);
    const auto r = einsum_path_tool::plan_instance(inst);
    nlohmann::json out;
    out["name"] = inst.name;
    out["log10_flops"] = r.cost.log10_flops;
    out["log2_size"] = r.cost.log2_size;
    out["search_ms"] = r.search_ms;
    out["path"] = nlohmann::json::array();
    for (const auto& [i, j] : r.path) out["path"].push_back({i, j});
    if (inst.paths.contains("opt_flops")) {
      tenferro::EinsumPath rec;
      for (const auto& s : inst.paths["opt_flops"]["path"]) rec.emplace_back(s[0], s[1]);
      const auto c = einsum_path_tool::instance_cost(inst, rec);
      out["recorded_opt_flops"] = {{"log10_flops", c.log10_flops}, {"log2_size", c.log2_size}};
    }
    std::cout << out.dump() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "tenferro-einsum-path: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
