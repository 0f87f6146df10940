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
#include <iomanip>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "ctmrg_thermo.hpp"
#include "demo_output.hpp"
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
  demo_io::DemoOptions demo{"ctmrg_ising_output", CTMRG_PLOT_SCRIPT};
  bool memory_check = true;
};

void usage(std::ostream& os) {
  os << "Usage: ctmrg_ising [options]\n"
        "  --chi N            bond dimension of the environment (default 16)\n"
     << demo_io::kTemperaturesHelp
     << "  --tol X            convergence: max |update| of the unit-norm C and T (default 1e-10)\n"
        "  --max-iter N       CTMRG steps at most (default 2000)\n"
        "  --split X          relative term that splits the enlarged corner's degenerate\n"
        "                     eigenvalues (default 1e-5; docs/demo.md)\n"
        "  --cutoff X         projector columns of |eigenvalue| <= X times the largest are\n"
        "                     dropped (default 1e-3; keep it above --split)\n"
        "  --mode traced|eager  traced: one program (while_loop, fixed_point, grad, hvp) built\n"
        "                     and prepared once, run per temperature (default); eager: a plain\n"
        "                     loop, then the eager fixed_point for the derivatives\n"
        "  --no-memory-check  skip the peak-memory check against the iteration count\n"
     << demo_io::kThreadsHelp
     << "  --out DIR          where ctmrg_ising.csv, ctmrg_ising_exact.csv and ctmrg_ising.png\n"
        "                     go (default ./ctmrg_ising_output)\n"
     << demo_io::kNoPlotHelp;
}

Config parse(int argc, char** argv) {
  Config c;
  demo_io::CommandLine args("ctmrg_ising", usage, argc, argv);
  args.parse(c.demo, [&](const std::string& flag) {
    if (flag == "--chi") {
      c.solve.ctmrg.chi = args.integer();
    } else if (flag == "--tol") {
      c.solve.tol = args.number();
    } else if (flag == "--split") {
      c.solve.ctmrg.split = args.number();
    } else if (flag == "--cutoff") {
      c.solve.ctmrg.cutoff = args.number();
    } else if (flag == "--max-iter") {
      c.solve.max_iter = args.integer();
    } else if (flag == "--no-memory-check") {
      c.memory_check = false;
    } else {
      return false;
    }
    return true;
  });
  if (c.solve.ctmrg.chi < 2) args.fail("--chi must be at least 2");
  if (!(c.solve.tol > 0)) args.fail("--tol must be positive");
  if (c.solve.max_iter < 1) args.fail("--max-iter must be at least 1");
  args.finish(c.demo);
  return c;
}

// Peak resident set size of the process so far (getrusage; Linux: KiB).
double peak_rss_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
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
  const demo_io::DemoOptions& demo = config.demo;
  const std::vector<double>& temps = demo.explicit_temperatures;
  const Clock::time_point start = Clock::now();
  try {
    tf::CpuBackendOptions backend_options;
    backend_options.num_threads = demo.threads;
    auto backend = std::make_shared<tf::CpuBackend>(backend_options);
    auto runtime = tf::Runtime::builder().backend(backend).build();
    const ctmrg::CtmrgOptions& ctm = config.solve.ctmrg;

    std::cout
        << "CTMRG for the 2D Ising model (J = 1, no field), infinite lattice\n"
        << "  bond dimension chi = " << ctm.chi
        << ", converged when max |update| <= " << config.solve.tol << ", " << temps.size()
        << " temperatures, " << (demo.traced ? "traced" : "eager") << " mode, "
        << backend->num_threads() << " threads\n"
        << "  M and f from the environment at its fixed point (iterated in a "
        << (demo.traced ? "traced while_loop" : "plain loop") << "; below Tc from\n"
        << "  an all-up boundary); u = -d(ln Z/N)/d beta and c = beta^2 d^2(ln Z/N)/d beta^2 by\n"
        << "  AD through fixed_point (implicit differentiation, no unrolled iterations).\n"
        << "  Exact values: Onsager (M = (1 - sinh(2 beta)^-4)^(1/8) below Tc; ln Z by "
           "quadrature;\n"
        << "  u and c from elliptic integrals). Errors: relative (absolute for M = 0).\n"
        << "  Critical temperature Tc = " << std::setprecision(6) << ising::critical_temperature()
        << "\n\n";

    std::optional<ctmrg::EagerCtmrg> eager;
    std::optional<ctmrg::TracedCtmrg> traced;
    if (demo.traced) {
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
      const double m_exact = ising::exact_magnetisation(r.beta);
      const double f_exact = ising::exact_free_energy(r.beta);
      const double u_exact = ising::exact_energy(r.beta);
      const double c_exact = ising::exact_specific_heat(r.beta);
      std::cout << std::setprecision(4) << std::setw(7) << t << std::setw(6) << r.iterations
                << std::setprecision(8) << std::setw(13) << r.magnetisation << std::setw(12)
                << m_exact << demo_io::error_column(r.magnetisation, m_exact)
                << std::setprecision(8) << std::setw(13) << r.free_energy << std::setw(12)
                << f_exact << demo_io::error_column(r.free_energy, f_exact) << std::setprecision(6)
                << std::setw(11) << r.energy << std::setw(11) << u_exact
                << demo_io::error_column(r.energy, u_exact) << std::setw(11) << r.specific_heat
                << std::setw(11) << c_exact << demo_io::error_column(r.specific_heat, c_exact)
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

    // CSV: one row per temperature, and the exact curves on a fine grid; the plot.
    const bool written = demo_io::write_csv_and_plot(
        demo, "ctmrg_ising", ctm.chi,
        [&](std::ostream& csv) {
          csv << "T,beta,iterations,m_ctmrg,m_exact,f_ctmrg,f_exact,"
                 "u_ctmrg,u_exact,c_ctmrg,c_exact\n";
          for (const auto& r : results) {
            csv << 1.0 / r.beta << "," << r.beta << "," << r.iterations << "," << r.magnetisation
                << "," << ising::exact_magnetisation(r.beta) << "," << r.free_energy << ","
                << ising::exact_free_energy(r.beta) << "," << r.energy << ","
                << ising::exact_energy(r.beta) << "," << r.specific_heat << ","
                << ising::exact_specific_heat(r.beta) << "\n";
          }
        },
        [&](std::ostream& exact) {
          exact << "T,m_exact,f_exact,u_exact,c_exact\n";
          for (double t : demo_io::exact_curve_temperatures(temps, ising::critical_temperature())) {
            exact << t << "," << ising::exact_magnetisation(1 / t) << ","
                  << ising::exact_free_energy(1 / t) << "," << ising::exact_energy(1 / t) << ","
                  << ising::exact_specific_heat(1 / t) << "\n";
          }
        });
    if (!written) return 1;
    std::cout << "total run time " << std::setprecision(2) << seconds_since(start)
              << " s, peak RSS " << std::setprecision(1) << peak_rss_mb() << " MB\n";
  } catch (const tf::Error& e) {
    std::cerr << "\nctmrg_ising: tenferro error (" << tf::name(e.kind()) << "): " << e.what()
              << "\n";
    return 1;
  }
  return 0;
}
