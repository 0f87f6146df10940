// Loading einsum instances and costing paths under their convention.

#include "instance.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>

namespace einsum_path_tool {
namespace {

// The code points of a UTF-8 string.
std::vector<std::uint32_t> code_points(const std::string& s) {
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const int len = b < 0x80 ? 1 : (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3 : 4;
    std::uint32_t cp = len == 1 ? b : len == 2 ? (b & 0x1F) : len == 3 ? (b & 0x0F) : (b & 0x07);
    for (int k = 1; k < len && i + static_cast<std::size_t>(k) < s.size(); ++k) {
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]) & 0x3F);
    }
    out.push_back(cp);
    i += static_cast<std::size_t>(len);
  }
  return out;
}

// A path step names two distinct operands of the current list (a negative
// index was once cast to a huge one and read out of bounds).
void check_step(std::int64_t i, std::int64_t j, std::size_t operands) {
  const auto n = static_cast<std::int64_t>(operands);
  if (i < 0 || j < 0 || i >= n || j >= n || i == j) {
    throw std::runtime_error("invalid path step (" + std::to_string(i) + ", " + std::to_string(j) +
                             ") for " + std::to_string(operands) + " operands");
  }
}

}  // namespace

Instance load_instance(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot open " + file);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return parse_instance(text, file);
}

Instance parse_instance(const std::string& text, const std::string& file) {
  const nlohmann::json j = nlohmann::json::parse(text);
  if (!j.contains("format_string") || !j.contains("shapes")) {
    throw std::runtime_error(file + " is not an einsum instance (no format_string/shapes)");
  }
  // Column-major: each term's labels and extents reversed.
  std::vector<std::vector<std::uint32_t>> terms(1);
  std::vector<std::uint32_t> out;
  bool in_output = false;
  const auto cps = code_points(j["format_string"].get<std::string>());
  for (std::size_t i = 0; i < cps.size(); ++i) {
    if (cps[i] == ',') {
      terms.emplace_back();
    } else if (cps[i] == '-' && i + 1 < cps.size() && cps[i + 1] == '>') {
      in_output = true;
      ++i;
    } else if (cps[i] != ' ') {
      (in_output ? out : terms.back()).push_back(cps[i]);
    }
  }
  const auto& shapes = j["shapes"];
  if (!shapes.is_array() || shapes.size() != terms.size()) {
    throw std::runtime_error(file + ": shapes must be an array with one shape per term");
  }
  for (std::size_t k = 0; k < terms.size(); ++k) {
    // Checked here: indexing a const json past its end is undefined behaviour.
    if (!shapes[k].is_array() || shapes[k].size() != terms[k].size()) {
      throw std::runtime_error(file + ": term " + std::to_string(k) + " has " +
                               std::to_string(terms[k].size()) + " labels but its shape is " +
                               shapes[k].dump());
    }
  }
  Instance inst;
  inst.name = j.value("name", file);
  std::map<std::uint32_t, std::int64_t> dense;
  auto id = [&](std::uint32_t cp, double extent) {
    auto [it, fresh] = dense.emplace(cp, static_cast<std::int64_t>(dense.size()));
    if (fresh) inst.extents.push_back(extent);
    return it->second;
  };
  for (std::size_t k = 0; k < terms.size(); ++k) {
    std::vector<std::int64_t> labels;
    for (std::size_t i = terms[k].size(); i-- > 0;) {
      labels.push_back(id(terms[k][i], shapes[k][i].get<double>()));
    }
    inst.inputs.push_back(std::move(labels));
  }
  for (std::size_t i = out.size(); i-- > 0;) {
    const auto it = dense.find(out[i]);
    if (it == dense.end()) throw std::runtime_error(file + ": an output label is in no input");
    inst.output.push_back(it->second);
  }
  if (j.contains("paths")) inst.paths = j["paths"];
  return inst;
}

Cost instance_cost(const Instance& inst, const tenferro::EinsumPath& path) {
  std::vector<std::vector<std::int64_t>> list = inst.inputs;
  for (auto& l : list) {
    std::sort(l.begin(), l.end());
    l.erase(std::unique(l.begin(), l.end()), l.end());
  }
  std::vector<double> log_e;
  for (double e : inst.extents) log_e.push_back(std::log10(e));
  double flops = 0, size = 0;  // linear flops, log10 size
  bool any = false;
  for (const auto& [i0, j0] : path) {
    check_step(i0, j0, list.size());
    const auto i = static_cast<std::size_t>(std::min(i0, j0));
    const auto j = static_cast<std::size_t>(std::max(i0, j0));
    std::vector<std::int64_t> u;
    std::set_union(list[i].begin(), list[i].end(), list[j].begin(), list[j].end(),
                   std::back_inserter(u));
    std::vector<std::int64_t> r;
    for (std::int64_t l : u) {
      bool kept = std::find(inst.output.begin(), inst.output.end(), l) != inst.output.end();
      for (std::size_t k = 0; k < list.size() && !kept; ++k) {
        kept = k != i && k != j && std::binary_search(list[k].begin(), list[k].end(), l);
      }
      if (kept) r.push_back(l);
    }
    double lu = 0, lr = 0;
    for (std::int64_t l : u) lu += log_e[static_cast<std::size_t>(l)];
    for (std::int64_t l : r) lr += log_e[static_cast<std::size_t>(l)];
    flops += std::pow(10.0, lu) * (r.size() < u.size() ? 2.0 : 1.0);
    size = any ? std::max(size, lr) : lr;
    any = true;
    list.erase(list.begin() + static_cast<std::ptrdiff_t>(j));
    list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
    list.push_back(std::move(r));
  }
  return {std::log10(flops), size / std::log10(2.0)};
}

Result plan_instance(const Instance& inst, const tenferro::EinsumOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  tenferro::EinsumPlan plan =
      tenferro::plan_contraction(inst.inputs, inst.output, inst.extents, options);
  const auto t1 = std::chrono::steady_clock::now();
  Result r;
  r.path = plan.path;
  r.plan = std::move(plan);
  r.search_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  r.cost = instance_cost(inst, r.path);
  return r;
}

nlohmann::json path_tree(std::size_t operands, const tenferro::EinsumPath& path) {
  std::vector<nlohmann::json> list;
  for (std::size_t k = 0; k < operands; ++k) list.emplace_back(k);
  for (const auto& [i0, j0] : path) {
    check_step(i0, j0, list.size());
    const auto i = static_cast<std::size_t>(std::min(i0, j0));
    const auto j = static_cast<std::size_t>(std::max(i0, j0));
    nlohmann::json node = nlohmann::json::array({list[i], list[j]});
    list.erase(list.begin() + static_cast<std::ptrdiff_t>(j));
    list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
    list.push_back(std::move(node));
  }
  return list.size() == 1 ? list.front() : nlohmann::json(list);
}

}  // namespace einsum_path_tool
