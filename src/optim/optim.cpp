// The optimiser base (each parameter's value and gradient as real components
// in double precision on its own backend), SGD and Adam, in tensor ops.

#include <cmath>
#include <complex>
#include <string>
#include <unordered_set>

#include "tenferro/ad/eager_ops.hpp"
#include "tenferro/optim/optim.hpp"

namespace tenferro::optim {
namespace {

[[noreturn]] void invalid(const std::string& op, const std::string& message) {
  throw Error(ErrorKind::InvalidArgument, op, message);
}

void require_non_negative(const std::string& op, const char* what, double v) {
  if (!(v >= 0.0) || !std::isfinite(v)) {
    invalid(op,
            std::string(what) + " must be a finite number >= 0 (got " + std::to_string(v) + ")");
  }
}

}  // namespace

// ---- Optimizer ------------------------------------------------------------------------

Optimizer::Optimizer(std::vector<EagerTensor> params) : params_(std::move(params)) {
  if (params_.empty()) invalid("optim", "no parameters to optimise (the list is empty)");
  std::unordered_set<const void*> seen;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const EagerTensor& p = params_[i];
    const std::string which = "parameter " + std::to_string(i);
    if (!p.defined()) invalid("optim", which + " is an undefined tensor");
    if (!seen.insert(p.impl().get()).second) {
      invalid("optim", which + " appears twice in the parameter list");
    }
    if (!p.is_leaf() || !p.requires_grad()) {
      throw Error(ErrorKind::RuntimeState, "optim",
                  which +
                      " must be a leaf that requires grad (make it with runtime->variable(...) "
                      "or requires_grad_())");
    }
    const DType d = p.dtype();
    if (d != DType::F32 && d != DType::F64 && d != DType::C64 && d != DType::C128) {
      throw Error(
          ErrorKind::DTypeMismatch, "optim",
          which + " has dtype " + std::string(name(d)) + "; optimisers take f32, f64, c64 or c128");
    }
  }
}

void Optimizer::zero_grad() {
  for (auto& p : params_) p.clear_grad();
}

namespace {
// The real components of `t` in double precision on `backend` (a fresh
// compact tensor: the optimiser's own).
DirectTensor real_work(const Tensor& t, Backend& backend) {
  return cast(on(backend, t.view_as_real()), DType::F64);
}
}  // namespace

std::optional<Optimizer::Slot> Optimizer::slot(std::size_t i, bool maximize,
                                               double weight_decay) const {
  const EagerTensor& p = params_[i];
  if (!p.has_grad()) return std::nullopt;
  Backend& backend = p.runtime()->backend();
  Slot s{real_work(p.value(), backend), real_work(p.grad().value(), backend)};
  if (maximize) s.grad = -s.grad;
  if (weight_decay != 0.0) s.grad = s.grad + weight_decay * s.value;
  return s;
}

void Optimizer::assign(std::size_t i, const DirectTensor& real_value) {
  EagerTensor& p = params_[i];
  Backend& backend = p.runtime()->backend();
  Tensor out = backend.empty(p.shape(), p.dtype());
  backend.copy(real_value.value(), out.view_as_real());  // rounds f64 to the dtype
  p.assign_(std::move(out));
}

DirectTensor Optimizer::zeros_for(std::size_t i) const {
  const EagerTensor& p = params_[i];
  Backend& backend = p.runtime()->backend();
  Tensor zero = backend.empty(p.value().view_as_real().shape(), DType::F64);
  backend.fill(zero, Scalar(0.0));
  return on(backend, std::move(zero));
}

// ---- SGD --------------------------------------------------------------------------------

Sgd::Sgd(std::vector<EagerTensor> params, SgdOptions options)
    : Optimizer(std::move(params)), options_(options), momentum_(params_.size()) {
  require_non_negative("optim.sgd", "lr", options_.lr);
  require_non_negative("optim.sgd", "momentum", options_.momentum);
  require_non_negative("optim.sgd", "weight_decay", options_.weight_decay);
  if (!std::isfinite(options_.dampening)) invalid("optim.sgd", "dampening must be finite");
  if (options_.nesterov && (options_.momentum <= 0.0 || options_.dampening != 0.0)) {
    invalid("optim.sgd", "Nesterov momentum needs momentum > 0 and dampening = 0");
  }
}

void Sgd::step() {
  const SgdOptions& o = options_;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    std::optional<Slot> s = slot(i, o.maximize, o.weight_decay);
    if (!s) continue;
    DirectTensor g = std::move(s->grad);
    if (o.momentum != 0.0) {
      DirectTensor& b = momentum_[i];
      b = b.defined() ? o.momentum * b + (1.0 - o.dampening) * g : g;
      g = o.nesterov ? g + o.momentum * b : b;
    }
    assign(i, s->value - o.lr * g);
  }
  ++steps_;
}

// ---- Adam / AdamW -----------------------------------------------------------------------

Adam::Adam(std::vector<EagerTensor> params, AdamOptions options)
    : Optimizer(std::move(params)),
      options_(options),
      m_(params_.size()),
      v_(params_.size()),
      v_max_(params_.size()) {
  require_non_negative("optim.adam", "lr", options_.lr);
  require_non_negative("optim.adam", "eps", options_.eps);
  require_non_negative("optim.adam", "weight_decay", options_.weight_decay);
  for (double beta : {options_.beta1, options_.beta2}) {
    if (!(beta >= 0.0 && beta < 1.0)) {
      invalid("optim.adam", "betas must be in [0, 1) (got " + std::to_string(beta) + ")");
    }
  }
}

void Adam::step() {
  const AdamOptions& o = options_;
  const double t = static_cast<double>(steps_ + 1);
  const double bias1 = 1.0 - std::pow(o.beta1, t);
  const double bias2_root = std::sqrt(1.0 - std::pow(o.beta2, t));
  for (std::size_t i = 0; i < params_.size(); ++i) {
    std::optional<Slot> s = slot(i, o.maximize, o.decoupled_weight_decay ? 0.0 : o.weight_decay);
    if (!s) continue;
    DirectTensor p = std::move(s->value);
    const DirectTensor& g = s->grad;
    if (o.decoupled_weight_decay && o.weight_decay != 0.0) p = p * (1.0 - o.lr * o.weight_decay);
    DirectTensor &m = m_[i], &v = v_[i];
    if (!m.defined()) {
      m = zeros_like(g);
      v = zeros_like(g);
      if (o.amsgrad) v_max_[i] = zeros_like(g);
    }
    m = o.beta1 * m + (1.0 - o.beta1) * g;
    v = o.beta2 * v + (1.0 - o.beta2) * g * g;
    if (o.amsgrad) v_max_[i] = maximum(v_max_[i], v);
    const DirectTensor denom = sqrt(o.amsgrad ? v_max_[i] : v) / bias2_root + o.eps;
    assign(i, p - (o.lr / bias1) * m / denom);
  }
  ++steps_;
}

AdamW::AdamW(std::vector<EagerTensor> params, Options o)
    : Adam(std::move(params), AdamOptions{o.lr, o.beta1, o.beta2, o.eps, o.weight_decay, true,
                                          o.amsgrad, o.maximize}) {}

}  // namespace tenferro::optim
