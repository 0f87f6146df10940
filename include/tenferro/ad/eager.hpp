#pragma once
// Eager tier: immediate execution with PyTorch-style autodiff.
//
// Nothing is recorded unless an input requires grad (or a capture scope is
// active): untracked code pays no AD bookkeeping. A recorded op keeps only the
// residuals its rule declares. backward() accumulates into leaf grad slots;
// the functional transforms (grad, vjp, jvp) never touch grad slots and return
// differentiable tensors, so jvp(grad(f)) is a Hessian-vector product.

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "tenferro/ad/grad_options.hpp"
#include "tenferro/ad/rules.hpp"
#include "tenferro/backend/cpu/cpu_backend.hpp"  // make_cpu's options
#include "tenferro/core/list_ref.hpp"
#include "tenferro/runtime/runtime.hpp"

namespace tenferro {

class EagerRuntime;
class EagerTensor;
using EagerRuntimePtr = std::shared_ptr<EagerRuntime>;

namespace detail {
struct EagerImpl;
struct GradNode;
}  // namespace detail

/// Owns a runtime (engine, backend, caches) and an AD context.
class EagerRuntime : public std::enable_shared_from_this<EagerRuntime> {
 public:
  /// A runtime over a new CpuBackend with the core AD rules (the CPU is
  /// the one backend the eager tier offers a shorthand for).
  static EagerRuntimePtr make_cpu(CpuBackendOptions options = {});
  /// A runtime over `backend` (the engine it names, Backend::engine_id) with
  /// the core AD rules: any backend, the CPU one or another.
  static EagerRuntimePtr make(std::shared_ptr<Backend> backend);
  /// Over an existing runtime and AD context (default: core rules). The AD
  /// rules carried by modules already installed in `runtime` are registered
  /// in the context (see ad::RuleProvider).
  static EagerRuntimePtr make(RuntimePtr runtime, std::shared_ptr<ad::AdContext> ad = nullptr);
  /// The eager runtime attached to `backend` (Backend::attachment): made on
  /// first use over the backend (not owning it), it lives as long as the
  /// backend. The direct tier of the families (linalg, einsum, FFT) runs on
  /// it, so their installed modules and plan caches persist across direct
  /// calls. Any backend: the runtime registers it as the engine it names.
  static EagerRuntimePtr attached(Backend& backend);

  /// Process-unique id of this eager runtime (two eager runtimes over one
  /// Runtime have distinct ids; runtime()->id() is the Runtime's).
  std::uint64_t id() const { return id_; }
  const RuntimePtr& runtime() const { return runtime_; }
  Backend& backend() const { return runtime_->backend(); }
  ad::AdContext& ad() const { return *ad_; }

  /// An untracked tensor holding `value` (no copy).
  EagerTensor tensor(Tensor value);
  /// A leaf that requires grad (no copy).
  EagerTensor variable(Tensor value);

  /// Installs `module` in the runtime (Runtime::install_module) and registers
  /// the AD rules it carries in this runtime's AD context. Returns whether
  /// the runtime changed.
  bool install_module(const ExtensionModulePtr& module);
  /// Ensures `module` for (family, engine) (Runtime::ensure_module) and
  /// registers the rules it carries; a no-op once both are in place.
  void ensure_module(const ExtensionModulePtr& module, std::string_view family,
                     const EngineId& engine);

  /// Order stamp of recorded nodes (backward visits them newest first).
  std::uint64_t next_node_seq() { return next_seq_.fetch_add(1, std::memory_order_relaxed); }

 private:
  EagerRuntime(RuntimePtr runtime, std::shared_ptr<ad::AdContext> ad);
  std::uint64_t id_;
  RuntimePtr runtime_;
  std::shared_ptr<ad::AdContext> ad_;
  std::atomic<std::uint64_t> next_seq_{1};
};

class EagerTensor {
 public:
  /// Undefined (defined() == false).
  EagerTensor() = default;

  bool defined() const { return impl_ != nullptr; }
  DType dtype() const;
  const Shape& shape() const;
  std::int64_t rank() const;
  std::int64_t numel() const;
  /// The value, without a copy.
  const Tensor& value() const;
  /// The value of a one-element tensor (Tensor::item), read through the
  /// runtime's backend (to_host) when it lives in that backend's memory.
  Scalar item() const { return host_value().item(); }
  /// Typed: double loss = y.item<double>() (Tensor::item<T>).
  template <class T>
  T item() const {
    return host_value().template item<T>();
  }
  /// The value as a compact host tensor (to_host through the runtime's backend).
  Tensor host_value() const;
  /// An explicit copy of the value.
  Tensor copy_value() const;
  const EagerRuntimePtr& runtime() const;

  bool requires_grad() const;
  /// Marks a leaf as requiring grad (RuntimeState on a tensor with history;
  /// DTypeMismatch for integer/bool values, which are not differentiable).
  EagerTensor& requires_grad_(bool on = true);
  bool is_leaf() const;
  /// The accumulated gradient of a leaf: undefined (defined() == false) until
  /// a backward() reaches the leaf; using that undefined tensor is an
  /// InvalidArgument that says no gradient has been accumulated yet.
  EagerTensor grad() const;
  /// Whether a gradient has been accumulated into this leaf.
  bool has_grad() const;
  void clear_grad();
  /// Replaces the value of a leaf (an optimiser's parameter update), keeping
  /// the tensor's identity: the same EagerTensor (and its copies) now hold
  /// `value`, with the same requires_grad flag and grad slot. Not recorded
  /// (as torch's `with no_grad(): p.copy_(value)`), and graphs recorded
  /// before keep the old value for their backward: the new value is bound,
  /// not written into the old buffer. `value` must have this tensor's dtype
  /// (DTypeMismatch) and shape (ShapeMismatch); a tensor with recorded
  /// history is RuntimeState (detach() it, or update the leaf it came from).
  /// Not synchronised: do not read the tensor from another thread meanwhile.
  EagerTensor& assign_(Tensor value);
  /// Same value, no history, not requiring grad.
  EagerTensor detach() const;
  /// The value moved into another runtime as an untracked tensor (the only way
  /// to cross runtimes; placement must be accepted there).
  EagerTensor detach_into(const EagerRuntimePtr& other) const;

  /// Reverse mode from a real scalar (rank 0 or one element); accumulates
  /// into the grad slots of the leaves it reaches. A complex loss is
  /// DTypeMismatch, as in PyTorch (take real() or abs(), or pass a seed).
  /// The recorded graph is kept (PyTorch's retain_graph=true): calling
  /// backward() again accumulates the same gradients once more, so clear the
  /// leaves' grads (clear_grad, clear_grads) between steps.
  void backward() const;
  /// Reverse mode with an explicit seed (same runtime, dtype and shape).
  void backward(const EagerTensor& seed) const;

  /// For the runtime and extension dispatch.
  const std::shared_ptr<detail::EagerImpl>& impl() const { return impl_; }
  explicit EagerTensor(std::shared_ptr<detail::EagerImpl> impl) : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<detail::EagerImpl> impl_;
};

/// Clears the grad slots of every given tensor.
void clear_grads(std::span<EagerTensor> tensors);

// ---- scopes (thread-local, nestable) -------------------------------------------

/// Inside, no op is recorded (tracked inputs give untracked outputs) on the
/// thread that made the guard. The guard is bound to that thread: destroyed
/// on another one (moved into a task, say), it still ends recording-off on
/// its own thread, never on the destroying one; the making thread must still
/// be running then.
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  std::atomic<int>* depth_;  // the making thread's no-grad depth
};

/// Inside, every op is recorded, tracked or not, and logged so that the
/// captured computation can be handed to the traced tier.
class CaptureScope {
 public:
  CaptureScope();
  ~CaptureScope();
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;
  struct Step {
    OpPtr op;
    std::vector<EagerTensor> inputs;
    std::vector<EagerTensor> outputs;
  };
  /// The ops run in this scope (outermost first), in execution order.
  const std::vector<Step>& steps() const { return steps_; }

 private:
  friend struct detail::EagerImpl;
  friend void record_capture(const OpPtr&, std::span<const EagerTensor>,
                             std::span<const EagerTensor>);
  std::vector<Step> steps_;
  CaptureScope* previous_;
};

bool grad_recording_enabled();
bool capture_active();

// ---- functional transforms ---------------------------------------------------------

using EagerFn = std::function<EagerTensor(const EagerTensor&)>;
using EagerFnN = std::function<EagerTensor(std::span<const EagerTensor>)>;

/// Gradient of a scalar function at x (differentiable w.r.t. x). When f does
/// not depend on x: InvalidArgument, or zeros with options.allow_unused (as
/// the traced grad(y, x)); try_grad gives nullopt instead.
EagerTensor grad(const EagerFn& f, const EagerTensor& x, const GradOptions& options = {});
std::optional<EagerTensor> try_grad(const EagerFn& f, const EagerTensor& x);
/// Gradients w.r.t. several inputs; nullopt for inputs f does not depend on.
std::vector<std::optional<EagerTensor>> grad_many(const EagerFnN& f, ListRef<EagerTensor> xs);

struct VjpResult {
  EagerTensor output;
  std::optional<EagerTensor> cotangent;  // nullopt: no dependence
};
/// f(x) and the cotangent of x for output cotangent `ct` (f's shape and dtype).
VjpResult vjp(const EagerFn& f, const EagerTensor& x, const EagerTensor& ct);

struct JvpResult {
  EagerTensor output;
  std::optional<EagerTensor> tangent;  // nullopt: no dependence
};
/// f(x) and the directional derivative along v (x's shape and dtype).
JvpResult jvp(const EagerFn& f, const EagerTensor& x, const EagerTensor& v);
/// jvp that throws InvalidArgument when f does not depend on x.
EagerTensor jvp_tangent(const EagerFn& f, const EagerTensor& x, const EagerTensor& v);

}  // namespace tenferro
