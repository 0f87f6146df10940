#pragma once
// Tensor renormalisation group (Levin and Nave) for the 2D classical Ising
// model, written once over tenferro's AD tensor types: the same function
// builds an eager computation (EagerTensor) or a traced graph (TracedTensor),
// and derivatives with respect to beta come from tenferro's AD through every
// einsum and truncated SVD.

#include <cstdint>
#include <functional>

#include "tenferro/tenferro.hpp"

namespace ising {

struct TrgOptions {
  /// Bond dimension kept by every truncated SVD.
  std::int64_t chi = 16;
  /// Coarse-graining steps: the lattice has 2^steps sites (periodic).
  int steps = 20;
  /// AD policy of the SVDs. Regularised (the default here) broadens the
  /// 1/(s_i^2 - s_j^2) factors, so degenerate or zero singular values (exact
  /// at the first step, and at low temperature) give finite derivatives.
  tenferro::linalg::SpectralOptions svd_options = {tenferro::linalg::GaugePolicy::Regularised};
  /// Traced tier only: 0 keeps every step's intermediates for the derivative
  /// passes; k > 0 runs each k consecutive RG steps as one checkpoint region,
  /// whose intermediates the gradient and HVP recompute instead of storing.
  /// Only the network tensors between regions are kept; values unchanged.
  int checkpoint_steps = 0;
};

/// Called after each coarse-graining step (1-based step, steps in all).
using StepCallback = std::function<void(int step, int steps)>;

/// ln Z / N of the Ising model (J = 1, no field) at inverse temperature
/// `beta` (a real scalar tensor, f64), on a periodic lattice of 2^steps
/// sites, approximated by TRG at bond dimension chi. checkpoint_steps > 0 is
/// InvalidArgument for the eager tier (checkpoint regions are traced).
template <tenferro::AdTensor T>
T log_z_per_site(const T& beta, const TrgOptions& options, const StepCallback& on_step = {});

// sqrt(s) for the singular values above a relative threshold, 0 for the
// rest. The network has exact zero singular values (the first tensor's
// splits have rank 2 of 4, and every rank below chi leaves some): their
// singular vectors are arbitrary, and with sqrt(s) ~ 1e-9 on either side
// they would leak O(1e-9) noise into the next tensor and its truncation.
// Masked, they stay exact zeros; the where() keeps sqrt's derivative away
// from s = 0 (the masked branch sees sqrt(1)).
template <tenferro::AdTensor T>
T root_of_kept(const T& s) {
  constexpr double kRelativeZero = 1e-12;
  const T largest = tenferro::slice(s, {0}, {1});
  const T kept = tenferro::gt(s, largest * kRelativeZero);
  return tenferro::where(kept, tenferro::sqrt(tenferro::where(kept, s, tenferro::ones_like(s))),
                         tenferro::zeros_like(s));
}

/// The bond dimensions of the network before each step and after the last:
/// 2, then min(chi, d^2) of the previous d (the rank the SVDs keep; shapes
/// only, so a traced program knows them when it is built).
std::vector<std::int64_t> bond_dimensions(const TrgOptions& options);

}  // namespace ising
