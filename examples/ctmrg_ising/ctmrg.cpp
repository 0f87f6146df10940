#include "ctmrg.hpp"

#include <cmath>
#include <string>

namespace tf = tenferro;

namespace ctmrg {

template <tf::AdTensor T>
SiteTensors<T> site_tensors(const T& beta) {
  // exp(beta s s') = sum_k W(s, k) W(s', k) with W = [[c, s], [c, -s]],
  // c = sqrt(cosh beta), s = sqrt(sinh beta) (as in the TRG demo).
  const T c = tf::sqrt(tf::cosh(beta));
  const T s = tf::sqrt(tf::sinh(beta));
  const T w = tf::stack({tf::stack({c, c}, 0), tf::stack({s, -s}, 0)}, 1);  // W[spin, k]
  const T one = tf::ones_like(beta);
  const T spin = tf::stack({one, -one}, 0);
  return {tf::einsum("ai,aj,ak,al->ijkl", {w, w, w, w}),
          tf::einsum("a,ai,aj,ak,al->ijkl", {spin, w, w, w, w})};
}

template <tf::AdTensor T>
std::vector<T> initial_environment(const T& beta, const CtmrgOptions& options, bool ordered) {
  if (options.chi < 2) {
    throw tf::Error(tf::ErrorKind::InvalidArgument, "ctmrg",
                    "ctmrg: chi must be at least 2 (got " + std::to_string(options.chi) + ")");
  }
  const T c = tf::sqrt(tf::cosh(beta));
  const T s = tf::sqrt(tf::sinh(beta));
  const T a = site_tensors(beta).a;
  // The half-bond towards a boundary spin: W(up, k) = (c, s) for a fixed up
  // spin, sum_s W(s, k) = (2c, 0) for a free one.
  const T w = ordered ? tf::stack({c, s}, 0) : tf::stack({c * 2.0, tf::zeros_like(s)}, 0);
  const T t = tf::einsum("lurp,u->lpr", {a, w});
  const T corner = tf::einsum("abul,u,l->ab", {a, w, w});
  const std::int64_t pad = options.chi - 2;
  const T t_padded = tf::pad(t, {0, 0, 0}, {pad, 0, pad}, 0.0);
  const T c_padded = tf::pad(corner, {0, 0}, {pad, pad}, 0.0);
  return {c_padded / tf::sqrt(tf::sum(c_padded * c_padded)),
          t_padded / tf::sqrt(tf::sum(t_padded * t_padded))};
}

template <tf::AdTensor T>
std::vector<T> ctmrg_step(std::span<const T> env, const T& a, const CtmrgOptions& options) {
  const std::int64_t chi = options.chi;
  const T& corner = env[0];
  const T& edge = env[1];
  // The enlarged corner: C at the corner, an edge on either side, the site
  // tensor inside; its legs are (a, p) to the right and (b, q) downwards,
  // a matrix over the column-major index a + chi p.
  const T enlarged =
      tf::reshape(tf::einsum("xy,xra,ysb,rspq->apbq", {corner, edge, edge, a}), {2 * chi, 2 * chi});
  T split = enlarged;
  if (options.split > 0) {
    // 1 (x) diag(0, 1): zero for p = 0, one for p = 1 (built from the
    // corner's shape so that it is a constant of the same tier).
    const T diag = tf::diagonal(corner);
    const T leg = tf::concatenate({tf::zeros_like(diag), tf::ones_like(diag)}, 0);
    const T scale = tf::sqrt(tf::sum(enlarged * enlarged)) * options.split;
    split = enlarged + tf::diag_embed(leg) * scale;
  }
  const auto eig = tf::linalg::canonical_phase(tf::linalg::eigh(split, 'L', options.eigh_options));
  const auto [magnitude, order] = tf::topk(tf::abs(eig.eigenvalues), chi, 0);
  const T above = tf::gt(magnitude, tf::slice(magnitude, {0}, {1}) * options.cutoff);
  const T dominant = tf::index_select(eig.eigenvectors, 1, order);  // [(a, p), x]
  const T p = tf::where(tf::reshape(above, {1, chi}), dominant, tf::zeros_like(dominant));
  const T p3 = tf::reshape(p, {chi, 2, chi});
  const T next_corner = tf::einsum("ix,ij,jy->xy", {p, enlarged, p});
  const T next_edge = tf::einsum("apx,akb,pkrq,bry->xqy", {p3, edge, a, p3});
  return {next_corner / tf::sqrt(tf::sum(next_corner * next_corner)),
          next_edge / tf::sqrt(tf::sum(next_edge * next_edge))};
}

namespace {

// The left column C T C of the 3x3 network: legs (top, site, bottom).
template <tf::AdTensor T>
T column(std::span<const T> env) {
  return tf::einsum("ax,xry,yb->arb", {env[0], env[1], env[0]});
}

// The 3x3 network with x at the centre.
template <tf::AdTensor T>
T closed_with_site(const T& left, const T& edge, const T& x) {
  return tf::einsum("arb,auc,rusd,bde,cse->", {left, edge, x, edge, left});
}

}  // namespace

template <tf::AdTensor T>
T log_z_per_site(std::span<const T> env, const T& a) {
  const T& corner = env[0];
  const T left = column(env);
  const T z1 = closed_with_site(left, env[1], a);
  const T z2 = tf::einsum("arb,arb->", {left, left});
  const T z4 = tf::einsum("ab,bc,cd,da->", {corner, corner, corner, corner});
  return tf::log(z1) + tf::log(z4) - tf::log(z2) * 2.0;
}

template <tf::AdTensor T>
T magnetisation(std::span<const T> env, const SiteTensors<T>& site) {
  const T left = column(env);
  return closed_with_site(left, env[1], site.b) / closed_with_site(left, env[1], site.a);
}

template <tf::AdTensor T>
T update_size(std::span<const T> next, std::span<const T> env) {
  return tf::maximum(tf::max(tf::abs(next[0] - env[0])), tf::max(tf::abs(next[1] - env[1])));
}

#define CTMRG_INSTANTIATE(T)                                                             \
  template SiteTensors<T> site_tensors(const T&);                                        \
  template std::vector<T> initial_environment(const T&, const CtmrgOptions&, bool);      \
  template std::vector<T> ctmrg_step(std::span<const T>, const T&, const CtmrgOptions&); \
  template T log_z_per_site(std::span<const T>, const T&);                               \
  template T magnetisation(std::span<const T>, const SiteTensors<T>&);                   \
  template T update_size(std::span<const T>, std::span<const T>);
CTMRG_INSTANTIATE(tf::EagerTensor)
CTMRG_INSTANTIATE(tf::TracedTensor)
#undef CTMRG_INSTANTIATE

}  // namespace ctmrg
