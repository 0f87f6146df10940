// The Ising TRG demo's physics, checked: Onsager's formulas against each
// other, TRG against Onsager away from the critical point, the AD derivatives
// against finite differences of the same network, the eager and traced
// tiers against each other, and checkpointed RG steps against plain ones.

#include <gtest/gtest.h>

#include <cmath>

#include "onsager.hpp"
#include "test_util.hpp"
#include "thermo.hpp"

namespace tf = tenferro;

namespace {

ising::TrgOptions small_network() {
  ising::TrgOptions o;
  o.chi = 8;
  o.steps = 14;
  return o;
}

double log_z_value(const tf::EagerRuntimePtr& rt, double beta, const ising::TrgOptions& o) {
  return ising::log_z_per_site(rt->tensor(tf::Tensor::scalar(beta)), o).item<double>();
}

TEST(Onsager, EnergyAndSpecificHeatAreTheDerivativesOfLogZ) {
  EXPECT_NEAR(ising::critical_temperature(), 2.269185314213022, 1e-12);
  for (double beta : {0.2, 0.35, 0.42, 0.47, 0.6, 1.0}) {
    const double h = 1e-5;
    const double u_fd = -(ising::exact_log_z(beta + h) - ising::exact_log_z(beta - h)) / (2 * h);
    EXPECT_NEAR(ising::exact_energy(beta), u_fd, 1e-8) << "beta " << beta;
    const double c_fd =
        -beta * beta * (ising::exact_energy(beta + h) - ising::exact_energy(beta - h)) / (2 * h);
    EXPECT_NEAR(ising::exact_specific_heat(beta), c_fd, 1e-6 * std::max(1.0, c_fd))
        << "beta " << beta;
  }
  // Limits: ln 2 at infinite temperature, 2 beta (all bonds aligned) at zero.
  EXPECT_NEAR(ising::exact_log_z(1e-6), std::log(2.0), 1e-9);
  EXPECT_NEAR(ising::exact_log_z(5.0) - 10.0, 0.0, 1e-8);
  EXPECT_NEAR(ising::exact_energy(5.0), -2.0, 1e-8);
  EXPECT_TRUE(std::isinf(ising::exact_specific_heat(1.0 / ising::critical_temperature())));
}

TEST(IsingTrg, FreeEnergyMatchesOnsagerAwayFromTheCriticalPoint) {
  auto rt = tf::EagerRuntime::make_cpu();
  for (double t : {1.5, 1.8, 3.0, 3.5}) {
    const double beta = 1.0 / t;
    const double f = -log_z_value(rt, beta, small_network()) / beta;
    const double f_exact = ising::exact_free_energy(beta);
    EXPECT_NEAR(f, f_exact, 1e-4) << "T " << t;
  }
}

TEST(IsingTrg, AdDerivativesMatchFiniteDifferencesOfTheSameNetwork) {
  auto rt = tf::EagerRuntime::make_cpu();
  const ising::EagerTrg eager(rt, small_network());
  for (double beta : {0.3, 0.6}) {
    const ising::Thermodynamics r = eager(beta);
    const double h = 1e-5;
    const double u_fd =
        -(log_z_value(rt, beta + h, small_network()) - log_z_value(rt, beta - h, small_network())) /
        (2 * h);
    EXPECT_NEAR(r.energy, u_fd, 1e-6) << "beta " << beta;
    EXPECT_NEAR(r.log_z, log_z_value(rt, beta, small_network()), 1e-13);
    // The second derivative against differences of the (AD) first derivative.
    const double hc = 1e-4;
    const double c_fd =
        -beta * beta * (eager(beta + hc).energy - eager(beta - hc).energy) / (2 * hc);
    EXPECT_NEAR(r.specific_heat, c_fd, 1e-5 * std::max(1.0, std::abs(c_fd))) << "beta " << beta;
    // And the network's energy is close to Onsager's away from Tc.
    EXPECT_NEAR(r.energy, ising::exact_energy(beta), 1e-3);
  }
}

TEST(IsingTrg, EagerAndTracedTiersAgree) {
  const ising::EagerTrg eager(tf::EagerRuntime::make_cpu(), small_network());
  int steps_reported = 0;
  const ising::TracedTrg traced(
      tf::Runtime::builder().backend(std::make_shared<tf::CpuBackend>()).build(), small_network(),
      [&](int, int) { ++steps_reported; });
  EXPECT_EQ(steps_reported, small_network().steps);
  EXPECT_GT(traced.node_count(), 100u);
  for (double beta : {0.35, 0.5}) {  // one prepared program, two temperatures
    const ising::Thermodynamics e = eager(beta);
    const ising::Thermodynamics t = traced(beta);
    EXPECT_NEAR(e.log_z, t.log_z, 1e-12);
    EXPECT_NEAR(e.energy, t.energy, 1e-10);
    EXPECT_NEAR(e.specific_heat, t.specific_heat, 1e-8);
  }
}

// --checkpoint: regions of 1 and of 3 steps (14 = 4 * 3 + 2, a shorter last
// region) give the plain program's ln Z, energy and specific heat.
TEST(IsingTrg, CheckpointRegionsGiveTheSameNumbers) {
  auto runtime = tf::Runtime::builder().backend(std::make_shared<tf::CpuBackend>()).build();
  const ising::TracedTrg plain(runtime, small_network());
  const auto same = [](double got, double want) {
    return std::abs(got - want) <= 1e-12 * std::abs(want);
  };
  for (int steps_per_region : {1, 3}) {
    ising::TrgOptions o = small_network();
    o.checkpoint_steps = steps_per_region;
    int steps_reported = 0;
    const ising::TracedTrg marked(runtime, o, [&](int, int) { ++steps_reported; });
    EXPECT_EQ(steps_reported, o.steps);
    EXPECT_LT(marked.node_count(), plain.node_count() / 10);      // the steps are regions
    const ising::Thermodynamics p = plain(0.5), m = marked(0.5);  // T = 2
    EXPECT_PRED2(same, m.log_z, p.log_z) << steps_per_region;
    EXPECT_PRED2(same, m.free_energy, p.free_energy) << steps_per_region;
    EXPECT_PRED2(same, m.energy, p.energy) << steps_per_region;
    EXPECT_PRED2(same, m.specific_heat, p.specific_heat) << steps_per_region;
  }
  // Checkpoint regions are traced: the eager tier refuses them.
  ising::TrgOptions o = small_network();
  o.checkpoint_steps = 1;
  EXPECT_TF_ERROR(ising::EagerTrg(tf::EagerRuntime::make_cpu(), o)(0.5),
                  tf::ErrorKind::InvalidArgument);
}

TEST(IsingTrg, BondDimensionsAndBadOptions) {
  ising::TrgOptions o;
  o.chi = 8;
  o.steps = 4;
  EXPECT_EQ(ising::bond_dimensions(o), (std::vector<std::int64_t>{2, 4, 8, 8, 8}));
  o.chi = 1;
  EXPECT_TF_ERROR(ising::bond_dimensions(o), tf::ErrorKind::InvalidArgument);  // chi = 1
  o.chi = 8;
  o.steps = 0;
  auto rt = tf::EagerRuntime::make_cpu();
  EXPECT_TF_ERROR(ising::log_z_per_site(rt->tensor(tf::Tensor::scalar(0.4)), o),
                  tf::ErrorKind::InvalidArgument);  // steps = 0
}

}  // namespace
