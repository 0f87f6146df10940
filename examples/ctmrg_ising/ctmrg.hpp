#pragma once
// The corner transfer matrix renormalisation group (CTMRG; Nishino and
// Okunishi 1996) for the 2D classical Ising model, written once over
// tenferro's AD tensor types: the same functions build an eager computation
// (EagerTensor) or a traced graph (TracedTensor).
//
// The lattice's environment is one corner matrix C (chi x chi) and one edge
// tensor T (chi x 2 x chi), the same for the four corners and edges (the
// model is symmetric under the lattice's rotations and reflections). One
// step grows the corner by an edge on each side and a site and truncates it
// back to chi by its dominant eigenvectors; the environment at the fixed
// point of that map gives ln Z / N and the magnetisation per site of the
// infinite lattice.

#include <cstdint>
#include <span>
#include <vector>

#include "tenferro/tenferro.hpp"

namespace ctmrg {

struct CtmrgOptions {
  /// Bond dimension of the environment (C is chi x chi, T chi x 2 x chi).
  std::int64_t chi = 16;
  /// Relative size of the term that splits the enlarged corner's degenerate
  /// eigenvalues (see ctmrg_step): 0 turns it off.
  double split = 1e-5;
  /// Eigenvectors whose |eigenvalue| is at most cutoff times the largest are
  /// dropped (their projector columns set to zero; see ctmrg_step).
  double cutoff = 1e-3;
  /// AD options of the eigendecomposition: Regularised broadens the
  /// 1/(lambda_i - lambda_j) factors, so the exactly degenerate eigenvalues
  /// of the discarded part (zeros at the start, the split's floor) give finite
  /// derivatives.
  tenferro::linalg::SpectralOptions eigh_options = {tenferro::linalg::GaugePolicy::Regularised};
};

/// The site tensors of the Ising model at inverse temperature beta (rank 0):
/// A(l, u, r, d) = sum_s W(s, l) W(s, u) W(s, r) W(s, d) from the split bond
/// weight exp(beta s s') = sum_k W(s, k) W(s', k), and B the same with the
/// spin s inserted (its contraction in place of A gives <s>).
template <tenferro::AdTensor T>
struct SiteTensors {
  T a;
  T b;
};
template <tenferro::AdTensor T>
SiteTensors<T> site_tensors(const T& beta);

/// The environment of the iteration's start, padded with zeros to chi: the
/// lattice's boundary spins all up when `ordered` (a symmetry-broken
/// boundary, for the magnetised fixed point below Tc), summed over otherwise.
/// Entries: {C, T}, each of unit Frobenius norm.
template <tenferro::AdTensor T>
std::vector<T> initial_environment(const T& beta, const CtmrgOptions& options, bool ordered);

/// One CTMRG step, the map whose fixed point is the environment:
///   C~ = C T T A, the enlarged corner (2chi x 2chi, symmetric);
///   P  = its chi dominant eigenvectors (largest |eigenvalue|), each signed so
///        that its largest component is positive (linalg::canonical_phase);
///   C' = P^T C~ P, T' = P^T (T A) P, both divided by their Frobenius norms.
/// The corner's spectrum has exactly degenerate levels (Baxter: sums of
/// distinct integers in units of the level spacing), inside which eigh's
/// basis is arbitrary and the map has no fixed point elementwise. P is
/// therefore taken from C~ + split * max|C~| (1 (x) diag(0, 1)): that term
/// commutes with a change of the environment's basis, so the step stays a
/// function of the environment alone, and it splits the degenerate levels
/// along the new site's leg. The values it changes are O(split) on the
/// projector only.
/// Below the split's floor the eigenvectors are noise (at low temperature
/// the corner's spectrum falls below 1e-16 within a few values): columns of
/// P whose |eigenvalue| is at most cutoff times the largest are zero, so
/// those directions of the environment stay exactly zero and the rest has a
/// fixed point. cutoff should stay well above split: at 1e-4 the derivative
/// solves of chi = 32 near Tc stall (eigenvalues near the cutoff), at 1e-3
/// they converge, and f stays within 3e-12 of Onsager away from Tc.
/// env = {C, T}; a: the site tensor.
template <tenferro::AdTensor T>
std::vector<T> ctmrg_step(std::span<const T> env, const T& a, const CtmrgOptions& options);

/// ln Z / N of the infinite lattice from a converged environment: ln kappa,
/// kappa = Z1 Z4 / Z2^2 with Z1 the 3x3 network (corners, edges and one site
/// tensor), Z2 the 3x2 one without the site, Z4 the four corners.
template <tenferro::AdTensor T>
T log_z_per_site(std::span<const T> env, const T& a);

/// The magnetisation per site <s> = Z1(B) / Z1(A).
template <tenferro::AdTensor T>
T magnetisation(std::span<const T> env, const SiteTensors<T>& site);

/// max |x' - x| over both environment tensors (the fixed point's residual).
template <tenferro::AdTensor T>
T update_size(std::span<const T> next, std::span<const T> env);

}  // namespace ctmrg
