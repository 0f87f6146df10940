// tenferro-spinglass: the shipped instances' exact energies and degeneracies,
// brute force on small generated instances, slicing on larger ones, and bad
// input (reader errors, the tool's exit status).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#include "instance.hpp"
#include "solver.hpp"

#ifndef TENFERRO_SPINGLASS_INSTANCES
#error "TENFERRO_SPINGLASS_INSTANCES must name the instance directory"
#endif
#ifndef TENFERRO_SPINGLASS_TOOL
#error "TENFERRO_SPINGLASS_TOOL must name the tenferro-spinglass executable"
#endif

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

namespace {

using namespace spinglass_tool;

struct Exact {
  std::int64_t ground_energy;
  double degeneracy;
};

// Every one of the 2^n configurations.
Exact brute_force(const Instance& inst) {
  Exact best{std::numeric_limits<std::int64_t>::max(), 0};
  std::vector<int> s(static_cast<std::size_t>(inst.n));
  for (std::uint64_t mask = 0; mask < (std::uint64_t{1} << inst.n); ++mask) {
    for (std::size_t i = 0; i < s.size(); ++i) s[i] = (mask >> i) & 1 ? 1 : -1;
    const std::int64_t e = energy(inst, s);
    if (e < best.ground_energy) best = {e, 0};
    if (e == best.ground_energy) best.degeneracy += 1;
  }
  return best;
}

// The solution's own checks: a one-hot gradient, a configuration with the
// ground energy, the second order's energy and degeneracy.
void expect_consistent(const Solution& sol, const std::string& what) {
  ASSERT_TRUE(sol.energy_check.has_value()) << what;
  EXPECT_EQ(*sol.energy_check, sol.ground_energy) << what;
  EXPECT_TRUE(sol.gradient_one_hot) << what;
  if (sol.second_order_energy) {
    EXPECT_EQ(*sol.second_order_energy, sol.ground_energy) << what;
    EXPECT_EQ(*sol.second_order_degeneracy, sol.degeneracy) << what;
    EXPECT_TRUE(sol.second_path_differs) << what;
  }
  EXPECT_TRUE(sol.consistent()) << what;
}

SolveOptions quick(bool second_order = false, tenferro::DType dtype = tenferro::DType::F64) {
  SolveOptions o;
  o.einsum.search_work = 2e7;  // small networks: the default budget is far more than they need
  o.dtype = dtype;
  o.second_order = second_order;
  return o;
}

struct RunResult {
  int status = -1;
  std::string out;
};

// The tool with these arguments (stderr discarded): exit status and stdout.
RunResult run_tool(const std::string& args) {
  const std::string cmd = std::string("'") + TENFERRO_SPINGLASS_TOOL + "' " + args + " 2>/dev/null";
  RunResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  while (const std::size_t got = std::fread(buf, 1, sizeof buf, pipe)) r.out.append(buf, got);
  const int raw = pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  return r;
}

class TempDir {
 public:
  TempDir()
      : path_(std::filesystem::temp_directory_path() /
              ("tenferro_spinglass_" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string write(const std::string& name, const std::string& text) const {
    const auto p = path_ / name;
    std::ofstream(p) << text;
    return p.string();
  }

 private:
  std::filesystem::path path_;
};

}  // namespace

TEST(Spinglass, ShippedInstancesMatchExactly) {
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(TENFERRO_SPINGLASS_INSTANCES)) {
    if (entry.path().extension() != ".json") continue;
    const Instance inst = load_instance(entry.path().string());
    const std::string what = inst.name;
    ASSERT_TRUE(inst.ground_energy && inst.degeneracy) << what;
    const Solution sol = solve(inst, quick(/*second_order=*/true));
    EXPECT_EQ(sol.ground_energy, *inst.ground_energy) << what;
    EXPECT_EQ(sol.degeneracy, *inst.degeneracy) << what;
    expect_consistent(sol, what);
    std::printf("%s: E0 = %lld, degeneracy %.0f, search %.1f ms, contract %.1f ms\n", what.c_str(),
                static_cast<long long>(sol.ground_energy), sol.degeneracy, sol.first.search_ms,
                sol.first.contract_ms);
    ++checked;
  }
  EXPECT_EQ(checked, 5);
}

TEST(Spinglass, I64ValuesGiveTheSameAnswer) {
  const Instance inst =
      load_instance(std::string(TENFERRO_SPINGLASS_INSTANCES) + "/sq8_int9_field_s11.json");
  const Solution sol = solve(inst, quick(false, tenferro::DType::I64));
  EXPECT_EQ(sol.ground_energy, *inst.ground_energy);
  EXPECT_EQ(sol.degeneracy, *inst.degeneracy);
  expect_consistent(sol, inst.name);
}

TEST(Spinglass, BruteForceOnSmallGeneratedInstances) {
  std::vector<Instance> instances;
  for (const std::int64_t L : {3, 4}) {
    for (const std::uint64_t seed : {1, 2}) {
      instances.push_back(generate_square(L, seed));
      instances.push_back(generate_square(L, seed, Draw::Int9, Draw::Int9));
      instances.push_back(generate_square(L, seed, Draw::Pm1, Draw::Pm1));
    }
  }
  for (const std::int64_t n : {8, 12, 16}) {
    instances.push_back(generate_regular3(n, 3));
    instances.push_back(generate_regular3(n, 4, Draw::Int9, Draw::Pm1));
  }
  for (const Instance& inst : instances) {
    const Exact want = brute_force(inst);
    const Solution sol = solve(inst, quick(/*second_order=*/inst.n == 16));
    EXPECT_EQ(sol.ground_energy, want.ground_energy) << inst.name;
    EXPECT_EQ(sol.degeneracy, want.degeneracy) << inst.name;
    expect_consistent(sol, inst.name);
  }
}

TEST(Spinglass, SlicedLatticeAndRegularGraph) {
  // A memory limit far below the unsliced intermediates forces slicing; the
  // configuration and a second order check the answer. Under a sanitizer
  // (5-10x slower) the lattice is smaller.
  const std::int64_t L = kSanitized ? 10 : 16;
  for (const Instance& inst : {generate_square(L, 7), generate_regular3(60, 7)}) {
    SolveOptions o;
    o.einsum.search_work = kSanitized ? 2e7 : 1e8;
    // A quarter of the unsliced plan's largest intermediate (f64 values and counts).
    const Network net = build_network(inst, tenferro::DType::F64);
    const double largest =
        tenferro::einsum_path(net.labels, net.shapes, o.einsum).largest_intermediate;
    o.einsum.memory_limit = 16.0 * largest / 4;
    const Solution sol = solve(inst, o);
    EXPECT_GT(sol.first.plan.slices, 1) << inst.name;
    EXPECT_LE(sol.first.plan.sliced_largest_intermediate, largest / 4) << inst.name;
    expect_consistent(sol, inst.name);
    std::printf("%s: E0 = %lld, degeneracy %.0f, %.0f slices, search %.0f ms, contract %.0f ms\n",
                inst.name.c_str(), static_cast<long long>(sol.ground_energy), sol.degeneracy,
                sol.first.plan.slices, sol.first.search_ms, sol.first.contract_ms);
  }
}

TEST(Spinglass, GeneratorsAreDeterministicAndWellFormed) {
  EXPECT_EQ(to_json(generate_square(5, 9)), to_json(generate_square(5, 9)));
  EXPECT_NE(to_json(generate_square(5, 9)), to_json(generate_square(5, 10)));
  const Instance sq = generate_square(5, 9);
  EXPECT_EQ(sq.n, 25);
  EXPECT_EQ(sq.edges.size(), 40u);
  const Instance g = generate_regular3(20, 5, Draw::Int9);
  EXPECT_EQ(to_json(g), to_json(generate_regular3(20, 5, Draw::Int9)));
  std::map<std::int64_t, int> degree;
  std::set<std::pair<std::int64_t, std::int64_t>> seen;
  for (const Edge& e : g.edges) {
    EXPECT_NE(e.i, e.j);
    EXPECT_TRUE(seen.insert(std::minmax(e.i, e.j)).second);
    EXPECT_TRUE(e.coupling != 0 && std::abs(e.coupling) <= 9);
    ++degree[e.i];
    ++degree[e.j];
  }
  for (std::int64_t i = 0; i < 20; ++i) EXPECT_EQ(degree[i], 3) << i;
  // Written and read back: the same instance.
  EXPECT_EQ(to_json(parse_instance(to_json(g).dump(), "g")), to_json(g));
  EXPECT_THROW(generate_regular3(7, 1), InstanceError);
  EXPECT_THROW(generate_square(0, 1), InstanceError);
}

TEST(Spinglass, ReaderRejectsBadInput) {
  const auto rejects = [](const std::string& text, const std::string& needle) {
    try {
      parse_instance(text, "t.json");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const InstanceError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
          << e.what() << " (wanted '" << needle << "')";
    }
  };
  rejects("{\"edges\": [[0, 1, 1]", "malformed JSON");
  rejects("[1, 2]", "JSON object");
  rejects("{\"n\": 2}", "\"edges\"");
  rejects("{\"n\": 2, \"edges\": [[0, 2, 1]]}", "out of range");
  rejects("{\"n\": 2, \"edges\": [[0, -1, 1]]}", "out of range");
  rejects("{\"n\": 2, \"edges\": [[1, 1, 1]]}", "itself");
  rejects("{\"n\": 2, \"edges\": [[0, 1]]}", "[i, j, J]");
  rejects("{\"n\": 2, \"edges\": [[0, 1, 0.5]]}", "integer");
  rejects("{\"n\": 2, \"edges\": [[0, 1, \"x\"]]}", "integer");
  rejects("{\"n\": 2, \"edges\": [[0, 1, 1]], \"fields\": [1]}", "\"fields\"");
  rejects("{\"n\": 0, \"edges\": []}", "n must be");
  rejects("{\"n\": 2, \"edges\": [[0, 1, 1125899906842625]]}", "2^50");
  rejects("{\"edges\": " + std::string(100000, '[') + std::string(100000, ']') + "}", "deeper");
  EXPECT_THROW(load_instance("/nonexistent/spinglass.json"), InstanceError);
  // n from the fields or the largest index; integers written as 2.0 are fine.
  EXPECT_EQ(parse_instance("{\"edges\": [[0, 2, 1]]}", "t").n, 3);
  EXPECT_EQ(parse_instance("{\"edges\": [[0, 1, 2.0]], \"fields\": [0, 0, 1]}", "t").n, 3);
}

TEST(Spinglass, ToolExitStatus) {
  const TempDir dir;
  const std::string good = std::string(TENFERRO_SPINGLASS_INSTANCES) + "/sq8_pm1_s11.json";
  const RunResult ok = run_tool("--quiet '" + good + "'");
  ASSERT_EQ(ok.status, 0) << ok.out;
  const auto j = nlohmann::json::parse(ok.out);
  EXPECT_EQ(j["ground_energy"], -80);
  EXPECT_EQ(j["degeneracy"], 392);
  EXPECT_EQ(j["energy_check"], -80);
  EXPECT_EQ(j["second_order_energy"], -80);
  EXPECT_EQ(j["configuration"].size(), 64u);
  EXPECT_TRUE(j["ok"].get<bool>());
  EXPECT_TRUE(j.contains("search_ms") && j.contains("contract_ms") && j.contains("peak_rss_bytes"));

  // A generated instance written and read back.
  const std::string written = dir.write("placeholder", "");
  EXPECT_EQ(run_tool("--quiet --generate square 4 3 --write '" + written + "' --no-solve").status,
            0);
  const RunResult back = run_tool("--quiet --no-second-order '" + written + "'");
  EXPECT_EQ(back.status, 0);
  EXPECT_EQ(nlohmann::json::parse(back.out)["ground_energy"],
            brute_force(generate_square(4, 3)).ground_energy);

  // Bad input: status 2 and no JSON, never a crash.
  for (const std::string& args : std::vector<std::string>{
           "/nonexistent/spinglass.json", dir.write("bad.json", "{\"edges\": [[0,"),
           dir.write("range.json", "{\"n\": 3, \"edges\": [[0, 3, 1]]}"),
           dir.write("deep.json", std::string(100000, '[') + std::string(100000, ']')),
           "'" + good + "' --frobnicate", "'" + good + "' --memory-limit lots",
           "'" + good + "' --dtype f32", "--generate triangle 4 1", "--generate regular3 7 1",
           "'" + good + "' --memory-limit 1", ""}) {
    const RunResult r = run_tool("--quiet " + args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_TRUE(r.out.empty()) << args << ": " << r.out;
  }
}
