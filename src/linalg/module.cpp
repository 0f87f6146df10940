// The linalg family's module, tier dispatch and shared helpers.

#include <algorithm>

#include "linalg/common.hpp"

namespace tenferro::linalg::detail {

// ---- module ------------------------------------------------------------------------

namespace {
ExtensionModulePtr build_module(const EngineId& engine) {
  auto module = std::make_shared<SimpleModule>(kModuleId);
  ad::FamilyRules rules;
  Registry registry{*module, rules, engine};
  register_triangular(registry);
  register_spectral(registry);
  register_factor(registry);
  register_composite(registry);
  register_truncated(registry);
  return ad::with_rules(module, std::move(rules));
}

// LAPACK reads and writes the tensors' memory: the family runs on any backend
// whose tensors live on the host.
void require_host_memory(std::string_view op, std::string_view backend_kind,
                         const Placement& placement) {
  if (!placement.is_host()) {
    fail(ErrorKind::Unsupported, std::string(op),
         "the linalg family's kernels (LAPACK) work on host memory, but the ", backend_kind,
         " backend keeps its tensors on ", to_string(placement),
         "; run it on a backend with host memory (CpuBackend)");
  }
}
}  // namespace

ExtensionModulePtr module_for_engine(std::string_view op, const EngineId& engine,
                                     std::string_view backend_kind, const Placement& placement) {
  require_host_memory(op, backend_kind, placement);
  // Immutable once built (the install-ensure path asks on every cold call).
  static const ModulesByEngine modules(build_module);
  return modules.get(engine);
}

// ---- tiers -------------------------------------------------------------------------

std::vector<EagerTensor> apply(const std::shared_ptr<const LinalgOpBase>& op,
                               ListRef<EagerTensor> inputs) {
  return apply_eager_with_module_factory(op, inputs, [&op](const EagerExtensionTarget& target) {
    return module_for_engine(op->name(), target.engine, target.backend_kind, target.placement);
  });
}

std::vector<TracedTensor> apply(const std::shared_ptr<const LinalgOpBase>& op,
                                ListRef<TracedTensor> inputs) {
  return extension::apply(op, inputs);
}

std::vector<Tensor> apply_direct(const LinalgOpBase& op, ListRef<Tensor> inputs, Backend& backend) {
  const std::string name(op.name());
  if (inputs.size() != op.input_count()) {
    fail(ErrorKind::InvalidArgument, name, "takes ", op.input_count(), " inputs, got ",
         inputs.size());
  }
  std::vector<TensorMeta> metas;
  std::vector<Shape> shapes;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) fail(ErrorKind::InvalidArgument, name, "input ", i, " is undefined");
    metas.push_back(TensorMeta{inputs[i].dtype(), to_sym_shape(inputs[i].shape())});
    shapes.push_back(inputs[i].shape());
  }
  const InferenceResult inferred = op.infer(metas);
  check_constraints(name, inferred.constraints, shapes);
  require_host_memory(name, backend.kind(), backend.placement());
  const auto session = backend.enter_session(/*reuse=*/true);
  // The backend's attached runtime owns the workspaces of direct calls.
  ExtensionCaches caches(EagerRuntime::attached(backend)->runtime()->extension_caches(), name);
  return run_kernel(op, backend, std::span<const Tensor>(inputs.begin(), inputs.size()), caches);
}

namespace {
// LAPACK on matrices of 64 x 64 and more goes through OpenBLAS's threaded
// level-3 kernels (OpenBLAS splits GEMMs above 64^3 multiply-adds): the CPU
// backend's idle pool workers are parked first so they do not compete with
// OpenBLAS's threads. Batches of small matrices run on our own pool instead.
constexpr std::int64_t kThreadedMatrixElements = 64 * 64;

void park_before_lapack(Backend& backend, std::span<const Tensor> inputs) {
  auto* cpu = dynamic_cast<CpuBackend*>(&backend);
  if (cpu == nullptr) return;
  for (const Tensor& x : inputs) {
    if (x.rank() >= 2 && x.shape()[0] * x.shape()[1] >= kThreadedMatrixElements) {
      cpu->park_threads();
      return;
    }
  }
}
}  // namespace

std::vector<Tensor> run_kernel(const LinalgOpBase& op, Backend& backend,
                               std::span<const Tensor> inputs, ExtensionCaches& caches) {
  const bool any_empty =
      std::any_of(inputs.begin(), inputs.end(), [](const Tensor& x) { return x.numel() == 0; });
  if (any_empty) {
    std::vector<TensorMeta> metas;
    for (const Tensor& x : inputs) metas.push_back(TensorMeta{x.dtype(), to_sym_shape(x.shape())});
    const InferenceResult inferred = op.infer(metas);
    std::vector<Shape> shapes;
    for (const TensorMeta& m : inferred.outputs) {
      const std::optional<Shape> s = try_concrete(m.shape);
      if (!s || std::find(s->span().begin(), s->span().end(), 0) == s->span().end()) break;
      shapes.push_back(*s);
    }
    if (shapes.size() == inferred.outputs.size()) {
      std::vector<Tensor> outs;
      for (std::size_t i = 0; i < shapes.size(); ++i)
        outs.push_back(backend.empty(shapes[i].span(), inferred.outputs[i].dtype));
      return outs;
    }
  }
  park_before_lapack(backend, inputs);
  Workspaces workspaces(caches);
  return op.execute(backend, inputs, workspaces);
}

// ---- checks --------------------------------------------------------------------------

void require_floating(std::string_view op, const TensorMeta& m, const char* what) {
  if (m.dtype != DType::F32 && m.dtype != DType::F64 && m.dtype != DType::C64 &&
      m.dtype != DType::C128) {
    fail(ErrorKind::DTypeMismatch, std::string(op), what, " must be f32, f64, c64 or c128, got ",
         name(m.dtype), "; convert it first");
  }
}

void require_matrix(std::string_view op, const TensorMeta& m, const char* what) {
  if (m.rank() < 2) {
    fail(ErrorKind::RankMismatch, std::string(op), what,
         " must be a matrix or a batch of matrices [m, n, batch...], got rank ", m.rank());
  }
}

void require_square(std::string_view op, const TensorMeta& m, std::vector<ShapeConstraint>& out,
                    const char* what) {
  require_matrix(op, m, what);
  const auto r = m.shape[0].try_constant(), c = m.shape[1].try_constant();
  if (r && c) {
    if (*r != *c) {
      fail(ErrorKind::ShapeMismatch, std::string(op), what, " must be square, got ", *r, " x ", *c,
           " (", to_string(m.shape), ")");
    }
  } else {
    out.push_back(
        ShapeConstraint::dims_equal(m.shape[0], m.shape[1], std::string(what) + " must be square"));
  }
}

void require_same_batch(std::string_view op, const TensorMeta& a, const TensorMeta& b,
                        std::vector<ShapeConstraint>& out) {
  if (a.rank() != b.rank()) {
    fail(ErrorKind::RankMismatch, std::string(op), "operands must have the same batch axes, got ",
         to_string(a.shape), " and ", to_string(b.shape));
  }
  for (std::int64_t d = 2; d < a.rank(); ++d) {
    const auto x = a.shape[d].try_constant(), y = b.shape[d].try_constant();
    if (x && y) {
      if (*x != *y) {
        fail(ErrorKind::ShapeMismatch, std::string(op),
             "batch extents differ: ", to_string(a.shape), " and ", to_string(b.shape));
      }
    } else {
      out.push_back(ShapeConstraint::dims_equal(a.shape[d], b.shape[d], "batch extents agree"));
    }
  }
}

DType real_of(DType d) {
  if (d == DType::C64) return DType::F32;
  if (d == DType::C128) return DType::F64;
  return d;
}

// ---- kernels -------------------------------------------------------------------------

std::int64_t batch_count(const Shape& s) {
  std::int64_t n = 1;
  for (std::size_t d = 2; d < s.size(); ++d) n *= s[d];
  return n;
}

Tensor compact_copy(const Tensor& x, Backend& backend) {
  Tensor out = backend.empty(x.shape(), x.dtype());
  Tensor::copy_into(x, out);
  return out;
}

void for_each_batch(Backend& backend, std::int64_t batches, std::int64_t work_per_matrix,
                    const std::function<void(std::int64_t)>& body) {
  auto* cpu = dynamic_cast<CpuBackend*>(&backend);
  if (cpu == nullptr || batches <= 1 || cpu->num_threads() == 1) {
    for (std::int64_t b = 0; b < batches; ++b) body(b);
    return;
  }
  // Small matrices are grouped so each task does enough work to pay for the
  // hand-off; LAPACK inside a pool task runs single-threaded (OpenBLAS is
  // not re-entered in parallel from our pool with its own threads).
  const std::int64_t grain =
      std::max<std::int64_t>(1, 4096 / std::max<std::int64_t>(1, work_per_matrix));
  cpu->parallel_for(batches, grain, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t b = begin; b < end; ++b) body(b);
  });
}

void numerical_failure(ErrorKind kind, std::string_view op, std::int64_t batch,
                       const std::string& what) {
  // Found while running, in every tier (the direct tier too).
  fail_in(ErrorPhase::Execute, kind, std::string(op), what, " (matrix ", batch, " of the batch)");
}

// ---- emitter helpers ---------------------------------------------------------------

namespace {
Axes batch_axes(std::int64_t rank) {
  Axes a;
  for (std::int64_t d = 2; d < rank; ++d) a.push_back(d);
  return a;
}
Axes swap01(std::int64_t rank) {
  Axes a{1, 0};
  for (std::int64_t d = 2; d < rank; ++d) a.push_back(d);
  return a;
}
}  // namespace

Val mm(Emitter& e, Val a, Val b) {
  const std::int64_t r = e.meta(a).rank();
  DotDims dims;
  dims.lhs_contracting = {1};
  dims.rhs_contracting = {0};
  dims.lhs_batch = batch_axes(r);
  dims.rhs_batch = batch_axes(r);
  return e.dot_general(a, b, dims);
}

Val mT(Emitter& e, Val x) {
  return e.transpose(x, swap01(e.meta(x).rank()));
}

Val mH(Emitter& e, Val x) {
  const Val t = mT(e, x);
  return is_complex(e.dtype_of(x)) ? e.conj(t) : t;
}

Val tril(Emitter& e, Val x, std::int64_t k) {
  const Val in[1] = {x};
  return e.emit1(make_primitive(prim::Triangle{true, k}), in);
}

Val triu(Emitter& e, Val x, std::int64_t k) {
  const Val in[1] = {x};
  return e.emit1(make_primitive(prim::Triangle{false, k}), in);
}

Val diag(Emitter& e, Val x) {
  const Val in[1] = {x};
  return e.emit1(make_primitive(prim::Diagonal{0, 0, 1}), in);
}

Val diag_embed(Emitter& e, Val d) {
  const Val in[1] = {d};
  return e.emit1(make_primitive(prim::DiagEmbed{0}), in);
}

Val real_part_same(Emitter& e, Val x) {
  const DType dt = e.dtype_of(x);
  if (!is_complex(dt)) return x;
  return e.convert(e.real(x), dt);
}

}  // namespace tenferro::linalg::detail
