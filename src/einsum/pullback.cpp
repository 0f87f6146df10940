// The reverse pass of a prepared einsum along its own tree (program.hpp,
// pullback_direct): the forward steps run once, keeping each pairwise
// result, then one cotangent flows back through every step, so all operands'
// cotangents cost about two more contractions per step instead of one whole
// contraction per operand.

#include "einsum/program.hpp"

#include <algorithm>
#include <optional>

#include "tenferro/ad/ops.hpp"
#include "tenferro/backend/elementwise.hpp"
#include "tenferro/backend/reduce.hpp"
#include "tenferro/core/error.hpp"

namespace tenferro::einsum_detail {
namespace {

Axes inverse(const Axes& perm) {
  Axes inv(perm.size(), 0);
  for (std::size_t q = 0; q < perm.size(); ++q)
    inv[static_cast<std::size_t>(perm[q])] = static_cast<std::int64_t>(q);
  return inv;
}

bool is_identity(const Axes& perm) {
  for (std::size_t q = 0; q < perm.size(); ++q) {
    if (perm[q] != static_cast<std::int64_t>(q)) return false;
  }
  return true;
}

bool contains(const Axes& axes, std::int64_t a) {
  return std::find(axes.begin(), axes.end(), a) != axes.end();
}

// The axes of an operand of rank `rank` that are neither contracting nor
// batch, increasing (dot_general keeps their order).
Axes free_axes(std::int64_t rank, const Axes& contracting, const Axes& batch) {
  Axes f;
  for (std::int64_t a = 0; a < rank; ++a) {
    if (!contains(contracting, a) && !contains(batch, a)) f.push_back(a);
  }
  return f;
}

// The cotangent of one side of r = dot_general(lhs, rhs, dims), r laid out
// [lhs free..., rhs free..., batch...]. `self` is the side whose cotangent
// is wanted, `other` the other side (already conjugated when complex);
// `self_first` tells whether self is lhs. Contracting g with `other` over
// other's free axes leaves [self free..., self's contracting (in other's
// increasing contracting order)..., batch...], permuted back to self's axes.
Tensor side_cotangent(const Tensor& g, const Tensor& other, std::int64_t self_rank,
                      const DotDims& dims, bool self_first, Backend& backend) {
  const Axes& self_c = self_first ? dims.lhs_contracting : dims.rhs_contracting;
  const Axes& other_c = self_first ? dims.rhs_contracting : dims.lhs_contracting;
  const Axes& self_b = self_first ? dims.lhs_batch : dims.rhs_batch;
  const Axes& other_b = self_first ? dims.rhs_batch : dims.lhs_batch;
  const Axes self_free = free_axes(self_rank, self_c, self_b);
  const Axes other_free = free_axes(other.rank(), other_c, other_b);
  const auto nl = static_cast<std::int64_t>(self_first ? self_free.size() : other_free.size());
  const auto ns = static_cast<std::int64_t>(self_free.size());
  const auto no = static_cast<std::int64_t>(other_free.size());
  DotDims d;
  // other's free axes sit after lhs free in g when other is rhs, first otherwise.
  const std::int64_t other_at = self_first ? nl : 0;
  for (std::int64_t t = 0; t < no; ++t) d.lhs_contracting.push_back(other_at + t);
  d.rhs_contracting = other_free;
  for (std::size_t b = 0; b < self_b.size(); ++b) {
    d.lhs_batch.push_back(ns + no + static_cast<std::int64_t>(b));
  }
  d.rhs_batch = other_b;
  const Tensor r = dot_general(g, other, d, backend);
  // Which axis of self each axis of r is.
  Axes self_of;
  for (const std::int64_t a : self_free) self_of.push_back(a);
  Axes other_sorted = other_c;
  std::sort(other_sorted.begin(), other_sorted.end());
  for (const std::int64_t o : other_sorted) {
    const auto at = std::find(other_c.begin(), other_c.end(), o) - other_c.begin();
    self_of.push_back(self_c[static_cast<std::size_t>(at)]);
  }
  for (const std::int64_t b : self_b) self_of.push_back(b);
  Axes perm(self_of.size(), 0);  // result axis q is r's axis perm[q]
  for (std::size_t p = 0; p < self_of.size(); ++p) {
    perm[static_cast<std::size_t>(self_of[p])] = static_cast<std::int64_t>(p);
  }
  return is_identity(perm) ? r : permute(r, perm, backend);
}

// One contraction's forward along the steps, keeping every node, then its
// reverse: the cotangents of the (prepared, possibly sliced) operands.
std::vector<Tensor> contract_and_pull_back(const Program& p, const std::vector<Tensor>& list,
                                           const Tensor& g_root, bool complex, Backend& backend) {
  const std::size_t n = list.size();
  std::vector<Tensor> node(list);
  node.reserve(n + p.steps.size());
  std::vector<std::pair<std::size_t, std::size_t>> sides;  // (lhs, rhs) node of each step
  std::vector<std::size_t> items(n);
  for (std::size_t k = 0; k < n; ++k) items[k] = k;
  for (const PairStep& s : p.steps) {
    const std::size_t a = items[static_cast<std::size_t>(s.i)],
                      b = items[static_cast<std::size_t>(s.j)];
    items.erase(items.begin() + s.j);
    items.erase(items.begin() + s.i);
    const std::size_t l = s.swap ? b : a, r = s.swap ? a : b;
    node.push_back(dot_general(node[l], node[r], s.dims, backend));
    sides.emplace_back(l, r);
    items.push_back(node.size() - 1);
  }
  std::vector<std::optional<Tensor>> grad(node.size());
  grad[items.front()] = g_root;
  for (std::size_t s = p.steps.size(); s-- > 0;) {
    const std::size_t me = n + s;
    const auto [l, r] = sides[s];
    const Tensor g = std::move(*grad[me]);
    grad[me].reset();
    node[me] = Tensor{};  // no longer read
    const Tensor lv = complex ? conj(node[l], backend) : node[l];
    const Tensor rv = complex ? conj(node[r], backend) : node[r];
    grad[l] = side_cotangent(g, rv, node[l].rank(), p.steps[s].dims, true, backend);
    grad[r] = side_cotangent(g, lv, node[r].rank(), p.steps[s].dims, false, backend);
  }
  std::vector<Tensor> out;
  out.reserve(n);
  for (std::size_t k = 0; k < n; ++k) out.push_back(std::move(*grad[k]));
  return out;
}

}  // namespace

std::vector<Tensor> pullback_direct(const Program& p, const std::vector<Tensor>& xs,
                                    const Tensor& ct, Backend& backend) {
  if (p.semiring != Semiring::Standard) {
    fail(ErrorKind::Internal, "einsum", "the planned pullback is for the standard algebra");
  }
  const bool complex = is_complex(ct.dtype());
  // The output's cotangent before the final permutations and diagonal
  // embeddings (their adjoints in reverse order).
  Tensor g = ct;
  if (!is_identity(p.final_perm)) g = permute(g, inverse(p.final_perm), backend);
  for (std::size_t e = p.embeds.size(); e-- > 0;) {
    g = diagonal(g, 0, 0, 1, backend);
    if (!is_identity(p.embeds[e])) g = permute(g, inverse(p.embeds[e]), backend);
  }
  if (!is_identity(p.out_perm)) g = permute(g, inverse(p.out_perm), backend);
  // The prepared operands (diagonal views, single-operand sums), and the
  // shape of each before its sum and before each diagonal.
  std::vector<Tensor> list;
  std::vector<std::vector<Shape>> before_diag(xs.size());
  std::vector<Shape> before_sum(xs.size());
  for (std::size_t k = 0; k < xs.size(); ++k) {
    Tensor x = xs[k];
    for (const auto& [i, j] : p.prep[k].diagonals) {
      before_diag[k].push_back(x.shape());
      x = x.diagonal(0, i, j);
    }
    before_sum[k] = x.shape();
    if (!p.prep[k].summed.empty()) x = sum(x, p.prep[k].summed, backend);
    list.push_back(std::move(x));
  }
  std::vector<Tensor> acc;
  if (p.sliced_extents.empty()) {
    acc = contract_and_pull_back(p, list, g, complex, backend);
  } else {
    // Every slice's results add up to the output, so each slice's result
    // has the output's cotangent; a slice's operand cotangents land in
    // their slice of the whole (padded with zeros) and add up.
    acc.resize(list.size());
    for_each_slice(p, [&](const std::vector<std::int64_t>& index) {
      std::vector<Tensor> part;
      std::vector<Shape> low(list.size()), high(list.size());
      std::vector<bool> cut(list.size(), false);
      for (std::size_t k = 0; k < list.size(); ++k) {
        Tensor v = list[k];
        low[k] = Shape(static_cast<std::size_t>(v.rank()), 0);
        high[k] = Shape(static_cast<std::size_t>(v.rank()), 0);
        for (std::size_t q = 0; q < index.size(); ++q) {
          const std::int64_t axis = p.sliced_axes[k][q];
          if (axis < 0) continue;
          const auto A = static_cast<std::size_t>(axis);
          low[k][A] = index[q];
          high[k][A] = list[k].shape()[A] - index[q] - 1;
          v = v.slice(axis, index[q], index[q] + 1);
          cut[k] = true;
        }
        part.push_back(std::move(v));
      }
      std::vector<Tensor> gs = contract_and_pull_back(p, part, g, complex, backend);
      for (std::size_t k = 0; k < list.size(); ++k) {
        Tensor c = cut[k] ? pad(gs[k], low[k].span(), high[k].span(), Scalar(0.0), backend)
                          : std::move(gs[k]);
        acc[k] = acc[k].defined() ? add(acc[k], c, backend) : std::move(c);
      }
    });
  }
  // The adjoints of the single-operand sums (broadcast back) and of the
  // diagonals (embedded back), in reverse.
  std::vector<Tensor> out;
  out.reserve(xs.size());
  for (std::size_t k = 0; k < xs.size(); ++k) {
    Tensor c = std::move(acc[k]);
    const Axes& summed = p.prep[k].summed;
    if (!summed.empty()) {
      Axes kept;
      for (std::int64_t a = 0; a < static_cast<std::int64_t>(before_sum[k].size()); ++a) {
        if (!contains(summed, a)) kept.push_back(a);
      }
      c = broadcast_in_dim(c, before_sum[k].span(), kept.span(), backend);
    }
    const auto& diagonals = p.prep[k].diagonals;
    for (std::size_t d = diagonals.size(); d-- > 0;) {
      // diagonal(x, 0, i, j) put the diagonal first and kept the other axes
      // in order: embed it as axes 0 and 1, then move those to i and j.
      const auto [i, j] = diagonals[d];
      c = diag_embed(c, 0, backend);
      const auto rank = static_cast<std::int64_t>(before_diag[k][d].size());
      Axes perm(static_cast<std::size_t>(rank), 0);
      std::int64_t next = 2;
      for (std::int64_t a = 0; a < rank; ++a) {
        perm[static_cast<std::size_t>(a)] = a == i ? 0 : a == j ? 1 : next++;
      }
      if (!is_identity(perm)) c = permute(c, perm, backend);
    }
    // A fresh result: never an alias of the output cotangent.
    if (c.storage() == ct.storage()) c = copy(c, backend);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace tenferro::einsum_detail
