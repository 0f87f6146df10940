#pragma once
// Onsager's exact solution of the 2D Ising model on the infinite square
// lattice (J = 1, k_B = 1, no field), per site.

namespace ising {

/// The critical temperature 2 / ln(1 + sqrt 2) = 2.26918...
double critical_temperature();

/// ln Z / N at inverse temperature beta > 0, by numerical integration of
/// ln Z/N = ln(2 cosh 2b) + (1/pi) int_0^{pi/2} ln((1 + sqrt(1 - k^2 sin^2 t)) / 2) dt
/// with k = 2 sinh(2b) / cosh(2b)^2 (Gauss-Kronrod, Boost.Math).
double exact_log_z(double beta);

/// Free energy per site f = -(ln Z/N) / beta.
double exact_free_energy(double beta);

/// Energy per site u = -d(ln Z/N)/d beta, from the complete elliptic
/// integral of the first kind: u = -coth(2b) (1 + (2/pi)(2 tanh^2(2b) - 1) K(k)).
double exact_energy(double beta);

/// Specific heat per site c = beta^2 d^2(ln Z/N)/d beta^2 = -beta^2 du/d beta,
/// differentiating the energy's closed form (dK/dk = E/(k(1-k^2)) - K/k).
/// Infinite at the critical point (a logarithmic divergence).
double exact_specific_heat(double beta);

/// Spontaneous magnetisation per site (Yang): (1 - sinh(2b)^-4)^(1/8) below
/// the critical temperature, 0 above.
double exact_magnetisation(double beta);

}  // namespace ising
