// The planner on the shared einsum instances: the cost function reproduces
// the recorded costs of the network instances, the planner finds the
// recorded optimum on the small ones and stays within an order of magnitude
// of it (greedy: within 1.5 orders of magnitude) on the large ones.

#include <gtest/gtest.h>

#include <filesystem>

#include "instance.hpp"

#ifndef TENFERRO_EINSUM_INSTANCES
#error "TENFERRO_EINSUM_INSTANCES must name the instance directory"
#endif

namespace {

using einsum_path_tool::Instance;

std::string file(const std::string& name) {
  return std::string(TENFERRO_EINSUM_INSTANCES) + "/" + name + ".json";
}

tenferro::EinsumPath recorded(const Instance& inst) {
  tenferro::EinsumPath p;
  for (const auto& s : inst.paths["opt_flops"]["path"]) p.emplace_back(s[0], s[1]);
  return p;
}

}  // namespace

TEST(EinsumInstances, CostFunctionReproducesTheRecordedNetworkCosts) {
  // (the bin_ and nary_ instances were recorded under another convention)
  for (const char* name :
       {"str_matrix_chain_multiplication_100", "lm_batch_likelihood_sentence_3_12d",
        "str_mps_varying_inner_product_200"}) {
    const Instance inst = einsum_path_tool::load_instance(file(name));
    const auto c = einsum_path_tool::instance_cost(inst, recorded(inst));
    EXPECT_NEAR(c.log10_flops, inst.paths["opt_flops"]["log10_flops"].get<double>(), 1e-3) << name;
    EXPECT_NEAR(c.log2_size, inst.paths["opt_flops"]["log2_size"].get<double>(), 1e-3) << name;
  }
}

TEST(EinsumInstances, OurPathsAgainstTheRecordedOnes) {
  int compared = 0;
  for (const auto& entry : std::filesystem::directory_iterator(TENFERRO_EINSUM_INSTANCES)) {
    const std::string stem = entry.path().stem().string();
    // Planning only (no tensors), but the largest networks take a while
    // under the sanitizers.
    if (entry.path().extension() != ".json" || stem == "permutation_patterns" ||
        stem.rfind("tensornetwork_", 0) == 0 || stem.rfind("gm_", 0) == 0) {
      continue;
    }
    const Instance inst = einsum_path_tool::load_instance(entry.path().string());
    const auto ours = einsum_path_tool::plan_instance(inst);
    const auto theirs = einsum_path_tool::instance_cost(inst, recorded(inst));
    EXPECT_EQ(ours.path.size(), inst.inputs.size() - 1) << stem;
    if (inst.inputs.size() <= 12) {
      // Exact search: at least as good as the recorded path.
      EXPECT_LE(ours.cost.log10_flops, theirs.log10_flops + 1e-9) << stem;
    } else {
      EXPECT_LE(ours.cost.log10_flops, theirs.log10_flops + 1.5) << stem;
    }
    ++compared;
  }
  EXPECT_GE(compared, 10);
}
