// Building a prepared einsum program and running it on untracked values.

#include "einsum/program.hpp"
#include "einsum/semiring_run.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "tenferro/ad/ops.hpp"
#include "tenferro/backend/contract.hpp"
#include "tenferro/backend/cpu/cpu_backend.hpp"
#include "tenferro/backend/elementwise.hpp"
#include "tenferro/backend/reduce.hpp"
#include "tenferro/core/error.hpp"

namespace tenferro::einsum_detail {
namespace {

template <class V>
std::int64_t index_of(const V& v, std::int64_t x) {
  return static_cast<std::int64_t>(std::find(v.begin(), v.end(), x) - v.begin());
}

bool identity(const Axes& perm) {
  for (std::size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<std::int64_t>(i)) return false;
  }
  return true;
}

double elements(const std::vector<std::int64_t>& labels, const std::vector<double>& extents) {
  double n = 1;
  for (std::int64_t d : labels) n *= extents[static_cast<std::size_t>(d)];
  return n;
}

// The labels of a dot_general result: [lhs free, rhs free, batch].
struct PairShape {
  DotDims dims;
  std::vector<std::int64_t> labels;
};

PairShape pair(const std::vector<std::int64_t>& l, const std::vector<std::int64_t>& r,
               const std::vector<bool>& kept) {
  PairShape s;
  std::vector<std::int64_t> free_l, free_r, batch;
  for (std::size_t p = 0; p < l.size(); ++p) {
    const std::int64_t d = l[p], q = index_of(r, d);
    if (q == static_cast<std::int64_t>(r.size())) {
      free_l.push_back(d);
    } else if (kept[static_cast<std::size_t>(d)]) {
      s.dims.lhs_batch.push_back(static_cast<std::int64_t>(p));
      s.dims.rhs_batch.push_back(q);
      batch.push_back(d);
    } else {
      s.dims.lhs_contracting.push_back(static_cast<std::int64_t>(p));
      s.dims.rhs_contracting.push_back(q);
    }
  }
  for (std::int64_t d : r) {
    if (index_of(l, d) == static_cast<std::int64_t>(l.size())) free_r.push_back(d);
  }
  s.labels = free_l;
  s.labels.insert(s.labels.end(), free_r.begin(), free_r.end());
  s.labels.insert(s.labels.end(), batch.begin(), batch.end());
  return s;
}

// An operand of the pairwise steps while building: its dense labels, and
// whether it is a tensor of ours (not the caller's operand).
struct ListItem {
  std::vector<std::int64_t> labels;
  bool owned = false;
};
const std::vector<std::int64_t>& labels_of(const ListItem& it) {
  return it.labels;
}
const std::vector<std::int64_t>& labels_of(const std::vector<std::int64_t>& v) {
  return v;
}

// Labels no pairwise step may sum at this point: the output's and those of the
// operands still in the list.
template <class List>
std::vector<bool> kept_labels(const Analysis& a, const List& list) {
  std::vector<bool> kept(a.ids.size(), false);
  for (std::int64_t d : a.output_distinct) kept[static_cast<std::size_t>(d)] = true;
  for (const auto& it : list) {
    for (std::int64_t d : labels_of(it)) kept[static_cast<std::size_t>(d)] = true;
  }
  return kept;
}

// Elements dot_general copies to read a compact operand with these labels as
// a GEMM matrix (backend/contract.cpp): its free axes must form one run in
// order, its contracting axes one run, and one of the runs must start the
// tensor (stride 1). Extent-1 axes do not count. `order` receives the
// positions of the contracting axes in `pairs` order (for the other side).
double fold_copy(const std::vector<std::int64_t>& labels, const Axes& contracting,
                 const Axes& batch, const std::vector<double>& extents) {
  std::vector<char> role;  // per non-unit axis: 'f', 'c' or 'b'
  for (std::size_t q = 0; q < labels.size(); ++q) {
    if (extents[static_cast<std::size_t>(labels[q])] == 1) continue;
    const auto pos = static_cast<std::int64_t>(q);
    role.push_back(index_of(contracting, pos) < static_cast<std::int64_t>(contracting.size()) ? 'c'
                   : index_of(batch, pos) < static_cast<std::int64_t>(batch.size())           ? 'b'
                                                                                    : 'f');
  }
  auto run = [&](char r, std::size_t& first) {
    first = role.size();
    std::size_t last = 0, n = 0;
    for (std::size_t q = 0; q < role.size(); ++q) {
      if (role[q] != r) continue;
      if (n++ == 0) first = q;
      last = q;
    }
    return n == 0 || last - first + 1 == n;
  };
  std::size_t f0 = 0, c0 = 0;
  const bool ok = run('f', f0) && run('c', c0) &&
                  (f0 == role.size() || c0 == role.size() || f0 == 0 || c0 == 0);
  return ok ? 0.0 : elements(labels, extents);
}

// Whether the contracting pairs ascend in both operands' memory in one common
// order (dot_general copies one side otherwise).
bool orders_agree(const DotDims& d, const std::vector<std::int64_t>& l,
                  const std::vector<std::int64_t>& r, const std::vector<double>& extents) {
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
  for (std::size_t q = 0; q < d.lhs_contracting.size(); ++q) {
    const auto lab = l[static_cast<std::size_t>(d.lhs_contracting[q])];
    if (extents[static_cast<std::size_t>(lab)] != 1) {
      pairs.emplace_back(d.lhs_contracting[q], d.rhs_contracting[q]);
    }
  }
  std::sort(pairs.begin(), pairs.end());
  for (std::size_t q = 1; q < pairs.size(); ++q) {
    if (pairs[q].second < pairs[q - 1].second) return false;
  }
  (void)r;
  return true;
}

// Elements copied by one step: each operand that cannot be read in place,
// and the smaller one when their contracting orders disagree.
double step_copies(const std::vector<std::int64_t>& l, const std::vector<std::int64_t>& r,
                   const DotDims& d, const std::vector<double>& extents) {
  const double cl = fold_copy(l, d.lhs_contracting, d.lhs_batch, extents);
  const double cr = fold_copy(r, d.rhs_contracting, d.rhs_batch, extents);
  if (cl == 0 && cr == 0 && !orders_agree(d, l, r, extents)) {
    return std::min(elements(l, extents), elements(r, extents));
  }
  return cl + cr;
}

std::vector<std::vector<std::int64_t>> list_labels(const std::vector<ListItem>& list) {
  std::vector<std::vector<std::int64_t>> out;
  for (const auto& it : list) out.push_back(it.labels);
  return out;
}

// The operand order of every step (dot_general's result is [lhs free, rhs
// free, batch], so the order decides the layout the next step reads): per
// step, in path order, the order whose result the consuming step (or the
// output) reads with fewer copies. The consuming step's other operand is
// taken as laid out so far; one pass, linear in the steps.
std::vector<bool> choose_swaps(const Analysis& a, const std::vector<double>& extents,
                               const EinsumPath& path,
                               std::vector<std::vector<std::int64_t>> list) {
  const std::size_t n = path.size();
  // Which step consumes each step's result, and at which side.
  std::vector<std::int64_t> ids(list.size());
  std::iota(ids.begin(), ids.end(), std::int64_t{-1} - static_cast<std::int64_t>(list.size()));
  std::vector<std::int64_t> consumer(n, -1);
  for (std::size_t s = 0; s < n; ++s) {
    const auto [i, j] = path[s];
    for (std::int64_t id : {ids[static_cast<std::size_t>(i)], ids[static_cast<std::size_t>(j)]}) {
      if (id >= 0) consumer[static_cast<std::size_t>(id)] = static_cast<std::int64_t>(s);
    }
    ids.erase(ids.begin() + j);
    ids.erase(ids.begin() + i);
    ids.push_back(static_cast<std::int64_t>(s));
  }
  // Labels per item as decided so far (inputs, then step results).
  std::vector<std::vector<std::int64_t>> item(list.begin(), list.end());
  std::vector<std::vector<bool>> kept_at(n);
  std::vector<std::pair<std::int64_t, std::int64_t>> operands_at(n);  // item ids
  {
    std::vector<std::vector<std::int64_t>> sim = list;
    std::vector<std::int64_t> sim_ids(list.size());
    std::iota(sim_ids.begin(), sim_ids.end(), std::int64_t{0});
    for (std::size_t s = 0; s < n; ++s) {
      const auto [i, j] = path[s];
      operands_at[s] = {sim_ids[static_cast<std::size_t>(i)], sim_ids[static_cast<std::size_t>(j)]};
      const auto l = sim[static_cast<std::size_t>(i)], r = sim[static_cast<std::size_t>(j)];
      sim.erase(sim.begin() + j), sim_ids.erase(sim_ids.begin() + j);
      sim.erase(sim.begin() + i), sim_ids.erase(sim_ids.begin() + i);
      kept_at[s] = kept_labels(a, sim);
      sim.push_back(pair(l, r, kept_at[s]).labels);
      sim_ids.push_back(static_cast<std::int64_t>(item.size()));
      item.push_back(sim.back());
    }
  }
  const std::size_t inputs = list.size();
  std::vector<bool> swaps(n, false);
  for (std::size_t s = 0; s < n; ++s) {
    const auto& l = item[static_cast<std::size_t>(operands_at[s].first)];
    const auto& r = item[static_cast<std::size_t>(operands_at[s].second)];
    const PairShape keep = pair(l, r, kept_at[s]), flip = pair(r, l, kept_at[s]);
    auto cost = [&](const PairShape& ps) {
      if (consumer[s] < 0) {  // the output reads it: a permutation unless in order
        return ps.labels == a.output_distinct ? 0.0 : elements(ps.labels, extents);
      }
      const auto t = static_cast<std::size_t>(consumer[s]);
      const std::int64_t self = static_cast<std::int64_t>(inputs + s);
      const bool first = operands_at[t].first == self;
      const auto& other =
          item[static_cast<std::size_t>(first ? operands_at[t].second : operands_at[t].first)];
      const PairShape next =
          first ? pair(ps.labels, other, kept_at[t]) : pair(other, ps.labels, kept_at[t]);
      return first ? step_copies(ps.labels, other, next.dims, extents)
                   : step_copies(other, ps.labels, next.dims, extents);
    };
    swaps[s] = cost(flip) < cost(keep);
    item[inputs + s] = swaps[s] ? flip.labels : keep.labels;
  }
  return swaps;
}
}  // namespace

void check_sizes(const Spec& spec, const Analysis& a, const std::vector<double>& extents,
                 const EinsumPlan& plan, const char* op) {
  // The output with its repeated labels (diagonal embeddings) included.
  double out = 1;
  for (std::int64_t id : spec.output) out *= extents[static_cast<std::size_t>(a.dense(id))];
  const auto limit = static_cast<double>(kMaxElements);
  if (out > limit) {
    fail(ErrorKind::InvalidArgument, op, "the result would have ", out,
         " elements, more than 2^59 (the most a tensor may have); check the equation and extents");
  }
  if (plan.sliced_largest_intermediate > limit) {
    fail(ErrorKind::InvalidArgument, op, "the path's largest intermediate has ",
         plan.sliced_largest_intermediate,
         " elements, more than 2^59 (the most a tensor may have); set memory_limit to slice it");
  }
}

Program build_program(const Spec& spec, const std::vector<Dims>& dims, const EinsumOptions& options,
                      const char* op, DType dtype) {
  const Analysis a = analyse(spec, dims, op);
  const std::vector<double> extents = planning_extents(a);
  EinsumOptions planning = options;  // a memory limit counts this dtype's bytes
  planning.element_bytes = static_cast<std::int64_t>(itemsize(dtype));
  Program p;
  std::vector<ListItem> list;
  double live = 0;  // elements of the owned items in `list`
  for (std::size_t k = 0; k < spec.inputs.size(); ++k) {
    OperandPrep prep;
    std::vector<std::int64_t> labels = spec.inputs[k];
    for (bool again = true; again;) {
      again = false;
      for (std::size_t i = 0; i < labels.size() && !again; ++i) {
        for (std::size_t j = i + 1; j < labels.size() && !again; ++j) {
          if (labels[i] != labels[j]) continue;
          prep.diagonals.emplace_back(static_cast<std::int64_t>(i), static_cast<std::int64_t>(j));
          std::vector<std::int64_t> next{labels[i]};
          for (std::size_t q = 0; q < labels.size(); ++q) {
            if (q != i && q != j) next.push_back(labels[q]);
          }
          labels = std::move(next);
          again = true;
        }
      }
    }
    prep.summed = Axes(a.summed_axes[k]);
    // A diagonal alone is a view in the direct run; a sum makes a tensor.
    const bool owned = !prep.summed.empty();
    if (owned) live += elements(a.reduced[k], extents);
    list.push_back({a.reduced[k], owned});
    p.prep.push_back(std::move(prep));
  }
  p.cost = plan_dense(a.reduced, a.output_distinct, extents, planning, op, spec.soft_memory_limit);
  check_sizes(spec, a, extents, p.cost, op);
  // Sliced labels: their extents, and where each operand holds them. The
  // live-memory estimate below counts one slice's intermediates (sliced
  // labels of extent 1) plus the sum of the slices.
  std::vector<double> live_extents = extents;
  constexpr double kMaxSlices = 1e8;
  if (p.cost.slices > kMaxSlices) {
    fail(ErrorKind::InvalidArgument, op, "the memory limit needs ", p.cost.slices,
         " slices (more than 1e8 contractions of the path); raise memory_limit");
  }
  for (std::int64_t d : p.cost.sliced_labels) {
    const auto e = a.extent[static_cast<std::size_t>(d)];
    if (!e) {  // programs are built for constant extents (op.hpp plans at binding)
      fail(ErrorKind::Internal, op, "memory_limit slices label ",
           a.ids[static_cast<std::size_t>(d)], " whose extent is symbolic");
    }
    p.sliced_extents.push_back(*e);
    live_extents[static_cast<std::size_t>(d)] = 1;
  }
  if (!p.sliced_extents.empty()) {
    for (std::size_t k = 0; k < spec.inputs.size(); ++k) {
      std::vector<std::int64_t> axes;
      for (std::int64_t d : p.cost.sliced_labels) {
        const std::int64_t q = index_of(a.reduced[k], d);
        axes.push_back(q < static_cast<std::int64_t>(a.reduced[k].size()) ? q : -1);
      }
      p.sliced_axes.push_back(std::move(axes));
    }
    live = 0;
    for (std::size_t k = 0; k < list.size(); ++k) {
      if (list[k].owned) live += elements(list[k].labels, live_extents);
    }
    // Reported as the caller's labels (a letter's code point, an integer label).
    for (std::int64_t& l : p.cost.sliced_labels) l = a.ids[static_cast<std::size_t>(l)];
    const double fit =
        std::floor(*planning.memory_limit / (std::max(1.0, p.cost.sliced_largest_intermediate) *
                                             static_cast<double>(planning.element_bytes)));
    p.concurrent_slices =
        static_cast<std::int64_t>(std::clamp(fit, 1.0, std::min(p.cost.slices, 4096.0)));
  }
  p.peak_elements = live;
  double largest_step = 0;  // multiply-adds of one slice's largest pairwise step
  const std::vector<bool> swaps = choose_swaps(a, extents, p.cost.path, list_labels(list));
  for (std::size_t s = 0; s < p.cost.path.size(); ++s) {
    const auto [i, j] = p.cost.path[s];
    const ListItem lhs = list[static_cast<std::size_t>(i)], rhs = list[static_cast<std::size_t>(j)];
    list.erase(list.begin() + j);
    list.erase(list.begin() + i);
    const std::vector<bool> kept = kept_labels(a, list);
    PairShape ps =
        swaps[s] ? pair(rhs.labels, lhs.labels, kept) : pair(lhs.labels, rhs.labels, kept);
    const double result = elements(ps.labels, live_extents);
    std::vector<std::int64_t> both = lhs.labels;
    for (std::int64_t d : rhs.labels) {
      if (index_of(lhs.labels, d) == static_cast<std::int64_t>(lhs.labels.size()))
        both.push_back(d);
    }
    largest_step = std::max(largest_step, elements(both, live_extents));
    p.peak_elements = std::max(p.peak_elements, live + result);
    live += result;
    if (lhs.owned) live -= elements(lhs.labels, live_extents);
    if (rhs.owned) live -= elements(rhs.labels, live_extents);
    p.steps.push_back({i, j, swaps[s], std::move(ps.dims)});
    list.push_back({std::move(ps.labels), true});
  }

  // OpenBLAS threads a GEMM from about 64^3 multiply-adds on: slices with
  // such steps run one after another, each step on all of BLAS's threads
  // (concurrent threaded GEMMs contend and measured slower).
  constexpr double kThreadedGemmWork = 64.0 * 64.0 * 64.0;
  if (largest_step >= kThreadedGemmWork) p.concurrent_slices = 1;
  if (!p.sliced_extents.empty()) {  // the running sum of the slices
    p.peak_elements += elements(list.front().labels, extents);
    live = elements(list.front().labels, extents);
  }

  // The output: distinct labels in order, then diagonal embeddings.
  const std::vector<std::int64_t>& labels = list.front().labels;
  for (std::int64_t d : a.output_distinct) p.out_perm.push_back(index_of(labels, d));
  double out_elems = elements(a.output_distinct, extents);
  if (!identity(p.out_perm)) p.peak_elements = std::max(p.peak_elements, live + out_elems);
  std::vector<std::int64_t> cur = a.output_distinct;
  std::vector<std::int64_t> out;
  for (std::int64_t id : spec.output) out.push_back(a.dense(id));
  for (std::int64_t d : a.output_distinct) {
    const auto copies = std::count(out.begin(), out.end(), d);
    for (std::int64_t c = 1; c < copies; ++c) {
      const std::int64_t q0 = index_of(cur, d);
      Axes front{q0};
      for (std::int64_t q = 0; q < static_cast<std::int64_t>(cur.size()); ++q) {
        if (q != q0) front.push_back(q);
      }
      p.embeds.push_back(std::move(front));
      std::vector<std::int64_t> next{d, d};
      for (std::int64_t q = 0; q < static_cast<std::int64_t>(cur.size()); ++q) {
        if (q != q0) next.push_back(cur[static_cast<std::size_t>(q)]);
      }
      cur = std::move(next);
      const double grown = out_elems * extents[static_cast<std::size_t>(d)];
      p.peak_elements = std::max(p.peak_elements, out_elems + grown);
      out_elems = grown;
    }
  }
  std::vector<bool> used(cur.size(), false);
  for (std::int64_t d : out) {
    for (std::size_t q = 0; q < cur.size(); ++q) {
      if (!used[q] && cur[q] == d) {
        used[q] = true;
        p.final_perm.push_back(static_cast<std::int64_t>(q));
        break;
      }
    }
  }
  if (!identity(p.final_perm)) p.peak_elements = std::max(p.peak_elements, 2 * out_elems);
  p.semiring = options.semiring;
  if (p.semiring != Semiring::Standard) {
    check_semiring_dtype(p.semiring, dtype, op);
    p.spec = spec;
    p.options = options;
  }
  return p;
}

Tensor run_direct(const Program& p, std::vector<Tensor> xs, Backend& backend) {
  if (p.semiring != Semiring::Standard) {
    return run_semiring(p, p.semiring, xs, semiring_backend(backend, "einsum"));
  }
  std::vector<Tensor> list;
  list.reserve(xs.size());
  for (std::size_t k = 0; k < xs.size(); ++k) {
    Tensor x = xs[k];
    const OperandPrep& prep = p.prep[k];
    for (const auto& [i, j] : prep.diagonals) x = x.diagonal(0, i, j);  // a view
    if (!prep.summed.empty()) x = sum(x, prep.summed, backend);
    list.push_back(std::move(x));
  }
  auto contract = [&](std::vector<Tensor> items) {
    for (const PairStep& s : p.steps) {
      const auto i = static_cast<std::size_t>(s.i), j = static_cast<std::size_t>(s.j);
      // Moved out of the list: an intermediate dies with this step.
      Tensor a = std::move(items[i]), b = std::move(items[j]);
      items.erase(items.begin() + s.j);
      items.erase(items.begin() + s.i);
      items.push_back(s.swap ? dot_general(b, a, s.dims, backend)
                             : dot_general(a, b, s.dims, backend));
    }
    return std::move(items.front());
  };
  Tensor x;
  if (p.sliced_extents.empty()) {
    x = contract(std::move(list));
  } else {
    // Every slice on views of the operands (no copies), the results added
    // in place: slices [begin, end) into one partial sum, which starts as the
    // first slice's result (copied if that is a view of an operand).
    auto shares_operand = [&](const Tensor& r) {
      for (const Tensor& o : xs)
        if (r.storage() == o.storage()) return true;
      for (const Tensor& o : list)
        if (r.storage() == o.storage()) return true;
      return false;
    };
    auto run_slices = [&](std::int64_t begin, std::int64_t end) {
      Tensor acc;
      for_each_slice(
          p,
          [&](const std::vector<std::int64_t>& index) {
            std::vector<Tensor> part;
            part.reserve(list.size());
            for (std::size_t k = 0; k < list.size(); ++k) {
              Tensor v = list[k];
              for (std::size_t q = 0; q < index.size(); ++q) {
                const std::int64_t axis = p.sliced_axes[k][q];
                if (axis >= 0) v = v.slice(axis, index[q], index[q] + 1);
              }
              part.push_back(std::move(v));
            }
            Tensor r = contract(std::move(part));
            if (!acc.defined()) {
              acc = shares_operand(r) ? copy(r, backend) : std::move(r);
            } else {
              binary_into(BinaryOp::Add, acc, r, acc, backend);
            }
          },
          begin, end);
      return acc;
    };
    std::int64_t slices = 1;
    for (const std::int64_t e : p.sliced_extents) slices *= e;
    auto* cpu = dynamic_cast<CpuBackend*>(&backend);
    const std::int64_t workers = cpu == nullptr
                                     ? 1
                                     : std::min({p.concurrent_slices, slices,
                                                 static_cast<std::int64_t>(cpu->num_threads())});
    if (workers <= 1) {
      x = run_slices(0, slices);
    } else {
      // Rounds of `workers` slices on the backend's threads, each slice's
      // result kept apart, then added to the sum in slice order: the same
      // additions in the same order as the serial loop, so the same bits
      // whatever the thread count and the scheduling.
      std::vector<Tensor> round(static_cast<std::size_t>(workers));
      for (std::int64_t first = 0; first < slices; first += workers) {
        const std::int64_t count = std::min(workers, slices - first);
        cpu->parallel_for(count, 1, [&](std::int64_t begin, std::int64_t end) {
          for (std::int64_t w = begin; w < end; ++w) {
            round[static_cast<std::size_t>(w)] = run_slices(first + w, first + w + 1);
          }
        });
        for (std::int64_t w = 0; w < count; ++w) {
          Tensor& r = round[static_cast<std::size_t>(w)];
          if (!x.defined()) {
            x = std::move(r);
          } else {
            binary_into(BinaryOp::Add, x, r, x, backend);
          }
          r = Tensor{};
        }
      }
    }
  }
  list.clear();
  if (!identity(p.out_perm)) x = permute(x, p.out_perm, backend);
  for (const Axes& front : p.embeds) {
    if (!identity(front)) x = permute(x, front, backend);
    x = diag_embed(x, 0, backend);
  }
  if (!identity(p.final_perm)) x = permute(x, p.final_perm, backend);
  // No op ran (an identity equation, or diagonals only): return fresh memory.
  for (const Tensor& o : xs) {
    if (x.storage() == o.storage()) return copy(x, backend);
  }
  return x;
}

namespace {

void append_raw(std::string& s, std::int64_t v) {
  char b[sizeof v];
  std::memcpy(b, &v, sizeof v);
  s.append(b, sizeof v);
}

void append_signature(std::string& s, DType dtype, const std::vector<Shape>& shapes,
                      const EinsumOptions& options) {
  s.push_back('\0');
  s.push_back(static_cast<char>(dtype));
  s.push_back(static_cast<char>(options.strategy));
  // Everything else that changes the plan: the search's budget and seed,
  // the memory limit (slicing).
  // An unset option is its own byte, not a sentinel value that a caller
  // could also pass (budget_ms = -1 must fail in every cache state).
  append_raw(s, static_cast<std::int64_t>(options.seed));
  append_raw(s, static_cast<std::int64_t>(options.element_bytes));
  s.push_back(static_cast<char>(options.semiring));
  for (const std::optional<double>& number :
       {options.budget_ms, options.search_work, options.memory_limit}) {
    s.push_back(number ? 'v' : 'u');
    if (number) {
      char raw[sizeof(double)];
      std::memcpy(raw, &*number, sizeof raw);
      s.append(raw, sizeof raw);
    }
  }
  if (options.path) {
    s.push_back('p');
    append_raw(s, static_cast<std::int64_t>(options.path->size()));
    for (const auto& [i, j] : *options.path) append_raw(s, i), append_raw(s, j);
  } else {
    s.push_back('n');
  }
  // Ranks as full integers: a one-byte rank made (256, 1) and (0, 257) collide.
  append_raw(s, static_cast<std::int64_t>(shapes.size()));
  for (const Shape& sh : shapes) {
    append_raw(s, static_cast<std::int64_t>(sh.size()));
    for (std::int64_t e : sh.span()) append_raw(s, e);
  }
}

}  // namespace

std::string cache_key(std::string_view equation, DType dtype, const std::vector<Shape>& shapes,
                      const EinsumOptions& options) {
  std::string s;
  s.reserve(equation.size() + 4 + 24 * shapes.size());
  s.push_back('s');
  append_raw(s, static_cast<std::int64_t>(equation.size()));
  s.append(equation);
  append_signature(s, dtype, shapes, options);
  return s;
}

std::string cache_key(const EinsumLabels& labels, DType dtype, const std::vector<Shape>& shapes,
                      const EinsumOptions& options) {
  std::string s{"l"};
  for (const auto& in : labels.inputs) {
    append_raw(s, static_cast<std::int64_t>(in.size()));
    for (std::int64_t l : in) append_raw(s, l);
  }
  if (labels.output) {
    s.push_back('o');
    append_raw(s, static_cast<std::int64_t>(labels.output->size()));
    for (std::int64_t l : *labels.output) append_raw(s, l);
  }
  append_signature(s, dtype, shapes, options);
  return s;
}

}  // namespace tenferro::einsum_detail
