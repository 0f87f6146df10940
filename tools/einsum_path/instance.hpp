#pragma once
// An einsum instance of ../shared/einsum-instances (see its README): the
// network as dense integer labels over column-major shapes, its recorded
// paths, and the instances' cost convention.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tenferro/einsum/einsum.hpp"

namespace einsum_path_tool {

struct Instance {
  std::string name;
  std::vector<std::vector<std::int64_t>> inputs;  // dense labels, column-major order
  std::vector<std::int64_t> output;
  std::vector<double> extents;  // per dense label
  nlohmann::json paths;         // the recorded paths
};

/// Reads an instance file (std::runtime_error when it is not one).
Instance load_instance(const std::string& file);
/// Parses an instance from its JSON text; `what` names it in errors and is
/// the name when the JSON has none. std::runtime_error (or nlohmann's
/// json::exception for text that is not JSON) when it is not an instance.
Instance parse_instance(const std::string& text, const std::string& what);

/// The recorded path named `key` ("opt_flops", ...) of the instance's
/// "paths", checked: an array of [i, j] integer steps that
/// name distinct operands of the shrinking list (std::runtime_error naming
/// what is wrong otherwise); nullopt when the instance records no such path.
std::optional<tenferro::EinsumPath> recorded_path(const Instance& inst,
                                                  const std::string& key = "opt_flops");

struct Cost {
  double log10_flops = 0;  // every step: the product of the extents of its
                           // labels, times 2 when it sums over a label
  double log2_size = 0;    // the largest pairwise result, log2 elements
};
/// The cost of `path` under the instances' convention (the README's).
Cost instance_cost(const Instance& inst, const tenferro::EinsumPath& path);

/// Our plan (EinsumStrategy::Auto unless options say otherwise) and the
/// time the search took.
struct Result {
  tenferro::EinsumPlan plan;
  tenferro::EinsumPath path;
  Cost cost;
  double search_ms = 0;
};
Result plan_instance(const Instance& inst, const tenferro::EinsumOptions& options = {});

/// `path` as a nested tree: an operand index (a leaf) or a two-element
/// array of subtrees, e.g. [[0, 1], 2].
nlohmann::json path_tree(std::size_t operands, const tenferro::EinsumPath& path);

}  // namespace einsum_path_tool
