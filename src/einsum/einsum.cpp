// einsum composed of core ops, written once for both AD tiers (so AD comes
// from the composed ops): diagonals of repeated labels, sums of labels that
// need no partner, pairwise dot_general along the planned path, a final
// permute and diag_embed for labels repeated in the output. The direct tier
// runs the same composition on an untracked eager runtime over the backend.

#include <algorithm>
#include <memory>
#include <numeric>

#include "einsum/common.hpp"
#include "einsum/slicing.hpp"
#include "tenferro/ad/eager_ops.hpp"
#include "tenferro/backend/cpu/cpu_backend.hpp"

namespace tenferro {
namespace einsum_detail {
namespace {

constexpr const char* kOp = "einsum";

template <AdTensor T>
std::optional<std::int64_t> extent(const T& x, std::size_t axis) {
  if constexpr (std::same_as<T, EagerTensor>) {
    return x.shape()[axis];
  } else {
    return x.shape()[axis].try_constant();
  }
}

template <AdTensor T>
Dims dims_of(const T& x) {
  Dims d;
  for (std::size_t i = 0; i < static_cast<std::size_t>(x.rank()); ++i) d.push_back(extent(x, i));
  return d;
}

template <AdTensor T>
T permute_if(const T& x, const Axes& perm) {
  for (std::size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<std::int64_t>(i)) return permute(x, perm);
  }
  return x;
}

template <class V>
std::int64_t index_of(const V& v, std::int64_t x) {
  return static_cast<std::int64_t>(std::find(v.begin(), v.end(), x) - v.begin());
}

template <AdTensor T>
T run(const Spec& spec, const std::vector<T>& xs, const EinsumOptions& options) {
  const DType dt = xs[0].dtype();
  for (std::size_t k = 0; k < xs.size(); ++k) {
    if (xs[k].dtype() != dt) {
      fail(ErrorKind::DTypeMismatch, kOp, "operand ", k, " is ", name(xs[k].dtype()),
           " but operand 0 is ", name(dt), "; convert the operands to one dtype");
    }
  }
  std::vector<Dims> dims;
  for (const T& x : xs) dims.push_back(dims_of(x));
  const Analysis a = analyse(spec, dims, kOp);

  // Per operand: diagonals, then the sums that need no partner.
  using Item = LabelledTensor<T>;
  std::vector<Item> list;
  for (std::size_t k = 0; k < xs.size(); ++k) {
    T x = xs[k];
    std::vector<std::int64_t> labels = spec.inputs[k];
    for (bool again = true; again;) {
      again = false;
      for (std::size_t i = 0; i < labels.size() && !again; ++i) {
        for (std::size_t j = i + 1; j < labels.size() && !again; ++j) {
          if (labels[i] != labels[j]) continue;
          x = diagonal(x, 0, static_cast<std::int64_t>(i), static_cast<std::int64_t>(j));
          std::vector<std::int64_t> next{labels[i]};
          for (std::size_t q = 0; q < labels.size(); ++q) {
            if (q != i && q != j) next.push_back(labels[q]);
          }
          labels = std::move(next);
          again = true;
        }
      }
    }
    if (!a.summed_axes[k].empty()) x = sum(x, Axes(a.summed_axes[k]), false);
    list.push_back({x, a.reduced[k]});
  }

  std::vector<std::int64_t> reduced_out = a.output_distinct;
  EinsumOptions planning = options;  // a memory limit counts this dtype's bytes
  planning.element_bytes = static_cast<std::int64_t>(itemsize(dt));
  const EinsumPlan plan = plan_dense(a.reduced, reduced_out, planning_extents(a), planning);

  auto contract = [&](std::vector<Item> items) {
    auto& list = items;
    for (const auto& [i, j] : plan.path) {
      const Item lhs = list[static_cast<std::size_t>(i)], rhs = list[static_cast<std::size_t>(j)];
      list.erase(list.begin() + j);
      list.erase(list.begin() + i);
      std::vector<bool> kept(a.ids.size(), false);
      for (std::int64_t d : a.output_distinct) kept[static_cast<std::size_t>(d)] = true;
      for (const Item& it : list) {
        for (std::int64_t d : it.labels) kept[static_cast<std::size_t>(d)] = true;
      }
      DotDims dd;
      std::vector<std::int64_t> free_l, free_r, batch;
      for (std::size_t p = 0; p < lhs.labels.size(); ++p) {
        const std::int64_t d = lhs.labels[p], q = index_of(rhs.labels, d);
        if (q == static_cast<std::int64_t>(rhs.labels.size())) {
          free_l.push_back(d);
        } else if (kept[static_cast<std::size_t>(d)]) {
          dd.lhs_batch.push_back(static_cast<std::int64_t>(p)), dd.rhs_batch.push_back(q);
          batch.push_back(d);
        } else {
          dd.lhs_contracting.push_back(static_cast<std::int64_t>(p));
          dd.rhs_contracting.push_back(q);
        }
      }
      for (std::int64_t d : rhs.labels) {
        if (index_of(lhs.labels, d) == static_cast<std::int64_t>(lhs.labels.size())) {
          free_r.push_back(d);
        }
      }
      std::vector<std::int64_t> labels = free_l;
      labels.insert(labels.end(), free_r.begin(), free_r.end());
      labels.insert(labels.end(), batch.begin(), batch.end());
      list.push_back({dot_general(lhs.x, rhs.x, dd), std::move(labels)});
    }
    return list.front();
  };
  // With sliced labels (a memory limit), each slice contracts the same path
  // and the slices add up (src/einsum/slicing.hpp).
  const Item whole =
      plan.sliced_labels.empty()
          ? contract(std::move(list))
          : contract_slices<T>(list, plan.sliced_labels, a,
                               [&](std::vector<Item> part) { return contract(std::move(part)); });

  // The output: distinct labels in order, then diagonal embeddings.
  T x = whole.x;
  const std::vector<std::int64_t>& labels = whole.labels;
  Axes perm;
  for (std::int64_t d : a.output_distinct) perm.push_back(index_of(labels, d));
  x = permute_if(x, perm);
  std::vector<std::int64_t> cur = a.output_distinct;
  std::vector<std::int64_t> out;
  for (std::int64_t id : spec.output) out.push_back(a.dense(id));
  for (std::int64_t d : a.output_distinct) {
    const auto copies = std::count(out.begin(), out.end(), d);
    for (std::int64_t c = 1; c < copies; ++c) {
      const std::int64_t p = index_of(cur, d);
      Axes front{p};
      for (std::int64_t q = 0; q < static_cast<std::int64_t>(cur.size()); ++q) {
        if (q != p) front.push_back(q);
      }
      x = diag_embed(permute_if(x, front), 0);
      std::vector<std::int64_t> next{d, d};
      for (std::int64_t q = 0; q < static_cast<std::int64_t>(cur.size()); ++q) {
        if (q != p) next.push_back(cur[static_cast<std::size_t>(q)]);
      }
      cur = std::move(next);
    }
  }
  Axes final_perm;
  std::vector<bool> used(cur.size(), false);
  for (std::int64_t d : out) {
    for (std::size_t q = 0; q < cur.size(); ++q) {
      if (!used[q] && cur[q] == d) {
        used[q] = true;
        final_perm.push_back(static_cast<std::int64_t>(q));
        break;
      }
    }
  }
  return permute_if(x, final_perm);
}

template <class X>
std::vector<std::int64_t> ranks_of(const std::vector<X>& xs) {
  std::vector<std::int64_t> r;
  for (std::size_t k = 0; k < xs.size(); ++k) {
    if (!xs[k].defined()) fail(ErrorKind::InvalidArgument, kOp, "operand ", k, " is undefined");
    r.push_back(xs[k].rank());
  }
  return r;
}

// A result that aliases an operand (an identity equation such as "ij->ij")
// is copied: direct ops return fresh tensors.
Tensor fresh(Tensor r, const std::vector<Tensor>& operands) {
  for (const Tensor& x : operands) {
    if (r.storage() == x.storage()) return r.clone();
  }
  return r;
}

template <class F>
Tensor on_backend(Backend& backend, F&& f) {
  auto* cpu = dynamic_cast<CpuBackend*>(&backend);
  if (cpu == nullptr) fail(ErrorKind::Unsupported, kOp, "einsum runs on the CPU backend only");
  // Non-owning: the caller owns the backend for the duration of the call.
  std::shared_ptr<CpuBackend> borrowed(std::shared_ptr<CpuBackend>{}, cpu);
  auto rt = EagerRuntime::make(Runtime::builder().cpu(borrowed).build());
  return f(*rt);
}

std::vector<EagerTensor> wrap(EagerRuntime& rt, const std::vector<Tensor>& xs) {
  std::vector<EagerTensor> out;
  for (const Tensor& x : xs) out.push_back(rt.tensor(x));
  return out;
}

std::vector<Dims> shape_dims(const std::vector<Shape>& shapes) {
  std::vector<Dims> dims;
  for (const Shape& s : shapes) {
    Dims d;
    for (std::int64_t e : s.span()) d.push_back(e);
    dims.push_back(std::move(d));
  }
  return dims;
}

EinsumPlan path_of(const Spec& spec, const std::vector<Shape>& shapes,
                   const EinsumOptions& options) {
  const Analysis a = analyse(spec, shape_dims(shapes), "einsum_path");
  EinsumPlan plan = plan_dense(a.reduced, a.output_distinct, planning_extents(a), options);
  for (std::int64_t& l : plan.sliced_labels) l = a.ids[static_cast<std::size_t>(l)];  // user ids
  return plan;
}

std::vector<std::int64_t> shape_ranks(const std::vector<Shape>& shapes) {
  std::vector<std::int64_t> r;
  for (const Shape& s : shapes) r.push_back(static_cast<std::int64_t>(s.size()));
  return r;
}

}  // namespace
}  // namespace einsum_detail

template <AdTensor T>
T einsum(std::string_view equation, const std::vector<T>& operands, const EinsumOptions& options) {
  using namespace einsum_detail;
  return run(parse_equation(equation, ranks_of(operands)), operands, options);
}

template <AdTensor T>
T einsum(const EinsumLabels& labels, const std::vector<T>& operands, const EinsumOptions& options) {
  using namespace einsum_detail;
  return run(parse_labels(labels, ranks_of(operands)), operands, options);
}

Tensor einsum(std::string_view equation, const std::vector<Tensor>& operands, Backend& backend,
              const EinsumOptions& options) {
  using namespace einsum_detail;
  const Spec spec = parse_equation(equation, ranks_of(operands));
  return fresh(
      on_backend(backend,
                 [&](EagerRuntime& rt) { return run(spec, wrap(rt, operands), options).value(); }),
      operands);
}

Tensor einsum(const EinsumLabels& labels, const std::vector<Tensor>& operands, Backend& backend,
              const EinsumOptions& options) {
  using namespace einsum_detail;
  const Spec spec = parse_labels(labels, ranks_of(operands));
  return fresh(
      on_backend(backend,
                 [&](EagerRuntime& rt) { return run(spec, wrap(rt, operands), options).value(); }),
      operands);
}

EinsumPlan einsum_path(std::string_view equation, const std::vector<Shape>& shapes,
                       const EinsumOptions& options) {
  using namespace einsum_detail;
  return path_of(parse_equation(equation, shape_ranks(shapes)), shapes, options);
}

EinsumPlan einsum_path(const EinsumLabels& labels, const std::vector<Shape>& shapes,
                       const EinsumOptions& options) {
  using namespace einsum_detail;
  return path_of(parse_labels(labels, shape_ranks(shapes)), shapes, options);
}

#define TF_INSTANTIATE(T)                                                              \
  template T einsum<T>(std::string_view, const std::vector<T>&, const EinsumOptions&); \
  template T einsum<T>(const EinsumLabels&, const std::vector<T>&, const EinsumOptions&);
TF_INSTANTIATE(EagerTensor)
TF_INSTANTIATE(TracedTensor)
#undef TF_INSTANTIATE

}  // namespace tenferro
