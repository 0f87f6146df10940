// tenferro-einsum-path FILE.json [--budget-ms N] [--search-work UNITS] [--seed S] [--memory-limit
// BYTES]: plans an instance of ../shared/einsum-instances and prints one JSON object with
// "log10_flops", "log2_size", "search_ms", the shrinking-list "path" and the nested "tree" (costs
// under the instances' convention, see their README), the recorded opt_flops path's cost under the
// same function, and with --memory-limit the slicing: "slices", "sliced_labels" (dense label
// indices of the instance, in first-appearance order), "log10_flops_sliced",
// "log2_size_sliced" and "overhead" (sliced flops / unsliced).

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <string>

#include "instance.hpp"

namespace {

int usage() {
  std::cerr << "usage: tenferro-einsum-path FILE.json [--budget-ms N] [--search-work UNITS] "
               "[--seed S] [--memory-limit BYTES]\n";
  return 2;
}

// The whole argument as a number, or nullopt.
std::optional<double> number(const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::string file;
  tenferro::EinsumOptions options;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    if (arg == "--budget-ms" || arg == "--search-work" || arg == "--seed" ||
        arg == "--memory-limit") {
      if (k + 1 >= argc) return usage();
      const auto v = number(argv[++k]);
      if (!v || (arg == "--seed" && (*v < 0 || *v != std::floor(*v)))) {
        std::cerr << "tenferro-einsum-path: " << arg << " needs a number"
                  << (arg == "--seed" ? " (a non-negative integer)" : "") << ", got '" << argv[k]
                  << "'\n";
        return 2;
      }
      if (arg == "--budget-ms") options.budget_ms = *v;
      if (arg == "--search-work") options.search_work = *v;
      if (arg == "--seed") options.seed = static_cast<std::uint64_t>(*v);
      if (arg == "--memory-limit") options.memory_limit = *v;
    } else if (file.empty() && arg.rfind("--", 0) != 0) {
      file = arg;
    } else {
      return usage();
    }
  }
  if (file.empty()) return usage();
  try {
    const auto inst = einsum_path_tool::load_instance(file);
    const auto r = einsum_path_tool::plan_instance(inst, options);
    nlohmann::json out;
    out["name"] = inst.name;
    out["log10_flops"] = r.cost.log10_flops;
    out["log2_size"] = r.cost.log2_size;
    out["search_ms"] = r.search_ms;
    out["search_cut_short"] = r.plan.search_cut_short;
    out["search_work"] = r.plan.search_work;
    out["path"] = nlohmann::json::array();
    for (const auto& [i, j] : r.path) out["path"].push_back({i, j});
    out["tree"] = einsum_path_tool::path_tree(inst.inputs.size(), r.path);
    if (options.memory_limit) {
      out["slices"] = r.plan.slices;
      out["sliced_labels"] = r.plan.sliced_labels;
      out["log10_flops_sliced"] = std::log10(r.plan.sliced_flops);
      out["log2_size_sliced"] = std::log2(r.plan.sliced_largest_intermediate);
      out["overhead"] = r.plan.sliced_flops / r.plan.flops;
    }
    if (const auto rec = einsum_path_tool::recorded_path(inst)) {
      const auto c = einsum_path_tool::instance_cost(inst, *rec);
      out["recorded_opt_flops"] = {{"log10_flops", c.log10_flops}, {"log2_size", c.log2_size}};
    }
    std::cout << out.dump() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "tenferro-einsum-path: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
