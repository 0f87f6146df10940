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

// JSON nested deeper than this is not an instance; nlohmann's recursive
// parser would otherwise exhaust the stack (100,000 nested brackets crashed
// the tool).
constexpr int kMaxDepth = 64;

void check_depth(const std::string& text, const std::string& file) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) {
        throw std::runtime_error(file + ": JSON nested deeper than " + std::to_string(kMaxDepth) +
                                 " levels at byte " + std::to_string(i) +
                                 "; not an einsum instance");
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

std::int64_t step_index(const nlohmann::json& v, const std::string& what) {
  if (!v.is_number_integer()) {
    throw std::runtime_error(what + ": a path step holds two integers, got " + v.dump());
  }
  return v.get<std::int64_t>();
}

}  // namespace

std::optional<tenferro::EinsumPath> recorded_path(const Instance& inst, const std::string& key) {
  if (!inst.paths.is_object() || !inst.paths.contains(key)) return std::nullopt;
  const std::string what = inst.name + ": paths." + key;
  const nlohmann::json& rec = inst.paths.at(key);
  if (!rec.is_object() || !rec.contains("path") || !rec.at("path").is_array()) {
    throw std::runtime_error(what + " must be an object with a \"path\" array, got " +
                             rec.dump().substr(0, 200));
  }
  tenferro::EinsumPath path;
  std::size_t operands = inst.inputs.size();
  for (const nlohmann::json& step : rec.at("path")) {
    if (!step.is_array() || step.size() != 2) {
      throw std::runtime_error(what + ": each step is [i, j], got " + step.dump().substr(0, 200));
    }
    const std::int64_t i = step_index(step[0], what), j = step_index(step[1], what);
    check_step(i, j, operands);
    path.emplace_back(i, j);
    --operands;
  }
  if (operands != 1 && !inst.inputs.empty()) {
    throw std::runtime_error(what + " leaves " + std::to_string(operands) +
                             " operands; it needs one step fewer than the operands");
  }
  return path;
}

Instance load_instance(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot open " + file);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return parse_instance(text, file);
}

Instance parse_instance(const std::string& text, const std::string& file) {
  check_depth(text, file);
  const nlohmann::json j = nlohmann::json::parse(text);
  if (!j.is_object() || !j.contains("format_string") || !j.contains("shapes") ||
      !j["format_string"].is_string()) {
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
      const nlohmann::json& e = shapes[k][i];
      if (!e.is_number() || !(e.get<double>() >= 0) || !std::isfinite(e.get<double>())) {
        throw std::runtime_error(file + ": term " + std::to_string(k) + " has the extent " +
                                 e.dump().substr(0, 100) + "; extents are numbers, 0 or more");
      }
      labels.push_back(id(terms[k][i], e.get<double>()));
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
