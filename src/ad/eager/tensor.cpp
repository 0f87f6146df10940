#include "ad/eager/impl.hpp"

#include <array>
#include <vector>

#include "tenferro/backend/cpu/cpu_backend.hpp"
#include "tenferro/backend/elementwise.hpp"
#include "tenferro/ops/primitives.hpp"

namespace tenferro {

using detail::EagerImpl;
using detail::GradNode;

namespace {
// Atomic because a NoGradGuard destroyed on another thread still updates
// the counter of the thread that made it.
thread_local std::atomic<int> t_no_grad_depth{0};
thread_local CaptureScope* t_capture = nullptr;
}  // namespace

// ---- runtime ------------------------------------------------------------------------

EagerRuntime::EagerRuntime(RuntimePtr runtime, std::shared_ptr<ad::AdContext> ad)
    : id_(next_context_id()), runtime_(std::move(runtime)), ad_(std::move(ad)) {}

EagerRuntimePtr EagerRuntime::make_cpu(CpuBackendOptions options) {
  return make(std::make_shared<CpuBackend>(options));
}

EagerRuntimePtr EagerRuntime::make(std::shared_ptr<Backend> backend) {
  if (!backend) fail(ErrorKind::InvalidArgument, "EagerRuntime", "backend is null");
  return make(Runtime::builder().backend(std::move(backend)).build());
}

EagerRuntimePtr EagerRuntime::make(RuntimePtr runtime, std::shared_ptr<ad::AdContext> ad) {
  if (!runtime) fail(ErrorKind::InvalidArgument, "EagerRuntime", "runtime is null");
  if (!ad) ad = ad::AdContext::with_core_rules();
  auto snap = runtime->snapshot();
  for (const auto& id : snap->modules()) ad::register_module_rules(*snap->module(id), *ad);
  return EagerRuntimePtr(new EagerRuntime(std::move(runtime), std::move(ad)));
}

EagerRuntimePtr EagerRuntime::attached(Backend& backend) {
  auto made = backend.attachment("tenferro.eager_runtime", [&backend]() -> std::shared_ptr<void> {
    // Non-owning: the runtime is released with the backend (attachments go
    // first in its destructor).
    std::shared_ptr<Backend> borrowed(std::shared_ptr<Backend>{}, &backend);
    return make(std::move(borrowed));
  });
  return std::static_pointer_cast<EagerRuntime>(made);
}

Tensor EagerTensor::host_value() const {
  const Tensor& v = value();
  if (v.placement().is_host()) return v;
  return to_host(v, runtime()->backend());
}

bool EagerRuntime::install_module(const ExtensionModulePtr& module) {
  const bool changed = runtime_->install_module(module);
  ad::register_module_rules(*module, *ad_);
  return changed;
}

void EagerRuntime::ensure_module(const ExtensionModulePtr& module, std::string_view family,
                                 const EngineId& engine) {
  runtime_->ensure_module(module, family, engine);
  // Warm path: the family's rules are there, so the module's are (they are
  // registered together, and re-registering them would be a no-op anyway).
  if (ad_->find(family) == nullptr) ad::register_module_rules(*module, *ad_);
}

EagerTensor EagerRuntime::tensor(Tensor value) {
  if (!value.defined()) fail(ErrorKind::InvalidArgument, "tensor", "value is undefined");
  return detail::make_eager(shared_from_this(), std::move(value));
}

EagerTensor EagerRuntime::variable(Tensor value) {
  EagerTensor t = tensor(std::move(value));
  t.requires_grad_(true);
  return t;
}

namespace detail {

namespace {
// The nodes a release still has to empty: a stack, its first few entries in
// place (a chain's release queues one node at a time, so most destructions
// never allocate).
class PendingNodes {
 public:
  bool empty() const { return n_ == 0 && more_.empty(); }
  void push(std::shared_ptr<GradNode>&& node) {
    if (n_ < local_.size()) {
      local_[n_++] = std::move(node);
    } else {
      more_.push_back(std::move(node));
    }
  }
  std::shared_ptr<GradNode> pop() {
    if (!more_.empty()) {
      std::shared_ptr<GradNode> node = std::move(more_.back());
      more_.pop_back();
      return node;
    }
    return std::move(local_[--n_]);
  }

 private:
  std::array<std::shared_ptr<GradNode>, 8> local_;
  std::size_t n_ = 0;
  std::vector<std::shared_ptr<GradNode>> more_;
};
}  // namespace

GradNode::~GradNode() {
  PendingNodes pending;
  // A child that others still own only loses a reference here: just that.
  // One this node owns alone would be destroyed, so it is queued instead.
  // (Most children are leaves or nodes kept by live tensors: no queue, no
  // allocation.)
  auto take = [&](std::shared_ptr<GradNode>& child) {
    if (!child) return;
    if (child.use_count() == 1) {
      pending.push(std::move(child));
    } else {
      child.reset();
    }
  };
  auto take_children = [&](GradNode& n) {
    for (auto& e : n.inputs) take(e.node);
    for (auto& s : n.saved_inputs) take(s.node);
    for (auto& s : n.saved_outputs) take(s.node);
  };
  take_children(*this);
  while (!pending.empty()) {
    std::shared_ptr<GradNode> n = pending.pop();
    // The last owner empties the node before it dies, so its destructor
    // finds no children and the release never recurses.
    if (n.use_count() == 1) take_children(*n);
  }
}

EagerTensor make_eager(const EagerRuntimePtr& rt, Tensor value) {
  return EagerTensor(make_pooled<EagerImpl>(std::move(value), rt));
}

std::shared_ptr<GradNode> make_leaf_node(const std::shared_ptr<EagerImpl>& impl) {
  auto node = make_pooled<GradNode>();
  node->kind = NodeKind::Leaf;
  node->seq = impl->rt->next_node_seq();
  node->leaf = impl;
  node->runtime = impl->rt;
  return node;
}

}  // namespace detail

// ---- tensor --------------------------------------------------------------------------

namespace {
const EagerImpl& require(const std::shared_ptr<EagerImpl>& impl, const char* what) {
  if (!impl) {
    fail(ErrorKind::InvalidArgument, what,
         "eager tensor is undefined (default-constructed, or the grad() of a tensor that no "
         "backward() has reached: no gradient has been accumulated yet; check has_grad())");
  }
  return *impl;
}
}  // namespace

DType EagerTensor::dtype() const {
  return require(impl_, "dtype").value.dtype();
}
const Shape& EagerTensor::shape() const {
  return require(impl_, "shape").value.shape();
}
std::int64_t EagerTensor::rank() const {
  return require(impl_, "rank").value.rank();
}
std::int64_t EagerTensor::numel() const {
  return require(impl_, "numel").value.numel();
}
const Tensor& EagerTensor::value() const {
  return require(impl_, "value").value;
}
Tensor EagerTensor::copy_value() const {
  return require(impl_, "copy_value").value.clone();
}
const EagerRuntimePtr& EagerTensor::runtime() const {
  return require(impl_, "runtime").rt;
}
bool EagerTensor::requires_grad() const {
  return require(impl_, "requires_grad").requires_grad;
}
bool EagerTensor::is_leaf() const {
  const auto& i = require(impl_, "is_leaf");
  return !i.node || i.node->kind == detail::NodeKind::Leaf;
}

EagerTensor& EagerTensor::requires_grad_(bool on) {
  require(impl_, "requires_grad_");
  if (impl_->node && impl_->node->kind != detail::NodeKind::Leaf) {
    fail(ErrorKind::RuntimeState, "requires_grad_",
         "only leaves can change requires_grad; this tensor has recorded history (detach() it "
         "first)");
  }
  if (on && !is_inexact(impl_->value.dtype())) {
    fail(ErrorKind::DTypeMismatch, "requires_grad_", "values of dtype ", name(impl_->value.dtype()),
         " are not differentiable; convert to a floating or complex dtype");
  }
  impl_->requires_grad = on;
  impl_->node = on ? detail::make_leaf_node(impl_) : nullptr;
  return *this;
}

EagerTensor EagerTensor::grad() const {
  require(impl_, "grad");
  std::lock_guard<std::mutex> lock(impl_->grad_mutex);
  return EagerTensor(impl_->grad);
}

bool EagerTensor::has_grad() const {
  require(impl_, "has_grad");
  std::lock_guard<std::mutex> lock(impl_->grad_mutex);
  return impl_->grad != nullptr;
}

EagerTensor& EagerTensor::assign_(Tensor value) {
  require(impl_, "assign_");
  if (impl_->node && impl_->node->kind != detail::NodeKind::Leaf) {
    fail(ErrorKind::RuntimeState, "assign_",
         "only leaves can be assigned a new value; this tensor has recorded history (update the "
         "leaf it was computed from, or detach() it first)");
  }
  if (!value.defined()) {
    fail(ErrorKind::InvalidArgument, "assign_", "the new value is an undefined tensor");
  }
  if (value.dtype() != impl_->value.dtype()) {
    fail(ErrorKind::DTypeMismatch, "assign_", "the new value has dtype ", name(value.dtype()),
         " but the tensor has dtype ", name(impl_->value.dtype()), "; convert it first");
  }
  if (value.shape() != impl_->value.shape()) {
    fail(ErrorKind::ShapeMismatch, "assign_", "the new value has shape ",
         shape_to_string(value.shape()), " but the tensor has shape ",
         shape_to_string(impl_->value.shape()));
  }
  impl_->value = std::move(value);
  return *this;
}

void EagerTensor::clear_grad() {
  require(impl_, "clear_grad");
  std::lock_guard<std::mutex> lock(impl_->grad_mutex);
  impl_->grad.reset();
}

void clear_grads(std::span<EagerTensor> tensors) {
  for (auto& t : tensors) t.clear_grad();
}

EagerTensor EagerTensor::detach() const {
  return detail::make_eager(runtime(), value());
}

EagerTensor EagerTensor::detach_into(const EagerRuntimePtr& other) const {
  if (!other) fail(ErrorKind::InvalidArgument, "detach_into", "target runtime is null");
  other->runtime()->check_ingress("detach_into", std::span<const Tensor>(&value(), 1));
  return detail::make_eager(other, value());
}

// ---- scopes ---------------------------------------------------------------------------

NoGradGuard::NoGradGuard() : depth_(&t_no_grad_depth) {
  depth_->fetch_add(1, std::memory_order_relaxed);
}
NoGradGuard::~NoGradGuard() {
  depth_->fetch_sub(1, std::memory_order_relaxed);
}

CaptureScope::CaptureScope() : previous_(t_capture) {
  t_capture = this;
}
CaptureScope::~CaptureScope() {
  t_capture = previous_;
}

bool grad_recording_enabled() {
  return t_no_grad_depth.load(std::memory_order_relaxed) == 0;
}
bool capture_active() {
  return t_capture != nullptr;
}

void record_capture(const OpPtr& op, std::span<const EagerTensor> inputs,
                    std::span<const EagerTensor> outputs) {
  for (CaptureScope* s = t_capture; s != nullptr; s = s->previous_) {
    s->steps_.push_back({op, {inputs.begin(), inputs.end()}, {outputs.begin(), outputs.end()}});
  }
}

// ---- dispatch ---------------------------------------------------------------------------

namespace detail {

namespace {
// An undefined input is the caller's error about `op` (the same words as the traced tier's).
const EagerImpl& require_input(const EagerTensor& t, std::string_view op, std::size_t i) {
  if (!t.impl())
    fail(ErrorKind::InvalidArgument, std::string(op), "input ", i, " is an undefined eager tensor");
  return *t.impl();
}
}  // namespace

const EagerRuntimePtr& common_runtime(std::span<const EagerTensor> inputs, std::string_view op) {
  if (inputs.empty())
    fail(ErrorKind::InvalidArgument, std::string(op), "at least one input is required");
  for (std::size_t i = 0; i < inputs.size(); ++i) require_input(inputs[i], op, i);
  const EagerRuntimePtr& rt = inputs[0].impl()->rt;
  for (std::size_t i = 1; i < inputs.size(); ++i) {
    const auto& other = inputs[i].impl()->rt;
    if (other != rt) {
      fail(ErrorKind::ContextMismatch, std::string(op), "input ", i, " belongs to eager runtime ",
           other->id(), " but input 0 to runtime ", rt->id(),
           "; move it with detach_into(target runtime) first");
    }
  }
  return rt;
}

namespace {

// Records outputs[j] into result[j] (one slot per output): untracked
// handles, or one GradNode with the op's residuals. The single-output path
// passes a one-element span, so no vector is allocated for it; the node's
// residual vectors exist only when the rules save something.
void record_outputs(const EagerRuntimePtr& rt, const OpPtr& op, std::span<const EagerTensor> inputs,
                    std::span<Tensor> outputs, std::span<EagerTensor> result) {
  if (outputs.size() != op->output_count()) {
    fail(ErrorKind::Internal, std::string(op->name()), "executor returned ", outputs.size(),
         " outputs but ", op->name(), " declares ", op->output_count());
  }
  bool tracked = false;
  if (grad_recording_enabled()) {
    for (const auto& t : inputs) tracked |= t.impl()->node != nullptr;
  }
  const ad::RuleSet* rules = tracked ? rt->ad().find(*op) : nullptr;
  // Inside no_grad nothing is recorded, not even a capture step (the seed's rule).
  const bool capture = capture_active() && grad_recording_enabled();
  if (!tracked || (rules != nullptr && rules->non_differentiable)) {
    for (std::size_t j = 0; j < outputs.size(); ++j)
      result[j] = make_eager(rt, std::move(outputs[j]));
    if (capture) record_capture(op, inputs, result);
    return;
  }
  if (rules == nullptr) throw_missing_rules(*rt, *op, inputs);
  const ad::Residuals residuals = rules->residuals;
  bool saves_inputs = false, saves_outputs = false;
  for (std::size_t i = 0; i < inputs.size(); ++i) saves_inputs |= residuals.input(i);
  for (std::size_t j = 0; j < outputs.size(); ++j) saves_outputs |= residuals.output(j);
  auto node = make_pooled<GradNode>();
  node->seq = rt->next_node_seq();
  node->op = op;
  node->runtime = rt;
  node->inputs.resize(inputs.size());
  node->metas.reserve(inputs.size() + outputs.size());
  if (saves_inputs) node->saved_inputs.resize(inputs.size());
  if (saves_outputs) node->saved_outputs.resize(outputs.size());
  // Fields are assigned in place (no temporary SavedValue or RecordedMeta:
  // each would copy a Tensor's or a Shape's inline storage once more).
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto& in = *inputs[i].impl();
    node->inputs[i].node = in.node;
    node->inputs[i].index = in.output_index;
    node->metas.emplace_back(in.value.dtype(), in.value.shape());
    if (residuals.input(i)) {
      SavedValue& s = node->saved_inputs[i];
      s.present = true;
      s.value = in.value;
      s.node = in.node;
      s.index = in.output_index;
    }
  }
  for (std::size_t j = 0; j < outputs.size(); ++j) {
    node->metas.emplace_back(outputs[j].dtype(), outputs[j].shape());
    const bool differentiable = is_inexact(outputs[j].dtype());
    if (differentiable && residuals.output(j)) {
      SavedValue& s = node->saved_outputs[j];
      s.present = true;
      s.value = outputs[j];
      s.self = node;
      s.index = static_cast<std::uint32_t>(j);
    }
    auto impl = make_pooled<EagerImpl>(std::move(outputs[j]), rt);
    if (differentiable) {
      impl->requires_grad = true;
      impl->node = node;
      impl->output_index = static_cast<std::uint32_t>(j);
    }
    result[j] = EagerTensor(std::move(impl));
  }
  if (capture) record_capture(op, inputs, result);
}

}  // namespace

std::vector<EagerTensor> finish_outputs(const EagerRuntimePtr& rt, const OpPtr& op,
                                        std::span<const EagerTensor> inputs,
                                        std::vector<Tensor> outputs) {
  std::vector<EagerTensor> result(outputs.size());
  record_outputs(rt, op, inputs, outputs, result);
  return result;
}

void throw_missing_rules(const EagerRuntime& rt, const Op& op,
                         std::span<const EagerTensor> inputs) {
  std::size_t tracked = 0;
  while (tracked + 1 < inputs.size() && !inputs[tracked].impl()->node) ++tracked;
  fail(ErrorKind::UnsupportedAdRule, std::string(op.name()), "input ", tracked,
       " requires grad but eager runtime ", rt.id(), " has no AD rules for ", op.name(),
       ", so the call cannot be recorded; install a module that carries its rules "
       "(ad::with_rules), register them in the AdContext, or call it on detach()ed inputs or "
       "inside no_grad");
}

void require_rules_if_recorded(const EagerRuntime& rt, const Op& op,
                               std::span<const EagerTensor> inputs) {
  if (!grad_recording_enabled()) return;
  bool tracked = false;
  for (const auto& t : inputs) tracked |= t.impl()->node != nullptr;
  if (tracked && rt.ad().find(op) == nullptr) throw_missing_rules(rt, op, inputs);
}

std::vector<EagerTensor> eager_dispatch(const EagerRuntimePtr& rt, const OpPtr& op,
                                        std::span<const EagerTensor> inputs) {
  if (inputs.size() != op->input_count()) {
    fail(ErrorKind::InvalidArgument, std::string(op->name()), "expects ", op->input_count(),
         " inputs, got ", inputs.size());
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto& other = require_input(inputs[i], op->name(), i).rt;
    if (other != rt) {
      fail(ErrorKind::ContextMismatch, std::string(op->name()), "input ", i,
           " belongs to eager runtime ", other->id(), " but the op runs in runtime ", rt->id(),
           "; move it with detach_into(target runtime) first");
    }
  }
  std::vector<Tensor> values;
  values.reserve(inputs.size());
  for (const auto& t : inputs) values.push_back(t.impl()->value);
  std::vector<Tensor> outputs;
  if (op->is_extension()) {
    outputs = rt->runtime()->apply(op, values);
  } else {
    outputs.push_back(
        execute_primitive(static_cast<const PrimitiveOp&>(*op), values, rt->backend()));
  }
  return finish_outputs(rt, op, inputs, std::move(outputs));
}

EagerTensor eager_dispatch1(const EagerRuntimePtr& rt, const OpPtr& op,
                            std::span<const EagerTensor> inputs) {
  constexpr std::size_t kInline = 4;
  if (op->is_extension() || op->output_count() != 1 || inputs.size() > kInline ||
      inputs.size() != op->input_count()) {
    return eager_dispatch(rt, op, inputs)[0];
  }
  bool tracked = false;
  const Tensor* values[kInline] = {};
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const EagerImpl* in = inputs[i].impl().get();
    if (in == nullptr || in->rt != rt) return eager_dispatch(rt, op, inputs)[0];  // the error
    values[i] = &in->value;
    tracked |= in->node != nullptr;
  }
  Tensor out =
      execute_primitive_refs(static_cast<const PrimitiveOp&>(*op),
                             std::span<const Tensor* const>(values, inputs.size()), rt->backend());
  if (grad_recording_enabled() && (tracked || capture_active())) {
    EagerTensor result;
    record_outputs(rt, op, inputs, std::span<Tensor>(&out, 1), std::span<EagerTensor>(&result, 1));
    return result;
  }
  return make_eager(rt, std::move(out));
}

// ---- emitter ------------------------------------------------------------------------------

ad::Val EagerEmitter::add_value(EagerTensor t) {
  values_.push_back(std::move(t));
  return ad::Val{static_cast<std::int64_t>(values_.size() - 1)};
}

const EagerTensor& EagerEmitter::get(ad::Val v) const {
  if (!v.valid()) {
    fail(ErrorKind::Internal, "autodiff",
         "an AD rule read a primal value it did not declare as a residual");
  }
  return values_.at(static_cast<std::size_t>(v.id));
}

std::vector<ad::Val> EagerEmitter::emit(const OpPtr& op, std::span<const ad::Val> inputs) {
  std::vector<EagerTensor> in;
  in.reserve(inputs.size());
  for (ad::Val v : inputs) in.push_back(get(v));
  std::vector<ad::Val> out;
  if (!op->is_extension() && op->output_count() == 1) {
    out.push_back(add_value(eager_dispatch1(rt_, op, in)));
    return out;
  }
  for (auto& t : eager_dispatch(rt_, op, in)) out.push_back(add_value(std::move(t)));
  return out;
}

ad::Val EagerEmitter::emit1(const OpPtr& op, std::span<const ad::Val> inputs) {
  constexpr std::size_t kInline = 4;
  if (op->is_extension() || op->output_count() != 1 || inputs.size() > kInline)
    return Emitter::emit1(op, inputs);
  EagerTensor in[kInline];
  for (std::size_t i = 0; i < inputs.size(); ++i) in[i] = get(inputs[i]);
  return add_value(eager_dispatch1(rt_, op, std::span<const EagerTensor>(in, inputs.size())));
}

bool EagerEmitter::has_shape(ad::Val v, const SymShape& shape) const {
  const Shape& have = get(v).value().shape();
  if (have.size() != shape.size()) return false;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const std::optional<std::int64_t> want = shape[i].try_constant();
    if (!want || *want != have[i]) return false;
  }
  return true;
}

TensorMeta EagerEmitter::meta(ad::Val v) const {
  const Tensor& t = get(v).value();
  return TensorMeta{t.dtype(), to_sym_shape(t.shape())};
}

}  // namespace detail
}  // namespace tenferro
