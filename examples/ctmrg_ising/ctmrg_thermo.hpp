#pragma once
// The CTMRG environment iterated to its fixed point and the thermodynamics
// it gives at one temperature: ln Z / N, the free energy and the
// magnetisation from the environment, the energy and the specific heat as
// the first and second beta derivatives of ln Z / N through the fixed point
// (implicit differentiation, tenferro::fixed_point), or, for comparison,
// through the unrolled iterations.

#include <cstdint>

#include "ctmrg.hpp"
#include "tenferro/tenferro.hpp"
#include "thermo.hpp"

namespace ctmrg {

struct SolveOptions {
  CtmrgOptions ctmrg;
  /// Converged when max |C' - C|, |T' - T| <= tol (C and T have unit norm).
  double tol = 1e-10;
  /// Iterations at most (NoConvergence after that).
  std::int64_t max_iter = 2000;
};

/// ln Z / N and its derivatives (ising::Thermodynamics), and what the
/// environment adds.
struct Thermodynamics : ising::Thermodynamics {
  double magnetisation = 0;     // <s> per site
  std::int64_t iterations = 0;  // CTMRG steps to convergence
  double residual = 0;          // the last step's max |update|
};

/// Whether beta is above the critical 1/Tc: the iteration then starts from
/// the ordered (all up) boundary and converges to the magnetised state.
bool ordered_phase(double beta);

/// How the eager tier takes the derivatives.
enum class Derivatives {
  /// tenferro::fixed_point at the converged environment (implicit function
  /// theorem): memory independent of the iteration count.
  Implicit,
  /// Every iteration recorded from the initial environment and
  /// differentiated through (as many iterations as the plain loop took).
  Unrolled,
};

/// Eager tier: the environment converges in a plain loop that records
/// nothing; the derivatives then come from `Derivatives`.
class EagerCtmrg {
 public:
  EagerCtmrg(tenferro::EagerRuntimePtr runtime, SolveOptions options);
  /// second_order false skips the specific heat (left 0).
  Thermodynamics operator()(double beta, Derivatives derivatives = Derivatives::Implicit,
                            bool second_order = true) const;

 private:
  tenferro::EagerRuntimePtr runtime_;
  SolveOptions options_;
};

/// Traced tier: one program with beta as its input, built, transformed and
/// prepared once: a while_loop iterates the environment to convergence, a
/// fixed_point at its result carries the implicit derivatives, grad and hvp
/// give the first and second derivative of ln Z / N.
class TracedCtmrg {
 public:
  TracedCtmrg(tenferro::RuntimePtr runtime, SolveOptions options);
  Thermodynamics operator()(double beta, tenferro::RunStats* stats = nullptr) const;
  std::size_t node_count() const { return program_.node_count(); }

 private:
  tenferro::RuntimePtr runtime_;
  tenferro::Program program_;
  tenferro::PreparedProgram prepared_;
};

}  // namespace ctmrg
