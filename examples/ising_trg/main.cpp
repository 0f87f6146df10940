// Differentiable tensor renormalisation of the 2D Ising model.
//
// The partition function of the Ising model on a periodic square lattice of
// 2^steps sites is a tensor network; TRG (Levin and Nave) coarse-grains it
// with truncated SVDs and einsum, and tenferro's AD differentiates ln Z / N
// with respect to beta through all of it: the first derivative gives the
// energy, the second the specific heat (Liao, Liu, Wang and Xiang, "Differentiable
// Programming Tensor Networks", Phys. Rev. X 9, 031041, 2019). The results are
// compared with Onsager's exact solution; a table goes to stdout, a CSV and a
// PNG plot (matplotlib) to --out.

#include <sys/resource.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "demo_output.hpp"
#include "onsager.hpp"
#include "thermo.hpp"
#ifdef ISING_TRG_DISTRIBUTED
#include <mpi.h>

#include <thread>

#include "trg_dist.hpp"
#endif

namespace tf = tenferro;

#ifndef ISING_PLOT_SCRIPT
#define ISING_PLOT_SCRIPT "plot.py"
#endif

namespace {

struct Config {
  ising::TrgOptions trg = [] {
    ising::TrgOptions o;
    o.chi = 16;
    return o;
  }();
  demo_io::DemoOptions demo{"ising_trg_output", ISING_PLOT_SCRIPT};
  int digits = 6;             // decimals of f, u and c in the table
  bool distributed = false;   // the TRG over the MPI ranks (trg_dist.hpp)
  bool check_single = false;  // --distributed: compare with the single-process TRG
  bool derivatives = true;    // --distributed: u and c by AD (--no-ad: f only)
};

// The distributed run's table must equal the single-process one to this
// (relative); --check-single exits 1 beyond it.
constexpr double kDistributedTolerance = 1e-10;

void usage(std::ostream& os) {
  os << "Usage: ising_trg [options]\n"
        "  --chi N            bond dimension of the truncated SVDs (default 16; the paper: 30)\n"
        "  --paper            the paper's setting: --chi 30\n"
        "  --steps N          coarse-graining steps, 2^N sites (default 20)\n"
     << demo_io::kTemperaturesHelp
     << "  --mode traced|eager  traced: one program (ln Z, grad, hvp) built and prepared once,\n"
        "                     run per temperature (default); eager: recomputed per temperature\n"
        "  --checkpoint [K]   traced mode: run every K RG steps (default K = 1) as one checkpoint\n"
        "                     region, so the gradient and HVP recompute each region's\n"
        "                     intermediates instead of keeping every step's (chi 32: 6.9 GB ->\n"
        "                     0.86 GB peak, about 1.75x the time; same results)\n"
     << demo_io::kThreadsHelp
     << "  --digits N         decimals of f, u and c in the table (default 6; 12 to compare runs\n"
        "                     to 1e-10)\n"
        "  --distributed      the TRG over the ranks of an MPI job (builds with MPI):\n"
        "                       mpirun -np P ising_trg --distributed [options]\n"
        "                     the network tensor and its split matrices sharded over the ranks,\n"
        "                     the truncated SVDs on ScaLAPACK, the contraction a dist::einsum;\n"
        "                     traced or eager as --mode; rank 0 prints the table of the\n"
        "                     single-process run and each rank's memory (largest local tensor,\n"
        "                     peak RSS, bytes sent); --threads defaults to the cores over the "
        "ranks\n"
        "  --no-ad            with --distributed: ln Z / N and f only (no derivatives)\n"
        "  --check-single     with --distributed: rank 0 also runs the single-process TRG (eager)\n"
        "                     and compares every table entry; exit status 1 when one differs by\n"
        "                     more than 1e-10 (relative)\n"
     << "  --out DIR          where ising_trg.csv, ising_trg_exact.csv and ising_trg.png go\n"
        "                     (default ./ising_trg_output)\n"
     << demo_io::kNoPlotHelp;
}

Config parse(int argc, char** argv) {
  Config c;
  demo_io::CommandLine args("ising_trg", usage, argc, argv);
  args.parse(c.demo, [&](const std::string& flag) {
    if (flag == "--chi") {
      c.trg.chi = args.integer();
    } else if (flag == "--paper") {
      c.trg.chi = 30;
    } else if (flag == "--steps") {
      c.trg.steps = args.integer();
    } else if (flag == "--digits") {
      c.digits = args.integer();
      if (c.digits < 1 || c.digits > 16) args.fail("--digits must be in [1, 16]");
    } else if (flag == "--distributed") {
#ifdef ISING_TRG_DISTRIBUTED
      c.distributed = true;
#else
      args.fail("--distributed needs tenferro's distributed layer: configure with MPI and "
                "ScaLAPACK (TENFERRO_WITH_MPI=ON, docs/distributed.md)");
#endif
    } else if (flag == "--no-ad") {
      c.derivatives = false;
    } else if (flag == "--check-single") {
      c.check_single = true;
    } else if (flag == "--checkpoint") {
      c.trg.checkpoint_steps = args.has_value() ? args.integer() : 1;
      if (c.trg.checkpoint_steps < 1) args.fail("--checkpoint K needs K >= 1 steps per region");
    } else {
      return false;
    }
    return true;
  });
  if (c.trg.chi < 2) args.fail("--chi must be at least 2");
  if (c.trg.steps < 1 || c.trg.steps > 60) args.fail("--steps must be in [1, 60]");
  if (c.trg.checkpoint_steps > 0 && !c.demo.traced) args.fail("--checkpoint needs --mode traced");
  if (c.trg.checkpoint_steps > 0 && c.distributed)
    args.fail("--checkpoint is not available with --distributed");
  if (c.check_single && !c.distributed) args.fail("--check-single needs --distributed");
  if (!c.derivatives && !c.distributed) args.fail("--no-ad needs --distributed");
  args.finish(c.demo);
  return c;
}

// One status line on stderr, redrawn in place on a terminal and printed once
// per temperature otherwise (CI logs).
class Progress {
 public:
  explicit Progress(std::size_t total) : total_(total), tty_(isatty(STDERR_FILENO) != 0) {}
  void show(std::size_t index, const std::string& what, bool final_line = false) {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    constexpr int kWidth = 24;
    const int filled = static_cast<int>(kWidth * index / std::max<std::size_t>(total_, 1));
    std::ostringstream line;
    line << "[" << std::string(filled, '#') << std::string(kWidth - filled, '.') << "] temperature "
         << std::min(index + 1, total_) << "/" << total_ << "  " << what << "  " << std::fixed
         << std::setprecision(1) << elapsed << " s";
    if (tty_) {
      std::cerr << "\r" << std::left << std::setw(96) << line.str() << (final_line ? "\n" : "")
                << std::flush;
    } else if (final_line || what.find("RG step") == std::string::npos) {
      std::cerr << line.str() << "\n";
    }
  }
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

 private:
  using Clock = std::chrono::steady_clock;
  std::size_t total_;
  bool tty_;
  Clock::time_point start_ = Clock::now();
};

// One value column of the table: `digits` decimals in a column that widens
// with them; "n/a" where the value was not computed.
std::string value_column(double v, int width, int digits) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << std::setw(width);
  if (std::isfinite(v)) {
    os << v;
  } else {
    os << "n/a";
  }
  return os.str();
}

std::string error_column(double got, double exact) {
  return std::isfinite(got) ? demo_io::error_column(got, exact) : "      n/a";
}

void print_table(const std::vector<ising::Thermodynamics>& results, int digits) {
  const int extra = digits - 6;  // the default's columns are 12 and 11 wide
  const std::string pad(static_cast<std::size_t>(std::max(extra, 0)), ' ');
  std::cout << std::fixed << "     T" << pad << "     f (TRG)" << pad << "    f (exact)  rel.err"
            << pad << "    u (AD)" << pad << "    u (exact)  rel.err" << pad << "    c (AD)" << pad
            << "    c (exact)  rel.err\n";
  const int wide = 12 + extra, narrow = 11 + extra;
  for (const auto& r : results) {
    const double t = 1.0 / r.beta;
    const double f_exact = ising::exact_free_energy(r.beta);
    const double u_exact = ising::exact_energy(r.beta);
    const double c_exact = ising::exact_specific_heat(r.beta);
    std::cout << std::fixed << std::setprecision(4) << std::setw(7) << t
              << value_column(r.free_energy, wide, digits) << value_column(f_exact, wide, digits)
              << error_column(r.free_energy, f_exact) << value_column(r.energy, narrow, digits)
              << value_column(u_exact, narrow, digits) << error_column(r.energy, u_exact)
              << value_column(r.specific_heat, narrow, digits)
              << value_column(c_exact, narrow, digits) << error_column(r.specific_heat, c_exact)
              << (std::abs(t - ising::critical_temperature()) < 0.05 ? "  (near Tc)" : "") << "\n";
  }
}

// CSV: one row per temperature, and the exact curves on a fine grid; the plot.
bool write_outputs(const Config& config, const std::vector<ising::Thermodynamics>& results) {
  const std::vector<double>& temps = config.demo.explicit_temperatures;
  return demo_io::write_csv_and_plot(
      config.demo, "ising_trg", config.trg.chi,
      [&](std::ostream& csv) {
        csv << "T,beta,f_trg,f_exact,u_trg,u_exact,c_trg,c_exact\n";
        for (const auto& r : results) {
          csv << 1.0 / r.beta << "," << r.beta << "," << r.free_energy << ","
              << ising::exact_free_energy(r.beta) << "," << r.energy << ","
              << ising::exact_energy(r.beta) << "," << r.specific_heat << ","
              << ising::exact_specific_heat(r.beta) << "\n";
        }
      },
      [&](std::ostream& exact) {
        exact << "T,u_exact,c_exact\n";
        for (double t : demo_io::exact_curve_temperatures(temps, ising::critical_temperature())) {
          exact << t << "," << ising::exact_energy(1 / t) << ","
                << ising::exact_specific_heat(1 / t) << "\n";
        }
      });
}

#ifdef ISING_TRG_DISTRIBUTED
double peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return 1024.0 * static_cast<double>(usage.ru_maxrss);  // Linux reports KiB
}

std::string mib(double bytes) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(bytes < 1024.0 * 1024 ? 3 : 1) << bytes / (1024.0 * 1024)
     << " MiB";
  return os.str();
}

// max |a - b| / |b| over the values both runs computed.
double relative_difference(const ising::Thermodynamics& a, const ising::Thermodynamics& b) {
  double worst = 0;
  const double pairs[3][2] = {
      {a.free_energy, b.free_energy}, {a.energy, b.energy}, {a.specific_heat, b.specific_heat}};
  for (const auto& [got, want] : pairs) {
    if (!std::isfinite(got)) continue;  // not computed (no AD)
    worst = std::max(worst, std::abs(got - want) / std::max(std::abs(want), 1e-300));
  }
  return worst;
}

// --distributed: every rank runs the TRG on its shards; rank 0 prints.
int run_distributed(const Config& config) {
  namespace dist = tenferro::dist;
  const demo_io::DemoOptions& demo = config.demo;
  const std::vector<double>& temps = demo.explicit_temperatures;
  dist::ensure_initialized();
  const dist::Mesh mesh = dist::Mesh::line();
  const int rank = mesh.comm().rank(), ranks = mesh.comm().size();
  const bool root = rank == 0;
  if (!root) std::cout.setstate(std::ios::failbit);  // only rank 0 prints
  tf::CpuBackendOptions backend_options;
  backend_options.num_threads =
      demo.threads > 0 ? demo.threads
                       : std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / ranks);
  auto backend = std::make_shared<tf::CpuBackend>(backend_options);
  auto runtime = tf::EagerRuntime::make(tf::Runtime::builder().backend(backend).build());

  std::cout << "Differentiable TRG for the 2D Ising model (J = 1, no field), on " << ranks
            << " MPI rank(s)\n"
            << "  bond dimension chi = " << config.trg.chi << ", " << config.trg.steps
            << " RG steps (2^" << config.trg.steps << " sites, periodic), " << temps.size()
            << " temperatures, " << (demo.traced ? "traced" : "eager") << " mode, "
            << backend->num_threads() << " thread(s) per rank\n"
            << "  the network tensor and its split matrices sharded over the ranks (1-D mesh),\n"
            << "  truncated SVDs on ScaLAPACK (block-cyclic, 1 x " << ranks
            << " grid), the plaquette contraction a dist::einsum;\n"
            << (config.derivatives
                    ? (demo.traced ? "  u and c by AD: dist::grad of ln Z and of its gradient, "
                                     "through the distributed ops, SVDs included\n"
                                   : "  u and c by AD: jvp(grad) through the distributed ops, "
                                     "SVDs included\n")
                    : "  f only (--no-ad)\n")
            << "  Critical temperature Tc = " << std::setprecision(6)
            << ising::critical_temperature() << "\n\n";

  std::optional<Progress> progress;
  if (root) progress.emplace(temps.size());
  const auto show = [&](std::size_t i, const std::string& what) {
    if (progress) progress->show(i, what);
  };
  std::optional<ising::DistributedTrg> eager;
  std::optional<ising::DistributedTracedTrg> traced;
  if (demo.traced) {
    traced.emplace(
        runtime->runtime(), mesh, config.trg, config.derivatives, [&](int step, int steps) {
          show(0,
               "building the graph: RG step " + std::to_string(step) + "/" + std::to_string(steps));
        });
    show(0, "program ready: " + std::to_string(traced->node_count()) + " nodes on rank 0");
  } else {
    eager.emplace(runtime, mesh, config.trg, config.derivatives);
  }
  dist::reset_comm_stats();
  std::vector<ising::Thermodynamics> results;
  ising::DistTrgMemory memory;
  for (std::size_t i = 0; i < temps.size(); ++i) {
    std::ostringstream at;
    at << "T = " << std::setprecision(4) << temps[i];
    if (traced) {
      show(i, at.str() + ": running the prepared program");
      results.push_back((*traced)(1.0 / temps[i]));
      memory = traced->memory();
    } else {
      results.push_back((*eager)(1.0 / temps[i], [&](int step, int steps) {
        show(i, "RG step " + std::to_string(step) + "/" + std::to_string(steps) + " (" + at.str() +
                    ")");
      }));
      if (eager->memory().largest_local_bytes >= memory.largest_local_bytes)
        memory = eager->memory();
    }
  }
  double seconds = 0;
  if (progress) {
    progress->show(temps.size(), "done", true);
    seconds = progress->elapsed();
  }

  print_table(results, config.digits);
  std::cout << "\n"
            << temps.size() << " temperatures in " << std::setprecision(1) << seconds << " s on "
            << ranks << " rank(s)\n";

  // Memory per rank: the largest local tensor and the peak RSS, gathered on rank 0.
  // Memory per rank: the largest local part of the TRG's tensors, the peak
  // RSS (with the transients inside the distributed ops) and the bytes sent.
  constexpr int kColumns = 3;
  const double mine[kColumns] = {static_cast<double>(memory.largest_local_bytes), peak_rss_bytes(),
                                 static_cast<double>(dist::comm_stats().bytes_sent)};
  std::vector<double> all(kColumns * static_cast<std::size_t>(ranks));
  MPI_Gather(mine, kColumns, MPI_DOUBLE, all.data(), kColumns, MPI_DOUBLE, 0, mesh.comm().handle());
  std::cout << "\nMemory per rank (the largest whole tensor, which one process holds: "
            << mib(static_cast<double>(memory.largest_global_bytes)) << "):\n"
            << "  rank  largest local part    peak RSS   bytes sent\n";
  for (int r = 0; r < ranks; ++r) {
    const double* row = &all[static_cast<std::size_t>(kColumns * r)];
    std::cout << std::setw(6) << r << std::setw(20) << mib(row[0]) << std::setw(12) << mib(row[1])
              << std::setw(13) << mib(row[2])
              << (r == 0 ? "  (rank 0's largest: " + memory.largest_local_what + ")" : "") << "\n";
  }

  int status = 0;
  if (config.check_single) {
    double worst = 0;
    if (root) {
      progress.emplace(temps.size());
      const ising::EagerTrg single(
          tf::EagerRuntime::make(tf::Runtime::builder().backend(backend).build()), config.trg);
      for (std::size_t i = 0; i < temps.size(); ++i) {
        progress->show(i, "the single-process TRG (--check-single)");
        worst = std::max(worst, relative_difference(results[i], single(1.0 / temps[i])));
      }
      progress->show(temps.size(), "single-process run done", true);
    }
    MPI_Bcast(&worst, 1, MPI_DOUBLE, 0, mesh.comm().handle());
    const bool same = worst <= kDistributedTolerance;
    std::cout << "\n--check-single: the table on " << ranks << " rank(s) "
              << (same ? "equals" : "DIFFERS FROM") << " the single-process run's to "
              << std::scientific << std::setprecision(0) << kDistributedTolerance
              << " (max relative difference " << std::setprecision(2) << worst << ")\n"
              << std::fixed;
    status = same ? 0 : 1;
  }
  if (root && !write_outputs(config, results)) status = 1;
  MPI_Bcast(&status, 1, MPI_INT, 0, mesh.comm().handle());
  return status;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  const Config config = parse(argc, argv);
  const demo_io::DemoOptions& demo = config.demo;
  const std::vector<double>& temps = demo.explicit_temperatures;
  try {
#ifdef ISING_TRG_DISTRIBUTED
    if (config.distributed) return run_distributed(config);
#endif
    tf::CpuBackendOptions backend_options;
    backend_options.num_threads = demo.threads;
    auto backend = std::make_shared<tf::CpuBackend>(backend_options);

    std::cout
        << "Differentiable TRG for the 2D Ising model (J = 1, no field)\n"
        << "  bond dimension chi = " << config.trg.chi << ", " << config.trg.steps
        << " RG steps (2^" << config.trg.steps << " sites, periodic), " << temps.size()
        << " temperatures, " << (demo.traced ? "traced" : "eager") << " mode, "
        << (config.trg.checkpoint_steps > 0
                ? "checkpoint regions of " + std::to_string(config.trg.checkpoint_steps) +
                      " step(s), "
                : std::string())
        << backend->num_threads() << " threads\n"
        << "  energy u = -d(ln Z/N)/d beta and specific heat c = beta^2 d^2(ln Z/N)/d beta^2\n"
        << "  by AD through every einsum and truncated SVD (no finite differences);\n"
        << "  SVD derivatives use GaugePolicy::Regularised (1/(s_i^2 - s_j^2) broadened by\n"
        << "  eta = " << config.trg.svd_options.eta
        << " times |s^2|), so the degenerate and zero singular values of the\n"
        << "  network (exact at the first step, common at low temperature) give finite "
           "derivatives.\n"
        << "  Exact values: Onsager (ln Z by Gauss-Kronrod quadrature, u and c from elliptic "
           "integrals).\n"
        << "  Critical temperature Tc = " << std::setprecision(6) << ising::critical_temperature()
        << "\n\n";

    Progress progress(temps.size());
    std::optional<ising::EagerTrg> eager;
    std::optional<ising::TracedTrg> traced;
    if (demo.traced) {
      auto runtime = tf::Runtime::builder().backend(backend).build();
      traced.emplace(runtime, config.trg, [&](int step, int steps) {
        progress.show(
            0, "building the graph: RG step " + std::to_string(step) + "/" + std::to_string(steps));
      });
      progress.show(
          0, "program ready: " + std::to_string(traced->node_count()) + " nodes (ln Z, grad, hvp)");
    } else {
      eager.emplace(tf::EagerRuntime::make(tf::Runtime::builder().backend(backend).build()),
                    config.trg);
    }

    std::vector<ising::Thermodynamics> results;
    for (std::size_t i = 0; i < temps.size(); ++i) {
      const double beta = 1.0 / temps[i];
      std::ostringstream at;
      at << "T = " << std::setprecision(4) << temps[i];
      if (traced) {
        progress.show(i, at.str() + ": running the prepared program");
        results.push_back((*traced)(beta));
      } else {
        results.push_back((*eager)(beta, [&](int step, int steps) {
          progress.show(i, "RG step " + std::to_string(step) + "/" + std::to_string(steps) + " (" +
                               at.str() + ", then the derivatives)");
        }));
      }
    }
    progress.show(temps.size(), "done", true);
    const double seconds = progress.elapsed();

    print_table(results, config.digits);
    std::cout << "\n"
              << temps.size() << " temperatures in " << std::setprecision(1) << seconds << " s\n";

    const bool written = write_outputs(config, results);
    if (!written) return 1;
  } catch (const tf::Error& e) {
    std::cerr << "\nising_trg: tenferro error (" << tf::name(e.kind()) << "): " << e.what() << "\n";
    return 1;
  }
  return 0;
}
