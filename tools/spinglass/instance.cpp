// Reading, writing and generating spin-glass instances.

#include "instance.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <utility>

namespace spinglass_tool {
namespace {

// An instance nests three levels ({"edges": [[i, j, J]]}); deeper JSON is
// refused while parsing, before it can exhaust anything.
constexpr int kMaxDepth = 8;

[[noreturn]] void bad(const std::string& what, const std::string& message) {
  throw InstanceError(what + ": " + message);
}

std::int64_t integer(const nlohmann::json& v, const std::string& what, const std::string& field) {
  if (v.is_number_integer()) return v.get<std::int64_t>();
  // 3.0 is an integer written as a float; 3.5 is not.
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (d == static_cast<double>(static_cast<std::int64_t>(d)) && std::abs(d) < 9e15) {
      return static_cast<std::int64_t>(d);
    }
  }
  bad(what, field + " must be an integer, got " + v.dump());
}

const nlohmann::json* member(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

std::string draw_name(Draw d) {
  switch (d) {
    case Draw::Zero:
      return "zero";
    case Draw::Pm1:
      return "pm1";
    case Draw::Int9:
      return "int9";
  }
  return "zero";
}

// Portable draws from the standard's fully specified engine (std::uniform_int_
// distribution differs between standard libraries).
std::int64_t draw(Draw d, std::mt19937_64& rng) {
  switch (d) {
    case Draw::Zero:
      return 0;
    case Draw::Pm1:
      return (rng() & 1) != 0 ? 1 : -1;
    case Draw::Int9: {
      const auto v = static_cast<std::int64_t>(rng() % 18);
      return v < 9 ? v - 9 : v - 8;
    }
  }
  return 0;
}

std::string generated_name(const std::string& kind, std::int64_t size, std::uint64_t seed,
                           Draw couplings, Draw fields) {
  std::string name = kind + std::to_string(size) + "_" + draw_name(couplings);
  if (fields != Draw::Zero) name += "_field" + draw_name(fields);
  return name + "_s" + std::to_string(seed);
}

void draw_fields(Instance& inst, Draw fields, std::mt19937_64& rng) {
  inst.fields.resize(static_cast<std::size_t>(inst.n));
  for (auto& h : inst.fields) h = draw(fields, rng);
}

void check_instance(const Instance& inst, const std::string& what) {
  if (inst.n < 1 || inst.n > kMaxSpins) {
    bad(what, "n must be in [1, " + std::to_string(kMaxSpins) + "], got " + std::to_string(inst.n));
  }
  if (static_cast<std::int64_t>(inst.fields.size()) != inst.n) {
    bad(what, "\"fields\" has " + std::to_string(inst.fields.size()) +
                  " entries for n = " + std::to_string(inst.n) + " spins");
  }
  std::int64_t total = 0;
  const auto add = [&](std::int64_t v, const std::string& where) {
    if (v < -kMaxEnergy || v > kMaxEnergy || (total += std::abs(v)) > kMaxEnergy) {
      bad(what, where + ": the sum of |J| and |h| must stay below 2^50 (exact energies)");
    }
  };
  for (std::size_t k = 0; k < inst.edges.size(); ++k) {
    const Edge& e = inst.edges[k];
    const std::string where = "edge " + std::to_string(k);
    if (e.i < 0 || e.i >= inst.n || e.j < 0 || e.j >= inst.n) {
      bad(what, where + " [" + std::to_string(e.i) + ", " + std::to_string(e.j) +
                    "]: spin index out of range [0, " + std::to_string(inst.n) + ")");
    }
    if (e.i == e.j) bad(what, where + " joins spin " + std::to_string(e.i) + " to itself");
    add(e.coupling, where);
  }
  for (std::size_t i = 0; i < inst.fields.size(); ++i) {
    add(inst.fields[i], "field " + std::to_string(i));
  }
}

}  // namespace

Instance load_instance(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) bad(file, "cannot open the file");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) bad(file, "cannot read the file");
  return parse_instance(text, file);
}

Instance parse_instance(const std::string& text, const std::string& what) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text, [&](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
      if (depth > kMaxDepth)
        bad(what, "JSON nested deeper than 8 levels; not a spin-glass instance");
      return true;
    });
  } catch (const nlohmann::json::exception& e) {
    bad(what, std::string("malformed JSON: ") + e.what());
  }
  if (!j.is_object()) bad(what, "an instance is a JSON object, got " + std::string(j.type_name()));

  Instance inst;
  inst.name = what;
  if (const auto* v = member(j, "name")) {
    if (!v->is_string()) bad(what, "\"name\" must be a string");
    inst.name = v->get<std::string>();
  }
  if (const auto* v = member(j, "lattice")) {
    if (!v->is_string()) bad(what, "\"lattice\" must be a string");
    inst.lattice = v->get<std::string>();
  }
  if (const auto* v = member(j, "L")) inst.L = integer(*v, what, "\"L\"");
  if (inst.L < 0 || inst.L > 1024) bad(what, "\"L\" must be in [0, 1024]");

  const auto* edges = member(j, "edges");
  if (edges == nullptr || !edges->is_array()) {
    bad(what, "\"edges\" must be an array of [i, j, J] (missing or not an array)");
  }
  std::int64_t largest = -1;
  for (std::size_t k = 0; k < edges->size(); ++k) {
    const auto& e = (*edges)[k];
    const std::string field = "edge " + std::to_string(k);
    if (!e.is_array() || e.size() != 3) bad(what, field + " must be [i, j, J], got " + e.dump());
    inst.edges.push_back({integer(e[0], what, field + " spin i"),
                          integer(e[1], what, field + " spin j"),
                          integer(e[2], what, field + " coupling J")});
    largest = std::max({largest, inst.edges.back().i, inst.edges.back().j});
  }
  if (const auto* v = member(j, "fields")) {
    if (!v->is_array()) bad(what, "\"fields\" must be an array of integers");
    for (std::size_t i = 0; i < v->size(); ++i) {
      inst.fields.push_back(integer((*v)[i], what, "field " + std::to_string(i)));
    }
  }
  if (const auto* v = member(j, "n")) {
    inst.n = integer(*v, what, "\"n\"");
  } else if (!inst.fields.empty()) {
    inst.n = static_cast<std::int64_t>(inst.fields.size());
  } else if (inst.L > 0) {
    inst.n = inst.L * inst.L;
  } else {
    inst.n = largest + 1;
  }
  if (member(j, "fields") == nullptr && inst.n >= 1 && inst.n <= kMaxSpins) {
    inst.fields.assign(static_cast<std::size_t>(inst.n), 0);
  }
  if (const auto* v = member(j, "ground_energy")) {
    inst.ground_energy = integer(*v, what, "\"ground_energy\"");
  }
  if (const auto* v = member(j, "degeneracy")) {
    if (!v->is_number() || v->get<double>() < 0) {
      bad(what, "\"degeneracy\" must be a non-negative number");
    }
    inst.degeneracy = v->get<double>();
  }
  check_instance(inst, what);
  return inst;
}

nlohmann::json to_json(const Instance& inst) {
  nlohmann::json j;
  j["name"] = inst.name;
  if (!inst.lattice.empty()) j["lattice"] = inst.lattice;
  if (inst.L > 0) j["L"] = inst.L;
  j["n"] = inst.n;
  j["energy"] = "E(s) = -sum_edges J s_i s_j - sum_i h_i s_i, s_i = +-1";
  j["edges"] = nlohmann::json::array();
  for (const Edge& e : inst.edges) j["edges"].push_back({e.i, e.j, e.coupling});
  j["fields"] = inst.fields;
  if (inst.ground_energy) j["ground_energy"] = *inst.ground_energy;
  if (inst.degeneracy) j["degeneracy"] = *inst.degeneracy;
  return j;
}

std::int64_t energy(const Instance& inst, const std::vector<int>& spins) {
  if (static_cast<std::int64_t>(spins.size()) != inst.n) {
    throw InstanceError("energy: " + std::to_string(spins.size()) +
                        " spins for n = " + std::to_string(inst.n));
  }
  for (const int s : spins) {
    if (s != 1 && s != -1)
      throw InstanceError("energy: a spin is +1 or -1, got " + std::to_string(s));
  }
  std::int64_t e = 0;
  for (const Edge& edge : inst.edges) {
    e -= edge.coupling * spins[static_cast<std::size_t>(edge.i)] *
         spins[static_cast<std::size_t>(edge.j)];
  }
  for (std::size_t i = 0; i < spins.size(); ++i) e -= inst.fields[i] * spins[i];
  return e;
}

Draw parse_draw(const std::string& name) {
  if (name == "zero") return Draw::Zero;
  if (name == "pm1") return Draw::Pm1;
  if (name == "int9") return Draw::Int9;
  throw InstanceError("unknown draw '" + name + "' (zero, pm1 or int9)");
}

Instance generate_square(std::int64_t L, std::uint64_t seed, Draw couplings, Draw fields) {
  if (L < 1 || L > 1024) throw InstanceError("square lattice: L must be in [1, 1024]");
  std::mt19937_64 rng(seed);
  Instance inst;
  inst.name = generated_name("sq", L, seed, couplings, fields);
  inst.lattice = "square_open";
  inst.L = L;
  inst.n = L * L;
  for (std::int64_t r = 0; r < L; ++r) {
    for (std::int64_t c = 0; c + 1 < L; ++c) {
      inst.edges.push_back({r * L + c, r * L + c + 1, draw(couplings, rng)});
    }
  }
  for (std::int64_t r = 0; r + 1 < L; ++r) {
    for (std::int64_t c = 0; c < L; ++c) {
      inst.edges.push_back({r * L + c, (r + 1) * L + c, draw(couplings, rng)});
    }
  }
  draw_fields(inst, fields, rng);
  check_instance(inst, inst.name);
  return inst;
}

Instance generate_regular3(std::int64_t n, std::uint64_t seed, Draw couplings, Draw fields) {
  if (n < 4 || n % 2 != 0 || n > 100000) {
    throw InstanceError("random 3-regular graph: n must be even and in [4, 100000], got " +
                        std::to_string(n));
  }
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> stubs;
  for (std::int64_t i = 0; i < n; ++i) stubs.insert(stubs.end(), 3, i);
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
  for (;;) {  // about e^2 = 7.4 tries on average for large n
    for (std::size_t k = stubs.size() - 1; k > 0; --k) {
      std::swap(stubs[k], stubs[rng() % (k + 1)]);
    }
    std::set<std::pair<std::int64_t, std::int64_t>> seen;
    pairs.clear();
    bool simple = true;
    for (std::size_t k = 0; k < stubs.size() && simple; k += 2) {
      const auto e = std::minmax(stubs[k], stubs[k + 1]);
      simple = e.first != e.second && seen.insert(e).second;
      pairs.emplace_back(e.first, e.second);
    }
    if (simple) break;
  }
  std::sort(pairs.begin(), pairs.end());
  Instance inst;
  inst.name = generated_name("rr3_", n, seed, couplings, fields);
  inst.lattice = "random_regular3";
  inst.n = n;
  for (const auto& [i, j] : pairs) inst.edges.push_back({i, j, draw(couplings, rng)});
  draw_fields(inst, fields, rng);
  check_instance(inst, inst.name);
  return inst;
}

}  // namespace spinglass_tool
