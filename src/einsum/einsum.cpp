// The einsum tiers over one prepared program (program.hpp): the direct tier
// and untracked eager calls run its steps on the values; tracked eager calls
// and the traced tier run the same steps through the AD ops (so AD comes from
// the composed ops). Eager calls keep programs in the runtime's extension
// cache ("tenferro.einsum"/"plans"): a warm call neither parses nor plans.

#include <algorithm>
#include <limits>
#include <memory>

#include "einsum/op.hpp"
#include "einsum/program.hpp"
#include "einsum/semiring_op.hpp"
#include "einsum/semiring_run.hpp"
#include "tenferro/ad/eager_ops.hpp"
#include "tenferro/backend/cpu/cpu_backend.hpp"
#include "tenferro/runtime/runtime.hpp"

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

template <class X>
std::vector<std::int64_t> ranks_of(const std::vector<X>& xs) {
  std::vector<std::int64_t> r;
  for (std::size_t k = 0; k < xs.size(); ++k) {
    if (!xs[k].defined()) fail(ErrorKind::InvalidArgument, kOp, "operand ", k, " is undefined");
    r.push_back(xs[k].rank());
  }
  return r;
}

template <class X>
void check_dtypes(const std::vector<X>& xs) {
  for (std::size_t k = 1; k < xs.size(); ++k) {
    if (xs[k].dtype() != xs[0].dtype()) {
      fail(ErrorKind::DTypeMismatch, kOp, "operand ", k, " is ", name(xs[k].dtype()),
           " but operand 0 is ", name(xs[0].dtype()), "; convert the operands to one dtype");
    }
  }
}

template <class X>
std::vector<Shape> shapes_of(const std::vector<X>& xs) {
  std::vector<Shape> s;
  s.reserve(xs.size());
  for (const X& x : xs) s.push_back(x.shape());
  return s;
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

std::vector<std::int64_t> shape_ranks(const std::vector<Shape>& shapes) {
  std::vector<std::int64_t> r;
  for (const Shape& s : shapes) r.push_back(static_cast<std::int64_t>(s.size()));
  return r;
}

// The prepared steps through the AD ops (the recorded composition).
template <AdTensor T>
T run_ad(const Program& p, const std::vector<T>& xs) {
  // A semiring contraction records one op with the tropical rules.
  if (p.semiring != Semiring::Standard) return apply_semiring(p.spec, xs, p.options);
  std::vector<T> list;
  list.reserve(xs.size());
  for (std::size_t k = 0; k < xs.size(); ++k) {
    T x = xs[k];
    for (const auto& [i, j] : p.prep[k].diagonals) x = diagonal(x, 0, i, j);
    if (!p.prep[k].summed.empty()) x = sum(x, p.prep[k].summed, false);
    list.push_back(std::move(x));
  }
  auto contract = [&](std::vector<T> items) {
    for (const PairStep& s : p.steps) {
      const auto i = static_cast<std::size_t>(s.i), j = static_cast<std::size_t>(s.j);
      T a = std::move(items[i]), b = std::move(items[j]);
      items.erase(items.begin() + s.j);
      items.erase(items.begin() + s.i);
      items.push_back(s.swap ? dot_general(b, a, s.dims) : dot_general(a, b, s.dims));
    }
    return std::move(items.front());
  };
  T x;
  if (p.sliced_extents.empty()) {
    x = contract(std::move(list));
  } else {
    // Every slice contracts static slices of the operands along the same
    // path; the results add up (derivatives come through slice and add).
    bool first = true;
    for_each_slice(p, [&](const std::vector<std::int64_t>& index) {
      std::vector<T> part;
      part.reserve(list.size());
      for (std::size_t k = 0; k < list.size(); ++k) {
        const T& v = list[k];
        Shape start(static_cast<std::size_t>(v.rank()), 0), limit;
        bool cut = false;
        for (std::int64_t q = 0; q < v.rank(); ++q) {
          const auto e = extent(v, static_cast<std::size_t>(q));
          if (!e) {  // symbolic extents take the einsum node (op.hpp)
            fail(ErrorKind::Internal, kOp, "recorded slicing met a symbolic extent");
          }
          limit.push_back(*e);
        }
        for (std::size_t q = 0; q < index.size(); ++q) {
          const std::int64_t axis = p.sliced_axes[k][q];
          if (axis < 0) continue;
          start[static_cast<std::size_t>(axis)] = index[q];
          limit[static_cast<std::size_t>(axis)] = index[q] + 1;
          cut = true;
        }
        part.push_back(cut ? slice(v, start, limit) : v);
      }
      T r = contract(std::move(part));
      x = first ? std::move(r) : add(x, r);
      first = false;
    });
  }
  x = permute_if(x, p.out_perm);
  for (const Axes& front : p.embeds) x = diag_embed(permute_if(x, front), 0);
  return permute_if(x, p.final_perm);
}

// Whether an eager call records nothing: no capture, and recording off or no
// operand tracked. Then the prepared steps run on the values directly.
bool untracked(const std::vector<EagerTensor>& xs) {
  if (!grad_recording_enabled()) return true;
  if (capture_active()) return false;
  for (const EagerTensor& x : xs) {
    if (x.requires_grad() || !x.is_leaf()) return false;
  }
  return true;
}

EagerTensor run_eager(const Program& p, const std::vector<EagerTensor>& xs) {
  if (!untracked(xs)) return run_ad(p, xs);
  const EagerRuntimePtr& rt = xs.front().runtime();
  std::vector<Tensor> values;
  values.reserve(xs.size());
  for (const EagerTensor& x : xs) {
    if (x.runtime() != rt) {
      fail(ErrorKind::ContextMismatch, kOp, "operand ", values.size(),
           " belongs to another eager runtime than operand 0; move it with detach_into(target "
           "runtime) first");
    }
    values.push_back(x.value());
  }
  return rt->tensor(run_direct(p, std::move(values), rt->backend()));
}

// The size a cached program is charged (its vectors, roughly).
std::size_t program_bytes(const Program& p) {
  std::size_t n = sizeof(Program) + p.cost.path.size() * 16;
  for (const auto& s : p.steps) {
    n += sizeof(PairStep) + 8 * (s.dims.lhs_batch.size() * 2 + s.dims.lhs_contracting.size() * 2);
  }
  for (const auto& s : p.shapes) n += 8 * s.size() + sizeof(Shape);
  for (const auto& o : p.prep) n += sizeof(OperandPrep) + 16 * o.diagonals.size();
  return n;
}

// The program for (equation, dtype, shapes, options) from a runtime's
// extension cache: parse, check and plan only on a miss. The equation is
// checked before the dtypes, as in the traced tier (a hit was parsed for
// these ranks already).
template <class Equation, class X, class Parse>
std::shared_ptr<const Program> cached_program(ExtensionCacheStore& store, const Equation& equation,
                                              const std::vector<X>& xs,
                                              const std::vector<std::int64_t>& ranks,
                                              const EinsumOptions& options, Parse&& parse) {
  const DType dtype = xs.front().dtype();
  std::vector<Shape> shapes = shapes_of(xs);
  const ExtensionCacheKey key{kCacheFamily, kPlanCache,
                              cache_key(equation, dtype, shapes, options)};
  std::shared_ptr<const Program> p = store.get<Program>(key);
  if (p) {
    check_dtypes(xs);
    return p;
  }
  Spec spec = parse(ranks);
  check_dtypes(xs);
  auto made =
      std::make_shared<Program>(build_program(spec, shape_dims(shapes), options, kOp, dtype));
  made->dtype = dtype;
  made->shapes = std::move(shapes);
  store.put<Program>(key, made, program_bytes(*made));
  return made;
}

// The eager call, on the operands' runtime cache.
template <class Equation, class Parse>
EagerTensor eager_cached(const Equation& equation, const std::vector<EagerTensor>& xs,
                         const EinsumOptions& options, Parse&& parse) {
  const std::vector<std::int64_t> ranks = ranks_of(xs);
  if (xs.empty()) (void)parse(ranks);  // the operand-count error
  ExtensionCacheStore& store = xs.front().runtime()->runtime()->extension_caches();
  return run_eager(*cached_program(store, equation, xs, ranks, options, parse), xs);
}

// The direct call, on the cache of the backend's attached runtime: a warm call
// neither parses nor plans.
template <class Equation, class Parse>
Tensor direct_cached(const Equation& equation, const std::vector<Tensor>& xs, Backend& backend,
                     const EinsumOptions& options, Parse&& parse) {
  const std::vector<std::int64_t> ranks = ranks_of(xs);
  if (xs.empty()) (void)parse(ranks);  // the operand-count error
  ExtensionCacheStore& store = EagerRuntime::attached(backend)->runtime()->extension_caches();
  return run_direct(*cached_program(store, equation, xs, ranks, options, parse), xs, backend);
}

template <AdTensor T>
T traced(const Spec& spec, const std::vector<T>& xs, const EinsumOptions& options) {
  check_dtypes(xs);
  std::vector<Dims> dims;
  bool symbolic = false;
  for (const T& x : xs) {
    dims.push_back(dims_of(x));
    for (const auto& e : dims.back()) symbolic = symbolic || !e;
  }
  // Symbolic extents: one node that plans when they bind. Constant ones:
  // plan now and record the pairwise steps (their reverse pass follows the
  // same tree, one pass for every operand's cotangent). A semiring
  // contraction is one node either way (it plans when it is prepared).
  if (options.semiring != Semiring::Standard) return apply_semiring(spec, xs, options);
  if (symbolic) return apply_traced(spec, xs, options);
  return run_ad(build_program(spec, dims, options, kOp, xs.empty() ? DType::F64 : xs[0].dtype()),
                xs);
}

EinsumPlan make_prepared(Program p, DType dtype, const std::vector<Shape>& shapes) {
  p.dtype = dtype;
  p.shapes = shapes;
  auto shared = std::make_shared<const Program>(std::move(p));
  return EinsumPlan(std::move(shared));
}

void check_signature(const Program& p, DType dtype, const std::vector<Shape>& shapes) {
  if (shapes.size() != p.shapes.size()) {
    fail(ErrorKind::InvalidArgument, "EinsumPlan::run", "got ", shapes.size(),
         " operands but the plan was prepared for ", p.shapes.size());
  }
  if (dtype != p.dtype) {
    fail(ErrorKind::DTypeMismatch, "EinsumPlan::run", "the operands are ", name(dtype),
         " but the plan was prepared for ", name(p.dtype), "; prepare a plan for ", name(dtype));
  }
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    if (shapes[k].size() != p.shapes[k].size()) {
      fail(ErrorKind::RankMismatch, "EinsumPlan::run", "operand ", k, " has rank ",
           shapes[k].size(), " but the plan was prepared for rank ", p.shapes[k].size());
    }
    if (!(shapes[k] == p.shapes[k])) {
      fail(ErrorKind::ShapeMismatch, "EinsumPlan::run", "operand ", k, " has shape ",
           shape_to_string(shapes[k].span()), " but the plan was prepared for ",
           shape_to_string(p.shapes[k].span()), "; prepare a plan for these shapes");
    }
  }
}

}  // namespace
}  // namespace einsum_detail

template <AdTensor T>
T einsum(std::string_view equation, const std::vector<T>& operands, const EinsumOptions& options) {
  using namespace einsum_detail;
  if constexpr (std::same_as<T, EagerTensor>) {
    return eager_cached(equation, operands, options, [&](const std::vector<std::int64_t>& r) {
      return parse_equation(equation, r);
    });
  } else {
    return traced(parse_equation(equation, ranks_of(operands)), operands, options);
  }
}

template <AdTensor T>
T einsum(const EinsumLabels& labels, const std::vector<T>& operands, const EinsumOptions& options) {
  using namespace einsum_detail;
  if constexpr (std::same_as<T, EagerTensor>) {
    return eager_cached(labels, operands, options, [&](const std::vector<std::int64_t>& r) {
      return parse_labels(labels, r);
    });
  } else {
    return traced(parse_labels(labels, ranks_of(operands)), operands, options);
  }
}

Tensor einsum(std::string_view equation, const std::vector<Tensor>& operands, Backend& backend,
              const EinsumOptions& options) {
  using namespace einsum_detail;
  return direct_cached(
      equation, operands, backend, options,
      [&](const std::vector<std::int64_t>& r) { return parse_equation(equation, r); });
}

Tensor einsum(const EinsumLabels& labels, const std::vector<Tensor>& operands, Backend& backend,
              const EinsumOptions& options) {
  using namespace einsum_detail;
  return direct_cached(labels, operands, backend, options,
                       [&](const std::vector<std::int64_t>& r) { return parse_labels(labels, r); });
}

namespace einsum_detail {
namespace {
template <class Equation, class Parse>
CountedTensor count_cached(const Equation& equation, const std::vector<Tensor>& xs,
                           Backend& backend, const EinsumOptions& options, Parse&& parse) {
  const std::vector<std::int64_t> ranks = ranks_of(xs);
  if (xs.empty()) (void)parse(ranks);  // the operand-count error
  if (options.semiring != Semiring::MaxPlus && options.semiring != Semiring::MinPlus) {
    fail(ErrorKind::InvalidArgument, "einsum_count", "counting needs options.semiring MaxPlus or ",
         "MinPlus, got ", name(options.semiring));
  }
  CpuBackend& cpu = semiring_backend(backend, "einsum_count");
  ExtensionCacheStore& store = EagerRuntime::attached(backend)->runtime()->extension_caches();
  return run_counting(*cached_program(store, equation, xs, ranks, options, parse), options.semiring,
                      xs, cpu);
}

EinsumPlan path_of(const Spec& spec, const std::vector<Shape>& shapes,
                   const EinsumOptions& options) {
  const Analysis a = analyse(spec, shape_dims(shapes), "einsum_path");
  const std::vector<double> extents = planning_extents(a);
  EinsumPlan plan = plan_dense(a.reduced, a.output_distinct, extents, options, "einsum_path");
  check_sizes(spec, a, extents, plan, "einsum_path");
  for (std::int64_t& l : plan.sliced_labels) l = a.ids[static_cast<std::size_t>(l)];  // user ids
  return plan;
}
}  // namespace
}  // namespace einsum_detail

CountedTensor einsum_count(std::string_view equation, const std::vector<Tensor>& operands,
                           Backend& backend, const EinsumOptions& options) {
  using namespace einsum_detail;
  return count_cached(
      equation, operands, backend, options,
      [&](const std::vector<std::int64_t>& r) { return parse_equation(equation, r); });
}

CountedTensor einsum_count(const EinsumLabels& labels, const std::vector<Tensor>& operands,
                           Backend& backend, const EinsumOptions& options) {
  using namespace einsum_detail;
  return count_cached(labels, operands, backend, options,
                      [&](const std::vector<std::int64_t>& r) { return parse_labels(labels, r); });
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

// ---- EinsumPlan ---------------------------------------------------------------------

EinsumPlan::EinsumPlan(std::shared_ptr<const einsum_detail::Program> program)
    : EinsumPlan(program->cost) {
  program_ = std::move(program);
  concurrent_slices = program_->concurrent_slices;
  // Saturated: a plan's peak may exceed what an int64 counts in bytes.
  const double bytes = program_->peak_elements * static_cast<double>(itemsize(program_->dtype));
  peak_bytes =
      bytes < 0x1p63 ? static_cast<std::int64_t>(bytes) : std::numeric_limits<std::int64_t>::max();
}

EinsumPlan EinsumPlan::prepare(std::string_view equation, DType dtype,
                               const std::vector<Shape>& shapes, const EinsumOptions& options) {
  using namespace einsum_detail;
  const Spec spec = parse_equation(equation, shape_ranks(shapes));
  return make_prepared(
      build_program(spec, shape_dims(shapes), options, "EinsumPlan::prepare", dtype), dtype,
      shapes);
}

EinsumPlan EinsumPlan::prepare(const EinsumLabels& labels, DType dtype,
                               const std::vector<Shape>& shapes, const EinsumOptions& options) {
  using namespace einsum_detail;
  const Spec spec = parse_labels(labels, shape_ranks(shapes));
  return make_prepared(
      build_program(spec, shape_dims(shapes), options, "EinsumPlan::prepare", dtype), dtype,
      shapes);
}

namespace {
const einsum_detail::Program& require_prepared(
    const std::shared_ptr<const einsum_detail::Program>& p) {
  if (!p) {
    fail(ErrorKind::InvalidArgument, "EinsumPlan",
         "this plan describes an order only (from einsum_path or default-constructed); make a "
         "runnable one with EinsumPlan::prepare");
  }
  return *p;
}
}  // namespace

DType EinsumPlan::dtype() const {
  return require_prepared(program_).dtype;
}

const std::vector<Shape>& EinsumPlan::shapes() const {
  return require_prepared(program_).shapes;
}

Tensor EinsumPlan::run(const std::vector<Tensor>& operands, Backend& backend) const {
  using namespace einsum_detail;
  const Program& p = require_prepared(program_);
  ranks_of(operands);
  check_dtypes(operands);
  check_signature(p, operands.empty() ? p.dtype : operands.front().dtype(), shapes_of(operands));
  return run_direct(p, operands, backend);
}

EagerTensor EinsumPlan::run(const std::vector<EagerTensor>& operands) const {
  using namespace einsum_detail;
  const Program& p = require_prepared(program_);
  ranks_of(operands);
  check_dtypes(operands);
  check_signature(p, operands.empty() ? p.dtype : operands.front().dtype(), shapes_of(operands));
  return run_eager(p, operands);
}

#define TF_INSTANTIATE(T)                                                              \
  template T einsum<T>(std::string_view, const std::vector<T>&, const EinsumOptions&); \
  template T einsum<T>(const EinsumLabels&, const std::vector<T>&, const EinsumOptions&);
TF_INSTANTIATE(EagerTensor)
TF_INSTANTIATE(TracedTensor)
#undef TF_INSTANTIATE

}  // namespace tenferro
