#include "onsager.hpp"

#include <boost/math/constants/constants.hpp>
#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <boost/math/special_functions/ellint_1.hpp>
#include <boost/math/special_functions/ellint_2.hpp>
#include <cmath>
#include <limits>

namespace ising {
namespace {

constexpr double kPi = boost::math::constants::pi<double>();

// The elliptic modulus k = 2 sinh(2b) / cosh(2b)^2 (1 at the critical point).
double modulus(double beta) {
  const double ch = std::cosh(2 * beta);
  return std::min(1.0, 2 * std::sinh(2 * beta) / (ch * ch));
}

}  // namespace

double critical_temperature() {
  return 2.0 / std::log(1.0 + std::sqrt(2.0));
}

double exact_log_z(double beta) {
  const double k = modulus(beta);
  const auto integrand = [k](double t) {
    const double st = std::sin(t);
    return std::log((1.0 + std::sqrt(std::max(0.0, 1.0 - k * k * st * st))) / 2.0);
  };
  const double integral = boost::math::quadrature::gauss_kronrod<double, 61>::integrate(
      integrand, 0.0, kPi / 2, 15, 1e-14);
  return std::log(2.0 * std::cosh(2 * beta)) + integral / kPi;
}

double exact_free_energy(double beta) {
  return -exact_log_z(beta) / beta;
}

double exact_energy(double beta) {
  const double k = modulus(beta);
  const double t = std::tanh(2 * beta);
  const double q = 2 * t * t - 1;  // 0 at the critical point, where K(k) diverges
  const double kk = (k < 1.0) ? boost::math::ellint_1(k) : 0.0;
  return -(1.0 / t) * (1.0 + (2.0 / kPi) * q * kk);
}

double exact_specific_heat(double beta) {
  const double k = modulus(beta);
  if (k >= 1.0) return std::numeric_limits<double>::infinity();
  const double t = std::tanh(2 * beta);
  const double sech = 1.0 / std::cosh(2 * beta);
  const double sh = std::sinh(2 * beta);
  const double q = 2 * t * t - 1;
  const double kk = boost::math::ellint_1(k);
  const double ee = boost::math::ellint_2(k);
  const double dk_dmodulus = ee / (k * (1 - k * k)) - kk / k;
  const double dq = 8 * t * sech * sech;
  const double dmodulus = -4 * sech * q;
  const double du = 2 / (sh * sh) * (1 + (2 / kPi) * q * kk) -
                    (1 / t) * (2 / kPi) * (dq * kk + q * dk_dmodulus * dmodulus);
  return -beta * beta * du;
}

double exact_magnetisation(double beta) {
  if (beta * critical_temperature() <= 1.0) return 0.0;
  return std::pow(1.0 - std::pow(std::sinh(2 * beta), -4.0), 0.125);
}

}  // namespace ising
