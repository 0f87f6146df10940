// tenferro-spinglass: exact ground states of Ising spin glasses by tropical
// tensor networks (docs/tropical.md, "Spin glasses"). Prints one JSON line.
//
//   tenferro-spinglass FILE.json [options]
//   tenferro-spinglass --generate square L SEED [options]
//   tenferro-spinglass --generate regular3 N SEED [options]
//
// Exit status: 0 when every check passed, 1 when one failed (the
// configuration's energy, the second order, the file's reference), 2 for bad
// input (file, JSON, option).

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>

#include "instance.hpp"
#include "solver.hpp"
#include "tenferro/core/error.hpp"

namespace {

using spinglass_tool::InstanceError;

constexpr const char* kUsage = R"(usage: tenferro-spinglass FILE.json [options]
       tenferro-spinglass --generate square L SEED [options]
       tenferro-spinglass --generate regular3 N SEED [options]
options:
  --memory-limit BYTES   largest intermediate, sliced to fit (default 1073741824; 0: none)
  --seed S               seed of the contraction-order search (default 0)
  --strategy NAME        auto (default), greedy, anneal or optimal
  --search-work UNITS    work budget of the order search
  --dtype f64|i64        values of the counting contraction (default f64)
  --threads N            CPU threads (default: all cores)
  --no-configuration     skip the gradient (no configuration)
  --no-second-order      skip the check along a second contraction order
  --couplings pm1|int9   couplings of a generated instance (default pm1)
  --fields zero|pm1|int9 fields of a generated instance (default zero)
  --write FILE           write the (generated) instance as JSON to FILE
  --no-solve             only write the instance (with --write)
  --quiet                no progress on stderr
)";

struct Usage : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::optional<double> number(const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::int64_t integer(const std::string& option, const std::string& s, double lo, double hi) {
  const auto v = number(s);
  if (!v || *v != std::floor(*v) || *v < lo || *v > hi) {
    throw Usage(option + " needs an integer in [" + std::to_string(static_cast<long long>(lo)) +
                ", " + std::to_string(static_cast<long long>(hi)) + "], got '" + s + "'");
  }
  return static_cast<std::int64_t>(*v);
}

// Peak resident memory of this process (VmHWM), bytes; -1 when unknown.
long long peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atoll(line.c_str() + 6) * 1024;
  }
  return -1;
}

nlohmann::json order_json(const spinglass_tool::OrderReport& r) {
  return {{"search_ms", r.search_ms},
          {"contract_ms", r.contract_ms},
          {"log10_flops", std::log10(std::max(r.plan.flops, 1.0))},
          {"log2_largest_intermediate", std::log2(std::max(r.plan.largest_intermediate, 1.0))},
          {"slices", r.plan.slices},
          {"sliced_labels", r.plan.sliced_labels},
          {"log2_sliced_largest_intermediate",
           std::log2(std::max(r.plan.sliced_largest_intermediate, 1.0))}};
}

// A count as an exact integer when it is one below 2^53, else as a double.
nlohmann::json count_json(double c) {
  if (c >= 0 && c < 9007199254740992.0 && c == std::floor(c)) {
    return static_cast<std::uint64_t>(c);
  }
  return c;
}

struct Args {
  std::string file;
  std::string generate;  // "square" or "regular3"
  std::int64_t size = 0;
  std::uint64_t seed = 0;
  spinglass_tool::Draw couplings = spinglass_tool::Draw::Pm1;
  spinglass_tool::Draw fields = spinglass_tool::Draw::Zero;
  std::string write;
  bool solve = true;
  bool quiet = false;
  double memory_limit = 1073741824.0;
  spinglass_tool::SolveOptions solve_options;
};

Args parse_args(int argc, char** argv) {
  Args a;
  const auto value = [&](int& k) -> std::string {
    if (k + 1 >= argc) throw Usage(std::string(argv[k]) + " needs a value");
    return argv[++k];
  };
  auto& einsum = a.solve_options.einsum;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    if (arg == "--generate") {
      a.generate = value(k);
      if (a.generate != "square" && a.generate != "regular3") {
        throw Usage("--generate makes 'square' or 'regular3', got '" + a.generate + "'");
      }
      a.size = integer("--generate " + a.generate, value(k), 1, 100000);
      a.seed = static_cast<std::uint64_t>(integer("the seed of --generate", value(k), 0, 9e15));
    } else if (arg == "--memory-limit") {
      const std::string s = value(k);
      const auto v = number(s);
      if (!v || *v < 0) throw Usage("--memory-limit needs a number of bytes >= 0, got '" + s + "'");
      a.memory_limit = *v;
    } else if (arg == "--seed") {
      einsum.seed = static_cast<std::uint64_t>(integer(arg, value(k), 0, 9e15));
    } else if (arg == "--search-work") {
      const std::string s = value(k);
      const auto v = number(s);
      if (!v || *v <= 0) throw Usage("--search-work needs a positive number, got '" + s + "'");
      einsum.search_work = *v;
    } else if (arg == "--strategy") {
      const std::string s = value(k);
      using tenferro::EinsumStrategy;
      if (s == "auto")
        einsum.strategy = EinsumStrategy::Auto;
      else if (s == "greedy")
        einsum.strategy = EinsumStrategy::Greedy;
      else if (s == "anneal")
        einsum.strategy = EinsumStrategy::Anneal;
      else if (s == "optimal")
        einsum.strategy = EinsumStrategy::Optimal;
      else
        throw Usage("--strategy is auto, greedy, anneal or optimal, got '" + s + "'");
    } else if (arg == "--dtype") {
      const std::string s = value(k);
      if (s == "f64")
        a.solve_options.dtype = tenferro::DType::F64;
      else if (s == "i64")
        a.solve_options.dtype = tenferro::DType::I64;
      else
        throw Usage("--dtype is f64 or i64, got '" + s + "'");
    } else if (arg == "--threads") {
      a.solve_options.threads = static_cast<int>(integer(arg, value(k), 0, 1024));
    } else if (arg == "--couplings" || arg == "--fields") {
      const std::string s = value(k);
      const auto d = spinglass_tool::parse_draw(s);
      if (arg == "--couplings" && d == spinglass_tool::Draw::Zero) {
        throw Usage("--couplings is pm1 or int9, got 'zero'");
      }
      (arg == "--couplings" ? a.couplings : a.fields) = d;
    } else if (arg == "--write") {
      a.write = value(k);
    } else if (arg == "--no-solve") {
      a.solve = false;
    } else if (arg == "--no-configuration") {
      a.solve_options.configuration = false;
    } else if (arg == "--no-second-order") {
      a.solve_options.second_order = false;
    } else if (arg == "--quiet") {
      a.quiet = true;
    } else if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      std::exit(0);
    } else if (arg.rfind("-", 0) == 0) {
      throw Usage("unknown option '" + arg + "'");
    } else if (a.file.empty()) {
      a.file = arg;
    } else {
      throw Usage("one instance file, got '" + a.file + "' and '" + arg + "'");
    }
  }
  if (a.file.empty() == a.generate.empty()) {
    throw Usage("give an instance FILE.json or --generate, not " +
                std::string(a.file.empty() ? "neither" : "both"));
  }
  if (!a.solve && a.write.empty()) throw Usage("--no-solve needs --write FILE");
  if (a.memory_limit > 0) einsum.memory_limit = a.memory_limit;
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  spinglass_tool::Instance inst;
  try {
    args = parse_args(argc, argv);
    if (!args.generate.empty()) {
      inst = args.generate == "square" ? spinglass_tool::generate_square(
                                             args.size, args.seed, args.couplings, args.fields)
                                       : spinglass_tool::generate_regular3(
                                             args.size, args.seed, args.couplings, args.fields);
    } else {
      inst = spinglass_tool::load_instance(args.file);
    }
    if (!args.write.empty()) {
      std::ofstream out(args.write);
      out << spinglass_tool::to_json(inst).dump() << "\n";
      if (!out) throw InstanceError(args.write + ": cannot write the instance");
    }
  } catch (const Usage& e) {
    std::cerr << "tenferro-spinglass: " << e.what() << "\n" << kUsage;
    return 2;
  } catch (const InstanceError& e) {
    std::cerr << "tenferro-spinglass: " << e.what() << "\n";
    return 2;
  }
  if (!args.solve) return 0;

  if (!args.quiet) {
    args.solve_options.progress = [&](const std::string& line) {
      std::cerr << "[tenferro-spinglass] " << inst.name << ": " << line << std::endl;
    };
  }
  spinglass_tool::Solution sol;
  try {
    sol = spinglass_tool::solve(inst, args.solve_options);
  } catch (const tenferro::Error& e) {
    std::cerr << "tenferro-spinglass: " << inst.name << ": " << e.what() << "\n";
    // A memory limit slicing cannot reach is a bad option.
    return e.kind() == tenferro::ErrorKind::InvalidArgument ? 2 : 1;
  } catch (const std::exception& e) {
    std::cerr << "tenferro-spinglass: " << inst.name << ": " << e.what() << "\n";
    return 1;
  }

  nlohmann::json out;
  out["name"] = inst.name;
  out["n"] = inst.n;
  out["edges"] = inst.edges.size();
  out["dtype"] = args.solve_options.dtype == tenferro::DType::I64 ? "i64" : "f64";
  out["ground_energy"] = sol.ground_energy;
  out["degeneracy"] = count_json(sol.degeneracy);
  if (!sol.configuration.empty()) out["configuration"] = sol.configuration;
  if (sol.energy_check) out["energy_check"] = *sol.energy_check;
  if (!sol.configuration.empty()) out["gradient_one_hot"] = sol.gradient_one_hot;
  if (sol.second_order_energy) {
    out["second_order_energy"] = *sol.second_order_energy;
    out["second_order_degeneracy"] = count_json(*sol.second_order_degeneracy);
    out["second_path_differs"] = sol.second_path_differs;
  }
  bool ok = sol.consistent();
  if (inst.ground_energy) {
    out["reference_ground_energy"] = *inst.ground_energy;
    ok = ok && *inst.ground_energy == sol.ground_energy;
  }
  if (inst.degeneracy) {
    out["reference_degeneracy"] = count_json(*inst.degeneracy);
    ok = ok && *inst.degeneracy == sol.degeneracy;
  }
  out["ok"] = ok;
  out["search_ms"] = sol.first.search_ms;
  out["contract_ms"] = sol.first.contract_ms;
  out["gradient_ms"] = sol.gradient_ms;
  out["order"] = order_json(sol.first);
  if (sol.second) out["second_order"] = order_json(*sol.second);
  if (sol.gradient_order) {
    out["gradient_order"] = order_json(*sol.gradient_order);
    out["gradient_order"]["differs_from_first"] = sol.gradient_order_differs;
    out["gradient_order"]["tape_bytes_estimate"] = sol.gradient_tape_bytes;
    out["gradient_order"]["slices_contracted"] = sol.gradient_slices_contracted;
  }
  if (args.solve_options.einsum.memory_limit) {
    out["memory_limit"] = *args.solve_options.einsum.memory_limit;
  } else {
    out["memory_limit"] = nullptr;
  }
  out["peak_rss_bytes"] = peak_rss_bytes();
  std::cout << out.dump() << std::endl;
  if (!ok) {
    std::cerr << "tenferro-spinglass: " << inst.name
              << ": a check failed (see energy_check, second_order_*, reference_*)\n";
  }
  return ok ? 0 : 1;
}
