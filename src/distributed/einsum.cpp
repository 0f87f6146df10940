// einsum and matmul over sharded tensors (distributed.hpp): the einsum
// family's planner orders the pairwise contractions over the global shapes;
// each pairwise step picks, per mesh axis, which label that axis shards (or
// none) by the bytes the operands' redistribution would send, then contracts
// the local tensors with the eager einsum. Everything is eager ops and
// differentiable collectives, so AD goes through it.

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "distributed/collectives.hpp"
#include "distributed/internal.hpp"
#include "tenferro/einsum/einsum.hpp"

namespace tenferro::dist {

namespace {

using Labels = std::vector<std::int64_t>;

/// "ij,jk->ik" (letters only; implicit output: labels seen once, sorted).
std::pair<std::vector<Labels>, Labels> parse(std::string_view eq, std::size_t operands) {
  std::vector<Labels> ins(1);
  Labels out;
  bool arrow = false;
  for (std::size_t i = 0; i < eq.size(); ++i) {
    const char c = eq[i];
    if (c == ' ') continue;
    if (c == ',') {
      if (arrow) fail(ErrorKind::InvalidArgument, "dist::einsum", "',' after '->' in ", eq);
      ins.emplace_back();
    } else if (c == '-' && i + 1 < eq.size() && eq[i + 1] == '>') {
      arrow = true;
      ++i;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      (arrow ? out : ins.back()).push_back(c);
    } else {
      fail(ErrorKind::InvalidArgument, "dist::einsum", "unsupported character '", std::string(1, c),
           "' in \"", eq, "\"; labels are letters (no ellipsis)");
    }
  }
  if (ins.size() != operands) {
    fail(ErrorKind::InvalidArgument, "dist::einsum", "\"", eq, "\" has ", ins.size(), " terms for ",
         operands, " operands");
  }
  if (!arrow) {
    std::map<std::int64_t, int> seen;
    for (const auto& t : ins)
      for (const auto l : t) ++seen[l];
    for (const auto& [l, n] : seen)
      if (n == 1) out.push_back(l);
  }
  return {ins, out};
}

bool has(const Labels& ls, std::int64_t l) {
  return std::find(ls.begin(), ls.end(), l) != ls.end();
}

std::int64_t pos(const Labels& ls, std::int64_t l) {
  return static_cast<std::int64_t>(std::find(ls.begin(), ls.end(), l) - ls.begin());
}

/// A labelled operand: the tensor and the label of each of its axes.
template <class T>
struct Term {
  BasicDTensor<T> x;
  Labels labels;
};

/// The label a placement shards (or -1).
template <class T>
std::int64_t sharded_label(const Term<T>& t, const Placement& p) {
  return p.is_shard() ? t.labels[static_cast<std::size_t>(p.axis)] : -1;
}

/// Estimated bytes this rank sends to move `x` to `to` (per mesh axis: an
/// all-gather sends its part to every other rank, an all-to-all or a
/// reduce-scatter the other ranks' share of it, an all-reduce twice that).
/// Computed from the global shape, so that every rank chooses alike.
template <class T>
double move_bytes(const BasicDTensor<T>& x, const Placements& to) {
  double local = static_cast<double>(itemsize(x.dtype()));
  for (const auto e : x.shape()) local *= static_cast<double>(e);
  for (int m = 0; m < x.mesh().ndim(); ++m) {
    if (x.placements()[static_cast<std::size_t>(m)].is_shard()) local /= x.mesh().size(m);
  }
  double bytes = 0;
  using K = Placement::Kind;
  for (int m = 0; m < x.mesh().ndim(); ++m) {
    const Placement& a = x.placements()[static_cast<std::size_t>(m)];
    const Placement& b = to[static_cast<std::size_t>(m)];
    const double p = x.mesh().size(m);
    if (a == b || p == 1) continue;
    if (a.kind == K::Shard && b.kind == K::Replicate) {
      bytes += local * (p - 1);
      local *= p;
    } else if (a.kind == K::Shard && b.kind == K::Shard) {
      bytes += local * (p - 1) / p;
    } else if (a.kind == K::Partial && b.kind == K::Replicate) {
      bytes += 2 * local * (p - 1) / p;
    } else if (a.kind == K::Partial && b.kind == K::Shard) {
      bytes += local * (p - 1) / p;
      local /= p;
    } else if (a.kind == K::Shard && b.kind == K::Partial) {
      bytes += local * (p - 1);
      local *= p;
    } else if (a.kind == K::Replicate && b.kind == K::Shard) {
      local /= p;
    }
  }
  return bytes;
}

/// A new pending sum in the result is paid for later, when something reads
/// it: count the reduce-scatter of the result over that mesh axis.
template <class T>
double new_partial_bytes(const Term<T>& a, const Term<T>& b, const Labels& out_labels,
                         const Placements& out) {
  const Mesh& mesh = a.x.mesh();
  double elems = static_cast<double>(itemsize(a.x.dtype()));
  for (const auto l : out_labels) {
    elems *= static_cast<double>(has(a.labels, l)
                                     ? a.x.shape()[static_cast<std::size_t>(pos(a.labels, l))]
                                     : b.x.shape()[static_cast<std::size_t>(pos(b.labels, l))]);
  }
  for (int m = 0; m < mesh.ndim(); ++m)
    if (out[static_cast<std::size_t>(m)].is_shard()) elems /= mesh.size(m);
  double bytes = 0;
  using K = Placement::Kind;
  for (int m = 0; m < mesh.ndim(); ++m) {
    const auto i = static_cast<std::size_t>(m);
    const double p = mesh.size(m);
    if (out[i].kind == K::Partial && a.x.placements()[i].kind != K::Partial &&
        b.x.placements()[i].kind != K::Partial)
      bytes += elems * (p - 1) / p;
  }
  return bytes;
}

/// What one mesh axis does in a pairwise step.
struct Role {
  enum Kind { Replicate, Label, KeepPartialA, KeepPartialB } kind = Replicate;
  std::int64_t label = -1;
};

struct Choice {
  Placements pa, pb, out;
  double bytes = std::numeric_limits<double>::infinity();
  double move = 0;  ///< of `bytes`, what moving the operands sends
  std::string text;
};

/// The placements a role gives the operands and the result on one mesh axis.
template <class T>
bool apply_role(const Role& r, const Term<T>& a, const Term<T>& b, const Labels& out_labels,
                const Placement& cur_a, const Placement& cur_b, Placement& pa, Placement& pb,
                Placement& po) {
  using K = Placement::Kind;
  switch (r.kind) {
    case Role::Replicate:
      pa = dist::Replicate();
      pb = dist::Replicate();
      po = dist::Replicate();
      return true;
    case Role::KeepPartialA:
      if (cur_a.kind != K::Partial) return false;
      pa = dist::Partial();
      pb = dist::Replicate();
      po = dist::Partial();
      return true;
    case Role::KeepPartialB:
      if (cur_b.kind != K::Partial) return false;
      pa = dist::Replicate();
      pb = dist::Partial();
      po = dist::Partial();
      return true;
    case Role::Label:
      break;
  }
  const std::int64_t l = r.label;
  const bool in_a = has(a.labels, l), in_b = has(b.labels, l), kept = has(out_labels, l);
  // Keep the block-cyclic layout of an operand already sharded on l (A's
  // when both are: then B moves to it).
  std::int64_t block = 0;
  if (cur_b.is_shard() && sharded_label(b, cur_b) == l) block = cur_b.block;
  if (cur_a.is_shard() && sharded_label(a, cur_a) == l) block = cur_a.block;
  pa = in_a ? dist::Shard(pos(a.labels, l), block) : dist::Replicate();
  pb = in_b ? dist::Shard(pos(b.labels, l), block) : dist::Replicate();
  po = kept ? dist::Shard(pos(out_labels, l), block) : dist::Partial();
  return true;
}

template <class T>
Choice choose(const Term<T>& a, const Term<T>& b, const Labels& out_labels) {
  const Mesh& mesh = a.x.mesh();
  std::vector<Role> roles = {
      {Role::Replicate, -1}, {Role::KeepPartialA, -1}, {Role::KeepPartialB, -1}};
  std::set<std::int64_t> labels(a.labels.begin(), a.labels.end());
  labels.insert(b.labels.begin(), b.labels.end());
  for (const auto l : labels) roles.push_back({Role::Label, l});
  Choice best;
  std::size_t best_changes = 0;
  const int nd = mesh.ndim();
  std::vector<std::size_t> pick(static_cast<std::size_t>(nd), 0);
  while (true) {
    // One role per mesh axis, a label on one mesh axis at most.
    bool ok = true;
    for (int m = 0; m < nd && ok; ++m)
      for (int k = 0; k < m && ok; ++k) {
        const Role& x = roles[pick[static_cast<std::size_t>(m)]];
        const Role& y = roles[pick[static_cast<std::size_t>(k)]];
        if (x.kind == Role::Label && y.kind == Role::Label && x.label == y.label) ok = false;
      }
    Choice c;
    c.pa.resize(static_cast<std::size_t>(nd));
    c.pb.resize(static_cast<std::size_t>(nd));
    c.out.resize(static_cast<std::size_t>(nd));
    for (int m = 0; m < nd && ok; ++m) {
      const auto i = static_cast<std::size_t>(m);
      ok = apply_role(roles[pick[i]], a, b, out_labels, a.x.placements()[i], b.x.placements()[i],
                      c.pa[i], c.pb[i], c.out[i]);
      const Role& r = roles[pick[i]];
      if (m > 0) c.text.push_back(',');
      if (r.kind == Role::Label) {
        c.text.push_back(static_cast<char>(r.label));
      } else {
        c.text.append(r.kind == Role::Replicate ? "-" : "partial");
      }
    }
    if (ok) {
      c.move = move_bytes(a.x, c.pa) + move_bytes(b.x, c.pb);
      c.bytes = c.move + new_partial_bytes(a, b, out_labels, c.out);
      // Ties keep the operands' placements where they can, then avoid
      // pending sums in the result (a later reduction).
      std::size_t changes = 0;
      for (int m = 0; m < nd; ++m) {
        const auto i = static_cast<std::size_t>(m);
        changes += 2 * (!(c.pa[i] == a.x.placements()[i]) + !(c.pb[i] == b.x.placements()[i]));
        changes += c.out[i].kind == Placement::Kind::Partial;
      }
      if (c.bytes < best.bytes || (c.bytes == best.bytes && changes < best_changes)) {
        best = c;
        best_changes = changes;
      }
    }
    int m = 0;
    while (m < nd && ++pick[static_cast<std::size_t>(m)] == roles.size())
      pick[static_cast<std::size_t>(m++)] = 0;
    if (m == nd) break;
  }
  return best;
}

/// A step SUMMA runs: the choice gathers the contracted label j of A along
/// mesh axis ma and of B along the other axis mb, and moves nothing else.
struct Summa {
  std::int64_t label = -1;
  int ma = -1, mb = -1;
};

template <class T>
std::optional<Summa> summa_step(const Term<T>& a, const Term<T>& b, const Labels& out_labels,
                                const Choice& c) {
  if (a.x.mesh().ndim() != 2) return std::nullopt;
  Summa s;
  std::int64_t label_a = -1, label_b = -1;
  for (int m = 0; m < 2; ++m) {
    const auto i = static_cast<std::size_t>(m);
    const Placement& ca = a.x.placements()[i];
    const Placement& cb = b.x.placements()[i];
    if (!(c.pa[i] == ca)) {
      if (!ca.is_shard() || c.pa[i].kind != Placement::Kind::Replicate) return std::nullopt;
      s.ma = m;
      label_a = sharded_label(a, ca);
    }
    if (!(c.pb[i] == cb)) {
      if (!cb.is_shard() || c.pb[i].kind != Placement::Kind::Replicate) return std::nullopt;
      s.mb = m;
      label_b = sharded_label(b, cb);
    }
  }
  if (s.ma < 0 || s.mb < 0 || s.ma == s.mb || label_a != label_b || has(out_labels, label_a)) {
    return std::nullopt;
  }
  s.label = label_a;
  return s;
}

/// One panel of the contracted label: `length` global indices that A's
/// owner (coordinate along ma) holds from local index start_a on, and B's
/// owner (along mb) from start_b on.
struct Panel {
  int owner_a = 0, owner_b = 0;
  std::int64_t start_a = 0, start_b = 0, length = 0;
};

/// Splits the contracted extent n into the panels where both layouts are
/// runs of consecutive local indices on one owner, at most `width` long.
std::vector<Panel> panels(std::int64_t n, int parts_a, std::int64_t block_a, int parts_b,
                          std::int64_t block_b, std::int64_t width) {
  std::vector<int> own_a(static_cast<std::size_t>(n)), own_b(static_cast<std::size_t>(n));
  std::vector<std::int64_t> loc_a(static_cast<std::size_t>(n)), loc_b(static_cast<std::size_t>(n));
  for (int r = 0; r < parts_a; ++r) {
    const auto idx = shard_indices(n, parts_a, r, block_a);
    for (std::size_t k = 0; k < idx.size(); ++k) {
      own_a[static_cast<std::size_t>(idx[k])] = r;
      loc_a[static_cast<std::size_t>(idx[k])] = static_cast<std::int64_t>(k);
    }
  }
  for (int r = 0; r < parts_b; ++r) {
    const auto idx = shard_indices(n, parts_b, r, block_b);
    for (std::size_t k = 0; k < idx.size(); ++k) {
      own_b[static_cast<std::size_t>(idx[k])] = r;
      loc_b[static_cast<std::size_t>(idx[k])] = static_cast<std::int64_t>(k);
    }
  }
  std::vector<Panel> out;
  for (std::size_t g = 0; g < static_cast<std::size_t>(n); ++g) {
    if (!out.empty()) {
      Panel& p = out.back();
      if (p.length < width && own_a[g] == p.owner_a && own_b[g] == p.owner_b &&
          loc_a[g] == p.start_a + p.length && loc_b[g] == p.start_b + p.length) {
        ++p.length;
        continue;
      }
    }
    out.push_back({own_a[g], own_b[g], loc_a[g], loc_b[g], 1});
  }
  return out;
}

/// SUMMA: for each panel of the contracted label, A's owner broadcasts its
/// panel along ma and B's along mb, and every rank adds the product of the
/// two panels to its block of the result. The same data move as gathering
/// both operands, in panels of at most `width` indices, so no rank holds
/// more than a panel of the other ranks' data at a time (without AD).
template <class T>
T run_summa(const Term<T>& a, const Term<T>& b, const Labels& out_labels, const Summa& s,
            std::int64_t width) {
  const Mesh& mesh = a.x.mesh();
  const Placement& pa = a.x.placements()[static_cast<std::size_t>(s.ma)];
  const Placement& pb = b.x.placements()[static_cast<std::size_t>(s.mb)];
  const std::int64_t n = a.x.shape()[static_cast<std::size_t>(pa.axis)];
  const std::vector<std::int64_t> counts_a = detail::extents(n, mesh.size(s.ma), pa.block);
  const std::vector<std::int64_t> counts_b = detail::extents(n, mesh.size(s.mb), pb.block);
  const MPI_Comm comm_a = mesh.axis_comm(s.ma).handle();
  const MPI_Comm comm_b = mesh.axis_comm(s.mb).handle();
  EinsumLabels labels{{a.labels, b.labels}, out_labels};
  T y;
  for (const Panel& p : panels(n, mesh.size(s.ma), pa.block, mesh.size(s.mb), pb.block, width)) {
    const T xa = detail::collective(
        detail::broadcast_params(comm_a, p.owner_a, pa.axis, counts_a, p.start_a, p.length),
        a.x.local());
    const T xb = detail::collective(
        detail::broadcast_params(comm_b, p.owner_b, pb.axis, counts_b, p.start_b, p.length),
        b.x.local());
    const T part = tenferro::einsum(labels, std::vector<T>{xa, xb});
    y = y.defined() ? y + part : part;
  }
  return y;
}

/// The pairwise step: both operands to the chosen placements, then the
/// local einsum (or the SUMMA panel loop where the choice is its data move).
template <class T>
Term<T> contract(const Term<T>& a, const Term<T>& b, const Labels& out_labels,
                 const EinsumOptions& options, EinsumReport* report) {
  const Choice c = choose(a, b, out_labels);
  const std::optional<Summa> summa = options.summa ? summa_step(a, b, out_labels, c) : std::nullopt;
  T y;
  if (summa) {
    y = run_summa(a, b, out_labels, *summa, std::max<std::int64_t>(options.summa_panel, 1));
  } else {
    const BasicDTensor<T> xa = redistribute(a.x, c.pa);
    const BasicDTensor<T> xb = redistribute(b.x, c.pb);
    EinsumLabels labels{{a.labels, b.labels}, out_labels};
    y = tenferro::einsum(labels, std::vector<T>{xa.local(), xb.local()});
  }
  Shape global;
  for (const auto l : out_labels) {
    global.push_back(has(a.labels, l) ? a.x.shape()[static_cast<std::size_t>(pos(a.labels, l))]
                                      : b.x.shape()[static_cast<std::size_t>(pos(b.labels, l))]);
  }
  if (report) {
    report->steps.push_back(summa ? "summa(" + c.text + ")" : c.text);
    report->model_bytes += c.move;
  }
  return {BasicDTensor<T>(global, a.x.mesh(), c.out, y), out_labels};
}

/// Sums the labels of one operand that no other operand and not the output
/// has (a local sum; a sharded one becomes Partial).
template <class T>
Term<T> sum_private(const Term<T>& t, const std::vector<Term<T>>& others, const Labels& output) {
  std::vector<std::int64_t> axes;
  Labels kept;
  for (std::size_t k = 0; k < t.labels.size(); ++k) {
    const std::int64_t l = t.labels[k];
    bool used = has(output, l);
    for (const auto& o : others) used |= has(o.labels, l);
    if (used) {
      kept.push_back(l);
    } else {
      axes.push_back(static_cast<std::int64_t>(k));
    }
  }
  if (axes.empty()) return t;
  return {sum(t.x, axes), kept};
}

}  // namespace

template <class T>
BasicDTensor<T> permute(const BasicDTensor<T>& x, std::vector<std::int64_t> perm) {
  if (static_cast<std::int64_t>(perm.size()) != x.rank()) {
    fail(ErrorKind::InvalidArgument, "dist::permute", "a permutation of ", perm.size(),
         " axes for a rank-", x.rank(), " tensor");
  }
  std::vector<std::int64_t> where(perm.size(), -1);
  Shape global;
  for (std::size_t k = 0; k < perm.size(); ++k) {
    const std::int64_t a = normalize_axis(perm[k], x.rank(), "dist::permute");
    if (where[static_cast<std::size_t>(a)] >= 0) {
      fail(ErrorKind::DuplicateAxis, "dist::permute", "axis ", a, " appears twice");
    }
    where[static_cast<std::size_t>(a)] = static_cast<std::int64_t>(k);
    global.push_back(x.shape()[static_cast<std::size_t>(a)]);
    perm[k] = a;
  }
  Placements ps = x.placements();
  for (auto& p : ps)
    if (p.is_shard()) p.axis = where[static_cast<std::size_t>(p.axis)];
  return BasicDTensor<T>(global, x.mesh(), ps, tenferro::permute(x.local(), Axes(perm)));
}

namespace {
/// The einsum over labelled operands (labels checked here).
template <class T>
BasicDTensor<T> einsum_of(const std::vector<Labels>& ins, const Labels& output,
                          const std::vector<BasicDTensor<T>>& operands, EinsumReport* report,
                          const EinsumOptions& options);
}  // namespace

template <class T>
BasicDTensor<T> einsum(std::string_view equation, const std::vector<BasicDTensor<T>>& operands,
                       EinsumReport* report, const EinsumOptions& options) {
  if (operands.empty()) fail(ErrorKind::InvalidArgument, "dist::einsum", "no operands");
  auto [ins, output] = parse(equation, operands.size());
  return einsum_of(ins, output, operands, report, options);
}

template <class T>
BasicDTensor<T> einsum(const EinsumLabels& labels, const std::vector<BasicDTensor<T>>& operands,
                       EinsumReport* report, const EinsumOptions& options) {
  if (operands.empty()) fail(ErrorKind::InvalidArgument, "dist::einsum", "no operands");
  if (labels.inputs.size() != operands.size()) {
    fail(ErrorKind::InvalidArgument, "dist::einsum", labels.inputs.size(), " label lists for ",
         operands.size(), " operands");
  }
  Labels output;
  if (labels.output) {
    output = *labels.output;
  } else {
    std::map<std::int64_t, int> seen;
    for (const auto& t : labels.inputs)
      for (const auto l : t) ++seen[l];
    for (const auto& [l, n] : seen)
      if (n == 1) output.push_back(l);
  }
  return einsum_of(labels.inputs, output, operands, report, options);
}

namespace {

/// A label for messages: the letter when it is one, else the number.
std::string label_text(std::int64_t l) {
  return (l >= 'a' && l <= 'z') || (l >= 'A' && l <= 'Z') ? std::string(1, static_cast<char>(l))
                                                          : std::to_string(l);
}

template <class T>
BasicDTensor<T> einsum_of(const std::vector<Labels>& ins, const Labels& output,
                          const std::vector<BasicDTensor<T>>& operands, EinsumReport* report,
                          const EinsumOptions& options) {
  std::map<std::int64_t, std::int64_t> extent;
  std::vector<Term<T>> terms;
  for (std::size_t k = 0; k < operands.size(); ++k) {
    const BasicDTensor<T>& x = operands[k];
    if (!(x.mesh() == operands[0].mesh())) {
      fail(ErrorKind::ContextMismatch, "dist::einsum", "operand ", k, " is on mesh ",
           x.mesh().to_string(), " and operand 0 on ", operands[0].mesh().to_string(),
           "; put them on one mesh");
    }
    if (static_cast<std::int64_t>(ins[k].size()) != x.rank()) {
      fail(ErrorKind::RankMismatch, "dist::einsum", "term ", k, " has ", ins[k].size(),
           " labels for a rank-", x.rank(), " operand");
    }
    std::set<std::int64_t> distinct(ins[k].begin(), ins[k].end());
    if (distinct.size() != ins[k].size()) {
      fail(ErrorKind::Unsupported, "dist::einsum", "term ", k,
           " repeats a label (a diagonal); take the diagonal on a replicated tensor first");
    }
    for (std::size_t d = 0; d < ins[k].size(); ++d) {
      auto [it, fresh] = extent.try_emplace(ins[k][d], x.shape()[d]);
      if (!fresh && it->second != x.shape()[d]) {
        fail(ErrorKind::ShapeMismatch, "dist::einsum", "label '", label_text(ins[k][d]),
             "' has extents ", it->second, " and ", x.shape()[d]);
      }
    }
    terms.push_back({x, ins[k]});
  }
  for (const auto l : output) {
    if (!extent.count(l)) {
      fail(ErrorKind::InvalidArgument, "dist::einsum", "output label '", label_text(l),
           "' is in no operand");
    }
  }
  if (report) *report = EinsumReport{};
  const CommStats before = comm_stats();
  // The path over global shapes, with dense labels for the planner.
  std::map<std::int64_t, std::int64_t> dense;
  std::vector<double> extents;
  for (const auto& [l, e] : extent) {
    dense[l] = static_cast<std::int64_t>(extents.size());
    extents.push_back(static_cast<double>(e));
  }
  std::vector<std::vector<std::int64_t>> plan_in;
  for (const auto& t : terms) {
    plan_in.emplace_back();
    for (const auto l : t.labels) plan_in.back().push_back(dense[l]);
  }
  std::vector<std::int64_t> plan_out;
  for (const auto l : output) plan_out.push_back(dense[l]);
  const EinsumPlan plan = plan_contraction(plan_in, plan_out, extents);
  for (std::size_t k = 0; k < terms.size(); ++k) {
    std::vector<Term<T>> others;
    for (std::size_t j = 0; j < terms.size(); ++j)
      if (j != k) others.push_back(terms[j]);
    terms[k] = sum_private(terms[k], others, output);
  }
  for (const auto& [i, j] : plan.path) {
    const Term<T> a = terms[static_cast<std::size_t>(i)];
    const Term<T> b = terms[static_cast<std::size_t>(j)];
    terms.erase(terms.begin() + j);
    terms.erase(terms.begin() + i);
    // The result keeps the labels the output or a remaining operand needs.
    Labels keep;
    for (const auto& t : {a, b})
      for (const auto l : t.labels) {
        bool used = has(output, l);
        for (const auto& o : terms) used |= has(o.labels, l);
        if (used && !has(keep, l)) keep.push_back(l);
      }
    terms.push_back(contract(a, b, keep, options, report));
  }
  Term<T> last = terms[0];
  last = sum_private(last, std::vector<Term<T>>{}, output);
  if (last.labels != output) {
    std::vector<std::int64_t> perm;
    for (const auto l : output) perm.push_back(pos(last.labels, l));
    last = {permute(last.x, perm), output};
  }
  if (report) report->bytes_sent = comm_stats().bytes_sent - before.bytes_sent;
  return last.x;
}

}  // namespace

template <class T>
BasicDTensor<T> matmul(const BasicDTensor<T>& a, const BasicDTensor<T>& b, EinsumReport* report,
                       const EinsumOptions& options) {
  if (a.rank() != 2 || b.rank() != 2) {
    fail(ErrorKind::RankMismatch, "dist::matmul", "matrices (rank 2) only, got ranks ", a.rank(),
         " and ", b.rank(), "; use dist::einsum for batches");
  }
  return einsum("ij,jk->ik", std::vector<BasicDTensor<T>>{a, b}, report, options);
}

#define TENFERRO_DIST_INSTANTIATE(T)                                                             \
  template BasicDTensor<T> permute(const BasicDTensor<T>&, std::vector<std::int64_t>);           \
  template BasicDTensor<T> einsum(const EinsumLabels&, const std::vector<BasicDTensor<T>>&,      \
                                  EinsumReport*, const EinsumOptions&);                          \
  template BasicDTensor<T> einsum(std::string_view, const std::vector<BasicDTensor<T>>&,         \
                                  EinsumReport*, const EinsumOptions&);                          \
  template BasicDTensor<T> matmul(const BasicDTensor<T>&, const BasicDTensor<T>&, EinsumReport*, \
                                  const EinsumOptions&);
TENFERRO_DIST_INSTANTIATE(EagerTensor)
TENFERRO_DIST_INSTANTIATE(TracedTensor)
#undef TENFERRO_DIST_INSTANTIATE

}  // namespace tenferro::dist
