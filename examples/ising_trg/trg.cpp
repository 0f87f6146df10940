#include "trg.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace tf = tenferro;

namespace ising {

std::vector<std::int64_t> bond_dimensions(const TrgOptions& options) {
  if (options.chi < 2) {
    throw tf::Error(tf::ErrorKind::InvalidArgument, "ising_trg",
                    "ising TRG: chi must be at least 2 (got " + std::to_string(options.chi) + ")");
  }
  if (options.steps < 1 || options.steps > 60) {
    throw tf::Error(tf::ErrorKind::InvalidArgument, "ising_trg",
                    "ising TRG: steps must be in [1, 60] (got " + std::to_string(options.steps) +
                        "); 2^steps is the number of sites");
  }
  std::vector<std::int64_t> dims{2};
  for (int s = 0; s < options.steps; ++s)
    dims.push_back(std::min(options.chi, dims.back() * dims.back()));
  return dims;
}

namespace {

// sqrt(s) for the singular values above a relative threshold, 0 for the
// rest. The network has exact zero singular values (the first tensor's
// splits have rank 2 of 4, and every rank below chi leaves some): their
// singular vectors are arbitrary, and with sqrt(s) ~ 1e-9 on either side
// they would leak O(1e-9) noise into the next tensor and its truncation.
// Masked, they stay exact zeros; the where() keeps sqrt's derivative away
// from s = 0 (the masked branch sees sqrt(1)).
template <tf::AdTensor T>
T root_of_kept(const T& s) {
  constexpr double kRelativeZero = 1e-12;
  const T largest = tf::slice(s, {0}, {1});
  const T kept = tf::gt(s, largest * kRelativeZero);
  return tf::where(kept, tf::sqrt(tf::where(kept, s, tf::ones_like(s))), tf::zeros_like(s));
}

}  // namespace

template <tf::AdTensor T>
T log_z_per_site(const T& beta, const TrgOptions& options, const StepCallback& on_step) {
  const std::vector<std::int64_t> dims = bond_dimensions(options);
  // exp(beta s s') = sum_k W(s, k) W(s', k) with W = [[c, s], [c, -s]],
  // c = sqrt(cosh beta), s = sqrt(sinh beta): each bond is split between its
  // two sites, and the site tensor T(l, u, r, d) = sum_s W(s,l) W(s,u) W(s,r)
  // W(s,d) carries the four half-bonds of one spin.
  const T c = tf::sqrt(tf::cosh(beta));
  const T s = tf::sqrt(tf::sinh(beta));
  const T w = tf::stack({tf::stack({c, c}, 0), tf::stack({s, -s}, 0)}, 1);  // W[spin, k]
  T t = tf::einsum("ai,aj,ak,al->ijkl", {w, w, w, w});

  T log_z = tf::zeros_like(beta);
  tf::linalg::Truncation keep;
  keep.max_rank = options.chi;
  double weight = 1.0;  // 1 / 2^step: the sites each tensor stands for, per site
  for (int step = 0; step < options.steps; ++step) {
    // Normalise: T = norm * That, so ln Z gains ln(norm) per tensor.
    const T norm = tf::sqrt(tf::sum(t * t));
    t = t / norm;
    log_z = log_z + tf::log(norm) * weight;
    weight *= 0.5;

    const std::int64_t d = dims[static_cast<std::size_t>(step)];
    // Sublattice A splits T(l,u,r,d) between (l,u) and (r,d); sublattice B
    // between (u,r) and (d,l). Column-major reshapes need no copies for A.
    const auto a =
        tf::linalg::svd_truncated(tf::reshape(t, {d * d, d * d}), keep, options.svd_options);
    const auto b = tf::linalg::svd_truncated(
        tf::reshape(tf::permute(t, {1, 2, 3, 0}), {d * d, d * d}), keep, options.svd_options);
    const std::int64_t r = a.rank;
    const T f1 = tf::reshape(a.U * tf::reshape(root_of_kept(a.S), {1, r}), {d, d, r});  // (l, u, k)
    const T f3 =
        tf::reshape(tf::reshape(root_of_kept(a.S), {r, 1}) * a.Vh, {r, d, d});          // (k, r, d)
    const T f2 = tf::reshape(b.U * tf::reshape(root_of_kept(b.S), {1, r}), {d, d, r});  // (u, r, k)
    const T f4 =
        tf::reshape(tf::reshape(root_of_kept(b.S), {r, 1}) * b.Vh, {r, d, d});  // (k, d, l)
    // The four triangles around a plaquette (F3 of its top-left site, F4 of
    // the top-right, F1 of the bottom-right, F2 of the bottom-left) form the
    // tensor of the next, 45-degree rotated lattice with half as many sites.
    t = tf::einsum("atl,brt,mrc,lmd->abcd", {f3, f4, f1, f2});
    if (on_step) on_step(step + 1, options.steps);
  }
  // Close the last tensor on itself (periodic boundaries).
  return log_z + tf::log(tf::einsum("abab->", {t})) * weight;
}

template tf::EagerTensor log_z_per_site(const tf::EagerTensor&, const TrgOptions&,
                                        const StepCallback&);
template tf::TracedTensor log_z_per_site(const tf::TracedTensor&, const TrgOptions&,
                                         const StepCallback&);

}  // namespace ising
