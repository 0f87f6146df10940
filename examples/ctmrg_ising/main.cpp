// The corner transfer matrix renormalisation group (CTMRG) for the 2D Ising
// model, with derivatives through its fixed point.
//
// The environment of the infinite lattice (a corner matrix and an edge
// tensor of bond dimension chi) iterates to its fixed point in a traced
// while_loop; the magnetisation and the free energy per site follow from it.
// The energy and the specific heat are the first and second beta derivatives
// of ln Z / N through tenferro::fixed_point: the implicit function theorem at
// the fixed point, not backpropagation through the iterations, so memory does
// not grow with the iteration count (Liao, Liu, Wang and Xiang, Phys. Rev. X
// 9, 031041, 2019). Every figure is compared with Onsager's exact solution;
// a table goes to stdout, a CSV and a PNG plot (matplotlib) to --out.

#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ctmrg_thermo.hpp"
#include "onsager.hpp"

namespace tf = tenferro;

#ifndef CTMRG_PLOT_SCRIPT
#define CTMRG_PLOT_SCRIPT "plot.py"
#endif

namespace {

struct Config {
  ctmrg::SolveOptions solve = [] {
    ctmrg::SolveOptions o;
    o.ctmrg.chi = 16;
    return o;
  }();
  double t_min = 1.6;
  double t_max = 3.2;
  int temperatures = 17;
  std::vector<double> explicit_temperatures;
  bool traced = true;
  int threads = 0;
  std::string out = "ctmrg_ising_output";
  bool plot = true;
  bool memory_check = true;
  std::string plot_script = CTMRG_PLOT_SCRIPT;
};

void usage(std::ostream& os) {
  os << "Usage: ctmrg_ising [options]\n"
        "  --chi N            bond dimension of the environment (default 16)\n"
        "  --t-min T --t-max T --temps N\n"
        "                     N temperatures evenly from T-min to T-max (default 1.6, 3.2, 17)\n"
        "  --temperatures a,b,...  explicit temperatures instead\n"
        "  --tol X            convergence: max |update| of the unit-norm C and T (default 1e-10)\n"
        "  --max-iter N       CTMRG steps at most (default 2000)\n"
        "  --split X          relative term that splits the enlarged corner's degenerate\n"
        "                     eigenvalues (default 1e-5; docs/demo.md)\n"
        "  --cutoff X         projector columns of |eigenvalue| <= X times the largest are\n"
        "                     dropped (default 1e-3; keep it above --split)\n"
        "  --mode traced|eager  traced: one program (while_loop, fixed_point, grad, hvp) built\n"
        "                     and prepared once, run per temperature (default); eager: a plain\n"
        "                     loop, then the eager fixed_point for the derivatives\n"
        "  --no-memory-check  skip the peak-memory check against the iteration count\n"
        "  --threads N        CPU threads (default: all cores)\n"
        "  --out DIR          where ctmrg_ising.csv, ctmrg_ising_exact.csv and ctmrg_ising.png\n"
        "                     go (default ./ctmrg_ising_output)\n"
        "  --no-plot          skip the matplotlib plot\n";
}

[[noreturn]] void bad_flag(const std::string& message) {
  std::cerr << "ctmrg_ising: " << message << "\n\n";
  usage(std::cerr);
  std::exit(2);
}

double parse_number(const std::string& flag, const std::string& text) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used != text.size() || !std::isfinite(v)) throw std::invalid_argument(text);
    return v;
  } catch (const std::exception&) {
    bad_flag(flag + " expects a number, got '" + text + "'");
  }
}

int parse_int(const std::string& flag, const std::string& text) {
  const double v = parse_number(flag, text);
  if (v != std::floor(v) || std::abs(v) > 1e9)
    bad_flag(flag + " expects an integer, got '" + text + "'");
  return static_cast<int>(v);
}

Config parse(int argc, char** argv) {
  Config c;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) bad_flag(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--help" || flag == "-h") {
      usage(std::cout);
      std::exit(0);
    } else if (flag == "--chi") {
      c.solve.ctmrg.chi = parse_int(flag, value());
    } else if (flag == "--t-min") {
      c.t_min = parse_number(flag, value());
    } else if (flag == "--t-max") {
      c.t_max = parse_number(flag, value());
    } else if (flag == "--temps") {
      c.temperatures = parse_int(flag, value());
    } else if (flag == "--temperatures") {
      std::stringstream list(value());
      for (std::string item; std::getline(list, item, ',');) {
        c.explicit_temperatures.push_back(parse_number(flag, item));
      }
    } else if (flag == "--tol") {
      c.solve.tol = parse_number(flag, value());
    } else if (flag == "--split") {
      c.solve.ctmrg.split = parse_number(flag, value());
    } else if (flag == "--cutoff") {
      c.solve.ctmrg.cutoff = parse_number(flag, value());
    } else if (flag == "--max-iter") {
      c.solve.max_iter = parse_int(flag, value());
    } else if (flag == "--mode") {
      const std::string mode = value();
      if (mode != "traced" && mode != "eager")
        bad_flag("--mode is traced or eager, got '" + mode + "'");
      c.traced = mode == "traced";
    } else if (flag == "--no-memory-check") {
      c.memory_check = false;
    } else if (flag == "--threads") {
      c.threads = parse_int(flag, value());
      if (c.threads < 0) bad_flag("--threads must be >= 0 (0: all cores)");
    } else if (flag == "--out") {
      c.out = value();
    } else if (flag == "--no-plot") {
      c.plot = false;
    } else if (flag == "--plot-script") {
      c.plot_script = value();
    } else {
      bad_flag("unknown option '" + flag + "'");
    }
  }
  if (c.solve.ctmrg.chi < 2) bad_flag("--chi must be at least 2");
  if (!(c.solve.tol > 0)) bad_flag("--tol must be positive");
  if (c.solve.max_iter < 1) bad_flag("--max-iter must be at least 1");
  if (c.explicit_temperatures.empty()) {
    if (c.temperatures < 1) bad_flag("--temps must be at least 1");
    if (!(c.t_min > 0) || !(c.t_max >= c.t_min)) bad_flag("need 0 < --t-min <= --t-max");
    for (int i = 0; i < c.temperatures; ++i) {
      const double frac = c.temperatures == 1 ? 0.0 : static_cast<double>(i) / (c.temperatures - 1);
      c.explicit_temperatures.push_back(c.t_min + frac * (c.t_max - c.t_min));
    }
  }
  for (double t : c.explicit_temperatures) {
    if (!(t > 0)) bad_flag("temperatures must be positive");
  }
  return c;
}

// Peak resident set size of the process so far (getrusage; Linux: KiB).
double peak_rss_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

double exact_magnetisation(double beta) {
  if (!ctmrg::ordered_phase(beta)) return 0.0;
  return std::pow(1.0 - std::pow(std::sinh(2 * beta), -4.0), 0.125);
}

double exact_free_energy(double beta) {
  return -ising::exact_log_z(beta) / beta;
}

// |got - exact| / |exact|, or the absolute error where the exact value is 0
// (the magnetisation above Tc).
std::string error_of(double got, double exact) {
  if (!std::isfinite(exact)) return "      n/a";
  std::ostringstream os;
  const double scale = exact == 0 ? 1.0 : std::abs(exact);
  os << std::scientific << std::setprecision(1) << std::setw(9) << std::abs(got - exact) / scale;
  return os.str();
}

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The same prepared kind of program at two tolerances: more iterations, the
// same peak of live values and no growth of the process's peak RSS.
void memory_check(const tf::RuntimePtr& runtime, const Config& config, double temperature) {
  std::cout << "\nPeak memory against the iteration count (traced program, T = " << temperature
            << ", chi = " << config.solve.ctmrg.chi << "):\n"
            << "     tol  iterations  peak live values  peak RSS (MB)\n";
  for (double tol : {1e-4, 1e-10}) {
    ctmrg::SolveOptions o = config.solve;
    o.tol = tol;
    const ctmrg::TracedCtmrg program(runtime, o);
    tf::RunStats stats;
    const ctmrg::Thermodynamics r = program(1.0 / temperature, &stats);
    std::cout << std::scientific << std::setprecision(0) << std::setw(8) << tol << std::fixed
              << std::setw(12) << r.iterations << std::setw(18) << stats.peak_live_values
              << std::setprecision(1) << std::setw(15) << peak_rss_mb() << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Config config = parse(argc, argv);
  const std::vector<double>& temps = config.explicit_temperatures;
  const Clock::time_point start = Clock::now();
  try {
    tf::CpuBackendOptions backend_options;
    backend_options.num_threads = config.threads;
    auto backend = std::make_shared<tf::CpuBackend>(backend_options);
    auto runtime = tf::Runtime::builder().backend(backend).build();
    const ctmrg::CtmrgOptions& ctm = config.solve.ctmrg;

    std::cout
        << "CTMRG for the 2D Ising model (J = 1, no field), infinite lattice\n"
        << "  bond dimension chi = " << ctm.chi
        << ", converged when max |update| <= " << config.solve.tol << ", " << temps.size()
        << " temperatures, " << (config.traced ? "traced" : "eager") << " mode, "
        << backend->num_threads() << " threads\n"
        << "  M and f from the environment at its fixed point (iterated in a "
        << (config.traced ? "traced while_loop" : "plain loop") << "; below Tc from\n"
        << "  an all-up boundary); u = -d(ln Z/N)/d beta and c = beta^2 d^2(ln Z/N)/d beta^2 by\n"
        << "  AD through fixed_point (implicit differentiation, no unrolled iterations).\n"
        << "  Exact values: Onsager (M = (1 - sinh(2 beta)^-4)^(1/8) below Tc; ln Z by "
           "quadrature;\n"
        << "  u and c from elliptic integrals). Errors: relative (absolute for M = 0).\n"
        << "  Critical temperature Tc = " << std::setprecision(6) << ising::critical_temperature()
        << "\n\n";

    std::optional<ctmrg::EagerCtmrg> eager;
    std::optional<ctmrg::TracedCtmrg> traced;
    if (config.traced) {
      traced.emplace(runtime, config.solve);
      std::cerr << "program ready: " << traced->node_count()
                << " nodes (while_loop, fixed_point, grad, hvp) in " << std::setprecision(2)
                << seconds_since(start) << " s\n";
    } else {
      eager.emplace(tf::EagerRuntime::make(runtime), config.solve);
    }

    std::vector<ctmrg::Thermodynamics> results;
    for (std::size_t i = 0; i < temps.size(); ++i) {
      const double beta = 1.0 / temps[i];
      const Clock::time_point at = Clock::now();
      results.push_back(traced ? (*traced)(beta) : (*eager)(beta));
      std::cerr << "T = " << std::setprecision(4) << temps[i] << ": " << results.back().iterations
                << " iterations, " << std::setprecision(2) << seconds_since(at) << " s\n";
    }
    const double seconds = seconds_since(start);

    std::cout << "     T  iter     M (CTMRG)   M (exact)    error    f (CTMRG)   f (exact)  "
                 "rel.err    u (AD)    u (exact)  rel.err    c (AD)    c (exact)  rel.err\n";
    std::cout << std::fixed;
    for (const auto& r : results) {
      const double t = 1.0 / r.beta;
      const double m_exact = exact_magnetisation(r.beta);
      const double f_exact = exact_free_energy(r.beta);
      const double u_exact = ising::exact_energy(r.beta);
      const double c_exact = ising::exact_specific_heat(r.beta);
      std::cout << std::setprecision(4) << std::setw(7) << t << std::setw(6) << r.iterations
                << std::setprecision(8) << std::setw(13) << r.magnetisation << std::setw(12)
                << m_exact << error_of(r.magnetisation, m_exact) << std::setprecision(8)
                << std::setw(13) << r.free_energy << std::setw(12) << f_exact
                << error_of(r.free_energy, f_exact) << std::setprecision(6) << std::setw(11)
                << r.energy << std::setw(11) << u_exact << error_of(r.energy, u_exact)
                << std::setw(11) << r.specific_heat << std::setw(11) << c_exact
                << error_of(r.specific_heat, c_exact)
                << (std::abs(t - ising::critical_temperature()) < 0.05 ? "  (near Tc)" : "")
                << "\n";
    }
    std::cout << "\n"
              << temps.size() << " temperatures in " << std::setprecision(2) << seconds
              << " s (program building included); peak RSS " << std::setprecision(1)
              << peak_rss_mb() << " MB\n";

    if (config.memory_check) {
      // Near Tc the iteration is slowest: the largest spread of iteration counts.
      memory_check(runtime, config, 2.4);
    }

    // CSV: one row per temperature, and the exact curves on a fine grid.
    std::filesystem::create_directories(config.out);
    const std::filesystem::path out(config.out);
    {
      std::ofstream csv(out / "ctmrg_ising.csv");
      csv << "T,beta,iterations,m_ctmrg,m_exact,f_ctmrg,f_exact,u_ctmrg,u_exact,c_ctmrg,c_exact\n"
          << std::setprecision(12);
      for (const auto& r : results) {
        csv << 1.0 / r.beta << "," << r.beta << "," << r.iterations << "," << r.magnetisation << ","
            << exact_magnetisation(r.beta) << "," << r.free_energy << ","
            << exact_free_energy(r.beta) << "," << r.energy << "," << ising::exact_energy(r.beta)
            << "," << r.specific_heat << "," << ising::exact_specific_heat(r.beta) << "\n";
      }
      std::ofstream exact(out / "ctmrg_ising_exact.csv");
      exact << "T,m_exact,f_exact,u_exact,c_exact\n" << std::setprecision(12);
      const double lo = std::min(temps.front(), temps.back()) * 0.9;
      const double hi = std::max(temps.front(), temps.back()) * 1.05;
      for (int k = 0; k <= 600; ++k) {
        const double t = lo + (hi - lo) * k / 600.0;
        if (std::abs(t - ising::critical_temperature()) < 1e-9) continue;
        exact << t << "," << exact_magnetisation(1 / t) << "," << exact_free_energy(1 / t) << ","
              << ising::exact_energy(1 / t) << "," << ising::exact_specific_heat(1 / t) << "\n";
      }
      if (!csv || !exact) {
        std::cerr << "ctmrg_ising: could not write the CSV files in " << config.out << "\n";
        return 1;
      }
    }
    std::cout << "wrote " << (out / "ctmrg_ising.csv").string() << " and "
              << (out / "ctmrg_ising_exact.csv").string() << "\n";

    if (config.plot) {
      const std::string png = (out / "ctmrg_ising.png").string();
      const std::string command = "/usr/bin/python3 '" + config.plot_script + "' '" + out.string() +
                                  "' '" + std::to_string(ctm.chi) + "' '" + png + "'";
      if (std::system(command.c_str()) == 0) {
        std::cout << "wrote " << png << "\n";
      } else {
        std::cout
            << "plot skipped: it needs /usr/bin/python3 with matplotlib (Debian: apt-get install "
               "python3-matplotlib); the CSV files have the numbers\n";
      }
    }
    std::cout << "total run time " << std::setprecision(2) << seconds_since(start)
              << " s, peak RSS " << std::setprecision(1) << peak_rss_mb() << " MB\n";
  } catch (const tf::Error& e) {
    std::cerr << "\nctmrg_ising: tenferro error (" << tf::name(e.kind()) << "): " << e.what()
              << "\n";
    return 1;
  }
  return 0;
}
