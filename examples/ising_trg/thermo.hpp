#pragma once
// ln Z / N, the energy and the specific heat per site at one temperature,
// from TRG and tenferro's AD: first and second derivatives with respect to
// beta through every coarse-graining step, SVDs included.

#include "tenferro/tenferro.hpp"
#include "trg.hpp"

namespace ising {

struct Thermodynamics {
  double beta = 0;
  double log_z = 0;          // ln Z / N
  double free_energy = 0;    // f = -(ln Z / N) / beta
  double energy = 0;         // u = -d(ln Z/N)/d beta
  double specific_heat = 0;  // c = beta^2 d^2(ln Z/N)/d beta^2
};

/// Eager tier: each call runs TRG on a differentiable beta and takes the
/// Hessian-vector product jvp(grad) (forward over reverse) for the second
/// derivative.
class EagerTrg {
 public:
  EagerTrg(tenferro::EagerRuntimePtr runtime, TrgOptions options);
  Thermodynamics operator()(double beta, const StepCallback& on_step = {}) const;

 private:
  tenferro::EagerRuntimePtr runtime_;
  TrgOptions options_;
};

/// Traced tier: the coarse-graining is built once as a graph with beta as its
/// input, transformed (grad and hvp), compiled and prepared once; each call
/// only runs the prepared program.
class TracedTrg {
 public:
  /// Builds and prepares the program (on_step reports graph building).
  TracedTrg(tenferro::RuntimePtr runtime, TrgOptions options, const StepCallback& on_step = {});
  Thermodynamics operator()(double beta) const;
  /// Op nodes of the compiled program (ln Z, its gradient and its hvp).
  std::size_t node_count() const { return program_.node_count(); }

 private:
  tenferro::RuntimePtr runtime_;
  tenferro::Program program_;
  tenferro::PreparedProgram prepared_;
};

/// Thermodynamics from ln Z / N and its first two beta derivatives.
Thermodynamics thermodynamics(double beta, double log_z, double dlog_z, double d2log_z);

}  // namespace ising
