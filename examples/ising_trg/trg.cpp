#include "trg.hpp"

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <type_traits>
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

// One coarse-graining step of the network tensor t (bond dimension d, the
// site weight 1/2^step): ln Z / N gains ln(norm t) / 2^step, t becomes the
// tensor of the lattice with half as many sites.
template <tf::AdTensor T>
void rg_step(T& t, T& log_z, int step, std::int64_t d, const TrgOptions& options) {
  tf::linalg::Truncation keep;
  keep.max_rank = options.chi;
  // Normalise: T = norm * That, so ln Z gains ln(norm) per tensor.
  const T norm = tf::sqrt(tf::sum(t * t));
  t = t / norm;
  log_z = log_z + tf::log(norm) * std::ldexp(1.0, -step);

  // Sublattice A splits T(l,u,r,d) between (l,u) and (r,d); sublattice B
  // between (u,r) and (d,l). Column-major reshapes need no copies for A.
  const auto a =
      tf::linalg::svd_truncated(tf::reshape(t, {d * d, d * d}), keep, options.svd_options);
  const auto b = tf::linalg::svd_truncated(
      tf::reshape(tf::permute(t, {1, 2, 3, 0}), {d * d, d * d}), keep, options.svd_options);
  const std::int64_t r = a.rank;
  const T f1 = tf::reshape(a.U * tf::reshape(root_of_kept(a.S), {1, r}), {d, d, r});   // (l, u, k)
  const T f3 = tf::reshape(tf::reshape(root_of_kept(a.S), {r, 1}) * a.Vh, {r, d, d});  // (k, r, d)
  const T f2 = tf::reshape(b.U * tf::reshape(root_of_kept(b.S), {1, r}), {d, d, r});   // (u, r, k)
  const T f4 = tf::reshape(tf::reshape(root_of_kept(b.S), {r, 1}) * b.Vh, {r, d, d});  // (k, d, l)
  // The four triangles around a plaquette (F3 of its top-left site, F4 of
  // the top-right, F1 of the bottom-right, F2 of the bottom-left) form the
  // tensor of the next, 45-degree rotated lattice with half as many sites.
  t = tf::einsum("atl,brt,mrc,lmd->abcd", {f3, f4, f1, f2});
}

}  // namespace

template <tf::AdTensor T>
T log_z_per_site(const T& beta, const TrgOptions& options, const StepCallback& on_step) {
  const std::vector<std::int64_t> dims = bond_dimensions(options);
  constexpr bool kTraced = std::is_same_v<T, tf::TracedTensor>;
  if (options.checkpoint_steps < 0 || (!kTraced && options.checkpoint_steps > 0)) {
    throw tf::Error(tf::ErrorKind::InvalidArgument, "ising_trg",
                    "ising TRG: checkpoint_steps must be >= 0, and 0 in the eager tier (got " +
                        std::to_string(options.checkpoint_steps) + ")");
  }
  // exp(beta s s') = sum_k W(s, k) W(s', k) with W = [[c, s], [c, -s]],
  // c = sqrt(cosh beta), s = sqrt(sinh beta): each bond is split between its
  // two sites, and the site tensor T(l, u, r, d) = sum_s W(s,l) W(s,u) W(s,r)
  // W(s,d) carries the four half-bonds of one spin.
  const T c = tf::sqrt(tf::cosh(beta));
  const T s = tf::sqrt(tf::sinh(beta));
  const T w = tf::stack({tf::stack({c, c}, 0), tf::stack({s, -s}, 0)}, 1);  // W[spin, k]
  T t = tf::einsum("ai,aj,ak,al->ijkl", {w, w, w, w});
  T log_z = tf::zeros_like(beta);

  // Steps [first, last) on (t, log_z), the same ops with or without a region.
  const auto run_steps = [&](T& tt, T& lz, int first, int last) {
    for (int step = first; step < last; ++step) {
      rg_step(tt, lz, step, dims[static_cast<std::size_t>(step)], options);
      if (on_step) on_step(step + 1, options.steps);
    }
  };
  const int group = options.checkpoint_steps > 0 ? options.checkpoint_steps : options.steps;
  for (int first = 0; first < options.steps; first += group) {
    const int last = std::min(options.steps, first + group);
    if constexpr (kTraced) {
      if (options.checkpoint_steps > 0) {
        // The region keeps only (t, log_z) at its ends; the derivative passes
        // recompute its SVDs and contractions from them.
        const auto region = [&](std::span<const tf::TracedTensor> in) {
          tf::TracedTensor tt = in[0], lz = in[1];
          run_steps(tt, lz, first, last);
          return std::vector<tf::TracedTensor>{tt, lz};
        };
        const std::vector<tf::TracedTensor> out = tf::checkpoint(region, {t, log_z});
        t = out[0];
        log_z = out[1];
        continue;
      }
    }
    run_steps(t, log_z, first, last);
  }
  // Close the last tensor on itself (periodic boundaries).
  return log_z + tf::log(tf::einsum("abab->", {t})) * std::ldexp(1.0, -options.steps);
}

template tf::EagerTensor log_z_per_site(const tf::EagerTensor&, const TrgOptions&,
                                        const StepCallback&);
template tf::TracedTensor log_z_per_site(const tf::TracedTensor&, const TrgOptions&,
                                         const StepCallback&);

}  // namespace ising
