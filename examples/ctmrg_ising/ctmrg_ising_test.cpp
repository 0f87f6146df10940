// The CTMRG demo's physics, checked: the environment's magnetisation and
// free energy and the derivatives through its fixed point against Onsager
// away from Tc, the implicit derivatives against backpropagation through the
// unrolled iterations, the eager and traced tiers against each other, and
// the traced program's peak of live values against the iteration count.

#include <gtest/gtest.h>

#include <cmath>

#include "ctmrg_thermo.hpp"
#include "onsager.hpp"
#include "test_util.hpp"

namespace tf = tenferro;

namespace {

ctmrg::SolveOptions small_environment() {
  ctmrg::SolveOptions o;
  o.ctmrg.chi = 8;
  return o;
}

tf::RuntimePtr cpu_runtime() {
  return tf::Runtime::builder().backend(std::make_shared<tf::CpuBackend>()).build();
}

// Measured at chi = 8, T = 1.8 and 3.0: errors up to 1.7e-11 (M), 7.9e-13
// (f, relative), 7e-11 (u) and 8e-10 (c); the bounds leave about two orders
// of margin.
TEST(Ctmrg, ObservablesMatchOnsagerAwayFromTheCriticalPoint) {
  const ctmrg::EagerCtmrg eager(tf::EagerRuntime::make_cpu(), small_environment());
  for (double t : {1.8, 3.0}) {
    const double beta = 1.0 / t;
    const ctmrg::Thermodynamics r = eager(beta);
    EXPECT_LE(r.residual, small_environment().tol) << "T " << t;
    EXPECT_NEAR(r.magnetisation, ising::exact_magnetisation(beta), 1e-9) << "T " << t;
    const double f_exact = ising::exact_free_energy(beta);
    EXPECT_NEAR(r.free_energy, f_exact, 1e-10 * std::abs(f_exact)) << "T " << t;
    EXPECT_NEAR(r.energy, ising::exact_energy(beta), 1e-8) << "T " << t;
    EXPECT_NEAR(r.specific_heat, ising::exact_specific_heat(beta), 1e-7) << "T " << t;
  }
  // Below Tc the magnetisation is the spontaneous one, above it vanishes.
  EXPECT_GT(eager(1.0 / 1.8).magnetisation, 0.95);
}

// Implicit differentiation at the fixed point against reverse mode through
// every iteration from the initial environment (as many as the plain loop
// took): the energy to 1e-8 and, through forward-over-reverse, the specific
// heat.
TEST(Ctmrg, ImplicitDerivativesEqualUnrolledBackpropagation) {
  const ctmrg::EagerCtmrg eager(tf::EagerRuntime::make_cpu(), small_environment());
  const double beta = 1.0 / 2.0;
  const ctmrg::Thermodynamics implicit = eager(beta, ctmrg::Derivatives::Implicit);
  const ctmrg::Thermodynamics unrolled = eager(beta, ctmrg::Derivatives::Unrolled);
  EXPECT_EQ(implicit.iterations, unrolled.iterations);
  EXPECT_GT(implicit.iterations, 50);
  EXPECT_NEAR(implicit.log_z, unrolled.log_z, 1e-13);
  EXPECT_NEAR(implicit.energy, unrolled.energy, 1e-8);
  EXPECT_NEAR(implicit.specific_heat, unrolled.specific_heat, 1e-6);
}

TEST(Ctmrg, EagerAndTracedTiersAgree) {
  const ctmrg::EagerCtmrg eager(tf::EagerRuntime::make_cpu(), small_environment());
  const ctmrg::TracedCtmrg traced(cpu_runtime(), small_environment());
  for (double t : {1.8, 3.0}) {  // one prepared program, both phases
    const ctmrg::Thermodynamics e = eager(1.0 / t);
    const ctmrg::Thermodynamics p = traced(1.0 / t);
    EXPECT_EQ(e.iterations, p.iterations) << "T " << t;
    EXPECT_NEAR(e.log_z, p.log_z, 1e-12) << "T " << t;
    EXPECT_NEAR(e.magnetisation, p.magnetisation, 1e-12) << "T " << t;
    EXPECT_NEAR(e.energy, p.energy, 1e-10) << "T " << t;
    EXPECT_NEAR(e.specific_heat, p.specific_heat, 1e-8) << "T " << t;
  }
}

// A tighter tolerance runs more iterations with the same peak of live values:
// neither the while_loop nor fixed_point's implicit solves keep iterations.
TEST(Ctmrg, PeakLiveValuesDoNotGrowWithTheIterationCount) {
  const auto runtime = cpu_runtime();
  ctmrg::SolveOptions loose = small_environment(), tight = small_environment();
  loose.tol = 1e-4;
  tight.tol = 1e-12;
  tf::RunStats loose_stats, tight_stats;
  const ctmrg::Thermodynamics a = ctmrg::TracedCtmrg(runtime, loose)(1.0 / 2.4, &loose_stats);
  const ctmrg::Thermodynamics b = ctmrg::TracedCtmrg(runtime, tight)(1.0 / 2.4, &tight_stats);
  EXPECT_GT(b.iterations, 2 * a.iterations);
  EXPECT_EQ(loose_stats.peak_live_values, tight_stats.peak_live_values);
}

TEST(Ctmrg, BadOptions) {
  ctmrg::SolveOptions o = small_environment();
  o.ctmrg.chi = 1;
  EXPECT_TF_ERROR(ctmrg::EagerCtmrg(tf::EagerRuntime::make_cpu(), o)(0.5),
                  tf::ErrorKind::InvalidArgument);  // chi = 1
  o = small_environment();
  o.max_iter = 3;
  EXPECT_TF_ERROR(ctmrg::EagerCtmrg(tf::EagerRuntime::make_cpu(), o)(0.5),
                  tf::ErrorKind::NoConvergence);  // in 3 iterations
}

}  // namespace
