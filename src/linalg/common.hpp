#pragma once
// What every linalg op shares: the op base class (a self-installing,
// rule-carrying extension op), the family module, the tier dispatch and the
// argument checks. Private to src/linalg/; the family uses only tenferro's
// public headers, as a third-party family would.

#include <complex>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "linalg/workspace.hpp"
#include "tenferro/ad/eager_extension.hpp"
#include "tenferro/ad/on_backend.hpp"
#include "tenferro/ad/rules.hpp"
#include "tenferro/ad/traced.hpp"
#include "tenferro/backend/cpu/cpu_backend.hpp"
#include "tenferro/core/report_as.hpp"
#include "tenferro/runtime/simple_family.hpp"

namespace tenferro::linalg::detail {

using tenferro::detail::on_backend;

using ad::Emitter;
using ad::MaybeVal;
using ad::RuleArgs;
using ad::RuleSet;
using ad::Val;

/// The family's module on an engine (every linalg op, its kernels and its AD
/// rules): any engine whose backend keeps its tensors in host memory, which
/// LAPACK reads. Another backend is Unsupported naming `op`.
ExtensionModulePtr module_for_engine(std::string_view op, const EngineId& engine,
                                     std::string_view backend_kind, const Placement& placement);
/// The id of that module.
inline constexpr const char* kModuleId = "tenferro.linalg";

/// Base of every linalg op: parameters with equality and hash, the module it
/// installs on first use (SelfInstallingOp), the AD rules it carries
/// (RuleCarryingOp), and the kernel both the runtime and the direct tier call.
class LinalgOpBase : public ExtensionOp, public SelfInstallingOp, public ad::RuleCarryingOp {
 public:
  ExtensionModulePtr module_for(const EngineRegistration& engine) const override {
    return module_for_engine(name(), engine.id(), engine.kind(), engine.backend().placement());
  }
  /// Runs the op on concrete inputs (already checked by infer()). Outputs
  /// come from `backend.empty`; inputs may be strided. LAPACK workspaces
  /// come from `workspaces` (the runtime's, see workspace.hpp).
  virtual std::vector<Tensor> execute(Backend& backend, std::span<const Tensor> inputs,
                                      Workspaces& workspaces) const = 0;
};

template <class Derived, class Params>
class LinalgOp : public LinalgOpBase {
 public:
  explicit LinalgOp(Params params) : family_(std::string(Derived::kFamily)), params_(params) {}
  const FamilyId& family_id() const override { return family_; }
  const Params& params() const { return params_; }
  std::size_t hash() const override {
    return hash_combine(std::hash<std::string>{}(family_.str()), hash_value(params_));
  }
  bool equals(const Op& other) const override {
    const auto* o = dynamic_cast<const Derived*>(&other);
    return o != nullptr && params_ == o->params();
  }

 private:
  FamilyId family_;
  Params params_;
};

/// Runs op.execute, except when an input is empty and so is every output:
/// then the empty outputs are made without running the kernel (its batch
/// loop could count up to a huge batch of empty matrices).
std::vector<Tensor> run_kernel(const LinalgOpBase& op, Backend& backend,
                               std::span<const Tensor> inputs, ExtensionCaches& caches);

/// Registers ops' kernels into the module and collects their rules.
struct Registry {
  SimpleModule& module;
  ad::FamilyRules& rules;
  const EngineId& engine;
  template <class OpT>
  void add() {
    module.family<OpT>(
        [](const OpT& op, ExecutionScope& scope, ExtensionCaches& caches,
           std::span<const Tensor> in) { return run_kernel(op, scope.backend(), in, caches); },
        nullptr, engine);
    rules.emplace_back(FamilyId(std::string(OpT::kFamily)), OpT::rules());
  }
};

// Each op file registers its ops (module.cpp calls them in this order).
void register_triangular(Registry& r);
void register_spectral(Registry& r);
void register_factor(Registry& r);
void register_composite(Registry& r);
void register_truncated(Registry& r);

/// The solve_triangular op (triangular.cpp), for rules of other op files:
/// op(T) X = B (left) or X op(T) = B, op = ^H when `adjoint`.
std::shared_ptr<const LinalgOpBase> solve_triangular_op(bool upper, bool left, bool unit,
                                                        bool adjoint);

// ---- tier dispatch ---------------------------------------------------------------

/// Runs a linalg op in the eager tier (install-ensure on first use).
std::vector<EagerTensor> apply(const std::shared_ptr<const LinalgOpBase>& op,
                               ListRef<EagerTensor> inputs);
/// Builds a graph node (the module is ensured when the program is prepared).
std::vector<TracedTensor> apply(const std::shared_ptr<const LinalgOpBase>& op,
                                ListRef<TracedTensor> inputs);
/// Runs a linalg op directly on a backend: infer() checks, then the kernel.
std::vector<Tensor> apply_direct(const LinalgOpBase& op, ListRef<Tensor> inputs, Backend& backend);

/// Emits a linalg op inside an AD rule.
inline std::vector<Val> emit(Emitter& e, const std::shared_ptr<const LinalgOpBase>& op,
                             std::initializer_list<Val> inputs) {
  return e.emit(op, std::span<const Val>(inputs.begin(), inputs.size()));
}

// ---- checks shared by infer() ---------------------------------------------------------

/// f32, f64, c64 or c128, else DTypeMismatch naming the op.
void require_floating(std::string_view op, const TensorMeta& m, const char* what = "input");
/// Rank >= 2 ([m, n, batch...]), else RankMismatch.
void require_matrix(std::string_view op, const TensorMeta& m, const char* what = "input");
/// A square matrix (constant extents compared now, symbolic ones as a constraint).
void require_square(std::string_view op, const TensorMeta& m, std::vector<ShapeConstraint>& out,
                    const char* what = "input");
/// The batch extents (axes 2...) of two operands agree.
void require_same_batch(std::string_view op, const TensorMeta& a, const TensorMeta& b,
                        std::vector<ShapeConstraint>& out);
/// The real dtype of a (possibly complex) dtype.
DType real_of(DType d);

// ---- kernels ------------------------------------------------------------------------

/// Calls f.template operator()<T>() with T the element type of a floating
/// or complex dtype (float, double, std::complex<float>, std::complex<double>).
template <class F>
decltype(auto) dispatch_floating(DType d, F&& f) {
  switch (d) {
    case DType::F32:
      return f.template operator()<float>();
    case DType::F64:
      return f.template operator()<double>();
    case DType::C64:
      return f.template operator()<std::complex<float>>();
    case DType::C128:
      return f.template operator()<std::complex<double>>();
    default:
      fail(ErrorKind::DTypeMismatch, "linalg", "expected f32, f64, c64 or c128, got ", name(d));
  }
}

/// Number of matrices of a [m, n, batch...] tensor.
std::int64_t batch_count(const Shape& s);
/// A compact column-major copy of `x` (x itself when already compact and
/// `writable` is false), for LAPACK which overwrites its input.
Tensor compact_copy(const Tensor& x, Backend& backend);
/// Runs body(b) for every batch index, in parallel over the backend's threads
/// when there are several matrices (LAPACK single-threaded inside) and
/// serially otherwise (one threaded LAPACK call). Exceptions propagate.
void for_each_batch(Backend& backend, std::int64_t batches, std::int64_t work_per_matrix,
                    const std::function<void(std::int64_t)>& body);
/// Throws a Numerical error of `kind` naming the op and the batch index.
[[noreturn]] void numerical_failure(ErrorKind kind, std::string_view op, std::int64_t batch,
                                    const std::string& what);

// ---- emitter helpers for rules (matrices are [m, n, batch...]) -----------------------

/// a @ b batched over the trailing axes (equal batch shapes).
Val mm(Emitter& e, Val a, Val b);
/// Conjugate transpose of the matrix axes (plain transpose for real dtypes).
Val mH(Emitter& e, Val x);
/// Transpose of the matrix axes.
Val mT(Emitter& e, Val x);
Val tril(Emitter& e, Val x, std::int64_t k = 0);
Val triu(Emitter& e, Val x, std::int64_t k = 0);
/// The main diagonal as [k, batch...].
Val diag(Emitter& e, Val x);
/// [k, batch...] -> [k, k, batch...] with zeros off the diagonal.
Val diag_embed(Emitter& e, Val d);
/// Real part as the same (possibly complex) dtype.
Val real_part_same(Emitter& e, Val x);

}  // namespace tenferro::linalg::detail
