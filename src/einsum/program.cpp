// Building a prepared einsum program and running it on untracked values.

#include "einsum/program.hpp"

#include <algorithm>
#include <cstring>

#include "tenferro/backend/contract.hpp"
#include "tenferro/backend/reduce.hpp"
#include "tenferro/backend/structural.hpp"

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

}  // namespace

Program build_program(const Spec& spec, const std::vector<Dims>& dims, const EinsumOptions& options,
                      const char* op) {
  const Analysis a = analyse(spec, dims, op);
  const std::vector<double> extents = planning_extents(a);
  Program p;
  struct Item {
    std::vector<std::int64_t> labels;  // dense
    bool owned = false;                // a tensor of ours (not the caller's operand)
  };
  std::vector<Item> list;
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
  p.peak_elements = live;

  p.cost = plan_dense(a.reduced, a.output_distinct, extents, options);
  std::vector<std::int64_t> out_labels = a.output_distinct;
  for (std::size_t s = 0; s < p.cost.path.size(); ++s) {
    const auto [i, j] = p.cost.path[s];
    const Item lhs = list[static_cast<std::size_t>(i)], rhs = list[static_cast<std::size_t>(j)];
    list.erase(list.begin() + j);
    list.erase(list.begin() + i);
    std::vector<bool> kept(a.ids.size(), false);
    for (std::int64_t d : a.output_distinct) kept[static_cast<std::size_t>(d)] = true;
    for (const Item& it : list) {
      for (std::int64_t d : it.labels) kept[static_cast<std::size_t>(d)] = true;
    }
    PairShape ps = pair(lhs.labels, rhs.labels, kept);
    bool swap = false;
    if (s + 1 == p.cost.path.size()) {
      // The last step: take the operand order whose result needs no permutation.
      PairShape other = pair(rhs.labels, lhs.labels, kept);
      if (ps.labels != out_labels && other.labels == out_labels) ps = std::move(other), swap = true;
    }
    const double result = elements(ps.labels, extents);
    p.peak_elements = std::max(p.peak_elements, live + result);
    live += result;
    if (lhs.owned) live -= elements(lhs.labels, extents);
    if (rhs.owned) live -= elements(rhs.labels, extents);
    p.steps.push_back({i, j, swap, std::move(ps.dims)});
    list.push_back({std::move(ps.labels), true});
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
  return p;
}

Tensor run_direct(const Program& p, std::vector<Tensor> xs, Backend& backend) {
  std::vector<Tensor> list;
  list.reserve(xs.size());
  for (std::size_t k = 0; k < xs.size(); ++k) {
    Tensor x = xs[k];
    const OperandPrep& prep = p.prep[k];
    for (const auto& [i, j] : prep.diagonals) x = x.diagonal(0, i, j);  // a view
    if (!prep.summed.empty()) x = sum(x, prep.summed, backend);
    list.push_back(std::move(x));
  }
  for (const PairStep& s : p.steps) {
    const auto i = static_cast<std::size_t>(s.i), j = static_cast<std::size_t>(s.j);
    // Moved out of the list: an intermediate dies with this step.
    Tensor a = std::move(list[i]), b = std::move(list[j]);
    list.erase(list.begin() + s.j);
    list.erase(list.begin() + s.i);
    list.push_back(s.swap ? dot_general(b, a, s.dims, backend)
                          : dot_general(a, b, s.dims, backend));
  }
  Tensor x = std::move(list.front());
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
  if (options.path) {
    s.push_back('p');
    for (const auto& [i, j] : *options.path) append_raw(s, i), append_raw(s, j);
  }
  for (const Shape& sh : shapes) {
    s.push_back(static_cast<char>(sh.size()));
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
